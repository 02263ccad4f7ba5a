//! APCache: serve a storage-resident index through an adaptive postings cache in a second
//! memory tier, with a fixed amount of DRAM whatever the index size.
//!
//! - [`region`]: the tier itself, a region of bytes (a mapped file on a DAX, CXL or tmpfs
//!   mount, a NUMA node's memory, or anonymous DRAM for comparison).
//! - [`loader`]: how postings come from storage (mmap copy, buffered `pread`, `O_DIRECT`
//!   through io_uring), optionally behind an emulated slow device.
//! - [`cgroup`]: the DRAM budget, enforced with a memory cgroup.
//! - [`postings_cache`]: the segmented postings cache in the tier ([`segment_chains`],
//!   [`term_layout`], [`positions_layout`], [`eviction`], [`ahead_window`], [`pinned_term`]).
//! - [`serving`]: the four serving configurations (`base`, `base-prefetch`, `hybrid`,
//!   `hybrid-prefetch`): query threads, the prefetch worker, and their measurements.
//! - [`result_cache`]: the parts of a query result cache: a fixed-size byte heap with its
//!   allocators, and replacement policies.
#![deny(missing_docs)]

pub mod ahead_window;
pub mod cache_error;
pub mod cgroup;
pub mod clock;
pub mod error;
pub mod eviction;
pub mod keyed_order;
pub mod loader;
pub mod page_cache;
pub mod pinned_term;
pub mod positions_layout;
pub mod postings_cache;
pub mod region;
pub mod result_cache;
pub mod segment_chains;
pub mod serving;
pub mod stack;
pub mod term_layout;
pub mod term_lru;

pub use cache_error::CacheError;
pub use postings_cache::{CacheOptions, PostingsCache};
pub use serving::{serve, ServeConfig, ServeReport, ServingMode};
