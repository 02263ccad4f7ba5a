//! The Elasticsearch-compatible subset, so that existing clients work unchanged: `GET /`,
//! `/{index}/_search`, `/{index}/_count`, `/{index}/_doc/{id}`, `/{index}/_mapping`,
//! `/_cat/indices`, in Elasticsearch's request and response shapes (docs/api.md lists what is
//! understood).
//!
//! - `request`: a search or count request, key by key.
//! - `query_dsl`: the query DSL, with Elasticsearch's scores or a refusal.
//! - `sort`: the `sort` of a body.
//! - `source`: `_source` filtering.
//!
//! Hits carry the document's `_id` (its own, or its number for an index of documents without
//! ids) and its `_source` (the JSON document as given; a title and a body for tab-separated
//! input).

mod query_dsl;
mod request;
mod sort;
mod source;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use apcache_index::query::Query as IndexQuery;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use serde_json::{json, Value};

use self::query_dsl::{Context, Dsl};
use self::request::{SearchRequest, Wanted};
use self::source::SourceFilter;
use crate::api_error::ApiError;
use crate::app::{body_bytes, Shared};
use crate::catalog::ServedIndex;
use crate::config::ServerConfig;
use crate::search::{self, SearchHit, SearchParams};
use crate::sorted;

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

/// The query a request asks for, read in `context`.
fn query_of(
    index: &ServedIndex,
    config: &ServerConfig,
    wanted: &Wanted,
    context: Context,
) -> Result<IndexQuery, ApiError> {
    match wanted {
        Wanted::Dsl(value) => Dsl::new(index, config).query(value, context),
        Wanted::Text(q, operator) => Ok(search::parse_text(index, q, *operator, config)?.0),
        Wanted::All => Ok(IndexQuery::All),
    }
}

fn shards() -> Value {
    json!({"total": 1, "successful": 1, "skipped": 0, "failed": 0})
}

/// A hit as Elasticsearch writes it (without `sort`).
fn hit_json(
    index: &ServedIndex,
    hit: &SearchHit,
    request: &SearchRequest,
    query: &IndexQuery,
) -> Value {
    let mut json = json!({"_index": index.name, "_id": hit.id, "_score": hit.score});
    if request.source.enabled {
        json["_source"] = request.source.apply(hit.source());
    }
    // `match_all` has no words to mark: its hits carry no highlight.
    if let (Some(highlight), false) = (&request.highlight, *query == IndexQuery::All) {
        json["highlight"] = highlight.of_hit(query, &index.analyzer, hit.title(), hit.body());
    }
    json
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
        let bytes = body_bytes(body)?;
        let request = request::search(&url, &bytes, index.mapping())?;
        search::check_window(request.from, request.size, &state.config)?;
        // A sort other than the score's alone (or one to continue after) runs as a sorted
        // search; its query's scores count only if the sort reads them.
        let sorted = request
            .sort
            .clone()
            .filter(|sort| !sort.is_relevance() || request.search_after.is_some());
        let context = match &sorted {
            Some(sort) if !sort.reads_score() => Context::Filter,
            _ => Context::Scoring,
        };
        let query = query_of(index, &state.config, &request.wanted, context)?;
        let params = SearchParams {
            k: request.size,
            offset: request.from,
            count: request.exact_total,
            fetch: request.source.enabled || request.highlight.is_some(),
        };
        let (total, exact, approximate, max_score, hits) = match sorted {
            Some(sort) => {
                let after = request
                    .search_after
                    .as_deref()
                    .map(|values| sort.after(values))
                    .transpose()?;
                let outcome = sorted::run(
                    index,
                    query.clone(),
                    &sort,
                    after,
                    &params,
                    &state.config,
                    arrived,
                )
                .await?;
                let hits: Vec<Value> = outcome
                    .hits
                    .iter()
                    .map(|(hit, values)| {
                        // Scores are not computed for a sort by fields (Elasticsearch without
                        // track_scores shows null).
                        let mut json = hit_json(index, hit, &request, &query);
                        json["_score"] = Value::Null;
                        json["sort"] = json!(sort.shown(values));
                        json
                    })
                    .collect();
                (outcome.total, true, false, Value::Null, hits)
            }
            None => {
                let outcome =
                    search::run(index, query.clone(), &params, &state.config, arrived).await?;
                let max_score = json!(outcome.hits.first().and_then(|h| h.score));
                let hits = outcome
                    .hits
                    .iter()
                    .map(|hit| hit_json(index, hit, &request, &outcome.parsed))
                    .collect();
                (
                    outcome.total,
                    outcome.exact,
                    outcome.approximate,
                    max_score,
                    hits,
                )
            }
        };
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
        let bytes = body_bytes(body)?;
        let wanted = request::count(&url, &bytes)?;
        // Counting sees no score: every query reads as a filter.
        let query = query_of(index, &state.config, &wanted, Context::Filter)?;
        let count = if query == IndexQuery::All {
            index.docs
        } else {
            let params = SearchParams {
                k: 0,
                offset: 0,
                count: true,
                fetch: false,
            };
            search::run(index, query, &params, &state.config, arrived)
                .await?
                .total
        };
        Ok::<_, ApiError>(Json(json!({"count": count, "_shards": shards()})).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// `GET /{index}/_doc/{id}` (`_source`, `_source_includes`, `_source_excludes` as in a search).
pub async fn document(
    State(state): State<Shared>,
    Path((name, id)): Path<(String, String)>,
    Query(url): Query<HashMap<String, String>>,
) -> Response {
    let answer = (|| -> Result<Response, ApiError> {
        let index = index(&state, &name)?;
        let filter = SourceFilter::from_url(&url).unwrap_or_default();
        match index.document_by_id(&id)? {
            Some(stored) => {
                let mut json = json!({
                    "_index": name,
                    "_id": id,
                    "_version": 1,
                    "_seq_no": 0,
                    "_primary_term": 1,
                    "found": true,
                });
                if filter.enabled {
                    json["_source"] = filter.apply(search::source_of(&stored));
                }
                Ok(Json(json).into_response())
            }
            None => Ok((
                axum::http::StatusCode::NOT_FOUND,
                Json(json!({"_index": name, "_id": id, "found": false})),
            )
                .into_response()),
        }
    })();
    answer.unwrap_or_else(IntoResponse::into_response)
}

/// `GET /{index}/_mapping`: `{"<index>": {"mappings": {...}}}`.
pub async fn mapping(State(state): State<Shared>, Path(name): Path<String>) -> Response {
    match index(&state, &name) {
        Ok(index) => Json(json!({ name: {"mappings": index.mapping().to_json()} })).into_response(),
        Err(e) => e.into_response(),
    }
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
