//! Errors of the postings cache and the serving modes built on it.

use apcache_index::IndexError;

use crate::error::TierError;

/// Why the postings cache or a serving run failed.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The tier region or a storage loader could not be set up.
    #[error(transparent)]
    Tier(#[from] TierError),
    /// The index could not be read.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A term's blocks cannot be laid out in the cache's segments.
    #[error("cache layout: {0}")]
    Layout(String),
    /// The cache's configuration cannot work (checked at start, never mid-run).
    #[error("cache configuration: {0}")]
    Config(String),
    /// Reading postings from storage failed.
    #[error("reading postings of {file}: {source}")]
    Load {
        /// The postings file.
        file: String,
        /// The error.
        source: std::io::Error,
    },
}
