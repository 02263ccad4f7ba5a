//! A software prefetch: a hint that a cache line will be read or written soon.
//!
//! Where a step needs many lines that are mostly not cached and that do not depend on each
//! other, asking for all of them before touching any lets their misses overlap instead of each
//! access waiting for its own. The indexer's posting table is far larger than the caches: it
//! finds every distinct term of a document first and prefetches the lines its appends will
//! write (the terms' hash entries, the tails they append to, the ends of their position
//! streams), then appends. A query's term lookups walk a dictionary and a metadata table far
//! larger than the caches too: the walks of its terms advance together, each prefetching its
//! next node while the others step.

/// Hints that the line holding `at` will be accessed soon. Never faults, whatever `at` is.
#[inline(always)]
pub(crate) fn prefetch_line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE, which `_mm_prefetch` needs, is part of x86-64; a prefetch reads nothing
        // and never faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
