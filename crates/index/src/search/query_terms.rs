//! A query's terms looked up in every segment's dictionary once, before evaluation.
//!
//! Evaluation needs a term's metadata several times (its document frequency for the weight,
//! then its postings in each segment); looking the dictionary up once and keeping the result
//! here saves the repeated walks of the FST. A prefetcher resolves queued queries ahead of
//! the query threads into a `QueryTerms`, which the query thread then reuses.

use super::index_reader::IndexReader;
use crate::format::TermInfo;
use crate::query::Query;
use crate::IndexError;

/// A term of one segment: its ordinal in the dictionary and its metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermEntry {
    /// Ordinal in the segment's dictionary (the term-info index).
    pub ordinal: u64,
    /// The term's metadata.
    pub info: TermInfo,
}

/// The terms of a query, each with its entry in every segment (`None` where absent).
///
/// Kept sorted by term and searched by bisection: a query has a handful of terms, and a
/// short sorted array costs less than hashing each of them on every lookup.
#[derive(Debug, Clone, Default)]
pub struct QueryTerms {
    terms: Vec<(String, Vec<Option<TermEntry>>)>,
}

impl QueryTerms {
    /// Looks every term of `query` up in every segment of `reader`.
    pub fn resolve(reader: &IndexReader, query: &Query) -> Result<QueryTerms, IndexError> {
        let mut resolved = QueryTerms::default();
        resolved.resolve_into(reader, query)?;
        Ok(resolved)
    }

    /// Like [`QueryTerms::resolve`], reusing this value's allocation.
    pub fn resolve_into(&mut self, reader: &IndexReader, query: &Query) -> Result<(), IndexError> {
        let resolved = self.resolve_unchecked(reader, query);
        reader.unless_mapped_read_failed(resolved)
    }

    fn resolve_unchecked(&mut self, reader: &IndexReader, query: &Query) -> Result<(), IndexError> {
        self.terms.clear();
        // Distinct and sorted.
        let terms = query.terms();
        self.terms.extend(terms.iter().map(|term| {
            (
                term.to_string(),
                Vec::with_capacity(reader.segments().len()),
            )
        }));
        // A segment's lookups go together, so that their misses overlap.
        let mut entries = Vec::with_capacity(terms.len());
        for segment in reader.segments() {
            segment.lookup_many(&terms, &mut entries)?;
            for ((_, per_segment), entry) in self.terms.iter_mut().zip(entries.drain(..)) {
                per_segment.push(entry);
            }
        }
        Ok(())
    }

    fn entries(&self, term: &str) -> Option<&[Option<TermEntry>]> {
        self.terms
            .binary_search_by(|(t, _)| t.as_str().cmp(term))
            .ok()
            .map(|i| self.terms[i].1.as_slice())
    }

    /// The entry of `term` in segment `segment`, if the segment has it.
    pub fn entry(&self, term: &str, segment: usize) -> Option<TermEntry> {
        self.entries(term)
            .and_then(|entries| entries.get(segment).copied().flatten())
    }

    /// Documents holding `term`, over all segments.
    pub fn doc_freq(&self, term: &str) -> u64 {
        self.entries(term).map_or(0, |entries| {
            entries
                .iter()
                .flatten()
                .map(|e| u64::from(e.info.doc_freq))
                .sum()
        })
    }

    /// Every resolved term with its per-segment entries.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[Option<TermEntry>])> {
        self.terms.iter().map(|(t, e)| (t.as_str(), e.as_slice()))
    }
}
