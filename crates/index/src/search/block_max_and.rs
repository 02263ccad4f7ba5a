//! Block-max AND: the top k of a conjunction of terms, skipping what cannot make it.
//!
//! The conjunction is walked a window at a time, and a window is the rest of one block of the
//! lead (the rarest clause). Each other clause is bounded over the window by the highest
//! bound of its blocks that overlap it, so the sum of the bounds covers every document in the
//! window. Windows follow the lead's blocks, not every block end of every clause: beside a
//! dense clause (one whose blocks span a few hundred DIDs), cutting at each of its block ends
//! made windows of a handful of candidates, each paying the window's fixed work. Then,
//! cheapest test first:
//! 1. a window whose bound cannot beat the threshold is skipped;
//! 2. the lead's candidates are tested on the lead alone ([`lead_filter`]): a candidate whose
//!    lead score plus the other clauses' bounds cannot beat the threshold is dropped before
//!    any other list is searched for it (membership tests cost more than this test, which
//!    compares saturation keys and computes no score);
//! 3. each other clause filters the survivors a block of its own at a time
//!    ([`clause_filter`]) and notes each match's frequency;
//! 4. the matches are scored a clause at a time over arrays, in query order, as the
//!    exhaustive evaluator sums them, so both return the same top k to the bit.
//!
//! [`lead_filter`]: super::lead_filter

use apcache_codec::{Isa, BLOCK_LEN};

use super::bm25::Bm25;
use super::cancel;
use super::clause_filter::{self, ClauseMatches};
use super::lead_filter::{self, LeadPostings, Survivors};
use super::node::Node;
use super::pruned::{can_beat, clause_stats, excluded, key_floor, lead_floor, Clause, Outcome};
use super::sorted_intersect::OUTPUT_SLACK;
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use super::top_k::{Hit, TopK};
use crate::IndexError;

/// Room past a block's worth of values, for the vector stores of the filters.
const SLACK: usize = if OUTPUT_SLACK > lead_filter::OUTPUT_SLACK {
    OUTPUT_SLACK
} else {
    lead_filter::OUTPUT_SLACK
};

/// The candidates of one window and what is known of each.
struct Window {
    docs: Vec<u32>,
    /// Where a filter writes the candidates it keeps.
    scratch: Vec<u32>,
    /// Column `ci` (`freqs[ci * BLOCK_LEN..]`): each candidate's frequency in clause `ci`
    /// (with [`SLACK`] more after the last column for vector stores).
    freqs: Vec<u32>,
    /// Where each candidate was before the last filter ([`Window::kept`]).
    origin: Vec<u16>,
    /// Where each match of a merge sits in the other clause's block.
    places: Vec<u16>,
    /// Each candidate's length normalisation ([`Bm25::norm_inverse`]), once computed.
    inverses: Vec<f32>,
    /// One clause's scores.
    terms: Vec<f32>,
    /// Each candidate's score, summed in query order as the exhaustive evaluator sums.
    totals: Vec<f64>,
    /// The instruction set of the filters.
    isa: Isa,
}

impl Window {
    fn new(clauses: usize) -> Window {
        Window {
            docs: vec![0; BLOCK_LEN + SLACK],
            scratch: vec![0; BLOCK_LEN + SLACK],
            freqs: vec![0; clauses * BLOCK_LEN + SLACK],
            origin: vec![0; BLOCK_LEN + SLACK],
            places: vec![0; BLOCK_LEN + SLACK],
            inverses: vec![0.0; BLOCK_LEN + SLACK],
            terms: Vec::with_capacity(BLOCK_LEN),
            totals: Vec::with_capacity(BLOCK_LEN),
            isa: Isa::detect(),
        }
    }

    /// After a filter left `count` candidates in `scratch` and `origin`: makes them the
    /// candidates, moving what columns `..columns` and (with `inverses`) the normalisations
    /// know of each.
    fn kept(&mut self, count: usize, columns: usize, inverses: bool) {
        let kept = &self.origin[..count];
        for column in self.freqs[..columns * BLOCK_LEN].chunks_exact_mut(BLOCK_LEN) {
            for (k, &from) in kept.iter().enumerate() {
                column[k] = column[usize::from(from)];
            }
        }
        if inverses {
            for (k, &from) in kept.iter().enumerate() {
                self.inverses[k] = self.inverses[usize::from(from)];
            }
        }
        self.docs[..count].copy_from_slice(&self.scratch[..count]);
    }
}

/// Evaluates the conjunction of `clauses` minus the documents of `exclusions`, among those
/// every node of `filters` holds, into `top`.
pub(super) fn block_max_and<'s>(
    clauses: &mut [Clause<'s>],
    exclusions: &mut [TermCursor<'s>],
    filters: &mut [Node<'s>],
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
        // A window skipped on its bound decodes nothing, and a clause stored as bitsets is
        // tested bit by bit: the flag is checked for each window and each clause's filter.
        cancel::check()?;
        let (lead, others) = clauses
            .split_first_mut()
            .expect("a conjunction has clauses");
        let start = lead.cursor.doc();
        if start == NO_MORE_DOCS {
            break;
        }
        let Some((up_to, lead_bound)) = lead.cursor.shallow_advance(start, bm25) else {
            break;
        };
        let threshold = top.threshold();
        // The lead's candidates, filtered on the lead's score once the top k is full.
        let (taken, mut count, have_inverses) = match threshold {
            Some(threshold) => {
                let mut others_bound = 0f64;
                for c in others.iter_mut() {
                    match c.cursor.max_bound_through(start, up_to, bm25) {
                        Some(bound) => others_bound += f64::from(bound),
                        None => break 'windows,
                    }
                }
                if !can_beat(f64::from(lead_bound) + others_bound, Some(threshold)) {
                    complete = false;
                    if up_to == NO_MORE_DOCS || lead.cursor.advance(up_to + 1)? == NO_MORE_DOCS {
                        break;
                    }
                    continue;
                }
                // `can_beat(lead score + the others' bounds, threshold)`, as a key floor.
                let floor = key_floor(
                    lead.cursor.weight(),
                    Some(lead_floor(threshold, others_bound) as f32),
                );
                let (taken, kept) = take_lead_filtered(&mut window, &mut lead.cursor, bm25, floor)?;
                if kept < taken {
                    complete = false;
                }
                (taken, kept, true)
            }
            None => {
                let (docs, freqs) = lead.cursor.block_rest_with_freqs()?;
                let taken = docs.len();
                window.docs[..taken].copy_from_slice(docs);
                window.freqs[..taken].copy_from_slice(freqs);
                (taken, taken, false)
            }
        };
        for (ci, c) in others.iter_mut().enumerate().map(|(i, c)| (i + 1, c)) {
            if count == 0 {
                break;
            }
            cancel::check()?;
            let Window {
                docs,
                scratch,
                freqs,
                origin,
                places,
                isa,
                ..
            } = &mut window;
            let kept = ClauseMatches {
                docs: scratch,
                origin,
                places,
                freqs: &mut freqs[ci * BLOCK_LEN..],
            };
            count = clause_filter::filter(&mut c.cursor, &docs[..count], kept, *isa)?;
            window.kept(count, ci, have_inverses);
        }
        if !exclusions.is_empty() && count > 0 {
            count = drop_excluded(exclusions, &mut window, count)?;
            window.kept(count, n, have_inverses);
        }
        if !filters.is_empty() && count > 0 {
            count = keep_filtered(filters, &mut window, count)?;
            window.kept(count, n, have_inverses);
        }
        if count > 0 {
            evaluated += count as u64;
            score_window(
                &mut window,
                count,
                have_inverses,
                clauses,
                &by_position,
                bm25,
                top,
            );
        }
        if clauses[0].cursor.consume(taken)? == NO_MORE_DOCS {
            break;
        }
    }
    Ok(Outcome {
        evaluated,
        complete,
        stats: clause_stats(clauses),
    })
}

/// Takes those postings of the rest of the lead's block whose saturation key reaches
/// `key_floor` as the window's candidates, with their normalisations and frequencies (column
/// 0); returns how many postings were tested and how many were kept.
fn take_lead_filtered(
    window: &mut Window,
    lead: &mut TermCursor<'_>,
    bm25: &Bm25,
    key_floor: f32,
) -> Result<(usize, usize), IndexError> {
    let lengths = lead.lengths();
    let (docs, freqs) = lead.block_rest_with_freqs()?;
    let postings = LeadPostings { docs, freqs };
    let taken = docs.len();
    // Column 0's slack runs into column 1, which the next filter writes.
    let out = Survivors {
        docs: &mut window.docs,
        inverses: &mut window.inverses,
        freqs: &mut window.freqs[..taken + lead_filter::OUTPUT_SLACK],
    };
    let kept = match (bm25.norm_table(), lengths.norm_bytes()) {
        (Some(table), Some(norms)) => {
            lead_filter::filter_lead(&postings, &norms, table, key_floor, out, window.isa)
        }
        _ => lead_filter::filter_lead_with(
            &postings,
            |doc| bm25.norm_inverse_of(&lengths, doc),
            key_floor,
            out,
        ),
    };
    Ok((taken, kept))
}

/// Drops the `count` candidates an excluded term holds, leaving the rest in `scratch` and
/// `origin`; returns how many are left.
fn drop_excluded(
    exclusions: &mut [TermCursor<'_>],
    window: &mut Window,
    count: usize,
) -> Result<usize, IndexError> {
    let mut kept = 0;
    for i in 0..count {
        let doc = window.docs[i];
        if !excluded(exclusions, doc)? {
            window.scratch[kept] = doc;
            window.origin[kept] = i as u16;
            kept += 1;
        }
    }
    Ok(kept)
}

/// Keeps the `count` candidates every filter holds, in `scratch` and `origin`; returns how
/// many are left. Candidates ascend within a window and from one window to the next, so each
/// filter only moves forward.
fn keep_filtered(
    filters: &mut [Node<'_>],
    window: &mut Window,
    count: usize,
) -> Result<usize, IndexError> {
    let mut kept = 0;
    'candidates: for i in 0..count {
        let doc = window.docs[i];
        for filter in filters.iter_mut() {
            let at = if filter.doc() < doc {
                filter.advance(doc)?
            } else {
                filter.doc()
            };
            if at != doc {
                continue 'candidates;
            }
        }
        window.scratch[kept] = doc;
        window.origin[kept] = i as u16;
        kept += 1;
    }
    Ok(kept)
}

/// Scores the window's `count` matches, a clause at a time in query order, and offers them to
/// `top`.
// Seven parameters, no context struct: one caller, and `count` and `have_inverses` change with
// every window while the rest are the conjunction's own locals.
fn score_window(
    window: &mut Window,
    count: usize,
    have_inverses: bool,
    clauses: &[Clause<'_>],
    by_position: &[usize],
    bm25: &Bm25,
    top: &mut TopK,
) {
    let Window {
        docs,
        freqs,
        inverses,
        terms,
        totals,
        ..
    } = window;
    let (docs, inverses) = (&docs[..count], &mut inverses[..count]);
    if !have_inverses {
        let lengths = clauses[0].cursor.lengths();
        for (inverse, &doc) in inverses.iter_mut().zip(docs) {
            *inverse = bm25.norm_inverse_of(&lengths, doc);
        }
    }
    totals.clear();
    totals.resize(count, 0.0);
    for &ci in by_position {
        let weight = clauses[ci].cursor.weight();
        let column = &freqs[ci * BLOCK_LEN..ci * BLOCK_LEN + count];
        terms.clear();
        terms.extend(
            column
                .iter()
                .zip(inverses.iter())
                .map(|(&freq, &inverse)| Bm25::key_of(freq, inverse)),
        );
        for key in terms.iter_mut() {
            *key = bm25.score_of_key(weight, *key);
        }
        for (total, &score) in totals.iter_mut().zip(terms.iter()) {
            *total += f64::from(score);
        }
    }
    for (&doc, &score) in docs.iter().zip(totals.iter()) {
        top.push(Hit {
            doc,
            score: score as f32,
        });
    }
}
