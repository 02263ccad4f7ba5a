//! apcache's HTTP service: `apcache serve`.
//!
//! - [`ServerConfig`]: the address, the query threads, the queue, the deadline and the limits.
//! - [`Catalog`]: the served indexes by name, each an assembled APCache stack
//!   ([`apcache_tier::stack::ServingStack`]) behind a [`LiveService`](apcache_tier::serving::LiveService):
//!   a bounded queue whose admitted requests go to the prefetcher at once, and a fixed pool of
//!   query threads sharing one postings cache. Queries never run on the async runtime.
//! - [`router`]: the routes: the native API under `/indexes` ([`native`]), the
//!   Elasticsearch-compatible subset ([`elastic`]), `/metrics` ([`metrics`]), `/health`, and
//!   the web page at `/ui` ([`ui`]).
//! - Searches sorted by fields run off the query threads, on blocking threads under the
//!   same deadline (`sorted`).
//! - [`serve`]: binds, serves, and shuts down gracefully on SIGINT or SIGTERM (stop
//!   accepting, finish what is in flight, stop the query threads).
//!
//! Every failure is an answer with a status and a JSON body ([`ApiError`]), never a dropped
//! connection: a malformed query is a 400 with the parser's message and position, a full queue
//! a 503 with `Retry-After`, a deadline a 504 (the query is cancelled, not left running), a
//! panic in a query thread a 500 (counted; the thread pool stays whole). See docs/api.md.
#![deny(missing_docs)]

mod api_error;
mod app;
mod catalog;
mod config;
pub mod elastic;
mod highlight_request;
pub mod metrics;
pub mod native;
mod search;
pub mod sort_keys;
mod sorted;
pub mod ui;

pub use api_error::{ApiError, ErrorKind};
pub use app::{router, serve, AppState};
pub use catalog::{Catalog, ServedIndex};
pub use config::{QueryLimits, ServerConfig};
pub use search::{SearchHit, SearchOutcome, SearchParams};
