//! Vertical bit-packing of a full block: 256 values in 8 interleaved 32-bit lanes.
//!
//! The block is read as 32 rows of 8 values (row `r` holds values `8r..8r+8`). Lane `j` packs
//! the values `8r + j` of every row, row after row, into a little-endian bit stream of `bits`
//! 32-bit words; word `k` of lane `j` is stored as the `(8k + j)`-th u32 of the packed area.
//! A block of width `bits` therefore occupies exactly `32 * bits` bytes, and one 256-bit load
//! of word `k` gives the same word of all eight lanes.

use super::low_mask;
use crate::error::take;
use crate::{CodecError, Isa, BLOCK_LEN};

/// Lanes in the vertical layout.
pub(crate) const LANES: usize = 8;

// The layout (32 rows, `32 * bits` bytes) and the AVX2 kernels, unrolled over 32 rows, are
// written for blocks of 256 values.
const _: () = assert!(
    BLOCK_LEN == 256,
    "the vertical layout assumes 256-value blocks"
);
/// Rows (values per lane) in a full block.
pub(crate) const ROWS: usize = BLOCK_LEN / LANES;

/// Bytes a full block of width `bits` occupies.
#[inline]
pub(crate) fn packed_len(bits: u32) -> usize {
    32 * bits as usize
}

/// The packed bytes of a full block of width `bits` at the start of `input`: an error for a
/// width above 32 or an input too short.
pub(crate) fn packed_area(input: &[u8], bits: u32) -> Result<&[u8], CodecError> {
    if bits > 32 {
        return Err(CodecError::Corrupt("bit width above 32"));
    }
    take(input, packed_len(bits))
}

/// Appends the 256 `values`, each truncated to `bits` bits, in the vertical layout.
pub(crate) fn pack(values: &[u32; BLOCK_LEN], bits: u32, out: &mut Vec<u8>) {
    debug_assert!(bits <= 32);
    let b = bits as usize;
    let mask = low_mask(bits);
    let start = out.len();
    out.resize(start + packed_len(bits), 0);
    if b == 0 {
        return;
    }
    let area = &mut out[start..];
    for lane in 0..LANES {
        let mut words = [0u32; 32];
        for row in 0..ROWS {
            let v = values[row * LANES + lane] & mask;
            let bit = row * b;
            let (w, s) = (bit / 32, bit % 32);
            words[w] |= v << s;
            if s + b > 32 {
                words[w + 1] |= v >> (32 - s);
            }
        }
        for (k, word) in words[..b].iter().enumerate() {
            let at = (k * LANES + lane) * 4;
            area[at..at + 4].copy_from_slice(&word.to_le_bytes());
        }
    }
}

/// Reads a full block of width `bits` with the best path `isa` allows; returns the bytes read
/// and whether the prefix sum asked for with `delta = Some(base)` was applied (the SIMD paths
/// fuse it into unpacking; the scalar path leaves it to the caller).
#[inline]
pub(crate) fn unpack(
    input: &[u8],
    bits: u32,
    delta: Option<u32>,
    out: &mut [u32; BLOCK_LEN],
    isa: Isa,
) -> Result<(usize, bool), CodecError> {
    #[cfg(target_arch = "x86_64")]
    {
        if isa >= Isa::Avx512 {
            // SAFETY: an Isa at Avx512 is only obtained after detecting its features.
            let read = unsafe { super::avx512::unpack(input, bits, delta, out)? };
            return Ok((read, delta.is_some()));
        }
        if isa >= Isa::Avx2 {
            // SAFETY: an Isa at Avx2 or above is only obtained after detecting AVX2.
            let read = unsafe { super::avx2::unpack(input, bits, delta, out)? };
            return Ok((read, delta.is_some()));
        }
    }
    let _ = isa;
    Ok((unpack_scalar(input, bits, out)?, false))
}

/// Reads a full block of width `bits` with portable code; returns the bytes read.
pub(crate) fn unpack_scalar(
    input: &[u8],
    bits: u32,
    out: &mut [u32; BLOCK_LEN],
) -> Result<usize, CodecError> {
    let area = packed_area(input, bits)?;
    let len = area.len();
    let b = bits as usize;
    if b == 0 {
        out.fill(0);
        return Ok(0);
    }
    let mask = low_mask(bits);
    let word = |k: usize, lane: usize| {
        let at = (k * LANES + lane) * 4;
        u32::from_le_bytes([area[at], area[at + 1], area[at + 2], area[at + 3]])
    };
    for lane in 0..LANES {
        for row in 0..ROWS {
            let bit = row * b;
            let (w, s) = (bit / 32, bit % 32);
            let mut v = word(w, lane) >> s;
            if s + b > 32 {
                v |= word(w + 1, lane) << (32 - s);
            }
            out[row * LANES + lane] = v & mask;
        }
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::delta::prefix_sum_scalar;
    use proptest::prelude::*;

    /// Unpacks `packed` at every level, plain and with the prefix sum from `base`, and checks
    /// both against `values`.
    fn check_every_level(packed: &[u8], bits: u32, values: &[u32; BLOCK_LEN], base: u32) {
        let mut sums = *values;
        prefix_sum_scalar(base, &mut sums);
        for isa in Isa::all_supported() {
            let mut back = [0u32; BLOCK_LEN];
            assert_eq!(
                unpack(packed, bits, None, &mut back, isa),
                Ok((packed_len(bits), false))
            );
            assert_eq!(&back, values, "bits {bits} {isa:?}");
            let (read, summed) = unpack(packed, bits, Some(base), &mut back, isa).unwrap();
            assert_eq!(read, packed_len(bits));
            if !summed {
                prefix_sum_scalar(base, &mut back);
            }
            assert_eq!(back, sums, "bits {bits} {isa:?} with the prefix sum");
        }
    }

    #[test]
    fn round_trips_every_width_at_every_level() {
        for bits in 0..=32u32 {
            let mut values = [0u32; BLOCK_LEN];
            for (i, v) in values.iter_mut().enumerate() {
                *v = (i as u32).wrapping_mul(0x9E37_79B9) & low_mask(bits);
            }
            let mut packed = Vec::new();
            pack(&values, bits, &mut packed);
            assert_eq!(packed.len(), packed_len(bits));
            // The packed bytes alone: no level may read past them.
            check_every_level(&packed.into_boxed_slice(), bits, &values, 0xFFFF_FF00);
        }
    }

    #[test]
    fn every_truncation_is_an_error_at_every_level() {
        for bits in [1u32, 7, 31, 32] {
            let packed = vec![0x5Au8; packed_len(bits)];
            for isa in Isa::all_supported() {
                for cut in [0, packed.len() - 1] {
                    let mut out = [0u32; BLOCK_LEN];
                    assert!(unpack(&packed[..cut], bits, Some(1), &mut out, isa).is_err());
                }
                assert!(unpack(&packed, 33, None, &mut [0; BLOCK_LEN], isa).is_err());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Any values at any width round-trip at every level, with and without the fused
        /// prefix sum.
        #[test]
        fn every_level_round_trips(
            values in prop::collection::vec(any::<u32>(), BLOCK_LEN),
            bits in 0u32..=32,
            base in any::<u32>(),
        ) {
            let mut block = [0u32; BLOCK_LEN];
            for (b, v) in block.iter_mut().zip(&values) {
                *b = v & low_mask(bits);
            }
            let mut packed = Vec::new();
            pack(&block, bits, &mut packed);
            check_every_level(&packed, bits, &block, base);
        }
    }
}
