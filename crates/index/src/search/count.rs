//! Counting the matches of flat queries without scoring or the general evaluator's tree.
//!
//! A disjunction of two terms (without exclusions) is counted as the sum of their document
//! frequencies less the size of their intersection, which skips most of a frequent list. A
//! longer one is counted without visiting its matches in order: every DID of every term is set
//! in a bitset over the segment's DID range, excluded terms' DIDs are cleared, and the bits are
//! counted. Decoding is the whole cost (no per-document merge step), which is what a count of a
//! union of frequent terms needs; a sparse union (few postings for a wide DID range) is left to
//! the document-at-a-time evaluator. A conjunction is counted a window at a time
//! ([`intersect::next_window`]), rarest list first, the skip entries skipping whole blocks.

use super::intersect;
use super::stats::SearchStats;
use super::term_cursor::TermCursor;
use crate::segment::SegmentReader;
use crate::IndexError;

/// Postings per bitset word below which a union is counted document at a time instead.
const MIN_POSTINGS_PER_WORD: u64 = 1;

/// The matches of the union of `terms` minus those of `excluded`, if the union is dense
/// enough for a bitset to pay; `None` leaves the count to the caller.
pub fn count_union(
    segment: &SegmentReader,
    terms: &mut [TermCursor<'_>],
    excluded: &mut [TermCursor<'_>],
) -> Result<Option<(u64, SearchStats)>, IndexError> {
    if let ([a, b], true) = (&*terms, excluded.is_empty()) {
        // |A ∪ B| = |A| + |B| - |A ∩ B|: the intersection, led by the rarer list, skips most
        // of a frequent one, where the bitset would decode all of it.
        let both = u64::from(a.doc_freq()) + u64::from(b.doc_freq());
        let (common, stats) = count_intersection(terms, &mut [])?;
        return Ok(Some((both - common, stats)));
    }
    let runs = segment.meta().docs.runs();
    let (Some(first), Some(last)) = (
        runs.iter().map(|r| r[0]).min(),
        runs.iter().map(|r| r[0] + r[1]).max(),
    ) else {
        return Ok(Some((0, SearchStats::default())));
    };
    let words = (last - first).div_ceil(64) as usize;
    let postings: u64 = terms.iter().map(|t| u64::from(t.doc_freq())).sum();
    if postings < MIN_POSTINGS_PER_WORD * words as u64 {
        return Ok(None);
    }
    let mut bits = vec![0u64; words];
    let mut stats = SearchStats::default();
    for term in terms.iter_mut() {
        stats += mark(term, first, &mut bits, |word, bit| *word |= bit)?;
    }
    for term in excluded.iter_mut() {
        stats += mark(term, first, &mut bits, |word, bit| *word &= !bit)?;
    }
    let count = apcache_codec::popcount(&bits);
    Ok(Some((count, stats)))
}

/// Applies `apply` to the bitset word and bit of every DID of `term` (relative to `first`);
/// returns the cursor's work.
fn mark(
    term: &mut TermCursor<'_>,
    first: u32,
    bits: &mut [u64],
    apply: impl Fn(&mut u64, u64),
) -> Result<SearchStats, IndexError> {
    term.for_each_block(|docs| {
        for &doc in docs {
            // A DID outside the segment's range fails `check`; ignore it here.
            let Some(at) = doc.checked_sub(first) else {
                continue;
            };
            if let Some(word) = bits.get_mut((at >> 6) as usize) {
                apply(word, 1 << (at & 63));
            }
        }
    })?;
    Ok(term.stats())
}

/// The matches of the intersection of `terms` (at least one) minus those of `excluded`.
pub fn count_intersection(
    terms: &mut [TermCursor<'_>],
    excluded: &mut [TermCursor<'_>],
) -> Result<(u64, SearchStats), IndexError> {
    terms.sort_by_key(TermCursor::doc_freq);
    let mut count = 0u64;
    let mut window = intersect::Window::new();
    while intersect::next_window(terms, &mut window)? {
        if excluded.is_empty() {
            count += window.docs.len() as u64;
            continue;
        }
        'matches: for &doc in &window.docs {
            for cursor in excluded.iter_mut() {
                if cursor.advance(doc)? == doc {
                    continue 'matches;
                }
            }
            count += 1;
        }
    }
    let mut stats = SearchStats::default();
    for cursor in terms.iter().chain(excluded.iter()) {
        stats += cursor.stats();
    }
    Ok((count, stats))
}
