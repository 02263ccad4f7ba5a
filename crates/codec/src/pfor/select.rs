//! Random access into a PFor block of values that are not delta-coded (frequencies).
//!
//! Every value of a block sits at a fixed bit offset of its `lows` area, and an exception's
//! high part is found by the rank of its position (bitmap form) or among at most 255 listed
//! positions (VByte form), so one value costs a few loads whatever the block's size. An
//! intersection that matched three documents in a block of a dense list reads their three
//! frequencies this way instead of decoding 256.
//!
//! A block [`super::decode`] accepts gives here exactly the values it decodes; a block it
//! rejects may give an error or values (the checks of parts not read are skipped), never a
//! panic or a read outside `input`.

use super::{aligned_high_bytes, Layout, MODE_BITMAP, MODE_CONSTANT, MODE_PLAIN};
use crate::bitpack::vertical::LANES;
use crate::bitpack::{horizontal, low_mask, vertical};
use crate::error::take;
use crate::vbyte::read_vbyte;
use crate::{CodecError, BLOCK_LEN};

/// Where the low bits of a block's values are and how they are laid out.
#[derive(Clone, Copy)]
struct Lows<'a> {
    bytes: &'a [u8],
    b: u32,
    vertical: bool,
}

impl<'a> Lows<'a> {
    /// Takes the lows of `n` values of width `b` from the start of `input`.
    fn take(input: &'a [u8], b: u32, layout: Layout, n: usize) -> Result<Lows<'a>, CodecError> {
        let vertical = layout.vertical_for(n);
        let len = if vertical {
            vertical::packed_len(b)
        } else {
            horizontal::packed_len(n, b)
        };
        Ok(Lows {
            bytes: take(input, len)?,
            b,
            vertical,
        })
    }

    /// Bytes the lows occupy.
    fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The low bits of value `i` (below the block's length).
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        let b = self.b as usize;
        if b == 0 {
            return 0;
        }
        let mask = u64::from(low_mask(self.b));
        if !self.vertical {
            let bit = i * b;
            return ((horizontal::read_u64_padded(self.bytes, bit / 8) >> (bit % 8)) & mask) as u32;
        }
        // Row `i / 8` of lane `i % 8`; the lane's word `k` is the area's u32 `8k + lane`.
        let (row, lane) = (i / LANES, i % LANES);
        let bit = row * b;
        let (k, shift) = (bit / 32, bit % 32);
        let word = |k: usize| {
            let at = (k * LANES + lane) * 4;
            u64::from(u32::from_le_bytes(
                self.bytes[at..at + 4].try_into().expect("4 bytes"),
            ))
        };
        let mut value = word(k) >> shift;
        // A value that crosses into the lane's next word: that word exists, since the lane's
        // `ROWS * b` bits fill exactly `b` words.
        if shift + b > 32 {
            value |= word(k + 1) << (32 - shift);
        }
        (value & mask) as u32
    }
}

/// Checks that `position` is one of the block's `n` values.
#[inline]
fn checked(position: u16, n: usize) -> Result<usize, CodecError> {
    let i = usize::from(position);
    if i < n {
        Ok(i)
    } else {
        Err(CodecError::PositionPastBlock {
            position: i,
            len: n,
        })
    }
}

/// Writes to `out[k]` value `positions[k]` of the block of `n` values (not delta-coded) that
/// [`super::encode`] wrote at the start of `input` in `layout`.
pub(crate) fn select(
    input: &[u8],
    layout: Layout,
    n: usize,
    positions: &[u16],
    out: &mut [u32],
) -> Result<(), CodecError> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: `popcnt` was detected.
        return unsafe { select_with_popcnt(input, layout, n, positions, out) };
    }
    select_portable(input, layout, n, positions, out)
}

/// [`select`] compiled with `popcnt`: an exception's rank counts the bitmap's bits before it,
/// a dozen operations a word without the instruction.
///
/// # Safety
/// The CPU has `popcnt`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn select_with_popcnt(
    input: &[u8],
    layout: Layout,
    n: usize,
    positions: &[u16],
    out: &mut [u32],
) -> Result<(), CodecError> {
    select_portable(input, layout, n, positions, out)
}

/// [`select`] for any CPU.
#[inline(always)]
fn select_portable(
    input: &[u8],
    layout: Layout,
    n: usize,
    positions: &[u16],
    out: &mut [u32],
) -> Result<(), CodecError> {
    if n > BLOCK_LEN {
        return Err(CodecError::BlockTooLong {
            len: n,
            max: BLOCK_LEN,
        });
    }
    if positions.is_empty() {
        return Ok(());
    }
    let header = *take(input, 1)?.first().expect("one byte");
    let (mode, b) = (header >> 6, u32::from(header & 0x3F));
    if b > 32 {
        return Err(CodecError::Corrupt("pfor bit width above 32"));
    }
    let wanted = out.iter_mut().zip(positions);
    match mode {
        MODE_PLAIN => {
            let lows = Lows::take(&input[1..], b, layout, n)?;
            for (value, &position) in wanted {
                *value = lows.get(checked(position, n)?);
            }
        }
        MODE_CONSTANT => {
            if b != 0 {
                return Err(CodecError::Corrupt("pfor constant block with a bit width"));
            }
            let constant = read_vbyte(input, &mut 1)?;
            for (value, &position) in wanted {
                checked(position, n)?;
                *value = constant;
            }
        }
        MODE_BITMAP => {
            let hb = u32::from(*take(&input[1..], 1)?.first().expect("one byte"));
            if b >= 32 || hb == 0 || hb > 32 - b {
                return Err(CodecError::Corrupt("pfor exception widths out of range"));
            }
            let lows = Lows::take(&input[2..], b, layout, n)?;
            let rest = &input[2 + lows.len()..];
            let bitmap = take(rest, n.div_ceil(8))?;
            if !n.is_multiple_of(8) && bitmap[bitmap.len() - 1] >> (n % 8) != 0 {
                return Err(CodecError::Corrupt(
                    "pfor exception bitmap marks positions past the block",
                ));
            }
            let mut words = [0u64; BLOCK_LEN / 64];
            for (word, bytes) in words.iter_mut().zip(bitmap.chunks(8)) {
                let mut padded = [0u8; 8];
                padded[..bytes.len()].copy_from_slice(bytes);
                *word = u64::from_le_bytes(padded);
            }
            let e: usize = words.iter().map(|w| w.count_ones() as usize).sum();
            let highs = &rest[bitmap.len()..];
            // Byte-aligned high parts in vertical blocks, else bit-packed at `hb` bits.
            let width = lows.vertical.then(|| aligned_high_bytes(hb));
            let highs = take(
                highs,
                width.map_or_else(|| horizontal::packed_len(e, hb), |w| e * w),
            )?;
            for (value, &position) in wanted {
                let i = checked(position, n)?;
                *value = lows.get(i);
                let (word, bit) = (words[i / 64], i % 64);
                if word >> bit & 1 == 0 {
                    continue;
                }
                // The exception's rank among the block's exceptions.
                let rank = words[..i / 64]
                    .iter()
                    .map(|w| w.count_ones() as usize)
                    .sum::<usize>()
                    + (word & ((1u64 << bit) - 1)).count_ones() as usize;
                let high = match width {
                    Some(width) => {
                        let mut bytes = [0u8; 4];
                        bytes[..width].copy_from_slice(&highs[rank * width..(rank + 1) * width]);
                        u32::from_le_bytes(bytes)
                    }
                    None => {
                        let at = rank * hb as usize;
                        ((horizontal::read_u64_padded(highs, at / 8) >> (at % 8))
                            & u64::from(low_mask(hb))) as u32
                    }
                };
                *value |= high << b;
            }
        }
        _ => {
            let e = usize::from(*take(&input[1..], 1)?.first().expect("one byte"));
            if b >= 32 || e == 0 || e > n {
                return Err(CodecError::Corrupt(
                    "pfor exception count or width out of range",
                ));
            }
            let lows = Lows::take(&input[2..], b, layout, n)?;
            let at = 2 + lows.len();
            let listed = take(&input[at..], e)?;
            // The high parts follow the positions as VBytes, read up to the last one asked
            // for (from the first again when asked out of order).
            let first_high = at + e;
            let (mut next, mut pos) = (0, first_high);
            let mut high = 0;
            for (value, &position) in wanted {
                let i = checked(position, n)?;
                *value = lows.get(i);
                let Ok(k) = listed.binary_search(&(i as u8)) else {
                    continue;
                };
                if k + 1 < next {
                    (next, pos) = (0, first_high);
                }
                while next <= k {
                    high = read_vbyte(input, &mut pos)?;
                    next += 1;
                }
                *value |= high << b;
            }
        }
    }
    Ok(())
}
