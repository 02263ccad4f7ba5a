//! Counting the values two short increasing lists share, sixteen against sixteen at a time:
//! the two-term exact phrase's inner loop, where one term's positions, shifted by the
//! distance between the terms, meet the other's.
//!
//! A scalar merge takes one step per value, and each step's loads wait on the step before
//! (a stop word's fifty positions in an article are a chain of fifty). Here a block of
//! sixteen values of each list is compared all against all (the second block rotated a lane
//! at a time, sixteen compares with no chain between them), and the block whose last value is
//! the smaller moves on, as in a merge. A value of one block can only equal a value of a
//! block that the merge pairs it with, so every common value is seen once.

use apcache_codec::Isa;

/// Lanes compared at a time.
const LANES: usize = 16;

/// The number of values `x` of `a` with `x + distance` in `b` (both strictly increasing), up
/// to `limit`; `None` where this path does not apply (no AVX-512, or a shifted value would
/// pass `u32::MAX`), for the caller's merge.
#[inline]
pub fn count_common_shifted(
    a: &[u32],
    b: &[u32],
    distance: u32,
    limit: u32,
    isa: Isa,
) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx512
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("popcnt")
    {
        let last = a.last().map_or(0, |&x| u64::from(x));
        if last + u64::from(distance) > u64::from(u32::MAX) {
            return None;
        }
        // SAFETY: AVX-512 F and `popcnt` are present; no shifted value of `a` overflows.
        return Some(unsafe { avx512::count_common_shifted(a, b, distance, limit) });
    }
    let _ = (a, b, distance, limit, isa);
    None
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::LANES;

    /// Up to sixteen values from `list[at..]`, the lanes past its end repeating its last
    /// value (a duplicate of a real value, which adds no common value: a lane counts once
    /// however many lanes it equals), and the mask of the real ones.
    ///
    /// # Safety
    /// AVX-512 F is available; `at < list.len()`.
    #[inline(always)]
    unsafe fn block(list: &[u32], at: usize) -> (__m512i, __mmask16) {
        let n = (list.len() - at).min(LANES);
        let real: __mmask16 = if n == LANES { u16::MAX } else { (1 << n) - 1 };
        // SAFETY: AVX-512 F is available (the caller's contract); the masked load reads the
        // `n` values `list[at..at + n]` only.
        let values = unsafe {
            let last = _mm512_set1_epi32(list[at + n - 1] as i32);
            _mm512_mask_loadu_epi32(last, real, list.as_ptr().add(at).cast())
        };
        (values, real)
    }

    /// The lanes of `a` equal to some lane of `b`.
    ///
    /// # Safety
    /// AVX-512 F is available.
    #[inline(always)]
    unsafe fn lanes_in(a: __m512i, b: __m512i) -> __mmask16 {
        macro_rules! rotated {
            ($($r:literal)*) => {
                0 $(| _mm512_cmpeq_epi32_mask(a, _mm512_alignr_epi32::<$r>(b, b)))*
            };
        }
        // SAFETY: AVX-512 F is available (the caller's contract); no memory is touched.
        unsafe { rotated!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15) }
    }

    /// [`super::count_common_shifted`].
    ///
    /// # Safety
    /// AVX-512 F and `popcnt` are available, and `a`'s last value plus `distance` fits in a
    /// `u32`.
    #[target_feature(enable = "avx512f,popcnt")]
    pub(super) unsafe fn count_common_shifted(
        a: &[u32],
        b: &[u32],
        distance: u32,
        limit: u32,
    ) -> u32 {
        let shift = _mm512_set1_epi32(distance as i32);
        let (mut i, mut j, mut count) = (0, 0, 0u32);
        while i < a.len() && j < b.len() {
            // SAFETY: AVX-512 F is available (the caller's contract); `i < a.len()` and
            // `j < b.len()`.
            let (block_a, real_a) = unsafe { block(a, i) };
            // SAFETY: as above.
            let (block_b, _) = unsafe { block(b, j) };
            let block_a = _mm512_add_epi32(block_a, shift);
            // SAFETY: as above.
            let common = unsafe { lanes_in(block_a, block_b) } & real_a;
            count += common.count_ones();
            if count >= limit {
                return limit;
            }
            let last_a = u64::from(a[(i + LANES).min(a.len()) - 1]) + u64::from(distance);
            let last_b = u64::from(b[(j + LANES).min(b.len()) - 1]);
            if last_a <= last_b {
                i += LANES;
            }
            if last_b <= last_a {
                j += LANES;
            }
        }
        count
    }
}
