//! The decoding kernels the codecs are built from, each at a chosen instruction-set level.
//!
//! For benchmarks and tests that compare the paths on the same inputs (`apcache-bench codecs`
//! times each at every level this CPU has). The codecs are the interface for storing data;
//! these functions read the layouts the codecs write, and every level decodes alike. An `isa`
//! the CPU lacks is lowered to what it has.

use crate::bitpack::{horizontal, vertical};
use crate::{CodecError, Isa, BLOCK_LEN};

/// Appends `values`, each truncated to its low `bits` bits (0..=32), as one little-endian bit
/// stream (the horizontal layout of `pfor-delta` and of short blocks).
pub fn pack_horizontal(values: &[u32], bits: u32, out: &mut Vec<u8>) {
    assert!(bits <= 32, "bit width above 32");
    horizontal::pack(values, bits, out);
}

/// Fills `out` with values of `bits` bits from the start of `input` (written by
/// [`pack_horizontal`]); returns the bytes read.
pub fn unpack_horizontal(
    input: &[u8],
    bits: u32,
    out: &mut [u32],
    isa: Isa,
) -> Result<usize, CodecError> {
    horizontal::unpack(input, bits, out, isa.supported())
}

/// Appends the 256 `values`, each truncated to `bits` bits (0..=32), in the 8-lane vertical
/// layout of full SIMD blocks.
pub fn pack_vertical(values: &[u32; BLOCK_LEN], bits: u32, out: &mut Vec<u8>) {
    assert!(bits <= 32, "bit width above 32");
    vertical::pack(values, bits, out);
}

/// Reads a full block written by [`pack_vertical`]; with `delta = Some(base)` the values are
/// d-gaps and their prefix sum from `base` is written (fused into unpacking on the SIMD
/// levels, after it on the scalar one). Returns the bytes read.
pub fn unpack_vertical(
    input: &[u8],
    bits: u32,
    delta: Option<u32>,
    out: &mut [u32; BLOCK_LEN],
    isa: Isa,
) -> Result<usize, CodecError> {
    let isa = isa.supported();
    let (read, summed) = vertical::unpack(input, bits, delta, out, isa)?;
    if let (Some(base), false) = (delta, summed) {
        crate::delta::prefix_sum(base, out, isa);
    }
    Ok(read)
}

/// Turns d-gaps into values in place: `values[i] = base + values[0] + ... + values[i]`
/// (wrapping).
pub fn prefix_sum(base: u32, values: &mut [u32], isa: Isa) {
    crate::delta::prefix_sum(base, values, isa.supported());
}

/// Turns values into running sums of each value plus one, in place, and returns true;
/// returns false, leaving them as they are, when a sum would pass `u32::MAX` (stored position
/// gaps less one become positions this way).
pub fn prefix_sum_of_successors(values: &mut [u32], isa: Isa) -> bool {
    crate::delta::prefix_sum_of_successors(values, isa.supported())
}

pub use crate::popcount::popcount_with_isa;
