//! The four serving configurations the design is measured with, over one shared index:
//!
//! | mode | where queries read postings | the worker |
//! |---|---|---|
//! | `base` | mmap; the OS page cache is the only cache | none |
//! | `base-prefetch` | mmap | reads the postings of queued queries through a small buffer so they land in the page cache, at most `lookahead` queries ahead |
//! | `hybrid` | the tier when the term is cached, else mmap | copies each term a query touched into the tier |
//! | `hybrid-prefetch` | the tier only | copies the postings of queued queries into the tier, as far ahead as the adaptive rule allows |
//!
//! [`LiveService`] serves requests as they arrive (the server's path; [`run_batch`] feeds it
//! a batch, as `apcache search --topics` and the Python bindings do); [`Server`] runs a
//! queue of queries known up front (the benchmarks' path).
//!
//! In the benchmarks, queries are queued up front (a closed loop: every query waits in the queue until a query
//! thread takes it), query threads take them in order, and the worker walks the same queue
//! ahead of them. A query's latency runs from when a thread takes it to its answer, waiting
//! for its terms included.

mod batch;
mod cached_evaluation;
mod live;
mod mode;
mod pipeline;
mod serve;
mod sources;
mod staging;

pub use batch::run_batch;
pub use cached_evaluation::evaluate_and_cache;
pub use live::{LiveAnswer, LiveConfig, LiveCounters, LiveError, LiveRequest, LiveService, Ticket};
pub use mode::ServingMode;
pub use serve::{
    postings_paths, serve, LookaheadSample, QueryOutcome, ServeConfig, ServeReport, Server,
    MAX_PREPARED_AHEAD,
};
