//! The `bitpacking` crate (tantivy's SIMD bit-packer, a port of simdcomp) as a peer.
//!
//! A block is stored as one width byte and the packed bits, per 128 values for BitPacker4x
//! and per 256 for BitPacker8x; document ids through its sorted (delta) entry points.

use bitpacking::{BitPacker, BitPacker4x, BitPacker8x};

use super::MeasuredCodec;

fn encode_sorted<B: BitPacker>(
    packer: &B,
    mut base: u32,
    docs: &[u32],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    for chunk in docs.chunks(B::BLOCK_LEN) {
        if chunk.len() != B::BLOCK_LEN {
            return Err(format!(
                "bitpacking needs blocks of {} values",
                B::BLOCK_LEN
            ));
        }
        let bits = packer.num_bits_sorted(base, chunk);
        out.push(bits);
        let start = out.len();
        out.resize(start + B::BLOCK_LEN * 4, 0);
        let written = packer.compress_sorted(base, chunk, &mut out[start..], bits);
        out.truncate(start + written);
        base = chunk[B::BLOCK_LEN - 1];
    }
    Ok(())
}

/// Reads the width byte and packed bytes of the next `B::BLOCK_LEN` values at `*pos`.
fn next_block<'a, B: BitPacker>(
    input: &'a [u8],
    pos: &mut usize,
) -> Result<(u8, &'a [u8]), String> {
    let bits = *input.get(*pos).ok_or("truncated")?;
    let need = B::BLOCK_LEN * bits as usize / 8;
    let bytes = input.get(*pos + 1..*pos + 1 + need).ok_or("truncated")?;
    *pos += 1;
    Ok((bits, bytes))
}

fn decode_sorted<B: BitPacker>(
    packer: &B,
    mut base: u32,
    input: &[u8],
    out: &mut [u32],
) -> Result<usize, String> {
    let mut pos = 0;
    for chunk in out.chunks_mut(B::BLOCK_LEN) {
        let (bits, bytes) = next_block::<B>(input, &mut pos)?;
        pos += packer.decompress_sorted(base, bytes, chunk, bits);
        base = chunk[B::BLOCK_LEN - 1];
    }
    Ok(pos)
}

fn encode_plain<B: BitPacker>(packer: &B, values: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
    for chunk in values.chunks(B::BLOCK_LEN) {
        if chunk.len() != B::BLOCK_LEN {
            return Err(format!(
                "bitpacking needs blocks of {} values",
                B::BLOCK_LEN
            ));
        }
        let bits = packer.num_bits(chunk);
        out.push(bits);
        let start = out.len();
        out.resize(start + B::BLOCK_LEN * 4, 0);
        let written = packer.compress(chunk, &mut out[start..], bits);
        out.truncate(start + written);
    }
    Ok(())
}

fn decode_plain<B: BitPacker>(packer: &B, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
    let mut pos = 0;
    for chunk in out.chunks_mut(B::BLOCK_LEN) {
        let (bits, bytes) = next_block::<B>(input, &mut pos)?;
        pos += packer.decompress(bytes, chunk, bits);
    }
    Ok(pos)
}

macro_rules! bitpacking_peer {
    ($peer:ident, $packer:ty, $name:literal) => {
        #[doc = concat!("`bitpacking::", stringify!($packer), "`: delta for document ids, plain for frequencies.")]
        pub struct $peer($packer);

        impl $peer {
            /// The packer, with the best SIMD level this CPU has (chosen by the crate).
            pub fn new() -> Self {
                $peer(<$packer>::new())
            }
        }

        impl Default for $peer {
            fn default() -> Self {
                Self::new()
            }
        }

        impl MeasuredCodec for $peer {
            fn name(&self) -> String {
                $name.to_string()
            }
            fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
                encode_sorted(&self.0, base, docs, out)
            }
            fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
                decode_sorted(&self.0, base, input, out)
            }
            fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
                encode_plain(&self.0, freqs, out)
            }
            fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
                decode_plain(&self.0, input, out)
            }
        }
    };
}

bitpacking_peer!(BitPacker4xPeer, BitPacker4x, "bitpacking BitPacker4x");
bitpacking_peer!(BitPacker8xPeer, BitPacker8x, "bitpacking BitPacker8x");
