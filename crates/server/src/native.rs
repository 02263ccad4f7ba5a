//! apcache's own API under `/indexes` (docs/api.md): list and describe indexes, search with
//! GET parameters or a JSON body, read a document.

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
use crate::search::{self, SearchParams};
use apcache_index::segment::snippet;

use crate::highlight_request::HighlightRequest;

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

/// The search parameters of a query string.
fn params_from_query(query: &HashMap<String, String>) -> Result<SearchParams, ApiError> {
    let q = query
        .get("q")
        .ok_or_else(|| ApiError::illegal("the parameter q (the query) is missing"))?;
    Ok(SearchParams {
        q: q.clone(),
        k: query.get("k").map_or(Ok(10), |v| count_param("k", v))?,
        offset: query
            .get("offset")
            .map_or(Ok(0), |v| count_param("offset", v))?,
        count: query
            .get("count")
            .map_or(Ok(false), |v| bool_param("count", v))?,
        default_operator: query
            .get("default_operator")
            .map_or(Ok(DefaultOperator::Or), |v| default_operator(v))?,
        fetch: true,
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
}

fn ten() -> usize {
    10
}

/// `GET /indexes/{name}/search?q=&k=&offset=&count=&default_operator=`.
pub async fn search_get(
    State(state): State<Shared>,
    Path(name): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let arrived = Instant::now();
    let answer = async {
        let index = index(&state, &name)?;
        let params = params_from_query(&query)?;
        let highlight = query
            .get("highlight")
            .map_or(Ok(false), |v| bool_param("highlight", v))?;
        respond(&state, index, params, highlight, arrived).await
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
        let params = SearchParams {
            q: body.q,
            k: body.k,
            offset: body.offset,
            count: body.count,
            default_operator: match &body.default_operator {
                Some(op) => default_operator(op)?,
                None => DefaultOperator::Or,
            },
            fetch: true,
        };
        respond(&state, index, params, body.highlight, arrived).await
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

async fn respond(
    state: &Shared,
    index: &std::sync::Arc<ServedIndex>,
    params: SearchParams,
    highlight: bool,
    arrived: Instant,
) -> Result<Response, ApiError> {
    let outcome = search::run(index, &params, &state.config, arrived).await?;
    let highlight = highlight.then(HighlightRequest::body);
    let hits: Vec<Value> = outcome
        .hits
        .iter()
        .map(|hit| {
            let mut json = json!({
                "id": hit.id(),
                "score": hit.score,
                "title": hit.title,
                "snippet": snippet(&hit.body, SNIPPET_CHARS),
            });
            if let Some(request) = &highlight {
                let marked =
                    request.of_hit(&outcome.parsed, &index.analyzer, &hit.title, &hit.body);
                json["highlight"] = marked.get("body").cloned().unwrap_or_else(|| json!([]));
            }
            json
        })
        .collect();
    let mut body = json!({
        "index": index.name,
        "query": outcome.query,
        "total": {"value": outcome.total, "exact": outcome.exact},
        "approximate": outcome.approximate,
        "took_us": outcome.took.as_micros() as u64,
        "offset": params.offset,
        "k": params.k,
        "hits": hits,
    });
    if !outcome.notes.is_empty() {
        body["notes"] = json!(outcome.notes);
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
        Ok::<_, ApiError>(
            Json(json!({"id": id, "title": stored.title, "body": stored.body})).into_response(),
        )
    })();
    answer.unwrap_or_else(IntoResponse::into_response)
}
