//! A `_search` or `_count` request as the URL and the body ask for it (the body wins where
//! both say), checked key by key: a key apcache does not implement (`aggs`, `post_filter`,
//! `collapse`, ...) is a 400 that names it, never silently ignored.

use std::collections::HashMap;

use apcache_index::query::DefaultOperator;
use axum::body::Bytes;
use serde_json::{Map, Value};

use super::sort;
use super::source::SourceFilter;
use crate::api_error::ApiError;
use crate::app::json_body;
use crate::highlight_request::HighlightRequest;
use crate::native::{bool_param, count_param, default_operator};
use crate::sort_keys::Sort;

/// What a request's query is.
pub enum Wanted {
    /// A query of the DSL, not yet read (its context depends on the sort).
    Dsl(Value),
    /// `q=`: query text and its default operator.
    Text(String, DefaultOperator),
    /// No query: every document.
    All,
}

/// A search as asked.
pub struct SearchRequest {
    /// The query.
    pub wanted: Wanted,
    /// Hits to skip.
    pub from: usize,
    /// Hits to return.
    pub size: usize,
    /// Count every match exactly.
    pub exact_total: bool,
    /// What of `_source` the hits carry.
    pub source: SourceFilter,
    /// Highlighting, if asked.
    pub highlight: Option<HighlightRequest>,
    /// The sort, if one is given.
    pub sort: Option<Sort>,
    /// The values to continue after (`search_after`).
    pub search_after: Option<Vec<Value>>,
}

/// The keys a search body may hold.
const SEARCH_KEYS: &str =
    "query, from, size, sort, search_after, _source, highlight, track_total_hits and track_scores";

/// A whole number of at least 0 from a body.
fn count_value(value: &Value, name: &str) -> Result<usize, ApiError> {
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            ApiError::illegal(format!(
                "[{name}] must be a whole number of at least 0, not {value}"
            ))
        })
}

/// The body as an object (empty when there is none).
fn body_object(bytes: &Bytes) -> Result<Map<String, Value>, ApiError> {
    match json_body::<Value>(bytes)? {
        None => Ok(Map::new()),
        Some(Value::Object(object)) => Ok(object),
        Some(other) => Err(ApiError::parsing(format!(
            "the request body must be a JSON object, not {other}"
        ))),
    }
}

/// The URL's `q` (with `default_operator`), if given.
fn url_query(url: &HashMap<String, String>) -> Result<Option<Wanted>, ApiError> {
    let Some(q) = url.get("q") else {
        return Ok(None);
    };
    let operator = url
        .get("default_operator")
        .map_or(Ok(DefaultOperator::Or), |v| default_operator(v))?;
    Ok(Some(Wanted::Text(q.clone(), operator)))
}

/// Reads a `_search` request; `mapping` resolves its sort.
pub fn search(
    url: &HashMap<String, String>,
    bytes: &Bytes,
    mapping: &apcache_index::schema::Mapping,
) -> Result<SearchRequest, ApiError> {
    let body = body_object(bytes)?;
    let mut request = SearchRequest {
        wanted: Wanted::All,
        from: url.get("from").map_or(Ok(0), |v| count_param("from", v))?,
        size: url.get("size").map_or(Ok(10), |v| count_param("size", v))?,
        exact_total: match url.get("track_total_hits") {
            Some(v) if v.parse::<u64>().is_ok() => false,
            Some(v) => bool_param("track_total_hits", v)?,
            None => false,
        },
        source: SourceFilter::from_url(url).unwrap_or_default(),
        highlight: None,
        sort: url
            .get("sort")
            .map(|text| Sort::parse_native(text, mapping))
            .transpose()?,
        search_after: None,
    };
    if let Some(wanted) = url_query(url)? {
        request.wanted = wanted;
    }
    for (key, value) in body {
        match key.as_str() {
            "query" => request.wanted = Wanted::Dsl(value),
            "from" => request.from = count_value(&value, "from")?,
            "size" => request.size = count_value(&value, "size")?,
            "track_total_hits" => {
                request.exact_total = match value {
                    Value::Bool(b) => b,
                    Value::Number(_) => false,
                    _ => {
                        return Err(ApiError::illegal(
                            "track_total_hits must be true, false or a number",
                        ))
                    }
                }
            }
            "_source" => request.source = SourceFilter::parse(&value)?,
            // `null` is no highlight, as Elasticsearch reads it.
            "highlight" if value.is_null() => {}
            "highlight" => request.highlight = Some(HighlightRequest::parse(&value)?),
            "sort" => request.sort = Some(sort::parse(&value, mapping)?),
            "search_after" => match value {
                Value::Array(values) => request.search_after = Some(values),
                other => {
                    return Err(ApiError::parsing(format!(
                        "[search_after] is a list of the previous hit's sort values, not {other}"
                    )))
                }
            },
            "track_scores" if value == Value::Bool(false) => {}
            "track_scores" => {
                return Err(ApiError::parsing(
                    "[track_scores] true is not supported: a search sorted by fields does not \
                     compute scores (sort by _score as well to see them in the sort values)",
                ))
            }
            other => {
                return Err(ApiError::parsing(format!(
                "unknown key [{other}] in the search body: apcache's _search takes {SEARCH_KEYS}"
            )))
            }
        }
    }
    if request.search_after.is_some() && request.sort.is_none() {
        return Err(ApiError::illegal(
            "search_after needs a sort: give the sort of the search it continues",
        ));
    }
    if request.search_after.is_some() && request.from > 0 {
        // As in Elasticsearch: the page starts right after the given hit.
        return Err(ApiError::illegal(
            "[from] parameter must be set to 0 when [search_after] is used",
        ));
    }
    Ok(request)
}

/// Reads a `_count` request: its query.
pub fn count(url: &HashMap<String, String>, bytes: &Bytes) -> Result<Wanted, ApiError> {
    let mut wanted = url_query(url)?.unwrap_or(Wanted::All);
    for (key, value) in body_object(bytes)? {
        match key.as_str() {
            "query" => wanted = Wanted::Dsl(value),
            other => {
                return Err(ApiError::parsing(format!(
                    "unknown key [{other}] in the count body: _count takes query"
                )))
            }
        }
    }
    Ok(wanted)
}
