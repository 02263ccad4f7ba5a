//! Stream VByte peers: the `stream-vbyte` crate (pure Rust) and the `streamvbyte` crate
//! (bindings to Lemire's C reference library, which decodes with SSE4.1 and has delta coding).
//!
//! The `stream-vbyte` crate has no delta coding: document ids are handed to it as d-gaps and its
//! decode time does not include turning them back into ids (apcache's `streamvbyte-delta`
//! does), which leans the comparison in the peer's favour. On a stable compiler it decodes with
//! its scalar code; its SSSE3 decoder needs nightly (feature `nightly-peers`).

use super::MeasuredCodec;

/// The `stream-vbyte` crate.
pub struct StreamVbytePeer;

#[cfg(feature = "nightly-peers")]
type RustDecoder = stream_vbyte::x86::Ssse3;
#[cfg(not(feature = "nightly-peers"))]
type RustDecoder = stream_vbyte::scalar::Scalar;

fn gaps(base: u32, docs: &[u32]) -> Vec<u32> {
    let mut prev = base;
    docs.iter()
        .map(|&d| {
            let gap = d.wrapping_sub(prev);
            prev = d;
            gap
        })
        .collect()
}

fn encode_values(values: &[u32], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + values.len() * 5 + 16, 0);
    let written =
        stream_vbyte::encode::encode::<stream_vbyte::scalar::Scalar>(values, &mut out[start..]);
    out.truncate(start + written);
}

fn decode_values(input: &[u8], out: &mut [u32]) -> Result<usize, String> {
    if out.len() < 4 {
        return Err("stream-vbyte decodes at least 4 values".into());
    }
    Ok(stream_vbyte::decode::decode::<RustDecoder>(
        input,
        out.len(),
        out,
    ))
}

impl MeasuredCodec for StreamVbytePeer {
    fn name(&self) -> String {
        let decoder = if cfg!(feature = "nightly-peers") {
            "ssse3"
        } else {
            "scalar"
        };
        format!("stream-vbyte crate ({decoder}; gaps, no prefix sum)")
    }
    fn decodes_gaps(&self) -> bool {
        true
    }
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
        encode_values(&gaps(base, docs), out);
        Ok(())
    }
    fn decode_docs(&self, _base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
        decode_values(input, out)
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
        encode_values(freqs, out);
        Ok(())
    }
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
        decode_values(input, out)
    }
}

/// Lemire's C library through the `streamvbyte` crate, with its delta coding for DIDs.
pub struct StreamVbyteCPeer;

fn append_with(out: &mut Vec<u8>, len: usize, encode: impl FnOnce(&mut [u8]) -> usize) {
    let start = out.len();
    out.resize(start + streamvbyte::max_compressedbytes(len), 0);
    let written = encode(&mut out[start..]);
    out.truncate(start + written);
}

impl MeasuredCodec for StreamVbyteCPeer {
    fn name(&self) -> String {
        "streamvbyte C library (delta)".to_string()
    }
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
        let mut result = Ok(());
        append_with(out, docs.len(), |buf| {
            streamvbyte::encode_delta_to_buf(docs, buf, base).unwrap_or_else(|e| {
                result = Err(format!("{e:?}"));
                0
            })
        });
        result
    }
    fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
        Ok(streamvbyte::decode_delta(input, out, base))
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
        let mut result = Ok(());
        append_with(out, freqs.len(), |buf| {
            streamvbyte::encode_to_buf(freqs, buf).unwrap_or_else(|e| {
                result = Err(format!("{e:?}"));
                0
            })
        });
        result
    }
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
        Ok(streamvbyte::decode(input, out))
    }
}
