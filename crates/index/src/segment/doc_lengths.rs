//! Document lengths by global DID, resolved once per evaluation instead of once per posting.
//!
//! Scoring reads a length for every posting it scores. A merged segment holds one run of
//! DIDs, so the lookup is a subtraction and one load from the norms file; resolving that once
//! keeps the scoring loops free of the general DID map.

use super::SegmentReader;

/// The lengths of a segment's documents by global DID (see [`SegmentReader::doc_lengths`]).
#[derive(Clone, Copy)]
pub struct DocLengths<'a> {
    /// The first DID of a single-run segment and the lengths of its run; `None` for a segment
    /// of several runs, which goes through the segment's DID map.
    run: Option<(u32, &'a [[u8; 4]])>,
    segment: &'a SegmentReader,
}

impl<'a> DocLengths<'a> {
    pub(super) fn new(segment: &'a SegmentReader, norms: &'a [u8]) -> DocLengths<'a> {
        let run = match segment.meta().docs.runs() {
            [[first, _]] => Some((*first, norms.as_chunks::<4>().0)),
            _ => None,
        };
        DocLengths { run, segment }
    }

    /// Length (tokens) of global DID `doc`; 0 for a DID the segment does not hold.
    #[inline]
    pub fn of(&self, doc: u32) -> u32 {
        match self.run {
            Some((first, lengths)) => lengths
                .get(doc.wrapping_sub(first) as usize)
                .map_or(0, |b| u32::from_le_bytes(*b)),
            None => self.segment.doc_length_of(doc).unwrap_or(0),
        }
    }
}
