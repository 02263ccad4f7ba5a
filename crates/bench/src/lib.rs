//! apcache's benchmarks: real posting lists, codec measurements and the peers they are
//! compared with, measured in the same run; query workloads and the harness that runs them.
#![deny(missing_docs)]

pub mod codec_bench;
pub mod codec_experiment;
pub mod index_bench;
pub mod page_cache;
pub mod peers;
pub mod plot;
pub mod posting_lists;
pub mod query_bench;
pub mod query_files;
pub mod query_harness;
pub mod query_sets;
pub mod stats;
pub mod workload;
