//! Sorting without counting ([`Searcher::search_sorted_top`]) steps over blocks of documents
//! whose column bounds cannot beat the hits held; its hits must be exactly those of the
//! counting sort ([`Searcher::search_sorted`]), for numeric and keyword keys, both orders,
//! one key or two, on indexes of several blocks with values clustered or scattered, some
//! documents without a value, over a merged index and over segments of interleaved runs.

mod common;

use apcache_index::query::{parse_query_in_fields, DefaultFields, DefaultOperator};
use apcache_index::schema::Mapping;
use apcache_index::search::{Searcher, SortBy, SortKey};
use proptest::prelude::*;
use serde_json::{json, Value};

fn mapping() -> Mapping {
    Mapping::from_json(&json!({"properties": {
        "body": {"type": "text"}, "size": {"type": "long"}, "name": {"type": "keyword"}}}))
    .unwrap()
}

/// `n` documents: sizes rising with the document number (clustered) or drawn at random, a
/// gap of documents without any, names from a small or a large set, words `a` to `d`.
fn documents(n: usize, seed: u64, clustered: bool) -> Vec<Value> {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|i| {
            let r = next();
            let words: Vec<&str> = ["a", "b", "c", "d"]
                .iter()
                .enumerate()
                .filter(|(w, _)| (r >> w) & 1 == 1 || *w == 0)
                .map(|(_, w)| *w)
                .collect();
            let mut document = json!({"id": format!("d{i}"), "body": words.join(" ")});
            if (r >> 8) % 7 != 0 {
                let size = if clustered {
                    i as i64 / 3
                } else {
                    (r >> 16) as i64 % 500
                };
                document["size"] = json!(size);
                document["name"] = json!(format!(
                    "n{:03}",
                    (r >> 32) % if clustered { 900 } else { 40 }
                ));
            }
            document
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn the_top_of_a_sort_without_a_count_is_the_counted_sorts(
        n in 300usize..1500,
        seed in any::<u64>(),
        clustered in any::<bool>(),
        merge in any::<bool>(),
    ) {
        let work = tempfile::tempdir().unwrap();
        let reader = common::build_json_index(&documents(n, seed, clustered), mapping(), work.path(), merge);
        let searcher = Searcher::new(&reader);
        for text in ["a", "b c", "+b +d", "*:*"] {
            let fields = DefaultFields::parse(&["body".into()]).unwrap();
            let (query, _) = parse_query_in_fields(
                text, &reader.analyzer(), DefaultOperator::Or, reader.mapping(), &fields,
            )
            .unwrap();
            for by in [SortBy::Numbers("size".into()), SortBy::Keywords("name".into())] {
                for descending in [false, true] {
                    let first = SortKey { by: by.clone(), descending, missing_first: false };
                    let two = [first.clone(), SortKey { by: SortBy::Doc, descending: true, missing_first: false }];
                    for sort in [&[first][..], &two[..]] {
                        for k in [1, 10, 37] {
                            let counted = searcher.search_sorted(&query, sort, k, None).unwrap();
                            let top = searcher.search_sorted_top(&query, sort, k, None).unwrap();
                            prop_assert!(counted.total_hits_exact && !top.total_hits_exact);
                            prop_assert!(top.total_hits <= counted.total_hits);
                            let docs = |r: &apcache_index::search::SortedResult| {
                                r.hits.iter().map(|h| (h.doc, h.values.clone())).collect::<Vec<_>>()
                            };
                            prop_assert_eq!(docs(&top), docs(&counted), "{} {:?} k={}", text, sort, k);
                            // Rising sizes over one run of documents.
                            if merge && clustered && text == "*:*" && !descending && k == 1
                                && matches!(sort[0].by, SortBy::Numbers(_))
                            {
                                // The first document's size is the least: every block after
                                // its own is stepped over.
                                prop_assert!(top.total_hits <= 256, "{}", top.total_hits);
                            }
                        }
                    }
                }
            }
        }
    }
}
