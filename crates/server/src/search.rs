//! One search as both APIs run it: the query parsed and checked against the limits on the
//! async side (cheap), admitted into the index's live service, evaluated on a query thread,
//! its hits' stored fields read on that same thread, and the answer awaited with the
//! request's deadline. A deadline passed or a client gone drops the ticket, which cancels the
//! query where it stands.

use std::sync::Arc;
use std::time::{Duration, Instant};

use apcache_index::query::{parse_query_with_notes, DefaultOperator, Query};
use apcache_index::search::SearchOptions;
use apcache_tier::serving::{LiveError, LiveRequest};
use apcache_tier::CacheError;

use crate::api_error::{ApiError, ErrorKind};
use crate::catalog::ServedIndex;
use crate::config::ServerConfig;

/// What a search asks for, whichever API it came through.
#[derive(Debug, Clone)]
pub struct SearchParams {
    /// The query text (Lucene syntax).
    pub q: String,
    /// Hits to return.
    pub k: usize,
    /// Hits to skip.
    pub offset: usize,
    /// Count every match exactly.
    pub count: bool,
    /// The operator between bare words.
    pub default_operator: DefaultOperator,
    /// Read the hits' stored fields.
    pub fetch: bool,
}

/// A hit with its stored fields.
#[derive(Debug, Clone)]
pub struct SearchHit {
    /// The document's number (its place in input order), which is its external id.
    pub doc: u32,
    /// BM25 score.
    pub score: f32,
    /// Stored title (empty when not fetched).
    pub title: String,
    /// Stored body (empty when not fetched).
    pub body: String,
}

impl SearchHit {
    /// The external id as the APIs spell it.
    pub fn id(&self) -> String {
        self.doc.to_string()
    }
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
    /// What the analyzer changed or dropped in the query's words.
    pub notes: Vec<String>,
}

/// The deepest nesting of `query`'s boolean groups.
fn depth(query: &Query) -> usize {
    match query {
        Query::Term(_) | Query::Phrase(_) | Query::Range(_) | Query::All => 0,
        Query::Filter(inner) => 1 + depth(inner),
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

/// Parses `params.q` for `index` and checks it against the limits; also returns what the
/// analyzer changed or dropped.
pub fn parse(
    index: &ServedIndex,
    params: &SearchParams,
    config: &ServerConfig,
) -> Result<(Query, Vec<String>), ApiError> {
    let limits = &config.limits;
    if params.q.len() > limits.max_query_bytes {
        return Err(ApiError::new(
            ErrorKind::QueryTooLarge,
            format!(
                "the query is {} bytes; at most {} are accepted",
                params.q.len(),
                limits.max_query_bytes
            ),
        ));
    }
    let (query, notes) =
        parse_query_with_notes(&params.q, &index.analyzer, params.default_operator).map_err(
            |e| ApiError {
                kind: ErrorKind::QueryParse,
                reason: e.to_string(),
                position: e.position(),
            },
        )?;
    query
        .check_clauses(limits.max_clauses)
        .map_err(|e| ApiError::new(ErrorKind::QueryTooLarge, e.to_string()))?;
    let nesting = depth(&query).max(text_nesting(&params.q));
    if nesting > limits.max_depth {
        return Err(ApiError::new(
            ErrorKind::QueryTooLarge,
            format!(
                "the query nests {nesting} levels deep; at most {} are accepted",
                limits.max_depth
            ),
        ));
    }
    Ok((query, notes.iter().map(ToString::to_string).collect()))
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

/// Runs a search on `index`; `arrived` is when the request came in (its deadline counts from
/// there).
pub async fn run(
    index: &Arc<ServedIndex>,
    params: &SearchParams,
    config: &ServerConfig,
    arrived: Instant,
) -> Result<SearchOutcome, ApiError> {
    check_window(params.offset, params.k, config)?;
    let (query, notes) = parse(index, params, config)?;
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
    // The reply runs on the query thread: the stored fields are read there too, off the
    // async runtime.
    let ticket = index
        .service
        .submit(request, move |outcome| {
            let answer = outcome.map_err(live_error).and_then(|answer| {
                let result = answer.result;
                let mut hits = Vec::with_capacity(result.hits.len().saturating_sub(offset));
                for hit in result.hits.iter().skip(offset) {
                    let (title, body) = if fetch {
                        match reader_side.document(hit.doc) {
                            Ok(Some(stored)) => (stored.title, stored.body),
                            Ok(None) => (String::new(), String::new()),
                            Err(e) => return Err(ApiError::from(e)),
                        }
                    } else {
                        (String::new(), String::new())
                    };
                    hits.push(SearchHit {
                        doc: hit.doc,
                        score: hit.score,
                        title,
                        body,
                    });
                }
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
        notes,
    })
}

fn timeout(config: &ServerConfig) -> ApiError {
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
