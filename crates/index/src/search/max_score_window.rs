//! Block-max MaxScore a window of DIDs at a time, once some clause can be pruned.
//!
//! Document at a time, MaxScore pays per candidate a minimum over the essential cursors, a
//! score whose division feeds a branch, and a test per non-essential clause, each a branch
//! the predictor cannot learn. Here a window is cut at the end of the current block of the
//! essential clauses (at most [`WINDOW`] DIDs, at least [`MIN_DOCS_PER_CLAUSE`] per clause),
//! and each clause is bounded over the window by
//! its blocks' score bounds. The clauses are split again for the window alone: sorted by those
//! bounds per posting of their lists (see
//! [`Clause::score_per_posting`](super::pruned::Clause::score_per_posting)), the longest prefix
//! whose bounds sum below the threshold is non-essential here, often more clauses than the
//! global maxima allow (a frequent term's blocks differ widely). Then, as Lucene's
//! `MaxScoreBulkScorer` does:
//! 1. each essential clause adds the scores of its postings in the window into an array, a
//!    block at a time with no branch per posting (one essential clause alone first drops the
//!    postings whose saturation key cannot reach the threshold with every other bound);
//! 2. the non-essential clauses, highest bound first, are applied a clause at a time to the
//!    matched documents: those whose partial score plus the remaining bounds cannot beat the
//!    threshold are dropped, and the clause is looked up for the rest, a block of the clause
//!    at a time ([`clause_filter`]);
//! 3. a document that may enter is scored again by summing its clause scores in query order,
//!    as the exhaustive evaluator sums them, so both return the same top k to the bit.

use apcache_codec::Isa;

use super::bm25::Bm25;
use super::clause_filter::{self, ClauseMatches};
use super::pruned::{can_beat, excluded, key_floor, lead_floor, Disjunction};
use super::sorted_intersect::OUTPUT_SLACK;
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
    /// The matches of the window as the non-essential clauses are applied to them.
    matches: Vec<Match>,
    /// Windows where no clause can be pruned are scored whole.
    exhaustive: WindowAccumulator,
    /// The buffers of a non-essential clause's lookups.
    lookup: Lookup,
}

/// What [`MaxScoreWindow::apply_clause`] hands [`clause_filter::filter`]: the matches' DIDs,
/// and room for those the clause holds (a window's worth and the filters' vector slack).
struct Lookup {
    candidates: Vec<u32>,
    docs: Vec<u32>,
    origin: Vec<u16>,
    places: Vec<u16>,
    freqs: Vec<u32>,
    isa: Isa,
}

impl Lookup {
    fn new() -> Lookup {
        let room = WINDOW as usize + OUTPUT_SLACK;
        Lookup {
            candidates: Vec::with_capacity(WINDOW as usize),
            docs: vec![0; room],
            origin: vec![0; room],
            places: vec![0; room],
            freqs: vec![0; room],
            isa: Isa::detect(),
        }
    }
}

/// A match of the window in [`MaxScoreWindow::visit_matches`].
#[derive(Clone, Copy)]
struct Match {
    /// Its place in the window.
    at: u32,
    /// Its clause scores so far.
    score: f64,
    /// Its length normalisation, once a clause scored it (NaN before).
    inverse: f32,
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
            matches: Vec::with_capacity(WINDOW as usize),
            exhaustive: WindowAccumulator::new(),
            lookup: Lookup::new(),
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
    /// marks): completes those that may still beat the threshold with the non-essential
    /// clauses `order[..split]`, and offers those that may enter. Returns how many were
    /// offered.
    ///
    /// The non-essential clauses are applied one at a time to all the matches, highest bound
    /// first, as Lucene's `MaxScoreBulkScorer` applies them to its buffer: the matches that
    /// cannot win even with every remaining bound are dropped (a pass without a branch per
    /// match, against the threshold the window started with), then the clause is looked up
    /// for the rest, a block of its list at a time. Taken a match at a time, every match would
    /// step through the clauses' cursors in turn and take a branch per clause on whether it
    /// may still win, which mispredicts wherever matches fail at different clauses; and each
    /// lookup would find its block again (a bitset's rank counted from its first word). The
    /// last clause too is applied with the others, against the window's first threshold: the
    /// lookups a threshold rising match by match would spare cost less than looking up one
    /// match at a time (see `docs/notes/query-speed.md`).
    fn visit_matches(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        split: usize,
        start: u32,
        top: &mut TopK,
        pruned: &mut bool,
    ) -> Result<u64, IndexError> {
        let threshold = top.threshold();
        let mut offered = 0;
        // The matches, with the essential clauses' summed scores, and the words of the window
        // that hold them (every clause's marks are in those).
        let mut matches = std::mem::take(&mut self.matches);
        matches.clear();
        let used = self.take_matches(&mut matches);
        // Every non-essential clause, to all the matches at once.
        for k in (0..split).rev() {
            let rest = self.prefix[k];
            let mut kept = 0;
            for i in 0..matches.len() {
                let candidate = matches[i];
                matches[kept] = candidate;
                kept += usize::from(can_beat(candidate.score + rest, threshold));
            }
            *pruned |= kept < matches.len();
            matches.truncate(kept);
            let ci = self.order[k];
            self.apply_clause(query, ci, &mut matches, start)?;
        }
        for candidate in matches.iter_mut() {
            offered += self.finish(query, candidate, start, top, pruned)?;
        }
        self.matches = matches;
        for marks in self.held.chunks_exact_mut(WORDS) {
            marks[..used].fill(0);
        }
        Ok(offered)
    }

    /// Applies non-essential clause `ci` to `matches` (in DID order) all at once
    /// ([`clause_filter`]): adds its score to each match its list holds, and marks it.
    fn apply_clause(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        ci: usize,
        matches: &mut [Match],
        start: u32,
    ) -> Result<(), IndexError> {
        let (lengths, bm25) = (query.lengths, query.bm25);
        let cursor = &mut query.clauses[ci].cursor;
        let weight = cursor.weight();
        let Lookup {
            candidates,
            docs,
            origin,
            places,
            freqs,
            isa,
        } = &mut self.lookup;
        candidates.clear();
        candidates.extend(matches.iter().map(|m| start + m.at));
        let out = ClauseMatches {
            docs,
            origin,
            places,
            freqs,
        };
        let found = clause_filter::filter(cursor, candidates, out, *isa)?;
        for (&i, &freq) in origin[..found].iter().zip(&freqs[..found]) {
            let candidate = &mut matches[usize::from(i)];
            if candidate.inverse.is_nan() {
                candidate.inverse = bm25.norm_inverse_of(lengths, start + candidate.at);
            }
            // As `TermCursor::score_with_inverse` scores the posting.
            let s = bm25.score_of_inverse(weight, freq, candidate.inverse);
            candidate.score += f64::from(s);
            let at = candidate.at as usize;
            self.scores[ci * WINDOW as usize + at] = s;
            self.held[ci * WORDS + at / 64] |= 1 << (at & 63);
        }
        Ok(())
    }

    /// Appends the window's matches to `matches` in DID order, with the essential clauses'
    /// summed scores, clearing them; returns how many words of the window hold matches.
    fn take_matches(&mut self, matches: &mut Vec<Match>) -> usize {
        let mut used = 0;
        for w in 0..WORDS {
            let mut bits = std::mem::take(&mut self.matched[w]);
            if bits != 0 {
                used = w + 1;
            }
            while bits != 0 {
                let at = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                matches.push(Match {
                    at: at as u32,
                    score: std::mem::take(&mut self.sums[at]),
                    inverse: f32::NAN,
                });
            }
        }
        used
    }

    /// Offers `candidate`, whose score is whole, unless it cannot beat the threshold as it
    /// stands (it rises with the matches offered before) or is excluded; returns 1 if it was
    /// offered, else 0.
    fn finish(
        &mut self,
        query: &mut Disjunction<'_, '_>,
        candidate: &mut Match,
        start: u32,
        top: &mut TopK,
        pruned: &mut bool,
    ) -> Result<u64, IndexError> {
        let (at, doc) = (candidate.at as usize, start + candidate.at);
        if !can_beat(candidate.score, top.threshold()) {
            *pruned = true;
            return Ok(0);
        }
        if !query.exclusions.is_empty() && excluded(query.exclusions, doc)? {
            return Ok(0);
        }
        // The clause scores, summed in query order (the marks are cleared with the window's:
        // most matches are dropped above, and never read them).
        let mut total = 0f64;
        for &ci in query.by_position {
            if self.held[ci * WORDS + at / 64] >> (at & 63) & 1 == 1 {
                total += f64::from(self.scores[ci * WINDOW as usize + at]);
            }
        }
        top.push(Hit {
            doc,
            score: total as f32,
        });
        Ok(1)
    }
}
