//! AVX2 decoding of the vertical layout: eight values per instruction, one specialised,
//! fully unrolled routine per bit width, optionally fused with the prefix sum of d-gaps.

use std::arch::x86_64::*;

use super::vertical::packed_area;
use crate::delta::x86::scan8;
use crate::{CodecError, BLOCK_LEN};

type UnpackFn = unsafe fn(*const __m256i, *mut __m256i, u32);

/// Unpacks 32 rows of width `B`; with `DELTA`, the values are gaps and the prefix sum starting
/// at `base` is stored instead.
///
/// # Safety
/// AVX2 must be available; `input` must point to `32 * B` readable bytes and `out` to 256
/// writable u32.
#[inline(always)]
#[allow(unused_assignments, clippy::erasing_op, clippy::identity_op)] // last carry unused; row 0 multiplies by 0
unsafe fn unpack_rows<const B: usize, const DELTA: bool>(
    input: *const __m256i,
    out: *mut __m256i,
    base: u32,
) {
    // SAFETY: the caller's contract: AVX2 is available, which every intrinsic here needs; row R
    // reads input rows `R * B / 32` and, when it straddles two, the next, both below `B` (as
    // `R * B + B - 1 < 32 * B`), so inside the `32 * B` bytes; it writes `out[R]`, `R < 32`,
    // inside the 256 u32. Loads and stores are unaligned.
    unsafe {
        let mask = _mm256_set1_epi32(((1u64 << B) - 1) as u32 as i32);
        let mut carry = _mm256_set1_epi32(base as i32);
        seq_macro::seq!(R in 0..32 {
            {
                let bit = R * B;
                let (w, s) = (bit / 32, bit % 32);
                let v = if B == 0 {
                    _mm256_setzero_si256()
                } else {
                    let mut v = _mm256_srl_epi32(_mm256_loadu_si256(input.add(w)), _mm_cvtsi32_si128(s as i32));
                    if s + B > 32 {
                        let hi = _mm256_loadu_si256(input.add(w + 1));
                        v = _mm256_or_si256(v, _mm256_sll_epi32(hi, _mm_cvtsi32_si128((32 - s) as i32)));
                    }
                    if s + B == 32 { v } else { _mm256_and_si256(v, mask) }
                };
                if DELTA {
                    let (sums, next) = scan8(v, carry);
                    _mm256_storeu_si256(out.add(R), sums);
                    carry = next;
                } else {
                    _mm256_storeu_si256(out.add(R), v);
                }
            }
        });
    }
}

/// [`unpack_rows`] compiled for AVX2, one per width in the tables below.
///
/// # Safety
/// As [`unpack_rows`].
#[target_feature(enable = "avx2")]
unsafe fn unpack_width<const B: usize, const DELTA: bool>(
    input: *const __m256i,
    out: *mut __m256i,
    base: u32,
) {
    // SAFETY: the caller's contract, which is `unpack_rows`'s.
    unsafe { unpack_rows::<B, DELTA>(input, out, base) }
}

static PLAIN: [UnpackFn; 33] = seq_macro::seq!(B in 0..=32 { [ #( unpack_width::<B, false>, )* ] });
static DELTA: [UnpackFn; 33] = seq_macro::seq!(B in 0..=32 { [ #( unpack_width::<B, true>, )* ] });

/// Reads a full vertical block of width `bits`; with `delta = Some(base)` the values are gaps
/// and their prefix sum from `base` is stored. Returns the bytes read.
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
pub(crate) unsafe fn unpack(
    input: &[u8],
    bits: u32,
    delta: Option<u32>,
    out: &mut [u32; BLOCK_LEN],
) -> Result<usize, CodecError> {
    let area = packed_area(input, bits)?;
    let len = area.len();
    let src = area.as_ptr() as *const __m256i;
    let dst = out.as_mut_ptr() as *mut __m256i;
    // SAFETY: the caller's contract gives AVX2; `area` holds the `packed_len(bits)` =
    // `32 * bits` bytes the routine of width `bits` reads, and `out` the 256 u32 it writes.
    unsafe {
        match delta {
            Some(base) => DELTA[bits as usize](src, dst, base),
            None => PLAIN[bits as usize](src, dst, 0),
        }
    }
    Ok(len)
}
