//! Finding a DID's place in an increasing array by counting, not bisecting.
//!
//! A cursor searching a dense block for a target a few dozen DIDs ahead pays a binary search of
//! eight dependent loads and compares (about fifty cycles). Counting the DIDs below the target
//! with vector compares has no chain between the compares: with AVX2, thirty-two DIDs cost a
//! few cycles, and the count stops at the first group that reaches the target. Used past the
//! cursor's first probe, where the target is far enough that a scan of one vector missed.

use apcache_codec::{Isa, BLOCK_LEN};

/// DIDs compared per step of the scan (four AVX2 vectors).
const GROUP: usize = 32;

/// The number of DIDs of `docs` (increasing) below `target`.
#[inline]
pub fn count_below(docs: &[u32], target: u32, isa: Isa) -> usize {
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        // SAFETY: AVX2 and `popcnt` are present.
        return unsafe { avx2::count_below(docs, target) };
    }
    let _ = isa;
    docs.partition_point(|&d| d < target)
}

/// DIDs of a full block per sample of [`block_samples`].
pub const SAMPLE_STRIDE: usize = BLOCK_LEN / 8;

/// The last DID of each eighth of a full block: the map [`count_below_in_block`] reads first.
#[inline]
pub fn block_samples(docs: &[u32; BLOCK_LEN]) -> [u32; 8] {
    std::array::from_fn(|i| docs[i * SAMPLE_STRIDE + SAMPLE_STRIDE - 1])
}

/// The number of DIDs of the full block `docs` (increasing, with `samples` from
/// [`block_samples`]) below `target`, in two steps without a branch on the data: the samples
/// below `target` name the eighth that holds the answer, and that eighth's 32 DIDs are
/// counted. [`count_below`] stops at the first group of 32 that reaches the target, a branch
/// that a run of searches with scattered targets mispredicts about once per search.
#[inline]
pub fn count_below_in_block(
    docs: &[u32; BLOCK_LEN],
    samples: &[u32; 8],
    target: u32,
    isa: Isa,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        // SAFETY: AVX2 and `popcnt` are present.
        return unsafe { avx2::count_below_in_block(docs, samples, target) };
    }
    let _ = isa;
    let eighth = samples.iter().filter(|&&s| s < target).count();
    match docs.get(eighth * SAMPLE_STRIDE..(eighth + 1) * SAMPLE_STRIDE) {
        Some(group) => eighth * SAMPLE_STRIDE + group.iter().filter(|&&d| d < target).count(),
        None => BLOCK_LEN,
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use apcache_codec::BLOCK_LEN;

    use super::{GROUP, SAMPLE_STRIDE};

    /// The lanes of `v` below `limit + 1` as -1, the rest 0.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    unsafe fn below(v: __m256i, limit: __m256i) -> __m256i {
        // x < target  <=>  min(x, target - 1) == x, unsigned.
        // SAFETY: AVX2 is available (the caller's contract); no memory is touched.
        unsafe { _mm256_cmpeq_epi32(_mm256_min_epu32(v, limit), v) }
    }

    /// The sum of the lanes of `sum`, negated (compares count -1 per hit).
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    unsafe fn negated_sum(sum: __m256i) -> usize {
        // SAFETY: AVX2 is available (the caller's contract); no memory is touched.
        unsafe {
            let lanes = _mm256_sub_epi32(_mm256_setzero_si256(), sum);
            let half = _mm_add_epi32(
                _mm256_castsi256_si128(lanes),
                _mm256_extracti128_si256::<1>(lanes),
            );
            let pair = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
            let all = _mm_add_epi32(pair, _mm_shuffle_epi32::<0b10_11_00_01>(pair));
            _mm_cvtsi128_si32(all) as usize
        }
    }

    /// [`super::count_below_in_block`] with AVX2.
    ///
    /// # Safety
    /// The CPU has AVX2 and `popcnt`.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn count_below_in_block(
        docs: &[u32; BLOCK_LEN],
        samples: &[u32; 8],
        target: u32,
    ) -> usize {
        if target == 0 {
            return 0;
        }
        let limit = _mm256_set1_epi32((target - 1) as i32);
        // SAFETY: AVX2 is available (the caller's contract); `samples` is eight u32, 32
        // bytes, read unaligned.
        let sampled = unsafe { below(_mm256_loadu_si256(samples.as_ptr().cast()), limit) };
        let eighth = _mm256_movemask_ps(_mm256_castsi256_ps(sampled)).count_ones() as usize;
        // Past the last sample (every DID below the target), the last eighth is counted: all
        // of its 32 DIDs, so the answer is the block's length.
        let first = eighth.min(7) * SAMPLE_STRIDE;
        // SAFETY: AVX2 is available (the caller's contract); the group's 32 DIDs,
        // `docs[first..first + 32]` with `first <= 7 * 32`, lie inside the block, and the four
        // loads of eight read them unaligned.
        unsafe {
            let group = docs.as_ptr().add(first);
            let load = |k: usize| below(_mm256_loadu_si256(group.add(8 * k).cast()), limit);
            let sum = _mm256_add_epi32(
                _mm256_add_epi32(load(0), load(1)),
                _mm256_add_epi32(load(2), load(3)),
            );
            first + negated_sum(sum)
        }
    }

    /// [`super::count_below`] with AVX2.
    ///
    /// # Safety
    /// The CPU has AVX2 and `popcnt`.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn count_below(docs: &[u32], target: u32) -> usize {
        if target == 0 {
            return 0;
        }
        let limit = _mm256_set1_epi32((target - 1) as i32);
        let below = |at: usize| {
            // SAFETY: AVX2 is available (the caller's contract); every call below passes
            // `at + 8 <= docs.len()`, so the eight DIDs read (unaligned) lie in `docs`.
            unsafe { below(_mm256_loadu_si256(docs.as_ptr().add(at).cast()), limit) }
        };
        let mut at = 0;
        let mut count = 0usize;
        while at + GROUP <= docs.len() {
            let sum = _mm256_add_epi32(
                _mm256_add_epi32(below(at), below(at + 8)),
                _mm256_add_epi32(below(at + 16), below(at + 24)),
            );
            // SAFETY: AVX2 is available (the caller's contract).
            let group = unsafe { negated_sum(sum) };
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

    proptest! {
        #[test]
        fn counts_a_full_block_as_a_scan(
            first in 0u32..100,
            gaps in proptest::collection::vec(1u32..24, BLOCK_LEN),
            target in 0u32..6_300,
        ) {
            let mut docs = [first; BLOCK_LEN];
            for i in 1..BLOCK_LEN {
                docs[i] = docs[i - 1] + gaps[i];
            }
            let samples = block_samples(&docs);
            let expected = docs.iter().filter(|&&d| d < target).count();
            for isa in Isa::all_supported() {
                prop_assert_eq!(count_below_in_block(&docs, &samples, target, isa), expected);
            }
            // Every DID of the block as the target, and one past it.
            for (i, &d) in docs.iter().enumerate() {
                for isa in Isa::all_supported() {
                    prop_assert_eq!(count_below_in_block(&docs, &samples, d, isa), i);
                    prop_assert_eq!(count_below_in_block(&docs, &samples, d + 1, isa), i + 1);
                }
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
