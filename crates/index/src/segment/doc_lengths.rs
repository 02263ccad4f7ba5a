//! Document lengths and norm bytes by global DID, resolved once per evaluation instead of once
//! per posting.
//!
//! Scoring reads a length (or its norm byte) for every posting it scores. A merged segment
//! holds one run of DIDs, so the lookup is a subtraction and one load from the norms file;
//! resolving that once keeps the scoring loops free of the general DID map.

use super::{NormBytes, SegmentReader};
use crate::format::NormsFile;
use crate::search::length_to_norm;

/// The lengths of a segment's documents in one text field by global DID (see
/// [`SegmentReader::doc_lengths`] and [`SegmentReader::field_lengths`]).
#[derive(Clone, Copy)]
pub struct DocLengths<'a> {
    /// The first DID of a single-run segment and the norm bytes of its run; `None` for a
    /// segment of several runs, which goes through the segment's DID map.
    run: Option<(u32, NormBytes<'a>)>,
    /// The field's norms, in local order.
    norms: NormsFile<'a>,
    segment: &'a SegmentReader,
}

impl<'a> DocLengths<'a> {
    /// The lengths of `segment`'s documents, from its norms file `norms`.
    pub(super) fn new(segment: &'a SegmentReader, norms: NormsFile<'a>) -> DocLengths<'a> {
        let run = match segment.meta().docs.runs() {
            [[first, _]] => Some((*first, NormBytes::new(*first, norms.norm_bytes()))),
            _ => None,
        };
        DocLengths {
            run,
            norms,
            segment,
        }
    }

    /// Length (tokens) of global DID `doc`; 0 for a DID the segment does not hold.
    #[inline]
    pub fn of(&self, doc: u32) -> u32 {
        match self.run {
            Some((first, _)) => self.norms.length(doc.wrapping_sub(first)).unwrap_or(0),
            None => self
                .segment
                .meta()
                .docs
                .local(doc)
                .and_then(|local| self.norms.length(local))
                .unwrap_or(0),
        }
    }

    /// The norm byte ([`length_to_norm`]) of global DID `doc`; 0 for a DID the segment does
    /// not hold.
    #[inline]
    pub fn norm_byte(&self, doc: u32) -> u8 {
        match self.run {
            Some((_, bytes)) => bytes.of(doc),
            None => length_to_norm(self.of(doc)),
        }
    }

    /// The norm bytes of a single-run segment, for loops that read many.
    pub fn norm_bytes(&self) -> Option<NormBytes<'a>> {
        self.run.map(|(_, bytes)| bytes)
    }
}
