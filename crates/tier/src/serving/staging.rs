//! What the cache modes' workers do to a query's terms: copy their postings into the cache,
//! and the positions of the terms that stand in one of its phrases. Shared by the benchmark
//! harness ([`super::serve`]) and the live service ([`super::live`]).

use apcache_index::query::Query;
use apcache_index::search::{IndexReader, QueryTerms, TermEntry};

use crate::cache_error::CacheError;
use crate::positions_layout::PositionsLayout;
use crate::postings_cache::{Ensured, Part, PostingsCache, Prefetch};
use crate::term_layout::TermLayout;

/// A `hybrid` job: a part of a term (of the reader's segment `.0`) a query missed.
pub(super) type CacheJob = (usize, TermEntry, Part);

/// A worker's reusable buffers.
#[derive(Default)]
pub(super) struct Staging {
    terms: TermLayout,
    positions: PositionsLayout,
    segments: Vec<u32>,
}

impl Staging {
    /// Makes sure `part` of `term` of segment `segment` is cached.
    pub fn ensure(
        &mut self,
        cache: &PostingsCache,
        reader: &IndexReader,
        (segment, term, part): CacheJob,
        prefetch: Option<Prefetch>,
    ) -> Result<Ensured, CacheError> {
        let segment_reader = &reader.segments()[segment];
        if part == Part::Positions && !segment_reader.has_positions() {
            // The phrase fails with the index's own error when it runs.
            return Ok(Ensured::Bypassed);
        }
        match part {
            Part::Postings => cache.ensure(
                segment,
                segment_reader,
                &term,
                prefetch,
                &mut self.terms,
                &mut self.segments,
            ),
            Part::Positions => cache.ensure_positions(
                segment,
                segment_reader,
                &term,
                prefetch,
                &mut self.positions,
                &mut self.segments,
            ),
        }
    }

    /// Makes every term of `query` (resolved in `terms`) ready in the cache: its postings, and
    /// its positions if it stands in a phrase of the query. `tally` sees each outcome; the
    /// parts cached (hits and loads, not bypassed ones) are returned, for the caller to
    /// release with [`PostingsCache::finish_query`] when the query is done.
    pub fn stage_query(
        &mut self,
        cache: &PostingsCache,
        reader: &IndexReader,
        query: &Query,
        terms: &QueryTerms,
        prefetch: Option<Prefetch>,
        mut tally: impl FnMut(Ensured),
    ) -> Result<Vec<(usize, u64, Part)>, CacheError> {
        let phrase_terms = query.phrase_terms();
        let mut staged = Vec::new();
        for (text, entries) in terms.iter() {
            let parts: &[Part] = if phrase_terms.contains(&text) {
                &[Part::Postings, Part::Positions]
            } else {
                &[Part::Postings]
            };
            for (segment, entry) in entries.iter().enumerate() {
                let Some(entry) = entry else { continue };
                for &part in parts {
                    let ensured = self.ensure(cache, reader, (segment, *entry, part), prefetch)?;
                    tally(ensured);
                    if !matches!(ensured, Ensured::Bypassed | Ensured::Inline) {
                        staged.push((segment, entry.ordinal, part));
                    }
                }
            }
        }
        Ok(staged)
    }
}

/// `base-prefetch`'s share of phrases: reads the positions of the terms that stand in a phrase
/// of `query` through the segments' mappings of their positions files, a byte a page, so that
/// they are in the page cache when the query runs (the postings are warmed through the
/// storage loaders).
pub(super) fn warm_positions(
    reader: &IndexReader,
    query: &Query,
    terms: &QueryTerms,
) -> Result<(), CacheError> {
    let phrase_terms = query.phrase_terms();
    for (text, entries) in terms.iter() {
        if !phrase_terms.contains(&text) {
            continue;
        }
        for (segment, entry) in entries.iter().enumerate() {
            let (Some(entry), Some(segment)) = (entry, reader.segments().get(segment)) else {
                continue;
            };
            if !segment.has_positions() {
                continue;
            }
            let bytes = segment.verified_positions(entry)?.bytes();
            let touched = bytes.iter().step_by(4096).fold(0u8, |a, &b| a ^ b);
            std::hint::black_box(touched);
        }
    }
    Ok(())
}
