//! apcache's own API under `/indexes` (docs/api.md): list and describe indexes (with their
//! mappings), search with GET parameters or a JSON body (the query language, with field
//! clauses; optionally sorted by fields), read a document by its id.

use std::collections::HashMap;
use std::time::Instant;

use apcache_index::query::DefaultOperator;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api_error::{ApiError, ErrorKind};
use crate::app::{body_bytes, json_body, Shared};
use crate::catalog::ServedIndex;
use crate::highlight_request::HighlightRequest;
use crate::search::{self, SearchHit, SearchParams};
use crate::sort_keys::Sort;
use crate::sorted;
use apcache_index::segment::snippet;

/// Characters of body text in a hit's snippet.
const SNIPPET_CHARS: usize = 200;

fn index<'s>(state: &'s Shared, name: &str) -> Result<&'s std::sync::Arc<ServedIndex>, ApiError> {
    state
        .catalog
        .get(name)
        .ok_or_else(|| ApiError::no_index(name))
}

fn describe_index(index: &ServedIndex) -> Value {
    let counters = index.service.counters();
    json!({
        "name": index.name,
        "docs": index.docs,
        "segments": index.service.reader().segments().len(),
        "search_bytes": index.search_bytes,
        "store_bytes": index.store_bytes,
        "mode": index.mode(),
        "cache_segments": counters.cache_segments,
        "mapping": index.mapping().to_json(),
    })
}

/// `GET /indexes`.
pub async fn list(State(state): State<Shared>) -> Response {
    let indexes: Vec<Value> = state.catalog.iter().map(|i| describe_index(i)).collect();
    Json(json!({ "indexes": indexes })).into_response()
}

/// `GET /indexes/{name}`.
pub async fn describe(State(state): State<Shared>, Path(name): Path<String>) -> Response {
    match index(&state, &name) {
        Ok(index) => Json(describe_index(index)).into_response(),
        Err(e) => e.into_response(),
    }
}

/// Parses a default operator's name.
pub fn default_operator(text: &str) -> Result<DefaultOperator, ApiError> {
    match text.to_ascii_lowercase().as_str() {
        "or" => Ok(DefaultOperator::Or),
        "and" => Ok(DefaultOperator::And),
        _ => Err(ApiError::illegal(format!(
            "default_operator must be 'or' or 'and', not {text:?}"
        ))),
    }
}

/// Parses a count parameter (`k`, `offset`, `size`, `from`).
pub fn count_param(name: &str, text: &str) -> Result<usize, ApiError> {
    text.trim().parse::<usize>().map_err(|_| {
        ApiError::illegal(format!(
            "{name} must be a whole number of at least 0, not {text:?}"
        ))
    })
}

/// Parses a boolean parameter.
pub fn bool_param(name: &str, text: &str) -> Result<bool, ApiError> {
    match text {
        "" | "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(ApiError::illegal(format!(
            "{name} must be true or false, not {text:?}"
        ))),
    }
}

/// A native search as asked, whichever way it came.
struct Asked {
    q: String,
    default_operator: DefaultOperator,
    params: SearchParams,
    sort: Option<String>,
    highlight: bool,
}

/// The search parameters of a query string.
fn asked_in_url(query: &HashMap<String, String>) -> Result<Asked, ApiError> {
    let q = query
        .get("q")
        .ok_or_else(|| ApiError::illegal("the parameter q (the query) is missing"))?;
    Ok(Asked {
        q: q.clone(),
        default_operator: query
            .get("default_operator")
            .map_or(Ok(DefaultOperator::Or), |v| default_operator(v))?,
        params: SearchParams {
            k: query.get("k").map_or(Ok(10), |v| count_param("k", v))?,
            offset: query
                .get("offset")
                .map_or(Ok(0), |v| count_param("offset", v))?,
            count: query
                .get("count")
                .map_or(Ok(false), |v| bool_param("count", v))?,
            fetch: true,
        },
        sort: query.get("sort").cloned(),
        highlight: query
            .get("highlight")
            .map_or(Ok(false), |v| bool_param("highlight", v))?,
    })
}

/// The JSON body of a native search.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchBody {
    q: String,
    #[serde(default = "ten")]
    k: usize,
    #[serde(default)]
    offset: usize,
    #[serde(default)]
    count: bool,
    #[serde(default)]
    default_operator: Option<String>,
    #[serde(default)]
    highlight: bool,
    /// `"size:desc,_score"`, or a list of such keys.
    #[serde(default)]
    sort: Option<Value>,
}

fn ten() -> usize {
    10
}

/// `GET /indexes/{name}/search?q=&k=&offset=&count=&default_operator=&sort=&highlight=`.
pub async fn search_get(
    State(state): State<Shared>,
    Path(name): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let arrived = Instant::now();
    let answer = async {
        let index = index(&state, &name)?;
        respond(&state, index, asked_in_url(&query)?, arrived).await
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `POST /indexes/{name}/search` with a JSON body of the same parameters.
pub async fn search_post(
    State(state): State<Shared>,
    Path(name): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let arrived = Instant::now();
    let answer = async {
        let index = index(&state, &name)?;
        let bytes = body_bytes(body)?;
        let body: SearchBody = json_body(&bytes)?
            .ok_or_else(|| ApiError::illegal("the body must be a JSON object with q"))?;
        let sort = match body.sort {
            None => None,
            Some(Value::String(text)) => Some(text),
            Some(Value::Array(keys)) => Some(
                keys.iter()
                    .map(|k| k.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| ApiError::illegal("sort lists keys as strings"))?
                    .join(","),
            ),
            Some(other) => {
                return Err(ApiError::illegal(format!(
                    "sort is a string (\"size:desc,_score\") or a list of keys, not {other}"
                )))
            }
        };
        let asked = Asked {
            q: body.q,
            default_operator: match &body.default_operator {
                Some(op) => default_operator(op)?,
                None => DefaultOperator::Or,
            },
            params: SearchParams {
                k: body.k,
                offset: body.offset,
                count: body.count,
                fetch: true,
            },
            sort,
            highlight: body.highlight,
        };
        respond(&state, index, asked, arrived).await
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// A hit as the native API writes it.
fn hit_json(hit: &SearchHit) -> Value {
    json!({
        "id": hit.id,
        "_id": hit.id,
        "score": hit.score,
        "title": hit.title(),
        "snippet": snippet(hit.body(), SNIPPET_CHARS),
        "source": hit.source(),
    })
}

async fn respond(
    state: &Shared,
    index: &std::sync::Arc<ServedIndex>,
    asked: Asked,
    arrived: Instant,
) -> Result<Response, ApiError> {
    let config = &state.config;
    let (query, notes) = search::parse_text(index, &asked.q, asked.default_operator, config)?;
    let sort = asked
        .sort
        .as_deref()
        .map(|text| Sort::parse_native(text, index.mapping()))
        .transpose()?
        .filter(|sort| !sort.is_relevance());
    let highlight = asked.highlight.then(HighlightRequest::body);
    let mark = |hit: &SearchHit, json: &mut Value| {
        if let Some(request) = &highlight {
            let marked = request.of_hit(&query, &index.analyzer, hit.title(), hit.body());
            json["highlight"] = marked.get("body").cloned().unwrap_or_else(|| json!([]));
        }
    };
    let params = asked.params;
    let (total, exact, approximate, hits) = match &sort {
        Some(sort) => {
            let outcome =
                sorted::run(index, query.clone(), sort, None, &params, config, arrived).await?;
            let hits: Vec<Value> = outcome
                .hits
                .iter()
                .map(|(hit, values)| {
                    let mut json = hit_json(hit);
                    mark(hit, &mut json);
                    json["sort"] = json!(sort.shown(values));
                    json
                })
                .collect();
            (outcome.total, true, false, hits)
        }
        None => {
            let outcome = search::run(index, query.clone(), &params, config, arrived).await?;
            let hits: Vec<Value> = outcome
                .hits
                .iter()
                .map(|hit| {
                    let mut json = hit_json(hit);
                    mark(hit, &mut json);
                    json
                })
                .collect();
            (outcome.total, outcome.exact, outcome.approximate, hits)
        }
    };
    let mut body = json!({
        "index": index.name,
        "query": query.to_string(),
        "total": {"value": total, "exact": exact},
        "approximate": approximate,
        "took_us": arrived.elapsed().as_micros() as u64,
        "offset": params.offset,
        "k": params.k,
        "hits": hits,
    });
    if !notes.is_empty() {
        body["notes"] = json!(notes);
    }
    Ok(Json(body).into_response())
}

/// `GET /indexes/{name}/docs/{id}`.
pub async fn document(
    State(state): State<Shared>,
    Path((name, id)): Path<(String, String)>,
) -> Response {
    let answer = (|| {
        let stored = index(&state, &name)?.document_by_id(&id)?.ok_or_else(|| {
            ApiError::new(
                ErrorKind::NotFound,
                format!("no document with id {id:?} in [{name}]"),
            )
        })?;
        let source = search::source_of(&stored);
        Ok::<_, ApiError>(
            Json(
                json!({"id": id, "_id": id, "title": stored.title, "body": stored.body,
                        "source": source}),
            )
            .into_response(),
        )
    })();
    answer.unwrap_or_else(IntoResponse::into_response)
}
