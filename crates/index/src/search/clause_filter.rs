//! One clause of a conjunction or a disjunction applied to a sorted list of candidates: which
//! of them its list holds, where each sits in its block, and its frequency there.
//!
//! The candidates are taken a block of the clause at a time. A block stored as a bitset is
//! not decoded: each candidate's bit is tested and its place counted from the words
//! ([`bitset_filter`]). A decoded block is merged with the candidates in it (a vector merge,
//! [`sorted_intersect`]) or, where it is much denser than they are, searched once per
//! candidate. The frequencies of the matches are then read at their places, a few selected
//! without decoding the block's frequencies ([`TermCursor::select_freqs`]). Block-max AND
//! filters each window's survivors through its clauses this way, and MaxScore applies each
//! non-essential clause to a window's matches this way: a membership test per candidate
//! would move the cursor, find its block again and count a bitset's bits from its start.

use apcache_codec::{Isa, BLOCK_LEN};

use super::bitset_filter::{self, BitMatches};
use super::sorted_intersect::{self, MatchBuffers, Places};
use super::sorted_search;
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use crate::IndexError;

/// A block is searched per candidate, not merged, when it holds more than this many DIDs per
/// candidate (a merge compares every DID; a search costs about a cache line and a few
/// compares).
const MERGE_MAX_SPAN: usize = 4;

/// Where [`filter`] writes the candidates it keeps, each slice with room for every candidate
/// and [`sorted_intersect::OUTPUT_SLACK`] more (vector stores write whole vectors).
pub(super) struct ClauseMatches<'o> {
    /// The kept candidates' DIDs.
    pub(super) docs: &'o mut [u32],
    /// Each one's index in the candidates.
    pub(super) origin: &'o mut [u16],
    /// Each one's place in the clause's block (scratch for the frequencies' selection).
    pub(super) places: &'o mut [u16],
    /// Each one's frequency in the clause.
    pub(super) freqs: &'o mut [u32],
}

/// Keeps those of the increasing `candidates` (at most `u16::MAX + 1`) that `cursor`'s list
/// holds, writing each to `out` with its index in `candidates` and its frequency; returns how
/// many. The cursor only moves forward: a later call with larger candidates goes on from
/// where it is left.
pub(super) fn filter(
    cursor: &mut TermCursor<'_>,
    candidates: &[u32],
    out: ClauseMatches<'_>,
    isa: Isa,
) -> Result<usize, IndexError> {
    let ClauseMatches {
        docs,
        origin,
        places,
        freqs,
    } = out;
    let count = candidates.len();
    let mut kept = 0;
    let mut i = 0;
    while i < count {
        if !cursor.seek_block(candidates[i]) {
            break;
        }
        // The candidates up to the end of the cursor's block.
        let block_entry = cursor.current_entry();
        let group = match block_entry.last_doc.checked_add(1) {
            Some(past) => sorted_search::count_below(&candidates[i..], past, isa),
            None => count - i,
        };
        let in_block = &candidates[i..i + group];
        // The matches go after those of the blocks before.
        let (out_docs, out_origin, out_places) =
            (&mut docs[kept..], &mut origin[kept..], &mut places[kept..]);
        let found = if let Some(words) = cursor.dense_words()? {
            // A block stored as a bitset: a bit test and a rank per candidate, no decoding.
            // The cursor stays where it is, before every later candidate.
            let out = BitMatches {
                docs: out_docs,
                origin: out_origin,
                places: out_places,
                offset: i,
            };
            bitset_filter::filter(words, block_entry.first_doc, in_block, out)
        } else {
            match filter_decoded_block(cursor, in_block, i, out_docs, out_origin, out_places, isa)?
            {
                Some(found) => found,
                None => break,
            }
        };
        if found > 0 {
            let range = kept..kept + found;
            cursor.select_freqs(&places[range.clone()], &mut freqs[range])?;
        }
        kept += found;
        i += group;
    }
    Ok(kept)
}

/// [`filter`] for a block of the clause that is decoded: moves the cursor to the first
/// of `candidates` (all at most the block's last DID; the first at index `offset` of the
/// window's) and writes the matches, their origins and their places in the block from the
/// start of `scratch`, `origin` and `places`; returns how many, or `None` when the cursor ran
/// out.
// Seven parameters: the three output columns, split off by the caller.
#[allow(clippy::too_many_arguments)]
fn filter_decoded_block(
    cursor: &mut TermCursor<'_>,
    candidates: &[u32],
    offset: usize,
    scratch: &mut [u32],
    origin: &mut [u16],
    places: &mut [u16],
    isa: Isa,
) -> Result<Option<usize>, IndexError> {
    if cursor.advance(candidates[0])? == NO_MORE_DOCS {
        return Ok(None);
    }
    let group = candidates.len();
    let last = candidates[group - 1];
    let base = cursor.block_position();
    let block = cursor.block_rest();
    // Merge when the block's DIDs up to the last candidate are at most `MERGE_MAX_SPAN`
    // per candidate: only those are counted, and when there are more, one compare says so.
    let most = MERGE_MAX_SPAN * group;
    let merge = block.get(most).is_none_or(|&d| d > last);
    let found = if merge {
        let head = &block[..block.len().min(most)];
        let span = match last.checked_add(1) {
            Some(past) => sorted_search::count_below(head, past, isa),
            None => head.len(),
        };
        let found = sorted_intersect::intersect(
            candidates,
            &block[..span],
            MatchBuffers {
                docs: scratch,
                places: Some(Places {
                    in_a: origin,
                    in_b: places,
                    a_offset: offset as u16,
                    b_offset: base as u16,
                }),
            },
            isa,
        );
        // Past the block's part (`b` consumed first) nothing is in the list.
        let now = cursor.block_position();
        cursor.step_within_block((base + span).saturating_sub(1).saturating_sub(now));
        found.matches
    } else if let Ok(full) = <&[u32; BLOCK_LEN]>::try_from(cursor.block_docs()) {
        // Each candidate placed in the full block by its samples, with no branch on the
        // data (`advance` would gallop, and mispredict about once per candidate).
        let samples = sorted_search::block_samples(full);
        let mut found = 0;
        let mut place = 0;
        for (j, &doc) in candidates.iter().enumerate() {
            // The candidate is at most the block's last DID, so its place is in the block.
            place = sorted_search::count_below_in_block(full, &samples, doc, isa);
            scratch[found] = doc;
            origin[found] = (offset + j) as u16;
            places[found] = place as u16;
            found += usize::from(full[place.min(BLOCK_LEN - 1)] == doc);
        }
        cursor.step_within_block(place.saturating_sub(cursor.block_position()));
        found
    } else {
        let mut found = 0;
        for (j, &doc) in candidates.iter().enumerate() {
            let at = cursor.advance(doc)?;
            scratch[found] = doc;
            origin[found] = (offset + j) as u16;
            places[found] = cursor.block_position() as u16;
            found += usize::from(at == doc);
        }
        found
    };
    Ok(Some(found))
}
