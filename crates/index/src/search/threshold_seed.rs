//! A first threshold for a disjunction's top k, read from its rarest terms before the
//! evaluation starts.
//!
//! Block-max MaxScore prunes once the top k is full, on its k-th best score, which rises as the
//! evaluation meets good documents in DID order. A query that mixes rare and frequent terms
//! (`cayman's harlequinades north 2008`) has its best documents among the rare terms' few
//! postings, but until DID order has brought k of them, the frequent terms stay essential and
//! every document of theirs is scored: on a 325,000-document index that query scored 8,124
//! documents for its top 10.
//!
//! A document's score over some of a query's terms is at most its score over all of them: the
//! term scores are not negative, and they are summed in the same order with the same rounding,
//! which is monotone in each operand. So the k-th best of such partial scores, over the rare
//! terms' documents, is a score that at least k documents of the result reach: a threshold
//! before the first window, safe for the same reasons the top k's own is (Kane and Tompa,
//! "Split-Lists and Initial Thresholds for WAND-based Search", SIGIR 2018, estimate initial
//! thresholds the same way, from the postings of terms whose lists are short).
//!
//! The rare terms' own cursors read their lists first and go back to their first postings
//! (opening the terms again would count as a second use in a postings cache). Their postings
//! are then decoded a second time, so the seed reads the
//! fewest of the rarest lists that hold `k` postings, only while those stay a small share of
//! the query's ([`SEED_SHARE`]), only when a term is left out for the threshold to prune, and
//! only for a small `k` ([`SEED_MAX_K`]).

use super::bm25::Bm25;
use super::pruned::Clause;
use crate::IndexError;

/// The most of a query's postings (one part in this many) the seed reads. Its cost is a second
/// decode of those postings (a rare list mostly has one block, which stays decoded), a few
/// nanoseconds each, and a sort; what it saves is the scoring of the frequent terms' documents
/// before the top k fills with good ones, tens of nanoseconds each. A sixteenth bounds the cost
/// where it saves nothing to a few percent of the query's decoding.
const SEED_SHARE: u64 = 16;

/// The largest `k` that is seeded. The first `k` documents in DID order are a poor sample of
/// the best ones when `k` is small, which is where the seed pays. For a large `k` they already
/// set a threshold near the seed's, and a threshold from the start only moves the first
/// windows from scoring every clause in bulk to looking up the non-essential clauses document
/// by document, which costs more while most documents still pass: with the seed, the
/// search-benchmark-game's sentence-long unions took 6.8-10.3 ms for their top 1,000 against
/// 5.9-8.9 ms without, though they scored a fifth fewer documents.
const SEED_MAX_K: usize = 64;

/// A score that at least `k` documents of the segment matching the disjunction `clauses`
/// reach (their partial scores over its rarest terms, see the module docs), or `None` when no
/// set of rare terms qualifies. The rare clauses' cursors read their lists and are rewound to
/// their first postings (their counters keep the work). Only for a disjunction without excluded
/// terms: an excluded document's partial score says nothing of the result.
pub(super) fn seed_threshold(
    clauses: &mut [Clause<'_>],
    bm25: &Bm25,
    k: usize,
) -> Result<Option<f32>, IndexError> {
    // A negative weight would let a document's partial score exceed its full one.
    let negative_or_nan = |w: f32| w.is_nan() || w < 0.0;
    if k == 0 || k > SEED_MAX_K || clauses.iter().any(|c| negative_or_nan(c.cursor.weight())) {
        return Ok(None);
    }
    let Some(rare) = rare_clauses(clauses, k) else {
        return Ok(None);
    };
    // (DID, clause position, term score) of every posting of the rare terms.
    let mut postings: Vec<(u32, u32, f32)> = Vec::new();
    for &ci in &rare {
        let clause = &mut clauses[ci];
        let (weight, position) = (clause.cursor.weight(), clause.position as u32);
        let lengths = clause.cursor.lengths();
        for block in 0..clause.cursor.blocks() {
            let (docs, freqs) = clause.cursor.load_block(block)?;
            postings.extend(docs.iter().zip(freqs).map(|(&doc, &freq)| {
                let key = Bm25::key_of(freq, bm25.norm_inverse_of(&lengths, doc));
                (doc, position, bm25.score_of_key(weight, key))
            }));
        }
        clause.cursor.rewind()?;
    }
    // Each document's partial score, its term scores summed in query order as the evaluators
    // sum a full score.
    postings.sort_unstable_by_key(|&(doc, position, _)| (doc, position));
    let mut partial: Vec<f32> = Vec::new();
    let mut at = 0;
    while at < postings.len() {
        let doc = postings[at].0;
        let mut sum = 0f64;
        while at < postings.len() && postings[at].0 == doc {
            sum += f64::from(postings[at].2);
            at += 1;
        }
        partial.push(sum as f32);
    }
    if partial.len() < k {
        return Ok(None);
    }
    let (_, kth, _) = partial.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    Ok(Some(*kth))
}

/// Indices into `clauses` of the rarest terms whose postings the seed reads: taken by document
/// frequency until they hold `k` postings (fewer cannot hold `k` documents), and only while
/// their sum stays within a [`SEED_SHARE`] of all the clauses' postings. `None` unless they
/// reach `k` and leave a clause out.
fn rare_clauses(clauses: &[Clause<'_>], k: usize) -> Option<Vec<usize>> {
    let total: u64 = clauses.iter().map(|c| u64::from(c.cursor.doc_freq())).sum();
    let budget = total / SEED_SHARE;
    let mut by_doc_freq: Vec<usize> = (0..clauses.len()).collect();
    by_doc_freq.sort_by_key(|&ci| clauses[ci].cursor.doc_freq());
    let mut taken = 0u64;
    let mut rare = Vec::new();
    for ci in by_doc_freq {
        let doc_freq = u64::from(clauses[ci].cursor.doc_freq());
        if taken + doc_freq > budget {
            break;
        }
        taken += doc_freq;
        rare.push(ci);
        if taken >= k as u64 {
            break;
        }
    }
    (taken >= k as u64 && rare.len() < clauses.len()).then_some(rare)
}
