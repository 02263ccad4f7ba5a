//! Patched frame of reference (PFor): bit-packing with exceptions.
//!
//! A block is bit-packed at a width `b` chosen to minimise its size; values wider than `b`
//! ("exceptions") keep their low `b` bits in the packed area and store their high bits apart.
//! Per block the encoder picks the smallest of four forms (in full blocks of the SIMD codecs,
//! exceptions only where they save enough to pay for their slower decoding), named by the two
//! high bits of the header byte (its six low bits hold `b`):
//!
//! | mode | layout after the header byte |
//! |---|---|
//! | 0 plain | `lows` (every value in `b` bits) |
//! | 1 constant | VByte of the value every position holds (`b` = 0) |
//! | 2 bitmap | `hb: u8`, `lows`, bitmap of exception positions (`ceil(n/8)` bytes, LSB first), the exceptions' high parts bit-packed horizontally at `hb` bits |
//! | 3 vbyte | `e: u8` exception count, `lows`, `e` position bytes (increasing), `e` VByte high parts |
//!
//! A block of DIDs may also take a fifth form, a bitset of the documents ([`dense`]), under a
//! header byte no plain block has (`b` = 63).
//!
//! In full blocks of the SIMD codecs the bitmap form stores each high part in whole bytes
//! instead (1, 2 or 4 little-endian bytes, the fewest that hold `hb` bits), so that a vector
//! load and one byte-to-lane permutation patch eight positions at once.
//!
//! `lows` is laid out horizontally ([`crate::bitpack::horizontal`]) except in full blocks of the
//! SIMD codecs, which use the 8-lane vertical layout ([`crate::bitpack::vertical`]).
//! `bitpack-delta-simd` writes only mode 0 blocks and reads with the same decoder.
//! Frequencies can also be read one at a time without decoding their block ([`select`]).
//! An empty block encodes to zero bytes.

#[cfg(target_arch = "x86_64")]
mod avx2;
mod codecs;
mod dense;
#[cfg(target_arch = "x86_64")]
mod expand;
mod select;

pub use codecs::{BitpackDeltaSimd, PforDelta, PforDeltaSimd};

use crate::bitpack::{bit_width, horizontal, low_mask, vertical};
use crate::delta::prefix_sum;
use crate::error::take;
use crate::vbyte::{read_vbyte, vbyte_len, write_vbyte};
use crate::{CodecError, Isa, BLOCK_LEN};

const MODE_PLAIN: u8 = 0;
const MODE_CONSTANT: u8 = 1;
const MODE_BITMAP: u8 = 2;
const MODE_VBYTE: u8 = 3;

/// How the low bits of a block are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Always horizontal.
    Horizontal,
    /// Vertical (8 lanes) for full blocks, horizontal for shorter ones.
    Vertical,
}

impl Layout {
    fn vertical_for(self, n: usize) -> bool {
        self == Layout::Vertical && n == BLOCK_LEN
    }
}

/// The form chosen for one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Plain { b: u32 },
    Constant { value: u32 },
    Bitmap { b: u32, hb: u32 },
    VByte { b: u32 },
}

/// The least share (numerator, denominator) of a full block's plain packing that exceptions
/// must save for the SIMD codecs to use them.
///
/// A plain vertical block decodes in one AVX2 pass with the prefix sum fused in; a block with
/// exceptions needs a patch pass and a prefix sum of its own, and decodes at about 60% of the
/// speed. Where exceptions save little, the plain form is worth its bytes. On English
/// Wikipedia (part 0, `apcache-bench codecs`), a saving of at least 30% took postings from
/// 17.5% to 19.0% of raw and DID decoding from 2.9 to 4.3 G ints/s; the scalar `pfor-delta`
/// keeps the smallest form.
const SIMD_EXCEPTION_SAVING: (usize, usize) = (3, 10);

/// Bytes each high part takes when high parts are stored byte-aligned.
#[inline]
fn aligned_high_bytes(hb: u32) -> usize {
    match hb {
        0..=8 => 1,
        9..=16 => 2,
        _ => 4,
    }
}

/// Picks the smallest form for `values`; with `exceptions == false` only plain packing.
/// `aligned_highs` (a full block of the SIMD codecs) prices the bitmap form with byte-aligned
/// high parts and takes exceptions only where they save [`SIMD_EXCEPTION_SAVING`].
fn plan(values: &[u32], exceptions: bool, aligned_highs: bool) -> Plan {
    let n = values.len();
    // Four histograms summed at the end: consecutive values of the same width would otherwise
    // wait on each other's increment of one counter.
    let mut partial = [[0u32; 33]; 4];
    let mut quads = values.chunks_exact(4);
    for quad in &mut quads {
        for (histogram, &v) in partial.iter_mut().zip(quad) {
            histogram[bit_width(v) as usize] += 1;
        }
    }
    for &v in quads.remainder() {
        partial[0][bit_width(v) as usize] += 1;
    }
    let mut histogram = [0usize; 33];
    for (w, count) in histogram.iter_mut().enumerate() {
        *count = partial.iter().map(|h| h[w] as usize).sum();
    }
    let max_b = histogram.iter().rposition(|&c| c > 0).unwrap_or(0) as u32;
    let plain = Plan::Plain { b: max_b };
    if !exceptions || n == 0 {
        return plain;
    }
    let plain_size = 1 + horizontal::packed_len(n, max_b);
    let mut best = (plain_size, plain);
    if values.iter().all(|&v| v == values[0]) {
        let size = 1 + vbyte_len(values[0]);
        if size < best.0 {
            best = (size, Plan::Constant { value: values[0] });
        }
    }
    // `wider_than[b]`: the values wider than `b` bits (the exceptions at width `b`).
    let mut wider_than = [0usize; 33];
    for b in (0..max_b as usize).rev() {
        wider_than[b] = wider_than[b + 1] + histogram[b + 1];
    }
    for b in 0..max_b {
        // Widths above `max_b` are empty.
        let wider = &histogram[b as usize + 1..=max_b as usize];
        let e = wider_than[b as usize];
        let lows = horizontal::packed_len(n, b);
        let hb = max_b - b;
        let highs = if aligned_highs {
            e * aligned_high_bytes(hb)
        } else {
            horizontal::packed_len(e, hb)
        };
        let bitmap = 2 + lows + n.div_ceil(8) + highs;
        if bitmap < best.0 {
            best = (bitmap, Plan::Bitmap { b, hb });
        }
        // Each exception's high part takes at least a byte: skip the pricing when even that
        // does not beat the best so far.
        if e <= 255 && 2 + lows + 2 * e < best.0 {
            let highs: usize = wider
                .iter()
                .enumerate()
                .map(|(i, &count)| count * (i + 1).div_ceil(7))
                .sum();
            let vbyte = 2 + lows + e + highs;
            if vbyte < best.0 {
                best = (vbyte, Plan::VByte { b });
            }
        }
    }
    // The SIMD layout takes an exception form only where it saves enough (see
    // `SIMD_EXCEPTION_SAVING`); the constant form decodes fastest of all.
    if aligned_highs
        && matches!(best.1, Plan::Bitmap { .. } | Plan::VByte { .. })
        && best.0 * SIMD_EXCEPTION_SAVING.1
            > plain_size * (SIMD_EXCEPTION_SAVING.1 - SIMD_EXCEPTION_SAVING.0)
    {
        return plain;
    }
    best.1
}

/// Appends `values` packed at `b` bits in the layout `layout` asks for.
fn pack_lows(values: &[u32], b: u32, layout: Layout, out: &mut Vec<u8>) {
    if layout.vertical_for(values.len()) {
        let full: &[u32; BLOCK_LEN] = values.try_into().expect("a full block");
        vertical::pack(full, b, out);
    } else {
        horizontal::pack(values, b, out);
    }
}

/// Appends the PFor encoding of `values` (at most [`BLOCK_LEN`]).
pub(crate) fn encode(values: &[u32], layout: Layout, exceptions: bool, out: &mut Vec<u8>) {
    if values.is_empty() {
        return;
    }
    let aligned_highs = layout.vertical_for(values.len());
    match plan(values, exceptions, aligned_highs) {
        Plan::Plain { b } => {
            out.push(MODE_PLAIN << 6 | b as u8);
            pack_lows(values, b, layout, out);
        }
        Plan::Constant { value } => {
            out.push(MODE_CONSTANT << 6);
            write_vbyte(value, out);
        }
        Plan::Bitmap { b, hb } => {
            out.push(MODE_BITMAP << 6 | b as u8);
            out.push(hb as u8);
            pack_lows(values, b, layout, out);
            // Without branches: every value's high part is written, and kept by moving on
            // only where it is an exception.
            let mut highs = [0u32; BLOCK_LEN];
            let mut e = 0;
            for eight in values.chunks(8) {
                let mut bits = 0u8;
                for (i, &v) in eight.iter().enumerate() {
                    let high = v >> b;
                    let exception = high != 0;
                    bits |= u8::from(exception) << i;
                    highs[e] = high;
                    e += usize::from(exception);
                }
                out.push(bits);
            }
            let highs = &highs[..e];
            if aligned_highs {
                let width = aligned_high_bytes(hb);
                for high in highs {
                    out.extend_from_slice(&high.to_le_bytes()[..width]);
                }
            } else {
                horizontal::pack(highs, hb, out);
            }
        }
        Plan::VByte { b } => {
            out.push(MODE_VBYTE << 6 | b as u8);
            let mut exceptions = [0u8; BLOCK_LEN];
            let mut e = 0;
            for (i, &v) in values.iter().enumerate() {
                if bit_width(v) > b {
                    exceptions[e] = i as u8;
                    e += 1;
                }
            }
            let exceptions = &exceptions[..e];
            out.push(e as u8);
            pack_lows(values, b, layout, out);
            out.extend_from_slice(exceptions);
            for &i in exceptions {
                write_vbyte(values[usize::from(i)] >> b, out);
            }
        }
    }
}

/// Unpacks `out.len()` lows of width `b` from `input`; with `delta = Some(base)` and a fused
/// SIMD path available, also applies the prefix sum and reports so by returning `true`.
fn unpack_lows(
    input: &[u8],
    b: u32,
    layout: Layout,
    isa: Isa,
    delta: Option<u32>,
    out: &mut [u32],
) -> Result<(usize, bool), CodecError> {
    if layout.vertical_for(out.len()) {
        let full: &mut [u32; BLOCK_LEN] = out.try_into().expect("a full block");
        return vertical::unpack(input, b, delta, full, isa);
    }
    Ok((horizontal::unpack(input, b, out, isa)?, false))
}

/// The length of the buffer of exceptions' high parts: a block, and a vector more, so that
/// sixteen may be read from any place up to the last.
const HIGHS_LEN: usize = BLOCK_LEN + 16;

/// ORs the high part of each of the `e` exceptions (bit-packed at `hb` bits at the start of
/// `rest`, in position order) into the positions `bitmap` marks, shifted above the `b` low
/// bits. The high parts are unpacked together first (the bytes after them in `rest` let the
/// unpacker read whole words), then scattered.
#[inline]
fn patch_from_bitmap(
    bitmap: &[u8],
    rest: &[u8],
    e: usize,
    hb: u32,
    b: u32,
    isa: Isa,
    out: &mut [u32],
) -> Result<(), CodecError> {
    // Zeroed past the exceptions, and a vector longer than a block: the AVX-512 patcher reads
    // sixteen at a time.
    let mut all_highs = [0u32; HIGHS_LEN];
    let highs = all_highs
        .get_mut(..e)
        .ok_or(CodecError::Corrupt("more exceptions than values"))?;
    horizontal::unpack(rest, hb, highs, isa)?;
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx512 && out.len() <= BLOCK_LEN {
        // SAFETY: `Isa` values at Avx512 are only produced once the CPU's AVX-512 and `popcnt`
        // support was detected; `out` holds at most a block.
        unsafe { expand::patch_from_bitmap(bitmap, &all_highs, b, out) };
        return Ok(());
    }
    let mut highs = all_highs[..e].iter();
    for (word_index, word) in bitmap.chunks(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes[..word.len()].copy_from_slice(word);
        let mut bits = u64::from_le_bytes(bytes);
        while bits != 0 {
            let i = word_index * 64 + bits.trailing_zeros() as usize;
            let high = highs.next().copied().unwrap_or(0);
            if let Some(v) = out.get_mut(i) {
                *v |= high.wrapping_shl(b);
            }
            bits &= bits - 1;
        }
    }
    Ok(())
}

/// Patches a full block from byte-aligned high parts: `rest` starts with the `len` bytes of high
/// parts, `width` bytes each, and may run on (the SIMD path reads up to 32 bytes past them when
/// it can do so within `rest`).
// Seven parameters, no context struct: one caller passes one decoding step's values, all
// different in kind, straight through to the SIMD or scalar patcher.
fn patch_aligned(
    bitmap: &[u8],
    rest: &[u8],
    len: usize,
    width: usize,
    b: u32,
    isa: Isa,
    out: &mut [u32],
) {
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx512 && width == 1 && rest.len() >= len + 16 {
        if let (Ok(bitmap), Ok(out)) = (
            <&[u8; 32]>::try_from(bitmap),
            <&mut [u32; BLOCK_LEN]>::try_from(&mut *out),
        ) {
            // SAFETY: AVX-512 F and `popcnt` come with `Isa::Avx512`; `rest` holds the `len`
            // high parts, one per set bit, and 16 bytes more.
            unsafe { expand::patch_byte_highs(bitmap, rest, b, out) };
            return;
        }
    }
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let (Ok(bitmap), Ok(out)) = (
            <&[u8; 32]>::try_from(bitmap),
            <&mut [u32; BLOCK_LEN]>::try_from(&mut *out),
        ) {
            if rest.len() >= len + avx2::SLACK {
                // SAFETY: AVX2 was detected; `rest` holds `len + SLACK` readable bytes.
                unsafe { avx2::patch_aligned(bitmap, rest, width, b, out) };
            } else {
                // Only a block at the very end of its buffer pays for the copy.
                let mut padded = [0u8; BLOCK_LEN * 4 + avx2::SLACK];
                padded[..len].copy_from_slice(&rest[..len]);
                // SAFETY: as above; `padded` holds `len + SLACK` bytes.
                unsafe { avx2::patch_aligned(bitmap, &padded, width, b, out) };
            }
            return;
        }
    }
    let _ = isa;
    let mut at = 0;
    for (byte_index, &byte) in bitmap.iter().enumerate() {
        let mut bits = byte;
        while bits != 0 {
            let i = byte_index * 8 + bits.trailing_zeros() as usize;
            let mut word = [0u8; 4];
            word[..width].copy_from_slice(&rest[at..at + width]);
            if let Some(v) = out.get_mut(i) {
                *v |= u32::from_le_bytes(word) << b;
            }
            at += width;
            bits &= bits - 1;
        }
    }
}

/// Patches a full block's VByte-form exceptions when every high part takes one byte (values
/// below 128, so each VByte is the byte itself) and `b` leaves room for seven bits: the form
/// frequencies take. Returns false, having changed nothing, where that does not hold or the
/// positions are out of order; the general loop then decodes (or rejects) the exceptions.
#[inline]
fn patch_one_byte_highs(
    rest: &[u8],
    e: usize,
    b: u32,
    isa: Isa,
    out: &mut [u32; BLOCK_LEN],
) -> bool {
    let Some(bytes) = rest.get(..2 * e).filter(|_| b <= 25) else {
        return false;
    };
    let (positions, highs) = bytes.split_at(e);
    let checked_one_by_one =
        || highs.iter().all(|&h| h < 0x80) && positions.windows(2).all(|w| w[0] < w[1]);
    #[cfg(target_arch = "x86_64")]
    let valid = if isa >= Isa::Avx2 && e <= 32 && rest.len() >= e + 32 {
        // SAFETY: AVX2 was detected; `rest` holds `e + 32` bytes.
        unsafe { avx2::one_byte_exceptions_valid(rest, e) }
    } else {
        checked_one_by_one()
    };
    #[cfg(not(target_arch = "x86_64"))]
    let valid = {
        let _ = isa;
        checked_one_by_one()
    };
    if valid {
        for (&p, &h) in positions.iter().zip(highs) {
            out[usize::from(p)] |= u32::from(h) << b;
        }
    }
    valid
}

/// Patches the `e` exceptions of a VByte-form block whose lows are in `out`: `e` position
/// bytes at `pos` in `input`, then their VByte high parts, each checked. Returns the position
/// after them.
fn patch_vbyte(
    input: &[u8],
    mut pos: usize,
    e: usize,
    b: u32,
    out: &mut [u32],
) -> Result<usize, CodecError> {
    let n = out.len();
    let positions = take(&input[pos..], e)?;
    pos += e;
    let limit = low_mask(32 - b);
    let mut previous = None;
    for &p in positions {
        let i = usize::from(p);
        if i >= n || previous.is_some_and(|prev| prev >= i) {
            return Err(CodecError::Corrupt(
                "pfor exception positions out of order or range",
            ));
        }
        previous = Some(i);
        let high = read_vbyte(input, &mut pos)?;
        if high > limit {
            return Err(CodecError::Corrupt("pfor exception wider than 32 bits"));
        }
        out[i] |= high << b;
    }
    Ok(pos)
}

/// Decodes a block written by [`encode`]; with `delta = Some(base)` the stored values are gaps
/// and the prefix sum from `base` is written. Returns the bytes read.
pub(crate) fn decode(
    input: &[u8],
    layout: Layout,
    isa: Isa,
    delta: Option<u32>,
    out: &mut [u32],
) -> Result<usize, CodecError> {
    let n = out.len();
    if n == 0 {
        return Ok(0);
    }
    if n > BLOCK_LEN {
        return Err(CodecError::BlockTooLong {
            len: n,
            max: BLOCK_LEN,
        });
    }
    let header = *take(input, 1)?.first().expect("one byte");
    if let (dense::DENSE_HEADER, Some(base)) = (header, delta) {
        let bits = dense::dense_words(&input[1..], n)?;
        dense::decode_dense(bits, base, out, isa);
        return Ok(2 + bits.len());
    }
    let (mode, b) = (header >> 6, u32::from(header & 0x3F));
    if b > 32 {
        return Err(CodecError::Corrupt("pfor bit width above 32"));
    }
    let mut pos = 1;
    let summed = match mode {
        MODE_PLAIN => {
            let (read, summed) = unpack_lows(&input[pos..], b, layout, isa, delta, out)?;
            pos += read;
            summed
        }
        MODE_CONSTANT => {
            if b != 0 {
                return Err(CodecError::Corrupt("pfor constant block with a bit width"));
            }
            out.fill(read_vbyte(input, &mut pos)?);
            false
        }
        MODE_BITMAP => {
            let hb = u32::from(*take(&input[pos..], 1)?.first().expect("one byte"));
            pos += 1;
            if b >= 32 || hb == 0 || hb > 32 - b {
                return Err(CodecError::Corrupt("pfor exception widths out of range"));
            }
            pos += unpack_lows(&input[pos..], b, layout, isa, None, out)?.0;
            let bitmap = take(&input[pos..], n.div_ceil(8))?;
            pos += bitmap.len();
            if !n.is_multiple_of(8) && bitmap[bitmap.len() - 1] >> (n % 8) != 0 {
                return Err(CodecError::Corrupt(
                    "pfor exception bitmap marks positions past the block",
                ));
            }
            // With VPOPCNTDQ or `popcnt`: the portable count costs a dozen operations a byte.
            let e = crate::popcount::popcount_bytes_with_isa(bitmap, isa) as usize;
            if layout.vertical_for(n) {
                let width = aligned_high_bytes(hb);
                let len = e * width;
                take(&input[pos..], len)?;
                patch_aligned(bitmap, &input[pos..], len, width, b, isa, out);
                pos += len;
            } else {
                let rest = &input[pos..];
                let highs = take(rest, horizontal::packed_len(e, hb))?;
                pos += highs.len();
                patch_from_bitmap(bitmap, rest, e, hb, b, isa, out)?;
            }
            false
        }
        _ => {
            let e = usize::from(*take(&input[pos..], 1)?.first().expect("one byte"));
            pos += 1;
            if b >= 32 || e == 0 || e > n {
                return Err(CodecError::Corrupt(
                    "pfor exception count or width out of range",
                ));
            }
            pos += unpack_lows(&input[pos..], b, layout, isa, None, out)?.0;
            let fast = <&mut [u32; BLOCK_LEN]>::try_from(&mut *out)
                .is_ok_and(|full| patch_one_byte_highs(&input[pos..], e, b, isa, full));
            pos = if fast {
                pos + 2 * e
            } else {
                patch_vbyte(input, pos, e, b, out)?
            };
            false
        }
    };
    if let (Some(base), false) = (delta, summed) {
        prefix_sum(base, out, isa);
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size_of(values: &[u32], exceptions: bool) -> usize {
        let mut out = Vec::new();
        encode(values, Layout::Horizontal, exceptions, &mut out);
        out.len()
    }

    #[test]
    fn exceptions_shrink_blocks_with_outliers() {
        let mut values = vec![3u32; 256];
        values[17] = 1 << 20;
        values[200] = 1 << 25;
        assert!(size_of(&values, true) * 4 < size_of(&values, false));
    }

    #[test]
    fn simd_blocks_take_exceptions_only_where_they_save_enough() {
        let is_exceptions = |p: Plan| matches!(p, Plan::Bitmap { .. } | Plan::VByte { .. });
        // One outlier a bit wider than the rest: exceptions save an eighth of the block.
        let mut values = vec![100u32; BLOCK_LEN];
        values[5] = 200;
        assert!(is_exceptions(plan(&values, true, false)));
        assert_eq!(plan(&values, true, true), Plan::Plain { b: 8 });
        // Outliers far wider than the rest: exceptions save most of it.
        let mut values = vec![3u32; BLOCK_LEN];
        values[17] = 1 << 20;
        assert!(is_exceptions(plan(&values, true, true)));
    }

    /// A full block of values below 2 with outliers `high << 1` at `positions`, encoded by the
    /// SIMD layout (which must take the VByte form), and the values.
    fn vbyte_block(positions: &[usize], high: u32) -> (Vec<u8>, Vec<u32>) {
        let mut values: Vec<u32> = (0..BLOCK_LEN as u32).map(|i| (i % 3) & 1).collect();
        for &p in positions {
            values[p] = high << 1 | 1;
        }
        let mut bytes = Vec::new();
        encode(&values, Layout::Vertical, true, &mut bytes);
        assert_eq!(bytes[0] >> 6, MODE_VBYTE, "the block takes the VByte form");
        (bytes, values)
    }

    /// Decodes `bytes` alone and with trailing bytes (room for the 32-byte reads of the SIMD
    /// checks) at every level.
    fn decode_everywhere(bytes: &[u8]) -> Vec<Result<Vec<u32>, CodecError>> {
        let mut padded = bytes.to_vec();
        padded.extend_from_slice(&[0x80; 40]);
        let mut results = Vec::new();
        for isa in Isa::all_supported() {
            for input in [bytes, &padded[..]] {
                let mut out = vec![0u32; BLOCK_LEN];
                let decoded = decode(input, Layout::Vertical, isa, None, &mut out);
                results.push(decoded.map(|read| {
                    assert_eq!(read, bytes.len(), "{isa:?}: bytes read");
                    out
                }));
            }
        }
        results
    }

    #[test]
    fn one_byte_exceptions_decode_alike_at_every_level_with_and_without_room() {
        let many: Vec<usize> = (0..31).map(|i| 3 + 8 * i).collect();
        for (positions, high) in [
            (&[0][..], 5),
            (&[255][..], 127),
            (
                &[1, 2, 3, 40, 41, 99, 128, 200, 230, 250, 254, 255][..],
                100,
            ),
            (&many[..], 64),
            // A high part of two VByte bytes: the general loop patches it.
            (&[7, 8, 100][..], 1000),
        ] {
            let (bytes, values) = vbyte_block(positions, high);
            for decoded in decode_everywhere(&bytes) {
                assert_eq!(decoded.as_ref(), Ok(&values), "exceptions at {positions:?}");
            }
        }
    }

    #[test]
    fn one_byte_exceptions_out_of_order_are_corrupt_at_every_level() {
        let (bytes, _) = vbyte_block(&[10, 20, 30, 40, 50], 9);
        let positions_at = 2 + vertical::packed_len(1);
        assert_eq!(
            &bytes[positions_at..positions_at + 5],
            &[10, 20, 30, 40, 50]
        );
        for (k, position) in [(4, 40), (3, 55), (0, 20)] {
            let mut broken = bytes.clone();
            broken[positions_at + k] = position;
            for decoded in decode_everywhere(&broken) {
                assert!(decoded.is_err(), "position {k} set to {position}");
            }
        }
    }

    #[test]
    fn a_constant_block_takes_two_bytes() {
        assert_eq!(size_of(&[7u32; 256], true), 2);
    }

    #[test]
    fn the_plan_is_no_larger_than_plain_packing() {
        let values: Vec<u32> = (0..256u32).map(|i| i * 37 % 1000).collect();
        assert!(size_of(&values, true) <= size_of(&values, false));
    }
}
