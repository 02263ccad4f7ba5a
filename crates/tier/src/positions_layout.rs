//! Where a term's positions go inside its chain of cache segments.
//!
//! A phrase reads a term's positions a posting block at a time ([`TermPositions::block`]), so
//! the cache keeps them in the same unit: a table first, for each posting block the chain
//! position and length of its positions bytes (two `u32`, little-endian), then the blocks'
//! bytes in their on-storage order, packed so that none straddles two segments (one that does
//! not fit in what is left of a segment starts the next). A block's positions can be larger
//! than a segment (a frequent term in long documents); such a term is not cached, and its
//! phrases read the positions file.

use apcache_index::format::TermPositions;

use crate::cache_error::CacheError;
use crate::term_layout::{Piece, TABLE_ENTRY};

/// The placement of one term's positions blocks.
#[derive(Debug, Clone, Default)]
pub struct PositionsLayout {
    /// One piece per posting block, in source order (`source` is the offset in the term's
    /// positions region).
    pub pieces: Vec<Piece>,
    /// Segments the chain needs.
    pub segments: u32,
}

impl PositionsLayout {
    /// Places the blocks of `region` in segments of `segment_size` bytes, reusing this
    /// layout's allocation. `Ok(false)` when a block is larger than a segment (the term is not
    /// cacheable); an error when the region's block table is malformed.
    pub fn plan_into(
        &mut self,
        region: &TermPositions<'_>,
        segment_size: usize,
    ) -> Result<bool, CacheError> {
        let seg = segment_size as u64;
        let blocks = region.blocks();
        self.pieces.clear();
        let mut pos = (blocks * TABLE_ENTRY) as u64;
        for block in 0..blocks {
            let (start, end) = region
                .block_range(block)
                .map_err(|e| CacheError::Layout(format!("positions: {e}")))?;
            let len = (end - start) as u64;
            if len > seg {
                return Ok(false);
            }
            if pos % seg + len > seg {
                pos = pos.div_ceil(seg) * seg;
            }
            let target = u32::try_from(pos)
                .map_err(|_| CacheError::Layout("positions larger than 4 GiB".into()))?;
            self.pieces.push(Piece {
                source: start as u32,
                len: len as u32,
                target,
            });
            pos += len;
        }
        let segments = pos.div_ceil(seg).max(1);
        if segments * seg > u64::from(u32::MAX) {
            return Err(CacheError::Layout("positions larger than 4 GiB".into()));
        }
        self.segments = segments as u32;
        Ok(true)
    }

    /// The table: each block's chain position and length, little-endian.
    pub fn table(&self) -> impl Iterator<Item = [u8; TABLE_ENTRY]> + '_ {
        self.pieces.iter().map(|piece| {
            let mut entry = [0u8; TABLE_ENTRY];
            entry[..4].copy_from_slice(&piece.target.to_le_bytes());
            entry[4..].copy_from_slice(&piece.len.to_le_bytes());
            entry
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apcache_codec::BLOCK_LEN;
    use apcache_index::format::{encode_term_positions, PositionsCodec};

    /// A term of `docs` postings, each with `per_doc` positions.
    fn region(docs: usize, per_doc: u32) -> Vec<u8> {
        let freqs = vec![per_doc; docs];
        let positions: Vec<u32> = (0..docs)
            .flat_map(|_| (0..per_doc).map(|p| p * 7))
            .collect();
        let mut out = Vec::new();
        encode_term_positions(PositionsCodec::PforDelta, &freqs, &positions, &mut out).unwrap();
        out
    }

    #[test]
    fn blocks_never_straddle_a_segment_and_keep_their_bytes() {
        let docs = 5 * BLOCK_LEN + 3;
        let bytes = region(docs, 9);
        let positions = TermPositions::new(&bytes, docs as u32);
        let mut layout = PositionsLayout::default();
        assert!(layout.plan_into(&positions, 4096).unwrap());
        assert_eq!(layout.pieces.len(), positions.blocks());
        let mut end = 0;
        for (block, piece) in layout.pieces.iter().enumerate() {
            let (start, stop) = positions.block_range(block).unwrap();
            assert_eq!(
                (piece.source as usize, piece.len as usize),
                (start, stop - start)
            );
            assert!(piece.target as usize >= end, "pieces overlap");
            assert_eq!(
                piece.target as usize / 4096,
                (piece.target + piece.len - 1) as usize / 4096,
                "block {block} straddles a segment"
            );
            end = (piece.target + piece.len) as usize;
        }
        assert!(end <= layout.segments as usize * 4096);
        let table: Vec<[u8; TABLE_ENTRY]> = layout.table().collect();
        assert_eq!(table.len(), positions.blocks());
    }

    #[test]
    fn a_block_larger_than_a_segment_is_not_cacheable() {
        let bytes = region(BLOCK_LEN, 400);
        let positions = TermPositions::new(&bytes, BLOCK_LEN as u32);
        let mut layout = PositionsLayout::default();
        assert!(!layout.plan_into(&positions, 4096).unwrap());
    }
}
