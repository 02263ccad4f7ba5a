//! `vbyte` and `vbyte-delta`: classic variable-byte coding.
//!
//! Seven payload bits per byte, least significant group first; a set high bit means another
//! byte follows. A u32 takes 1 to 5 bytes, and a fifth byte may carry only 4 payload bits.

use crate::codec::check_len;
use crate::delta::to_gaps;
use crate::{BlockCodec, CodecError, BLOCK_LEN};

/// Bytes VByte needs for `v`.
#[inline]
pub(crate) fn vbyte_len(v: u32) -> usize {
    match v {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        0x4000..=0x1F_FFFF => 3,
        0x20_0000..=0x0FFF_FFFF => 4,
        _ => 5,
    }
}

/// Appends the VByte encoding of `v`.
#[inline]
pub(crate) fn write_vbyte(mut v: u32, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads one VByte value at `*pos`, advancing `*pos`.
///
/// Always inlined, with one-byte values (the common case for PFor exceptions and small counts)
/// tested first: called through a function, the decoding loops kept the position in memory.
#[inline(always)]
pub(crate) fn read_vbyte(input: &[u8], pos: &mut usize) -> Result<u32, CodecError> {
    if let Some(&byte) = input.get(*pos) {
        if byte < 0x80 {
            *pos += 1;
            return Ok(u32::from(byte));
        }
    }
    let mut value = 0u32;
    for shift in [0u32, 7, 14, 21, 28] {
        let Some(&byte) = input.get(*pos) else {
            return Err(CodecError::Truncated {
                needed: *pos + 1,
                available: input.len(),
            });
        };
        *pos += 1;
        if shift == 28 && byte > 0x0F {
            return Err(CodecError::Corrupt("vbyte value overflows 32 bits"));
        }
        value |= u32::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(CodecError::Corrupt("vbyte value overflows 32 bits"))
}

fn encode_all(values: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
    check_len(values.len())?;
    for &v in values {
        write_vbyte(v, out);
    }
    Ok(())
}

fn decode_all(input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
    check_len(out.len())?;
    let mut pos = 0;
    for v in out.iter_mut() {
        // Fast path: a one-byte value, the common case for gaps and frequencies.
        match input.get(pos) {
            Some(&b) if b < 0x80 => {
                *v = u32::from(b);
                pos += 1;
            }
            _ => *v = read_vbyte(input, &mut pos)?,
        }
    }
    Ok(pos)
}

/// VByte of the values themselves (DIDs are not delta-coded).
#[derive(Debug, Default, Clone, Copy)]
pub struct VByte;

impl BlockCodec for VByte {
    fn name(&self) -> &'static str {
        "vbyte"
    }
    fn encode_docs(&self, _base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        encode_all(docs, out)
    }
    fn decode_docs(&self, _base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        decode_all(input, out)
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        encode_all(freqs, out)
    }
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        decode_all(input, out)
    }
}

/// VByte of d-gaps for DIDs, plain VByte for frequencies.
#[derive(Debug, Default, Clone, Copy)]
pub struct VByteDelta;

impl BlockCodec for VByteDelta {
    fn name(&self) -> &'static str {
        "vbyte-delta"
    }
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_len(docs.len())?;
        let mut gaps = [0u32; BLOCK_LEN];
        to_gaps(base, docs, &mut gaps);
        encode_all(&gaps[..docs.len()], out)
    }
    fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        check_len(out.len())?;
        let mut pos = 0;
        let mut acc = base;
        for v in out.iter_mut() {
            let gap = match input.get(pos) {
                Some(&b) if b < 0x80 => {
                    pos += 1;
                    u32::from(b)
                }
                _ => read_vbyte(input, &mut pos)?,
            };
            acc = acc.wrapping_add(gap);
            *v = acc;
        }
        Ok(pos)
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        encode_all(freqs, out)
    }
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        decode_all(input, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_agree_with_the_encoder() {
        for v in [
            0,
            1,
            127,
            128,
            16383,
            16384,
            (1 << 21) - 1,
            1 << 21,
            (1 << 28) - 1,
            1 << 28,
            u32::MAX,
        ] {
            let mut out = Vec::new();
            write_vbyte(v, &mut out);
            assert_eq!(out.len(), vbyte_len(v), "value {v}");
            let mut pos = 0;
            assert_eq!(read_vbyte(&out, &mut pos).unwrap(), v);
            assert_eq!(pos, out.len());
        }
    }

    #[test]
    fn overlong_values_are_corrupt() {
        let mut pos = 0;
        assert!(read_vbyte(&[0xFF, 0xFF, 0xFF, 0xFF, 0x1F], &mut pos).is_err());
        let mut pos = 0;
        assert!(read_vbyte(&[0x80, 0x80], &mut pos).is_err());
    }
}
