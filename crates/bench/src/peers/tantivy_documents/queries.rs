//! The queries of `document_queries`' JSON form as tantivy queries, matching what apcache
//! matches.

use std::ops::Bound;

use apcache_index::query::Factor;
use serde_json::Value;
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, EmptyQuery,
    ExistsQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DateTime, Term};

use super::fields::{Kind, MappedField};
use super::TantivyDocuments;

impl TantivyDocuments {
    /// The tantivy query of a query in the JSON form, matching what
    /// [`crate::document_queries::to_query`] makes apcache match; refused where `to_query`
    /// refuses it, and for ranges on fields other than numbers and dates.
    pub(super) fn query(&self, value: &Value) -> Result<Box<dyn Query>, String> {
        let object = value.as_object().ok_or("a query is an object")?;
        let (kind, body) = object.iter().next().ok_or("an empty query")?;
        let text = |key: &str| -> Result<&str, String> {
            body[key]
                .as_str()
                .ok_or_else(|| format!("[{kind}] needs [{key}]"))
        };
        let list = |key: &str| -> Result<Vec<Box<dyn Query>>, String> {
            match &body[key] {
                Value::Null => Ok(Vec::new()),
                Value::Array(items) => items.iter().map(|q| self.query(q)).collect(),
                other => Err(format!("[{key}] is a list, not {other}")),
            }
        };
        let factor = |value: &Value, what: &str| -> Result<f32, String> {
            value
                .as_f64()
                .and_then(|f| Factor::new(f as f32))
                .map(Factor::get)
                .ok_or_else(|| format!("[{kind}] needs [{what}]"))
        };
        Ok(match kind.as_str() {
            "term" => {
                let field = text("field")?;
                let value = text("value")?;
                match self.fields.get(field) {
                    Some(MappedField {
                        field,
                        kind: Kind::Text,
                        ..
                    }) => Box::new(TermQuery::new(
                        Term::from_field_text(*field, value),
                        IndexRecordOption::WithFreqs,
                    )),
                    Some(MappedField {
                        field,
                        kind: Kind::Keyword,
                        ..
                    }) => Box::new(TermQuery::new(
                        Term::from_field_text(*field, value),
                        IndexRecordOption::Basic,
                    )),
                    _ => return Err(format!("[term] on [{field}]")),
                }
            }
            "phrase" => {
                let field = text("field")?;
                let terms = body["terms"]
                    .as_array()
                    .ok_or("[phrase] needs [terms]")?
                    .iter()
                    .map(|t| t.as_str().ok_or("a phrase's terms are strings"))
                    .collect::<Result<Vec<_>, _>>()?;
                let slop = body["slop"].as_u64().unwrap_or(0) as u32;
                match self.fields.get(field) {
                    // apcache looks for the words of a text field: elsewhere there are none.
                    Some(MappedField {
                        field,
                        kind: Kind::Text,
                        ..
                    }) => phrase(*field, &terms, slop),
                    _ => Box::new(EmptyQuery),
                }
            }
            "range" => {
                let field = text("field")?;
                let mapped = self
                    .fields
                    .get(field)
                    .ok_or_else(|| format!("unknown field [{field}]"))?;
                range(mapped, field, &body["gte"], &body["lte"])?
            }
            "exists" => {
                let field = text("field")?;
                match self.fields.get(field) {
                    None => return Err(format!("unknown field [{field}]")),
                    Some(MappedField {
                        kind: Kind::Text, ..
                    }) => Box::new(TermQuery::new(
                        Term::from_field_text(self.present, field),
                        IndexRecordOption::Basic,
                    )),
                    Some(mapped) => Box::new(ExistsQuery::new(mapped.name.clone(), false)),
                }
            }
            "bool" => {
                let must = list("must")?;
                let filter = list("filter")?;
                let should = list("should")?;
                let must_not = list("must_not")?;
                // Without a required clause, one of `should` is required; with one, they only
                // score; with neither, nothing matches (apcache's, Lucene's BooleanQuery).
                let required = !must.is_empty() || !filter.is_empty();
                if !required && should.is_empty() {
                    return Ok(Box::new(EmptyQuery));
                }
                let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
                clauses.extend(must.into_iter().map(|q| (Occur::Must, q)));
                clauses.extend(filter.into_iter().map(|q| {
                    (
                        Occur::Must,
                        Box::new(ConstScoreQuery::new(q, 0.0)) as Box<dyn Query>,
                    )
                }));
                clauses.extend(should.into_iter().map(|q| (Occur::Should, q)));
                clauses.extend(must_not.into_iter().map(|q| (Occur::MustNot, q)));
                Box::new(BooleanQuery::with_minimum_required_clauses(
                    clauses,
                    usize::from(!required),
                ))
            }
            "dis_max" => {
                let queries = list("queries")?;
                let tie_breaker = factor(&body["tie_breaker"], "tie_breaker")?;
                Box::new(DisjunctionMaxQuery::with_tie_breaker(queries, tie_breaker))
            }
            "boost" => {
                let inner = self.query(&body["query"])?;
                Box::new(BoostQuery::new(inner, factor(&body["factor"], "factor")?))
            }
            "all" => Box::new(AllQuery),
            other => return Err(format!("unknown query [{other}]")),
        })
    }
}

/// The phrase `terms` (consecutive words of the text field `field`) within `slop`.
fn phrase(field: Field, terms: &[&str], slop: u32) -> Box<dyn Query> {
    let term = |t: &str| Term::from_field_text(field, t);
    match terms {
        [] => Box::new(EmptyQuery),
        [only] => Box::new(TermQuery::new(term(only), IndexRecordOption::WithFreqs)),
        // Lucene (and apcache) never let two terms of a phrase stand on one position; tantivy's
        // slop would let "a a"~1 match a single "a". Two distinct occurrences at most
        // `slop + 1` apart are the union of the exact phrases at each distance.
        [a, b] if a == b && slop > 0 => {
            let exact: Vec<Box<dyn Query>> = (1..=slop as usize + 1)
                .map(|distance| {
                    Box::new(PhraseQuery::new_with_offset(vec![
                        (0, term(a)),
                        (distance, term(b)),
                    ])) as Box<dyn Query>
                })
                .collect();
            Box::new(BooleanQuery::union(exact))
        }
        _ => Box::new(PhraseQuery::new_with_offset_and_slop(
            terms
                .iter()
                .enumerate()
                .map(|(i, t)| (i, term(t)))
                .collect(),
            slop,
        )),
    }
}

/// The range `gte..=lte` (absent bounds unbounded) over the numeric or date field `mapped`,
/// bounds rounded inwards on integer fields, as apcache's `range_query` takes them.
fn range(
    mapped: &MappedField,
    name: &str,
    gte: &Value,
    lte: &Value,
) -> Result<Box<dyn Query>, String> {
    let number = |v: &Value| {
        v.as_f64()
            .ok_or_else(|| format!("[range] on [{name}]: {v} is not a number"))
    };
    let field = mapped.field;
    // (lower, upper) in the field's terms, or None when nothing can match.
    let bounds: Option<(Bound<Term>, Bound<Term>)> = match &mapped.kind {
        Kind::Integer | Kind::Date => {
            let end = |v: &Value, up: bool| -> Result<Option<i64>, String> {
                if v.is_null() {
                    return Ok(None);
                }
                if let Some(i) = v.as_i64() {
                    return Ok(Some(i));
                }
                let f = number(v)?;
                let rounded = if up { f.ceil() } else { f.floor() };
                // `as` saturates beyond i64's range.
                Ok(Some(rounded as i64))
            };
            let (low, high) = (end(gte, true)?, end(lte, false)?);
            let term = |v: i64| match mapped.kind {
                Kind::Date => Term::from_field_date(field, DateTime::from_timestamp_millis(v)),
                _ => Term::from_field_i64(field, v),
            };
            let lo = low.unwrap_or(i64::MIN);
            let hi = high.unwrap_or(i64::MAX);
            (lo <= hi).then(|| (Bound::Included(term(lo)), Bound::Included(term(hi))))
        }
        Kind::Double => {
            let low = if gte.is_null() {
                None
            } else {
                Some(number(gte)?)
            };
            let high = if lte.is_null() {
                None
            } else {
                Some(number(lte)?)
            };
            let lo = low.unwrap_or(f64::NEG_INFINITY);
            let hi = high.unwrap_or(f64::INFINITY);
            let bound = |v: Option<f64>| match v {
                Some(v) => Bound::Included(Term::from_field_f64(field, v)),
                None => Bound::Unbounded,
            };
            if low.is_none() && high.is_none() {
                return Ok(Box::new(ExistsQuery::new(mapped.name.clone(), false)));
            }
            (lo <= hi).then(|| (bound(low), bound(high)))
        }
        _ => {
            return Err(format!(
                "[range] on [{name}] is not supported by the tantivy peer"
            ))
        }
    };
    Ok(match bounds {
        Some((lower, upper)) => Box::new(RangeQuery::new(lower, upper)),
        None => Box::new(EmptyQuery),
    })
}
