//! Codecs by name: the name is stored in the index, so the reader finds the decoder again.

use crate::{
    BitpackDeltaSimd, BlockCodec, CodecError, Isa, PforDelta, PforDeltaSimd, Raw, StreamVByteDelta,
    VByte, VByteDelta,
};

/// Every registered codec name, in the order of the seeds' configurations.
pub const CODEC_NAMES: &[&str] = &[
    "raw",
    "vbyte",
    "vbyte-delta",
    "streamvbyte-delta",
    "pfor-delta",
    "pfor-delta-simd",
    "bitpack-delta-simd",
];

/// The codec registered as `name`, decoding with the best instruction set of this CPU.
pub fn codec_by_name(name: &str) -> Result<Box<dyn BlockCodec>, CodecError> {
    codec_with_isa(name, Isa::detect())
}

/// The codec registered as `name`, decoding with at most `isa` (scalar codecs ignore it).
pub fn codec_with_isa(name: &str, isa: Isa) -> Result<Box<dyn BlockCodec>, CodecError> {
    Ok(match name {
        "raw" => Box::new(Raw),
        "vbyte" => Box::new(VByte),
        "vbyte-delta" => Box::new(VByteDelta),
        "streamvbyte-delta" => Box::new(StreamVByteDelta::with_isa(isa)),
        "pfor-delta" => Box::new(PforDelta::new()),
        "pfor-delta-simd" => Box::new(PforDeltaSimd::with_isa(isa)),
        "bitpack-delta-simd" => Box::new(BitpackDeltaSimd::with_isa(isa)),
        other => return Err(CodecError::UnknownCodec(other.to_string())),
    })
}
