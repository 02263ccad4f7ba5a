//! apcache's benchmarks: real posting lists, codec measurements and the peers they are
//! compared with, measured in the same run; query workloads and the harness that runs them.
#![deny(missing_docs)]

pub mod apcache_experiment;
pub mod codec_bench;
pub mod codec_experiment;
pub mod codec_paths;
pub mod decode_limit;
pub mod document_bench;
pub mod document_queries;
pub mod index_bench;
pub mod indexing_experiment;
pub mod latency;
pub mod line_chart;
pub mod long_disjunctions;
pub use apcache_tier::page_cache;
pub mod peer_engines;
pub mod peers;
pub mod plot;
pub mod posting_lists;
pub mod query_bench;
pub mod query_files;
pub mod query_harness;
pub mod query_sets;
pub mod result_cache_experiment;
pub mod serve_bench;
pub mod stats;
pub mod tiered_bench;
pub mod workload;
