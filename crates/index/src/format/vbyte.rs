//! VByte: an unsigned integer in 7-bit groups, low group first, the high bit of each byte
//! saying that another follows. Small values take one byte, which is what the variable-length
//! records of the format (term records, store lengths, canonical query keys) mostly hold.

/// Appends `v`.
pub(crate) fn write_vbyte(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads the value at `*pos` and moves `*pos` past it; `None` if `input` ends first or the
/// value does not fit in 64 bits.
pub(crate) fn read_vbyte(input: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *input.get(*pos)?;
        *pos += 1;
        let bits = u64::from(byte & 0x7F);
        if shift == 63 && bits > 1 {
            return None;
        }
        value |= bits << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(values in prop::collection::vec(any::<u64>(), 0..50)) {
            let mut bytes = Vec::new();
            for &v in &values {
                write_vbyte(v, &mut bytes);
            }
            let mut pos = 0;
            for &v in &values {
                prop_assert_eq!(read_vbyte(&bytes, &mut pos), Some(v));
            }
            prop_assert_eq!(pos, bytes.len());
            prop_assert_eq!(read_vbyte(&bytes, &mut pos), None);
        }
    }

    #[test]
    fn refuses_overlong_values() {
        let mut pos = 0;
        assert_eq!(read_vbyte(&[0xFF; 10], &mut pos), None);
        let mut pos = 0;
        assert_eq!(read_vbyte(&[0x80, 0x80], &mut pos), None);
    }
}
