//! The parts of a query result cache: a fixed-size byte heap and its allocators, and the
//! replacement policies that choose what it keeps.
//!
//! # Why
//!
//! A result cache sits in front of query evaluation: a query seen before is answered from its
//! stored result (the top-k hits, already serialised) without touching the postings. Like the
//! postings cache, it must not make DRAM use depend on the workload, so its entries live in
//! one heap of a configured size, placed in DRAM or in the memory tier, that never grows. A
//! fixed heap holding entries of many sizes has two problems a slab of equal slots does not:
//! where to put an entry (an [`Allocator`], which can fail for fragmentation even when
//! enough bytes are free) and what to throw out to make room (a [`Policy`]). Both are
//! selectable by name ([`AllocatorKind`], [`PolicyKind`]) so the experiments can compare
//! them on the same workload.
//!
//! # Types
//!
//! - [`Allocator`]: offsets into a region of bytes; it manages offsets only, never touches
//!   the bytes, and keeps its metadata outside the region, so the region can be any memory
//!   (a `Vec<u8>`, a slice of a tier region). Two implementations: [`FirstFit`], the
//!   baseline (an address-ordered free list), and [`Tlsf`], two-level segregated fit
//!   (constant-time search with bitmaps, immediate coalescing). Both report fragmentation
//!   ([`Allocator::fragmentation`], [`Allocator::unusable_bytes`]).
//! - [`ByteHeap`]: a region of memory and an allocator over it: store bytes, read them back,
//!   free them.
//! - [`Policy`]: which entries stay, by key and size in bytes against a capacity in bytes:
//!   [`Random`] (the baseline), [`Lru`], [`S3Fifo`] and [`Dlirs`]. The protocol a cache
//!   follows with a policy is on the trait.
//!
//! - [`ResultCache`]: the cache on top of them, in shards by key hash. [`ResultKey`] packs a
//!   query (its canonical form unless matching is exact), its options and the index
//!   generation; an entry stores its key in full, so a hash collision is a miss and an entry
//!   of another generation is never served. [`Matching`] says how requests match entries:
//!   exactly, up to the order of commuting clauses, or partially (a single term answered
//!   from the section a disjunction's entry holds for it, itself that term's evaluation).
//!
//! # Testing
//!
//! Every allocator and policy is run against a simple reference model with proptest
//! (`conformance.rs` for what all of them share, each file for what is its own): allocations
//! never overlap and stay inside the region, the free bytes add up, a freed-out heap is one
//! block again, first fit fails only when no free block is large enough and TLSF only as its
//! guarantee allows; a policy never holds more than its capacity once the cache has evicted
//! as told, evicts only resident keys, LRU evicts exactly the least recently used key, S3-FIFO
//! matches a slow reference, and DLIRS keeps its stack and queue consistent.

pub mod allocator;
mod cache;
pub mod dlirs;
mod entry;
pub mod first_fit;
pub mod heap;
mod heap_memory;
pub mod lru;
pub mod policy;
pub mod random;
pub mod s3fifo;
mod slots;
pub mod tlsf;

#[cfg(test)]
mod conformance;

pub use allocator::{reserved_len, Allocator, AllocatorKind, ALIGN};
pub use cache::{Matching, ResultCache, ResultCacheConfig, ResultCacheCounters};
pub use dlirs::Dlirs;
pub use entry::{CachedResult, ResultKey};
pub use first_fit::FirstFit;
pub use heap::ByteHeap;
pub use heap_memory::HeapMemory;
pub use lru::Lru;
pub use policy::{Key, Policy, PolicyKind};
pub use random::Random;
pub use s3fifo::S3Fifo;
pub use tlsf::Tlsf;
