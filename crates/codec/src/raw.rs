//! `raw`: uncompressed little-endian u32, the "Base" configuration the others are measured by.

use crate::codec::check_len;
use crate::error::take;
use crate::{BlockCodec, CodecError};

/// Stores every value as 4 little-endian bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Raw;

impl Raw {
    fn encode(values: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_len(values.len())?;
        out.reserve(values.len() * 4);
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        Ok(())
    }

    fn decode(input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        check_len(out.len())?;
        let bytes = take(input, out.len() * 4)?;
        for (v, chunk) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *v = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        Ok(bytes.len())
    }
}

impl BlockCodec for Raw {
    fn name(&self) -> &'static str {
        "raw"
    }
    fn encode_docs(&self, _base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        Raw::encode(docs, out)
    }
    fn decode_docs(&self, _base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        Raw::decode(input, out)
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        Raw::encode(freqs, out)
    }
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
        Raw::decode(input, out)
    }
}
