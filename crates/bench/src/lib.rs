//! apcache's benchmarks: real posting lists, codec measurements and the peers they are
//! compared with, measured in the same run.
#![deny(missing_docs)]

pub mod codec_bench;
pub mod index_bench;
pub mod peers;
pub mod posting_lists;
pub mod query_bench;
pub mod query_sets;
pub mod stats;
