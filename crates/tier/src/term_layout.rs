//! Where a term's blocks go inside its chain of cache segments.
//!
//! A cached term starts with its block table: for each block, the chain positions of its DID
//! bytes and of its frequency bytes (two `u32`, little-endian; a chain position is
//! `k * segment_size + offset` for the chain's `k`-th segment). The table is what lets a
//! query find a block in the cache without touching the on-storage metadata, and what
//! eviction never has to rewrite. The DID blocks, then the frequency blocks, follow in their
//! on-storage order, packed so that no block straddles two segments (a block that does not
//! fit in what is left of a segment starts the next one), so the codec decodes it in place.

use apcache_index::format::{SkipEntry, TermInfo};

use crate::cache_error::CacheError;

/// Bytes of one block-table entry.
pub const TABLE_ENTRY: usize = 8;

/// A run of the term's on-storage bytes and where it lands in the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Offset in the term's postings (from `postings_offset`).
    pub source: u32,
    /// Bytes.
    pub len: u32,
    /// Chain position.
    pub target: u32,
}

/// The placement of one term's blocks.
#[derive(Debug, Clone, Default)]
pub struct TermLayout {
    /// One piece per DID block, then one per frequency block, in source order.
    pub pieces: Vec<Piece>,
    /// Blocks of the term.
    pub blocks: u32,
    /// Segments the chain needs.
    pub segments: u32,
}

impl TermLayout {
    /// Places the blocks described by `skips` (the term's skip entries) in segments of
    /// `segment_size` bytes; an error when a block is larger than a segment or the entries'
    /// offsets do not describe the term's bytes.
    pub fn plan(
        info: &TermInfo,
        skips: &[[u8; SkipEntry::LEN]],
        segment_size: usize,
    ) -> Result<TermLayout, CacheError> {
        let mut layout = TermLayout::default();
        layout.plan_into(info, skips, segment_size)?;
        Ok(layout)
    }

    /// Like [`TermLayout::plan`], reusing this layout's allocation.
    pub fn plan_into(
        &mut self,
        info: &TermInfo,
        skips: &[[u8; SkipEntry::LEN]],
        segment_size: usize,
    ) -> Result<(), CacheError> {
        let seg = segment_size as u64;
        let blocks = skips.len();
        let docs_end = u64::from(info.docs_bytes);
        let all_end = docs_end + u64::from(info.freqs_bytes);
        self.pieces.clear();
        self.blocks = blocks as u32;
        let mut pos = (blocks * TABLE_ENTRY) as u64;
        let mut place = |start: u64, end: u64, pieces: &mut Vec<Piece>| {
            if end < start || end > all_end {
                return Err(CacheError::Layout(format!(
                    "block bytes {start}..{end} outside the term's {all_end} bytes"
                )));
            }
            let len = end - start;
            if len > seg {
                return Err(CacheError::Layout(format!(
                    "a {len}-byte block does not fit a {seg}-byte segment"
                )));
            }
            if pos % seg + len > seg {
                pos = pos.div_ceil(seg) * seg;
            }
            pieces.push(Piece {
                source: start as u32,
                len: len as u32,
                target: u32::try_from(pos)
                    .map_err(|_| CacheError::Layout("a term larger than 4 GiB".into()))?,
            });
            pos += len;
            Ok(())
        };
        let entries: Vec<SkipEntry> = skips.iter().map(SkipEntry::from_bytes).collect();
        for (i, e) in entries.iter().enumerate() {
            let end = entries
                .get(i + 1)
                .map_or(docs_end, |n| u64::from(n.docs_offset));
            place(u64::from(e.docs_offset), end, &mut self.pieces)?;
        }
        for (i, e) in entries.iter().enumerate() {
            let end = entries
                .get(i + 1)
                .map_or(all_end, |n| u64::from(n.freqs_offset));
            place(u64::from(e.freqs_offset), end, &mut self.pieces)?;
        }
        self.segments = pos.div_ceil(seg).max(1) as u32;
        if u64::from(self.segments) * seg > u64::from(u32::MAX) {
            return Err(CacheError::Layout("a term larger than 4 GiB".into()));
        }
        Ok(())
    }

    /// The block table: DID then frequency chain position of each block, little-endian.
    pub fn table(&self) -> impl Iterator<Item = [u8; TABLE_ENTRY]> + '_ {
        let n = self.blocks as usize;
        (0..n).map(move |i| {
            let mut entry = [0u8; TABLE_ENTRY];
            entry[..4].copy_from_slice(&self.pieces[i].target.to_le_bytes());
            entry[4..].copy_from_slice(&self.pieces[n + i].target.to_le_bytes());
            entry
        })
    }

    /// The pieces overlapping source bytes `start..start + len`, in order.
    pub fn overlapping(&self, start: u32, len: u32) -> impl Iterator<Item = &Piece> + '_ {
        // Pieces are in source order and do not overlap; start at the last one beginning at
        // or before `start`.
        let first = self
            .pieces
            .partition_point(|p| p.source + p.len <= start)
            .min(self.pieces.len());
        let end = start + len;
        self.pieces[first..]
            .iter()
            .take_while(move |p| p.source < end)
    }
}
