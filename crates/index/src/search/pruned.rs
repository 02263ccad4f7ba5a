//! Dynamic pruning for top-k: block-max MaxScore for disjunctions of terms, block-max AND for
//! conjunctions of terms, both with optional excluded terms.
//!
//! Both use the skip entries' per-block bounds (maximum frequency, minimum length) to bound
//! the score of every document in a window of DIDs without decoding it, and skip windows whose
//! bound cannot beat the current k-th score. Skipping is conservative: a window is skipped only
//! when its bound, widened by a relative margin that covers rounding, is strictly below the
//! threshold. Scores of the documents that are evaluated are summed in query-clause order,
//! exactly as the exhaustive evaluator sums them, so both return the same top k, to the bit.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use apcache_codec::BLOCK_LEN;

use super::block_max_and::block_max_and;
use super::bm25::Bm25;
use super::cancel;
use super::field_scorers::single_field;
use super::folded::Folded;
use super::max_score_window::MaxScoreWindow;
use super::node::Node;
use super::stats::SearchStats;
use super::term_cursor::{TermCursor, NO_MORE_DOCS};
use super::term_opener::TermOpener;
use super::threshold_seed::seed_threshold;
use super::top_k::{Hit, TopK};
use crate::segment::DocLengths;
use crate::IndexError;

/// Relative margin added to score bounds before comparing them with the threshold.
const BOUND_MARGIN: f64 = 1e-6;

/// Query shapes the pruned evaluators handle.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<'q> {
    /// Documents with any of the terms (none of the excluded ones).
    Or(Vec<BoostedTerm<'q>>, Vec<&'q str>),
    /// Documents with all of the terms (none of the excluded ones).
    And(Vec<BoostedTerm<'q>>, Vec<&'q str>),
}

/// A term of a [`Shape`] and the factor of its weight (see [`Folded`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoostedTerm<'q> {
    /// The term.
    pub term: &'q str,
    /// The factor of its weight.
    pub boost: f32,
}

impl<'q> Shape<'q> {
    /// The shape of `query`, if it is a flat disjunction or conjunction of terms.
    pub fn of(query: &Folded<'q>) -> Option<Shape<'q>> {
        let terms = |clauses: &[Folded<'q>]| -> Option<Vec<BoostedTerm<'q>>> {
            clauses
                .iter()
                .map(|c| match c {
                    Folded::Term { term, boost } => Some(BoostedTerm {
                        term,
                        boost: *boost,
                    }),
                    Folded::Bool(_)
                    | Folded::Phrase { .. }
                    | Folded::Docs { .. }
                    | Folded::DisMax { .. } => None,
                })
                .collect()
        };
        let names = |clauses: &[Folded<'q>]| -> Option<Vec<&'q str>> {
            Some(terms(clauses)?.into_iter().map(|t| t.term).collect())
        };
        match query {
            Folded::Term { term, boost } => Some(Shape::Or(
                vec![BoostedTerm {
                    term,
                    boost: *boost,
                }],
                Vec::new(),
            )),
            Folded::Phrase { .. } | Folded::Docs { .. } | Folded::DisMax { .. } => None,
            Folded::Bool(b) => {
                let excluded = names(&b.must_not)?;
                match (b.must.is_empty(), b.should.is_empty()) {
                    (true, false) => Some(Shape::Or(terms(&b.should)?, excluded)),
                    (false, true) => Some(Shape::And(terms(&b.must)?, excluded)),
                    _ => None,
                }
            }
        }
    }
}

/// A conjunction of terms beside filter clauses (clauses that score nothing: Lucene's
/// `FILTER`), for the pruned conjunction, which keeps its candidates that every filter holds.
pub struct FilteredShape<'q, 'f> {
    /// The scoring terms, and the excluded ones.
    pub shape: Shape<'q>,
    /// The filter clauses, any query each.
    pub filters: Vec<&'f Folded<'q>>,
}

impl<'q, 'f> FilteredShape<'q, 'f> {
    /// `query` as a conjunction of terms and filters: a group whose required clauses are terms
    /// that score and clauses that score nothing (at least one of each), with no optional
    /// clause and excluded terms only.
    pub fn of(query: &'f Folded<'q>) -> Option<FilteredShape<'q, 'f>> {
        let Folded::Bool(b) = query else {
            return None;
        };
        if b.must.is_empty() || !b.should.is_empty() {
            return None;
        }
        let (mut terms, mut filters) = (Vec::new(), Vec::new());
        for clause in &b.must {
            match clause {
                clause if scores_nothing(clause) => filters.push(clause),
                Folded::Term { term, boost } => terms.push(BoostedTerm {
                    term,
                    boost: *boost,
                }),
                _ => return None,
            }
        }
        if terms.is_empty() || filters.is_empty() {
            return None;
        }
        let excluded = b
            .must_not
            .iter()
            .map(|c| match c {
                Folded::Term { term, .. } => Some(*term),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(FilteredShape {
            shape: Shape::And(terms, excluded),
            filters,
        })
    }
}

impl FilteredShape<'_, '_> {
    /// The one field the scoring terms are of, if they are of one.
    pub fn scoring_field(&self) -> Option<&str> {
        let (Shape::Or(terms, _) | Shape::And(terms, _)) = &self.shape;
        single_field(terms.iter().map(|t| t.term))
    }
}

/// Whether every document `query` matches scores 0 under it (a filter's clauses weigh 0).
fn scores_nothing(query: &Folded<'_>) -> bool {
    match query {
        Folded::Term { boost, .. } | Folded::Phrase { boost, .. } | Folded::Docs { boost, .. } => {
            *boost == 0.0
        }
        Folded::DisMax { clauses, .. } => clauses.iter().all(scores_nothing),
        Folded::Bool(b) => b.must.iter().chain(&b.should).all(scores_nothing),
    }
}

/// What a pruned evaluation did over one segment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome {
    /// Matches evaluated (scored and offered to the top k).
    pub evaluated: u64,
    /// Whether every match was evaluated (nothing skipped), so `evaluated` is the count.
    pub complete: bool,
    /// Decoding work.
    pub stats: SearchStats,
}

/// A cursor with its clause position (scores are summed in clause order).
pub(super) struct Clause<'a> {
    pub(super) cursor: TermCursor<'a>,
    pub(super) position: usize,
    max_score: f32,
    /// One over the postings of the list, which turns a bound into
    /// [`Clause::score_per_posting`].
    per_posting: f64,
}

impl<'a> Clause<'a> {
    fn new(cursor: TermCursor<'a>, position: usize, max_score: f32) -> Clause<'a> {
        let per_posting = 1.0 / f64::from(cursor.doc_freq().max(1));
        Clause {
            cursor,
            position,
            max_score,
            per_posting,
        }
    }

    /// What decides the order in which clauses become non-essential: `bound`, a clause's score
    /// bound (over the list or a window), per posting of its list.
    ///
    /// MaxScore leaves out of the candidates the longest prefix of clauses whose bounds sum
    /// below the threshold. Which clauses that prefix holds is a choice: any set whose bounds
    /// sum below it may go, and the best set is the one with the most postings, whose documents
    /// are then only looked up. Ordering by bound alone (the MAXSCORE paper's order) makes that
    /// choice well where bounds fall as lists grow, as they mostly do; but a rare term that
    /// occurs only in long documents has a low bound too, and ordered by bound it goes first,
    /// spending the threshold's room on a list of a few postings while a list of tens of
    /// thousands stays essential (`cayman's` with 2 postings and a bound of 1.75, before `2008`
    /// with 41,430 and 2.0). Ordering by bound per posting, as Lucene's `MaxScoreBulkScorer`
    /// does, gives the room to the long lists first, and keeps the paper's order wherever
    /// bounds and lengths agree.
    pub(super) fn score_per_posting(&self, bound: f64) -> f64 {
        bound * self.per_posting
    }
}

/// A disjunction over one segment as its windows are scored ([`MaxScoreWindow`] and, where
/// nothing can be pruned, [`WindowAccumulator`](super::window_accumulator::WindowAccumulator)):
/// what stays the same from one window to the next.
pub(super) struct Disjunction<'w, 's> {
    /// The clauses, in the order [`max_score`] sorted them (ascending maximum score per
    /// posting, [`Clause::score_per_posting`]).
    pub(super) clauses: &'w mut [Clause<'s>],
    /// Indices into `clauses` in query order, the order clause scores are summed in.
    pub(super) by_position: &'w [usize],
    /// The excluded terms' cursors.
    pub(super) exclusions: &'w mut [TermCursor<'s>],
    /// The segment's document lengths.
    pub(super) lengths: &'w DocLengths<'s>,
    /// The scoring function.
    pub(super) bm25: &'w Bm25,
}

/// Cursors over `terms`, each weighted with its term's weight times its boost (`None` where
/// the segment lacks the term).
fn open<'s>(
    opener: &TermOpener<'s>,
    terms: &[BoostedTerm<'_>],
    weights: &HashMap<String, f32>,
    best_postings: bool,
) -> Result<Vec<Option<TermCursor<'s>>>, IndexError> {
    terms
        .iter()
        .map(|BoostedTerm { term, boost }| {
            let weight = boost * weights.get(*term).copied().unwrap_or(0.0);
            let cursor = opener.open(term, weight)?;
            Ok(cursor.map(|mut cursor| {
                cursor.use_best_postings(best_postings);
                cursor
            }))
        })
        .collect()
}

/// Whether any excluded cursor holds `doc`.
pub(super) fn excluded(cursors: &mut [TermCursor<'_>], doc: u32) -> Result<bool, IndexError> {
    for cursor in cursors {
        if cursor.holds(doc)? {
            return Ok(true);
        }
    }
    Ok(false)
}

pub(super) fn can_beat(bound: f64, threshold: Option<f32>) -> bool {
    threshold.is_none_or(|t| bound * (1.0 + BOUND_MARGIN) >= f64::from(t))
}

/// The least score that, added to `others_bound`, can beat `threshold`: `can_beat(s +
/// others_bound, Some(threshold))` solved for `s` once, for loops that test many scores. The
/// two agree to a few ulps of `f64`, far inside the margin.
pub(super) fn lead_floor(threshold: f32, others_bound: f64) -> f64 {
    f64::from(threshold) / (1.0 + BOUND_MARGIN) - others_bound
}

/// A saturation key below which a term of weight `weight` scores below `threshold` (see
/// [`Bm25::saturation_key`]): the score is `weight - weight / (1 + key)`, increasing in the
/// key, so the key `weight / (weight - threshold) - 1` reaches the threshold. The threshold is
/// first lowered by a margin far wider than the rounding of the `f32` score, so the floor
/// never rejects a posting the exact comparison would keep.
pub(super) fn key_floor(weight: f32, threshold: Option<f32>) -> f32 {
    let Some(threshold) = threshold else {
        return f32::NEG_INFINITY;
    };
    let (weight, threshold) = (f64::from(weight), f64::from(threshold));
    let lowered = threshold - weight.abs() * 1e-5;
    if !(lowered > 0.0 && lowered < weight) {
        return f32::NEG_INFINITY;
    }
    let key = weight / (weight - lowered) - 1.0;
    (key * (1.0 - 1e-6)) as f32
}

/// The least frequency whose saturation key with length normalisation `inverse` reaches
/// `floor` (keys grow with the frequency): 0 when every frequency does, `u32::MAX` when none
/// below it does.
fn least_freq(inverse: f32, floor: f32) -> u32 {
    if floor <= 0.0 || floor.is_nan() {
        return 0;
    }
    let estimate = f64::from(floor) / f64::from(inverse);
    if estimate.is_nan() {
        return 0;
    }
    if estimate >= f64::from(u32::MAX - 2) {
        return u32::MAX;
    }
    // The estimate is within one of the answer; settle it with the key's own arithmetic.
    let mut freq = (estimate as u32).max(1);
    while freq > 1 && Bm25::key_of(freq - 1, inverse) >= floor {
        freq -= 1;
    }
    while freq < u32::MAX && Bm25::key_of(freq, inverse) < floor {
        freq += 1;
    }
    freq
}

/// The bits of `value` as a `u32` that orders as `f32::total_cmp` orders the values.
fn ordered_bits(value: f32) -> u32 {
    let bits = value.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

/// Evaluates `shape` over the segment of `opener` into `top`; `best_postings` lets block
/// bounds use the skip entries' best postings (see [`TermCursor::use_best_postings`]). A
/// conjunction keeps only the documents every node of `filters` holds (a disjunction takes
/// none).
pub fn search<'s>(
    opener: &TermOpener<'s>,
    shape: &Shape,
    filters: &mut [Node<'s>],
    weights: &HashMap<String, f32>,
    bm25: &Bm25,
    best_postings: bool,
    top: &mut TopK,
) -> Result<Outcome, IndexError> {
    let (Shape::Or(terms, not) | Shape::And(terms, not)) = shape;
    let not: Vec<BoostedTerm> = not
        .iter()
        .map(|term| BoostedTerm { term, boost: 1.0 })
        .collect();
    let mut exclusions: Vec<TermCursor> = open(opener, &not, weights, best_postings)?
        .into_iter()
        .flatten()
        .collect();
    let cursors = open(opener, terms, weights, best_postings)?;
    let mut outcome = match shape {
        Shape::Or(..) => {
            assert!(filters.is_empty(), "a disjunction takes no filters");
            let mut clauses: Vec<Clause> = cursors
                .into_iter()
                .enumerate()
                .filter_map(|(position, cursor)| {
                    cursor.map(|cursor| {
                        let max_score = cursor.max_score(bm25);
                        Clause::new(cursor, position, max_score)
                    })
                })
                .collect();
            if clauses.len() == 1 && exclusions.is_empty() {
                single_term(&mut clauses[0].cursor, bm25, top)?
            } else {
                if exclusions.is_empty() {
                    if let Some(seed) = seed_threshold(&mut clauses, bm25, top.k())? {
                        top.seed(seed);
                    }
                }
                max_score(&mut clauses, &mut exclusions, bm25, top, false)?
            }
        }
        Shape::And(..) => {
            if cursors.iter().any(Option::is_none) {
                // A missing term: no document has them all.
                return Ok(Outcome {
                    complete: true,
                    ..Outcome::default()
                });
            }
            let mut clauses: Vec<Clause> = cursors
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(position, cursor)| Clause::new(cursor, position, 0.0))
                .collect();
            block_max_and(&mut clauses, &mut exclusions, filters, bm25, top)?
        }
    };
    for cursor in &exclusions {
        outcome.stats += cursor.stats();
    }
    Ok(outcome)
}

/// One term, a block at a time, best block bound first: once the top k is full, the blocks
/// whose bound cannot beat its threshold are skipped undecoded, and visiting the blocks with
/// the highest bounds first raises the threshold to near its final value within a few blocks,
/// so that many more are skipped than in DID order (the ranking does not depend on the order:
/// [`TopK`] breaks ties by DID). In the blocks visited, the frequencies are decoded first and each posting is tested
/// against the block's shortest document length (from its skip entry) without a branch; only
/// the postings that pass have their DIDs decoded and their own lengths looked up and scored.
/// Once the top k holds high scores, most postings of a frequent term fail that first test, so
/// neither their DIDs nor their lengths are read.
fn single_term(
    cursor: &mut TermCursor<'_>,
    bm25: &Bm25,
    top: &mut TopK,
) -> Result<Outcome, IndexError> {
    let mut outcome = Outcome {
        complete: true,
        ..Outcome::default()
    };
    let lengths = cursor.lengths();
    let weight = cursor.weight();
    let mut passed = [0u16; BLOCK_LEN];
    // A max-heap of (bound, earlier block first): heapified in linear time, popped only as
    // far as the threshold lets.
    let mut blocks: BinaryHeap<(u32, Reverse<usize>)> = (0..cursor.blocks())
        .map(|block| {
            let bound = cursor.entry_bound(&cursor.entry(block), bm25);
            (ordered_bits(bound), Reverse(block))
        })
        .collect();
    while let Some((_, Reverse(block))) = blocks.pop() {
        // A block whose postings all fail the frequency test is never decoded: checked here.
        cancel::check()?;
        let threshold = top.threshold();
        let entry = cursor.entry(block);
        if threshold.is_some() {
            let bound = cursor.entry_bound(&entry, bm25);
            if !can_beat(f64::from(bound), threshold) {
                // Every block left has a bound no higher.
                outcome.complete = false;
                break;
            }
        }
        // A posting whose saturation key is below `floor` cannot enter the top k: most are
        // rejected with a multiplication instead of a division. Lengths only lower the key,
        // so the key at the block's shortest length bounds every posting's.
        let mut floor = key_floor(weight, threshold);
        let least = least_freq(bm25.norm_inverse_of_norm(entry.min_norm), floor);
        let freqs = cursor.load_freqs(block)?;
        outcome.evaluated += freqs.len() as u64;
        let mut n = 0;
        for (i, &freq) in freqs.iter().enumerate() {
            passed[n] = i as u16;
            n += usize::from(freq >= least);
        }
        if n == 0 {
            continue;
        }
        let (docs, freqs) = cursor.load_block(block)?;
        for &i in &passed[..n] {
            let (doc, freq) = (docs[usize::from(i)], freqs[usize::from(i)]);
            let key = Bm25::key_of(freq, bm25.norm_inverse_of(&lengths, doc));
            if key < floor {
                continue;
            }
            let before = top.threshold();
            top.push(Hit {
                doc,
                score: bm25.score_of_key(weight, key),
            });
            if top.threshold() != before {
                floor = key_floor(weight, top.threshold());
            }
        }
    }
    outcome.stats = cursor.stats();
    Ok(outcome)
}

/// Every match of a disjunction of terms (`shape` an `Or`) scored into `top`, a window at a
/// time ([`WindowAccumulator`](super::window_accumulator::WindowAccumulator)): the top k
/// with an exact count, as the exhaustive evaluator finds them (the same sums, to the bit),
/// without its per-document pass over the cursors. `evaluated` is the count.
pub fn union_exhaustive(
    opener: &TermOpener<'_>,
    shape: &Shape,
    weights: &HashMap<String, f32>,
    bm25: &Bm25,
    top: &mut TopK,
) -> Result<Outcome, IndexError> {
    let Shape::Or(terms, not) = shape else {
        unreachable!("union_exhaustive is for disjunctions")
    };
    let not: Vec<BoostedTerm> = not
        .iter()
        .map(|term| BoostedTerm { term, boost: 1.0 })
        .collect();
    let mut exclusions: Vec<TermCursor> = open(opener, &not, weights, false)?
        .into_iter()
        .flatten()
        .collect();
    let mut clauses: Vec<Clause> = open(opener, terms, weights, false)?
        .into_iter()
        .enumerate()
        .filter_map(|(position, cursor)| cursor.map(|cursor| Clause::new(cursor, position, 0.0)))
        .collect();
    let mut outcome = max_score(&mut clauses, &mut exclusions, bm25, top, true)?;
    for cursor in &exclusions {
        outcome.stats += cursor.stats();
    }
    Ok(outcome)
}

/// Block-max MaxScore over a disjunction, a window at a time ([`MaxScoreWindow`]); with
/// `exhaustive`, no clause is ever left out and no window pruned, whatever the threshold.
fn max_score<'s>(
    clauses: &mut [Clause<'s>],
    exclusions: &mut [TermCursor<'s>],
    bm25: &Bm25,
    top: &mut TopK,
    exhaustive: bool,
) -> Result<Outcome, IndexError> {
    // Ascending by maximum score per posting ([`Clause::score_per_posting`]); `prefix[i]`
    // bounds the score from clauses 0..=i.
    clauses.sort_by(|a, b| {
        let key = |c: &Clause| c.score_per_posting(f64::from(c.max_score));
        key(a).total_cmp(&key(b))
    });
    let mut prefix = Vec::with_capacity(clauses.len());
    let mut sum = 0f64;
    for c in clauses.iter() {
        sum += f64::from(c.max_score);
        prefix.push(sum);
    }
    let mut by_position: Vec<usize> = (0..clauses.len()).collect();
    by_position.sort_by_key(|&ci| clauses[ci].position);
    let (mut evaluated, mut complete) = (0u64, true);
    let lengths = match clauses.first() {
        Some(c) => c.cursor.lengths(),
        None => {
            return Ok(Outcome {
                complete: true,
                ..Outcome::default()
            })
        }
    };
    let mut window = MaxScoreWindow::new(clauses.len());
    let mut disjunction = Disjunction {
        clauses,
        by_position: &by_position,
        exclusions,
        lengths: &lengths,
        bm25,
    };
    loop {
        // A window's work is bounded by its clauses' blocks in it; some of them are only
        // tested bit by bit, never decoded.
        cancel::check()?;
        let threshold = if exhaustive { None } else { top.threshold() };
        let clauses = &*disjunction.clauses;
        // Clauses 0..essential cannot reach the threshold on their own: only documents of the
        // essential clauses are candidates.
        let essential = prefix
            .iter()
            .position(|&p| can_beat(p, threshold))
            .unwrap_or(clauses.len());
        if essential == clauses.len() {
            complete = false;
            break;
        }
        let doc = clauses[essential..]
            .iter()
            .map(|c| c.cursor.doc())
            .min()
            .unwrap_or(NO_MORE_DOCS);
        if doc == NO_MORE_DOCS {
            break;
        }
        let outcome = window.score(&mut disjunction, essential, doc, threshold, top)?;
        evaluated += outcome.offered;
        if outcome.pruned || essential > 0 {
            complete = false;
        }
    }
    Ok(Outcome {
        evaluated,
        complete,
        stats: clause_stats(disjunction.clauses),
    })
}

pub(super) fn clause_stats(clauses: &[Clause<'_>]) -> SearchStats {
    let mut stats = SearchStats::default();
    for c in clauses {
        stats += c.cursor.stats();
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn least_freq_is_the_least_frequency_reaching_the_floor(
            inverse in 0.05f32..4.0,
            floor in -1.0f32..200.0,
        ) {
            // Against a scan of every frequency up to past the answer (200 / 0.05 = 4,000).
            let brute = (0..=10_000u32)
                .find(|&f| Bm25::key_of(f, inverse) >= floor)
                .expect("the floor is reached");
            prop_assert_eq!(least_freq(inverse, floor), brute);
        }
    }
}
