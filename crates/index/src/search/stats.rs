//! What a query cost, in the units the original study reports: blocks and postings decoded, blocks
//! skipped without decoding.

use std::ops::AddAssign;

use serde::Serialize;

/// Work done by one query (or summed over many).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SearchStats {
    /// Posting-list blocks whose DIDs were decoded.
    pub blocks_decoded: u64,
    /// Blocks of the query's terms that were never decoded (skipped by the skip entries or
    /// by their score bounds).
    pub blocks_skipped: u64,
    /// Postings decoded (DIDs; frequencies are decoded only for scored blocks).
    pub postings_decoded: u64,
}

impl AddAssign for SearchStats {
    fn add_assign(&mut self, other: SearchStats) {
        self.blocks_decoded += other.blocks_decoded;
        self.blocks_skipped += other.blocks_skipped;
        self.postings_decoded += other.postings_decoded;
    }
}
