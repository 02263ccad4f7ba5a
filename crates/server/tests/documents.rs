//! The server over real HTTP on an index of JSON documents under a mapping (keyword, long,
//! double, date, boolean, two text fields, an object; own `_id`s): the mapping, documents by
//! id, `_source` filtering, every query of the DSL against what the documents say, filters
//! that add nothing to a score, sorts with their values and missing documents, `search_after`
//! paging through every match once, the native API's field syntax and sort, and the 400s that
//! name what apcache does not do.

mod common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::schema::Mapping;
use apcache_server::metrics::Metrics;
use apcache_server::{AppState, Catalog, QueryLimits, ServedIndex, ServerConfig};
use apcache_tier::serving::{LiveConfig, LiveService};
use apcache_tier::stack::{ServingConfig, ServingStack};
use serde_json::{json, Value};

fn mapping_json() -> Value {
    json!({"dynamic": "strict", "properties": {
        "title": {"type": "text"},
        "summary": {"type": "text"},
        "section": {"type": "keyword"},
        "size": {"type": "long"},
        "price": {"type": "double"},
        "day": {"type": "date"},
        "free": {"type": "boolean"},
        "author": {"properties": {"name": {"type": "keyword"}, "age": {"type": "integer"}}}
    }})
}

/// The documents, `d0` to `d7` in input order. Sizes differ (one is missing), so the size
/// order has no ties; prices tie three times.
fn documents() -> Vec<Value> {
    vec![
        json!({"_id": "d0", "title": "Rust river guide", "summary": "a guide to the river", "section": "books", "size": 10, "price": 1.5, "day": "2024-01-02", "free": true, "author": {"name": "ann", "age": 30}}),
        json!({"_id": "d1", "title": "River valley", "summary": "valley walks along the river", "section": "maps", "size": 3, "price": 0.25, "day": "2024-01-05", "free": false}),
        json!({"_id": "d2", "title": "Mountain lake", "summary": "lakes and mountains", "section": "books", "size": 7, "day": "2023-12-31", "free": true, "author": {"name": "bob"}}),
        json!({"_id": "d3", "title": "City river", "summary": "the river in the city", "section": "news", "price": -2.0, "free": false}),
        json!({"_id": "d4", "title": "Desert", "summary": "dry sand", "size": 11, "price": 1.5, "day": "2024-02-01"}),
        json!({"_id": "d5", "title": "River delta", "summary": "the delta of a river river", "section": "maps", "size": 1, "price": 99.0, "day": "2024-01-02", "free": true}),
        json!({"_id": "d6", "title": "Forest", "summary": "trees", "section": "books", "size": 25, "price": 3.0, "day": 1_704_067_200_000i64, "free": false, "author": {"name": "cy", "age": 41}}),
        json!({"_id": "d7", "title": "Ocean river", "summary": "where the river meets the sea", "section": "news", "size": -4, "price": 1.5, "day": "2024-03-10"}),
    ]
}

/// A server on a free port over a fresh index of [`documents`] named `docs`, built in
/// several segments; it lives until the test ends.
struct TestServer {
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

fn start() -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("docs.jsonl");
    let lines: Vec<String> = documents().iter().map(Value::to_string).collect();
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let index = dir.path().join("docs");
    let options = IndexOptions {
        mapping: Some(Mapping::from_json(&mapping_json()).unwrap()),
        merge: false,
        batch_docs: 3,
        threads: 2,
        ..IndexOptions::default()
    };
    build_index(vec![Input::Path(input)], &index, &options, |_, _| {}).unwrap();
    let stack = ServingStack::assemble(&index, &ServingConfig::default(), |_| {}).unwrap();
    let service = LiveService::start(
        Arc::new(stack),
        LiveConfig {
            threads: 2,
            queue_depth: 16,
        },
    )
    .unwrap();
    let mut catalog = Catalog::new();
    assert!(catalog.insert(ServedIndex::new("docs".into(), service).unwrap()));
    let state = Arc::new(AppState {
        catalog,
        config: ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            threads: 2,
            queue_depth: 16,
            timeout: Duration::from_secs(10),
            limits: QueryLimits::default(),
        },
        metrics: Metrics::new(),
    });
    TestServer {
        addr: common::serve_in_background(state),
        _dir: dir,
    }
}

/// Status and JSON body of a request.
fn send(addr: SocketAddr, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let json = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    (status, json)
}

fn get(addr: SocketAddr, path: &str) -> (u16, Value) {
    send(addr, "GET", path, &Value::Null)
}

/// A `_search` that must succeed.
fn search(addr: SocketAddr, body: Value) -> Value {
    let (status, json) = send(addr, "POST", "/docs/_search", &body);
    assert_eq!(status, 200, "{body}: {json}");
    json
}

/// A `_search` that must fail with 400; its error.
fn refused(addr: SocketAddr, body: Value) -> Value {
    let (status, json) = send(addr, "POST", "/docs/_search", &body);
    assert_eq!(status, 400, "{body}: {json}");
    json["error"].clone()
}

fn ids(response: &Value) -> Vec<String> {
    response["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_id"].as_str().unwrap().to_owned())
        .collect()
}

fn id_set(response: &Value) -> BTreeSet<String> {
    ids(response).into_iter().collect()
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

fn scores(response: &Value) -> Vec<Value> {
    response["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_score"].clone())
        .collect()
}

fn sort_values(response: &Value) -> Vec<Value> {
    response["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["sort"].clone())
        .collect()
}

#[test]
fn mapping_documents_by_id_and_source_filtering() {
    let server = start();
    let addr = server.addr;
    let expected = Mapping::from_json(&mapping_json()).unwrap().to_json();

    let (status, mapping) = get(addr, "/docs/_mapping");
    assert_eq!(status, 200, "{mapping}");
    assert_eq!(mapping, json!({"docs": {"mappings": expected}}));
    let (_, described) = get(addr, "/indexes/docs");
    assert_eq!(described["mapping"], expected);
    assert_eq!(described["docs"], 8);

    let mut d2 = documents()[2].clone();
    d2.as_object_mut().unwrap().remove("_id");
    let (status, doc) = get(addr, "/docs/_doc/d2");
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["found"], true);
    assert_eq!(doc["_id"], "d2");
    assert_eq!(doc["_source"], d2);
    let (status, doc) = get(addr, "/docs/_doc/nope");
    assert_eq!((status, doc["found"].clone()), (404, json!(false)));
    let (status, doc) = get(addr, "/docs/_doc/2");
    assert_eq!(
        status, 404,
        "numbers are not ids in an index with ids: {doc}"
    );
    let (status, native) = get(addr, "/indexes/docs/docs/d2");
    assert_eq!(status, 200, "{native}");
    assert_eq!(native["_id"], "d2");
    assert_eq!(native["title"], "Mountain lake");
    assert_eq!(native["source"], d2);
    assert_eq!(get(addr, "/indexes/docs/docs/nope").0, 404);

    let (_, doc) = get(addr, "/docs/_doc/d0?_source_includes=author.name,size");
    assert_eq!(
        doc["_source"],
        json!({"size": 10, "author": {"name": "ann"}})
    );
    let (_, doc) = get(addr, "/docs/_doc/d0?_source=false");
    assert!(doc.get("_source").is_none(), "{doc}");

    let query = json!({"ids": {"values": ["d0"]}});
    let only = |source: Value| {
        let response = search(addr, json!({"query": query, "_source": source}));
        response["hits"]["hits"][0].get("_source").cloned()
    };
    assert_eq!(
        only(json!(["author.*"])),
        Some(json!({"author": {"name": "ann", "age": 30}}))
    );
    assert_eq!(
        only(json!({"includes": ["title", "author"], "excludes": ["author.age"]})),
        Some(json!({"title": "Rust river guide", "author": {"name": "ann"}}))
    );
    assert_eq!(only(json!("section")), Some(json!({"section": "books"})));
    assert_eq!(only(json!(false)), None);
    let mut d0 = documents()[0].clone();
    d0.as_object_mut().unwrap().remove("_id");
    assert_eq!(only(json!(true)), Some(d0));
}

#[test]
fn every_dsl_query_matches_what_the_documents_say() {
    let server = start();
    let addr = server.addr;
    let all = set(&["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"]);
    let cases: Vec<(Value, BTreeSet<String>)> = vec![
        (json!({"match_all": {}}), all.clone()),
        (json!({"match_none": {}}), set(&[])),
        (json!({"bool": {}}), all.clone()),
        (
            json!({"bool": {"filter": {"term": {"section": "books"}}}}),
            set(&["d0", "d2", "d6"]),
        ),
        (
            json!({"bool": {"filter": [{"term": {"section": {"value": "maps"}}}]}}),
            set(&["d1", "d5"]),
        ),
        (
            json!({"constant_score": {"filter": {"term": {"author.name": "cy"}}}}),
            set(&["d6"]),
        ),
        (
            json!({"terms": {"section": ["maps", "news"]}}),
            set(&["d1", "d3", "d5", "d7"]),
        ),
        (json!({"terms": {"size": [3, 25, 99]}}), set(&["d1", "d6"])),
        (
            json!({"range": {"size": {"gte": 7, "lt": 25}}}),
            set(&["d0", "d2", "d4"]),
        ),
        (json!({"range": {"price": {"gt": 1.5}}}), set(&["d5", "d6"])),
        (
            json!({"range": {"day": {"gte": "2024-01-02", "lte": "2024-01-05"}}}),
            set(&["d0", "d1", "d5"]),
        ),
        (
            json!({"range": {"day": {"lt": 1_704_067_200_001i64}}}),
            set(&["d2", "d6"]),
        ),
        (
            json!({"range": {"section": {"gte": "m", "lt": "n"}}}),
            set(&["d1", "d5"]),
        ),
        (json!({"exists": {"field": "price"}}), &all - &set(&["d2"])),
        (
            json!({"exists": {"field": "author"}}),
            set(&["d0", "d2", "d6"]),
        ),
        (
            json!({"exists": {"field": "author.age"}}),
            set(&["d0", "d6"]),
        ),
        (
            json!({"ids": {"values": ["d1", "d7", "nope"]}}),
            set(&["d1", "d7"]),
        ),
        (json!({"term": {"size": 10}}), set(&["d0"])),
        (json!({"term": {"day": "2024-01-02"}}), set(&["d0", "d5"])),
        (json!({"term": {"_id": "d3"}}), set(&["d3"])),
        (
            json!({"bool": {"filter": {"term": {"free": true}}}}),
            set(&["d0", "d2", "d5"]),
        ),
        (
            json!({"bool": {"must_not": {"term": {"section": "books"}}}}),
            set(&["d1", "d3", "d4", "d5", "d7"]),
        ),
        (
            json!({"bool": {"should": [{"range": {"size": {"gte": 10}}}, {"range": {"price": {"gte": 1.5}}}], "minimum_should_match": 2}}),
            set(&["d0", "d4", "d6"]),
        ),
        (
            json!({"bool": {"must": {"query_string": {"query": "river"}}, "should": [{"range": {"size": {"gte": 10}}}, {"range": {"price": {"gte": 50}}}], "minimum_should_match": 1}}),
            set(&["d0", "d5"]),
        ),
        (
            json!({"query_string": {"query": "river AND section:maps"}}),
            set(&["d1", "d5"]),
        ),
        (
            json!({"query_string": {"query": "size:[10 TO *] OR free:false", "default_field": "*"}}),
            set(&["d0", "d1", "d3", "d4", "d6"]),
        ),
        (
            json!({"query_string": {"query": "river -_exists_:size"}}),
            set(&["d3"]),
        ),
        (json!({"match": {"section": "news"}}), set(&["d3", "d7"])),
        (json!({"match": {"size": "25"}}), set(&["d6"])),
    ];
    for (query, expected) in &cases {
        // `_count` reads every query as a filter; the search reads it where the score
        // counts, except the keyword terms, which only filter.
        let (status, counted) = send(addr, "POST", "/docs/_count", &json!({"query": query}));
        assert_eq!(status, 200, "{query}: {counted}");
        assert_eq!(counted["count"], expected.len(), "{query}");
        let scoring_ok = !query.to_string().contains("\"match\":{\"section\"");
        let body = if scoring_ok {
            json!({"query": query, "size": 20, "track_total_hits": true})
        } else {
            json!({"query": {"bool": {"filter": query}}, "size": 20, "track_total_hits": true})
        };
        let response = search(addr, body);
        assert_eq!(&id_set(&response), expected, "{query}: {response}");
        assert_eq!(
            response["hits"]["total"]["value"],
            expected.len(),
            "{query}"
        );
    }

    // Constant scores are exactly 1, as Elasticsearch's are; filters and must_not score 0.
    for (query, score) in [
        (json!({"match_all": {}}), 1.0),
        (
            json!({"constant_score": {"filter": {"term": {"section": "maps"}}}}),
            1.0,
        ),
        (json!({"terms": {"section": ["maps", "news"]}}), 1.0),
        (json!({"exists": {"field": "author"}}), 1.0),
        (json!({"ids": {"values": ["d1", "d7"]}}), 1.0),
        (json!({"term": {"_id": "d3"}}), 1.0),
        (json!({"range": {"size": {"gte": 7}}}), 1.0),
        (json!({"term": {"size": 10}}), 1.0),
        (json!({"bool": {}}), 1.0),
        (
            json!({"bool": {"filter": {"term": {"section": "books"}}}}),
            0.0,
        ),
        (
            json!({"bool": {"must_not": {"term": {"section": "books"}}}}),
            0.0,
        ),
        (
            json!({"bool": {"should": [{"range": {"size": {"gte": 10}}}, {"range": {"price": {"gte": 1.5}}}], "minimum_should_match": "100%"}}),
            2.0,
        ),
    ] {
        let response = search(addr, json!({"query": query, "size": 20}));
        let got = scores(&response);
        assert!(!got.is_empty(), "{query}");
        assert!(got.iter().all(|s| *s == json!(score)), "{query}: {got:?}");
        assert_eq!(response["hits"]["max_score"], json!(score), "{query}");
    }
}

/// A filter beside a text query leaves the text's scores as they are.
/// The scores of a response by id.
fn score_map(response: &Value) -> std::collections::BTreeMap<String, f64> {
    response["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["_id"].as_str().unwrap().to_owned(),
                h["_score"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn text_fields_are_searched_and_scored_one_by_one_and_combined() {
    let server = start();
    let addr = server.addr;
    let all = |query: Value| search(addr, json!({"query": query, "size": 20}));
    // Each field alone.
    let title = all(json!({"match": {"title": "river"}}));
    assert_eq!(id_set(&title), set(&["d0", "d1", "d3", "d5", "d7"]));
    let summary = all(json!({"match": {"summary": "river"}}));
    assert_eq!(id_set(&summary), set(&["d0", "d1", "d3", "d5", "d7"]));
    let (title, summary) = (score_map(&title), score_map(&summary));
    // A field's own statistics: the same word scores differently in the two fields.
    assert!(title.iter().any(|(id, s)| !close(*s, summary[id])));
    // best_fields: the best field's score, plus the tie breaker times the other.
    for (tie, kind) in [
        (0.0, "best_fields"),
        (0.3, "best_fields"),
        (1.0, "most_fields"),
    ] {
        let combined = score_map(&all(json!({"multi_match": {
            "query": "river", "fields": ["title", "summary"], "type": kind, "tie_breaker": tie
        }})));
        for (id, score) in &combined {
            let (a, b) = (title[id], summary[id]);
            let want = a.max(b) + tie * a.min(b);
            assert!(
                close(*score, want),
                "{kind} {tie} {id}: {score} against {want}"
            );
        }
    }
    // A field's boost multiplies its score.
    let boosted = score_map(&all(json!({"multi_match": {
        "query": "river", "fields": ["title^3", "summary"], "type": "most_fields"
    }})));
    for (id, score) in &boosted {
        assert!(close(*score, 3.0 * title[id] + summary[id]), "{id}");
    }
    let doubled = score_map(&all(
        json!({"match": {"title": {"query": "river", "boost": 2}}}),
    ));
    for (id, score) in &doubled {
        assert!(close(*score, 2.0 * title[id]), "{id}");
    }
    // dis_max of the two matches is best_fields.
    let dis_max = score_map(&all(json!({"dis_max": {"queries": [
        {"match": {"title": "river"}}, {"match": {"summary": "river"}}
    ]}})));
    for (id, score) in &dis_max {
        assert!(close(*score, title[id].max(summary[id])), "{id}");
    }
    // Phrases stay in their field; slop lets words move.
    assert_eq!(
        id_set(&all(json!({"match_phrase": {"summary": "the river"}}))),
        set(&["d0", "d1", "d3", "d7"])
    );
    assert_eq!(
        id_set(&all(json!({"match_phrase": {"title": "the river"}}))),
        set(&[])
    );
    assert_eq!(
        id_set(&all(
            json!({"match_phrase": {"summary": {"query": "river city", "slop": 3}}})
        )),
        set(&["d3"])
    );
    // match with AND, and minimum_should_match of all words.
    assert_eq!(
        id_set(&all(
            json!({"match": {"title": {"query": "river valley", "operator": "and"}}})
        )),
        set(&["d1"])
    );
    assert_eq!(
        id_set(&all(
            json!({"match": {"title": {"query": "river valley", "minimum_should_match": "100%"}}})
        )),
        set(&["d1"])
    );
    // query_string: fields with boosts, default_field, and field clauses on text fields.
    assert_eq!(
        id_set(&all(
            json!({"query_string": {"query": "valley", "default_field": "summary"}})
        )),
        set(&["d1"])
    );
    assert_eq!(
        id_set(&all(
            json!({"query_string": {"query": "title:guide OR summary:sand"}})
        )),
        set(&["d0", "d4"])
    );
    let fielded = score_map(&all(json!({"query_string": {
        "query": "river", "fields": ["title^3", "summary"]
    }})));
    for (id, score) in &fielded {
        assert!(close(*score, (3.0 * title[id]).max(summary[id])), "{id}");
    }
    // Words without a field search every text field: "sand" is only in a summary.
    assert_eq!(
        id_set(&all(json!({"query_string": {"query": "sand desert"}}))),
        set(&["d4"])
    );
    // prefix on a keyword: values starting with it, each scoring 1 (times its boost).
    let prefixed = all(json!({"prefix": {"section": "boo"}}));
    assert_eq!(id_set(&prefixed), set(&["d0", "d2", "d6"]));
    assert!(score_map(&prefixed).values().all(|s| *s == 1.0));
    let boosted_prefix = all(json!({"prefix": {"section": {"value": "n", "boost": 3}}}));
    assert_eq!(id_set(&boosted_prefix), set(&["d3", "d7"]));
    assert!(score_map(&boosted_prefix).values().all(|s| *s == 3.0));
    // term on a text field is the word as indexed.
    assert_eq!(
        id_set(&all(json!({"term": {"title": "lake"}}))),
        set(&["d2"])
    );
}

#[test]
fn filters_add_nothing_to_the_score() {
    let server = start();
    let addr = server.addr;
    let text = json!({"query_string": {"query": "river"}});
    let alone = search(addr, json!({"query": text, "size": 20}));
    let filtered = search(
        addr,
        json!({"query": {"bool": {"must": text, "filter": [{"term": {"section": "maps"}}, {"range": {"price": {"gte": 0}}}]}}, "size": 20}),
    );
    assert_eq!(id_set(&filtered), set(&["d1", "d5"]), "{filtered}");
    let score_of = |response: &Value, id: &str| -> Value {
        response["hits"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["_id"] == id)
            .map(|h| h["_score"].clone())
            .unwrap()
    };
    for id in ["d1", "d5"] {
        assert_eq!(score_of(&filtered, id), score_of(&alone, id), "{id}");
    }
    // Field clauses of the query language filter too.
    let written = search(
        addr,
        json!({"query": {"query_string": {"query": "river AND section:maps"}}}),
    );
    for id in ["d1", "d5"] {
        assert_eq!(score_of(&written, id), score_of(&alone, id), "{id}");
    }
    // The native API reads the same field syntax, and its hits carry `_id` and `source`. Its
    // words without a field search every text field as Lucene's multi-field parser does (the
    // fields' scores added), where Elasticsearch's query_string takes the best field's.
    let (status, native_alone) = get(addr, "/indexes/docs/search?q=river&k=20");
    assert_eq!(status, 200, "{native_alone}");
    let native_score = |id: &str| -> Value {
        native_alone["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["_id"] == id)
            .map(|h| h["score"].clone())
            .unwrap()
    };
    let (status, native) = get(
        addr,
        "/indexes/docs/search?q=river%20AND%20section:maps&count=true",
    );
    assert_eq!(status, 200, "{native}");
    assert_eq!(native["total"]["value"], 2);
    let hits = native["hits"].as_array().unwrap();
    for hit in hits {
        let id = hit["_id"].as_str().unwrap();
        assert_eq!(hit["id"], id);
        assert_eq!(hit["source"]["section"], "maps");
        assert_eq!(hit["score"], native_score(id));
    }
}

#[test]
fn sorts_show_elasticsearch_values_and_place_missing_documents() {
    let server = start();
    let addr = server.addr;
    let sorted = |sort: Value| {
        search(
            addr,
            json!({"query": {"match_all": {}}, "sort": sort, "size": 20}),
        )
    };

    let ascending = sorted(json!(["size"]));
    assert_eq!(
        ids(&ascending),
        ["d7", "d5", "d1", "d2", "d0", "d4", "d6", "d3"]
    );
    let values = sort_values(&ascending);
    assert_eq!(values[0], json!([-4]));
    assert_eq!(values[7], json!([i64::MAX]), "missing, last ascending");
    assert_eq!(
        ascending["hits"]["total"],
        json!({"value": 8, "relation": "eq"})
    );
    assert_eq!(ascending["hits"]["max_score"], Value::Null);
    assert!(scores(&ascending).iter().all(Value::is_null));

    let descending = sorted(json!([{"size": "desc"}]));
    assert_eq!(
        ids(&descending),
        ["d6", "d4", "d0", "d2", "d1", "d5", "d7", "d3"]
    );
    assert_eq!(
        sort_values(&descending)[7],
        json!([i64::MIN]),
        "missing, last descending"
    );
    let first = sorted(json!([{"size": {"order": "asc", "missing": "_first"}}]));
    assert_eq!(ids(&first)[0], "d3");
    assert_eq!(sort_values(&first)[0], json!([i64::MIN]));
    let first_desc = sorted(json!([{"size": {"order": "desc", "missing": "_first"}}]));
    assert_eq!(ids(&first_desc)[..2], ["d3", "d6"]);
    assert_eq!(sort_values(&first_desc)[0], json!([i64::MAX]));

    // Doubles as numbers, a missing one as Elasticsearch's infinity; ties in input order.
    let prices = sorted(json!([{"price": "desc"}, "_doc"]));
    assert_eq!(
        ids(&prices),
        ["d5", "d6", "d0", "d4", "d7", "d1", "d3", "d2"]
    );
    let values = sort_values(&prices);
    assert_eq!(values[0][0], json!(99.0));
    assert_eq!(values[5][0], json!(0.25));
    assert_eq!(values[7][0], json!("-Infinity"));

    // Keywords as strings, missing as null; dates as epoch milliseconds; booleans as 0 and 1.
    let sections = sorted(json!(["section", {"size": "desc"}]));
    assert_eq!(
        ids(&sections),
        ["d6", "d0", "d2", "d1", "d5", "d7", "d3", "d4"]
    );
    assert_eq!(sort_values(&sections)[0], json!(["books", 25]));
    assert_eq!(sort_values(&sections)[7], json!([null, 11]));
    let days = sorted(json!([{"day": "asc"}, {"size": "asc"}]));
    assert_eq!(ids(&days)[..3], ["d2", "d6", "d5"]);
    assert_eq!(sort_values(&days)[1], json!([1_704_067_200_000i64, 25]));
    let free = sorted(json!([{"free": "desc"}, "size"]));
    assert_eq!(sort_values(&free)[0], json!([1, 1]));
    assert_eq!(ids(&free)[..3], ["d5", "d2", "d0"]);
    assert_eq!(sort_values(&free)[3], json!([0, 3]));

    // A query's matches only, from/size in sort order, and the score as a key.
    let page = search(
        addr,
        json!({"query": {"query_string": {"query": "river"}}, "sort": ["size"], "from": 1, "size": 2}),
    );
    assert_eq!(ids(&page), ["d5", "d1"]);
    assert_eq!(page["hits"]["total"]["value"], 5);
    let by_score = search(
        addr,
        json!({"query": {"query_string": {"query": "river"}}, "sort": ["_score", "size"]}),
    );
    let relevance = search(addr, json!({"query": {"query_string": {"query": "river"}}}));
    let first_score = &sort_values(&by_score)[0][0];
    assert_eq!(
        first_score.as_f64(),
        relevance["hits"]["max_score"].as_f64()
    );

    // The native API's sort, in the CLI's form.
    let (status, native) = get(addr, "/indexes/docs/search?q=river&sort=size:desc&k=3");
    assert_eq!(status, 200, "{native}");
    let order: Vec<&str> = native["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_id"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["d0", "d1", "d5"]);
    assert_eq!(native["hits"][0]["sort"], json!([10]));
    assert_eq!(native["hits"][0]["score"], Value::Null);
    assert_eq!(native["total"], json!({"value": 5, "exact": true}));
}

#[test]
fn search_after_pages_through_every_match_exactly_once() {
    let server = start();
    let addr = server.addr;
    for (query, sort) in [
        (json!({"match_all": {}}), json!([{"price": "asc"}, "_doc"])),
        (
            json!({"match_all": {}}),
            json!([{"section": {"order": "desc", "missing": "_first"}}, {"price": "desc"}, "_doc"]),
        ),
        (
            json!({"bool": {"filter": {"range": {"size": {"gte": 0}}}}}),
            json!([{"day": "desc"}, "_doc"]),
        ),
        (
            json!({"query_string": {"query": "river"}}),
            json!(["_score", "_doc"]),
        ),
    ] {
        let whole = search(addr, json!({"query": query, "sort": sort, "size": 20}));
        let expected = ids(&whole);
        let total = whole["hits"]["total"]["value"].clone();
        assert!(!expected.is_empty(), "{query}");
        let mut paged = Vec::new();
        let mut after: Option<Value> = None;
        for _ in 0..10 {
            let mut body = json!({"query": query, "sort": sort, "size": 3});
            if let Some(after) = &after {
                body["search_after"] = after.clone();
            }
            let page = search(addr, body);
            assert_eq!(
                page["hits"]["total"]["value"], total,
                "every match counts on every page"
            );
            let hits = page["hits"]["hits"].as_array().unwrap();
            if hits.is_empty() {
                break;
            }
            paged.extend(ids(&page));
            after = Some(hits.last().unwrap()["sort"].clone());
        }
        assert_eq!(paged, expected, "{query} {sort}");
    }
}

#[test]
fn what_apcache_does_not_do_is_refused_by_name() {
    let server = start();
    let addr = server.addr;
    for (body, kind, named) in [
        (
            json!({"query": {"match_all": {}}, "aggs": {}}),
            "parsing_exception",
            "[aggs]",
        ),
        (
            json!({"query": {"fuzzy": {"title": "rivr"}}}),
            "parsing_exception",
            "unknown query [fuzzy]",
        ),
        (
            json!({"query": {"term": {"section": {"value": "maps", "fuzz": 1}}}}),
            "parsing_exception",
            "[fuzz]",
        ),
        (
            json!({"query": {"bool": {"must": {"match_all": {}}, "shoud": []}}}),
            "parsing_exception",
            "[shoud]",
        ),
        (
            json!({"query": {"term": {"section": "maps"}}}),
            "illegal_argument_exception",
            "bool.filter",
        ),
        (
            json!({"query": {"bool": {"must": {"term": {"free": true}}}}}),
            "illegal_argument_exception",
            "constant_score",
        ),
        (
            json!({"sort": ["title"]}),
            "illegal_argument_exception",
            "Text fields are not optimised",
        ),
        (
            json!({"query": {"multi_match": {"query": "river", "fields": ["ti*"]}}}),
            "illegal_argument_exception",
            "patterns",
        ),
        (
            json!({"query": {"multi_match": {"query": "river", "type": "cross_fields"}}}),
            "illegal_argument_exception",
            "cross_fields",
        ),
        (
            json!({"query": {"match": {"summary": {"query": "river", "fuzziness": 1}}}}),
            "parsing_exception",
            "[fuzziness]",
        ),
        (
            json!({"query": {"prefix": {"summary": "riv"}}}),
            "illegal_argument_exception",
            "[summary] is text",
        ),
        (
            json!({"query": {"prefix": {"size": "1"}}}),
            "illegal_argument_exception",
            "not a keyword field",
        ),
        (
            json!({"query": {"match_phrase": {"section": "maps"}}}),
            "illegal_argument_exception",
            "not a text field",
        ),
        (
            json!({"query": {"match_all": {"boost": -1}}}),
            "parsing_exception",
            "boost",
        ),
        (
            json!({"sort": ["colour"]}),
            "illegal_argument_exception",
            "No mapping found for [colour]",
        ),
        (
            json!({"query": {"range": {"day": {"gte": "now-1d"}}}}),
            "illegal_argument_exception",
            "date math",
        ),
        (
            json!({"query": {"range": {"day": {"gte": "2024-01-01", "format": "yyyy"}}}}),
            "parsing_exception",
            "[format]",
        ),
        (
            json!({"query": {"bool": {"filter": {"term": {"colour": "red"}}}}}),
            "illegal_argument_exception",
            "unknown field [colour]",
        ),
        (
            json!({"query": {"range": {"size": {"gte": "big"}}}}),
            "illegal_argument_exception",
            "not a number",
        ),
        (
            json!({"query": {"bool": {"should": [{"match_all": {}}, {"match_all": {}}, {"match_all": {}}], "minimum_should_match": 2}}}),
            "illegal_argument_exception",
            "minimum_should_match",
        ),
        (
            json!({"query": {"match_all": {}}, "search_after": [1]}),
            "illegal_argument_exception",
            "search_after needs a sort",
        ),
        (
            json!({"sort": ["size"], "search_after": [1, 2]}),
            "illegal_argument_exception",
            "search_after",
        ),
        (
            json!({"sort": [{"size": {"missing": 0}}]}),
            "parsing_exception",
            "missing",
        ),
        (
            json!({"query": {"ids": {"values": ["d1"], "_name": "x"}}}),
            "parsing_exception",
            "_name",
        ),
    ] {
        let error = refused(addr, body.clone());
        assert_eq!(error["type"], kind, "{body}: {error}");
        let reason = error["reason"].as_str().unwrap();
        assert!(reason.contains(named), "{body}: {reason}");
    }
    // In a filter context the same clauses run.
    let ok = search(
        addr,
        json!({"query": {"constant_score": {"filter": {"term": {"free": true}}}}}),
    );
    assert_eq!(id_set(&ok), set(&["d0", "d2", "d5"]));
    let (status, error) = send(
        addr,
        "POST",
        "/docs/_count",
        &json!({"query": {"match_all": {}}, "size": 1}),
    );
    assert_eq!(status, 400, "{error}");
    let (status, error) = get(addr, "/indexes/docs/search?q=river&sort=summary");
    assert_eq!(status, 400, "{error}");
}
