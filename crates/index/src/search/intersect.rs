//! Intersection a block at a time: the lead cursor's (the rarest term's) current block is
//! the window of candidates, and each other cursor filters the candidates by a branch-free
//! merge against its decoded block, skipping the blocks between candidates with its skip
//! entries. A document-at-a-time leapfrog pays a mispredicted branch on almost every step
//! when the lists have similar densities; the merge (eight DIDs against eight with AVX2) pays
//! a cycle or two per DID compared. A list much denser than the lead is searched for each
//! candidate instead (galloping), since a merge would compare every one of its DIDs.

use apcache_codec::{Isa, BLOCK_LEN};

use super::sorted_intersect::{self, MatchBuffers, OUTPUT_SLACK};
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use crate::IndexError;

/// Density ratio (a list's length over the lead's) up to which a list is merged with the
/// candidates rather than searched for each. With the vector merge of
/// [`sorted_intersect`](super::sorted_intersect), the bench's AND counts on Wikipedia took
/// 20.3 µs on average at 16 and at 32, against 21.1 at 8 and 26.0 at 4 (the scalar merge had
/// its best at 4).
const MERGE_MAX_RATIO: u64 = 16;

/// Whether a list of `doc_freq` postings filters candidates from a lead of `lead_freq` by
/// merging (else by searching for each candidate).
#[inline]
pub fn merges(doc_freq: u32, lead_freq: u32) -> bool {
    u64::from(doc_freq) <= MERGE_MAX_RATIO * u64::from(lead_freq)
}

/// The candidates of a window of [`next_window`] and room to filter them.
pub struct Window {
    pub docs: Vec<u32>,
    scratch: Box<[u32; BLOCK_LEN + OUTPUT_SLACK]>,
    isa: Isa,
}

impl Window {
    pub fn new() -> Window {
        Window {
            docs: Vec::with_capacity(BLOCK_LEN),
            scratch: Box::new([0; BLOCK_LEN + OUTPUT_SLACK]),
            isa: Isa::detect(),
        }
    }
}

/// Fills `window` with the next DIDs every cursor holds, from the lead's (`cursors[0]`)
/// current block, and moves the lead to its next block; returns `false` once the lead is
/// exhausted. The window may be left empty when nothing in it matches. Afterwards every other
/// cursor is on or past the window's last match, or before it in a block stored as a bitset
/// that holds it ([`TermCursor::holds`]).
pub fn next_window(
    cursors: &mut [TermCursor<'_>],
    window: &mut Window,
) -> Result<bool, IndexError> {
    let Window {
        docs: out,
        scratch,
        isa,
    } = window;
    let Some((lead, others)) = cursors.split_first_mut() else {
        return Ok(false);
    };
    out.clear();
    let rest = lead.block_rest();
    let Some(&last) = rest.last() else {
        return Ok(false);
    };
    out.extend_from_slice(rest);
    lead.consume(rest.len())?;
    let lead_freq = lead.doc_freq();
    for cursor in others.iter_mut() {
        if merges(cursor.doc_freq(), lead_freq) {
            filter(cursor, out, &mut scratch[..], *isa)?;
        } else {
            filter_by_search(cursor, out)?;
        }
        if out.is_empty() {
            break;
        }
    }
    // Past the window: the lead moves on to its next block whatever matched.
    debug_assert!(lead.doc() > last);
    Ok(true)
}

/// Keeps in `candidates` (increasing) the DIDs `cursor` holds, moving the cursor to the
/// last one kept or past it.
fn filter(
    cursor: &mut TermCursor<'_>,
    candidates: &mut Vec<u32>,
    scratch: &mut [u32],
    isa: Isa,
) -> Result<(), IndexError> {
    let mut kept = 0;
    let mut i = 0;
    while i < candidates.len() {
        if cursor.advance(candidates[i])? == NO_MORE_DOCS {
            break;
        }
        let block = cursor.block_rest();
        let found = sorted_intersect::intersect(
            &candidates[i..],
            block,
            MatchBuffers {
                docs: scratch,
                places: None,
            },
            isa,
        );
        // The matches are no more than the candidates consumed: they fit before `i`.
        candidates[kept..kept + found.matches].copy_from_slice(&scratch[..found.matches]);
        kept += found.matches;
        i += found.a_end;
        let inside = found.b_end < block.len();
        // Past the block, or (candidates ran out inside it) on the first DID not passed.
        cursor.consume(found.b_end)?;
        if inside {
            break;
        }
    }
    candidates.truncate(kept);
    Ok(())
}

/// `filter` for a list much denser than the candidates: one search per candidate.
fn filter_by_search(
    cursor: &mut TermCursor<'_>,
    candidates: &mut Vec<u32>,
) -> Result<(), IndexError> {
    let mut kept = 0;
    for i in 0..candidates.len() {
        let doc = candidates[i];
        if cursor.doc() == NO_MORE_DOCS {
            break;
        }
        candidates[kept] = doc;
        kept += usize::from(cursor.holds(doc)?);
    }
    candidates.truncate(kept);
    Ok(())
}
