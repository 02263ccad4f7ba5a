//! AVX2 patching of exceptions in full vertical blocks.
//!
//! In the bitmap form, one byte of the exception bitmap covers one row of eight values, and a
//! permutation chosen by that byte moves the row's high parts from their packed order into
//! their lanes. In the VByte form with one-byte high parts (the form most blocks of
//! frequencies take), the positions' order and the high parts' widths are checked on 32 bytes
//! at once before the patch.

use std::arch::x86_64::*;

use crate::BLOCK_LEN;

/// Bytes the patcher may read past the last high part.
pub(super) const SLACK: usize = 32;

/// For each bitmap byte, the source index of each lane: the number of set bits below it.
static PERMUTATIONS: [[u32; 8]; 256] = {
    let mut table = [[0u32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut lane = 0;
        while lane < 8 {
            table[mask][lane] = (mask & ((1 << lane) - 1)).count_ones();
            lane += 1;
        }
        mask += 1;
    }
    table
};

/// The next eight high parts of `WIDTH` bytes from `at`, widened to 32-bit lanes.
///
/// # Safety
/// AVX2 must be available, and `at` must point to 8 (`WIDTH` 1), 16 (`WIDTH` 2) or 32 readable
/// bytes.
#[inline(always)]
unsafe fn load_highs<const WIDTH: usize>(at: *const u8) -> __m256i {
    // SAFETY: the caller's contract above; the loads are unaligned.
    unsafe {
        match WIDTH {
            1 => _mm256_cvtepu8_epi32(_mm_loadl_epi64(at as *const __m128i)),
            2 => _mm256_cvtepu16_epi32(_mm_loadu_si128(at as *const __m128i)),
            _ => _mm256_loadu_si256(at as *const __m256i),
        }
    }
}

/// [`patch_aligned`] for high parts of `WIDTH` bytes.
///
/// # Safety
/// AVX2 must be available, and `highs` must hold `WIDTH` bytes per bit set in `bitmap` plus
/// [`SLACK`] bytes.
#[target_feature(enable = "avx2")]
unsafe fn patch_width<const WIDTH: usize>(
    bitmap: &[u8; 32],
    highs: &[u8],
    b: u32,
    out: &mut [u32; BLOCK_LEN],
) {
    let shift = _mm_cvtsi32_si128(b as i32);
    let lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    let mut at = highs.as_ptr();
    for (row, &mask) in bitmap.iter().enumerate() {
        // SAFETY: a row of the table is eight u32, 32 bytes; an unaligned load.
        let permutation = unsafe {
            _mm256_loadu_si256(PERMUTATIONS[usize::from(mask)].as_ptr() as *const __m256i)
        };
        let selected = _mm256_and_si256(_mm256_set1_epi32(i32::from(mask)), lane_bits);
        let lanes = _mm256_cmpeq_epi32(selected, lane_bits);
        // SAFETY: `at` is at most at the end of the high parts (it passed `WIDTH` bytes per bit
        // of the rows before), and `SLACK` = 32 readable bytes follow them.
        let packed = unsafe { load_highs::<WIDTH>(at) };
        let high = _mm256_permutevar8x32_epi32(packed, permutation);
        let high = _mm256_sll_epi32(_mm256_and_si256(high, lanes), shift);
        // SAFETY: `row < 32`, so `out[8 * row..8 * row + 8]` is in the block, borrowed mutably;
        // `at` moves past this row's high parts, which lie in `highs`.
        unsafe {
            let dst = out.as_mut_ptr().add(8 * row) as *mut __m256i;
            _mm256_storeu_si256(dst, _mm256_or_si256(_mm256_loadu_si256(dst), high));
            at = at.add(WIDTH * mask.count_ones() as usize);
        }
    }
}

/// ORs byte-aligned high parts (`width` bytes each) into the positions `bitmap` marks.
///
/// # Safety
/// AVX2 must be available, and `highs` must hold the high parts plus [`SLACK`] bytes.
pub(super) unsafe fn patch_aligned(
    bitmap: &[u8; 32],
    highs: &[u8],
    width: usize,
    b: u32,
    out: &mut [u32; BLOCK_LEN],
) {
    // SAFETY: the caller's contract, which is `patch_width`'s (`width` is 1, 2 or 4).
    unsafe {
        match width {
            1 => patch_width::<1>(bitmap, highs, b, out),
            2 => patch_width::<2>(bitmap, highs, b, out),
            _ => patch_width::<4>(bitmap, highs, b, out),
        }
    }
}

/// Whether the `e` (at most 32) position bytes at the start of `rest` increase and the `e`
/// bytes after them are one-byte VBytes (top bit clear): [`super::patch_one_byte_highs`]'s
/// checks on 32 bytes at once, with no loop whose length the count decides (and whose exit the
/// predictor would miss).
///
/// # Safety
/// AVX2 must be available, `1 <= e <= 32`, and `rest` must hold `e + 32` bytes.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn one_byte_exceptions_valid(rest: &[u8], e: usize) -> bool {
    debug_assert!((1..=32).contains(&e) && rest.len() >= e + 32);
    // SAFETY: the caller's contract: `rest` holds `e + 32 >= 33` bytes, so the 32-byte loads at
    // 0, 1 and `e` read inside it; unaligned loads.
    let (positions, next, highs) = unsafe {
        let at = rest.as_ptr();
        (
            _mm256_loadu_si256(at as *const __m256i),
            _mm256_loadu_si256(at.add(1) as *const __m256i),
            _mm256_loadu_si256(at.add(e) as *const __m256i),
        )
    };
    let first = |count: usize| u32::MAX.checked_shr(32 - count as u32).unwrap_or(0);
    // Each position below the next (unsigned): out of order where the larger of the two is the
    // position itself.
    let not_below = _mm256_cmpeq_epi8(_mm256_max_epu8(positions, next), positions);
    let out_of_order = _mm256_movemask_epi8(not_below) as u32 & first(e - 1);
    // A high part of one byte has its top bit clear (a set one continues the VByte).
    let wide = _mm256_movemask_epi8(highs) as u32 & first(e);
    out_of_order | wide == 0
}
