//! Codecs by name: the name is stored in the index, so the reader finds the decoder again.
//! [`CodecKind`] is the typed name: parsed once at the edge (a flag, a segment's metadata),
//! then carried as a value and turned into a codec with [`CodecKind::build`].

use std::fmt;
use std::str::FromStr;

use crate::{
    BitpackDeltaSimd, BlockCodec, CodecError, Isa, PforDelta, PforDeltaSimd, Raw, StreamVByteDelta,
    VByte, VByteDelta,
};

/// A registered codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CodecKind {
    /// `raw`: 32-bit little-endian integers.
    Raw,
    /// `vbyte`: variable bytes, no gaps.
    VByte,
    /// `vbyte-delta`: variable bytes over d-gaps.
    VByteDelta,
    /// `streamvbyte-delta`: Stream VByte over d-gaps.
    StreamVByteDelta,
    /// `pfor-delta`: PFor over d-gaps, horizontal bit-packing.
    PforDelta,
    /// `pfor-delta-simd`: PFor with SIMD bit-packing over d-gaps (the default).
    #[default]
    PforDeltaSimd,
    /// `bitpack-delta-simd`: SIMD bit-packing without exceptions (fastest to encode).
    BitpackDeltaSimd,
}

impl CodecKind {
    /// Every registered codec, in the order of the original study's configurations.
    pub const ALL: [CodecKind; 7] = [
        CodecKind::Raw,
        CodecKind::VByte,
        CodecKind::VByteDelta,
        CodecKind::StreamVByteDelta,
        CodecKind::PforDelta,
        CodecKind::PforDeltaSimd,
        CodecKind::BitpackDeltaSimd,
    ];

    /// The name stored in the index and given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CodecKind::Raw => "raw",
            CodecKind::VByte => "vbyte",
            CodecKind::VByteDelta => "vbyte-delta",
            CodecKind::StreamVByteDelta => "streamvbyte-delta",
            CodecKind::PforDelta => "pfor-delta",
            CodecKind::PforDeltaSimd => "pfor-delta-simd",
            CodecKind::BitpackDeltaSimd => "bitpack-delta-simd",
        }
    }

    /// The codec, decoding with at most `isa` (scalar codecs ignore it).
    pub fn build_with_isa(self, isa: Isa) -> Box<dyn BlockCodec> {
        match self {
            CodecKind::Raw => Box::new(Raw),
            CodecKind::VByte => Box::new(VByte),
            CodecKind::VByteDelta => Box::new(VByteDelta),
            CodecKind::StreamVByteDelta => Box::new(StreamVByteDelta::with_isa(isa)),
            CodecKind::PforDelta => Box::new(PforDelta::with_isa(isa)),
            CodecKind::PforDeltaSimd => Box::new(PforDeltaSimd::with_isa(isa)),
            CodecKind::BitpackDeltaSimd => Box::new(BitpackDeltaSimd::with_isa(isa)),
        }
    }

    /// The codec, decoding with the best instruction set of this CPU.
    pub fn build(self) -> Box<dyn BlockCodec> {
        self.build_with_isa(Isa::detect())
    }
}

impl fmt::Display for CodecKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CodecKind {
    type Err = CodecError;

    fn from_str(name: &str) -> Result<CodecKind, CodecError> {
        CodecKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| CodecError::UnknownCodec(name.to_string()))
    }
}

/// Every registered codec name, in the order of the original study's configurations.
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
    Ok(name.parse::<CodecKind>()?.build())
}

/// The codec registered as `name`, decoding with at most `isa` (scalar codecs ignore it).
pub fn codec_with_isa(name: &str, isa: Isa) -> Result<Box<dyn BlockCodec>, CodecError> {
    Ok(name.parse::<CodecKind>()?.build_with_isa(isa))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_the_list() {
        assert_eq!(CodecKind::ALL.len(), CODEC_NAMES.len());
        for (kind, name) in CodecKind::ALL.into_iter().zip(CODEC_NAMES) {
            assert_eq!(kind.name(), *name);
            assert_eq!(name.parse::<CodecKind>().unwrap(), kind);
            assert_eq!(kind.build().name(), *name);
        }
        assert!("zip".parse::<CodecKind>().is_err());
    }
}
