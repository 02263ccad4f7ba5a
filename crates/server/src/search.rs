//! One search as both APIs run it: the query parsed and checked against the limits on the
//! async side (cheap), admitted into the index's live service, evaluated on a query thread,
//! its hits' ids and stored documents read on that same thread, and the answer awaited with
//! the request's deadline. A deadline passed or a client gone drops the ticket, which cancels
//! the query where it stands. Searches sorted by fields run elsewhere (`sorted.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use apcache_index::query::{parse_query_in_fields, DefaultFields, DefaultOperator, Query};
use apcache_index::search::SearchOptions;
use apcache_index::segment::StoredDocument;
use apcache_tier::serving::{LiveError, LiveRequest};
use apcache_tier::CacheError;

use crate::api_error::{ApiError, ErrorKind};
use crate::catalog::ServedIndex;
use crate::config::ServerConfig;

/// What a search asks for, whichever API it came through (the query aside).
#[derive(Debug, Clone, Copy)]
pub struct SearchParams {
    /// Hits to return.
    pub k: usize,
    /// Hits to skip.
    pub offset: usize,
    /// Count every match exactly.
    pub count: bool,
    /// Read the hits' stored documents.
    pub fetch: bool,
}

/// A hit with its id and stored document.
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// The document's number in the index.
    pub doc: u32,
    /// Its `_id`: its own, or its number for an index whose documents have none.
    pub id: String,
    /// BM25 score; `None` when a sort by fields did not compute it.
    pub score: Option<f32>,
    /// The stored document, when fetched.
    pub stored: Option<StoredDocument>,
}

impl SearchHit {
    /// The stored title (empty when not fetched).
    pub fn title(&self) -> &str {
        self.stored.as_ref().map_or("", |s| s.title.as_str())
    }

    /// The stored body (empty when not fetched).
    pub fn body(&self) -> &str {
        self.stored.as_ref().map_or("", |s| s.body.as_str())
    }

    /// `_source`: the JSON document as given, without the `_id` it may carry (Elasticsearch
    /// keeps the id beside the source, never in it); `null` when not fetched.
    pub fn source(&self) -> serde_json::Value {
        self.stored
            .as_ref()
            .map_or(serde_json::Value::Null, source_of)
    }
}

/// `_source` of a stored document, without a top-level `_id`.
pub fn source_of(stored: &StoredDocument) -> serde_json::Value {
    let mut source = stored.source_json();
    if let serde_json::Value::Object(object) = &mut source {
        // Keeps the other fields in the document's order.
        object.shift_remove("_id");
    }
    source
}

/// Reads the id and, if `fetch`, the stored document of global DID `doc` (on the thread that
/// calls it: a query thread or a blocking one).
pub fn hit_of(
    index: &ServedIndex,
    doc: u32,
    score: Option<f32>,
    fetch: bool,
) -> Result<SearchHit, ApiError> {
    let id = index.service.reader().document_id(doc).inspect_err(|e| {
        if e.is_damage() {
            index.service.note_damage();
        }
    })?;
    let stored = if fetch {
        index.document(doc).map_err(ApiError::from)?
    } else {
        None
    };
    Ok(SearchHit {
        doc,
        id,
        score,
        stored,
    })
}

/// A search's answer.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    /// The query as parsed, in canonical form.
    pub query: String,
    /// The query as parsed (what highlighting marks).
    pub parsed: Query,
    /// Matches: exact, or a lower bound when pruning skipped documents.
    pub total: u64,
    /// Whether `total` is exact.
    pub exact: bool,
    /// Whether the answer is approximate: the result cache's stored answer for a subset of
    /// the query's terms (`partial2` matching), not the query's own evaluation.
    pub approximate: bool,
    /// From arrival to answer.
    pub took: Duration,
    /// The hits after `offset`, best first.
    pub hits: Vec<SearchHit>,
}

/// The deepest nesting of `query`'s boolean groups.
pub fn depth(query: &Query) -> usize {
    match query {
        Query::Term(_) | Query::Phrase(_) | Query::Range(_) | Query::All => 0,
        Query::Filter(inner) | Query::Boost(inner, _) => 1 + depth(inner),
        Query::DisMax(d) => 1 + d.queries.iter().map(depth).max().unwrap_or(0),
        Query::Bool(b) => {
            1 + b
                .must
                .iter()
                .chain(&b.should)
                .chain(&b.must_not)
                .map(depth)
                .max()
                .unwrap_or(0)
        }
    }
}

/// The deepest nesting of parentheses in query text (escaped ones and quoted text aside).
fn text_nesting(text: &str) -> usize {
    let (mut depth, mut deepest, mut quoted, mut escaped) = (0usize, 0usize, false, false);
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => quoted = !quoted,
            '(' if !quoted => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' if !quoted => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Parses query text for `index` (with field clauses on its mapping) and checks it against
/// the limits; also returns what the analyzer changed or dropped.
pub fn parse_text(
    index: &ServedIndex,
    text: &str,
    default_operator: DefaultOperator,
    config: &ServerConfig,
) -> Result<(Query, Vec<String>), ApiError> {
    parse_text_in(
        index,
        text,
        default_operator,
        config,
        &DefaultFields::default(),
    )
}

/// [`parse_text`], words without a field searched in `fields`.
pub fn parse_text_in(
    index: &ServedIndex,
    text: &str,
    default_operator: DefaultOperator,
    config: &ServerConfig,
    fields: &DefaultFields,
) -> Result<(Query, Vec<String>), ApiError> {
    let limits = &config.limits;
    if text.len() > limits.max_query_bytes {
        return Err(ApiError::new(
            ErrorKind::QueryTooLarge,
            format!(
                "the query is {} bytes; at most {} are accepted",
                text.len(),
                limits.max_query_bytes
            ),
        ));
    }
    let (query, notes) = parse_query_in_fields(
        text,
        &index.analyzer,
        default_operator,
        index.mapping(),
        fields,
    )
    .map_err(|e| ApiError {
        kind: ErrorKind::QueryParse,
        reason: e.to_string(),
        position: e.position(),
    })?;
    check_query(&query, text_nesting(text), config)?;
    Ok((query, notes.iter().map(ToString::to_string).collect()))
}

/// Checks a query, however it was written, against the clause and nesting limits;
/// `written_nesting` is the nesting of the text it came from, if deeper than the tree's.
pub fn check_query(
    query: &Query,
    written_nesting: usize,
    config: &ServerConfig,
) -> Result<(), ApiError> {
    let limits = &config.limits;
    query
        .check_clauses(limits.max_clauses)
        .map_err(|e| ApiError::new(ErrorKind::QueryTooLarge, e.to_string()))?;
    let nesting = depth(query).max(written_nesting);
    if nesting > limits.max_depth {
        return Err(ApiError::new(
            ErrorKind::QueryTooLarge,
            format!(
                "the query nests {nesting} levels deep; at most {} are accepted",
                limits.max_depth
            ),
        ));
    }
    Ok(())
}

/// Checks `offset + k` against the result window.
pub fn check_window(offset: usize, k: usize, config: &ServerConfig) -> Result<(), ApiError> {
    let max = config.limits.max_results;
    match offset.checked_add(k) {
        Some(end) if end <= max => Ok(()),
        _ => Err(ApiError::illegal(format!(
            "Result window is too large, from + size must be less than or equal to: [{max}] but was [{}]",
            offset.saturating_add(k)
        ))),
    }
}

/// Runs `query` (parsed and checked) on `index`; `arrived` is when the request came in (its
/// deadline counts from there).
pub async fn run(
    index: &Arc<ServedIndex>,
    query: Query,
    params: &SearchParams,
    config: &ServerConfig,
    arrived: Instant,
) -> Result<SearchOutcome, ApiError> {
    check_window(params.offset, params.k, config)?;
    let canonical = query.to_string();
    let parsed = query.clone();
    let deadline = arrived + config.timeout;
    let request = LiveRequest {
        query,
        options: SearchOptions {
            k: params.offset + params.k,
            count: params.count,
            ..SearchOptions::default()
        },
        deadline: Some(deadline),
        collection: None,
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let reader_side = index.clone();
    let (offset, fetch) = (params.offset, params.fetch);
    // The reply runs on the query thread: the ids and stored documents are read there too,
    // off the async runtime.
    let ticket = index
        .service
        .submit(request, move |outcome| {
            let answer = outcome.map_err(live_error).and_then(|answer| {
                let result = answer.result;
                let hits = result
                    .hits
                    .iter()
                    .skip(offset)
                    .map(|hit| hit_of(&reader_side, hit.doc, Some(hit.score), fetch))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((
                    result.total_hits,
                    result.total_hits_exact,
                    answer.approximate,
                    hits,
                ))
            });
            let _ = tx.send(answer);
        })
        .map_err(live_error)?;
    let answer = match tokio::time::timeout_at(deadline.into(), rx).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_)) => {
            return Err(ApiError::new(
                ErrorKind::Internal,
                "the query thread dropped the request",
            ))
        }
        Err(_) => {
            ticket.cancel();
            index.service.note_timeout();
            return Err(timeout(config));
        }
    };
    drop(ticket);
    let (total, exact, approximate, hits) = answer?;
    Ok(SearchOutcome {
        query: canonical,
        parsed,
        total,
        exact,
        approximate,
        took: arrived.elapsed(),
        hits,
    })
}

/// The 504 of a query that ran past its deadline.
pub fn timeout(config: &ServerConfig) -> ApiError {
    ApiError::new(
        ErrorKind::Timeout,
        format!(
            "the query ran past the {} ms deadline and was cancelled",
            config.timeout.as_millis()
        ),
    )
}

/// The API error for a live service's refusal or failure.
fn live_error(e: LiveError) -> ApiError {
    let kind = match &e {
        LiveError::Overloaded(_) => ErrorKind::Overloaded,
        LiveError::TimedOut => ErrorKind::Timeout,
        LiveError::ShuttingDown => ErrorKind::ShuttingDown,
        LiveError::Index(e) | LiveError::Cache(CacheError::Index(e)) => ErrorKind::of_index(e),
        LiveError::Cache(CacheError::Load { .. }) => ErrorKind::Io,
        LiveError::Cancelled | LiveError::Panicked(_) | LiveError::Cache(_) => ErrorKind::Internal,
    };
    ApiError::new(kind, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use apcache_index::query::parse_query;

    #[test]
    fn depth_counts_groups() {
        let analyzer = apcache_index::analyzer::Analyzer::default();
        let q = parse_query("a (b (c d))", &analyzer, DefaultOperator::Or).unwrap();
        assert!(depth(&q) >= 2);
        assert_eq!(depth(&Query::Term("a".into())), 0);
        assert_eq!(text_nesting("((a)) (b)"), 2);
        assert_eq!(text_nesting("\\( \"(\" a"), 0);
    }
}
