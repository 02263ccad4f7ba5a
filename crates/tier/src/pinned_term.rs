//! A cached term held by a query: reads its blocks from the tier, and keeps the term from
//! being evicted until dropped.

use apcache_index::search::{TermBlocks, TermPositionBlocks};

use crate::postings_cache::PostingsCache;
use crate::term_layout::TABLE_ENTRY;

/// A pinned cached term (see [`PostingsCache::pin`]).
pub struct PinnedTerm<'c> {
    cache: &'c PostingsCache,
    slot: u32,
    /// The chain's segments, in order.
    segments: Vec<u32>,
    blocks: u32,
}

impl<'c> PinnedTerm<'c> {
    pub(crate) fn new(
        cache: &'c PostingsCache,
        slot: u32,
        segments: Vec<u32>,
        blocks: u32,
    ) -> PinnedTerm<'c> {
        PinnedTerm {
            cache,
            slot,
            segments,
            blocks,
        }
    }

    /// Segments the term occupies.
    pub fn segments(&self) -> usize {
        self.segments.len()
    }

    /// The bytes from chain position `pos` to the end of its segment (empty past the chain).
    fn at(&self, pos: u32) -> &[u8] {
        let seg = self.cache.segment_size();
        let (k, off) = (pos as usize / seg, pos as usize % seg);
        match self.segments.get(k) {
            // SAFETY: this value holds the pin on the chain the segment belongs to.
            Some(&segment) => unsafe { self.cache.segment_bytes(segment, off) },
            None => &[],
        }
    }

    /// Chain position of block `block`'s DIDs (`half` 0) or frequencies (`half` 1).
    fn position(&self, block: usize, half: usize) -> Option<u32> {
        if block >= self.blocks as usize {
            return None;
        }
        let bytes = self.at((block * TABLE_ENTRY + half * 4) as u32);
        bytes
            .get(..4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
}

impl TermBlocks for PinnedTerm<'_> {
    fn docs(&self, block: usize) -> &[u8] {
        self.position(block, 0).map_or(&[], |pos| self.at(pos))
    }

    fn freqs(&self, block: usize) -> &[u8] {
        self.position(block, 1).map_or(&[], |pos| self.at(pos))
    }
}

/// A term's pinned positions (see [`PostingsCache::pin_positions`]): its table holds each
/// posting block's chain position and length (see
/// [`PositionsLayout`](crate::positions_layout::PositionsLayout)).
pub struct PinnedPositions<'c>(PinnedTerm<'c>);

impl<'c> PinnedPositions<'c> {
    pub(crate) fn new(pinned: PinnedTerm<'c>) -> PinnedPositions<'c> {
        PinnedPositions(pinned)
    }

    /// Segments the positions occupy.
    pub fn segments(&self) -> usize {
        self.0.segments()
    }
}

impl TermPositionBlocks for PinnedPositions<'_> {
    fn block(&self, block: usize) -> Option<&[u8]> {
        let at = self.0.position(block, 0)?;
        let len = self.0.position(block, 1)? as usize;
        self.0.at(at).get(..len)
    }
}

impl Drop for PinnedTerm<'_> {
    fn drop(&mut self) {
        self.cache.unpin(self.slot);
    }
}
