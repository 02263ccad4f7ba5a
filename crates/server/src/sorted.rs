//! Searches sorted by fields (Elasticsearch's `sort`, the native API's `sort`): every match is
//! visited ([`Searcher::search_sorted`]; no pruning applies to an order that is not the
//! score's), so they do not take the query threads' pool. They run on the runtime's blocking
//! threads, at most a few per index at once ([`ServedIndex`]'s slots), under the request's
//! deadline: past it, or when the client goes away, the search's cancel flag is raised and it
//! stops where it stands, and the request is answered 504.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use apcache_index::query::Query;
use apcache_index::search::{CancelScope, SearchOptions, Searcher, SortValue};
use apcache_index::IndexError;

use crate::api_error::{ApiError, ErrorKind};
use crate::catalog::ServedIndex;
use crate::config::ServerConfig;
use crate::search::{check_window, hit_of, timeout, SearchHit, SearchParams};
use crate::sort_keys::Sort;

/// A sorted search's answer.
#[derive(Debug, Clone)]
pub struct SortedOutcome {
    /// Every match, exactly (those before `search_after` included, as Elasticsearch counts).
    pub total: u64,
    /// The hits after `offset`, in sort order, each with its sort values.
    pub hits: Vec<(SearchHit, Vec<SortValue>)>,
}

/// Raises the flag when dropped: a request that is abandoned (deadline, closed connection)
/// stops its search.
struct RaiseOnDrop(Arc<AtomicBool>);

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `query` on `index` in the order of `sort`, after the hit whose values are `after`.
pub async fn run(
    index: &Arc<ServedIndex>,
    query: Query,
    sort: &Sort,
    after: Option<Vec<SortValue>>,
    params: &SearchParams,
    config: &ServerConfig,
    arrived: Instant,
) -> Result<SortedOutcome, ApiError> {
    check_window(params.offset, params.k, config)?;
    let deadline = arrived + config.timeout;
    let slots = index.sorted_slots.clone();
    let permit = match tokio::time::timeout_at(deadline.into(), slots.acquire_owned()).await {
        Ok(Ok(permit)) => permit,
        Ok(Err(_)) => {
            return Err(ApiError::new(
                ErrorKind::ShuttingDown,
                "the index is shutting down",
            ))
        }
        Err(_) => {
            index.service.note_timeout();
            return Err(timeout(config));
        }
    };
    let flag = Arc::new(AtomicBool::new(false));
    let _abandon = RaiseOnDrop(flag.clone());
    let worker = {
        let index = index.clone();
        let keys = sort.keys.clone();
        let params = *params;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let _scope = CancelScope::enter(flag);
            let noted = |e: IndexError| {
                if e.is_damage() {
                    index.service.note_damage();
                }
                ApiError::from(e)
            };
            let searcher = Searcher::new(index.service.reader());
            let k = params.offset + params.k;
            let result = searcher
                .search_sorted(&query, &keys, k, after.as_deref())
                .map_err(noted)?;
            let total = if after.is_some() {
                let count = SearchOptions {
                    k: 0,
                    count: true,
                    ..SearchOptions::default()
                };
                searcher.search(&query, &count).map_err(noted)?.total_hits
            } else {
                result.total_hits
            };
            let hits = result
                .hits
                .into_iter()
                .skip(params.offset)
                .map(|hit| {
                    Ok((
                        hit_of(&index, hit.doc, hit.score, params.fetch)?,
                        hit.values,
                    ))
                })
                .collect::<Result<Vec<_>, ApiError>>()?;
            Ok(SortedOutcome { total, hits })
        })
    };
    match tokio::time::timeout_at(deadline.into(), worker).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(failed)) => Err(ApiError::new(
            ErrorKind::Internal,
            format!("the sorted search failed: {failed}"),
        )),
        Err(_) => {
            index.service.note_timeout();
            Err(timeout(config))
        }
    }
}
