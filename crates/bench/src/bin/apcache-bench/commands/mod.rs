//! The subcommands of `apcache-bench`, one file per group.

pub mod bench;
pub mod documents;
pub mod experiment;
pub mod serve;
pub mod workload;
