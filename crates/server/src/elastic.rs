//! The Elasticsearch-compatible subset, so that existing clients work unchanged: `GET /`,
//! `/{index}/_search`, `/{index}/_count`, `/{index}/_doc/{id}`, `/_cat/indices`, in
//! Elasticsearch's request and response shapes (docs/api.md lists what is understood).
//! Document ids are the external ids of the native API; the single text field is `body`, and
//! `title` is stored beside it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use apcache_index::query::DefaultOperator;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api_error::ApiError;
use crate::app::{body_bytes, json_body, Shared};
use crate::catalog::ServedIndex;
use crate::highlight_request::HighlightRequest;
use crate::native::{bool_param, count_param, default_operator};
use crate::search::{self, SearchParams};

/// The Elasticsearch version whose API this subset follows (clients check the major).
const COMPATIBLE_VERSION: &str = "8.11.0";

/// `GET /`: cluster information; a browser is sent to the search page.
pub async fn root(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    if wants_html {
        return Redirect::to("/ui").into_response();
    }
    Json(json!({
        "name": "apcache",
        "cluster_name": "apcache",
        "cluster_uuid": "apcache",
        "version": {
            "number": COMPATIBLE_VERSION,
            "build_flavor": "default",
            "build_type": "apcache",
            "lucene_version": "9.12.0",
            "minimum_wire_compatibility_version": "7.17.0",
            "minimum_index_compatibility_version": "7.0.0",
            "apcache": env!("CARGO_PKG_VERSION"),
        },
        "indexes": state.catalog.iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
        "tagline": "You Know, for Search",
    }))
    .into_response()
}

fn index<'s>(state: &'s Shared, name: &str) -> Result<&'s Arc<ServedIndex>, ApiError> {
    state
        .catalog
        .get(name)
        .ok_or_else(|| ApiError::no_index(name))
}

/// The query clause of a search or count body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum QueryClause {
    QueryString(QueryString),
    Match(HashMap<String, MatchValue>),
    MatchAll(serde::de::IgnoredAny),
}

#[derive(Debug, Deserialize)]
struct QueryString {
    query: String,
    #[serde(default)]
    default_operator: Option<String>,
    #[serde(default)]
    default_field: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum MatchValue {
    Text(String),
    Full {
        query: String,
        #[serde(default)]
        operator: Option<String>,
    },
}

/// A search (or count) body.
#[derive(Debug, Default, Deserialize)]
struct SearchBody {
    #[serde(default)]
    query: Option<QueryClause>,
    #[serde(default)]
    from: Option<usize>,
    #[serde(default)]
    size: Option<usize>,
    #[serde(default)]
    track_total_hits: Option<Value>,
    #[serde(default, rename = "_source")]
    source: Option<Value>,
    #[serde(default)]
    highlight: Option<Value>,
}

/// What a request's query becomes: query text in the query language, or every document.
enum Wanted {
    Text(String, DefaultOperator),
    All,
}

/// The stored fields a hit returns.
#[derive(Clone, Copy)]
struct SourceFields {
    title: bool,
    body: bool,
}

impl SourceFields {
    const ALL: SourceFields = SourceFields {
        title: true,
        body: true,
    };

    fn parse(value: &Value) -> Result<SourceFields, ApiError> {
        let field = |name: &str| -> Result<(bool, bool), ApiError> {
            match name {
                "title" => Ok((true, false)),
                "body" => Ok((false, true)),
                "*" => Ok((true, true)),
                other => Err(ApiError::illegal(format!(
                    "unknown _source field [{other}]: the fields are title and body"
                ))),
            }
        };
        let mut fields = SourceFields {
            title: false,
            body: false,
        };
        let mut add = |name: &str| -> Result<(), ApiError> {
            let (t, b) = field(name)?;
            fields.title |= t;
            fields.body |= b;
            Ok(())
        };
        match value {
            Value::Bool(true) => return Ok(SourceFields::ALL),
            Value::Bool(false) => {}
            Value::String(s) => {
                for name in s.split(',').filter(|n| !n.is_empty()) {
                    add(name.trim())?;
                }
            }
            Value::Array(names) => {
                for name in names {
                    add(name.as_str().ok_or_else(|| {
                        ApiError::illegal("_source must list field names as strings")
                    })?)?;
                }
            }
            _ => {
                return Err(ApiError::illegal(
                    "_source must be true, false or a list of fields",
                ))
            }
        }
        Ok(fields)
    }

    fn any(self) -> bool {
        self.title || self.body
    }
}

/// A `match` query's text, as query-language text with every word's syntax escaped, so that
/// `c++ -java` searches for those words rather than excluding `java`.
fn escape_words(text: &str) -> String {
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

fn operator_of(text: &Option<String>) -> Result<DefaultOperator, ApiError> {
    text.as_deref()
        .map_or(Ok(DefaultOperator::Or), default_operator)
}

impl QueryClause {
    fn wanted(self) -> Result<Wanted, ApiError> {
        match self {
            QueryClause::QueryString(qs) => {
                if let Some(field) = qs.default_field.as_deref() {
                    if !matches!(field, "body" | "*") {
                        return Err(ApiError::illegal(format!(
                            "unknown field [{field}]: the searchable field is body"
                        )));
                    }
                }
                Ok(Wanted::Text(qs.query, operator_of(&qs.default_operator)?))
            }
            QueryClause::Match(fields) => {
                let mut fields = fields.into_iter();
                let (Some((field, value)), None) = (fields.next(), fields.next()) else {
                    return Err(ApiError::illegal("match takes exactly one field"));
                };
                if field != "body" {
                    return Err(ApiError::illegal(format!(
                        "unknown field [{field}]: the searchable field is body"
                    )));
                }
                let (text, operator) = match value {
                    MatchValue::Text(text) => (text, None),
                    MatchValue::Full { query, operator } => (query, operator),
                };
                Ok(Wanted::Text(escape_words(&text), operator_of(&operator)?))
            }
            QueryClause::MatchAll(_) => Ok(Wanted::All),
        }
    }
}

/// A search as the URL and the body ask for it (the body wins where both say).
struct Request {
    wanted: Wanted,
    from: usize,
    size: usize,
    exact_total: bool,
    source: SourceFields,
    highlight: Option<HighlightRequest>,
}

fn parse_request(
    url: &HashMap<String, String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Request, ApiError> {
    let bytes = body_bytes(body)?;
    let body: SearchBody = json_body(&bytes)?.unwrap_or_default();
    let wanted = match (body.query, url.get("q")) {
        (Some(clause), _) => clause.wanted()?,
        (None, Some(q)) => Wanted::Text(
            q.clone(),
            url.get("default_operator")
                .map_or(Ok(DefaultOperator::Or), |v| default_operator(v))?,
        ),
        (None, None) => Wanted::All,
    };
    let from = match body.from {
        Some(from) => from,
        None => url.get("from").map_or(Ok(0), |v| count_param("from", v))?,
    };
    let size = match body.size {
        Some(size) => size,
        None => url.get("size").map_or(Ok(10), |v| count_param("size", v))?,
    };
    let exact_total = match body.track_total_hits {
        Some(Value::Bool(b)) => b,
        Some(Value::Number(_)) => false,
        Some(_) => {
            return Err(ApiError::illegal(
                "track_total_hits must be true, false or a number",
            ))
        }
        None => match url.get("track_total_hits") {
            Some(v) if v.parse::<u64>().is_ok() => false,
            Some(v) => bool_param("track_total_hits", v)?,
            None => false,
        },
    };
    let source = match (&body.source, url.get("_source")) {
        (Some(value), _) => SourceFields::parse(value)?,
        (None, Some(text)) => match text.as_str() {
            "true" => SourceFields::ALL,
            "false" => SourceFields::parse(&Value::Bool(false))?,
            list => SourceFields::parse(&Value::String(list.to_string()))?,
        },
        (None, None) => SourceFields::ALL,
    };
    let highlight = body
        .highlight
        .as_ref()
        .map(HighlightRequest::parse)
        .transpose()?;
    Ok(Request {
        wanted,
        from,
        size,
        exact_total,
        source,
        highlight,
    })
}

fn shards() -> Value {
    json!({"total": 1, "successful": 1, "skipped": 0, "failed": 0})
}

fn source_of(fields: SourceFields, title: String, body: String) -> Value {
    let mut source = Map::new();
    if fields.title {
        source.insert("title".into(), Value::String(title));
    }
    if fields.body {
        source.insert("body".into(), Value::String(body));
    }
    Value::Object(source)
}

/// `GET|POST /{index}/_search`.
pub async fn search(
    State(state): State<Shared>,
    Path(name): Path<String>,
    Query(url): Query<HashMap<String, String>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let arrived = Instant::now();
    let answer = async {
        let index = index(&state, &name)?;
        let request = parse_request(&url, body)?;
        search::check_window(request.from, request.size, &state.config)?;
        let (total, exact, approximate, hits) = match request.wanted {
            Wanted::All => {
                let (total, exact, hits) = match_all(index, &request)?;
                (total, exact, false, hits)
            }
            Wanted::Text(q, default_operator) => {
                let params = SearchParams {
                    q,
                    k: request.size,
                    offset: request.from,
                    count: request.exact_total,
                    default_operator,
                    fetch: request.source.any() || request.highlight.is_some(),
                };
                let outcome = search::run(index, &params, &state.config, arrived).await?;
                let hits = outcome
                    .hits
                    .into_iter()
                    .map(|hit| {
                        let marked = request.highlight.as_ref().map(|h| {
                            h.of_hit(&outcome.parsed, &index.analyzer, &hit.title, &hit.body)
                        });
                        (hit.id(), hit.score, hit.title, hit.body, marked)
                    })
                    .collect();
                (outcome.total, outcome.exact, outcome.approximate, hits)
            }
        };
        let max_score = hits.first().map(|h| h.1);
        let hits: Vec<Value> = hits
            .into_iter()
            .map(|(id, score, title, body, marked)| {
                let mut hit = json!({"_index": index.name, "_id": id, "_score": score});
                if request.source.any() {
                    hit["_source"] = source_of(request.source, title, body);
                }
                if let Some(marked) = marked {
                    hit["highlight"] = marked;
                }
                hit
            })
            .collect();
        let mut body = json!({
            "took": arrived.elapsed().as_millis() as u64,
            "timed_out": false,
            "_shards": shards(),
            "hits": {
                "total": {"value": total, "relation": if exact { "eq" } else { "gte" }},
                "max_score": max_score,
                "hits": hits,
            },
        });
        // Not an Elasticsearch field: present only on an approximate answer (partial2).
        if approximate {
            body["approximate"] = json!(true);
        }
        Ok::<_, ApiError>(Json(body).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// Hits as (id, score, title, body, highlight).
type Hits = Vec<(String, f32, String, String, Option<Value>)>;

/// `match_all`: every document, score 1, in id order.
fn match_all(index: &ServedIndex, request: &Request) -> Result<(u64, bool, Hits), ApiError> {
    let mut hits = Vec::new();
    let end = (request.from as u64 + request.size as u64).min(index.docs);
    for doc in request.from as u64..end {
        let doc = doc as u32;
        let (title, body) = if request.source.any() {
            match index.document(doc) {
                Ok(Some(stored)) => (stored.title, stored.body),
                Ok(None) => continue,
                Err(e) => return Err(ApiError::from(e)),
            }
        } else {
            (String::new(), String::new())
        };
        hits.push((doc.to_string(), 1.0, title, body, None));
    }
    Ok((index.docs, true, hits))
}

/// `GET|POST /{index}/_count`.
pub async fn count(
    State(state): State<Shared>,
    Path(name): Path<String>,
    Query(url): Query<HashMap<String, String>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let arrived = Instant::now();
    let answer = async {
        let index = index(&state, &name)?;
        let request = parse_request(&url, body)?;
        let count = match request.wanted {
            Wanted::All => index.docs,
            Wanted::Text(q, default_operator) => {
                let params = SearchParams {
                    q,
                    k: 0,
                    offset: 0,
                    count: true,
                    default_operator,
                    fetch: false,
                };
                search::run(index, &params, &state.config, arrived)
                    .await?
                    .total
            }
        };
        Ok::<_, ApiError>(Json(json!({"count": count, "_shards": shards()})).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `GET /{index}/_doc/{id}`.
pub async fn document(
    State(state): State<Shared>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    let answer = (|| -> Result<Response, ApiError> {
        let index = index(&state, &name)?;
        match index.document_by_id(&id)? {
            Some(stored) => Ok(Json(json!({
                "_index": name,
                "_id": id,
                "_version": 1,
                "_seq_no": 0,
                "_primary_term": 1,
                "found": true,
                "_source": {"title": stored.title, "body": stored.body},
            }))
            .into_response()),
            None => Ok((
                axum::http::StatusCode::NOT_FOUND,
                Json(json!({"_index": name, "_id": id, "found": false})),
            )
                .into_response()),
        }
    })();
    answer.unwrap_or_else(IntoResponse::into_response)
}

/// `GET /_cat/indices` (`?format=json` for JSON, `?v` for a header line).
pub async fn cat_indices(
    State(state): State<Shared>,
    Query(url): Query<HashMap<String, String>>,
) -> Response {
    let rows: Vec<[String; 9]> = state
        .catalog
        .iter()
        .map(|i| {
            [
                "green".into(),
                "open".into(),
                i.name.clone(),
                i.name.clone(),
                "1".into(),
                "0".into(),
                i.docs.to_string(),
                "0".into(),
                (i.search_bytes + i.store_bytes).to_string(),
            ]
        })
        .collect();
    const HEADER: [&str; 9] = [
        "health",
        "status",
        "index",
        "uuid",
        "pri",
        "rep",
        "docs.count",
        "docs.deleted",
        "store.size",
    ];
    if url.get("format").is_some_and(|f| f == "json") {
        let rows: Vec<Value> = rows
            .iter()
            .map(|row| {
                Value::Object(
                    HEADER
                        .iter()
                        .zip(row)
                        .map(|(k, v)| (k.to_string(), Value::String(v.clone())))
                        .collect(),
                )
            })
            .collect();
        return Json(rows).into_response();
    }
    let mut text = String::new();
    if url.contains_key("v") {
        let _ = writeln!(text, "{}", HEADER.join(" "));
    }
    for row in rows {
        let _ = writeln!(text, "{}", row.join(" "));
    }
    ([(header::CONTENT_TYPE, "text/plain; charset=UTF-8")], text).into_response()
}

#[cfg(test)]
mod tests {
    use super::escape_words;

    #[test]
    fn match_text_loses_its_syntax() {
        assert_eq!(escape_words("c++ -java"), "c\\+\\+ \\-java");
        assert_eq!(escape_words("cats AND dogs"), "cats and dogs");
    }
}
