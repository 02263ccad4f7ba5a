//! D-gaps and their inverse, the prefix sum.
//!
//! Gaps use wrapping arithmetic so any sequence round-trips; a sorted one gives small gaps.

use crate::Isa;

/// Writes `values[i] - values[i-1]` (with `values[-1] = base`) into `gaps`.
#[inline]
pub(crate) fn to_gaps(base: u32, values: &[u32], gaps: &mut [u32]) {
    let mut prev = base;
    for (gap, &v) in gaps.iter_mut().zip(values) {
        *gap = v.wrapping_sub(prev);
        prev = v;
    }
}

/// Turns gaps into values in place: `values[i] = base + gaps[0] + ... + gaps[i]`.
#[inline]
pub(crate) fn prefix_sum(base: u32, values: &mut [u32], isa: Isa) {
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= Isa::Avx512 {
            // SAFETY: `Isa` values at Avx512 are only produced once the CPU's AVX-512 support
            // was detected (see `Isa::supported`).
            return unsafe { x86::prefix_sum_avx512(base, values) };
        }
        if isa >= Isa::Avx2 {
            // SAFETY: `Isa` values at or above Avx2 are only produced once the CPU's AVX2
            // support was detected (see `Isa::supported`).
            return unsafe { x86::prefix_sum_avx2(base, values) };
        }
        if isa >= Isa::Sse41 {
            // SAFETY: as above, for SSE4.1.
            return unsafe { x86::prefix_sum_sse41(base, values) };
        }
    }
    let _ = isa;
    prefix_sum_scalar(base, values);
}

/// The portable prefix sum; the oracle of the SIMD versions.
#[inline]
pub(crate) fn prefix_sum_scalar(base: u32, values: &mut [u32]) {
    let mut acc = base;
    for v in values {
        acc = acc.wrapping_add(*v);
        *v = acc;
    }
}

/// Turns values into running sums of each value plus one, in place (`values[i]` becomes
/// `(values[0] + 1) + ... + (values[i] + 1)`, strictly increasing) and returns true; returns
/// false, leaving `values` as they are, when a sum would pass `u32::MAX`.
///
/// Stored position gaps less one become positions this way, a document's being its sums less
/// the sum before it. The values' OR bounds each of them, which settles the overflow check in
/// one pass in the usual case (gaps of a few bits); the exact 64-bit sum is taken only when the
/// bound does not.
#[inline]
pub(crate) fn prefix_sum_of_successors(values: &mut [u32], isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx512 {
        // SAFETY: `Isa` values at Avx512 are only produced once the CPU's AVX-512 support was
        // detected (see `Isa::supported`).
        return unsafe { x86::prefix_sum_of_successors_avx512(values) };
    }
    let any = values.iter().fold(0, |any, &v| any | v);
    if !successor_sums_fit(values, any) {
        return false;
    }
    for v in values.iter_mut() {
        *v += 1;
    }
    prefix_sum(0, values, isa);
    true
}

/// Whether the sum of `values`, each plus one, is at most `u32::MAX`, given the OR of them.
fn successor_sums_fit(values: &[u32], any: u32) -> bool {
    let bound = (u64::from(any) + 1) * values.len() as u64;
    bound <= u64::from(u32::MAX)
        || values.iter().map(|&v| u64::from(v)).sum::<u64>() + values.len() as u64
            <= u64::from(u32::MAX)
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use std::arch::x86_64::*;

    /// Prefix sum of the 4 lanes of `v` plus the broadcast carry `carry`. Returns the sums and
    /// the new carry (the last sum, broadcast). Safe: it touches no memory, and only code
    /// compiled for SSE4.1 may call it outside an `unsafe` block.
    #[inline]
    #[target_feature(enable = "sse4.1")]
    pub(crate) fn scan4(v: __m128i, carry: __m128i) -> (__m128i, __m128i) {
        let v = _mm_add_epi32(v, _mm_slli_si128::<4>(v));
        let v = _mm_add_epi32(v, _mm_slli_si128::<8>(v));
        let v = _mm_add_epi32(v, carry);
        (v, _mm_shuffle_epi32::<0xFF>(v))
    }

    /// Prefix sum of the 8 lanes of `v` plus the broadcast carry. Returns sums and new carry.
    /// Safe: it touches no memory, and only code compiled for AVX2 may call it outside an
    /// `unsafe` block.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn scan8(v: __m256i, carry: __m256i) -> (__m256i, __m256i) {
        // Within each 128-bit half: [a0, a0+a1, a0+a1+a2, a0..a3].
        let v = _mm256_add_epi32(v, _mm256_slli_si256::<4>(v));
        let v = _mm256_add_epi32(v, _mm256_slli_si256::<8>(v));
        // Add the low half's total to every lane of the high half.
        let low_total = _mm256_shuffle_epi32::<0xFF>(v);
        let low_total = _mm256_permute2x128_si256::<0x08>(low_total, low_total);
        let local = _mm256_add_epi32(v, low_total);
        // The carry chain is a single add per row; the broadcast of the local total is off it.
        let sums = _mm256_add_epi32(local, carry);
        let local_total = _mm256_permutevar8x32_epi32(local, _mm256_set1_epi32(7));
        (sums, _mm256_add_epi32(carry, local_total))
    }

    /// Prefix sum of the 16 lanes of `v` plus the broadcast carry. Returns sums and new carry.
    /// Safe: it touches no memory, and only code compiled for AVX-512F may call it outside an
    /// `unsafe` block.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn scan16(v: __m512i, carry: __m512i) -> (__m512i, __m512i) {
        // `alignr(v, zero, 16 - k)` moves every lane k places up, zeros entering below.
        let zero = _mm512_setzero_si512();
        let v = _mm512_add_epi32(v, _mm512_alignr_epi32::<15>(v, zero));
        let v = _mm512_add_epi32(v, _mm512_alignr_epi32::<14>(v, zero));
        let v = _mm512_add_epi32(v, _mm512_alignr_epi32::<12>(v, zero));
        let local = _mm512_add_epi32(v, _mm512_alignr_epi32::<8>(v, zero));
        // As in `scan8`, the carry chain is one add per vector.
        let sums = _mm512_add_epi32(local, carry);
        let local_total = _mm512_permutexvar_epi32(_mm512_set1_epi32(15), local);
        (sums, _mm512_add_epi32(carry, local_total))
    }

    /// [`super::prefix_sum`] four lanes at a time.
    ///
    /// # Safety
    /// The CPU must support SSE4.1.
    #[target_feature(enable = "sse4.1")]
    pub(crate) unsafe fn prefix_sum_sse41(base: u32, values: &mut [u32]) {
        let mut carry = _mm_set1_epi32(base as i32);
        let mut chunks = values.chunks_exact_mut(4);
        for chunk in &mut chunks {
            let p = chunk.as_mut_ptr() as *mut __m128i;
            // SAFETY: `p` points to the chunk's 16 bytes, borrowed mutably; the load and the
            // store are unaligned.
            unsafe {
                let (sums, next) = scan4(_mm_loadu_si128(p), carry);
                _mm_storeu_si128(p, sums);
                carry = next;
            }
        }
        let acc = _mm_cvtsi128_si32(carry) as u32;
        super::prefix_sum_scalar(acc, chunks.into_remainder());
    }

    /// [`super::prefix_sum`] eight lanes at a time.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn prefix_sum_avx2(base: u32, values: &mut [u32]) {
        let mut carry = _mm256_set1_epi32(base as i32);
        let mut chunks = values.chunks_exact_mut(8);
        for chunk in &mut chunks {
            let p = chunk.as_mut_ptr() as *mut __m256i;
            // SAFETY: `p` points to the chunk's 32 bytes, borrowed mutably; the load and the
            // store are unaligned.
            unsafe {
                let (sums, next) = scan8(_mm256_loadu_si256(p), carry);
                _mm256_storeu_si256(p, sums);
                carry = next;
            }
        }
        let acc = _mm256_cvtsi256_si32(carry) as u32;
        super::prefix_sum_scalar(acc, chunks.into_remainder());
    }

    /// [`super::prefix_sum`] sixteen lanes at a time; the last, shorter chunk through masks.
    ///
    /// # Safety
    /// The CPU must support the features of [`crate::Isa::Avx512`].
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
    pub(crate) unsafe fn prefix_sum_avx512(base: u32, values: &mut [u32]) {
        let mut carry = _mm512_set1_epi32(base as i32);
        let mut chunks = values.chunks_exact_mut(16);
        for chunk in &mut chunks {
            let p = chunk.as_mut_ptr();
            // SAFETY: `p` points to the chunk's 64 bytes, borrowed mutably; the load and the
            // store are unaligned.
            unsafe {
                let (sums, next) = scan16(_mm512_loadu_si512(p as *const _), carry);
                _mm512_storeu_si512(p as *mut _, sums);
                carry = next;
            }
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let lanes = ((1u32 << rest.len()) - 1) as __mmask16;
            let p = rest.as_mut_ptr() as *mut i32;
            // SAFETY: the mask selects the `rest.len()` (below 16) u32 of `rest`, borrowed
            // mutably; masked-off lanes are neither read nor written.
            unsafe {
                let (sums, _) = scan16(_mm512_maskz_loadu_epi32(lanes, p), carry);
                _mm512_mask_storeu_epi32(p, lanes, sums);
            }
        }
    }
    /// [`super::prefix_sum_of_successors`] sixteen lanes at a time: one pass for the bound, one
    /// adding the ones and summing.
    ///
    /// # Safety
    /// The CPU must support the features of [`crate::Isa::Avx512`].
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
    pub(crate) unsafe fn prefix_sum_of_successors_avx512(values: &mut [u32]) -> bool {
        let full = values.len() / 16 * 16;
        let rest = values.len() - full;
        let lanes = ((1u32 << rest) - 1) as __mmask16;
        let p = values.as_mut_ptr() as *mut i32;
        let mut any = _mm512_setzero_si512();
        for at in (0..full).step_by(16) {
            // SAFETY: `p` points to `values`, borrowed mutably; `at + 16 <= full`.
            let v = unsafe { _mm512_loadu_si512(p.add(at).cast()) };
            any = _mm512_or_si512(any, v);
        }
        if rest > 0 {
            // SAFETY: the mask selects the `rest` values past `full` only.
            let tail = unsafe { _mm512_maskz_loadu_epi32(lanes, p.add(full)) };
            any = _mm512_or_si512(any, tail);
        }
        let any = _mm512_reduce_or_epi32(any) as u32;
        if !super::successor_sums_fit(values, any) {
            return false;
        }
        let ones = _mm512_set1_epi32(1);
        let mut carry = _mm512_setzero_si512();
        for at in (0..full).step_by(16) {
            // SAFETY: as in the first pass; the store writes the sixteen values loaded.
            unsafe {
                let v = _mm512_add_epi32(_mm512_loadu_si512(p.add(at).cast()), ones);
                let (sums, next) = scan16(v, carry);
                _mm512_storeu_si512(p.add(at).cast(), sums);
                carry = next;
            }
        }
        if rest > 0 {
            // SAFETY: the masked load and store touch the `rest` values past `full` only.
            unsafe {
                let v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(lanes, p.add(full)), ones);
                let (sums, _) = scan16(v, carry);
                _mm512_mask_storeu_epi32(p.add(full), lanes, sums);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_isa_matches_the_scalar_prefix_sum() {
        for len in [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 255, 256] {
            let gaps: Vec<u32> = (0..len as u32)
                .map(|i| i.wrapping_mul(2654435761))
                .collect();
            let mut expected = gaps.clone();
            prefix_sum_scalar(17, &mut expected);
            for isa in Isa::all_supported() {
                let mut got = gaps.clone();
                prefix_sum(17, &mut got, isa);
                assert_eq!(got, expected, "isa {isa:?} len {len}");
            }
        }
    }

    #[test]
    fn every_isa_sums_successors_as_the_scalar_loop_does_and_refuses_overflow() {
        let cases: Vec<Vec<u32>> = vec![
            vec![],
            vec![0],
            vec![7; 17],
            (0..256)
                .map(|i: u32| i.wrapping_mul(2654435761) % 1000)
                .collect(),
            (0..33).map(|i: u32| i % 5).collect(),
            // Sums of exactly u32::MAX, and one past it.
            vec![u32::MAX - 1],
            vec![u32::MAX],
            vec![u32::MAX / 2 - 1, u32::MAX / 2 - 1, 0],
            vec![u32::MAX / 2 - 1, u32::MAX / 2 - 1, 1],
            // A high OR but a small sum: the bound alone cannot settle it.
            vec![1 << 31, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3],
        ];
        for values in cases {
            let exact: u64 = values.iter().map(|&v| u64::from(v) + 1).sum();
            let mut expected = values.clone();
            let mut acc = 0u32;
            for v in &mut expected {
                acc = acc.wrapping_add(*v).wrapping_add(1);
                *v = acc;
            }
            for isa in Isa::all_supported() {
                let mut got = values.clone();
                let summed = prefix_sum_of_successors(&mut got, isa);
                if exact <= u64::from(u32::MAX) {
                    assert!(summed, "isa {isa:?} {values:?}");
                    assert_eq!(got, expected, "isa {isa:?}");
                } else {
                    assert!(!summed, "isa {isa:?} {values:?}");
                    assert_eq!(got, values, "isa {isa:?} left the values");
                }
            }
        }
    }

    #[test]
    fn gaps_invert_prefix_sum() {
        let values = [5u32, 5, 9, 1, u32::MAX, 0];
        let mut gaps = [0u32; 6];
        to_gaps(3, &values, &mut gaps);
        prefix_sum_scalar(3, &mut gaps);
        assert_eq!(gaps, values);
    }
}
