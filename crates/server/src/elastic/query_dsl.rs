//! Elasticsearch's query DSL, read into the [`Query`] apcache evaluates, with Elasticsearch's
//! scores wherever apcache answers at all.
//!
//! Understood: `match_all`, `match_none`, `term`, `terms`, `range`, `exists`, `ids`, `bool`,
//! `constant_score`, `query_string` and `match`. Anything else, and any option of these that
//! apcache does not implement, is a 400 that names it: a query that silently ignored an option
//! would answer a different question than the one asked.
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
//! - `boost` other than 1 is refused in a scoring context (apcache's queries carry no boost);
//!   in a filter context it changes nothing and is accepted.
//! - `bool` sums its `must` and `should` clauses' scores, as Lucene's `BooleanQuery`; a `bool`
//!   of only `must_not` clauses matches every other document with score 0, and an empty
//!   `bool` is `match_all`, as in Elasticsearch.
//!
//! Text fields are indexed together, as one stream of words: `match` may name a text field
//! only where that is the same as searching them all (the index's one text field, or `title`
//! or `body` of a title-and-body index).

use apcache_index::query::{
    exists_query, range_query, term_query, BoolQuery, DefaultOperator, Query, QueryError, RangeEnd,
};
use apcache_index::schema::{FieldType, Mapping, ID_FIELD};
use serde_json::{Map, Value};

use crate::api_error::ApiError;
use crate::catalog::ServedIndex;
use crate::config::ServerConfig;
use crate::native::default_operator;
use crate::search::{check_query, parse_text};

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

/// Checks a query's `boost`: any number in a filter context (it changes nothing there), only 1
/// where the score is seen.
fn boost(options: &Map<String, Value>, query: &str, context: Context) -> Result<(), ApiError> {
    let Some(value) = options.get("boost") else {
        return Ok(());
    };
    let boost = value.as_f64().ok_or_else(|| {
        ApiError::parsing(format!(
            "[{query}] query: [boost] must be a number, not {value}"
        ))
    })?;
    if context == Context::Scoring && boost != 1.0 {
        return Err(ApiError::illegal(format!(
            "[{query}] query: boost {boost} is not supported where the score counts (apcache's \
             queries carry no boost); leave it out, or use the query as a filter"
        )));
    }
    Ok(())
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
        "[{query}] on the text field [{field}]: apcache indexes the text fields of a document \
         together, as one stream of words, and cannot search one of them alone; search them \
         all with a query_string query without default_field"
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
                boost(options, kind, context)?;
                Ok(Query::All)
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
            "match_phrase" | "multi_match" | "simple_query_string" => {
                Err(ApiError::parsing(format!(
                "[{kind}] queries are not supported by apcache; write the words (or a \"quoted \
                 phrase\") in a query_string query"
            )))
            }
            other => Err(ApiError::parsing(format!(
                "unknown query [{other}]: apcache understands match_all, match_none, term, terms, \
                 range, exists, ids, bool, constant_score, query_string and match"
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
        let value = match spec {
            Value::Object(options) => {
                known(options, "term", &["value", "boost", "case_insensitive"])?;
                boost(options, "term", context)?;
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
        self.term_of(field, &scalar(value, "term")?, "term", context)
    }

    /// `{"terms": {"field": ["a", "b"], "boost": 1}}`: any of the values, a constant score.
    fn terms(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "terms")?;
        boost(options, "terms", context)?;
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
            Context::Scoring => constant_one(query),
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
        boost(options, "range", context)?;
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
        range_query(self.mapping(), field, &lower, &upper).map_err(|e| field_error(e, "range"))
    }

    /// `{"exists": {"field": "f"}}`: documents with a value of the field (or of any field of
    /// the object it names).
    fn exists(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "exists")?;
        known(options, "exists", &["field", "boost"])?;
        boost(options, "exists", context)?;
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
            Context::Scoring => constant_one(query),
            Context::Filter => query,
        })
    }

    /// `{"ids": {"values": ["a", "b"]}}`.
    fn ids(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "ids")?;
        known(options, "ids", &["values", "boost"])?;
        boost(options, "ids", context)?;
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
            Context::Scoring => constant_one(query),
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
        boost(options, "bool", context)?;
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
            return Ok(Query::All);
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
        Ok(Query::Bool(BoolQuery {
            must,
            should,
            must_not,
        }))
    }

    /// `{"constant_score": {"filter": {...}, "boost": 1}}`.
    fn constant_score(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "constant_score")?;
        known(options, "constant_score", &["filter", "boost"])?;
        boost(options, "constant_score", context)?;
        let filter = options
            .get("filter")
            .ok_or_else(|| ApiError::parsing("[constant_score] query needs a [filter]"))?;
        let query = self.clause(filter, Context::Filter)?;
        Ok(match context {
            Context::Scoring => constant_one(query),
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
            Some(FieldType::Text(_)) if text_field_alone_ok(self.mapping(), field) => Ok(()),
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

    /// `{"query_string": {"query": "...", "default_operator": "and"}}`: the query language,
    /// with field clauses on the mapping.
    fn query_string(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let options = object(body, "query_string")?;
        known(
            options,
            "query_string",
            &["query", "default_operator", "default_field", "boost"],
        )?;
        boost(options, "query_string", context)?;
        let text = options
            .get("query")
            .and_then(Value::as_str)
            .ok_or_else(|| ApiError::parsing("[query_string] query needs a [query] string"))?;
        if let Some(field) = options.get("default_field") {
            let field = field
                .as_str()
                .ok_or_else(|| ApiError::parsing("[query_string]: [default_field] is a string"))?;
            if field != "*" {
                self.check_text_field(field, "query_string")?;
            }
        }
        let operator = operator_of(options.get("default_operator"), "default_operator")?;
        Ok(parse_text(self.index, text, operator, self.config)?.0)
    }

    /// `{"match": {"field": "text"}}`, `{"match": {"field": {"query": "text", "operator":
    /// "and"}}}`: words of a text field, or the value of another field (as `term`).
    fn matches(&self, body: &Value, context: Context) -> Result<Query, ApiError> {
        let (field, spec) = single(object(body, "match")?, "match")?;
        let (value, operator) = match spec {
            Value::Object(options) => {
                known(options, "match", &["query", "operator", "boost"])?;
                boost(options, "match", context)?;
                let value = options
                    .get("query")
                    .ok_or_else(|| ApiError::parsing("[match] query needs a [query]"))?;
                (value, options.get("operator"))
            }
            value => (value, None),
        };
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
            return self.term_of(field, &text, "match", context);
        }
        self.check_text_field(field, "match")?;
        let operator = operator_of(operator, "operator")?;
        let escaped = escape_words(&text);
        if escaped.trim().is_empty() {
            return Ok(nothing());
        }
        Ok(parse_text(self.index, &escaped, operator, self.config)?.0)
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
