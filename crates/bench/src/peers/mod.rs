//! Peers measured beside apcache in the same run: other crates' codecs (this file and the
//! codec modules), tantivy's indexer for the query peers (`tantivy_indexer`) and Lucene's
//! bench tool taking turns with the other engines (`paced_lucene`, stopped between turns by
//! `child_signal`); tantivy over JSON documents (`tantivy_documents`).
//!
//! Each codec peer is driven through [`MeasuredCodec`], the interface the codec benchmark uses for
//! apcache's own codecs too, on full 256-posting blocks only (the bit-packers of the
//! `bitpacking` crate take whole blocks). Peers code document ids as d-gaps against the block's
//! base, like apcache, and frequencies plainly.

mod bitpacking_peer;
pub mod child_signal;
pub mod paced_lucene;
mod stream_vbyte_peer;
pub mod tantivy_documents;
pub mod tantivy_indexer;

pub use bitpacking_peer::{BitPacker4xPeer, BitPacker8xPeer};
pub use stream_vbyte_peer::{StreamVbyteCPeer, StreamVbytePeer};

use apcache_codec::BlockCodec;

/// The operations the codec benchmark times. Errors are messages: a failure is a bug to report.
pub trait MeasuredCodec {
    /// Display name.
    fn name(&self) -> String;
    /// True when `decode_docs` yields d-gaps rather than document ids (a peer without delta
    /// coding); the benchmark then checks its output against the gaps.
    fn decodes_gaps(&self) -> bool {
        false
    }
    /// Appends the encoding of a block of document ids, gaps against `base`.
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), String>;
    /// Decodes `out.len()` document ids; returns bytes read.
    fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, String>;
    /// Appends the encoding of a block of frequencies.
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), String>;
    /// Decodes `out.len()` frequencies; returns bytes read.
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, String>;
}

impl MeasuredCodec for Box<dyn BlockCodec> {
    fn name(&self) -> String {
        BlockCodec::name(self.as_ref()).to_string()
    }
    fn encode_docs(&self, base: u32, docs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
        self.as_ref()
            .encode_docs(base, docs, out)
            .map_err(|e| e.to_string())
    }
    fn decode_docs(&self, base: u32, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
        self.as_ref()
            .decode_docs(base, input, out)
            .map_err(|e| e.to_string())
    }
    fn encode_freqs(&self, freqs: &[u32], out: &mut Vec<u8>) -> Result<(), String> {
        self.as_ref()
            .encode_freqs(freqs, out)
            .map_err(|e| e.to_string())
    }
    fn decode_freqs(&self, input: &[u8], out: &mut [u32]) -> Result<usize, String> {
        self.as_ref()
            .decode_freqs(input, out)
            .map_err(|e| e.to_string())
    }
}

/// Every peer this build has.
pub fn all_peers() -> Vec<Box<dyn MeasuredCodec>> {
    vec![
        Box::new(BitPacker4xPeer::new()),
        Box::new(BitPacker8xPeer::new()),
        Box::new(StreamVbytePeer),
        Box::new(StreamVbyteCPeer),
    ]
}
