//! The three codecs built on the PFor block format.

use super::dense::{dense_words, dense_words_for, encode_dense, DENSE_HEADER};
use super::select::select;
use super::{decode, encode, Layout};
use crate::codec::check_len;
use crate::delta::to_gaps;
use crate::{BlockCodec, CodecError, Isa, BLOCK_LEN};

/// Shared body of the PFor-family codecs.
#[derive(Debug, Clone, Copy)]
struct PforFamily {
    layout: Layout,
    exceptions: bool,
    isa: Isa,
}

impl PforFamily {
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_len(docs.len())?;
        let mut gaps = [0u32; BLOCK_LEN];
        to_gaps(base, docs, &mut gaps);
        let gaps = &gaps[..docs.len()];
        // The codecs that pick the smallest form per block also take the dense one; the
        // plain-packing codec stays plain.
        if self.exceptions {
            if let Some(words) = dense_words_for(base, docs, gaps) {
                encode_dense(base, docs, words, out);
                return Ok(());
            }
        }
        encode(gaps, self.layout, self.exceptions, out);
        Ok(())
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_len(freqs.len())?;
        encode(freqs, self.layout, self.exceptions, out);
        Ok(())
    }
}

macro_rules! pfor_codec {
    ($(#[$doc:meta])* $name:ident, $codec_name:literal, $layout:expr, $exceptions:expr, $default_isa:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name(PforFamily);

        impl $name {
            /// The codec decoding with the best instruction set of this CPU.
            pub fn new() -> Self {
                Self::with_isa($default_isa)
            }
            /// The codec decoding with `isa` (lowered to what this CPU supports).
            pub fn with_isa(isa: Isa) -> Self {
                $name(PforFamily { layout: $layout, exceptions: $exceptions, isa: isa.supported() })
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl BlockCodec for $name {
            fn name(&self) -> &'static str {
                $codec_name
            }
            fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
                self.0.encode_docs(base, docs, out)
            }
            fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
                decode(input, self.0.layout, self.0.isa, Some(base), out)
            }
            fn dense_docs<'a>(&self, input: &'a [u8], len: usize) -> Result<Option<&'a [u8]>, CodecError> {
                check_len(len)?;
                match input.first() {
                    Some(&DENSE_HEADER) if len > 0 => dense_words(&input[1..], len).map(Some),
                    _ => Ok(None),
                }
            }
            fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError> {
                self.0.encode_freqs(freqs, out)
            }
            fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError> {
                decode(input, self.0.layout, self.0.isa, None, out)
            }
            fn select_freqs(
                &self,
                input: &[u8],
                len: usize,
                positions: &[u16],
                out: &mut [u32],
            ) -> Result<(), CodecError> {
                select(input, self.0.layout, len, positions, out)
            }
        }
    };
}

pfor_codec!(
    /// `pfor-delta`: PFor of d-gaps (and of frequencies), horizontal layout, the smallest
    /// form per block; bit unpacking with AVX-512 VBMI where the CPU has it, else scalar.
    PforDelta, "pfor-delta", Layout::Horizontal, true, Isa::detect()
);
pfor_codec!(
    /// `pfor-delta-simd`: PFor with full blocks in the 8-lane vertical layout, decoded with
    /// AVX2 (the prefix sum fused into unpacking when a block has no exceptions). Shorter
    /// blocks use the `pfor-delta` format.
    PforDeltaSimd, "pfor-delta-simd", Layout::Vertical, true, Isa::detect()
);
pfor_codec!(
    /// `bitpack-delta-simd`: plain vertical bit-packing of d-gaps without exceptions, the
    /// speed-first choice; shorter blocks are packed horizontally.
    BitpackDeltaSimd, "bitpack-delta-simd", Layout::Vertical, false, Isa::detect()
);
