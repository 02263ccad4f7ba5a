//! AVX-512 VBMI decoding of the horizontal layout: sixteen values per step, whatever the width.
//!
//! Sixteen values of `b` bits fill exactly `2b` bytes, so one 64-byte load holds a step's
//! values and every step starts on a byte. Within the step, value `i` starts at bit `i * b`:
//! a byte permutation (`vpermb`) gathers the bytes of each pair of values (`2i`, `2i + 1`)
//! into one 64-bit lane, and `vpmultishiftqb` cuts each value's four bytes out of its lane at
//! any bit offset; a mask keeps the low `b` bits. Both controls depend only on the width and
//! come from a table. A pair of values spans `2b` bits plus the first one's offset within its
//! byte, at most 64 bits for every width but 31; at 31 bits each value takes its four bytes
//! and the fifth apart, joined by two variable shifts.
//!
//! The last step of a short run loads only the bytes the slice holds and stores only the
//! values asked for (masked loads and stores touch no memory outside their masks), so
//! nothing is read past `input` or written past `out`.

use std::arch::x86_64::*;

use super::low_mask;

/// Values decoded per step.
const STEP: usize = 16;

/// The width whose pairs of values can span more than a 64-bit lane.
const WIDE: usize = 31;

/// Per width, the `vpermb` indices (`gather`) and the `vpmultishiftqb` bit offsets (`select`)
/// of a step; at width [`WIDE`], the byte indices of each value's low four bytes (`gather`)
/// and of its fifth (`select`).
struct Controls {
    gather: [[u8; 64]; 33],
    select: [[u8; 64]; 33],
}

static CONTROLS: Controls = {
    let mut gather = [[0u8; 64]; 33];
    let mut select = [[0u8; 64]; 33];
    let mut b = 1;
    while b <= 32 {
        if b == WIDE {
            let mut i = 0;
            while i < STEP {
                let at = i * b / 8;
                let mut k = 0;
                while k < 4 {
                    gather[b][4 * i + k] = (at + k) as u8;
                    select[b][4 * i + k] = (at + 4) as u8;
                    k += 1;
                }
                i += 1;
            }
        } else {
            let mut pair = 0;
            while pair < STEP / 2 {
                let bit = 2 * pair * b;
                let (at, shift) = (bit / 8, bit % 8);
                let mut k = 0;
                while k < 8 {
                    gather[b][8 * pair + k] = (at + k) as u8;
                    k += 1;
                }
                let mut t = 0;
                while t < 4 {
                    select[b][8 * pair + t] = (shift + 8 * t) as u8;
                    select[b][8 * pair + 4 + t] = (shift + b + 8 * t) as u8;
                    t += 1;
                }
                pair += 1;
            }
        }
        b += 1;
    }
    Controls { gather, select }
};

/// At width [`WIDE`], each value's offset within its first byte.
static WIDE_SHIFTS: [u32; STEP] = {
    let mut shifts = [0u32; STEP];
    let mut i = 0;
    while i < STEP {
        shifts[i] = (i * WIDE % 8) as u32;
        i += 1;
    }
    shifts
};

/// Fills `out` with the values of `bits` bits laid from the start of `input`.
///
/// # Safety
/// The CPU must support the features of [`crate::Isa::Avx512`]; `bits` must be in 1..=32 and
/// `input` must hold at least `(out.len() * bits).div_ceil(8)` bytes.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
pub(crate) unsafe fn unpack(input: &[u8], bits: u32, out: &mut [u32]) {
    debug_assert!((1..=32).contains(&bits));
    debug_assert!(input.len() >= super::horizontal::packed_len(out.len(), bits));
    let b = bits as usize;
    // SAFETY: the caller's contract: the CPU has what the width's routine needs, and the slices
    // are as that routine requires.
    unsafe {
        if b == WIDE {
            unpack_steps::<true>(input, b, out)
        } else {
            unpack_steps::<false>(input, b, out)
        }
    }
}

/// The loop of [`unpack`]; `IS_WIDE` at width [`WIDE`].
///
/// # Safety
/// As [`unpack`].
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vpopcntdq")]
unsafe fn unpack_steps<const IS_WIDE: bool>(input: &[u8], b: usize, out: &mut [u32]) {
    // SAFETY: the caller's contract gives the CPU features; the loads from the tables read 64
    // bytes of a 64-byte row, and `WIDE_SHIFTS` is 16 u32; unaligned loads.
    let (gather, select, shifts) = unsafe {
        (
            _mm512_loadu_si512(CONTROLS.gather[b].as_ptr() as *const _),
            _mm512_loadu_si512(CONTROLS.select[b].as_ptr() as *const _),
            _mm512_loadu_si512(WIDE_SHIFTS.as_ptr() as *const _),
        )
    };
    let mask = _mm512_set1_epi32(low_mask(b as u32) as i32);
    let step = |data: __m512i| -> __m512i {
        if IS_WIDE {
            let low = _mm512_permutexvar_epi8(gather, data);
            let fifth = _mm512_permutexvar_epi8(select, data);
            let back = _mm512_sub_epi32(_mm512_set1_epi32(32), shifts);
            let low = _mm512_srlv_epi32(low, shifts);
            // (low | fifth) & mask; a shift by 32 (a value starting on a byte) gives 0.
            _mm512_ternarylogic_epi32::<0xA8>(low, _mm512_sllv_epi32(fifth, back), mask)
        } else {
            let pairs = _mm512_permutexvar_epi8(gather, data);
            _mm512_and_si512(_mm512_multishift_epi64_epi8(select, pairs), mask)
        }
    };
    let n = out.len();
    let stride = 2 * b;
    let (mut i, mut at) = (0, 0);
    // Whole steps while 64 bytes can be loaded from the slice (the values' bytes and whatever
    // follows them, which the masks drop).
    while i + STEP <= n && at + 64 <= input.len() {
        // SAFETY: `at + 64 <= input.len()` and `i + 16 <= out.len()`; unaligned accesses.
        unsafe {
            let data = _mm512_loadu_si512(input.as_ptr().add(at) as *const _);
            _mm512_storeu_si512(out.as_mut_ptr().add(i) as *mut _, step(data));
        }
        i += STEP;
        at += stride;
    }
    while i < n {
        // Value `i` starts at byte `at = i * b / 8`, inside the packed bytes, so `at` is below
        // `input.len()`.
        let available = input.len() - at;
        let bytes: __mmask64 = if available >= 64 {
            !0
        } else {
            (1u64 << available) - 1
        };
        let lanes = ((1u32 << (n - i).min(STEP)) - 1) as __mmask16;
        // SAFETY: the load reads only the `min(available, 64)` bytes of `input` from `at`, the
        // store writes only the `min(n - i, 16)` u32 of `out` from `i`: masked-off elements are
        // not accessed, and both pointers are inside their slices.
        unsafe {
            let data = _mm512_maskz_loadu_epi8(bytes, input.as_ptr().add(at) as *const i8);
            _mm512_mask_storeu_epi32(out.as_mut_ptr().add(i) as *mut i32, lanes, step(data));
        }
        i += STEP;
        at += stride;
    }
}
