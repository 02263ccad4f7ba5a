//! What `apcache serve` is told: where to listen, how many query threads, how long a queue,
//! how long a query may take, and the limits on what a request may ask.

use std::net::SocketAddr;
use std::time::Duration;

/// Limits on what one request may ask for; past them, a 400 (or 413 for the body).
#[derive(Debug, Clone, Copy)]
pub struct QueryLimits {
    /// `offset + k` (`from + size`) at most this (Elasticsearch's `index.max_result_window`).
    pub max_results: usize,
    /// Clauses in a query at most this: every term, each time it is written, and every word
    /// of a phrase (`Query::clauses`; Lucene's `maxClauseCount` is 1,024).
    pub max_clauses: usize,
    /// Nesting of parentheses at most this.
    pub max_depth: usize,
    /// Bytes of query text at most this.
    pub max_query_bytes: usize,
    /// Bytes of a request body at most this.
    pub max_body_bytes: usize,
}

impl Default for QueryLimits {
    fn default() -> Self {
        QueryLimits {
            max_results: 10_000,
            max_clauses: apcache_index::query::MAX_CLAUSES,
            max_depth: 32,
            max_query_bytes: 16 * 1024,
            max_body_bytes: 1 << 20,
        }
    }
}

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Query threads per index.
    pub threads: usize,
    /// Requests per index that may wait for a query thread; one more gets a 503.
    pub queue_depth: usize,
    /// A request's deadline, from its arrival; past it, a 504 and the query is cancelled.
    pub timeout: Duration,
    /// Request limits.
    pub limits: QueryLimits,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 7700)),
            threads: 2,
            queue_depth: 16,
            timeout: Duration::from_secs(10),
            limits: QueryLimits::default(),
        }
    }
}
