//! A software prefetch: a hint that a cache line will be written soon.
//!
//! The posting table is far larger than the caches, so a document's postings land on lines
//! that are mostly not cached: its terms' hash entries, the tails they append to and the ends
//! of their position streams. The table finds every distinct term of a document first and
//! prefetches the lines its appends will write, then appends, so that the misses of many
//! terms overlap instead of each append waiting for its own.

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
