//! AVX-512 decoding of the vertical layout: two rows of eight values per 512-bit register, one
//! specialised, fully unrolled routine per bit width, optionally fused with the prefix sum of
//! d-gaps (sixteen lanes at a time).
//!
//! Rows `2p` and `2p + 1` start in words `w0` and `w1` of their lanes (`w1` is `w0` or
//! `w0 + 1`), at bit offsets `s0` and `s1`. The register's low half takes word `w0` of the eight
//! lanes and its high half word `w1`: one 64-byte load when the words follow each other, else
//! one 32-byte load broadcast to both halves. Variable shifts take each half from its own offset,
//! and a row that straddles two words takes its high bits from the next word the same way.
//! The layout is the one [`super::vertical`] writes; only the reading changes.

use std::arch::x86_64::*;

use super::vertical::packed_area;
use crate::delta::x86::scan16;
use crate::{CodecError, BLOCK_LEN};

type UnpackFn = unsafe fn(*const u32, *mut u32, u32);

/// Word `w0` of the eight lanes in the low half, word `w1` in the high half.
///
/// # Safety
/// AVX-512F must be available, and `input` must point to at least `8 * (max(w0, w1) + 1)`
/// readable u32.
#[inline(always)]
unsafe fn words(input: *const u32, w0: usize, w1: usize) -> __m512i {
    // SAFETY: the caller's contract: both words' 32 bytes are readable (the 64-byte load when
    // `w1 = w0 + 1` reads exactly those of `w0` and `w1`); unaligned loads.
    unsafe {
        if w1 == w0 + 1 {
            _mm512_loadu_si512(input.add(8 * w0) as *const _)
        } else if w1 == w0 {
            _mm512_broadcast_i64x4(_mm256_loadu_si256(input.add(8 * w0) as *const __m256i))
        } else {
            let low = _mm512_castsi256_si512(_mm256_loadu_si256(input.add(8 * w0) as *const _));
            _mm512_inserti64x4::<1>(low, _mm256_loadu_si256(input.add(8 * w1) as *const _))
        }
    }
}

/// `a` in the eight low lanes, `b` in the eight high ones.
#[inline(always)]
fn halves(a: u32, b: u32) -> [u32; 16] {
    [a, a, a, a, a, a, a, a, b, b, b, b, b, b, b, b]
}

/// Unpacks 32 rows of width `B`, two at a time; with `DELTA`, the values are gaps and the
/// prefix sum starting at `base` is stored instead.
///
/// # Safety
/// The CPU must support AVX-512F; `input` must point to `8 * B` readable u32 and `out` to 256
/// writable u32.
#[inline(always)]
#[allow(unused_assignments, clippy::erasing_op, clippy::identity_op)] // last carry unused; pair 0 multiplies by 0
unsafe fn unpack_rows<const B: usize, const DELTA: bool>(
    input: *const u32,
    out: *mut u32,
    base: u32,
) {
    // SAFETY: the caller's contract: AVX-512F is available, which every intrinsic here needs.
    // Row R's value in a lane lies in words `R * B / 32` and, when it straddles two, the next,
    // both below `B` (as `R * B + B - 1 < 32 * B`), so every word read is inside the `8 * B`
    // u32; a straddling row's next word is read only for a row that straddles (a half that
    // does not straddle reads its partner's). Pair P writes `out[16P..16P + 16]`, `P < 16`,
    // inside the 256 u32. Loads and stores are unaligned.
    unsafe {
        let mask = _mm512_set1_epi32(((1u64 << B) - 1) as u32 as i32);
        let mut carry = _mm512_set1_epi32(base as i32);
        seq_macro::seq!(P in 0..16 {
            {
                let (bit0, bit1) = (2 * P * B, (2 * P + 1) * B);
                let (w0, s0) = (bit0 / 32, (bit0 % 32) as u32);
                let (w1, s1) = (bit1 / 32, (bit1 % 32) as u32);
                let v = if B == 0 {
                    _mm512_setzero_si512()
                } else {
                    let shifts = _mm512_loadu_si512(halves(s0, s1).as_ptr() as *const _);
                    let mut v = _mm512_srlv_epi32(words(input, w0, w1), shifts);
                    let (straddles0, straddles1) = (s0 as usize + B > 32, s1 as usize + B > 32);
                    if straddles0 || straddles1 {
                        let (h0, h1) = match (straddles0, straddles1) {
                            (true, true) => (w0 + 1, w1 + 1),
                            (true, false) => (w0 + 1, w0 + 1),
                            _ => (w1 + 1, w1 + 1),
                        };
                        // A half that does not straddle shifts by 32 (giving 0) or leaves its
                        // bits above `B`, which the mask clears.
                        let back = _mm512_loadu_si512(halves(32 - s0, 32 - s1).as_ptr() as *const _);
                        let high = _mm512_sllv_epi32(words(input, h0, h1), back);
                        // (v | high) & mask
                        v = _mm512_ternarylogic_epi32::<0xA8>(v, high, mask);
                    } else if s0 as usize + B != 32 || s1 as usize + B != 32 {
                        v = _mm512_and_si512(v, mask);
                    }
                    v
                };
                if DELTA {
                    let (sums, next) = scan16(v, carry);
                    _mm512_storeu_si512(out.add(16 * P) as *mut _, sums);
                    carry = next;
                } else {
                    _mm512_storeu_si512(out.add(16 * P) as *mut _, v);
                }
            }
        });
    }
}

/// [`unpack_rows`] compiled for AVX-512, one per width in the tables below.
///
/// # Safety
/// As [`unpack_rows`].
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
unsafe fn unpack_width<const B: usize, const DELTA: bool>(
    input: *const u32,
    out: *mut u32,
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
/// The CPU must support the features of [`crate::Isa::Avx512`].
#[inline]
pub(crate) unsafe fn unpack(
    input: &[u8],
    bits: u32,
    delta: Option<u32>,
    out: &mut [u32; BLOCK_LEN],
) -> Result<usize, CodecError> {
    let area = packed_area(input, bits)?;
    let len = area.len();
    let src = area.as_ptr() as *const u32;
    let dst = out.as_mut_ptr();
    // SAFETY: the caller's contract gives the features; `area` holds the `packed_len(bits)` =
    // `32 * bits` bytes (`8 * bits` u32) the routine of width `bits` reads, and `out` the 256
    // u32 it writes.
    unsafe {
        match delta {
            Some(base) => DELTA[bits as usize](src, dst, base),
            None => PLAIN[bits as usize](src, dst, 0),
        }
    }
    Ok(len)
}
