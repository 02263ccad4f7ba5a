//! [`Sort`]: the keys of a search sorted by fields, resolved against the index's mapping, and
//! the values of those keys as both APIs write them in hits (`sort`) and read them back
//! (`search_after`).
//!
//! Values are written as Elasticsearch writes them, so that its clients page with them
//! unchanged: integers, dates (epoch milliseconds) and booleans (0 or 1) as JSON integers,
//! doubles as JSON numbers, keywords as strings, the score as a number, `_doc` as the
//! document's number. A document without a value shows the value Elasticsearch substitutes for
//! it, the one that puts it where it sorts: `Long.MAX_VALUE` or `Long.MIN_VALUE` for integer,
//! date and boolean fields, `"Infinity"` or `"-Infinity"` for doubles, `null` for keywords.
//! Read back, such a value (and `null`) means "missing" again.

use apcache_index::columns::{double_to_sortable, sortable_to_double};
use apcache_index::schema::{FieldType, Mapping, TextOptions};
use apcache_index::search::{SortBy, SortKey, SortValue};
use serde_json::{json, Value};

use crate::api_error::ApiError;

/// How a key's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// The BM25 score.
    Score,
    /// The document's number.
    Doc,
    /// Integers, dates (milliseconds) and booleans (0, 1): a numeric column's values as they are.
    Integer,
    /// Doubles (and floats), kept in sortable form.
    Double,
    /// Keywords.
    Keyword,
}

/// The keys of a sort, each with how its values are written.
#[derive(Debug, Clone, Default)]
pub struct Sort {
    /// The keys, first to last.
    pub keys: Vec<SortKey>,
    /// How each key's values are written.
    pub kinds: Vec<KeyKind>,
}

/// Which end documents without a value go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missing {
    /// After the others (the default).
    #[default]
    Last,
    /// Before the others.
    First,
}

impl Sort {
    /// Adds the key `name` (`_score`, `_doc` or a field of `mapping`), descending when
    /// `descending` says so (by default the score descends and everything else ascends).
    pub fn push(
        &mut self,
        mapping: &Mapping,
        name: &str,
        descending: Option<bool>,
        missing: Missing,
    ) -> Result<(), ApiError> {
        let (by, kind) = match name {
            "_score" => (SortBy::Score, KeyKind::Score),
            "_doc" => (SortBy::Doc, KeyKind::Doc),
            field => match mapping.resolve(field).map(|f| f.field_type.into_owned()) {
                None => {
                    return Err(ApiError::illegal(format!(
                        "No mapping found for [{field}] in order to sort on"
                    )))
                }
                Some(FieldType::Text(options)) => {
                    return Err(ApiError::illegal(text_sort_message(field, &options)))
                }
                Some(FieldType::Keyword(_)) => {
                    (SortBy::Keywords(field.to_owned()), KeyKind::Keyword)
                }
                Some(FieldType::Double { .. }) => {
                    (SortBy::Numbers(field.to_owned()), KeyKind::Double)
                }
                Some(_) => (SortBy::Numbers(field.to_owned()), KeyKind::Integer),
            },
        };
        let descending = descending.unwrap_or(kind == KeyKind::Score);
        self.keys.push(SortKey {
            by,
            descending,
            missing_first: missing == Missing::First,
        });
        self.kinds.push(kind);
        Ok(())
    }

    /// Whether the sort is the score's, best first, alone: a plain relevance search.
    pub fn is_relevance(&self) -> bool {
        matches!(self.keys.as_slice(), [key] if key.by == SortBy::Score && key.descending)
    }

    /// Whether any key reads the score.
    pub fn reads_score(&self) -> bool {
        self.kinds.contains(&KeyKind::Score)
    }

    /// The sort of the native API's `sort` parameter, the CLI's `--sort` form: keys separated
    /// by commas, each `name`, `name:asc` or `name:desc`.
    pub fn parse_native(text: &str, mapping: &Mapping) -> Result<Sort, ApiError> {
        let mut sort = Sort::default();
        for spec in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, descending) = match spec.rsplit_once(':') {
                Some((name, "asc")) => (name, Some(false)),
                Some((name, "desc")) => (name, Some(true)),
                Some((_, order)) => {
                    return Err(ApiError::illegal(format!(
                        "sort [{spec}]: the order is asc or desc, not {order:?}"
                    )))
                }
                None => (spec, None),
            };
            sort.push(mapping, name, descending, Missing::Last)?;
        }
        if sort.keys.is_empty() {
            return Err(ApiError::illegal("sort names no key"));
        }
        Ok(sort)
    }

    /// The value a missing document shows for key `i` (see the module documentation).
    fn missing_shown(&self, i: usize) -> Value {
        let key = &self.keys[i];
        // Missing documents sort as the greatest value when that puts them where they go.
        let greatest = key.descending == key.missing_first;
        match self.kinds[i] {
            KeyKind::Integer if greatest => json!(i64::MAX),
            KeyKind::Integer => json!(i64::MIN),
            KeyKind::Double if greatest => json!("Infinity"),
            KeyKind::Double => json!("-Infinity"),
            _ => Value::Null,
        }
    }

    /// The hit's values, as the hits of a response write them.
    pub fn shown(&self, values: &[SortValue]) -> Vec<Value> {
        values
            .iter()
            .enumerate()
            .map(|(i, value)| match (value, self.kinds.get(i)) {
                (SortValue::Missing, _) => self.missing_shown(i),
                (SortValue::Number(n), Some(KeyKind::Double)) => json!(sortable_to_double(*n)),
                (SortValue::Number(n), _) => json!(n),
                (SortValue::Keyword(k), _) => json!(k),
                (SortValue::Score(s), _) => json!(s),
                (SortValue::Doc(d), _) => json!(d),
            })
            .collect()
    }

    /// `search_after`: the values of the hit to continue after, one per key, as [`Sort::shown`]
    /// writes them.
    pub fn after(&self, values: &[Value]) -> Result<Vec<SortValue>, ApiError> {
        if values.len() != self.keys.len() {
            return Err(ApiError::illegal(format!(
                "search_after has {} value(s) but the sort has {} key(s)",
                values.len(),
                self.keys.len()
            )));
        }
        values
            .iter()
            .enumerate()
            .map(|(i, value)| self.after_value(i, value))
            .collect()
    }

    fn after_value(&self, i: usize, value: &Value) -> Result<SortValue, ApiError> {
        let kind = self.kinds[i];
        let wrong = |what: &str| {
            ApiError::illegal(format!(
                "search_after value {value} for sort key {} is not {what}",
                i + 1
            ))
        };
        let has_missing = !matches!(kind, KeyKind::Score | KeyKind::Doc);
        if has_missing && (value.is_null() || *value == self.missing_shown(i)) {
            return Ok(SortValue::Missing);
        }
        Ok(match kind {
            KeyKind::Score => {
                SortValue::Score(value.as_f64().ok_or_else(|| wrong("a score"))? as f32)
            }
            KeyKind::Doc => SortValue::Doc(
                value
                    .as_u64()
                    .and_then(|d| u32::try_from(d).ok())
                    .ok_or_else(|| wrong("a document number"))?,
            ),
            KeyKind::Integer => SortValue::Number(match value {
                Value::Number(n) => n.as_i64().ok_or_else(|| wrong("an integer"))?,
                Value::String(s) => {
                    // Clients that cannot hold 64-bit integers send them as text.
                    if let Ok(n) = s.parse::<i64>() {
                        if json!(n) == self.missing_shown(i) {
                            return Ok(SortValue::Missing);
                        }
                        n
                    } else {
                        return Err(wrong("an integer"));
                    }
                }
                Value::Bool(b) => i64::from(*b),
                _ => return Err(wrong("an integer")),
            }),
            KeyKind::Double => {
                let number = match value {
                    Value::Number(n) => n.as_f64().ok_or_else(|| wrong("a number"))?,
                    Value::String(s) if s == "Infinity" => f64::INFINITY,
                    Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
                    Value::String(s) => s.parse().map_err(|_| wrong("a number"))?,
                    _ => return Err(wrong("a number")),
                };
                SortValue::Number(double_to_sortable(number))
            }
            KeyKind::Keyword => SortValue::Keyword(match value {
                Value::String(s) => s.clone(),
                Value::Number(_) | Value::Bool(_) => value.to_string(),
                _ => return Err(wrong("a keyword")),
            }),
        })
    }
}

/// Elasticsearch's refusal to sort by a text field, with the keyword sub-field to use when the
/// mapping has one.
fn text_sort_message(field: &str, options: &TextOptions) -> String {
    let instead = match &options.keyword {
        Some((sub, _)) => format!(" (here [{field}.{sub}])"),
        None => String::new(),
    };
    format!(
        "Text fields are not optimised for operations that require per-document field data like \
         aggregations and sorting, so these operations are disabled by default. Please use a \
         keyword field instead{instead}. [{field}] is a text field: apcache searches the text \
         fields together and cannot sort by one."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping() -> Mapping {
        Mapping::from_json(&json!({"properties": {
            "size": {"type": "long"}, "price": {"type": "double"}, "tag": {"type": "keyword"},
            "title": {"type": "text", "fields": {"keyword": {"type": "keyword"}}}
        }}))
        .unwrap()
    }

    #[test]
    fn native_sorts_read_the_cli_form() {
        let sort = Sort::parse_native("size:desc, _score,tag", &mapping()).unwrap();
        let orders: Vec<bool> = sort.keys.iter().map(|k| k.descending).collect();
        assert_eq!(orders, [true, true, false]);
        assert!(!sort.is_relevance());
        assert!(Sort::parse_native("_score", &mapping())
            .unwrap()
            .is_relevance());
        assert!(Sort::parse_native("size:up", &mapping()).is_err());
        let text = Sort::parse_native("title", &mapping()).unwrap_err();
        assert!(text.reason.contains("[title.keyword]"), "{}", text.reason);
        assert!(Sort::parse_native("nope", &mapping()).is_err());
    }

    #[test]
    fn missing_values_show_elasticsearch_sentinels_and_read_back_as_missing() {
        let mut sort = Sort::default();
        let m = mapping();
        sort.push(&m, "size", None, Missing::Last).unwrap();
        sort.push(&m, "size", Some(true), Missing::Last).unwrap();
        sort.push(&m, "price", None, Missing::First).unwrap();
        sort.push(&m, "tag", None, Missing::Last).unwrap();
        let missing = vec![SortValue::Missing; 4];
        let shown = sort.shown(&missing);
        assert_eq!(
            shown,
            [
                json!(i64::MAX),
                json!(i64::MIN),
                json!("-Infinity"),
                Value::Null
            ]
        );
        assert_eq!(sort.after(&shown).unwrap(), missing);
        let present = vec![
            SortValue::Number(7),
            SortValue::Number(-3),
            SortValue::Number(double_to_sortable(1.25)),
            SortValue::Keyword("x".into()),
        ];
        let shown = sort.shown(&present);
        assert_eq!(shown, [json!(7), json!(-3), json!(1.25), json!("x")]);
        assert_eq!(sort.after(&shown).unwrap(), present);
        assert!(sort.after(&shown[..2]).is_err());
        assert!(sort
            .after(&[json!("seven"), json!(1), json!(1), json!("x")])
            .is_err());
    }
}
