//! Integer codecs for apcache posting blocks.
//!
//! An apcache posting list is cut into blocks of [`BLOCK_LEN`] (256) postings. Each block stores
//! its document ids (DIDs) and its term frequencies separately, each through a [`BlockCodec`].
//! The codec's name is written into the index, and [`codec_by_name`] gives the reader the
//! matching decoder back, so an index is self-describing.
//!
//! # The codecs
//!
//! | name | DIDs | freqs |
//! |---|---|---|
//! | `raw` | u32 little-endian | u32 little-endian |
//! | `vbyte` | VByte of the DIDs themselves | VByte |
//! | `vbyte-delta` | VByte of d-gaps | VByte |
//! | `streamvbyte-delta` | StreamVByte of d-gaps | StreamVByte |
//! | `pfor-delta` | patched frame of reference of d-gaps (horizontal bit-packing, decoded with AVX-512 VBMI where present), or a bitset for a dense block | same, no delta |
//! | `pfor-delta-simd` | the same with 8-lane vertical bit-packing, decoded with AVX2 | same, no delta |
//! | `bitpack-delta-simd` | plain 8-lane vertical bit-packing of d-gaps, no exceptions | same, no delta |
//!
//! D-gaps are taken against a `base` the caller supplies (the index passes the block's first
//! DID, which its skip list stores), so every block decodes on its own. Frequencies are never
//! delta-coded. Delta coding uses wrapping arithmetic, so a delta codec round-trips any input,
//! sorted or not; only its size suffers on unsorted input.
//!
//! # Runtime dispatch
//!
//! SIMD decoders are chosen at run time from the CPU's features ([`Isa::detect`]): SSE4.1,
//! AVX2 or AVX-512 (F, BW, VBMI, VPOPCNTDQ). Every SIMD codec keeps a scalar path that decodes
//! the same bytes; it is the fallback on CPUs without the SIMD levels and the oracle of the
//! conformance tests. The kernels themselves, at a chosen level, are in [`kernels`]; a bitset's
//! set bits are counted by [`popcount`].
//!
//! # Untrusted input
//!
//! Decoders never panic and never read out of bounds: truncated or corrupt input returns a
//! [`CodecError`].
#![deny(missing_docs)]

mod bitpack;
mod codec;
mod delta;
mod error;
mod isa;
pub mod kernels;
mod pfor;
mod popcount;
mod raw;
mod registry;
mod streamvbyte;
mod vbyte;

pub use codec::{BlockCodec, BLOCK_LEN};
pub use error::CodecError;
pub use isa::Isa;
pub use pfor::{BitpackDeltaSimd, PforDelta, PforDeltaSimd};
pub use popcount::popcount;
pub use raw::Raw;
pub use registry::{codec_by_name, codec_with_isa, CodecKind, CODEC_NAMES};
pub use streamvbyte::StreamVByteDelta;
pub use vbyte::{VByte, VByteDelta};
