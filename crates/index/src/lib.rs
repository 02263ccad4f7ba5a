//! apcache's index: analysis, ingest, indexing, the on-disk format and its readers.
#![deny(missing_docs)]

pub mod analyzer;
pub mod check;
pub mod columns;
mod error;
pub mod fault;
pub mod format;
pub mod highlight;
pub mod index_dir;
pub mod indexer;
pub mod ingest;
pub mod manifest;
pub mod mapping;
pub mod memory;
pub mod merge;
pub mod plain_query;
mod prefetch;
pub mod query;
pub mod schema;
pub mod search;
pub mod segment;
pub mod writer_lock;

pub use error::IndexError;
pub use manifest::Manifest;
