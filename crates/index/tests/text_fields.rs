//! Text fields indexed under their own names: every match and every score of queries over one
//! field and over several checked against a reference that computes BM25 per field from the
//! documents themselves (each field's document count, average length and the document's
//! length in the field, as Lucene does), over one merged segment and over several unmerged
//! ones, with dynamic pruning and without.

mod common;

use std::collections::BTreeMap;

use apcache_index::query::{
    parse_query_in, parse_query_in_fields, BoolQuery, DefaultFields, DefaultOperator, DisMaxQuery,
    Factor, PhraseQuery, Query,
};
use apcache_index::schema::{field_terms, Mapping};
use apcache_index::search::{
    Bm25, CollectionStats, IndexReader, Norms, Scoring, SearchOptions, Searcher,
};
use proptest::prelude::*;
use serde_json::{json, Value};

const WORDS: [&str; 4] = ["alpha", "beta", "gamma", "delta"];
const FIELDS: [&str; 2] = ["title", "summary"];

fn mapping() -> Mapping {
    Mapping::from_json(&json!({"dynamic": "strict", "properties": {
        "title": {"type": "text"},
        "summary": {"type": "text"},
        "section": {"type": "keyword"}
    }}))
    .unwrap()
}

/// A generated document: its words per field (a summary may be an array of values).
#[derive(Debug, Clone)]
struct Doc {
    title: Vec<usize>,
    summary: Vec<Vec<usize>>,
}

impl Doc {
    fn json(&self, id: usize) -> Value {
        let text = |words: &[usize]| {
            words
                .iter()
                .map(|&w| WORDS[w])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut object = serde_json::Map::new();
        object.insert("_id".into(), json!(format!("d{id}")));
        object.insert(
            "section".into(),
            json!(if id.is_multiple_of(2) { "even" } else { "odd" }),
        );
        if !self.title.is_empty() {
            object.insert("title".into(), json!(text(&self.title)));
        }
        match self.summary.len() {
            0 => {}
            1 => {
                object.insert("summary".into(), json!(text(&self.summary[0])));
            }
            _ => {
                let values: Vec<String> = self.summary.iter().map(|v| text(v)).collect();
                object.insert("summary".into(), json!(values));
            }
        }
        Value::Object(object)
    }

    /// The words of `field`, every value's in order.
    fn words(&self, field: &str) -> Vec<usize> {
        match field {
            "title" => self.title.clone(),
            _ => self.summary.concat(),
        }
    }

    fn freq(&self, field: &str, word: usize) -> u32 {
        self.words(field).iter().filter(|&&w| w == word).count() as u32
    }

    /// Whether the field holds the two words one after the other within one value.
    fn has_pair(&self, field: &str, first: usize, second: usize) -> u32 {
        let values = match field {
            "title" => vec![self.title.clone()],
            _ => self.summary.clone(),
        };
        values
            .iter()
            .map(|v| {
                v.windows(2)
                    .filter(|w| w[0] == first && w[1] == second)
                    .count() as u32
            })
            .sum()
    }
}

/// The field and word of a term of a named text field.
fn split(term: &str) -> (&str, usize) {
    let (field, word) = field_terms::text_field_of(term).expect("a text term");
    (
        field,
        WORDS.iter().position(|w| *w == word).expect("a word"),
    )
}

/// BM25 per field from the documents: each field's statistics, the document's own length.
struct Reference<'d> {
    docs: &'d [Doc],
    scorers: BTreeMap<&'static str, Bm25>,
}

impl<'d> Reference<'d> {
    fn new(docs: &'d [Doc]) -> Reference<'d> {
        let scorers = FIELDS
            .iter()
            .map(|&field| {
                let lengths: Vec<u64> = docs.iter().map(|d| d.words(field).len() as u64).collect();
                let with_field = lengths.iter().filter(|&&l| l > 0).count() as u64;
                let tokens = lengths.iter().sum();
                (
                    field,
                    Bm25::new(Scoring::Bm25, Norms::Lucene, with_field, tokens),
                )
            })
            .collect();
        Reference { docs, scorers }
    }

    fn doc_freq(&self, field: &str, word: usize) -> u64 {
        self.docs.iter().filter(|d| d.freq(field, word) > 0).count() as u64
    }

    /// The score of document `d` for `query`, `None` where it does not match.
    fn score(&self, d: usize, query: &Query) -> Option<f32> {
        let doc = &self.docs[d];
        match query {
            Query::Term(term) => {
                let (field, word) = split(term);
                let freq = doc.freq(field, word);
                (freq > 0).then(|| {
                    let bm25 = &self.scorers[field];
                    let weight = bm25.idf(self.doc_freq(field, word));
                    bm25.score(weight, freq, doc.words(field).len() as u32)
                })
            }
            Query::Phrase(phrase) => {
                let (field, first) = split(&phrase.terms[0].1);
                let (_, second) = split(&phrase.terms[1].1);
                let freq = doc.has_pair(field, first, second);
                (freq > 0).then(|| {
                    let bm25 = &self.scorers[field];
                    let weight = (f64::from(bm25.idf(self.doc_freq(field, first)))
                        + f64::from(bm25.idf(self.doc_freq(field, second))))
                        as f32;
                    bm25.score(weight, freq, doc.words(field).len() as u32)
                })
            }
            Query::Bool(b) => {
                if b.must_not.iter().any(|q| self.score(d, q).is_some()) {
                    return None;
                }
                let must: Option<Vec<f32>> = b.must.iter().map(|q| self.score(d, q)).collect();
                let must = must?;
                let should: Vec<f32> = b.should.iter().filter_map(|q| self.score(d, q)).collect();
                if b.must.is_empty() && should.is_empty() {
                    return None;
                }
                Some(must.iter().chain(&should).sum())
            }
            Query::Boost(inner, factor) => self.score(d, inner).map(|s| s * factor.get()),
            Query::DisMax(dis_max) => {
                let scores: Vec<f32> = dis_max
                    .queries
                    .iter()
                    .filter_map(|q| self.score(d, q))
                    .collect();
                let best = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let others: f32 = scores.iter().sum::<f32>() - best;
                (!scores.is_empty()).then(|| best + dis_max.tie_breaker.get() * others)
            }
            other => panic!("not generated: {other:?}"),
        }
    }
}

fn doc_strategy() -> impl Strategy<Value = Doc> {
    (
        prop::collection::vec(0..WORDS.len(), 0..4),
        prop::collection::vec(prop::collection::vec(0..WORDS.len(), 0..6), 0..3),
    )
        .prop_map(|(title, summary)| Doc { title, summary })
}

fn leaf_strategy() -> impl Strategy<Value = Query> {
    prop_oneof![
        4 => (0..FIELDS.len(), 0..WORDS.len())
            .prop_map(|(f, w)| Query::Term(field_terms::text_term(FIELDS[f], WORDS[w]))),
        1 => (0..FIELDS.len(), 0..WORDS.len(), 0..WORDS.len()).prop_map(|(f, a, b)| {
            Query::Phrase(PhraseQuery {
                terms: vec![
                    (0, field_terms::text_term(FIELDS[f], WORDS[a])),
                    (1, field_terms::text_term(FIELDS[f], WORDS[b])),
                ],
                slop: 0,
            })
        }),
    ]
}

fn query_strategy() -> impl Strategy<Value = Query> {
    leaf_strategy().prop_recursive(2, 10, 4, |inner| {
        let clauses = |n| prop::collection::vec(inner.clone(), 0..n);
        prop_oneof![
            3 => (clauses(3), clauses(4), clauses(2)).prop_map(|(must, should, must_not)| {
                Query::Bool(BoolQuery {
                    must,
                    should,
                    must_not,
                })
            }),
            1 => (inner.clone(), prop::sample::select(vec![0.5f32, 2.0, 3.0]))
                .prop_map(|(q, f)| Query::Boost(Box::new(q), Factor::new(f).unwrap())),
            1 => (prop::collection::vec(inner.clone(), 1..4), prop::sample::select(vec![0.0f32, 0.3]))
                .prop_map(|(queries, tie)| Query::DisMax(DisMaxQuery {
                    queries,
                    tie_breaker: Factor::new(tie).unwrap(),
                })),
        ]
    })
}

fn build(docs: &[Doc], dir: &std::path::Path, merge: bool) -> IndexReader {
    let documents: Vec<Value> = docs.iter().enumerate().map(|(i, d)| d.json(i)).collect();
    common::build_json_index(&documents, mapping(), dir, merge)
}

/// Every hit of `query` (id and score), best first.
fn hits(
    searcher: &Searcher,
    reader: &IndexReader,
    query: &Query,
    k: usize,
    pruning: bool,
) -> Vec<(String, f32)> {
    let options = SearchOptions {
        k,
        pruning,
        ..SearchOptions::default()
    };
    let result = searcher.search(query, &options).unwrap();
    result
        .hits
        .iter()
        .map(|h| (reader.document_id(h.doc).unwrap(), h.score))
        .collect()
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn per_field_scores_agree_with_a_reference_over_the_documents(
        docs in prop::collection::vec(doc_strategy(), 1..40),
        queries in prop::collection::vec(query_strategy(), 1..6),
        merge: bool,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let reader = build(&docs, dir.path(), merge);
        // `apcache check` finds every block bounded with its field's lengths.
        let check = apcache_index::check::check_index(&dir.path().join("index")).unwrap();
        prop_assert!(check.problems.is_empty(), "{:?}", check.problems);
        let searcher = Searcher::new(&reader);
        let reference = Reference::new(&docs);
        for query in &queries {
            let mut want: Vec<(String, f32)> = (0..docs.len())
                .filter_map(|d| reference.score(d, query).map(|s| (format!("d{d}"), s)))
                .collect();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for pruning in [false, true] {
                let all = hits(&searcher, &reader, query, docs.len() + 1, pruning);
                let got: BTreeMap<&str, f32> = all.iter().map(|(id, s)| (id.as_str(), *s)).collect();
                prop_assert_eq!(got.len(), want.len(), "matches of {}", query);
                for (id, score) in &want {
                    let found = got.get(id.as_str());
                    prop_assert!(
                        found.is_some_and(|&s| close(s, *score)),
                        "{}: {} scored {:?}, the reference {}", query, id, found, score
                    );
                }
                // The top 3 scores, as pruning finds them.
                let top = hits(&searcher, &reader, query, 3, pruning);
                for ((_, got), (_, want)) in top.iter().zip(&want) {
                    prop_assert!(close(*got, *want), "top of {}: {} against {}", query, got, want);
                }
                prop_assert_eq!(top.len(), want.len().min(3));
            }
        }
    }
}

#[test]
fn words_without_a_field_search_every_text_field_and_named_ones_theirs() {
    let docs = vec![
        Doc {
            title: vec![0],
            summary: vec![vec![1, 1]],
        },
        Doc {
            title: vec![1],
            summary: vec![vec![0], vec![2]],
        },
        Doc {
            title: vec![],
            summary: vec![vec![3]],
        },
    ];
    let dir = tempfile::tempdir().unwrap();
    let reader = build(&docs, dir.path(), true);
    let analyzer = reader.analyzer();
    let parse = |text: &str| {
        parse_query_in(text, &analyzer, DefaultOperator::Or, reader.mapping())
            .unwrap()
            .0
    };
    let searcher = Searcher::new(&reader);
    let ids = |query: &Query| {
        let mut ids: Vec<String> = hits(&searcher, &reader, query, 10, true)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&parse("alpha")), ["d0", "d1"]);
    assert_eq!(ids(&parse("title:alpha")), ["d0"]);
    assert_eq!(ids(&parse("summary:alpha")), ["d1"]);
    assert_eq!(ids(&parse("summary:(alpha OR delta)")), ["d1", "d2"]);
    assert_eq!(ids(&parse("title:beta AND section:odd")), ["d1"]);
    // A phrase never runs from one value of an array into the next.
    assert!(ids(&parse("summary:\"alpha gamma\"")).is_empty());
    assert_eq!(ids(&parse("summary:\"beta beta\"")), ["d0"]);
    // A word without a field is the word in each field, any of them matching.
    assert_eq!(parse("alpha").to_string(), "summary:alpha title:alpha");
    let (only_title, _) = parse_query_in_fields(
        "alpha",
        &analyzer,
        DefaultOperator::Or,
        reader.mapping(),
        &DefaultFields::parse(&["title".into()]).unwrap(),
    )
    .unwrap();
    assert_eq!(ids(&only_title), ["d0"]);
    assert!(parse_query_in_fields(
        "alpha",
        &analyzer,
        DefaultOperator::Or,
        reader.mapping(),
        &DefaultFields::parse(&["section".into()]).unwrap(),
    )
    .is_err());
    // Ranges and sorting refuse a text field by name.
    let error = parse_query_in(
        "title:[a TO b]",
        &analyzer,
        DefaultOperator::Or,
        reader.mapping(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("is text"), "{error}");
}

/// Shards scoring with the whole collection's statistics score each field as one index does.
#[test]
fn shards_score_fields_with_the_collections_statistics() {
    let docs: Vec<Doc> = (0..30)
        .map(|i| Doc {
            title: (0..i % 3).map(|j| (i + j) % 4).collect(),
            summary: vec![(0..i % 5).map(|j| (i * j) % 4).collect()],
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let whole = build(&docs, &dir.path().join("whole"), true);
    let (a, b) = docs.split_at(13);
    let shard_a = build(a, &dir.path().join("a"), true);
    let shard_b = build(b, &dir.path().join("b"), true);
    let query = Query::Bool(BoolQuery {
        should: vec![
            Query::Term(field_terms::text_term("title", "alpha")),
            Query::Term(field_terms::text_term("summary", "beta")),
        ],
        ..BoolQuery::default()
    });
    let mut stats = CollectionStats::of_query(&shard_a, &query).unwrap();
    stats.add(&CollectionStats::of_query(&shard_b, &query).unwrap());
    let whole_hits = hits(&Searcher::new(&whole), &whole, &query, 100, true);
    let mut scores: Vec<f32> = Vec::new();
    for shard in [&shard_a, &shard_b] {
        let searcher = Searcher::with_collection_stats(shard, stats.clone());
        scores.extend(
            hits(&searcher, shard, &query, 100, true)
                .iter()
                .map(|h| h.1),
        );
    }
    scores.sort_by(|a, b| b.total_cmp(a));
    let want: Vec<f32> = whole_hits.iter().map(|h| h.1).collect();
    assert_eq!(scores, want);
}
