//! AVX-512 patching of exceptions from a bitmap: sixteen lanes at a time, `vpexpandd` moves
//! the next high parts (as many as the bitmap's sixteen bits have set) into the lanes the bits
//! name. The scalar patcher visits each set bit in turn, a loop whose length the data decides.
//! Full blocks whose high parts take one byte each (the bitmap form of frequencies) are patched
//! from those bytes directly, widened sixteen at a time, before the AVX2 row patcher, which
//! takes a table lookup and a permutation for every row of eight.

use std::arch::x86_64::*;

use super::HIGHS_LEN;
use crate::BLOCK_LEN;

/// ORs `highs`, in order, shifted left by `b` (modulo 32, as `u32::wrapping_shl`), into the
/// lanes of `out` (at most [`BLOCK_LEN`]) whose bits are set in `bitmap` (bit `i % 8` of byte
/// `i / 8` for lane `i`). Bits past `out.len()` are ignored; `highs` is zero past the high
/// parts stored, the part of a set bit with no stored part.
///
/// # Safety
/// The CPU has AVX-512 F and `popcnt` (an [`crate::Isa::Avx512`] CPU).
#[target_feature(enable = "avx512f,popcnt")]
pub(super) unsafe fn patch_from_bitmap(
    bitmap: &[u8],
    highs: &[u32; HIGHS_LEN],
    b: u32,
    out: &mut [u32],
) {
    let len = out.len().min(BLOCK_LEN);
    let out = &mut out[..len];
    let shift = _mm512_set1_epi32((b & 31) as i32);
    let mut next = 0usize;
    for (group, lanes) in out.chunks_mut(16).enumerate() {
        let low = bitmap.get(2 * group).copied().unwrap_or(0);
        let high = bitmap.get(2 * group + 1).copied().unwrap_or(0);
        let valid = if lanes.len() == 16 {
            u16::MAX
        } else {
            (1u16 << lanes.len()) - 1
        };
        let set = u16::from_le_bytes([low, high]);
        let mask = set & valid;
        if mask != 0 {
            // SAFETY: AVX-512 F is available (the caller's contract). The groups before this
            // one are full, so `next <= 16 * group < BLOCK_LEN` and the sixteen values read
            // from `highs[next..]` lie inside its `BLOCK_LEN + 16`. The masked load and store
            // touch only the `lanes.len()` lanes of `lanes`.
            unsafe {
                let stored = _mm512_loadu_si512(highs.as_ptr().add(next).cast());
                let parts = _mm512_sllv_epi32(_mm512_maskz_expand_epi32(mask, stored), shift);
                let values = _mm512_maskz_loadu_epi32(valid, lanes.as_ptr().cast());
                let patched = _mm512_or_si512(values, parts);
                _mm512_mask_storeu_epi32(lanes.as_mut_ptr().cast(), valid, patched);
            }
        }
        // Set bits past `out.len()` take a high part each, as in the scalar patcher.
        next += set.count_ones() as usize;
    }
}

/// ORs one-byte high parts, in order from `highs`, shifted left by `b`, into the lanes of a
/// full block whose bits are set in `bitmap`.
///
/// # Safety
/// The CPU has AVX-512 F and `popcnt`; `highs` holds one byte per set bit of `bitmap` and 16
/// more.
#[target_feature(enable = "avx512f,popcnt")]
pub(super) unsafe fn patch_byte_highs(
    bitmap: &[u8; 32],
    highs: &[u8],
    b: u32,
    out: &mut [u32; BLOCK_LEN],
) {
    let shift = _mm_cvtsi32_si128(b as i32);
    let mut next = 0usize;
    for (group, lanes) in out.chunks_exact_mut(16).enumerate() {
        let mask = u16::from_le_bytes([bitmap[2 * group], bitmap[2 * group + 1]]);
        // SAFETY: `next` counts the set bits of the groups before, so `next + 16` bytes lie in
        // `highs` (the caller's contract); the 64-byte load and store cover `lanes`' sixteen
        // u32. Unaligned loads and stores.
        unsafe {
            let bytes = _mm_loadu_si128(highs.as_ptr().add(next).cast());
            let parts = _mm512_maskz_expand_epi32(mask, _mm512_cvtepu8_epi32(bytes));
            let at = lanes.as_mut_ptr().cast();
            let patched = _mm512_or_si512(_mm512_loadu_si512(at), _mm512_sll_epi32(parts, shift));
            _mm512_storeu_si512(at, patched);
        }
        next += mask.count_ones() as usize;
    }
}
