//! Which terms of a segment have had their checksums verified in this process.
//!
//! A term's metadata and postings are verified the first time a query reads them (see
//! [`crate::format::TermChecksums`]); the files are immutable, so once is enough. One bit per
//! term and kind of check, set with a relaxed atomic OR: two threads may both verify a term
//! before either sets its bit, which costs only the repeated check. The bits are allocated
//! zeroed and untouched pages are never made resident, so the memory a process uses grows
//! with the terms its queries touch, not with the vocabulary.

use std::sync::atomic::{AtomicU64, Ordering};

/// The kind of check a bit records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verified {
    /// The term-info record and skip entries.
    Meta,
    /// The postings bytes.
    Postings,
    /// The positions region.
    Positions,
}

/// Verified bits for every term of a segment.
pub(crate) struct VerifiedTerms {
    /// Four bits per term: bit `4t` for its metadata, `4t + 1` for its postings, `4t + 2`
    /// for its positions.
    bits: Box<[AtomicU64]>,
}

impl VerifiedTerms {
    /// Bits for `terms` terms, all clear.
    pub(crate) fn new(terms: u64) -> VerifiedTerms {
        let words = usize::try_from(terms.div_ceil(16)).unwrap_or(0);
        // SAFETY: all-zero bytes are a valid `AtomicU64` (a clear word). A zeroed allocation
        // also leaves its pages unmapped until a bit in them is set.
        let bits = unsafe { Box::<[AtomicU64]>::new_zeroed_slice(words).assume_init() };
        VerifiedTerms { bits }
    }

    fn bit(ordinal: u64, kind: Verified) -> Option<(usize, u64)> {
        let kind = match kind {
            Verified::Meta => 0,
            Verified::Postings => 1,
            Verified::Positions => 2,
        };
        let bit = ordinal.checked_mul(4)? + kind;
        Some((usize::try_from(bit / 64).ok()?, 1 << (bit % 64)))
    }

    /// Whether `kind` of term `ordinal` was verified.
    #[inline]
    pub(crate) fn is_set(&self, ordinal: u64, kind: Verified) -> bool {
        Self::bit(ordinal, kind)
            .and_then(|(word, mask)| Some(self.bits.get(word)?.load(Ordering::Relaxed) & mask != 0))
            .unwrap_or(false)
    }

    /// Asks for the line holding term `ordinal`'s bits (a prefetch).
    pub(crate) fn prefetch(&self, ordinal: u64) {
        if let Some(word) = Self::bit(ordinal, Verified::Meta).and_then(|(w, _)| self.bits.get(w)) {
            crate::prefetch::prefetch_line(word.as_ptr().cast());
        }
    }

    /// Records that `kind` of term `ordinal` was verified.
    pub(crate) fn set(&self, ordinal: u64, kind: Verified) {
        if let Some((word, mask)) = Self::bit(ordinal, kind) {
            if let Some(word) = self.bits.get(word) {
                word.fetch_or(mask, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_independent_per_term_and_kind() {
        let v = VerifiedTerms::new(100);
        let set = [
            (0, Verified::Meta),
            (31, Verified::Postings),
            (32, Verified::Meta),
            (99, Verified::Postings),
            (99, Verified::Positions),
            (15, Verified::Positions),
        ];
        for &(ordinal, kind) in &set {
            v.set(ordinal, kind);
        }
        for ordinal in 0..100 {
            for kind in [Verified::Meta, Verified::Postings, Verified::Positions] {
                assert_eq!(
                    v.is_set(ordinal, kind),
                    set.contains(&(ordinal, kind)),
                    "{ordinal} {kind:?}"
                );
            }
        }
        // Past the end: never set, never panics.
        v.set(1000, Verified::Meta);
        assert!(!v.is_set(1000, Verified::Meta));
        assert!(!v.is_set(u64::MAX, Verified::Postings));
    }
}
