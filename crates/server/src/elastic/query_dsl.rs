//! Elasticsearch's query DSL, read into the [`Query`] apcache evaluates, with Elasticsearch's
//! scores wherever apcache answers at all.
//!
//! Understood: `match_all`, `match_none`, `term`, `terms`, `range`, `exists`, `ids`, `bool`,
//! `constant_score`, `dis_max`, `prefix` (on keywords), `query_string`, `match`, `match_phrase`
//! and `multi_match`.
//! Anything else, and any option of these that apcache does not implement, is a 400 that names
//! it: a query that silently ignored an option would answer a different question than the one
//! asked.
//!
//! # Scores
//!
//! A query is read in a *scoring* context (the top of a search, `bool.must`, `bool.should`) or
//! a *filter* context (`bool.filter`, `bool.must_not`, `constant_score.filter`, everything
//! under those, and every query of `_count` or of a search sorted by fields, whose scores no
//! one sees). Filter clauses score nothing: they are wrapped in [`Query::Filter`]. In a
//! scoring context each query scores what Elasticsearch scores it:
//!
//! - `match_all`, `range`, and `term` on a numeric or date field score 1 ([`Query::All`],
//!   [`Query::Range`]).
//! - `terms`, `exists`, `ids`, `term` on `_id` and `constant_score` score a constant 1 in
//!   Elasticsearch; here they become `+*:* +#(query)`: every document scores 1 and the
//!   filter adds 0, so the sum is exactly 1.
//! - `term` on a keyword or boolean field is a Lucene `TermQuery`, scored by BM25 without
//!   norms, which apcache cannot compute yet: it is refused in a scoring context, with the
//!   advice to put it under `bool.filter` or `constant_score` (same matches, constant score).
//! - `boost` multiplies the query's score ([`Query::Boost`]); in a filter context it changes
//!   nothing.
//! - `match`, `match_phrase` and `term` on a text field search that field and score with its
//!   own statistics, as Lucene scores a field. `multi_match` matches the text in each of its
//!   fields (`title^3` boosts one) and combines them as its `type` says: `best_fields` (the
//!   default) takes the best field plus `tie_breaker` times the others ([`Query::DisMax`]),
//!   `most_fields` adds them up, `phrase` takes the best field's phrase. `query_string`
//!   searches words without a field in `fields` (or `default_field`, or every text field),
//!   each word's clauses combined as `best_fields` combines them.
//! - `bool` sums its `must` and `should` clauses' scores, as Lucene's `BooleanQuery`; a `bool`
//!   of only `must_not` clauses matches every other document with score 0, and an empty
//!   `bool` is `match_all`, as in Elasticsearch.
//!
//! An index of tab-separated documents joins its `title` and `body` into one stream of words:
//! there `match` may name a text field only where that is the same as searching them all.

use apcache_index::query::{
    exists_query, prefix_query, range_query, term_query, BoolQuery, Combine, DefaultFields,
    DefaultOperator, DisMaxQuery, Factor, Query, QueryError, RangeEnd,
};
use apcache_index::schema::{FieldType, Mapping, ID_FIELD};
use serde_json::{Map, Value};

use crate::api_error::ApiError;
use crate::catalog::ServedIndex;
use crate::config::ServerConfig;
use crate::native::default_operator;
use crate::search::{check_query, parse_text_in};

/// Whether a query's score is seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Its score is the hit's score, or part of it.
    Scoring,
    /// Only whether it matches counts.
    Filter,
}

/// Reads queries for one index.
pub struct Dsl<'a> {
    index: &'a ServedIndex,
    config: &'a ServerConfig,
}

/// `value` as an object, or a 400 naming `what`.
fn object<'v>(value: &'v Value, what: &str) -> Result<&'v Map<String, Value>, ApiError> {
    value
        .as_object()
        .ok_or_else(|| ApiError::parsing(format!("[{what}] must be an object, not {value}")))
}

/// The one key of `map` and its value: a query's type, or a field.
fn single<'v>(map: &'v Map<String, Value>, what: &str) -> Result<(&'v str, &'v Value), ApiError> {
    let mut entries = map.iter();
    match (entries.next(), entries.next()) {
        (Some((key, value)), None) => Ok((key.as_str(), value)),
        (None, _) => Err(ApiError::parsing(format!("[{what}] is empty"))),
        (Some(_), Some(_)) => Err(ApiError::parsing(format!(
            "[{what}] takes one key, not [{}]",
            map.keys().cloned().collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Refuses every key of `options` outside `allowed`, and `_name`.
fn known(options: &Map<String, Value>, query: &str, allowed: &[&str]) -> Result<(), ApiError> {
    for key in options.keys() {
        if key == "_name" {
            return Err(ApiError::parsing(format!(
                "[{query}] query: named queries ([_name]) are not supported"
            )));
        }
        if !allowed.contains(&key.as_str()) {
            return Err(ApiError::parsing(format!(
                "[{query}] query does not support [{key}]"
            )));
        }
    }
    Ok(())
}

/// A query's `boost`: the factor of its score (1 when absent), a number at least 0.
fn boost(options: &Map<String, Value>, query: &str) -> Result<Factor, ApiError> {
    let Some(value) = options.get("boost") else {
        return Ok(Factor::ONE);
    };
    value
        .as_f64()
        .and_then(|boost| Factor::new(boost as f32))
        .ok_or_else(|| {
            ApiError::parsing(format!(
                "[{query}] query: [boost] must be a number at least 0, not {value}"
            ))
        })
}

/// `query` with its score multiplied by `factor` where the score counts (a filter's boost
/// changes nothing).
fn boosted(query: Query, factor: Factor, context: Context) -> Query {
    if context == Context::Filter || factor == Factor::ONE {
        query
    } else {
        Query::Boost(Box::new(query), factor)
    }
}

/// A JSON scalar as the text a field's type reads.
fn scalar(value: &Value, query: &str) -> Result<String, ApiError> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(ApiError::parsing(format!(
            "[{query}] query: {other} is not a value (a string, number or boolean)"
        ))),
    }
}

/// Every document matching `filter`, each scoring exactly 1: `+*:* +#(filter)` (1 + 0), or the
/// query itself where it already scores 1.
fn constant_one(filter: Query) -> Query {
    match filter {
        Query::All | Query::Range(_) => filter,
        other => Query::Bool(BoolQuery {
            must: vec![Query::All, Query::Filter(Box::new(other))],
            ..BoolQuery::default()
        }),
    }
}

/// Matches nothing.
fn nothing() -> Query {
    Query::Bool(BoolQuery::default())
}

fn one_stream_message(query: &str, field: &str) -> String {
    format!(
        "[{query}] on the text field [{field}]: this index joins the text fields of its \
         documents (tab-separated title and body) into one stream of words, and cannot search \
         one of them alone; search them all with a query_string query without default_field"
    )
}

/// A field clause's error from the index's query builder, for the request.
fn field_error(error: QueryError, query: &str) -> ApiError {
    match error {
        QueryError::TextFieldUnsupported { field } => {
            ApiError::illegal(one_stream_message(query, &field))
        }
        QueryError::UnknownField { field } => ApiError::illegal(format!(
            "[{query}] query: unknown field [{field}]: the index's mapping has no such field \
             (GET /{{index}}/_mapping lists them)"
        )),
        other => ApiError::illegal(format!("[{query}] query: {other}")),
    }
}

/// Whether searching the text field `field` alone is searching every text field: it is the
/// index's only one, or `title` or `body` of a title-and-body index (searched together since
/// the first release).
fn text_field_alone_ok(mapping: &Mapping, field: &str) -> bool {
    let texts: Vec<&str> = mapping.text_fields().collect();
    texts == [field] || (texts == ["body", "title"] && texts.contains(&field))
}

impl<'a> Dsl<'a> {
    /// Reads queries for `index` under `config`'s limits.
    pub fn new(index: &'a ServedIndex, config: &'a ServerConfig) -> Dsl<'a> {
        Dsl { index, config }
    }

    fn mapping(&self) -> &Mapping {
        self.index.mapping()
    }

    /// The query `value`, read in `context` and checked against the limits.
    pub fn query(&self, value: &Value, context: Context) -> Result<Query, ApiError> {
        let query = self.clause(value, context)?.simplified();
        check_query(&query, 0, self.config)?;
        Ok(query)
    }

    /// One query object: `{"<type>": {...}}`.
    fn clause(&self, value: &Value, context: Context) -> Result<Query, ApiError> {
        let (kind, body) = single(object(value, "query")?, "query")?;
        match kind {
            "match_all" => {
                let options = object(body, kind)?;
                known(options, kind, &["boost"])?;
                Ok(boosted(Query::All, boost(options, kind)?, context))
            }
            "match_none" => {
                let options = object(body, kind)?;
                known(options, kind, &["boost"])?;
                Ok(nothing())
            }
            "term" => self.term(body, context),
            "terms" => self.terms(body, context),
            "range" => self.range(body, context),
            "exists" => self.exists(body, context),
            "ids" => self.ids(body, context),
            "bool" => self.boolean(body, context),
            "constant_score" => self.constant_score(body, context),
            "query_string" => self.query_string(body, context),
            "match" => self.matches(body, context),
            "match_phrase" => self.match_phrase(body, context),
            "multi_match" => self.multi_match(body, context),
            "dis_max" => self.dis_max(body, context),
            "prefix" => self.prefix(body, context),
            "simple_query_string" => Err(ApiError::parsing(
                "[simple_query_string] queries are not supported by apcache; write the words \
                 (or a \"quoted phrase\") in a query_string query",
            )),
            other => Err(ApiError::parsing(format!(
                "unknown query [{other}]: apcache understands match_all, match_none, term, terms, \
                 range, exists, ids, bool, constant_score, dis_max, prefix, query_string, \
                 match, match_phrase and multi_match"
            ))),
        }
    }

    /// The documents whose `field` holds `value`, scored as Elasticsearch's `term` scores
    /// them (or refused where it cannot be).
    fn term_of(
        &self,
        field: &str,
        value: &str,
        query: &str,
        context: Context,
    ) -> Result<Query, ApiError> {
        if field == ID_FIELD {
            self.check_own_ids(query)?;
            let term =
                term_query(self.mapping(), field, value).map_err(|e| field_error(e, query))?;
            return Ok(match context {
                Context::Scoring => constant_one(term),
                Context::Filter => term,
            });
        }
        let resolved = self
            .mapping()
            .resolve(field)
            .map(|f| f.field_type.into_owned());
        if context == Context::Scoring {
            if let Some(kind @ (FieldType::Keyword(_) | FieldType::Boolean)) = &resolved {
                return Err(ApiError::illegal(format!(
                    "[{query}] on the {} field [{field}] where the score counts: Elasticsearch \
                     scores it with BM25 without norms, which apcache does not compute; put it \
                     under bool.filter or constant_score.filter (same matches, no score or a \
                     constant one)",
                    kind.name()
                )));
            }
        }
        term_query(self.mapping(), field, value).map_err(|e| field_error(e, query))
    }

    fn check_own_ids(&self, query: &str) -> Result<(), ApiError> {
        if self.index.service.reader().has_ids() {
            return Ok(());
        }
        Err(ApiError::illegal(format!(
            "[{query}] query on _id: the documents of this index have no _id of their own (each \
             one's id is its number in the index), and apcache cannot select documents by \
             number in a query; read one with GET /{{index}}/_doc/{{id}}"
        )))
    }

    /// `{"term": {"field": "value"}}`, `{"term": {"field": {"value": "value", "boost": 1}}}`.
    fn term(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let (field, spec) = single(object(body, "term")?, "term")?;
        let mut factor = Factor::ONE;
        let value = match spec {
            Value::Object(options) => {
                known(options, "term", &["value", "boost", "case_insensitive"])?;
                factor = boost(options, "term")?;
                match options.get("case_insensitive") {
                    None | Some(Value::Bool(false)) => {}
                    Some(_) => {
                        return Err(ApiError::parsing(
                            "[term] query: [case_insensitive] is not supported",
                        ))
                    }
                }
                options
                    .get("value")
                    .ok_or_else(|| ApiError::parsing("[term] query needs a [value]"))?
            }
            value => value,
        };
        let query = self.term_of(field, &scalar(value, "term")?, "term", context)?;
        Ok(boosted(query, factor, context))
    }

    /// `{"terms": {"field": ["a", "b"], "boost": 1}}`: any of the values, a constant score.
    fn terms(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "terms")?;
        let factor = boost(options, "terms")?;
        let mut fields = options.iter().filter(|(k, _)| k.as_str() != "boost");
        let (field, values) = match (fields.next(), fields.next()) {
            (Some((field, _)), _) if field == "_name" => {
                return Err(ApiError::parsing(
                    "[terms] query: named queries ([_name]) are not supported",
                ))
            }
            (Some(entry), None) => entry,
            (None, _) => return Err(ApiError::parsing("[terms] query names no field")),
            (Some(_), Some((other, _))) => {
                return Err(ApiError::parsing(format!(
                    "[terms] query does not support [{other}] (it takes one field)"
                )))
            }
        };
        let Value::Array(values) = values else {
            return Err(ApiError::parsing(format!(
                "[terms] query: [{field}] must be a list of values (terms lookup is not supported)"
            )));
        };
        let mut any = Vec::with_capacity(values.len());
        for value in values {
            // Each value filters; the whole scores as one.
            any.push(self.term_of(field, &scalar(value, "terms")?, "terms", Context::Filter)?);
        }
        let query = Query::Bool(BoolQuery {
            should: any,
            ..BoolQuery::default()
        });
        Ok(match context {
            Context::Scoring => boosted(constant_one(query), factor, context),
            Context::Filter => query,
        })
    }

    /// `{"range": {"field": {"gte": 1, "lt": 5}}}`.
    fn range(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let (field, spec) = single(object(body, "range")?, "range")?;
        let options = object(spec, "range")?;
        for key in options.keys() {
            match key.as_str() {
                "gt" | "gte" | "lt" | "lte" | "boost" => {}
                "format" | "time_zone" => {
                    return Err(ApiError::parsing(format!(
                        "[range] query: [{key}] is not supported; give dates in the field's own \
                         format (epoch milliseconds always work)"
                    )))
                }
                "relation" if options[key] == "intersects" || options[key] == "INTERSECTS" => {}
                "from" | "to" | "include_lower" | "include_upper" => {
                    return Err(ApiError::parsing(format!(
                        "[range] query: [{key}] is not supported; use gt, gte, lt and lte"
                    )))
                }
                "_name" => {
                    return Err(ApiError::parsing(
                        "[range] query: named queries ([_name]) are not supported",
                    ))
                }
                other => {
                    return Err(ApiError::parsing(format!(
                        "[range] query does not support [{other}]"
                    )))
                }
            }
        }
        let factor = boost(options, "range")?;
        let end = |exclusive: &str, inclusive: &str| -> Result<RangeEnd, ApiError> {
            match (options.get(exclusive), options.get(inclusive)) {
                (Some(_), Some(_)) => Err(ApiError::parsing(format!(
                    "[range] query: give [{exclusive}] or [{inclusive}], not both"
                ))),
                (Some(v), None) if !v.is_null() => Ok(RangeEnd {
                    value: Some(scalar(v, "range")?),
                    inclusive: false,
                }),
                (None, Some(v)) if !v.is_null() => Ok(RangeEnd {
                    value: Some(scalar(v, "range")?),
                    inclusive: true,
                }),
                _ => Ok(RangeEnd::unbounded()),
            }
        };
        let (lower, upper) = (end("gt", "gte")?, end("lt", "lte")?);
        // Both ranges score 1 where the score counts, as Elasticsearch's do.
        let query = range_query(self.mapping(), field, &lower, &upper)
            .map_err(|e| field_error(e, "range"))?;
        Ok(boosted(query, factor, context))
    }

    /// `{"exists": {"field": "f"}}`: documents with a value of the field (or of any field of
    /// the object it names).
    fn exists(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "exists")?;
        known(options, "exists", &["field", "boost"])?;
        let factor = boost(options, "exists")?;
        let field = options
            .get("field")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::parsing("[exists] query needs a [field] string"))?;
        let mapping = self.mapping();
        let query = if mapping.resolve(field).is_none() && mapping.is_object(field) {
            let prefix = format!("{field}.");
            let any = mapping
                .fields()
                .filter(|(name, _)| name.starts_with(&prefix))
                .map(|(name, _)| exists_query(mapping, name).map_err(|e| field_error(e, "exists")))
                .collect::<Result<Vec<_>, _>>()?;
            Query::Bool(BoolQuery {
                should: any,
                ..BoolQuery::default()
            })
        } else {
            exists_query(mapping, field).map_err(|e| field_error(e, "exists"))?
        };
        Ok(match context {
            Context::Scoring => boosted(constant_one(query), factor, context),
            Context::Filter => query,
        })
    }

    /// `{"ids": {"values": ["a", "b"]}}`.
    fn ids(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "ids")?;
        known(options, "ids", &["values", "boost"])?;
        let factor = boost(options, "ids")?;
        self.check_own_ids("ids")?;
        let Some(Value::Array(values)) = options.get("values") else {
            return Err(ApiError::parsing(
                "[ids] query needs [values], a list of ids",
            ));
        };
        let mut any = Vec::with_capacity(values.len());
        for value in values {
            let id = scalar(value, "ids")?;
            any.push(term_query(self.mapping(), ID_FIELD, &id).map_err(|e| field_error(e, "ids"))?);
        }
        let query = Query::Bool(BoolQuery {
            should: any,
            ..BoolQuery::default()
        });
        Ok(match context {
            Context::Scoring => boosted(constant_one(query), factor, context),
            Context::Filter => query,
        })
    }

    /// A `bool` clause list: one query object or an array of them.
    fn clauses(&self, value: &Value, context: Context) -> Result<Vec<Query>, ApiError> {
        match value {
            Value::Array(items) => items.iter().map(|q| self.clause(q, context)).collect(),
            Value::Object(_) => Ok(vec![self.clause(value, context)?]),
            other => Err(ApiError::parsing(format!(
                "[bool] clauses are a query or a list of queries, not {other}"
            ))),
        }
    }

    fn boolean(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "bool")?;
        known(
            options,
            "bool",
            &[
                "must",
                "should",
                "must_not",
                "filter",
                "minimum_should_match",
                "boost",
                "adjust_pure_negative",
            ],
        )?;
        let factor = boost(options, "bool")?;
        if options
            .get("adjust_pure_negative")
            .is_some_and(|v| *v != Value::Bool(true))
        {
            return Err(ApiError::parsing(
                "[bool] query: [adjust_pure_negative] false is not supported",
            ));
        }
        let list = |key: &str, context: Context| match options.get(key) {
            Some(value) => self.clauses(value, context),
            None => Ok(Vec::new()),
        };
        let mut must = list("must", context)?;
        let mut should = list("should", context)?;
        let must_not = list("must_not", Context::Filter)?;
        let filter = list("filter", Context::Filter)?;
        if must.is_empty() && should.is_empty() && must_not.is_empty() && filter.is_empty() {
            // Elasticsearch's empty bool matches every document, scoring 1.
            return Ok(boosted(Query::All, factor, context));
        }
        let required = !must.is_empty() || !filter.is_empty();
        match options.get("minimum_should_match") {
            None => {}
            Some(spec) => match minimum_should_match(spec, should.len())? {
                0 => {}
                1 if !required => {}
                1 if should.len() > 1 => {
                    // At least one of them beside the required clauses: they score as before.
                    must.push(Query::Bool(BoolQuery {
                        should: std::mem::take(&mut should),
                        ..BoolQuery::default()
                    }));
                }
                n if n == should.len() => must.append(&mut should),
                n => {
                    return Err(ApiError::illegal(format!(
                        "[bool] query: minimum_should_match {spec} asks {n} of {} should \
                         clauses; apcache supports none, one, or all of them",
                        should.len()
                    )))
                }
            },
        }
        match context {
            Context::Scoring => must.extend(filter.into_iter().map(|f| Query::Filter(Box::new(f)))),
            Context::Filter => must.extend(filter),
        }
        if must.is_empty() && should.is_empty() {
            // Only must_not: every other document, scoring 0 (Elasticsearch adds a match_all
            // filter).
            must.push(Query::Filter(Box::new(Query::All)));
        }
        let query = Query::Bool(BoolQuery {
            must,
            should,
            must_not,
        });
        Ok(boosted(query, factor, context))
    }

    /// `{"prefix": {"field": "val"}}`, `{"prefix": {"field": {"value": "val", "boost": 2}}}`
    /// on a keyword field: values starting with the prefix, each scoring 1 (Elasticsearch's
    /// constant-score rewrite).
    fn prefix(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let (field, spec) = single(object(body, "prefix")?, "prefix")?;
        let mut factor = Factor::ONE;
        let value = match spec {
            Value::Object(options) => {
                known(
                    options,
                    "prefix",
                    &["value", "boost", "case_insensitive", "rewrite"],
                )?;
                factor = boost(options, "prefix")?;
                if options
                    .get("case_insensitive")
                    .is_some_and(|v| *v != Value::Bool(false))
                {
                    return Err(ApiError::parsing(
                        "[prefix] query: [case_insensitive] is not supported",
                    ));
                }
                if options.contains_key("rewrite") {
                    return Err(ApiError::parsing(
                        "[prefix] query: [rewrite] is not supported",
                    ));
                }
                options
                    .get("value")
                    .ok_or_else(|| ApiError::parsing("[prefix] query needs a [value]"))?
            }
            value => value,
        };
        let prefix = value.as_str().ok_or_else(|| {
            ApiError::parsing(format!(
                "[prefix] query: the value is a string, not {value}"
            ))
        })?;
        let query =
            prefix_query(self.mapping(), field, prefix).map_err(|e| field_error(e, "prefix"))?;
        Ok(boosted(query, factor, context))
    }

    /// `{"dis_max": {"queries": [...], "tie_breaker": 0.3}}`.
    fn dis_max(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "dis_max")?;
        known(options, "dis_max", &["queries", "tie_breaker", "boost"])?;
        let factor = boost(options, "dis_max")?;
        let Some(Value::Array(items)) = options.get("queries") else {
            return Err(ApiError::parsing(
                "[dis_max] query needs [queries], a list of queries",
            ));
        };
        let queries = items
            .iter()
            .map(|q| self.clause(q, context))
            .collect::<Result<Vec<_>, _>>()?;
        if queries.is_empty() {
            return Ok(nothing());
        }
        let query = Query::DisMax(DisMaxQuery {
            queries,
            tie_breaker: tie_breaker(options, "dis_max")?,
        });
        Ok(boosted(query, factor, context))
    }

    /// `{"constant_score": {"filter": {...}, "boost": 1}}`.
    fn constant_score(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "constant_score")?;
        known(options, "constant_score", &["filter", "boost"])?;
        let factor = boost(options, "constant_score")?;
        let filter = options
            .get("filter")
            .ok_or_else(|| ApiError::parsing("[constant_score] query needs a [filter]"))?;
        let query = self.clause(filter, Context::Filter)?;
        Ok(match context {
            Context::Scoring => boosted(constant_one(query), factor, context),
            Context::Filter => query,
        })
    }

    /// The text fields a `default_field` or a `match` may name; a 400 otherwise.
    fn check_text_field(&self, field: &str, query: &str) -> Result<(), ApiError> {
        match self
            .mapping()
            .resolve(field)
            .map(|f| f.field_type.into_owned())
        {
            Some(FieldType::Text(_))
                if !self.mapping().joined_text() || text_field_alone_ok(self.mapping(), field) =>
            {
                Ok(())
            }
            Some(FieldType::Text(_)) => Err(ApiError::illegal(one_stream_message(query, field))),
            Some(other) => Err(ApiError::illegal(format!(
                "[{query}]: [{field}] is a {} field, not a text field; write {field}:value in \
                 the query text",
                other.name()
            ))),
            None => Err(ApiError::illegal(format!(
                "[{query}]: unknown field [{field}]: the index's mapping has no such field"
            ))),
        }
    }

    /// The fields a `query_string` or a `multi_match` names (`title^3`), checked: `None` for
    /// none or `*` (every text field).
    fn field_list(&self, value: Option<&Value>, query: &str) -> Result<DefaultFields, ApiError> {
        let names: Vec<String> = match value {
            None => Vec::new(),
            Some(Value::String(name)) => vec![name.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str().map(str::to_owned).ok_or_else(|| {
                        ApiError::parsing(format!("[{query}]: a field is a string, not {item}"))
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(ApiError::parsing(format!(
                    "[{query}]: [fields] is a list of field names, not {other}"
                )))
            }
        };
        if names.iter().any(|n| n == "*") {
            if names.len() > 1 {
                return Err(ApiError::parsing(format!(
                    "[{query}]: [*] stands for every text field; name no other field beside it"
                )));
            }
            return Ok(DefaultFields::default());
        }
        if let Some(pattern) = names.iter().find(|n| n.contains('*') || n.contains('?')) {
            return Err(ApiError::illegal(format!(
                "[{query}]: field patterns such as [{pattern}] are not supported; name the \
                 fields, or use * for every text field"
            )));
        }
        let fields = DefaultFields::parse(&names).map_err(|e| field_error(e, query))?;
        for (field, _) in &fields.fields {
            self.check_text_field(field, query)?;
        }
        Ok(fields)
    }

    /// `{"query_string": {"query": "...", "default_operator": "and", "fields": ["title^2",
    /// "summary"]}}`: the query language, with field clauses on the mapping. Words without a
    /// field search `fields` (or `default_field`; else every text field), each word's clauses
    /// combined as Elasticsearch's `best_fields` combines them (the best field's score plus
    /// `tie_breaker` times the others').
    fn query_string(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "query_string")?;
        known(
            options,
            "query_string",
            &[
                "query",
                "default_operator",
                "default_field",
                "fields",
                "tie_breaker",
                "type",
                "boost",
            ],
        )?;
        let factor = boost(options, "query_string")?;
        let text = options
            .get("query")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::parsing("[query_string] query needs a [query] string"))?;
        if options.contains_key("default_field") && options.contains_key("fields") {
            return Err(ApiError::parsing(
                "[query_string]: give [default_field] or [fields], not both",
            ));
        }
        let listed = options
            .get("fields")
            .or_else(|| options.get("default_field"));
        let combine = match options.get("type").and_then(Value::as_str) {
            None | Some("best_fields") => Combine::DisMax(tie_breaker(options, "query_string")?),
            Some("most_fields") => Combine::Sum,
            Some(other) => {
                return Err(ApiError::illegal(format!(
                    "[query_string]: type [{other}] is not supported (best_fields and \
                     most_fields are)"
                )))
            }
        };
        let fields = self
            .field_list(listed, "query_string")?
            .combined_by(combine);
        let operator = operator_of(options.get("default_operator"), "default_operator")?;
        let query = parse_text_in(self.index, text, operator, self.config, &fields)?.0;
        Ok(boosted(query, factor, context))
    }

    /// `{"match": {"field": "text"}}`, `{"match": {"field": {"query": "text", "operator":
    /// "and", "minimum_should_match": 1, "boost": 2}}}`: words of a text field, or the value of
    /// another field (as `term`).
    fn matches(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let (field, spec) = single(object(body, "match")?, "match")?;
        let (value, options) = match spec {
            Value::Object(options) => {
                known(
                    options,
                    "match",
                    &["query", "operator", "minimum_should_match", "boost"],
                )?;
                let value = options
                    .get("query")
                    .ok_or_else(|| ApiError::parsing("[match] query needs a [query]"))?;
                (value, Some(options))
            }
            value => (value, None),
        };
        let factor = options.map_or(Ok(Factor::ONE), |o| boost(o, "match"))?;
        let text = scalar(value, "match")?;
        let is_text = matches!(
            self.mapping()
                .resolve(field)
                .map(|f| f.field_type.into_owned()),
            Some(FieldType::Text(_))
        );
        if !is_text {
            // Elasticsearch's match on a keyword, number, date or boolean is its term query.
            if self.mapping().resolve(field).is_none() {
                self.check_text_field(field, "match")?;
            }
            let query = self.term_of(field, &text, "match", context)?;
            return Ok(boosted(query, factor, context));
        }
        self.check_text_field(field, "match")?;
        let operator = operator_of(options.and_then(|o| o.get("operator")), "operator")?;
        let fields =
            DefaultFields::parse(&[field.to_owned()]).map_err(|e| field_error(e, "match"))?;
        let query = self.words(&text, operator, &fields)?;
        let query = match options.and_then(|o| o.get("minimum_should_match")) {
            Some(spec) => at_least(query, spec, "match")?,
            None => query,
        };
        Ok(boosted(query, factor, context))
    }

    /// `text` as words (no query syntax) searched in `fields` with `operator`.
    fn words(
        &self,
        text: &str,
        operator: DefaultOperator,
        fields: &DefaultFields,
    ) -> Result<Query, ApiError> {
        let escaped = escape_words(text);
        if escaped.trim().is_empty() {
            return Ok(nothing());
        }
        Ok(parse_text_in(self.index, &escaped, operator, self.config, fields)?.0)
    }

    /// `{"match_phrase": {"field": "words in order"}}`, `{"match_phrase": {"field": {"query":
    /// "...", "slop": 1, "boost": 2}}}`.
    fn match_phrase(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let (field, spec) = single(object(body, "match_phrase")?, "match_phrase")?;
        let (value, options) = match spec {
            Value::Object(options) => {
                known(options, "match_phrase", &["query", "slop", "boost"])?;
                let value = options
                    .get("query")
                    .ok_or_else(|| ApiError::parsing("[match_phrase] query needs a [query]"))?;
                (value, Some(options))
            }
            value => (value, None),
        };
        let factor = options.map_or(Ok(Factor::ONE), |o| boost(o, "match_phrase"))?;
        let slop = slop_of(options.and_then(|o| o.get("slop")), "match_phrase")?;
        let text = scalar(value, "match_phrase")?;
        self.check_text_field(field, "match_phrase")?;
        let fields = DefaultFields::parse(&[field.to_owned()])
            .map_err(|e| field_error(e, "match_phrase"))?;
        let query = self.phrase(&text, slop, &fields)?;
        Ok(boosted(query, factor, context))
    }

    /// `text` as one phrase with `slop`, searched in `fields`.
    fn phrase(&self, text: &str, slop: u32, fields: &DefaultFields) -> Result<Query, ApiError> {
        let quoted = quote_phrase(text, slop);
        Ok(parse_text_in(
            self.index,
            &quoted,
            DefaultOperator::Or,
            self.config,
            fields,
        )?
        .0)
    }

    /// `{"multi_match": {"query": "...", "fields": ["title^3", "summary"], "type":
    /// "best_fields", "tie_breaker": 0.3, "operator": "and"}}`: the text matched in each field
    /// as `match` (or `match_phrase` for type `phrase`) matches it, the fields' queries
    /// combined as the type says.
    fn multi_match(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "multi_match")?;
        known(
            options,
            "multi_match",
            &[
                "query",
                "fields",
                "type",
                "tie_breaker",
                "operator",
                "minimum_should_match",
                "slop",
                "boost",
            ],
        )?;
        let factor = boost(options, "multi_match")?;
        let text = scalar(
            options
                .get("query")
                .ok_or_else(|| ApiError::parsing("[multi_match] query needs a [query]"))?,
            "multi_match",
        )?;
        let fields = self.field_list(options.get("fields"), "multi_match")?;
        let fields: Vec<(String, Factor)> = if fields.fields.is_empty() {
            self.mapping()
                .text_fields()
                .map(|f| (f.to_owned(), Factor::ONE))
                .collect()
        } else {
            fields.fields
        };
        let kind = options
            .get("type")
            .map(|t| {
                t.as_str().ok_or_else(|| {
                    ApiError::parsing(format!("[multi_match]: [type] is a string, not {t}"))
                })
            })
            .transpose()?
            .unwrap_or("best_fields");
        let operator = operator_of(options.get("operator"), "operator")?;
        if kind != "phrase" && options.contains_key("slop") {
            return Err(ApiError::parsing(
                "[multi_match]: [slop] goes with type phrase",
            ));
        }
        let mut per_field = Vec::with_capacity(fields.len());
        for (field, field_boost) in &fields {
            let one = DefaultFields {
                fields: vec![(field.clone(), Factor::ONE)],
                combine: Combine::Sum,
            };
            let query = match kind {
                "phrase" => {
                    let slop = slop_of(options.get("slop"), "multi_match")?;
                    self.phrase(&text, slop, &one)?
                }
                "best_fields" | "most_fields" => {
                    let query = self.words(&text, operator, &one)?;
                    match options.get("minimum_should_match") {
                        Some(spec) => at_least(query, spec, "multi_match")?,
                        None => query,
                    }
                }
                other => {
                    return Err(ApiError::illegal(format!(
                        "[multi_match]: type [{other}] is not supported (best_fields, \
                         most_fields and phrase are)"
                    )))
                }
            };
            per_field.push(boosted(query, *field_boost, Context::Scoring));
        }
        let query = match kind {
            "most_fields" => Query::Bool(BoolQuery {
                should: per_field,
                ..BoolQuery::default()
            }),
            _ => Query::DisMax(DisMaxQuery {
                queries: per_field,
                tie_breaker: tie_breaker(options, "multi_match")?,
            }),
        };
        Ok(boosted(query, factor, context))
    }
}

/// The `tie_breaker` option (0 when absent), a number from 0 to 1.
fn tie_breaker(options: &Map<String, Value>, query: &str) -> Result<Factor, ApiError> {
    match options.get("tie_breaker") {
        None => Ok(Factor::new(0.0).expect("0 is a factor")),
        Some(value) => value
            .as_f64()
            .filter(|t| (0.0..=1.0).contains(t))
            .and_then(|t| Factor::new(t as f32))
            .ok_or_else(|| {
                ApiError::parsing(format!(
                    "[{query}]: [tie_breaker] is a number from 0 to 1, not {value}"
                ))
            }),
    }
}

/// A phrase's `slop` option (0 when absent).
fn slop_of(value: Option<&Value>, query: &str) -> Result<u32, ApiError> {
    match value {
        None => Ok(0),
        Some(value) => value
            .as_u64()
            .filter(|&slop| slop <= u64::from(apcache_index::query::MAX_SLOP))
            .map(|slop| slop as u32)
            .ok_or_else(|| {
                ApiError::parsing(format!(
                    "[{query}]: [slop] is a whole number from 0 to {}, not {value}",
                    apcache_index::query::MAX_SLOP
                ))
            }),
    }
}

/// `text` as one quoted phrase of the query language, with `slop`.
fn quote_phrase(text: &str, slop: u32) -> String {
    let mut quoted = String::with_capacity(text.len() + 8);
    quoted.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    if slop > 0 {
        quoted.push_str(&format!("~{slop}"));
    }
    quoted
}

/// `query` (a `match`'s words) with at least as many of its optional words matching as
/// `spec` asks: Elasticsearch's `minimum_should_match`, for none, one or all of them.
fn at_least(query: Query, spec: &Value, name: &str) -> Result<Query, ApiError> {
    let Query::Bool(mut group) = query else {
        // One word (or none): nothing to count.
        return Ok(query);
    };
    if !group.must.is_empty() {
        return Ok(Query::Bool(group));
    }
    match minimum_should_match(spec, group.should.len())? {
        0 | 1 => Ok(Query::Bool(group)),
        n if n == group.should.len() => {
            group.must = std::mem::take(&mut group.should);
            Ok(Query::Bool(group))
        }
        n => Err(ApiError::illegal(format!(
            "[{name}] query: minimum_should_match {spec} asks {n} of {} words; apcache \
             supports none, one, or all of them",
            group.should.len()
        ))),
    }
}

/// An operator option (`or`, `and`, any case), `or` when absent.
fn operator_of(value: Option<&Value>, name: &str) -> Result<DefaultOperator, ApiError> {
    match value {
        None => Ok(DefaultOperator::Or),
        Some(Value::String(text)) => default_operator(text),
        Some(other) => Err(ApiError::parsing(format!(
            "[{name}] is a string, not {other}"
        ))),
    }
}

/// How many of `should` optional clauses `spec` asks to match, as Elasticsearch computes it:
/// a count (negative: all but that many) or a percentage, capped to the clauses there are.
fn minimum_should_match(spec: &Value, should: usize) -> Result<usize, ApiError> {
    let bad = || {
        ApiError::parsing(format!(
            "[bool] query: minimum_should_match {spec} is not a count or a percentage \
             (combinations with '<' are not supported)"
        ))
    };
    let clauses = should as i64;
    let wanted = match spec {
        Value::Number(n) => n.as_i64().ok_or_else(bad)?,
        Value::String(s) => {
            let s = s.trim();
            if let Some(percent) = s.strip_suffix('%') {
                let percent: f64 = percent.trim().parse().map_err(|_| bad())?;
                let part = (clauses as f64 * percent / 100.0) as i64;
                if percent < 0.0 {
                    clauses + part
                } else {
                    part
                }
            } else {
                s.parse::<i64>().map_err(|_| bad())?
            }
        }
        _ => return Err(bad()),
    };
    let wanted = if wanted < 0 { clauses + wanted } else { wanted };
    Ok(wanted.clamp(0, clauses) as usize)
}

/// A `match` query's text, as query-language text with every word's syntax escaped, so that
/// `c++ -java` searches for those words rather than excluding `java`.
pub fn escape_words(text: &str) -> String {
    // A lone operator word would still be an operator: lowercase it.
    apcache_index::query::escape(text)
        .split(' ')
        .map(|w| match w {
            "AND" | "OR" | "NOT" => w.to_lowercase(),
            _ => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn match_text_loses_its_syntax() {
        assert_eq!(escape_words("c++ -java"), "c\\+\\+ \\-java");
        assert_eq!(escape_words("cats AND dogs"), "cats and dogs");
    }

    #[test]
    fn minimum_should_match_counts_as_elasticsearch_does() {
        assert_eq!(minimum_should_match(&json!(1), 3).unwrap(), 1);
        assert_eq!(minimum_should_match(&json!("2"), 3).unwrap(), 2);
        assert_eq!(minimum_should_match(&json!(-1), 3).unwrap(), 2);
        assert_eq!(minimum_should_match(&json!("100%"), 3).unwrap(), 3);
        assert_eq!(minimum_should_match(&json!("50%"), 3).unwrap(), 1);
        assert_eq!(minimum_should_match(&json!("-25%"), 4).unwrap(), 3);
        assert_eq!(minimum_should_match(&json!(5), 2).unwrap(), 2);
        assert_eq!(minimum_should_match(&json!(1), 0).unwrap(), 0);
        assert!(minimum_should_match(&json!("3<90%"), 3).is_err());
        assert!(minimum_should_match(&json!(true), 3).is_err());
    }

    #[test]
    fn text_fields_alone_are_searchable_only_when_they_are_all_of_them() {
        let one = Mapping::from_json(&json!({"properties": {
            "summary": {"type": "text"}, "size": {"type": "long"}}}))
        .unwrap();
        assert!(text_field_alone_ok(&one, "summary"));
        let two = Mapping::from_json(&json!({"properties": {
            "summary": {"type": "text"}, "notes": {"type": "text"}}}))
        .unwrap();
        assert!(!text_field_alone_ok(&two, "summary"));
        assert!(text_field_alone_ok(&Mapping::title_body(), "body"));
        assert!(text_field_alone_ok(&Mapping::title_body(), "title"));
    }
}
