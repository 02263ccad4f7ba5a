//! The canonical form of a query, and its packed key: what lets a cache of results answer
//! `b OR a` from the entry of `a OR b`.
//!
//! A [`BoolQuery`]'s clauses of one kind commute: `+a +b` and `+b +a` match the same documents
//! with the same scores up to the order of a floating-point sum. [`Query::canonical`] sorts
//! every clause list (by the packed key of each clause), at every depth, and drops repeated
//! prohibited clauses, the one repetition that cannot change a result (a repeated required or
//! optional clause adds its score twice, as in Lucene). Two queries are *isomorphic* when
//! their canonical forms are equal. A cache that evaluates a query in its canonical form
//! therefore gives isomorphic queries bit-identical answers, whichever of them ran.
//!
//! [`Query::canonical_key`] packs a canonical query compactly, as the original design packs
//! its cache keys: an operator byte, then for a term its length and bytes inline, for a group
//! the three clause counts and the clauses in order.
//!
//! ```text
//! term:   0x00 | length (VByte) | UTF-8 bytes
//! group:  0x01 | must count | should count | must_not count (VByte each) | clauses...
//! phrase: 0x02 | slop | term count (VByte each) | per term: position (VByte) | term as above
//! filter: 0x03 | the inner query
//! range:  0x04 | field as a term | lower i64 | upper i64          (numbers)
//!         0x05 | field as a term | per bound: 0 value | 1 value | 2   (keywords: included,
//!                                                                   excluded, unbounded)
//! all:    0x06
//! boost:  0x07 | factor f32 | the inner query
//! dismax: 0x08 | tie breaker f32 | query count (VByte) | queries...
//! ```
//!
//! The alternatives of a dismax keep their order (their scores' maximum and sum commute, but
//! they are rare enough that sorting them buys a cache little).
//!
//! A phrase's terms do not commute: its canonical form is itself.

use super::ast::{BoolQuery, DisMaxQuery, Query};
use std::ops::Bound;

use super::RangeBounds;
use crate::format::vbyte::write_vbyte;

const TERM: u8 = 0;
const GROUP: u8 = 1;
const PHRASE: u8 = 2;
const FILTER: u8 = 3;
const NUMBER_RANGE: u8 = 4;
const KEYWORD_RANGE: u8 = 5;
const ALL: u8 = 6;
const BOOST: u8 = 7;
const DISMAX: u8 = 8;

impl Query {
    /// The canonical form: clause lists sorted and repeated prohibited clauses dropped, at
    /// every depth. Matches the same documents; isomorphic queries have equal forms.
    pub fn canonical(&self) -> Query {
        match self {
            Query::Term(_) | Query::Phrase(_) | Query::Range(_) | Query::All => self.clone(),
            Query::Filter(inner) => Query::Filter(Box::new(inner.canonical())),
            Query::Boost(inner, factor) => Query::Boost(Box::new(inner.canonical()), *factor),
            Query::DisMax(d) => Query::DisMax(DisMaxQuery {
                queries: d.queries.iter().map(Query::canonical).collect(),
                tie_breaker: d.tie_breaker,
            }),
            Query::Bool(b) => {
                let sorted = |clauses: &[Query], dedup: bool| {
                    let mut keyed: Vec<(Vec<u8>, Query)> = clauses
                        .iter()
                        .map(|clause| {
                            let clause = clause.canonical();
                            (clause.packed_key(), clause)
                        })
                        .collect();
                    keyed.sort_by(|x, y| x.0.cmp(&y.0));
                    if dedup {
                        keyed.dedup_by(|x, y| x.0 == y.0);
                    }
                    keyed.into_iter().map(|(_, clause)| clause).collect()
                };
                Query::Bool(BoolQuery {
                    must: sorted(&b.must, false),
                    should: sorted(&b.should, false),
                    must_not: sorted(&b.must_not, true),
                })
            }
        }
    }

    /// The packed key of the query's canonical form: equal for two queries exactly when they
    /// are isomorphic.
    pub fn canonical_key(&self) -> Vec<u8> {
        let mut key = Vec::new();
        self.write_canonical_key(&mut key);
        key
    }

    /// Appends the packed key of the query's canonical form to `out`, without building the
    /// form: each clause list is packed in place, its clauses' byte ranges sorted, and the
    /// list rewritten in that order. Per-thread scratch buffers hold the ranges and the copy,
    /// so once they have grown a key costs no allocation beyond `out`'s own growth (a cache
    /// looks a query up by this key before anything else, hit or miss).
    pub fn write_canonical_key(&self, out: &mut Vec<u8>) {
        if let Query::Bool(_) | Query::Filter(_) | Query::Boost(..) | Query::DisMax(_) = self {
            KEY_SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
                Ok(mut scratch) => canonical_into(self, out, &mut scratch),
                Err(_) => canonical_into(self, out, &mut KeyScratch::default()),
            });
        } else {
            // A term, a phrase or a range is its own canonical form.
            self.pack(out);
        }
    }

    /// This query packed as it is, in the form of [`Query::canonical_key`]: equal for two
    /// queries exactly when they are equal.
    pub fn packed_key(&self) -> Vec<u8> {
        let mut key = Vec::new();
        self.pack(&mut key);
        key
    }

    /// Appends [`Query::packed_key`] to `out`.
    pub fn write_packed_key(&self, out: &mut Vec<u8>) {
        self.pack(out);
    }

    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Query::Term(term) => pack_term(term, out),
            Query::Phrase(phrase) => {
                out.push(PHRASE);
                write_vbyte(u64::from(phrase.slop), out);
                write_vbyte(phrase.terms.len() as u64, out);
                for (position, term) in &phrase.terms {
                    write_vbyte(u64::from(*position), out);
                    pack_term(term, out);
                }
            }
            Query::Bool(b) => {
                out.push(GROUP);
                for clauses in [&b.must, &b.should, &b.must_not] {
                    write_vbyte(clauses.len() as u64, out);
                }
                for clause in b.must.iter().chain(&b.should).chain(&b.must_not) {
                    clause.pack(out);
                }
            }
            Query::Filter(inner) => {
                out.push(FILTER);
                inner.pack(out);
            }
            Query::Range(range) => match &range.bounds {
                RangeBounds::Numbers { lower, upper } => {
                    out.push(NUMBER_RANGE);
                    pack_term(&range.field, out);
                    out.extend_from_slice(&lower.to_le_bytes());
                    out.extend_from_slice(&upper.to_le_bytes());
                }
                RangeBounds::Keywords { lower, upper } => {
                    out.push(KEYWORD_RANGE);
                    pack_term(&range.field, out);
                    for bound in [lower, upper] {
                        match bound {
                            Bound::Included(v) => {
                                out.push(0);
                                pack_term(v, out);
                            }
                            Bound::Excluded(v) => {
                                out.push(1);
                                pack_term(v, out);
                            }
                            Bound::Unbounded => out.push(2),
                        }
                    }
                }
            },
            Query::All => out.push(ALL),
            Query::Boost(inner, factor) => {
                out.push(BOOST);
                out.extend_from_slice(&factor.get().to_le_bytes());
                inner.pack(out);
            }
            Query::DisMax(d) => {
                out.push(DISMAX);
                out.extend_from_slice(&d.tie_breaker.get().to_le_bytes());
                write_vbyte(d.queries.len() as u64, out);
                for query in &d.queries {
                    query.pack(out);
                }
            }
        }
    }
}

/// The buffers [`Query::write_canonical_key`] reuses: the byte ranges of the clauses packed so
/// far (a stack, one frame per group being packed) and the copy a group is rewritten from.
#[derive(Default)]
struct KeyScratch {
    ranges: Vec<(usize, usize)>,
    copy: Vec<u8>,
}

thread_local! {
    static KEY_SCRATCH: std::cell::RefCell<KeyScratch> =
        std::cell::RefCell::new(KeyScratch::default());
}

/// Appends the canonical key of `query` to `out` (see [`Query::write_canonical_key`]).
fn canonical_into(query: &Query, out: &mut Vec<u8>, scratch: &mut KeyScratch) {
    match query {
        Query::Filter(inner) => {
            out.push(FILTER);
            canonical_into(inner, out, scratch);
            return;
        }
        Query::Boost(inner, factor) => {
            out.push(BOOST);
            out.extend_from_slice(&factor.get().to_le_bytes());
            canonical_into(inner, out, scratch);
            return;
        }
        Query::DisMax(d) => {
            out.push(DISMAX);
            out.extend_from_slice(&d.tie_breaker.get().to_le_bytes());
            write_vbyte(d.queries.len() as u64, out);
            for inner in &d.queries {
                canonical_into(inner, out, scratch);
            }
            return;
        }
        _ => {}
    }
    let Query::Bool(b) = query else {
        query.pack(out);
        return;
    };
    // Each clause's canonical key, packed where the group's key will be, in the given order.
    let start = out.len();
    let frame = scratch.ranges.len();
    for clause in b.must.iter().chain(&b.should).chain(&b.must_not) {
        let from = out.len();
        canonical_into(clause, out, scratch);
        scratch.ranges.push((from, out.len()));
    }
    let KeyScratch { ranges, copy } = scratch;
    let bytes = |r: &(usize, usize)| &out[r.0..r.1];
    let (must, rest) = ranges[frame..].split_at_mut(b.must.len());
    let (should, must_not) = rest.split_at_mut(b.should.len());
    must.sort_unstable_by(|x, y| bytes(x).cmp(bytes(y)));
    should.sort_unstable_by(|x, y| bytes(x).cmp(bytes(y)));
    must_not.sort_unstable_by(|x, y| bytes(x).cmp(bytes(y)));
    // Repeated prohibited clauses are dropped: keep the first of each run of equal keys.
    let mut kept = 0;
    for i in 0..must_not.len() {
        if kept == 0 || bytes(&must_not[kept - 1]) != bytes(&must_not[i]) {
            must_not[kept] = must_not[i];
            kept += 1;
        }
    }
    let listed = b.must.len() + b.should.len() + kept;
    // Rewrite the group: its header, then the clauses in sorted order.
    copy.clear();
    copy.extend_from_slice(&out[start..]);
    out.truncate(start);
    out.push(GROUP);
    for count in [b.must.len(), b.should.len(), kept] {
        write_vbyte(count as u64, out);
    }
    for &(from, to) in &ranges[frame..frame + listed] {
        out.extend_from_slice(&copy[from - start..to - start]);
    }
    ranges.truncate(frame);
}

fn pack_term(term: &str, out: &mut Vec<u8>) {
    out.push(TERM);
    write_vbyte(term.len() as u64, out);
    out.extend_from_slice(term.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::PhraseQuery;
    use proptest::prelude::*;

    fn term(t: &str) -> Query {
        Query::Term(t.into())
    }

    fn group(must: Vec<Query>, should: Vec<Query>, must_not: Vec<Query>) -> Query {
        Query::Bool(BoolQuery {
            must,
            should,
            must_not,
        })
    }

    #[test]
    fn commuted_clauses_have_one_key_and_repeats_count_where_they_score() {
        let ab = group(vec![], vec![term("a"), term("b")], vec![]);
        let ba = group(vec![], vec![term("b"), term("a")], vec![]);
        assert_eq!(ab.canonical_key(), ba.canonical_key());
        assert_eq!(ba.canonical(), ab);
        // A repeated optional clause scores twice: not the same query.
        let aab = group(vec![], vec![term("a"), term("a"), term("b")], vec![]);
        assert_ne!(aab.canonical_key(), ab.canonical_key());
        // A repeated prohibited clause changes nothing.
        let x = group(vec![term("a")], vec![], vec![term("c"), term("c")]);
        let y = group(vec![term("a")], vec![], vec![term("c")]);
        assert_eq!(x.canonical_key(), y.canonical_key());
        // The kind of a clause matters.
        let must = group(vec![term("a")], vec![term("b")], vec![]);
        let should = group(vec![term("b")], vec![term("a")], vec![]);
        assert_ne!(must.canonical_key(), should.canonical_key());
        // A term is not a group of one term (they score alike, but keys stay literal).
        assert_ne!(
            term("a").canonical_key(),
            group(vec![term("a")], vec![], vec![]).canonical_key()
        );
    }

    const VOCABULARY: [&str; 5] = ["a", "b", "c", "dd", "e"];

    fn tree() -> impl Strategy<Value = Query> {
        let term = prop::sample::select(&VOCABULARY[..]).prop_map(|t| Query::Term(t.into()));
        let phrase = (
            prop::collection::vec((prop::sample::select(&VOCABULARY[..]), 1u32..3), 2..4),
            0u32..3,
        )
            .prop_map(|(terms, slop)| {
                let mut at = 0;
                let terms = terms
                    .into_iter()
                    .enumerate()
                    .map(|(i, (t, gap))| {
                        if i > 0 {
                            at += gap;
                        }
                        (at, t.to_string())
                    })
                    .collect();
                Query::Phrase(PhraseQuery { terms, slop })
            });
        let leaf = prop_oneof![3 => term, 1 => phrase];
        leaf.prop_recursive(3, 24, 4, |inner| {
            let clauses = || prop::collection::vec(inner.clone(), 0..4);
            (clauses(), clauses(), clauses())
                .prop_map(|(must, should, must_not)| group(must, should, must_not))
        })
    }

    /// `query` with every clause list shuffled by `seed`, at every depth.
    fn shuffled(query: &Query, seed: &mut u64) -> Query {
        match query {
            Query::Bool(b) => {
                let mut shuffle = |clauses: &[Query]| {
                    let mut out: Vec<Query> = clauses.iter().map(|c| shuffled(c, seed)).collect();
                    for i in (1..out.len()).rev() {
                        *seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        out.swap(i, (*seed >> 33) as usize % (i + 1));
                    }
                    out
                };
                group(shuffle(&b.must), shuffle(&b.should), shuffle(&b.must_not))
            }
            other => other.clone(),
        }
    }

    proptest! {
        #[test]
        fn the_canonical_form_matches_the_same_documents(query in tree()) {
            let canonical = query.canonical();
            for mask in 0..32u32 {
                let has = |t: &str| {
                    let i = VOCABULARY.iter().position(|v| *v == t).unwrap();
                    mask & (1 << i) != 0
                };
                prop_assert_eq!(query.matches(&has), canonical.matches(&has));
            }
            prop_assert_eq!(canonical.canonical(), canonical.clone(), "idempotent");
        }

        #[test]
        fn keys_are_equal_exactly_for_isomorphic_queries(x in tree(), y in tree(), seed in any::<u64>()) {
            let mut s = seed;
            let x_shuffled = shuffled(&x, &mut s);
            prop_assert_eq!(x.canonical_key(), x_shuffled.canonical_key());
            // The key packed in place is the packing of the canonical form.
            prop_assert_eq!(x.canonical_key(), x.canonical().packed_key());
            let mut appended = b"prefix".to_vec();
            x_shuffled.write_canonical_key(&mut appended);
            prop_assert_eq!(&appended[6..], &x.canonical().packed_key()[..]);
            // Equal keys mean equal canonical forms (the packing is unambiguous).
            prop_assert_eq!(x.canonical_key() == y.canonical_key(), x.canonical() == y.canonical());
        }
    }
}
