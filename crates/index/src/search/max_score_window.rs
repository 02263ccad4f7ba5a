//! Block-max MaxScore a window of DIDs at a time, once some clause can be pruned.
//!
//! Document at a time, MaxScore pays per candidate a minimum over the essential cursors, a
//! score whose division feeds a branch, and a test per non-essential clause, each a branch
//! the predictor cannot learn. Here a window is cut at the end of the current block of the
//! essential clauses (at most [`WINDOW`] DIDs), and each clause is bounded over the window by
//! its blocks' score bounds. The clauses are split again for the window alone: sorted by
//! those bounds per posting of their lists (see
//! [`Clause::score_per_posting`](super::pruned::Clause::score_per_posting)), the longest
//! prefix whose bounds sum below the threshold is non-essential here, often more clauses than
//! the global maxima allow (a frequent term's blocks differ widely). Then, as Lucene's `MaxScoreBulkScorer` does:
//! 1. each essential clause adds the scores of its postings in the window into an array, a
//!    block at a time with no branch per posting (one essential clause alone first drops the
//!    postings whose saturation key cannot reach the threshold with every other bound);
//! 2. each matched document, in DID order, is dropped once its partial score plus the
//!    remaining bounds cannot beat the threshold, and otherwise looks up the non-essential
//!    clauses, highest bound first;
//! 3. a document that may enter is scored again by summing its clause scores in query order,
//!    as the exhaustive evaluator sums them, so both return the same top k to the bit.

use super::bm25::Bm25;
use super::pruned::{can_beat, excluded, key_floor, lead_floor, Disjunction};
use super::term_cursor::NO_MORE_DOCS;
use super::top_k::{Hit, TopK};
use super::window_accumulator::{WindowAccumulator, WINDOW};
use crate::IndexError;

/// What one window did.
pub(super) struct WindowOutcome {
    /// Documents offered to the top k.
    pub(super) offered: u64,
    /// Whether some document of the window was passed over on its bound.
    pub(super) pruned: bool,
}

/// The per-window arrays of [`MaxScoreWindow::score`], reused across windows.
pub(super) struct MaxScoreWindow {
    /// The essential clauses' summed scores per DID of the window (any order: these only
    /// decide what to look at, with the bound margin).
    sums: Vec<f64>,
    /// DIDs of the window some essential clause holds.
    matched: Vec<u64>,
    /// Per clause (`ci * WINDOW` on), its score at each DID of the window it holds, and
    /// (`held`, `ci * WINDOW / 64` on) which those are.
    scores: Vec<f32>,
    held: Vec<u64>,
    /// Clause indices by window bound per posting
    /// ([`Clause::score_per_posting`](super::pruned::Clause::score_per_posting)), ascending,
    /// and the running sums of those bounds.
    order: Vec<usize>,
    bounds: Vec<f64>,
    keys: Vec<f64>,
    prefix: Vec<f64>,
    /// Windows where no clause can be pruned are scored whole.
    exhaustive: WindowAccumulator,
}

const WORDS: usize = WINDOW as usize / 64;

/// The fewest DIDs per clause a window spans. A window costs a bound and a sort place per
/// clause; ended at the first block end of any essential clause, the windows of a query of
/// many clauses with frequent ones among them are a few hundred DIDs wide (a stop word's
/// block of 256 postings spans about 300), and those per-clause costs outweigh scoring the
/// hits. Lucene's `MaxScoreBulkScorer` widens its windows to 32 DIDs per clause for the same
/// reason; a window that passes block ends bounds each clause by the highest of its blocks
/// in it, which prunes a little less.
const MIN_DOCS_PER_CLAUSE: u32 = 32;

impl MaxScoreWindow {
    pub(super) fn new(clauses: usize) -> MaxScoreWindow {
        MaxScoreWindow {
            sums: vec![0.0; WINDOW as usize],
            matched: vec![0; WORDS],
            scores: vec![0.0; clauses * WINDOW as usize],
            held: vec![0; clauses * WORDS],
            order: Vec::with_capacity(clauses),
            bounds: vec![0.0; clauses],
            keys: vec![0.0; clauses],
            prefix: Vec::with_capacity(clauses),
            exhaustive: WindowAccumulator::new(),
        }
    }

    /// Evaluates the window of `query` that starts at `start` (the least DID of the globally
    /// essential clauses `query.clauses[essential..]`) against `threshold` (none: nothing can
    /// be pruned yet), offers what may enter to `top`, and leaves every essential clause past
    /// the window.
    pub(super) fn score(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        essential: usize,
        start: u32,
        threshold: Option<f32>,
        top: &mut TopK,
    ) -> Result<WindowOutcome, IndexError> {
        let Some(threshold) = threshold else {
            return self.whole(query, start, top);
        };
        let (bm25, n) = (query.bm25, query.clauses.len());
        let clauses = &mut *query.clauses;
        // The window ends with the first block end of an essential clause, but spans at least
        // MIN_DOCS_PER_CLAUSE DIDs per clause.
        let mut end = start.saturating_add(WINDOW - 1);
        for c in &mut clauses[essential..] {
            if let Some((last, _)) = c.cursor.shallow_advance(start, bm25) {
                end = end.min(last);
            }
        }
        if n - essential > 1 {
            let least = (n as u32).saturating_mul(MIN_DOCS_PER_CLAUSE).min(WINDOW);
            end = end.max(start.saturating_add(least - 1));
        }
        for (ci, c) in clauses.iter_mut().enumerate() {
            self.bounds[ci] = c
                .cursor
                .max_bound_through(start, end, bm25)
                .map_or(0.0, f64::from);
        }
        self.order.clear();
        self.order.extend(0..n);
        for (ci, c) in clauses.iter().enumerate() {
            self.keys[ci] = c.score_per_posting(self.bounds[ci]);
        }
        let keys = &self.keys;
        self.order
            .sort_unstable_by(|&a, &b| keys[a].total_cmp(&keys[b]));
        self.prefix.clear();
        let mut sum = 0f64;
        for &ci in &self.order {
            sum += self.bounds[ci];
            self.prefix.push(sum);
        }
        let threshold_at = Some(threshold);
        // Clauses order[..split] cannot reach the threshold on their own in this window.
        let split = self
            .prefix
            .iter()
            .position(|&p| can_beat(p, threshold_at))
            .unwrap_or(n);
        let mut outcome = WindowOutcome {
            offered: 0,
            pruned: split > 0,
        };
        if split == 0 {
            return self.whole(query, start, top);
        } else if split < n {
            let others = if split > 0 {
                self.prefix[split - 1]
            } else {
                0.0
            };
            // One essential clause: its postings whose key cannot reach the threshold with
            // every other clause's bound are not added.
            let lone = split + 1 == n;
            let lone_floor = |weight: f32| {
                if lone {
                    key_floor(weight, Some(lead_floor(threshold, others) as f32))
                } else {
                    f32::NEG_INFINITY
                }
            };
            for k in split..n {
                let ci = self.order[k];
                let floor = lone_floor(query.clauses[ci].cursor.weight());
                outcome.pruned |= floor > f32::NEG_INFINITY;
                self.accumulate(query, ci, start, end, floor)?;
            }
            outcome.offered = self.visit_matches(query, split, start, top, &mut outcome.pruned)?;
        }
        // Every essential clause leaves the window (those non-essential in it are behind).
        let past = end.saturating_add(1);
        for c in &mut query.clauses[essential..] {
            if c.cursor.doc() < past {
                c.cursor.advance(past)?;
            }
        }
        Ok(outcome)
    }

    /// Scores every document of every clause in a window as wide as the accumulator's from
    /// `start` on (nothing can be pruned there), bringing the clauses left behind (those
    /// non-essential until now) up to `start` first.
    fn whole(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        start: u32,
        top: &mut TopK,
    ) -> Result<WindowOutcome, IndexError> {
        for c in query.clauses.iter_mut() {
            if c.cursor.doc() < start {
                c.cursor.advance(start)?;
            }
        }
        let offered = self.exhaustive.score_window(query, start, top)?;
        Ok(WindowOutcome {
            offered,
            pruned: false,
        })
    }

    /// Adds the scores of clause `ci`'s postings in `[start, end]` whose saturation key
    /// reaches `floor` into the window, and each one's score apart, and moves the cursor past
    /// `end`.
    fn accumulate(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        ci: usize,
        start: u32,
        end: u32,
        floor: f32,
    ) -> Result<(), IndexError> {
        let (lengths, bm25) = (query.lengths, query.bm25);
        let cursor = &mut query.clauses[ci].cursor;
        let weight = cursor.weight();
        let scores = &mut self.scores[ci * WINDOW as usize..(ci + 1) * WINDOW as usize];
        let held = &mut self.held[ci * WORDS..(ci + 1) * WORDS];
        if cursor.doc() < start {
            cursor.advance(start)?;
        }
        while cursor.doc() <= end && cursor.doc() != NO_MORE_DOCS {
            let (docs, freqs, pos) = cursor.current_block()?;
            let (docs, freqs) = (&docs[pos..], &freqs[pos..]);
            let inside = match end.checked_add(1) {
                Some(past) => docs.partition_point(|&d| d < past),
                None => docs.len(),
            };
            for (&doc, &freq) in docs[..inside].iter().zip(&freqs[..inside]) {
                let key = Bm25::key_of(freq, bm25.norm_inverse_of(lengths, doc));
                if key < floor {
                    continue;
                }
                let score = bm25.score_of_key(weight, key);
                let at = (doc - start) as usize;
                self.sums[at] += f64::from(score);
                self.matched[at >> 6] |= 1 << (at & 63);
                scores[at] = score;
                held[at >> 6] |= 1 << (at & 63);
            }
            if inside < docs.len() {
                cursor.step_within_block(inside);
                break;
            }
            cursor.consume(inside)?;
        }
        Ok(())
    }

    /// Visits the window's matched documents in DID order (clearing them and every clause's
    /// marks): completes each that may still beat the threshold with the non-essential
    /// clauses `order[..split]`, and offers those that may enter. Returns how many were
    /// offered.
    fn visit_matches(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        split: usize,
        start: u32,
        top: &mut TopK,
        pruned: &mut bool,
    ) -> Result<u64, IndexError> {
        let (clauses, exclusions) = (&mut *query.clauses, &mut *query.exclusions);
        let (by_position, lengths, bm25) = (query.by_position, query.lengths, query.bm25);
        let mut offered = 0;
        // Words of the window that hold matches (every clause's marks are in those).
        let mut used = 0;
        for w in 0..WORDS {
            let mut bits = std::mem::take(&mut self.matched[w]);
            if bits != 0 {
                used = w + 1;
            }
            while bits != 0 {
                let at = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut score = std::mem::take(&mut self.sums[at]);
                let doc = start + at as u32;
                let threshold = top.threshold();
                let mut dropped = false;
                let mut inverse = None;
                for k in (0..split).rev() {
                    if !can_beat(score + self.prefix[k], threshold) {
                        dropped = true;
                        break;
                    }
                    let ci = self.order[k];
                    let cursor = &mut clauses[ci].cursor;
                    if cursor.holds_and_stays(doc)? {
                        let inverse =
                            *inverse.get_or_insert_with(|| bm25.norm_inverse_of(lengths, doc));
                        let s = cursor.score_with_inverse(bm25, inverse)?;
                        score += f64::from(s);
                        self.scores[ci * WINDOW as usize + at] = s;
                        self.held[ci * WORDS + w] |= 1 << (at & 63);
                    }
                }
                if dropped {
                    *pruned = true;
                    continue;
                }
                if !exclusions.is_empty() && excluded(exclusions, doc)? {
                    continue;
                }
                // The clause scores, summed in query order (the marks are cleared with the
                // window's: most matches are dropped above, and never read them).
                let mut total = 0f64;
                for &ci in by_position {
                    if self.held[ci * WORDS + w] >> (at & 63) & 1 == 1 {
                        total += f64::from(self.scores[ci * WINDOW as usize + at]);
                    }
                }
                offered += 1;
                top.push(Hit {
                    doc,
                    score: total as f32,
                });
            }
        }
        for marks in self.held.chunks_exact_mut(WORDS) {
            marks[..used].fill(0);
        }
        Ok(offered)
    }
}
