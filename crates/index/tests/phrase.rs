//! Phrase queries against a brute-force scan of each document's tokens, on random small
//! indexes: exact and sloppy phrases, terms repeated in the phrase and in the documents, gaps
//! between the phrase's terms, one segment and several, mmap and decoded postings, alone and
//! inside boolean queries.

use std::collections::BTreeMap;

use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::Document;
use apcache_index::query::{BoolQuery, PhraseQuery, Query};
use apcache_index::search::{IndexReader, LoadMode, SearchOptions, Searcher, SloppyPhrase};
use apcache_index::IndexError;
use proptest::prelude::*;

/// Few words, so that phrases match often.
const VOCABULARY: [&str; 5] = ["ant", "bee", "cat", "dog", "eel"];

/// A xorshift generator: the same documents for the same seed.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

fn documents(seed: u64, count: usize) -> Vec<Document> {
    let mut next = xorshift(seed);
    (0..count)
        .map(|id| {
            let title_words = (next() % 3) as usize;
            let words = |n: usize, next: &mut dyn FnMut() -> u64| -> String {
                (0..n)
                    .map(|_| VOCABULARY[(next() % 5) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let title = words(title_words, &mut next);
            let body_words = 1 + (next() % 30) as usize;
            let body = words(body_words, &mut next);
            Document {
                id: Some(id.to_string()),
                title,
                body,
                json: None,
            }
        })
        .collect()
}

/// A document's tokens in order: the title's, then the body's (one stream of positions).
fn tokens(doc: &Document) -> Vec<&str> {
    doc.title
        .split(' ')
        .chain(doc.body.split(' '))
        .filter(|w| !w.is_empty())
        .collect()
}

struct Fixture {
    _dir: tempfile::TempDir,
    reader: IndexReader,
    direct: IndexReader,
    docs: Vec<Document>,
}

fn fixture(seed: u64, count: usize, merge: bool) -> Fixture {
    let docs = documents(seed, count);
    let dir = tempfile::tempdir().unwrap();
    let options = IndexOptions {
        batch_docs: 29,
        memory_budget: if merge { 64 << 20 } else { 256 << 10 },
        merge,
        ..IndexOptions::default()
    };
    build_index_from_documents(&docs, dir.path(), &options, |_, _| {}).unwrap();
    Fixture {
        reader: IndexReader::open(dir.path()).unwrap(),
        direct: IndexReader::open_with(dir.path(), LoadMode::Direct).unwrap(),
        _dir: dir,
        docs,
    }
}

/// The phrase frequency of `phrase` in `tokens`, by brute force for an exact phrase (every
/// start where each term sits at its offset) and through [`SloppyPhrase`] over positions
/// found by a scan for a sloppy one.
fn reference_freq(phrase: &PhraseQuery, tokens: &[&str]) -> f32 {
    let offsets: Vec<u32> = phrase.terms.iter().map(|(o, _)| *o).collect();
    if phrase.slop == 0 {
        let mut count = 0;
        for start in 0..tokens.len() {
            if phrase
                .terms
                .iter()
                .all(|(o, t)| tokens.get(start + *o as usize).is_some_and(|w| w == t))
            {
                count += 1;
            }
        }
        return count as f32;
    }
    let lists: Vec<Vec<u32>> = phrase
        .terms
        .iter()
        .map(|(_, t)| {
            (0..tokens.len() as u32)
                .filter(|&p| tokens[p as usize] == t)
                .collect()
        })
        .collect();
    if lists.iter().any(Vec::is_empty) {
        return 0.0;
    }
    let ids: Vec<usize> = phrase
        .terms
        .iter()
        .map(|(_, t)| phrase.terms.iter().position(|(_, u)| u == t).unwrap())
        .collect();
    let slices: Vec<&[u32]> = lists.iter().map(Vec::as_slice).collect();
    SloppyPhrase::new(&ids, &offsets, phrase.slop)
        .freq(&slices)
        .unwrap()
}

/// Scores of the documents `phrase` matches, computed from the documents' text.
fn reference(f: &Fixture, phrase: &PhraseQuery) -> BTreeMap<u32, f32> {
    let bm25 = Searcher::new(&f.reader).bm25(&SearchOptions::default());
    let weight = phrase
        .terms
        .iter()
        .map(|(_, t)| f64::from(bm25.idf(f.reader.doc_freq(t).unwrap())))
        .sum::<f64>() as f32;
    f.docs
        .iter()
        .enumerate()
        .filter_map(|(doc, d)| {
            let tokens = tokens(d);
            let freq = reference_freq(phrase, &tokens);
            (freq > 0.0).then(|| {
                let key = freq * bm25.norm_inverse(tokens.len() as u32);
                (doc as u32, bm25.score_of_key(weight, key))
            })
        })
        .collect()
}

fn phrase() -> impl Strategy<Value = PhraseQuery> {
    (
        prop::collection::vec((prop::sample::select(&VOCABULARY[..]), 1u32..3), 2..5),
        prop_oneof![3 => Just(0u32), 2 => 1u32..4],
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
            PhraseQuery { terms, slop }
        })
}

fn all_hits(reader: &IndexReader, query: &Query) -> (u64, BTreeMap<u32, f32>) {
    let options = SearchOptions {
        k: usize::MAX >> 1,
        count: true,
        pruning: false,
        ..SearchOptions::default()
    };
    let result = Searcher::new(reader).search(query, &options).unwrap();
    let count = Searcher::new(reader)
        .search(query, &SearchOptions { k: 0, ..options })
        .unwrap()
        .total_hits;
    assert_eq!(count, result.total_hits, "{query}: count only");
    (
        result.total_hits,
        result.hits.iter().map(|h| (h.doc, h.score)).collect(),
    )
}

fn assert_same_scores(query: &Query, got: &BTreeMap<u32, f32>, want: &BTreeMap<u32, f32>) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{query}: matching documents"
    );
    for (doc, score) in want {
        assert_eq!(
            got[doc].to_bits(),
            score.to_bits(),
            "{query}: doc {doc} scored {}, reference {score}",
            got[doc]
        );
    }
}

/// The top 3 and top 10 with pruning (candidates skipped on their bound, the rest scored as
/// they are checked) are the first hits of the full ranking.
fn assert_pruned_top_k(reader: &IndexReader, query: &Query) {
    let full = SearchOptions {
        k: usize::MAX >> 1,
        pruning: false,
        ..SearchOptions::default()
    };
    let ranking = Searcher::new(reader).search(query, &full).unwrap().hits;
    for k in [3, 10] {
        let options = SearchOptions {
            k,
            pruning: true,
            ..SearchOptions::default()
        };
        let top = Searcher::new(reader).search(query, &options).unwrap().hits;
        let got: Vec<(u32, u32)> = top.iter().map(|h| (h.doc, h.score.to_bits())).collect();
        let want: Vec<(u32, u32)> = ranking
            .iter()
            .take(k)
            .map(|h| (h.doc, h.score.to_bits()))
            .collect();
        assert_eq!(got, want, "{query}: top {k} with pruning");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn phrases_match_and_score_as_a_scan_of_the_text(
        seed in any::<u64>(),
        merge in any::<bool>(),
        phrases in prop::collection::vec(phrase(), 1..8),
    ) {
        // 600 documents: terms span several posting blocks, positions several chunks.
        let f = fixture(seed, 600, merge);
        for phrase in phrases {
            let want = reference(&f, &phrase);
            let query = Query::Phrase(phrase);
            for reader in [&f.reader, &f.direct] {
                let (total, got) = all_hits(reader, &query);
                prop_assert_eq!(total as usize, want.len(), "{}: count", query);
                assert_same_scores(&query, &got, &want);
                assert_pruned_top_k(reader, &query);
            }
        }
    }

    #[test]
    fn phrases_combine_with_boolean_clauses(
        seed in any::<u64>(),
        a in phrase(),
        b in phrase(),
        word in prop::sample::select(&VOCABULARY[..]),
    ) {
        let f = fixture(seed, 300, false);
        let (want_a, want_b) = (reference(&f, &a), reference(&f, &b));
        let term = Query::Term(word.to_string());
        let (_, with_word) = all_hits(&f.reader, &term);
        let (a, b) = (Query::Phrase(a), Query::Phrase(b));
        // `+a -word`: a's matches without the word, a's scores.
        let query = Query::Bool(BoolQuery {
            must: vec![a.clone()],
            should: vec![],
            must_not: vec![term.clone()],
        });
        let want: BTreeMap<u32, f32> = want_a
            .iter()
            .filter(|(d, _)| !with_word.contains_key(d))
            .map(|(&d, &s)| (d, s))
            .collect();
        let (_, got) = all_hits(&f.reader, &query);
        assert_same_scores(&query, &got, &want);
        // `a b`: either phrase, scores summed in double precision.
        let query = Query::Bool(BoolQuery {
            must: vec![],
            should: vec![a, b],
            must_not: vec![],
        });
        let mut want: BTreeMap<u32, f64> = BTreeMap::new();
        for (d, s) in want_a.iter().chain(&want_b) {
            *want.entry(*d).or_default() += f64::from(*s);
        }
        let want: BTreeMap<u32, f32> = want.into_iter().map(|(d, s)| (d, s as f32)).collect();
        let (_, got) = all_hits(&f.reader, &query);
        assert_same_scores(&query, &got, &want);
    }

    /// A phrase written n times, required or optional, beside a word: evaluation folds the
    /// repeats into one phrase of n times the weight. The matches and counts are the
    /// written query's; each match scores the n phrase scores summed (plus the word's), to
    /// the rounding of the folded weight (see `tests/search.rs`).
    #[test]
    fn repeated_phrases_match_count_and_score_as_written(
        seed in any::<u64>(),
        phrase in phrase(),
        repeats in 1usize..12,
        required in any::<bool>(),
        word in prop::sample::select(&VOCABULARY[..]),
    ) {
        let f = fixture(seed, 300, false);
        let want_phrase = reference(&f, &phrase);
        let term = Query::Term(word.to_string());
        let (_, with_word) = all_hits(&f.reader, &term);
        let copies = vec![Query::Phrase(phrase); repeats];
        let query = Query::Bool(if required {
            BoolQuery { must: copies, should: vec![term], must_not: vec![] }
        } else {
            BoolQuery { must: vec![], should: [copies, vec![term]].concat(), must_not: vec![] }
        });
        let mut want: BTreeMap<u32, f64> = BTreeMap::new();
        for (&d, &s) in &want_phrase {
            *want.entry(d).or_default() += repeats as f64 * f64::from(s);
        }
        for (&d, &s) in &with_word {
            // Required phrases: the word only adds to their matches.
            if required && !want.contains_key(&d) {
                continue;
            }
            *want.entry(d).or_default() += f64::from(s);
        }
        let (total, got) = all_hits(&f.reader, &query);
        prop_assert_eq!(total as usize, want.len(), "{}: count", query);
        prop_assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>(),
            "{}: matching documents",
            query
        );
        for (doc, &score) in &want {
            let score = score as f32;
            prop_assert!(
                (got[doc] - score).abs() <= 1e-5 * score.abs().max(1.0),
                "{}: doc {} scored {}, reference {}",
                query,
                doc,
                got[doc],
                score
            );
        }
    }
}

#[test]
fn a_phrase_on_an_index_without_positions_is_a_clear_error() {
    let docs = documents(3, 50);
    let dir = tempfile::tempdir().unwrap();
    let options = IndexOptions {
        positions: false,
        ..IndexOptions::default()
    };
    build_index_from_documents(&docs, dir.path(), &options, |_, _| {}).unwrap();
    let reader = IndexReader::open(dir.path()).unwrap();
    let phrase = Query::Phrase(PhraseQuery {
        terms: vec![(0, "ant".into()), (1, "bee".into())],
        slop: 0,
    });
    let error = Searcher::new(&reader)
        .search(&phrase, &SearchOptions::default())
        .unwrap_err();
    assert!(matches!(error, IndexError::NoPositions { .. }), "{error}");
    assert!(error.to_string().contains("--no-positions"), "{error}");
    // Term queries are unaffected.
    let term = Query::Term("ant".into());
    assert!(Searcher::new(&reader)
        .search(&term, &SearchOptions::default())
        .is_ok());
}

#[test]
fn a_phrase_with_a_term_missing_from_the_index_matches_nothing() {
    let f = fixture(5, 100, true);
    let phrase = Query::Phrase(PhraseQuery {
        terms: vec![(0, "ant".into()), (1, "zebra".into())],
        slop: 3,
    });
    let (total, hits) = all_hits(&f.reader, &phrase);
    assert_eq!((total, hits.len()), (0, 0));
}

/// Phrases of a rare word with a word of every document (whose blocks are stored as bitsets,
/// which the phrase tests for each candidate without decoding) and a word of some, in both
/// orders, exact and sloppy, against the scan.
#[test]
fn a_rare_word_beside_a_word_of_every_document_matches_the_scan() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let docs: Vec<Document> = (0..3000)
        .map(|id| {
            let mut words = vec!["the"];
            for _ in 0..(4 + next() % 12) {
                // "rare" in about 2.5% of the documents: under 1/16 of the others' counts.
                words.push(match next() % 400 {
                    0 => "rare",
                    1..=120 => "some",
                    121..=240 => "the",
                    _ => "filler",
                });
            }
            Document {
                id: Some(id.to_string()),
                title: String::new(),
                body: words.join(" "),
                json: None,
            }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    build_index_from_documents(&docs, dir.path(), &IndexOptions::default(), |_, _| {}).unwrap();
    let f = Fixture {
        reader: IndexReader::open(dir.path()).unwrap(),
        direct: IndexReader::open_with(dir.path(), LoadMode::Direct).unwrap(),
        _dir: dir,
        docs,
    };
    let phrases: [&[&str]; 6] = [
        &["the", "rare"],
        &["rare", "the"],
        &["the", "some", "rare"],
        &["rare", "the", "some"],
        &["some", "the", "the", "rare"],
        &["the", "rare", "the"],
    ];
    for words in phrases {
        for slop in [0, 2] {
            let phrase = PhraseQuery {
                terms: (0u32..).zip(words.iter().map(|w| w.to_string())).collect(),
                slop,
            };
            let want = reference(&f, &phrase);
            // Every phrase here matches somewhere once slop lets the words reorder.
            assert!(slop == 0 || !want.is_empty(), "{phrase:?} matches nothing");
            assert!(!want.is_empty() || slop == 0, "{phrase:?} matches nothing");
            let query = Query::Phrase(phrase);
            for reader in [&f.reader, &f.direct] {
                let (total, got) = all_hits(reader, &query);
                assert_eq!(total as usize, want.len(), "{query}: count");
                assert_same_scores(&query, &got, &want);
                assert_pruned_top_k(reader, &query);
            }
        }
    }
}
