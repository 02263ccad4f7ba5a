//! Scoring a disjunction a window of DIDs at a time, while no clause can be pruned.
//!
//! Until the top k's threshold exceeds the smallest clause maximum, MaxScore must visit every
//! document of every clause, and its document-at-a-time loop then pays, per document, a
//! minimum over the cursors, a score whose division sits on the path to a mispredicted
//! branch, and a pass over the clauses to move them on. Here each clause instead adds its
//! scores for the postings of a window of [`WINDOW`] DIDs into an array, a block at a time with
//! no branch per posting, and the window's matches are then offered to the top k in DID order
//! (the idea of Lucene's `BooleanScorer`). Clauses are added in query order, each score
//! widened to `f64` and summed from zero, exactly as the exhaustive evaluator sums them, so
//! the totals are equal to the bit.

use super::pruned::{excluded, Disjunction};
use super::term_cursor::NO_MORE_DOCS;
use super::top_k::{Hit, TopK};
use crate::IndexError;

/// DIDs per window (a 32 KiB array of sums and a 512-byte bitset).
pub const WINDOW: u32 = 4096;

/// The per-window arrays, reused across windows.
pub struct WindowAccumulator {
    sums: Vec<f64>,
    matched: Vec<u64>,
}

impl WindowAccumulator {
    pub fn new() -> WindowAccumulator {
        WindowAccumulator {
            sums: vec![0.0; WINDOW as usize],
            matched: vec![0; WINDOW as usize / 64],
        }
    }

    /// Scores every document of `query`'s clauses in `[base, base + WINDOW)` (visiting the
    /// clauses in query order), offers those not excluded to `top`, and leaves every clause's
    /// cursor past the window. Returns the number of documents offered.
    pub(super) fn score_window(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        base: u32,
        top: &mut TopK,
    ) -> Result<u64, IndexError> {
        let (clauses, exclusions) = (&mut *query.clauses, &mut *query.exclusions);
        let (by_position, lengths, bm25) = (query.by_position, query.lengths, query.bm25);
        let end = base.saturating_add(WINDOW);
        for &ci in by_position {
            let cursor = &mut clauses[ci].cursor;
            let weight = cursor.weight();
            while cursor.doc() < end {
                let (docs, freqs, pos) = cursor.current_block()?;
                let (docs, freqs) = (&docs[pos..], &freqs[pos..]);
                let inside = docs.partition_point(|&d| d < end);
                for (&doc, &freq) in docs[..inside].iter().zip(&freqs[..inside]) {
                    let inverse = bm25.norm_inverse_of(lengths, doc);
                    let score = bm25.score_of_inverse(weight, freq, inverse);
                    let at = (doc - base) as usize;
                    self.sums[at] += f64::from(score);
                    self.matched[at >> 6] |= 1 << (at & 63);
                }
                if inside < docs.len() {
                    cursor.step_within_block(inside);
                    break;
                }
                cursor.consume(inside)?;
            }
        }
        let mut offered = 0;
        for (w, word) in self.matched.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let at = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let sum = std::mem::take(&mut self.sums[at]);
                let doc = base + at as u32;
                if !exclusions.is_empty() && excluded(exclusions, doc)? {
                    continue;
                }
                offered += 1;
                top.push(Hit {
                    doc,
                    score: sum as f32,
                });
            }
        }
        debug_assert!(clauses
            .iter()
            .all(|c| c.cursor.doc() >= end || c.cursor.doc() == NO_MORE_DOCS));
        Ok(offered)
    }
}
