//! Block-max AND: the top k of a conjunction of terms, skipping what cannot make it.
//!
//! The conjunction is walked a window at a time. A window runs from the lead's (rarest
//! clause's) current DID to the first end of the clauses' current blocks, so that each
//! clause's postings in it lie in one block and the sum of the blocks' score bounds covers
//! every document in it. Then, cheapest test first:
//! 1. a window whose bound cannot beat the threshold is skipped undecoded;
//! 2. the lead's candidates are scored on the lead alone, and a candidate whose lead score plus
//!    the other clauses' block bounds cannot beat the threshold is dropped before any other
//!    list is searched for it (with a frequent low-weight term beside a rarer one, this drops
//!    most candidates of a top-10 query: membership tests cost more than a score);
//! 3. each other clause filters the survivors, by a vector merge with its block
//!    (`sorted_intersect`) or, where the block is much denser than the survivors, by a search
//!    per survivor, noting where each match sits in its block;
//! 4. the matches are scored a clause at a time over arrays, in query order, as the
//!    exhaustive evaluator sums them, so both return the same top k to the bit.

use apcache_codec::{Isa, BLOCK_LEN};

use super::bm25::Bm25;
use super::pruned::{can_beat, clause_stats, excluded, lead_floor, Clause, Outcome};
use super::sorted_intersect::{self, MatchBuffers, Places, OUTPUT_SLACK};
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use super::top_k::{Hit, TopK};
use crate::IndexError;

/// A block is searched per candidate, not merged, when it holds more than this many DIDs per
/// candidate in the window (a merge compares every DID; a search costs about a cache line and
/// a few compares).
const MERGE_MAX_SPAN: usize = 4;

/// The candidates of one window and what is known of each.
struct Window {
    docs: Vec<u32>,
    /// Where a filter writes the candidates it keeps.
    scratch: Vec<u32>,
    /// Column `ci` (`at[ci * BLOCK_LEN..]`): where each candidate sits in clause `ci`'s block
    /// (with [`OUTPUT_SLACK`] more after the last column for vector stores).
    at: Vec<u16>,
    /// Where each candidate was before the last filter ([`Window::kept`]).
    origin: Vec<u16>,
    /// Each candidate's length normalisation ([`Bm25::norm_inverse`]), once computed.
    inverses: Vec<f32>,
    /// Each candidate's lead score, once computed (by the lead filter).
    lead_scores: Vec<f32>,
    /// One clause's saturation keys or scores.
    terms: Vec<f32>,
    /// Each candidate's score, summed in query order as the exhaustive evaluator sums.
    totals: Vec<f64>,
    /// The instruction set of the intersections.
    isa: Isa,
}

impl Window {
    fn new(clauses: usize) -> Window {
        Window {
            docs: Vec::with_capacity(BLOCK_LEN),
            scratch: vec![0; BLOCK_LEN + OUTPUT_SLACK],
            at: vec![0; clauses * BLOCK_LEN + OUTPUT_SLACK],
            origin: vec![0; BLOCK_LEN + OUTPUT_SLACK],
            inverses: Vec::with_capacity(BLOCK_LEN),
            lead_scores: Vec::with_capacity(BLOCK_LEN),
            terms: Vec::with_capacity(BLOCK_LEN),
            totals: Vec::with_capacity(BLOCK_LEN),
            isa: Isa::detect(),
        }
    }

    /// After a filter left `docs` and `origin`: moves what columns `..columns` and the
    /// inverses know of each kept candidate to its new place.
    fn kept(&mut self, columns: usize) {
        let kept = &self.origin[..self.docs.len()];
        for column in self.at[..columns * BLOCK_LEN].chunks_exact_mut(BLOCK_LEN) {
            for (k, &from) in kept.iter().enumerate() {
                column[k] = column[usize::from(from)];
            }
        }
        for known in [&mut self.inverses, &mut self.lead_scores] {
            if !known.is_empty() {
                for (k, &from) in kept.iter().enumerate() {
                    known[k] = known[usize::from(from)];
                }
                known.truncate(kept.len());
            }
        }
    }

    fn compute_inverses(&mut self, cursor: &TermCursor<'_>, bm25: &Bm25) {
        if self.inverses.len() == self.docs.len() {
            return;
        }
        let lengths = cursor.segment().doc_lengths();
        self.inverses.clear();
        self.inverses.extend(
            self.docs
                .iter()
                .map(|&doc| bm25.norm_inverse(lengths.of(doc))),
        );
    }

    /// Writes clause `ci`'s score of every candidate into `terms`.
    fn score_clause(
        &mut self,
        ci: usize,
        cursor: &mut TermCursor<'_>,
        bm25: &Bm25,
    ) -> Result<(), IndexError> {
        let m = self.docs.len();
        let weight = cursor.weight();
        let freqs = cursor.block_freqs()?;
        let column = &self.at[ci * BLOCK_LEN..ci * BLOCK_LEN + m];
        self.terms.clear();
        self.terms.extend(
            column
                .iter()
                .zip(&self.inverses)
                .map(|(&i, &inverse)| Bm25::key_of(freqs[usize::from(i)], inverse)),
        );
        for key in &mut self.terms {
            *key = bm25.score_of_key(weight, *key);
        }
        Ok(())
    }
}

/// Evaluates the conjunction of `clauses` minus the documents of `exclusions` into `top`.
pub(super) fn block_max_and(
    clauses: &mut [Clause<'_>],
    exclusions: &mut [TermCursor<'_>],
    bm25: &Bm25,
    top: &mut TopK,
) -> Result<Outcome, IndexError> {
    clauses.sort_by_key(|c| c.cursor.doc_freq());
    let n = clauses.len();
    let (mut evaluated, mut complete) = (0u64, true);
    let mut window = Window::new(n);
    let mut lead_filter = LeadFilter::default();
    // Clauses in query order, the order the exhaustive evaluator sums their scores in.
    let mut by_position: Vec<usize> = (0..n).collect();
    by_position.sort_by_key(|&ci| clauses[ci].position);
    'windows: loop {
        let start = clauses[0].cursor.doc();
        if start == NO_MORE_DOCS {
            break;
        }
        let mut up_to = NO_MORE_DOCS;
        let mut bound = 0f64;
        let mut lead_bound = 0f64;
        for (ci, c) in clauses.iter_mut().enumerate() {
            match c.cursor.shallow_advance(start, bm25) {
                Some((last, block_bound)) => {
                    up_to = up_to.min(last);
                    bound += f64::from(block_bound);
                    if ci == 0 {
                        lead_bound = f64::from(block_bound);
                    }
                }
                None => break 'windows,
            }
        }
        let threshold = top.threshold();
        if !can_beat(bound, threshold) {
            complete = false;
            if up_to == NO_MORE_DOCS {
                break;
            }
            clauses[0].cursor.advance(up_to + 1)?;
            continue;
        }
        let (lead, others) = clauses
            .split_first_mut()
            .expect("a conjunction has clauses");
        let rest = lead.cursor.block_rest();
        let taken = rest.partition_point(|&d| d <= up_to);
        let base = lead.cursor.block_position();
        window.docs.clear();
        window.docs.extend_from_slice(&rest[..taken]);
        window.inverses.clear();
        window.lead_scores.clear();
        for (i, slot) in window.at[..taken].iter_mut().enumerate() {
            *slot = (base + i) as u16;
        }
        if let Some(threshold) = threshold.filter(|_| lead_filter.worth_trying()) {
            let before = window.docs.len();
            drop_by_lead(
                &mut window,
                &mut lead.cursor,
                bm25,
                threshold,
                bound - lead_bound,
            )?;
            lead_filter.record(before, window.docs.len());
            if window.docs.len() < before {
                complete = false;
            }
        }
        for (ci, c) in others.iter_mut().enumerate().map(|(i, c)| (i + 1, c)) {
            if window.docs.is_empty() {
                break;
            }
            filter_in_block(&mut c.cursor, &mut window, ci)?;
            window.kept(ci);
        }
        if !exclusions.is_empty() && !window.docs.is_empty() {
            drop_excluded(exclusions, &mut window)?;
            window.kept(n);
        }
        if !window.docs.is_empty() {
            evaluated += window.docs.len() as u64;
            window.compute_inverses(&clauses[0].cursor, bm25);
            window.totals.clear();
            window.totals.resize(window.docs.len(), 0.0);
            for &ci in &by_position {
                let scores = if ci == 0 && window.lead_scores.len() == window.docs.len() {
                    &window.lead_scores
                } else {
                    window.score_clause(ci, &mut clauses[ci].cursor, bm25)?;
                    &window.terms
                };
                for (total, &score) in window.totals.iter_mut().zip(scores) {
                    *total += f64::from(score);
                }
            }
            for (&doc, &score) in window.docs.iter().zip(&window.totals) {
                top.push(Hit {
                    doc,
                    score: score as f32,
                });
            }
        }
        clauses[0].cursor.consume(taken)?;
    }
    Ok(Outcome {
        evaluated,
        complete,
        stats: clause_stats(clauses),
    })
}

/// Whether scoring the lead first pays. It costs a length lookup and a score per candidate;
/// it pays when it drops many (a rare heavy term beside a frequent light one), not when most
/// candidates could still make the top k (two terms of similar weight), where membership tests
/// on all candidates and scores for the matches alone are cheaper. The filter runs while it has
/// dropped at least a quarter of what it tested, and on every eighth window otherwise, to
/// notice when the threshold has risen enough for it to pay.
#[derive(Default)]
struct LeadFilter {
    tested: u64,
    dropped: u64,
    windows: u64,
}

impl LeadFilter {
    fn worth_trying(&mut self) -> bool {
        self.windows += 1;
        self.dropped * 4 >= self.tested || self.windows.is_multiple_of(8)
    }

    fn record(&mut self, before: usize, after: usize) {
        // Recent windows count most: the threshold only rises.
        self.tested = self.tested / 2 + before as u64;
        self.dropped = self.dropped / 2 + (before - after) as u64;
    }
}

/// Drops the candidates whose lead score plus `others_bound` (the other clauses' block
/// bounds) cannot beat `threshold`.
fn drop_by_lead(
    window: &mut Window,
    lead: &mut TermCursor<'_>,
    bm25: &Bm25,
    threshold: f32,
    others_bound: f64,
) -> Result<(), IndexError> {
    let before = window.docs.len();
    window.compute_inverses(lead, bm25);
    window.score_clause(0, lead, bm25)?;
    // `can_beat(score + others_bound, threshold)`, solved for the score once.
    let floor = lead_floor(threshold, others_bound);
    let Window {
        docs,
        origin,
        terms,
        lead_scores,
        ..
    } = window;
    let (docs, origin) = (&mut docs[..before], &mut origin[..before]);
    let mut kept = 0;
    for (i, &score) in terms[..before].iter().enumerate() {
        docs[kept] = docs[i];
        origin[kept] = i as u16;
        kept += usize::from(f64::from(score) >= floor);
    }
    lead_scores.clear();
    lead_scores.extend_from_slice(&terms[..before]);
    window.docs.truncate(kept);
    window.kept(1);
    Ok(())
}

/// Keeps the candidates clause `ci`'s cursor holds (every candidate is at most the last DID
/// of the block that holds or follows the first), noting in column `ci` where each sits in
/// that block. The cursor stays in the block.
fn filter_in_block(
    cursor: &mut TermCursor<'_>,
    window: &mut Window,
    ci: usize,
) -> Result<(), IndexError> {
    let Window {
        docs,
        scratch,
        at,
        origin,
        isa,
        ..
    } = window;
    let column = &mut at[ci * BLOCK_LEN..(ci + 1) * BLOCK_LEN + OUTPUT_SLACK];
    let (Some(&first), Some(&last)) = (docs.first(), docs.last()) else {
        return Ok(());
    };
    if cursor.advance(first)? == NO_MORE_DOCS {
        docs.clear();
        return Ok(());
    }
    let base = cursor.block_position();
    let block = cursor.block_rest();
    let span = block.partition_point(|&d| d <= last);
    let mut kept = 0;
    if span <= MERGE_MAX_SPAN * docs.len() {
        let found = sorted_intersect::intersect(
            docs,
            &block[..span],
            MatchBuffers {
                docs: scratch,
                places: Some(Places {
                    in_a: origin,
                    in_b: column,
                    a_offset: 0,
                    b_offset: base as u16,
                }),
            },
            *isa,
        );
        // Candidates past the block's part (`b` consumed first) are not in the list.
        kept = found.matches;
        docs.clear();
        docs.extend_from_slice(&scratch[..kept]);
    } else {
        for i in 0..docs.len() {
            let doc = docs[i];
            let at = cursor.advance(doc)?;
            docs[kept] = doc;
            origin[kept] = i as u16;
            column[kept] = cursor.block_position() as u16;
            kept += usize::from(at == doc);
        }
    }
    docs.truncate(kept);
    // Every later target lies past this window: stay in the block, short of its end.
    let now = cursor.block_position();
    cursor.step_within_block((base + span).saturating_sub(1).saturating_sub(now));
    Ok(())
}

/// Drops the candidates an excluded term holds.
fn drop_excluded(exclusions: &mut [TermCursor<'_>], window: &mut Window) -> Result<(), IndexError> {
    let Window { docs, origin, .. } = window;
    let mut kept = 0;
    for i in 0..docs.len() {
        let doc = docs[i];
        if !excluded(exclusions, doc)? {
            docs[kept] = doc;
            origin[kept] = i as u16;
            kept += 1;
        }
    }
    docs.truncate(kept);
    Ok(())
}
