//! Fixed-width bit packing: `count` integers of `width` bits (0 to 64) back to back, LSB first.
//!
//! Value `i` takes bits `[i × width, (i + 1) × width)` of the area, bit `k` being bit `k % 8`
//! of byte `k / 8`; the area is `ceil(count × width / 8)` bytes, without padding. Reading value
//! `i` is one unaligned 8-byte load and a shift (and, for widths above 56, one more byte), so
//! every value of a column is reachable at random. Loads near the end of an area read the bytes
//! that are there and zeros past them: a reader never touches memory outside its slice, whatever
//! the index.

/// The bits needed to write `max`: 0 for 0, 64 when its top bit is set.
#[inline]
pub(super) fn width_of(max: u64) -> u8 {
    (u64::BITS - max.leading_zeros()) as u8
}

/// Bytes of `count` values at `width` bits, or `None` if that does not fit a `u64`.
pub(super) fn packed_len(count: u64, width: u8) -> Option<u64> {
    let bits = u128::from(count) * u128::from(width);
    u64::try_from(bits.div_ceil(8)).ok()
}

/// Appends values at a fixed width to a byte vector.
pub(super) struct BitWriter<'o> {
    out: &'o mut Vec<u8>,
    /// Bits not yet written, the oldest in the low bits; fewer than 64 between pushes.
    pending: u128,
    pending_bits: u32,
    width: u32,
}

impl<'o> BitWriter<'o> {
    /// A writer of `width`-bit values (at most 64) at the end of `out`.
    pub(super) fn new(out: &'o mut Vec<u8>, width: u8) -> BitWriter<'o> {
        debug_assert!(width <= 64);
        BitWriter {
            out,
            pending: 0,
            pending_bits: 0,
            width: u32::from(width.min(64)),
        }
    }

    /// Appends `value`, which must fit the width.
    #[inline]
    pub(super) fn push(&mut self, value: u64) {
        if self.width == 0 {
            return;
        }
        debug_assert!(self.width == 64 || value >> self.width == 0);
        self.pending |= u128::from(value) << self.pending_bits;
        self.pending_bits += self.width;
        if self.pending_bits >= 64 {
            self.out
                .extend_from_slice(&(self.pending as u64).to_le_bytes());
            self.pending >>= 64;
            self.pending_bits -= 64;
        }
    }

    /// Writes the last partial byte(s).
    pub(super) fn finish(self) {
        let bytes = self.pending_bits.div_ceil(8) as usize;
        self.out
            .extend_from_slice(&(self.pending as u64).to_le_bytes()[..bytes]);
    }
}

/// Value `index` of an area of `width`-bit values (`width` at most 64); bits past the end of
/// `bytes` read as zeros.
#[inline]
pub(super) fn get(bytes: &[u8], index: u64, width: u8) -> u64 {
    if width == 0 {
        return 0;
    }
    let width = u32::from(width.min(64));
    let bit = index.saturating_mul(u64::from(width));
    let byte = usize::try_from(bit / 8).unwrap_or(usize::MAX);
    let shift = (bit % 8) as u32;
    let mut value = load(bytes, byte) >> shift;
    if shift + width > 64 {
        let next = bytes.get(byte.saturating_add(8)).copied().unwrap_or(0);
        value |= u64::from(next) << (64 - shift);
    }
    if width == 64 {
        value
    } else {
        value & ((1u64 << width) - 1)
    }
}

/// The little-endian `u64` at `at`; bytes past the end read as zeros.
#[inline]
pub(super) fn load(bytes: &[u8], at: usize) -> u64 {
    let rest = bytes.get(at..).unwrap_or(&[]);
    match rest.first_chunk::<8>() {
        Some(word) => u64::from_le_bytes(*word),
        None => {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(word)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pack(values: &[u64], width: u8) -> Vec<u8> {
        let mut out = vec![0xAA];
        let mut writer = BitWriter::new(&mut out, width);
        for &value in values {
            writer.push(value);
        }
        writer.finish();
        out.remove(0);
        out
    }

    proptest! {
        #[test]
        fn values_round_trip_at_every_width(
            width in 0u8..=64,
            raw in prop::collection::vec(any::<u64>(), 0..200),
        ) {
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            let values: Vec<u64> = raw.iter().map(|v| v & mask).collect();
            let bytes = pack(&values, width);
            prop_assert_eq!(
                bytes.len() as u64,
                packed_len(values.len() as u64, width).unwrap()
            );
            for (i, &value) in values.iter().enumerate() {
                prop_assert_eq!(get(&bytes, i as u64, width), value);
            }
        }
    }

    #[test]
    fn widths() {
        assert_eq!(width_of(0), 0);
        assert_eq!(width_of(1), 1);
        assert_eq!(width_of(255), 8);
        assert_eq!(width_of(256), 9);
        assert_eq!(width_of(u64::MAX), 64);
    }

    #[test]
    fn reads_past_the_end_are_zeros() {
        let bytes = pack(&[u64::MAX, 3], 64);
        assert_eq!(get(&bytes, 1, 64), 3);
        assert_eq!(get(&bytes, 2, 64), 0);
        assert_eq!(get(&bytes, u64::MAX, 64), 0);
        assert_eq!(get(&bytes[..12], 1, 64), 3);
        assert_eq!(get(&[], 5, 7), 0);
        assert_eq!(load(&[1, 2], 1), 2);
    }
}
