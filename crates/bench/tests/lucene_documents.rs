//! apcache's results against Lucene 9.12's on real JSON documents: Debian's package index
//! (`../shared/scripts/debian-packages.sh`, about 63,000 packages) indexed by both under the
//! same mapping (each text field its own, with BM25 per field; keywords, longs, `_id`s), and
//! 600 queries generated from the documents with a fixed seed
//! ([`apcache_bench::document_queries`]): text on one field and on several (summed, and the best
//! field's with boosts and tie breakers), phrases, text with keyword filters, ranges,
//! existence and exclusions, filters alone, sorts by a number and by a keyword.
//!
//! Every query must have Lucene's exact count and its top 10: the same ids in the same order,
//! scores equal within 1e-5 relative (documents may trade places only where their scores are
//! that close), and, where sorting by fields, the same sort values. The queries are written
//! to `target/debian-queries.jsonl` for inspection.
//!
//! Lucene runs through `tools/lucene-peer` (built with Maven on first use; needs Java 17+).

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use apcache_bench::document_queries::{self, DocumentQuery, K};
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::schema::Mapping;
use apcache_index::search::{IndexReader, SearchOptions, Searcher, SortValue};
use serde_json::{json, Value};

const SEED: u64 = 45;
const PER_CLASS: usize = 60;
const TOLERANCE: f32 = 1e-5;

/// The Debian documents, made by the shared script on first use.
fn debian_documents() -> PathBuf {
    let script = common::repository().join("../shared/scripts/debian-packages.sh");
    let script = if script.exists() {
        script
    } else {
        PathBuf::from("/work/shared/scripts/debian-packages.sh")
    };
    let output = Command::new("bash")
        .arg(&script)
        .output()
        .expect("run debian-packages.sh");
    assert!(
        output.status.success(),
        "{}: {}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

fn mapping_file() -> PathBuf {
    common::repository().join("docs/results/debian-mapping.json")
}

/// A hit as compared: id, score (when scored), sort values as JSON.
#[derive(Debug, Clone, PartialEq)]
struct Hit {
    id: String,
    score: Option<f32>,
    sort: Vec<Value>,
}

#[derive(Debug)]
struct Answer {
    count: u64,
    hits: Vec<Hit>,
}

fn lucene_answers(jar: &Path, documents: &Path, queries: &Path, work: &Path) -> Vec<Answer> {
    let index = work.join("lucene");
    let java = |args: &[&std::ffi::OsStr]| {
        let output = Command::new("java")
            .arg("-jar")
            .arg(jar)
            .args(args)
            .output()
            .expect("run java");
        assert!(
            output.status.success(),
            "lucene-peer {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    java(&[
        "index-json".as_ref(),
        documents.as_os_str(),
        index.as_os_str(),
        mapping_file().as_os_str(),
        "--id-field".as_ref(),
        "id".as_ref(),
    ]);
    let out = java(&[
        "search-json".as_ref(),
        index.as_os_str(),
        mapping_file().as_os_str(),
        queries.as_os_str(),
    ]);
    out.lines()
        .map(|line| {
            let line = line.unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            assert!(v.get("error").is_none(), "Lucene failed a query: {line}");
            Answer {
                count: v["count"].as_u64().unwrap(),
                hits: v["hits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| Hit {
                        id: h["id"].as_str().unwrap().to_owned(),
                        score: h["score"].as_f64().map(|s| s as f32),
                        sort: h["sort"].as_array().cloned().unwrap_or_default(),
                    })
                    .collect(),
            }
        })
        .collect()
}

fn sort_json(value: &SortValue) -> Value {
    match value {
        SortValue::Missing => Value::Null,
        SortValue::Number(n) => json!(n),
        SortValue::Keyword(k) => json!(k),
        SortValue::Score(s) => json!(s),
        SortValue::Doc(d) => json!(d),
    }
}

fn apcache_answer(reader: &IndexReader, mapping: &Mapping, query: &DocumentQuery) -> Answer {
    let parsed = document_queries::to_query(&query.query, mapping).unwrap();
    let searcher = Searcher::new(reader);
    let id = |doc: u32| reader.document_id(doc).unwrap();
    if query.sort.is_empty() {
        let options = SearchOptions {
            k: K,
            count: true,
            ..SearchOptions::default()
        };
        let result = searcher.search(&parsed, &options).unwrap();
        Answer {
            count: result.total_hits,
            hits: result
                .hits
                .iter()
                .map(|h| Hit {
                    id: id(h.doc),
                    score: Some(h.score),
                    sort: Vec::new(),
                })
                .collect(),
        }
    } else {
        let keys = query.sort_keys(mapping).unwrap();
        let result = searcher.search_sorted(&parsed, &keys, K, None).unwrap();
        Answer {
            count: result.total_hits,
            hits: result
                .hits
                .iter()
                .map(|h| Hit {
                    id: id(h.doc),
                    score: None,
                    sort: h.values.iter().map(sort_json).collect(),
                })
                .collect(),
        }
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1e-9)
}

/// Whether `ours` is `theirs` up to swaps between near-equal scores (the sort values and
/// ids must be equal in order where sorting by fields).
fn agrees(ours: &Answer, theirs: &Answer) -> Result<(), String> {
    if ours.count != theirs.count {
        return Err(format!(
            "count {} against Lucene's {}",
            ours.count, theirs.count
        ));
    }
    if ours.hits.len() != theirs.hits.len() {
        return Err(format!(
            "{} hits against Lucene's {}",
            ours.hits.len(),
            theirs.hits.len()
        ));
    }
    for (i, (a, b)) in ours.hits.iter().zip(&theirs.hits).enumerate() {
        if a.sort != b.sort {
            return Err(format!(
                "hit {i}: sort values {:?} against {:?}",
                a.sort, b.sort
            ));
        }
        match (a.score, b.score) {
            (Some(x), Some(y)) if !close(x, y) => {
                return Err(format!("hit {i}: score {x} against Lucene's {y}"))
            }
            _ => {}
        }
        if a.id != b.id {
            // A swap is allowed only between documents whose scores are equal to the tolerance
            // (unsorted results), both of which appear in both lists.
            let swapped = a.score.is_some()
                && theirs.hits.iter().any(|h| {
                    h.id == a.id && h.score.zip(a.score).is_some_and(|(x, y)| close(x, y))
                })
                && ours.hits.iter().any(|h| h.id == b.id);
            if !swapped {
                return Err(format!("hit {i}: {} against Lucene's {}", a.id, b.id));
            }
        }
    }
    Ok(())
}

#[test]
fn debian_documents_agree_with_lucene() {
    let documents = debian_documents();
    let work = tempfile::tempdir().unwrap();
    let mapping = Mapping::from_json(
        &serde_json::from_str(&std::fs::read_to_string(mapping_file()).unwrap()).unwrap(),
    )
    .unwrap();
    let index = work.path().join("apcache");
    let options = IndexOptions {
        mapping: Some(mapping.clone()),
        id_field: Some("id".into()),
        ..IndexOptions::default()
    };
    build_index(
        vec![Input::Path(documents.clone())],
        &index,
        &options,
        |_, _| {},
    )
    .unwrap();
    let reader = IndexReader::open(&index).unwrap();
    let parsed: Vec<Value> = std::io::BufReader::new(std::fs::File::open(&documents).unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let queries = document_queries::generate(&parsed, &reader.analyzer(), SEED, PER_CLASS);
    assert_eq!(queries.len(), 600);
    let file = common::repository().join("target/debian-queries.jsonl");
    let mut out = std::fs::File::create(&file).unwrap();
    for query in &queries {
        writeln!(out, "{}", query.to_line()).unwrap();
    }
    drop(out);
    let lucene = lucene_answers(&common::lucene_peer(), &documents, &file, work.path());
    assert_eq!(lucene.len(), queries.len());
    let mut failures: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut matched = 0u64;
    let (mut scores, mut bit_equal, mut empty) = (0usize, 0usize, 0usize);
    for (query, theirs) in queries.iter().zip(&lucene) {
        let ours = apcache_answer(&reader, reader.mapping(), query);
        matched += ours.count;
        empty += usize::from(ours.count == 0);
        for (a, b) in ours.hits.iter().zip(&theirs.hits) {
            if let (Some(x), Some(y)) = (a.score, b.score) {
                scores += 1;
                bit_equal += usize::from(x.to_bits() == y.to_bits());
            }
        }
        if let Err(why) = agrees(&ours, theirs) {
            failures
                .entry(query.class)
                .or_default()
                .push(format!("{}: {why}", query.to_line()));
        }
    }
    eprintln!(
        "{} queries ({empty} match nothing), {matched} matches; {scores} scores compared, \
         {bit_equal} equal to the bit",
        queries.len()
    );
    assert!(
        matched > 0 && empty < queries.len() / 10,
        "the queries match too little"
    );
    let report: Vec<String> = failures
        .iter()
        .map(|(class, f)| format!("{class}: {} disagree, first: {}", f.len(), f[0]))
        .collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
}
