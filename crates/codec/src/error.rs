//! The error type of the codec layer.

/// Why a block could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// More values than a block may hold were passed in.
    #[error("block of {len} values exceeds the block length {max}")]
    BlockTooLong {
        /// Values passed.
        len: usize,
        /// The limit ([`crate::BLOCK_LEN`]).
        max: usize,
    },
    /// A value was asked for at a position the block does not have.
    #[error("position {position} past a block of {len} values")]
    PositionPastBlock {
        /// The position asked for.
        position: usize,
        /// Values in the block.
        len: usize,
    },
    /// The input ended before the block did.
    #[error("truncated block: needed {needed} bytes, {available} available")]
    Truncated {
        /// Bytes the block needs.
        needed: usize,
        /// Bytes present.
        available: usize,
    },
    /// The bytes cannot be a block of this codec.
    #[error("corrupt block: {0}")]
    Corrupt(&'static str),
    /// The codec name found in an index is not registered.
    #[error("unknown codec {0:?}; known codecs: {known}", known = crate::CODEC_NAMES.join(", "))]
    UnknownCodec(String),
}

/// Returns `input[..needed]` or a [`CodecError::Truncated`].
#[inline]
pub(crate) fn take(input: &[u8], needed: usize) -> Result<&[u8], CodecError> {
    input.get(..needed).ok_or(CodecError::Truncated {
        needed,
        available: input.len(),
    })
}
