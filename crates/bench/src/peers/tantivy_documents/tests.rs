//! tantivy's matches against apcache's, on hand-written documents and on Debian's package
//! index.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::search::{IndexReader, SearchOptions, Searcher as ApcacheSearcher};
use serde_json::json;

use super::*;
use crate::document_queries::{self, DocumentQuery};

/// Sort keys: (field, descending).
type Sort = Vec<(String, bool)>;

/// apcache's exact count of `query` (sorted by `sort` when not empty), and its hits.
fn apcache_answer(
    reader: &IndexReader,
    mapping: &Mapping,
    query: &Value,
    sort: &[(String, bool)],
    k: usize,
) -> (u64, usize) {
    let parsed = document_queries::to_query(query, mapping).unwrap();
    let searcher = ApcacheSearcher::new(reader);
    if sort.is_empty() {
        let options = SearchOptions {
            k,
            count: true,
            ..SearchOptions::default()
        };
        let result = searcher.search(&parsed, &options).unwrap();
        (result.total_hits, result.hits.len())
    } else {
        let line = DocumentQuery {
            class: "sorted",
            query: query.clone(),
            sort: sort.to_vec(),
        };
        let keys = line.sort_keys(mapping).unwrap();
        let result = searcher.search_sorted(&parsed, &keys, k, None).unwrap();
        (result.total_hits, result.hits.len())
    }
}

/// Builds both engines' indices of the JSON lines `documents` under `mapping`.
fn build_both(
    documents: &Path,
    mapping: &Mapping,
    work: &Path,
) -> (u64, TantivyDocuments, IndexReader) {
    let apcache_dir = work.join("apcache");
    let options = IndexOptions {
        mapping: Some(mapping.clone()),
        id_field: Some("id".into()),
        ..IndexOptions::default()
    };
    build_index(
        vec![Input::Path(documents.to_path_buf())],
        &apcache_dir,
        &options,
        |_, _| {},
    )
    .unwrap();
    let reader = IndexReader::open(&apcache_dir).unwrap();
    let tantivy_dir = work.join("tantivy");
    let indexed =
        TantivyDocuments::build(documents, mapping, "id", &tantivy_dir, 64 << 20).unwrap();
    let tantivy = TantivyDocuments::open(&tantivy_dir, mapping).unwrap();
    assert_eq!(tantivy.num_docs(), indexed);
    assert_eq!(tantivy.searcher.segment_readers().len(), 1);
    (indexed, tantivy, reader)
}

/// Checks that tantivy matches what apcache matches, on every path of `search`; returns
/// apcache's count.
fn agree(
    tantivy: &TantivyDocuments,
    reader: &IndexReader,
    mapping: &Mapping,
    query: &Value,
    sort: &[(String, bool)],
) -> u64 {
    let k = 10;
    let (expected, apcache_hits) = apcache_answer(reader, mapping, query, sort, k);
    assert_eq!(apcache_hits as u64, expected.min(k as u64), "{query}");
    let counted = tantivy.search(query, sort, k, true).unwrap();
    assert_eq!(
        counted.count, expected,
        "count of {query} sorted by {sort:?}"
    );
    assert_eq!(counted.hits as u64, expected.min(k as u64), "{query}");
    let top = tantivy.search(query, sort, k, false).unwrap();
    assert_eq!(top.hits as u64, expected.min(k as u64), "{query}");
    assert_eq!(top.count, top.hits as u64);
    let only = tantivy.search(query, sort, 0, false).unwrap();
    assert_eq!((only.count, only.hits), (expected, 0), "{query}");
    expected
}

fn term(field: &str, value: &str) -> Value {
    json!({"term": {"field": field, "value": value}})
}

fn phrase(terms: &[&str], slop: u32) -> Value {
    json!({"phrase": {"field": "body", "terms": terms, "slop": slop}})
}

#[test]
fn hand_written_documents_match_as_in_apcache() {
    let mapping = Mapping::from_json(&json!({"dynamic": "strict", "properties": {
        "id": {"type": "keyword"},
        "body": {"type": "text"},
        "title": {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 8}}},
        "tags": {"type": "keyword"},
        "home": {"type": "keyword"},
        "size": {"type": "long"},
        "score": {"type": "double"},
        "day": {"type": "date"},
        "ok": {"type": "boolean"},
        "meta": {"properties": {"lang": {"type": "keyword"}, "note": {"type": "text"}}}
    }}))
    .unwrap();
    let documents = [
        json!({"id": "a", "body": "the quick brown fox", "title": "Short", "tags": ["x", "y"],
               "home": "", "size": 10, "score": 1.5, "day": "2024-01-02", "ok": true,
               "meta": {"lang": "en", "note": "first note"}}),
        json!({"id": "b", "body": ["quick", "brown fox jumps"], "title": "A much longer title",
               "tags": [], "size": 20, "score": 2.5, "ok": false}),
        json!({"id": "c", "body": "fox fox and a brown quick fox", "title": "",
               "tags": ["y"], "home": "h", "size": "30", "meta": {"lang": "de"}}),
        json!({"id": "d", "body": "fox brown", "size": 40.7}),
        json!({"id": "e", "body": "", "tags": "z", "home": "h"}),
        json!({"id": "f", "body": "very very quick", "size": -5}),
        json!({"id": "g", "body": "very quick very", "title": ["one two", "three four"]}),
        // Refused by apcache, so skipped here too: a repeated id, an unknown field, a word
        // where a number is mapped, a metadata field, a sub-field named as a field.
        json!({"id": "a", "body": "duplicate quick"}),
        json!({"id": "h", "body": "quick", "unknown": 1}),
        json!({"id": "i", "body": "quick", "size": "many"}),
        json!({"id": "j", "body": "quick", "_source": {}}),
        json!({"id": "k", "body": "quick", "title.keyword": "x"}),
    ];
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("docs.jsonl");
    let mut out = std::fs::File::create(&file).unwrap();
    for document in &documents {
        writeln!(out, "{document}").unwrap();
    }
    writeln!(out, "not json").unwrap();
    drop(out);
    let (indexed, tantivy, reader) = build_both(&file, &mapping, work.path());
    assert_eq!(indexed, 7);
    assert_eq!(reader.max_doc(), 7);

    let sorted = |field: &str, descending: bool| vec![(field.to_owned(), descending)];
    // (query, sort, the count expected)
    let cases: Vec<(Value, Sort, u64)> = vec![
        (term("body", "quick"), vec![], 5),
        (term("body", "Quick"), vec![], 0),
        (term("tags", "y"), vec![], 2),
        (term("tags", "z"), vec![], 1),
        (term("home", ""), vec![], 1),
        (term("title.keyword", "Short"), vec![], 1),
        (term("title.keyword", "A much longer title"), vec![], 0),
        (term("meta.lang", "de"), vec![], 1),
        (term("meta.note", "note"), vec![], 1),
        (phrase(&["quick", "brown"], 0), vec![], 1),
        // "quick" and "brown" are two values of one array in "b": TEXT_GAP apart; "brown
        // quick" in "c" is within a slop of 2.
        (phrase(&["quick", "brown"], 2), vec![], 2),
        (phrase(&["brown", "quick"], 0), vec![], 1),
        (phrase(&["quick", "brown"], 1), vec![], 1),
        (phrase(&["brown", "fox"], 0), vec![], 2),
        // Reversed within the slop: "fox brown" in d, "brown ... fox" in others.
        (phrase(&["fox", "brown"], 2), vec![], 4),
        (phrase(&["fox", "fox"], 0), vec![], 1),
        (phrase(&["fox", "fox"], 1), vec![], 1),
        (phrase(&["very", "very"], 0), vec![], 1),
        (phrase(&["very", "very"], 1), vec![], 2),
        (phrase(&["quick", "quick"], 3), vec![], 0),
        (phrase(&["quick"], 0), vec![], 5),
        (
            json!({"phrase": {"field": "title", "terms": ["two", "three"], "slop": 3}}),
            vec![],
            0,
        ),
        (
            json!({"phrase": {"field": "title", "terms": ["three", "four"]}}),
            vec![],
            1,
        ),
        (
            json!({"range": {"field": "size", "gte": 10, "lte": 30}}),
            vec![],
            3,
        ),
        (json!({"range": {"field": "size", "gte": 20}}), vec![], 3),
        (json!({"range": {"field": "size", "lte": 9.5}}), vec![], 1),
        (json!({"range": {"field": "size", "gte": 10.5}}), vec![], 3),
        (json!({"range": {"field": "size"}}), vec![], 5),
        (
            json!({"range": {"field": "size", "gte": 50, "lte": 1}}),
            vec![],
            0,
        ),
        (json!({"range": {"field": "score", "gte": 2.0}}), vec![], 1),
        (json!({"exists": {"field": "home"}}), vec![], 3),
        (json!({"exists": {"field": "tags"}}), vec![], 3),
        (json!({"exists": {"field": "title"}}), vec![], 4),
        (json!({"exists": {"field": "title.keyword"}}), vec![], 3),
        (json!({"exists": {"field": "body"}}), vec![], 7),
        (json!({"exists": {"field": "size"}}), vec![], 5),
        (json!({"exists": {"field": "day"}}), vec![], 1),
        (json!({"exists": {"field": "ok"}}), vec![], 2),
        (json!({"exists": {"field": "meta.note"}}), vec![], 1),
        (json!({"all": {}}), vec![], 7),
        (
            json!({"bool": {"must_not": [term("body", "quick")]}}),
            vec![],
            0,
        ),
        (json!({"bool": {}}), vec![], 0),
        (
            json!({"bool": {"should": [term("body", "jumps"), term("tags", "z")]}}),
            vec![],
            2,
        ),
        (
            json!({"bool": {"must": [term("body", "fox")], "should": [term("body", "jumps")]}}),
            vec![],
            4,
        ),
        (
            json!({"bool": {"filter": [json!({"exists": {"field": "home"}})],
                            "should": [term("body", "jumps")],
                            "must_not": [term("home", "")]}}),
            vec![],
            2,
        ),
        (
            json!({"bool": {"should": [term("body", "fox"), term("body", "very")],
                            "must_not": [term("tags", "y")]}}),
            vec![],
            4,
        ),
        (
            json!({"dis_max": {"queries": [term("body", "jumps"), term("title", "one")],
                               "tie_breaker": 0.3}}),
            vec![],
            2,
        ),
        (
            json!({"boost": {"query": term("body", "fox"), "factor": 2.0}}),
            vec![],
            4,
        ),
        (term("body", "quick"), sorted("size", true), 5),
        (term("body", "quick"), sorted("size", false), 5),
        (term("body", "quick"), sorted("tags", false), 5),
        (json!({"all": {}}), sorted("title.keyword", true), 7),
        (json!({"all": {}}), sorted("score", true), 7),
    ];
    for (query, sort, expected) in &cases {
        let count = agree(&tantivy, &reader, &mapping, query, sort);
        assert_eq!(count, *expected, "{query}");
    }

    // What apcache refuses is refused here too.
    for query in [
        term("size", "10"),
        json!({"exists": {"field": "nothing"}}),
        json!({"wildcard": {}}),
        json!({"dis_max": {"queries": []}}),
        json!({"boost": {"query": {"all": {}}, "factor": -1.0}}),
    ] {
        assert!(document_queries::to_query(&query, &mapping).is_err());
        assert!(tantivy.search(&query, &[], 10, true).is_err(), "{query}");
    }
    let two_keys = [("size".to_owned(), true), ("tags".to_owned(), false)];
    assert!(tantivy
        .search(&json!({"all": {}}), &two_keys, 10, true)
        .is_err());
    assert!(tantivy
        .search(&json!({"all": {}}), &sorted("body", true), 10, true)
        .is_err());
}

/// The Debian documents of `docs/results/debian-mapping.json` (made by
/// `shared/scripts/debian-packages.sh`).
fn debian_documents() -> Option<PathBuf> {
    let path = PathBuf::from("/root/.cache/apcache-data/debian-packages.jsonl");
    path.is_file().then_some(path)
}

#[test]
fn debian_documents_match_as_in_apcache() {
    let Some(documents) = debian_documents() else {
        eprintln!("skipped: no /root/.cache/apcache-data/debian-packages.jsonl");
        return;
    };
    let mapping_file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results/debian-mapping.json");
    let mapping = Mapping::from_json(
        &serde_json::from_str(&std::fs::read_to_string(mapping_file).unwrap()).unwrap(),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (indexed, tantivy, reader) = build_both(&documents, &mapping, work.path());
    let built = started.elapsed();
    assert_eq!(indexed, reader.max_doc());
    let parsed: Vec<Value> = std::io::BufReader::new(std::fs::File::open(&documents).unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert_eq!(parsed.len() as u64, indexed + 4, "four ids repeat");
    let queries = document_queries::generate(&parsed, &Analyzer::default(), 45, 10);
    assert_eq!(queries.len(), 10 * document_queries::CLASSES.len());
    let (mut matched, mut empty) = (0u64, 0usize);
    for query in &queries {
        let count = agree(&tantivy, &reader, &mapping, &query.query, &query.sort);
        matched += count;
        empty += usize::from(count == 0);
    }
    eprintln!(
        "{indexed} documents indexed by both in {built:?}; {} queries ({empty} match \
         nothing), {matched} matches, all equal; {:?} in all",
        queries.len(),
        started.elapsed()
    );
    assert!(matched > 0 && empty < queries.len() / 10);
}
