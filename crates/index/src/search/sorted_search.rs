//! Finding a DID's place in an increasing array by counting, not bisecting.
//!
//! A cursor searching a dense block for a target a few dozen DIDs ahead pays a binary search of
//! eight dependent loads and compares (about fifty cycles). Counting the DIDs below the target
//! with vector compares has no chain between the compares: with AVX2, thirty-two DIDs cost a
//! few cycles, and the count stops at the first group that reaches the target. Used past the
//! cursor's first probe, where the target is far enough that a scan of one vector missed.

use apcache_codec::Isa;

/// DIDs compared per step of the scan (four AVX2 vectors).
const GROUP: usize = 32;

/// The number of DIDs of `docs` (increasing) below `target`.
#[inline]
pub fn count_below(docs: &[u32], target: u32, isa: Isa) -> usize {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present.
        return unsafe { avx2::count_below(docs, target) };
    }
    let _ = isa;
    docs.partition_point(|&d| d < target)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::GROUP;

    /// [`super::count_below`] with AVX2.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn count_below(docs: &[u32], target: u32) -> usize {
        if target == 0 {
            return 0;
        }
        // x < target  <=>  min(x, target - 1) == x, unsigned.
        let limit = _mm256_set1_epi32((target - 1) as i32);
        let below = |at: usize| {
            // SAFETY: callers pass at + 8 <= docs.len().
            let v = _mm256_loadu_si256(docs.as_ptr().add(at).cast());
            _mm256_cmpeq_epi32(_mm256_min_epu32(v, limit), v)
        };
        let mut at = 0;
        let mut count = 0usize;
        while at + GROUP <= docs.len() {
            let sum = _mm256_add_epi32(
                _mm256_add_epi32(below(at), below(at + 8)),
                _mm256_add_epi32(below(at + 16), below(at + 24)),
            );
            // Each lane holds minus its count (compares give -1).
            let lanes = _mm256_sub_epi32(_mm256_setzero_si256(), sum);
            let half = _mm_add_epi32(
                _mm256_castsi256_si128(lanes),
                _mm256_extracti128_si256::<1>(lanes),
            );
            let pair = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
            let all = _mm_add_epi32(pair, _mm_shuffle_epi32::<0b10_11_00_01>(pair));
            let group = _mm_cvtsi128_si32(all) as usize;
            count += group;
            if group < GROUP {
                return count;
            }
            at += GROUP;
        }
        while at + 8 <= docs.len() {
            let mask = _mm256_movemask_ps(_mm256_castsi256_ps(below(at)));
            let group = mask.count_ones() as usize;
            count += group;
            if group < 8 {
                return count;
            }
            at += 8;
        }
        count + docs[at..].partition_point(|&d| d < target)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn counts_as_a_scan(
            set in proptest::collection::btree_set(0u32..2_000, 0..300),
            target in 0u32..2_100,
        ) {
            let docs: Vec<u32> = set.into_iter().collect();
            let expected = docs.iter().filter(|&&d| d < target).count();
            for isa in Isa::all_supported() {
                prop_assert_eq!(count_below(&docs, target, isa), expected);
            }
        }
    }

    #[test]
    fn extremes() {
        let docs: Vec<u32> = (0..64).map(|d| u32::MAX - 64 + d).collect();
        for isa in Isa::all_supported() {
            assert_eq!(count_below(&docs, u32::MAX, isa), 64);
            assert_eq!(count_below(&docs, 0, isa), 0);
            assert_eq!(count_below(&docs, u32::MAX - 10, isa), 54);
            assert_eq!(count_below(&[], 5, isa), 0);
        }
    }
}
