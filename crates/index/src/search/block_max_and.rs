//! Block-max AND: the top k of a conjunction of terms, skipping what cannot make it.
//!
//! The conjunction is walked a window at a time. A window runs from the lead's (rarest
//! clause's) current DID to the first end of the clauses' current blocks, so that each
//! clause's postings in it lie in one block and the sum of the blocks' score bounds covers
//! every document in it. Then, cheapest test first:
//! 1. a window whose bound cannot beat the threshold is skipped undecoded;
//! 2. the lead's candidates are tested on the lead alone ([`lead_filter`]): a candidate whose
//!    lead score plus the other clauses' block bounds cannot beat the threshold is dropped
//!    before any other list is searched for it (membership tests cost more than this test,
//!    which compares saturation keys and computes no score);
//! 3. each other clause filters the survivors, by a vector merge with its block
//!    (`sorted_intersect`) or, where the block is much denser than the survivors, by a search
//!    per survivor, noting where each match sits in its block;
//! 4. the matches are scored a clause at a time over arrays, in query order, as the
//!    exhaustive evaluator sums them, so both return the same top k to the bit.
//!
//! [`lead_filter`]: super::lead_filter

use apcache_codec::{Isa, BLOCK_LEN};

use super::bm25::Bm25;
use super::lead_filter::{self, LeadPostings, Survivors};
use super::pruned::{can_beat, clause_stats, excluded, key_floor, lead_floor, Clause, Outcome};
use super::sorted_intersect::{self, MatchBuffers, Places, OUTPUT_SLACK};
use super::sorted_search;
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
    /// Where the lead filter writes, whole vectors at a time (then copied to `docs` and
    /// `inverses`: resizing those to a block each window would cost a fill of it).
    lead_docs: Vec<u32>,
    lead_inverses: Vec<f32>,
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
            lead_docs: vec![0; BLOCK_LEN + lead_filter::OUTPUT_SLACK],
            lead_inverses: vec![0.0; BLOCK_LEN + lead_filter::OUTPUT_SLACK],
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
        if !self.inverses.is_empty() {
            for (k, &from) in kept.iter().enumerate() {
                self.inverses[k] = self.inverses[usize::from(from)];
            }
            self.inverses.truncate(kept.len());
        }
    }

    /// Takes the lead's next `taken` postings as the window's candidates.
    fn take_lead(&mut self, lead: &TermCursor<'_>, taken: usize) {
        let base = lead.block_position();
        self.docs.clear();
        self.docs.extend_from_slice(&lead.block_rest()[..taken]);
        self.inverses.clear();
        for (i, slot) in self.at[..taken].iter_mut().enumerate() {
            *slot = (base + i) as u16;
        }
    }

    /// Takes those of the lead's next `taken` postings whose saturation key reaches
    /// `key_floor` as the window's candidates, with their length normalisations.
    fn take_lead_filtered(
        &mut self,
        lead: &mut TermCursor<'_>,
        taken: usize,
        bm25: &Bm25,
        key_floor: f32,
    ) -> Result<(), IndexError> {
        let base = lead.block_position();
        let lengths = lead.segment().doc_lengths();
        let (docs, freqs) = lead.block_rest_with_freqs()?;
        let postings = LeadPostings {
            docs: &docs[..taken],
            freqs: &freqs[..taken],
            base: base as u16,
        };
        // Column 0's slack runs into column 1, which the next filter writes.
        let out = Survivors {
            docs: &mut self.lead_docs,
            inverses: &mut self.lead_inverses,
            places: &mut self.at[..taken + lead_filter::OUTPUT_SLACK],
        };
        let kept = match (bm25.norm_table(), lengths.norm_bytes()) {
            (Some(table), Some(norms)) => {
                lead_filter::filter_lead(&postings, &norms, table, key_floor, out, self.isa)
            }
            // Exact lengths, or a segment of several runs: the same test, one posting at a
            // time through the general lookups.
            _ => {
                let mut kept = 0;
                for (i, (&doc, &freq)) in postings.docs.iter().zip(postings.freqs).enumerate() {
                    let inverse = bm25.norm_inverse_of(&lengths, doc);
                    out.docs[kept] = doc;
                    out.inverses[kept] = inverse;
                    out.places[kept] = (base + i) as u16;
                    kept += usize::from(Bm25::key_of(freq, inverse) >= key_floor);
                }
                kept
            }
        };
        self.docs.clear();
        self.docs.extend_from_slice(&self.lead_docs[..kept]);
        self.inverses.clear();
        self.inverses.extend_from_slice(&self.lead_inverses[..kept]);
        Ok(())
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
                .map(|&doc| bm25.norm_inverse_of(&lengths, doc)),
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
        // Windows are short where another clause is dense: count, do not bisect.
        let rest = lead.cursor.block_rest();
        let taken = match up_to.checked_add(1) {
            Some(past) => sorted_search::count_below(rest, past, window.isa),
            None => rest.len(),
        };
        match threshold {
            Some(threshold) => {
                // `can_beat(lead score + the others' bounds, threshold)`, as a key floor.
                let floor = key_floor(
                    lead.cursor.weight(),
                    Some(lead_floor(threshold, bound - lead_bound) as f32),
                );
                window.take_lead_filtered(&mut lead.cursor, taken, bm25, floor)?;
                if window.docs.len() < taken {
                    complete = false;
                }
            }
            None => window.take_lead(&lead.cursor, taken),
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
                window.score_clause(ci, &mut clauses[ci].cursor, bm25)?;
                for (total, &score) in window.totals.iter_mut().zip(&window.terms) {
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
    let span = match last.checked_add(1) {
        Some(past) => sorted_search::count_below(block, past, *isa),
        None => block.len(),
    };
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
