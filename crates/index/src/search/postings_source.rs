//! Where a cursor reads a term's blocks when they are not read from the segment's postings
//! file: the hook through which a postings cache in another memory tier (`apcache-tier`)
//! serves queries.
//!
//! A source hands out a [`TermBlocks`] for a term it holds. The value keeps the blocks valid
//! (a cache pins the term against eviction) until it is dropped, which happens when the
//! cursor reading it is dropped at the end of the query.

use super::query_terms::TermEntry;
use crate::IndexError;

/// One term's encoded blocks, held somewhere other than the segment's postings file.
///
/// `docs(i)` and `freqs(i)` return bytes that begin with block `i`'s encoded DIDs and
/// frequencies (the codec of the segment, as in the postings file); they may run past the
/// block's end. A block index is below the term's block count.
pub trait TermBlocks: Send {
    /// The bytes starting with DID block `block`.
    fn docs(&self, block: usize) -> &[u8];
    /// The bytes starting with frequency block `block`.
    fn freqs(&self, block: usize) -> &[u8];
}

/// One term's positions, held somewhere other than the segment's positions file: the bytes of
/// each posting block's positions, as [`crate::format::TermPositions::block`] returns them
/// (`None` for a block index past the term's blocks).
pub trait TermPositionBlocks: Send {
    /// The positions bytes of posting block `block`, exactly.
    fn block(&self, block: usize) -> Option<&[u8]>;
}

/// A provider of terms' blocks, shared by the query threads.
pub trait PostingsSource: Sync {
    /// The blocks of `term` of segment `segment` (its index in the reader), or `None` when the
    /// source does not hold it (the cursor then reads the postings file).
    fn blocks(
        &self,
        segment: usize,
        term: &TermEntry,
    ) -> Result<Option<Box<dyn TermBlocks + '_>>, IndexError>;

    /// The positions of `term` of segment `segment`, or `None` when the source does not hold
    /// them (the phrase then reads the positions file). Asked only for terms that stand in a
    /// phrase.
    fn positions(
        &self,
        _segment: usize,
        _term: &TermEntry,
    ) -> Result<Option<Box<dyn TermPositionBlocks + '_>>, IndexError> {
        Ok(None)
    }
}
