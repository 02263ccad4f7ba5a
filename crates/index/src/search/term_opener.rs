//! Opens the cursors of one segment for a query: from the resolved terms, through the
//! postings source when there is one.

use super::field_scorers::{field_of, FieldScorers};
use super::phrase::PositionsRegion;
use super::postings_source::PostingsSource;
use super::query_terms::QueryTerms;
use super::query_terms::TermEntry;
use super::term_cursor::{InField, TermCursor};
use crate::segment::SegmentReader;
use crate::IndexError;

/// Everything a query's evaluation over one segment needs to open a term's cursor.
#[derive(Clone, Copy)]
pub struct TermOpener<'a> {
    /// Index of the segment in the reader.
    pub index: usize,
    /// The segment.
    pub segment: &'a SegmentReader,
    /// The query's terms, resolved.
    pub terms: &'a QueryTerms,
    /// Where blocks are read from, when not the postings file.
    pub source: Option<&'a dyn PostingsSource>,
    /// The scorers of the named text fields, whose terms' cursors score with their field's.
    pub scorers: Option<&'a FieldScorers>,
}

impl<'a> TermOpener<'a> {
    /// A cursor on `term` with score weight `weight`, or `None` when the segment lacks it.
    pub fn open(&self, term: &str, weight: f32) -> Result<Option<TermCursor<'a>>, IndexError> {
        let Some(entry) = self.terms.entry(term, self.index) else {
            return Ok(None);
        };
        // A lone posting is in the term's record: no source holds anything of it.
        let blocks = match self.source {
            Some(source)
                if self.segment.direct().is_none() && entry.info.lone_posting().is_none() =>
            {
                source.blocks(self.index, &entry)?
            }
            _ => None,
        };
        let cursor = TermCursor::with_blocks(self.segment, entry, weight, blocks)?;
        Ok(Some(self.placed_in_field(cursor, term)))
    }

    /// `cursor`, on `term`, scoring with the lengths and scorer of the term's text field when
    /// that is a named one.
    fn placed_in_field(&self, cursor: TermCursor<'a>, term: &str) -> TermCursor<'a> {
        let field = field_of(term);
        let Some(bm25) = self.scorers.and_then(|s| s.named(field)) else {
            return cursor;
        };
        match self.segment.field_lengths(field) {
            Some(lengths) => cursor.in_field(InField {
                lengths,
                bm25: bm25.clone(),
            }),
            None => cursor,
        }
    }

    /// The positions of `entry`'s term: from the source when it holds them, else the
    /// segment's positions file (checked against its checksum on first use).
    pub fn positions(&self, entry: &TermEntry) -> Result<PositionsRegion<'a>, IndexError> {
        if let Some(source) = self.source {
            if let Some(held) = source.positions(self.index, entry)? {
                return Ok(PositionsRegion::Held(held));
            }
        }
        self.segment
            .verified_positions(entry)
            .map(PositionsRegion::File)
    }
}
