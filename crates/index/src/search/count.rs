//! Counting the matches of flat queries without scoring or the general evaluator's tree.
//!
//! A disjunction of two terms (without exclusions) is counted as the sum of their document
//! frequencies less the size of their intersection, which skips most of a frequent list. A
//! longer one is counted without visiting its matches in order: every DID of every term is set
//! in a bitset over the segment's DID range (a block the codec stores as a bitset is ORed in a
//! word at a time), excluded terms' DIDs are cleared, and the bits are counted. Decoding is
//! the whole cost (no per-document merge step), which is what a count of a union of frequent
//! terms needs; a very sparse union (under a posting per 64 bitset words) is left to the
//! document-at-a-time evaluator. A conjunction is counted a window at a time
//! ([`intersect::next_window`]), rarest list first, the skip entries skipping whole blocks;
//! two frequent terms of similar lengths are counted on a bitset instead
//! ([`count_dense_pair`]), where their bitset blocks meet a word at a time.

use super::cancel;
use super::intersect;
use super::stats::SearchStats;
use super::term_cursor::{BlockDids, TermCursor};
use crate::segment::SegmentReader;
use crate::IndexError;

/// Bitset words per posting above which a union is counted document at a time instead. The
/// bitset costs a pass to clear it and one to count it, a fraction of a nanosecond per word
/// each, and a few nanoseconds per posting marked; the evaluator pays tens of nanoseconds per
/// posting to merge the lists. So the bitset wins down to about one posting per 64 words (on
/// 100 generated disjunctions of 3 to 12 terms x 50 as COUNT: 0.28-0.42 s of CPU against
/// 0.40-0.49 s with the threshold at one posting per word).
const MAX_WORDS_PER_POSTING: u64 = 64;

/// Postings of the rarer list per bitset word below which two lists are intersected a window
/// at a time rather than on a bitset. A union's bitset replaces decoding that a union does
/// anyway, so it pays down to a posting per 64 words; an intersection's replaces a window
/// intersection that skips, whose cost follows the rarer list, while the bitset costs a pass
/// over every word on top of decoding the denser list. So a pair meets on the bitset only
/// when the rarer list is at least as long as the bitset (on the search-benchmark-game's
/// two-word unions counted by inclusion-exclusion, the union's threshold made their
/// intersections 1.2-1.6x slower).
const MIN_PAIR_POSTINGS_PER_WORD: u64 = 1;

/// The matches of the union of `terms` minus those of `excluded`, if the union is dense
/// enough for a bitset to pay; `None` leaves the count to the caller.
pub fn count_union(
    segment: &SegmentReader,
    terms: &mut [TermCursor<'_>],
    excluded: &mut [TermCursor<'_>],
) -> Result<Option<(u64, SearchStats)>, IndexError> {
    if let ([a, b], true) = (&*terms, excluded.is_empty()) {
        // |A ∪ B| = |A| + |B| - |A ∩ B|: the intersection, led by the rarer list, skips most
        // of a frequent one, where the bitset would decode all of it; two dense lists of
        // similar lengths meet on a bitset, as their conjunction's count does.
        let both = u64::from(a.doc_freq()) + u64::from(b.doc_freq());
        let (common, stats) = match count_dense_pair(segment, terms, &mut [])? {
            Some(counted) => counted,
            None => count_intersection(terms, &mut [])?,
        };
        return Ok(Some((both - common, stats)));
    }
    let Some((first, words)) = did_range(segment) else {
        return Ok(Some((0, SearchStats::default())));
    };
    let postings: u64 = terms.iter().map(|t| u64::from(t.doc_freq())).sum();
    if postings * MAX_WORDS_PER_POSTING < words as u64 {
        return Ok(None);
    }
    let mut bits = vec![0u64; words];
    let mut stats = SearchStats::default();
    for term in terms.iter_mut() {
        stats += mark(term, first, &mut bits, |word, mask| *word |= mask)?;
    }
    for term in excluded.iter_mut() {
        stats += mark(term, first, &mut bits, |word, mask| *word &= !mask)?;
    }
    let count = apcache_codec::popcount(&bits);
    Ok(Some((count, stats)))
}

/// The segment's first DID and the bitset words its DID range takes; `None` for a segment
/// without documents.
fn did_range(segment: &SegmentReader) -> Option<(u32, usize)> {
    let runs = segment.meta().docs.runs();
    let first = runs.iter().map(|r| r[0]).min()?;
    let last = runs.iter().map(|r| r[0] + r[1]).max()?;
    Some((first, (last - first).div_ceil(64) as usize))
}

/// The matches of the intersection of two terms minus those of `excluded`, counted with a
/// bitset when both lists are dense: the denser list is marked in a bitset over the segment's
/// DIDs (its bitset blocks a word at a time), the excluded terms are cleared from it, and the
/// other list's DIDs are counted against it (its bitset blocks by `AND` and popcount). Two
/// frequent terms, whose blocks the window intersection decodes and merges one by one, cost a
/// few word operations per block here. `None` leaves the count to [`count_intersection`]:
/// more than two terms, lists of very different lengths (the intersection skips most of the
/// longer one), or a rarer list under [`MIN_PAIR_POSTINGS_PER_WORD`] postings per word.
pub fn count_dense_pair(
    segment: &SegmentReader,
    terms: &mut [TermCursor<'_>],
    excluded: &mut [TermCursor<'_>],
) -> Result<Option<(u64, SearchStats)>, IndexError> {
    let [a, b] = terms else {
        return Ok(None);
    };
    let (denser, rarer) = if a.doc_freq() >= b.doc_freq() {
        (a, b)
    } else {
        (b, a)
    };
    if !intersect::merges(denser.doc_freq(), rarer.doc_freq()) {
        return Ok(None);
    }
    let Some((first, words)) = did_range(segment) else {
        return Ok(Some((0, SearchStats::default())));
    };
    if u64::from(rarer.doc_freq()) < MIN_PAIR_POSTINGS_PER_WORD * words as u64 {
        return Ok(None);
    }
    let mut bits = vec![0u64; words];
    let mut stats = mark(denser, first, &mut bits, |word, mask| *word |= mask)?;
    for term in excluded.iter_mut() {
        stats += mark(term, first, &mut bits, |word, mask| *word &= !mask)?;
    }
    // A word's DIDs come to `apply` once per block they lie in, with disjoint masks: the
    // popcounts add up to the common DIDs.
    let common = std::cell::Cell::new(0u64);
    stats += mark(rarer, first, &mut bits, |word, mask| {
        common.set(common.get() + u64::from((*word & mask).count_ones()));
    })?;
    Ok(Some((common.get(), stats)))
}

/// Applies `apply` to every bitset word that holds DIDs of `term` (relative to `first`), with
/// the mask of those DIDs' bits; returns the cursor's work.
///
/// A block's DIDs increase, so the DIDs of one word come together: their bits are gathered in
/// a register ([`WordMask`]) and the word is written once, when a DID falls in another word.
/// Setting each DID's bit in memory instead chains every posting of a dense list (a stop word
/// sets most of the bits of every word) through a load and a store of the same word. Eight
/// DIDs at a time that share a word (the first and the last do) are gathered without a branch
/// per DID, which is most of a dense list. A sparse block (an average gap of [`SPARSE_GAP`] or
/// more) has few DIDs per word, and a branch on whether the next one shares the open word
/// mispredicts: its bits are set in memory one at a time.
fn mark(
    term: &mut TermCursor<'_>,
    first: u32,
    bits: &mut [u64],
    apply: impl Fn(&mut u64, u64),
) -> Result<SearchStats, IndexError> {
    term.for_each_block(|block| {
        let docs = match block {
            BlockDids::Docs(docs) => docs,
            BlockDids::Bits { first: base, words } => {
                return apply_words(base, words, first, bits, &apply);
            }
        };
        if let (Some(&low), Some(&high)) = (docs.first(), docs.last()) {
            if u64::from(high.wrapping_sub(low)) >= SPARSE_GAP * docs.len() as u64 {
                // Most DIDs in words of their own: set each in memory, without the branch
                // on the open word, which such a block mispredicts.
                for &doc in docs {
                    let at = doc.wrapping_sub(first);
                    if let Some(word) = bits.get_mut((at >> 6) as usize) {
                        apply(word, 1 << (at & 63));
                    }
                }
                return;
            }
        }
        let mut open = WordMask::default();
        let mut chunks = docs.chunks_exact(8);
        for chunk in &mut chunks {
            let (low, high) = (chunk[0], chunk[7]);
            if low >= first && (low - first) >> 6 == (high.wrapping_sub(first)) >> 6 {
                let mask = chunk.iter().fold(0u64, |mask, &doc| {
                    mask | 1 << (doc.wrapping_sub(first) & 63)
                });
                open.add(((low - first) >> 6) as usize, mask, bits, &apply);
            } else {
                for &doc in chunk {
                    open.add_doc(doc, first, bits, &apply);
                }
            }
        }
        for &doc in chunks.remainder() {
            open.add_doc(doc, first, bits, &apply);
        }
        open.flush(bits, &apply);
    })?;
    Ok(term.stats())
}

/// Applies `apply` to the bitset words under a block stored as a bitset: `words` (little
/// endian) hold bit `k` for DID `base + k`, so each lands shifted across at most two words of
/// `bits` (relative to `first`). Bits outside `bits` (which a verified list has none of) are
/// ignored.
fn apply_words(
    base: u32,
    words: &[u8],
    first: u32,
    bits: &mut [u64],
    apply: &impl Fn(&mut u64, u64),
) {
    let Some(offset) = base.checked_sub(first) else {
        return;
    };
    let (at, shift) = ((offset >> 6) as usize, offset & 63);
    for (k, word) in words.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        if let Some(target) = bits.get_mut(at + k) {
            apply(target, word << shift);
        }
        if shift != 0 {
            if let Some(target) = bits.get_mut(at + k + 1) {
                apply(target, word >> (64 - shift));
            }
        }
    }
}

/// The average gap between a block's DIDs from which most of them fall in words of their
/// own, and [`mark`] sets each bit in memory rather than gathering a word's bits first.
const SPARSE_GAP: u64 = 32;

/// The bits gathered for one word of a bitset, written when the next bits fall in another.
struct WordMask {
    word: usize,
    mask: u64,
}

impl Default for WordMask {
    fn default() -> WordMask {
        WordMask {
            word: usize::MAX,
            mask: 0,
        }
    }
}

impl WordMask {
    /// Adds `mask` to word `word`, writing the open word first if it is another.
    #[inline]
    fn add(&mut self, word: usize, mask: u64, bits: &mut [u64], apply: &impl Fn(&mut u64, u64)) {
        if word != self.word {
            self.flush(bits, apply);
            self.word = word;
        }
        self.mask |= mask;
    }

    /// Adds the bit of `doc` (relative to `first`; a DID below it, which fails `check`, is
    /// ignored).
    #[inline]
    fn add_doc(&mut self, doc: u32, first: u32, bits: &mut [u64], apply: &impl Fn(&mut u64, u64)) {
        if let Some(at) = doc.checked_sub(first) {
            self.add((at >> 6) as usize, 1 << (at & 63), bits, apply);
        }
    }

    /// Writes the open word (a word past the bitset, which fails `check`, is ignored).
    #[inline]
    fn flush(&mut self, bits: &mut [u64], apply: &impl Fn(&mut u64, u64)) {
        if let Some(target) = bits.get_mut(self.word) {
            apply(target, self.mask);
        }
        self.mask = 0;
    }
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
        // A window's other lists may be tested bit by bit, never decoded.
        cancel::check()?;
        if excluded.is_empty() {
            count += window.docs.len() as u64;
            continue;
        }
        'matches: for &doc in &window.docs {
            for cursor in excluded.iter_mut() {
                if cursor.holds(doc)? {
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
