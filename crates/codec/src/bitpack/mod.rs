//! Bit-packing: fixed-width storage of small integers.
//!
//! Two layouts:
//! - [`horizontal`]: one little-endian bit stream, value after value; any count of values.
//!   Used by the scalar codecs and by every block shorter than [`crate::BLOCK_LEN`].
//!   Decoded sixteen values a step with AVX-512 VBMI ([`vbmi`]) where the CPU has it.
//! - [`vertical`]: exactly 256 values in 8 interleaved 32-bit lanes, so that one 256-bit load
//!   yields eight values at once. Decoded with AVX2 ([`avx2`]), two rows a register with
//!   AVX-512 ([`avx512`]) or, on other CPUs, by the scalar code in [`vertical`], which reads
//!   the same bytes.

pub(crate) mod horizontal;
pub(crate) mod vertical;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vbmi;

/// Bits needed to represent `v` (0 for 0).
#[inline]
pub(crate) fn bit_width(v: u32) -> u32 {
    32 - v.leading_zeros()
}

/// Mask of the low `bits` bits (`bits` in 0..=32).
#[inline]
pub(crate) fn low_mask(bits: u32) -> u32 {
    ((1u64 << bits) - 1) as u32
}
