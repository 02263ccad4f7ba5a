//! JSON documents under a mapping: keyword, numeric, date and boolean fields filtered, ranged,
//! tested for existence and sorted by, checked against a brute-force scan of the documents,
//! over one merged segment and over several unmerged ones.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::query::{
    exists_query, parse_query_in, range_query, term_query, BoolQuery, DefaultOperator, Query,
    RangeBounds, RangeEnd, RangeQuery,
};
use apcache_index::schema::{field_terms, Mapping};
use apcache_index::search::{IndexReader, SearchOptions, Searcher, SortBy, SortKey, SortValue};
use proptest::prelude::*;
use serde_json::{json, Value};

const SECTIONS: [&str; 3] = ["games", "net", "text"];
const TAGS: [&str; 3] = ["a", "b", "c"];
const WORDS: [&str; 3] = ["alpha", "beta", "gamma"];
const PRICES: [f64; 4] = [-2.5, 0.0, 1.25, 1e6];

fn mapping() -> Mapping {
    Mapping::from_json(&json!({"dynamic": "strict", "properties": {
        "section": {"type": "keyword"},
        "tags": {"type": "keyword"},
        "size": {"type": "long"},
        "price": {"type": "double"},
        "day": {"type": "date"},
        "free": {"type": "boolean"},
        "summary": {"type": "text"}
    }}))
    .unwrap()
}

/// A generated document.
#[derive(Debug, Clone)]
struct Doc {
    section: Option<usize>,
    tags: Vec<usize>,
    size: Option<i64>,
    price: Option<usize>,
    day: Option<u32>,
    free: Option<bool>,
    words: Vec<usize>,
}

impl Doc {
    fn json(&self, id: usize) -> Value {
        let mut object = serde_json::Map::new();
        object.insert("_id".into(), json!(format!("d{id}")));
        if let Some(s) = self.section {
            object.insert("section".into(), json!(SECTIONS[s]));
        }
        if !self.tags.is_empty() {
            let tags: Vec<&str> = self.tags.iter().map(|&t| TAGS[t]).collect();
            object.insert("tags".into(), json!(tags));
        }
        if let Some(size) = self.size {
            object.insert("size".into(), json!(size));
        }
        if let Some(p) = self.price {
            object.insert("price".into(), json!(PRICES[p]));
        }
        if let Some(day) = self.day {
            object.insert("day".into(), json!(format!("2024-01-{:02}", day)));
        }
        if let Some(free) = self.free {
            object.insert("free".into(), json!(free));
        }
        if !self.words.is_empty() {
            let words: Vec<&str> = self.words.iter().map(|&w| WORDS[w]).collect();
            object.insert("summary".into(), json!(words.join(" ")));
        }
        Value::Object(object)
    }

    /// The values the reference compares: keyword values and numbers (as the columns keep
    /// them), by field.
    fn keywords(&self) -> BTreeMap<&'static str, Vec<String>> {
        let mut out = BTreeMap::new();
        if let Some(s) = self.section {
            out.insert("section", vec![SECTIONS[s].to_string()]);
        }
        if !self.tags.is_empty() {
            out.insert(
                "tags",
                self.tags.iter().map(|&t| TAGS[t].to_string()).collect(),
            );
        }
        out
    }

    fn numbers(&self) -> BTreeMap<&'static str, Vec<i64>> {
        let mut out = BTreeMap::new();
        if let Some(size) = self.size {
            out.insert("size", vec![size]);
        }
        if let Some(p) = self.price {
            out.insert(
                "price",
                vec![apcache_index::columns::double_to_sortable(PRICES[p])],
            );
        }
        if let Some(day) = self.day {
            out.insert("day", vec![(19_723 + i64::from(day) - 1) * 86_400_000]);
        }
        if let Some(free) = self.free {
            out.insert("free", vec![i64::from(free)]);
        }
        out
    }

    fn has_term(&self, term: &str) -> bool {
        if let Some(("summary", word)) = field_terms::text_field_of(term) {
            return self.words.iter().any(|&w| WORDS[w] == word);
        }
        let keywords = self.keywords();
        let numbers = self.numbers();
        for (field, values) in &keywords {
            if values
                .iter()
                .any(|v| field_terms::keyword_term(field, v) == term)
            {
                return true;
            }
        }
        let present = keywords
            .keys()
            .chain(numbers.keys())
            .copied()
            .chain((!self.words.is_empty()).then_some("summary"));
        present
            .into_iter()
            .any(|field| field_terms::exists_term(field) == term)
    }

    fn in_range(&self, range: &RangeQuery) -> bool {
        match &range.bounds {
            RangeBounds::Numbers { lower, upper } => self
                .numbers()
                .get(range.field.as_str())
                .is_some_and(|values| values.iter().any(|v| lower <= v && v <= upper)),
            RangeBounds::Keywords { lower, upper } => self
                .keywords()
                .get(range.field.as_str())
                .is_some_and(|values| {
                    values.iter().any(|v| {
                        let above = match lower {
                            Bound::Included(l) => v >= l,
                            Bound::Excluded(l) => v > l,
                            Bound::Unbounded => true,
                        };
                        let below = match upper {
                            Bound::Included(u) => v <= u,
                            Bound::Excluded(u) => v < u,
                            Bound::Unbounded => true,
                        };
                        above && below
                    })
                }),
        }
    }
}

fn doc_strategy() -> impl Strategy<Value = Doc> {
    (
        proptest::option::of(0..SECTIONS.len()),
        proptest::collection::vec(0..TAGS.len(), 0..3),
        proptest::option::of(-5i64..20),
        proptest::option::of(0..PRICES.len()),
        proptest::option::of(1u32..6),
        proptest::option::of(any::<bool>()),
        proptest::collection::vec(0..WORDS.len(), 0..4),
    )
        .prop_map(|(section, tags, size, price, day, free, words)| Doc {
            section,
            tags,
            size,
            price,
            day,
            free,
            words,
        })
}

/// A clause on one field (or a word), built through the public query constructors.
fn leaf_strategy() -> impl Strategy<Value = Query> {
    prop_oneof![
        (0..WORDS.len()).prop_map(|w| Query::Term(field_terms::text_term("summary", WORDS[w]))),
        (0..SECTIONS.len()).prop_map(|s| term_query(&mapping(), "section", SECTIONS[s]).unwrap()),
        (0..TAGS.len()).prop_map(|t| term_query(&mapping(), "tags", TAGS[t]).unwrap()),
        (-6i64..21, -6i64..21, any::<bool>(), any::<bool>()).prop_map(|(a, b, ia, ib)| {
            let end = |v: i64, inclusive| RangeEnd {
                value: Some(v.to_string()),
                inclusive,
            };
            range_query(&mapping(), "size", &end(a, ia), &end(b, ib)).unwrap()
        }),
        (0..PRICES.len(), any::<bool>()).prop_map(|(p, inclusive)| {
            let end = RangeEnd {
                value: Some(PRICES[p].to_string()),
                inclusive,
            };
            range_query(&mapping(), "price", &end, &RangeEnd::unbounded()).unwrap()
        }),
        (1u32..7).prop_map(|d| {
            let end = RangeEnd {
                value: Some(format!("2024-01-{d:02}")),
                inclusive: false,
            };
            range_query(&mapping(), "day", &RangeEnd::unbounded(), &end).unwrap()
        }),
        any::<bool>().prop_map(|b| term_query(&mapping(), "free", &b.to_string()).unwrap()),
        (0..SECTIONS.len(), 0..SECTIONS.len()).prop_map(|(a, b)| {
            let end = |s: usize, inclusive| RangeEnd {
                value: Some(SECTIONS[s].to_string()),
                inclusive,
            };
            range_query(&mapping(), "section", &end(a, false), &end(b, true)).unwrap()
        }),
        prop::sample::select(vec![
            "section", "tags", "size", "price", "day", "free", "summary"
        ])
        .prop_map(|field| exists_query(&mapping(), field).unwrap()),
        Just(Query::All),
    ]
}

fn query_strategy() -> impl Strategy<Value = Query> {
    leaf_strategy().prop_recursive(2, 12, 4, |inner| {
        let clauses = || proptest::collection::vec(inner.clone(), 0..3);
        prop_oneof![
            (clauses(), clauses(), clauses()).prop_map(|(must, should, must_not)| {
                Query::Bool(BoolQuery {
                    must,
                    should,
                    must_not,
                })
            }),
            inner.prop_map(|q| Query::Filter(Box::new(q))),
        ]
    })
}

/// Writes `docs` as JSON lines and builds an index of them in `dir`: merged into one segment,
/// or left as the segments of two threads with interleaved runs of documents.
fn build(docs: &[Doc], dir: &std::path::Path, merge: bool) -> IndexReader {
    let documents: Vec<Value> = docs.iter().enumerate().map(|(i, d)| d.json(i)).collect();
    common::build_json_index(&documents, mapping(), dir, merge)
}

/// The ids of every document `query` matches, by the reference semantics.
fn reference_matches(docs: &[Doc], query: &Query) -> BTreeSet<String> {
    docs.iter()
        .enumerate()
        .filter(|(_, d)| query.matches_with(&|t| d.has_term(t), &|r| d.in_range(r)))
        .map(|(i, _)| format!("d{i}"))
        .collect()
}

fn matched_ids(reader: &IndexReader, query: &Query, pruning: bool) -> BTreeSet<String> {
    let options = SearchOptions {
        k: reader.max_doc() as usize + 1,
        count: !pruning,
        pruning,
        ..SearchOptions::default()
    };
    let result = Searcher::new(reader).search(query, &options).unwrap();
    let ids: BTreeSet<String> = result
        .hits
        .iter()
        .map(|h| reader.document_id(h.doc).unwrap())
        .collect();
    assert_eq!(ids.len(), result.hits.len(), "each hit once");
    ids
}

/// The top `k` hits as (DID, score bits), pruned or counted exhaustively.
fn top_hits(reader: &IndexReader, query: &Query, k: usize, pruning: bool) -> Vec<(u32, u32)> {
    let options = SearchOptions {
        k,
        count: !pruning,
        pruning,
        ..SearchOptions::default()
    };
    let result = Searcher::new(reader).search(query, &options).unwrap();
    result
        .hits
        .iter()
        .map(|h| (h.doc, h.score.to_bits()))
        .collect()
}

/// The reference order of `sort` over `docs` (size ascending or descending, missing last, ties
/// by document), as ids.
fn reference_sorted(docs: &[Doc], matching: &BTreeSet<String>, descending: bool) -> Vec<String> {
    let mut keyed: Vec<(Option<i64>, usize)> = docs
        .iter()
        .enumerate()
        .filter(|(i, _)| matching.contains(&format!("d{i}")))
        .map(|(i, d)| (d.size, i))
        .collect();
    keyed.sort_by(|a, b| match (a.0, b.0) {
        (None, None) => a.1.cmp(&b.1),
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (Some(_), None) => std::cmp::Ordering::Less,
        (Some(x), Some(y)) => {
            let by_value = if descending { y.cmp(&x) } else { x.cmp(&y) };
            by_value.then(a.1.cmp(&b.1))
        }
    });
    keyed.into_iter().map(|(_, i)| format!("d{i}")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn filters_ranges_and_sorts_agree_with_a_scan_of_the_documents(
        docs in proptest::collection::vec(doc_strategy(), 1..40),
        queries in proptest::collection::vec(query_strategy(), 1..6),
        merge in any::<bool>(),
        descending in any::<bool>(),
    ) {
        let work = tempfile::tempdir().unwrap();
        let reader = build(&docs, work.path(), merge);
        for query in &queries {
            let expected = reference_matches(&docs, query);
            prop_assert_eq!(&matched_ids(&reader, query, false), &expected, "{}", query);
            prop_assert_eq!(&matched_ids(&reader, query, true), &expected, "{}", query);
            // The pruned top k (filters beside scoring terms included) is the exhaustive one,
            // scores to the bit.
            for k in [1, 3] {
                prop_assert_eq!(top_hits(&reader, query, k, true), top_hits(&reader, query, k, false), "{}", query);
            }
            let sort = [SortKey { by: SortBy::Numbers("size".into()), descending, missing_first: false }];
            let sorted = Searcher::new(&reader).search_sorted(query, &sort, 5, None).unwrap();
            prop_assert_eq!(sorted.total_hits as usize, expected.len());
            let order = reference_sorted(&docs, &expected, descending);
            let ids: Vec<String> = sorted.hits.iter().map(|h| reader.document_id(h.doc).unwrap()).collect();
            prop_assert_eq!(&ids[..], &order[..order.len().min(5)], "{}", query);
            // The next page after the last hit, with the document order as the tie-break.
            let sort = [sort[0].clone(), SortKey { by: SortBy::Doc, descending: false, missing_first: false }];
            let first = Searcher::new(&reader).search_sorted(query, &sort, 2, None).unwrap();
            if let Some(last) = first.hits.last() {
                let next = Searcher::new(&reader)
                    .search_sorted(query, &sort, 2, Some(&last.values))
                    .unwrap();
                let ids: Vec<String> = next.hits.iter().map(|h| reader.document_id(h.doc).unwrap()).collect();
                let end = order.len().min(4);
                prop_assert_eq!(&ids[..], &order[2.min(end)..end], "{}", query);
            }
        }
    }
}

#[test]
fn query_strings_name_fields_ranges_and_existence() {
    let docs = vec![
        Doc {
            section: Some(0),
            tags: vec![0, 1],
            size: Some(10),
            price: Some(2),
            day: Some(2),
            free: Some(true),
            words: vec![0],
        },
        Doc {
            section: Some(1),
            tags: vec![],
            size: Some(3),
            price: None,
            day: None,
            free: Some(false),
            words: vec![0, 1],
        },
        Doc {
            section: None,
            tags: vec![2],
            size: None,
            price: Some(0),
            day: Some(5),
            free: None,
            words: vec![2],
        },
    ];
    let work = tempfile::tempdir().unwrap();
    let reader = build(&docs, work.path(), true);
    let analyzer = reader.analyzer();
    let ids = |text: &str| -> Vec<String> {
        let (query, _) =
            parse_query_in(text, &analyzer, DefaultOperator::Or, reader.mapping()).unwrap();
        matched_ids(&reader, &query, false).into_iter().collect()
    };
    assert_eq!(ids("alpha AND section:games"), ["d0"]);
    assert_eq!(ids("alpha AND -section:games"), ["d1"]);
    assert_eq!(ids("size:[4 TO *]"), ["d0"]);
    assert_eq!(ids("size:{3 TO 10]"), ["d0"]);
    assert_eq!(ids("tags:(a c)"), ["d0", "d2"]);
    assert_eq!(ids("_exists_:price"), ["d0", "d2"]);
    assert_eq!(ids("day:[2024-01-03 TO 2024-01-31]"), ["d2"]);
    assert_eq!(ids("free:false"), ["d1"]);
    assert_eq!(ids("price:[-3 TO 1.25]"), ["d0", "d2"]);
    assert_eq!(ids("price:{-2.5 TO 1.25]"), ["d0"]);
    assert_eq!(ids("*:* -section:net"), ["d0", "d2"]);
    // Filters add nothing to the score: the text scores alone.
    let (with_filter, _) = parse_query_in(
        "beta +section:net",
        &analyzer,
        DefaultOperator::Or,
        reader.mapping(),
    )
    .unwrap();
    let (text_only, _) =
        parse_query_in("beta", &analyzer, DefaultOperator::Or, reader.mapping()).unwrap();
    let score = |q: &Query| {
        Searcher::new(&reader)
            .search(q, &SearchOptions::default())
            .unwrap()
            .hits[0]
            .score
    };
    assert_eq!(score(&with_filter), score(&text_only));
    // Errors name the field.
    let error = |text: &str| {
        parse_query_in(text, &analyzer, DefaultOperator::Or, reader.mapping())
            .unwrap_err()
            .to_string()
    };
    assert!(error("color:red").contains("unknown field [color]"));
    assert!(error("summary:[a TO b]").contains("[summary] is text"));
    assert_eq!(ids("summary:alpha"), ["d0", "d1"]);
    assert!(error("size:big").contains("not a number"));
    assert!(error("size:[1 TO").contains("malformed range"));
    assert_eq!(reader.doc_by_id("d2").unwrap(), Some(2));
    assert_eq!(reader.doc_by_id("nope").unwrap(), None);
    assert_eq!(reader.mapping(), &mapping());
    let stored = reader.segments()[0].stored(0).unwrap();
    assert_eq!(stored.source_json()["_id"], "d0");
    let sorted = Searcher::new(&reader)
        .search_sorted(
            &Query::All,
            &[SortKey {
                by: SortBy::Keywords("section".into()),
                descending: true,
                missing_first: true,
            }],
            3,
            None,
        )
        .unwrap();
    let values: Vec<&SortValue> = sorted.hits.iter().map(|h| &h.values[0]).collect();
    assert_eq!(
        values,
        [
            &SortValue::Missing,
            &SortValue::Keyword("net".into()),
            &SortValue::Keyword("games".into())
        ]
    );
}

#[test]
fn documents_that_do_not_fit_are_skipped_with_their_line_and_reason() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("docs.jsonl");
    std::fs::write(
        &input,
        "{\"_id\": \"ok\", \"size\": 1}\n{\"_id\": \"bad\", \"size\": \"big\"}\n{\"_id\": \"ok\", \"size\": 2}\n{\"_id\": \"x\", \"color\": \"red\"}\n{\"_id\": \"y\"}\n{\"_id\": \"z\"}\n{\"_id\": \"w\"}\n",
    )
    .unwrap();
    let options = IndexOptions {
        mapping: Some(mapping()),
        ..IndexOptions::default()
    };
    let report = build_index(
        vec![Input::Path(input)],
        &work.path().join("i"),
        &options,
        |_, _| {},
    )
    .unwrap();
    assert_eq!(report.documents, 4);
    let reasons: Vec<String> = report
        .skipped_lines
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(
        reasons[0].contains(":2: document \"bad\" does not fit the mapping: field [size]"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains(":3:") && reasons[1].contains("already the id of another document"),
        "{reasons:?}"
    );
    assert!(
        reasons[2].contains(":4:") && reasons[2].contains("strict"),
        "{reasons:?}"
    );
}
