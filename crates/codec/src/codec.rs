//! The block codec trait every integer codec implements.

use crate::CodecError;

/// Number of postings in a full block. Only the last block of a posting list may be shorter.
pub const BLOCK_LEN: usize = 256;

/// Encodes and decodes one block of up to [`BLOCK_LEN`] integers.
///
/// The number of values is not stored in the encoding: the index knows it (every block but the
/// last of a list is full, and the list's document frequency gives the last one's length), and
/// the decoder is told it by the length of the output slice.
///
/// Decoders write into a caller-provided buffer and never allocate. They return the number of
/// input bytes the block occupied, so blocks may also be read back to back from one buffer.
pub trait BlockCodec: Send + Sync + std::fmt::Debug {
    /// The name stored in the index; [`crate::codec_by_name`] maps it back to this codec.
    fn name(&self) -> &'static str;

    /// Appends the encoding of the document ids `docs` to `out`. Delta codecs take gaps against
    /// `base` (which the decoder must be given again); `docs` should be non-decreasing and not
    /// below `base` for the encoding to be compact, but any values round-trip.
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError>;

    /// Decodes `out.len()` document ids from the start of `input`. Returns the bytes consumed.
    fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError>;

    /// The bitset of the DID block of `len` values at the start of `input`, when the block is
    /// stored as one: little-endian 64-bit words, bit `k` set for DID `base + k` (the base
    /// [`BlockCodec::decode_docs`] is given). A union count ORs such a block into its own
    /// bitset instead of decoding it. `None` for a block in any other form, and from codecs
    /// without the form.
    fn dense_docs<'a>(&self, input: &'a [u8], len: usize) -> Result<Option<&'a [u8]>, CodecError> {
        let _ = (input, len);
        Ok(None)
    }

    /// Appends the encoding of `freqs` (never delta-coded) to `out`.
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), CodecError>;

    /// Decodes `out.len()` frequencies from the start of `input`. Returns the bytes consumed.
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, CodecError>;

    /// Writes to `out[k]` the frequency at position `positions[k]` of the block of `len`
    /// frequencies at the start of `input`, the value [`BlockCodec::decode_freqs`] decodes
    /// there (`out` holds at least `positions.len()` values).
    ///
    /// An intersection needs the frequencies of a few matches in a block of a dense list;
    /// codecs whose blocks allow it read only those values, and this default decodes the
    /// whole block.
    fn select_freqs(
        &self,
        input: &[u8],
        len: usize,
        positions: &[u16],
        out: &mut [u32],
    ) -> Result<(), CodecError> {
        check_len(len)?;
        let mut all = [0u32; BLOCK_LEN];
        self.decode_freqs(input, &mut all[..len])?;
        for (value, &position) in out.iter_mut().zip(positions) {
            let position = usize::from(position);
            if position >= len {
                return Err(CodecError::PositionPastBlock { position, len });
            }
            *value = all[position];
        }
        Ok(())
    }
}

/// Rejects blocks longer than [`BLOCK_LEN`]; shared by every codec's entry points.
#[inline]
pub(crate) fn check_len(len: usize) -> Result<(), CodecError> {
    if len > BLOCK_LEN {
        return Err(CodecError::BlockTooLong {
            len,
            max: BLOCK_LEN,
        });
    }
    Ok(())
}
