//! Query evaluation against an exhaustive reference, on random small indices: every match is
//! found (and nothing else), scores agree with a plain BM25 computation, counting agrees, and
//! pruned top-k evaluation returns exactly the exhaustive top k (documents, order, scores).
//! The reference evaluates a query as written, so queries that repeat their clauses check that
//! evaluation's folding of repeats changes neither matches nor counts, nor scores beyond
//! rounding.

use std::collections::{BTreeMap, HashMap};

use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::Document;
use apcache_index::query::{BoolQuery, Query};
use apcache_index::search::{
    Bm25, Hit, IndexReader, LoadMode, Norms, Scoring, SearchOptions, Searcher,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

/// Words with skewed frequencies (word i appears with probability about 1/(i+1)).
const VOCABULARY: [&str; 10] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
];

/// Words a few dozen documents hold each: a disjunction that mixes them with the vocabulary's
/// frequent words is what seeds a top k's threshold from its rarest terms.
const RARE_WORDS: [&str; 3] = ["kilo", "lima", "mike"];

fn documents(seed: u64, count: usize) -> Vec<Document> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|id| {
            let length = 1 + (next() % 40) as usize;
            let words: Vec<&str> = (0..length)
                .map(|_| {
                    let r = next() % 1000;
                    if r < 3 {
                        return RARE_WORDS[(next() % 3) as usize];
                    }
                    // Harmonic-ish skew: small indices are frequent.
                    let i = (VOCABULARY.len() as u64 * r * r / 1_000_000) as usize;
                    VOCABULARY[i.min(VOCABULARY.len() - 1)]
                })
                .collect();
            Document {
                id: Some(id.to_string()),
                title: String::new(),
                body: words.join(" "),
                json: None,
            }
        })
        .collect()
}

/// A document of `words` in its body, with `id` as its external id.
fn body_document(id: impl ToString, words: &[&str]) -> Document {
    Document {
        id: Some(id.to_string()),
        title: String::new(),
        body: words.join(" "),
        json: None,
    }
}

/// Term frequencies per document (the reference inversion).
fn term_freqs(docs: &[Document]) -> Vec<HashMap<String, u32>> {
    docs.iter()
        .map(|d| {
            let mut tf = HashMap::new();
            for w in d.body.split(' ').filter(|w| !w.is_empty()) {
                *tf.entry(w.to_string()).or_insert(0) += 1;
            }
            tf
        })
        .collect()
}

/// The reference score of `query` for a document, with the evaluator's summation rules:
/// conjunctions and disjunctions sum clause scores in f64 and round once; a required part
/// plus an optional part add in f32.
fn reference_score(
    query: &Query,
    tf: &HashMap<String, u32>,
    length: u32,
    bm25: &Bm25,
    idf: &HashMap<String, f32>,
) -> Option<f32> {
    let has = |t: &str| tf.contains_key(t);
    if !query.matches(&has) {
        return None;
    }
    Some(match query {
        Query::Term(t) => bm25.score(idf[t], tf[t], length),
        Query::Phrase(_) => unreachable!("phrases are tested in tests/phrase.rs"),
        Query::Filter(_) | Query::Range(_) | Query::All => {
            unreachable!("field clauses are tested in tests/fields.rs")
        }
        Query::Boost(..) | Query::DisMax(_) => {
            unreachable!("boosts and dismax are tested in tests/text_fields.rs")
        }
        Query::Bool(b) => {
            let sum = |clauses: &[Query]| -> (f32, bool) {
                let mut s = 0f64;
                let mut any = false;
                for c in clauses {
                    if let Some(x) = reference_score(c, tf, length, bm25, idf) {
                        s += f64::from(x);
                        any = true;
                    }
                }
                (s as f32, any)
            };
            if b.must.is_empty() {
                sum(&b.should).0
            } else {
                let required = if b.must.len() == 1 {
                    reference_score(&b.must[0], tf, length, bm25, idf).expect("matches")
                } else {
                    sum(&b.must).0
                };
                let (optional, any) = if b.should.len() == 1 {
                    match reference_score(&b.should[0], tf, length, bm25, idf) {
                        Some(x) => (x, true),
                        None => (0.0, false),
                    }
                } else {
                    sum(&b.should)
                };
                if any {
                    required + optional
                } else {
                    required
                }
            }
        }
    })
}

fn term() -> impl Strategy<Value = Query> {
    // Mostly vocabulary words, some rare words, sometimes a word no document has.
    (0..VOCABULARY.len() + RARE_WORDS.len() + 1).prop_map(|i| {
        let word = VOCABULARY
            .iter()
            .chain(&RARE_WORDS)
            .nth(i)
            .copied()
            .unwrap_or("zulu");
        Query::Term(word.to_string())
    })
}

fn query() -> impl Strategy<Value = Query> {
    term().prop_recursive(3, 12, 4, |inner| {
        (
            proptest::collection::vec(inner.clone(), 0..3),
            proptest::collection::vec(inner.clone(), 0..4),
            proptest::collection::vec(inner, 0..2),
        )
            .prop_map(|(must, should, must_not)| {
                Query::Bool(BoolQuery {
                    must,
                    should,
                    must_not,
                })
            })
    })
}

/// Flat disjunctions and conjunctions of terms, which the pruned evaluators take.
fn flat_query() -> impl Strategy<Value = Query> {
    (
        any::<bool>(),
        proptest::collection::vec(term(), 1..5),
        proptest::collection::vec(term(), 0..2),
    )
        .prop_map(|(conjunction, terms, not)| {
            let (must, should) = if conjunction {
                (terms, Vec::new())
            } else {
                (Vec::new(), terms)
            };
            Query::Bool(BoolQuery {
                must,
                should,
                must_not: not,
            })
        })
}

/// Queries that write their clauses many times: up to three clauses (terms and groups) from
/// [`query`], each written up to dozens of times as a required, optional or prohibited
/// clause, which evaluation folds into one clause each with the boost of its repeats.
fn repeated_query() -> impl Strategy<Value = Query> {
    (
        proptest::collection::vec(query(), 1..4),
        proptest::collection::vec((any::<prop::sample::Index>(), 0u8..5), 1..48),
    )
        .prop_map(|(clauses, picks)| {
            let mut b = BoolQuery::default();
            for (pick, occur) in picks {
                let clause = pick.get(&clauses).clone();
                match occur {
                    0 | 1 => b.must.push(clause),
                    2 | 3 => b.should.push(clause),
                    _ => b.must_not.push(clause),
                }
            }
            Query::Bool(b)
        })
}

/// Flat conjunctions and disjunctions of terms written many times, which the pruned
/// evaluators take once folded.
fn flat_repeated_query() -> impl Strategy<Value = Query> {
    (
        any::<bool>(),
        proptest::collection::vec((term(), 1usize..40), 1..4),
        proptest::collection::vec(term(), 0..3),
    )
        .prop_map(|(conjunction, terms, not)| {
            let terms: Vec<Query> = terms
                .into_iter()
                .flat_map(|(term, repeats)| std::iter::repeat_n(term, repeats))
                .collect();
            let (must, should) = if conjunction {
                (terms, Vec::new())
            } else {
                (Vec::new(), terms)
            };
            Query::Bool(BoolQuery {
                must,
                should,
                must_not: not,
            })
        })
}

struct Fixture {
    _dir: tempfile::TempDir,
    reader: IndexReader,
    /// The same index loaded "uncompressed direct".
    direct: IndexReader,
    tfs: Vec<HashMap<String, u32>>,
    lengths: Vec<u32>,
}

fn fixture(seed: u64, count: usize, merge: bool) -> Fixture {
    fixture_of(documents(seed, count), merge)
}

fn fixture_of(docs: Vec<Document>, merge: bool) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let options = IndexOptions {
        batch_docs: 37,
        memory_budget: if merge { 64 << 20 } else { 256 << 10 },
        merge,
        ..IndexOptions::default()
    };
    build_index_from_documents(&docs, dir.path(), &options, |_, _| {}).unwrap();
    let reader = IndexReader::open(dir.path()).unwrap();
    let direct = IndexReader::open_with(dir.path(), LoadMode::Direct).unwrap();
    let tfs = term_freqs(&docs);
    let lengths = tfs.iter().map(|tf| tf.values().sum()).collect();
    Fixture {
        _dir: dir,
        reader,
        direct,
        tfs,
        lengths,
    }
}

fn reference(f: &Fixture, query: &Query, options: &SearchOptions) -> BTreeMap<u32, f32> {
    let bm25 = Searcher::new(&f.reader).bm25(options);
    let mut idf = HashMap::new();
    for t in query.terms() {
        idf.insert(t.to_string(), bm25.idf(f.reader.doc_freq(t).unwrap()));
    }
    f.tfs
        .iter()
        .enumerate()
        .filter_map(|(doc, tf)| {
            reference_score(query, tf, f.lengths[doc], &bm25, &idf).map(|s| (doc as u32, s))
        })
        .collect()
}

fn check_exhaustive(f: &Fixture, query: &Query, norms: Norms, scoring: Scoring) {
    check_exhaustive_within(f, query, norms, scoring, 1e-6);
}

/// [`check_exhaustive`] with scores within `tolerance` of the reference's, relatively (or
/// absolutely below 1).
fn check_exhaustive_within(
    f: &Fixture,
    query: &Query,
    norms: Norms,
    scoring: Scoring,
    tolerance: f32,
) {
    let options = SearchOptions {
        k: usize::MAX >> 1,
        count: true,
        pruning: false,
        norms,
        scoring,
    };
    let want = reference(f, query, &options);
    let got = Searcher::new(&f.reader).search(query, &options).unwrap();
    assert_eq!(got.total_hits as usize, want.len(), "{query}: count");
    let got_map: BTreeMap<u32, f32> = got.hits.iter().map(|h| (h.doc, h.score)).collect();
    assert_eq!(
        got_map.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{query}: matching documents"
    );
    for (doc, score) in &want {
        let g = got_map[doc];
        assert!(
            (g - score).abs() <= tolerance * score.abs().max(1.0),
            "{query}: doc {doc} scored {g}, reference {score}"
        );
    }
    let counted = Searcher::new(&f.reader)
        .search(query, &SearchOptions { k: 0, ..options })
        .unwrap();
    assert_eq!(
        counted.total_hits as usize,
        want.len(),
        "{query}: count only"
    );
}

fn check_pruned(f: &Fixture, query: &Query, k: usize) {
    // Lucene norms take the evaluators' norm-byte paths; exact lengths the general ones.
    for norms in [Norms::Lucene, Norms::Exact] {
        let exhaustive = SearchOptions {
            k,
            count: true,
            pruning: false,
            norms,
            ..SearchOptions::default()
        };
        let pruned = SearchOptions {
            count: false,
            pruning: true,
            ..exhaustive
        };
        let want = Searcher::new(&f.reader).search(query, &exhaustive).unwrap();
        let got = Searcher::new(&f.reader).search(query, &pruned).unwrap();
        let bits = |hits: &[Hit]| -> Vec<(u32, u32)> {
            hits.iter().map(|h| (h.doc, h.score.to_bits())).collect()
        };
        assert_eq!(
            bits(&got.hits),
            bits(&want.hits),
            "{query}, k={k}, {norms:?}"
        );
        assert!(got.total_hits <= want.total_hits);
        let direct = Searcher::new(&f.direct).search(query, &pruned).unwrap();
        assert_eq!(
            bits(&direct.hits),
            bits(&want.hits),
            "{query}, k={k}, {norms:?}, direct"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn exhaustive_evaluation_equals_the_reference(
        seed in any::<u64>(),
        merge in any::<bool>(),
        queries in proptest::collection::vec(query(), 1..12),
    ) {
        let f = fixture(seed, 700, merge);
        for (i, q) in queries.iter().enumerate() {
            let (norms, scoring) = match i % 3 {
                0 => (Norms::Lucene, Scoring::Bm25),
                1 => (Norms::Exact, Scoring::Bm25),
                _ => (Norms::Lucene, Scoring::Bm25Fixed),
            };
            check_exhaustive(&f, q, norms, scoring);
        }
    }

    #[test]
    fn pruned_top_k_equals_exhaustive_top_k(
        seed in any::<u64>(),
        merge in any::<bool>(),
        queries in proptest::collection::vec(flat_query(), 1..10),
    ) {
        let f = fixture(seed, 2000, merge);
        for q in &queries {
            for k in [1, 3, 10, 100] {
                check_pruned(&f, q, k);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// A clause written n times scores as one clause of n times the weight (`n · idf` in
    /// `f32`, as Lucene's rewrite folds it) where the reference sums n equal scores: the two
    /// differ by the rounding of the weight and of BM25's last subtraction, amplified where a
    /// low frequency in a long document leaves a small score of a large weight; 1e-5 covers it
    /// with room. Matches and counts are exact.
    #[test]
    fn repeated_clauses_match_count_and_score_as_written(
        seed in any::<u64>(),
        merge in any::<bool>(),
        queries in proptest::collection::vec(repeated_query(), 1..8),
    ) {
        let f = fixture(seed, 700, merge);
        for (i, q) in queries.iter().enumerate() {
            let (norms, scoring) = match i % 3 {
                0 => (Norms::Lucene, Scoring::Bm25),
                1 => (Norms::Exact, Scoring::Bm25),
                _ => (Norms::Lucene, Scoring::Bm25Fixed),
            };
            check_exhaustive_within(&f, q, norms, scoring, 1e-5);
        }
    }

    #[test]
    fn pruned_top_k_of_repeated_terms_equals_exhaustive_top_k(
        seed in any::<u64>(),
        queries in proptest::collection::vec(flat_repeated_query(), 1..6),
    ) {
        let f = fixture(seed, 2000, false);
        for q in &queries {
            check_exhaustive_within(&f, q, Norms::Lucene, Scoring::Bm25, 1e-5);
            for k in [1, 10] {
                check_pruned(&f, q, k);
            }
        }
    }
}

/// Many query threads over one open reader return what one thread returns.
#[test]
fn query_threads_share_one_reader() {
    fn assert_shareable<T: Send + Sync>() {}
    assert_shareable::<IndexReader>();
    let f = fixture(7, 3000, true);
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut queries: Vec<Query> = (0..64)
        .map(|_| flat_query().new_tree(&mut runner).unwrap().current())
        .collect();
    queries.extend((0..32).map(|_| query().new_tree(&mut runner).unwrap().current()));
    let options = [
        SearchOptions::default(),
        SearchOptions {
            k: 0,
            count: true,
            ..SearchOptions::default()
        },
        SearchOptions {
            k: 100,
            ..SearchOptions::default()
        },
    ];
    let run_all = |reader: &IndexReader| -> Vec<(u64, Vec<(u32, u32)>)> {
        let searcher = Searcher::new(reader);
        let mut out = Vec::new();
        for q in &queries {
            for o in &options {
                let r = searcher.search(q, o).unwrap();
                out.push((
                    r.total_hits,
                    r.hits.iter().map(|h| (h.doc, h.score.to_bits())).collect(),
                ));
            }
        }
        out
    };
    let want = run_all(&f.reader);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4).map(|_| scope.spawn(|| run_all(&f.reader))).collect();
        for handle in handles {
            assert_eq!(handle.join().unwrap(), want);
        }
    });
}

/// A block-max AND window over a lead block bounds each other clause by the highest bound of
/// all its blocks the window overlaps, not only the first: here the lead's second block spans
/// two blocks of the other clause, and only the second holds the document that wins.
#[test]
fn and_windows_bound_every_block_of_a_clause_they_overlap() {
    // Every document is 52 tokens long, so lengths do not matter. `l` (in even documents,
    // twice) leads with two blocks: 0..=510 and 512..=1022. `s` (in three documents of four,
    // once) has three: about 0..=340, 341..=681 and 682..=1022. Document 800 holds `l` once
    // and `s` fifty times: a lower lead score than its neighbours', and the best total.
    let docs: Vec<Document> = (0..1024u32)
        .map(|d| {
            let mut words: Vec<&str> = Vec::new();
            if d == 800 {
                words.push("l");
                words.extend(std::iter::repeat_n("s", 50));
            } else {
                if d % 2 == 0 {
                    words.extend(["l", "l"]);
                }
                if d % 4 != 3 {
                    words.push("s");
                }
            }
            let filler = 52 - words.len();
            words.extend(std::iter::repeat_n("f", filler));
            body_document(d, &words)
        })
        .collect();
    let f = fixture_of(docs, true);
    let query = Query::Bool(BoolQuery {
        must: vec![Query::Term("l".into()), Query::Term("s".into())],
        should: Vec::new(),
        must_not: Vec::new(),
    });
    let best = Searcher::new(&f.reader)
        .search(
            &query,
            &SearchOptions {
                k: 1,
                pruning: false,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    assert_eq!(best.hits[0].doc, 800, "the fixture's premise");
    for k in [1, 2, 5] {
        check_pruned(&f, &query, k);
    }
}

/// A frequent term's blocks are stored as bitsets (the codec's dense form, most of "alpha"'s
/// here), and a union count that ORs them in a word at a time, exclusions clearing them, equals
/// the reference; so does a conjunction count that ANDs them.
#[test]
fn dense_blocks_count_as_the_documents_they_hold() {
    let f = fixture(11, 3000, true);
    let segment = &f.reader.segments()[0];
    let info = segment.term("alpha").unwrap().unwrap();
    let bytes = segment.postings_bytes(&info).unwrap();
    let dense = (0..info.blocks())
        .filter(|&block| {
            let entry = segment.skip_entry(&info, block).unwrap();
            let len = (info.doc_freq as usize - block * 256).min(256);
            let input = &bytes[entry.docs_offset as usize..];
            segment.codec().dense_docs(input, len).unwrap().is_some()
        })
        .count();
    assert!(
        dense * 2 > info.blocks(),
        "{dense} of {} blocks dense",
        info.blocks()
    );
    let words = |list: &[&str]| {
        list.iter()
            .map(|w| Query::Term(w.to_string()))
            .collect::<Vec<_>>()
    };
    for (should, must_not) in [
        (vec!["alpha", "bravo", "charlie"], vec![]),
        (vec!["alpha", "juliet", "india"], vec!["bravo"]),
        (vec!["bravo", "charlie", "delta", "echo"], vec!["alpha"]),
    ] {
        let query = Query::Bool(BoolQuery {
            must: Vec::new(),
            should: words(&should),
            must_not: words(&must_not),
        });
        check_exhaustive(&f, &query, Norms::Lucene, Scoring::Bm25);
    }
    // Conjunctions of two frequent terms: counted on a bitset of the denser one.
    for (must, must_not) in [
        (vec!["alpha", "bravo"], vec![]),
        (vec!["alpha", "charlie"], vec!["delta"]),
        (vec!["bravo", "alpha"], vec!["alpha"]),
    ] {
        let query = Query::Bool(BoolQuery {
            must: words(&must),
            should: Vec::new(),
            must_not: words(&must_not),
        });
        check_exhaustive(&f, &query, Norms::Lucene, Scoring::Bm25);
    }
}

/// Unions of lists sparse enough that most of their DIDs fall in words of their own (set one
/// bit at a time by the count), beside dense ones (gathered a word at a time, or ORed from
/// bitset blocks), counted as the reference counts them.
#[test]
fn sparse_and_dense_lists_count_alike() {
    let words = [
        ("every", 1),
        ("third", 3),
        ("fortieth", 40),
        ("seventieth", 70),
        ("ninetyseventh", 97),
    ];
    let docs: Vec<Document> = (0..6000)
        .map(|i| Document {
            id: Some(i.to_string()),
            title: String::new(),
            body: words
                .iter()
                .filter(|(_, every)| i % every == 0)
                .map(|(word, _)| *word)
                .collect::<Vec<_>>()
                .join(" "),
            json: None,
        })
        .collect();
    let f = fixture_of(docs, true);
    let term = |w: &str| Query::Term(w.to_string());
    for (should, must_not) in [
        (vec!["fortieth", "seventieth", "ninetyseventh"], vec![]),
        (
            vec!["third", "fortieth", "seventieth"],
            vec!["ninetyseventh"],
        ),
        (
            vec!["every", "fortieth", "ninetyseventh"],
            vec!["seventieth"],
        ),
    ] {
        let query = Query::Bool(BoolQuery {
            must: Vec::new(),
            should: should.into_iter().map(term).collect(),
            must_not: must_not.into_iter().map(term).collect(),
        });
        check_exhaustive(&f, &query, Norms::Lucene, Scoring::Bm25);
    }
    // Conjunctions of two terms, the rarer marked against the denser's bitset.
    for (must, must_not) in [
        (vec!["every", "third"], vec![]),
        (vec!["third", "fortieth"], vec!["seventieth"]),
        (vec!["fortieth", "seventieth"], vec![]),
        (vec!["seventieth", "ninetyseventh"], vec!["every"]),
    ] {
        let query = Query::Bool(BoolQuery {
            must: must.into_iter().map(term).collect(),
            should: Vec::new(),
            must_not: must_not.into_iter().map(term).collect(),
        });
        check_exhaustive(&f, &query, Norms::Lucene, Scoring::Bm25);
    }
}

/// Conjunctions, disjunctions and exclusions of a rare term with frequent ones whose blocks
/// are bitsets: the pruned top k (candidates tested against a bitset block by bit, their
/// frequencies found by their place in it), the counts (a rare lead tested by bit against a
/// list more than 16 times longer) and exclusions tested by bit, all as the reference.
#[test]
fn rare_terms_against_bitset_blocks_match_the_reference() {
    let docs: Vec<Document> = (0..6000u32)
        .map(|i| {
            let mut words = vec!["every"; 1 + (i % 3) as usize];
            if i % 2 == 0 {
                words.push("half");
            }
            if i % 3 == 0 {
                words.extend(["third"; 2]);
            }
            if i % 97 == 0 {
                words.extend(std::iter::repeat_n("rare", 1 + (i % 5) as usize));
            }
            words.extend(std::iter::repeat_n("filler", (i % 7) as usize));
            body_document(i, &words)
        })
        .collect();
    let f = fixture_of(docs, true);
    let segment = &f.reader.segments()[0];
    for term in ["every", "half"] {
        let info = segment.term(term).unwrap().unwrap();
        let bytes = segment.postings_bytes(&info).unwrap();
        let entry = segment.skip_entry(&info, 1).unwrap();
        let input = &bytes[entry.docs_offset as usize..];
        assert!(
            segment.codec().dense_docs(input, 256).unwrap().is_some(),
            "the fixture's premise: {term}'s blocks are bitsets"
        );
    }
    let term = |w: &str| Query::Term(w.to_string());
    let bool_query = |must: &[&str], should: &[&str], must_not: &[&str]| {
        Query::Bool(BoolQuery {
            must: must.iter().map(|w| term(w)).collect(),
            should: should.iter().map(|w| term(w)).collect(),
            must_not: must_not.iter().map(|w| term(w)).collect(),
        })
    };
    for query in [
        bool_query(&["every", "rare"], &[], &[]),
        bool_query(&["rare", "half", "every"], &[], &[]),
        bool_query(&["third", "rare"], &[], &["half"]),
        bool_query(&["rare", "every"], &[], &["half"]),
        bool_query(&[], &["every", "rare"], &[]),
        bool_query(&[], &["rare", "half", "filler"], &["third"]),
    ] {
        check_exhaustive(&f, &query, Norms::Lucene, Scoring::Bm25);
        for k in [1, 5, 10, 40] {
            check_pruned(&f, &query, k);
        }
    }
}
