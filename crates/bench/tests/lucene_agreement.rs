//! apcache's results against Lucene 9.12's on real data: the first 20,000 documents of
//! `../shared/corpus` part 0, indexed by both (StandardAnalyzer, BM25(1.2, 0.75), no stop
//! words, positions kept), and over 1,100 queries (luceneutil HighTerm/MedTerm/LowTerm,
//! AndHigh*, OrHigh*, OrHighNot*, the exact and sloppy phrase tasks, the long disjunctions
//! Or3Terms, Or2Terms2StopWords and OrMany; search-benchmark-game unions (every one of three
//! or more words), intersections and its whole phrase class; and 100 disjunctions of 3 to 12
//! terms generated from the index's vocabulary).
//!
//! With Lucene-compatible norms, every query must have the same hit count, and the same top 10
//! in the same order, with scores equal within 1e-5 relative; documents may trade places only
//! where their scores are that close. With exact norms the overlap is reported.
//!
//! Lucene runs through `tools/lucene-peer` (built with Maven on first use; needs Java 17+).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::Command;

mod common;

use apcache_bench::long_disjunctions::LongDisjunctions;
use apcache_bench::query_sets::{
    luceneutil_tasks, search_benchmark_game, search_benchmark_game_long_unions, shared_dir,
    QuerySpec, LONG_OR_CLASSES, TERM_AND_OR_CLASSES,
};
use apcache_bench::workload::{Vocabulary, DEFAULT_MIN_DF};
use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::{DocumentReader, Input, ReaderOptions};
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, Norms, SearchOptions, Searcher};

const DOCUMENTS: usize = 20_000;
const K: usize = 10;
const TOLERANCE: f32 = 1e-5;

fn queries(shared: &Path) -> Vec<QuerySpec> {
    let tasks = shared.join("queries/luceneutil/wikimedium.10M.tasks");
    let mut queries = luceneutil_tasks(&tasks, &TERM_AND_OR_CLASSES, 40).expect("luceneutil tasks");
    let nostop = shared.join("queries/luceneutil/wikimedium.10M.nostopwords.tasks");
    queries.extend(
        luceneutil_tasks(
            &nostop,
            &[
                "OrHighNotHigh",
                "OrNotHighHigh",
                "OrHighNotLow",
                "OrNotHighLow",
            ],
            10,
        )
        .expect("luceneutil tasks"),
    );
    queries.extend(
        luceneutil_tasks(
            &tasks,
            &[
                "HighPhrase",
                "MedPhrase",
                "LowPhrase",
                "HighSloppyPhrase",
                "MedSloppyPhrase",
                "LowSloppyPhrase",
            ],
            20,
        )
        .expect("luceneutil tasks"),
    );
    let game = shared.join("queries/search-benchmark-game.queries.jsonl");
    queries.extend(
        search_benchmark_game(&game, &["union", "intersection"], 100)
            .expect("search-benchmark-game queries"),
    );
    queries.extend(search_benchmark_game(&game, &["phrase"], 300).expect("phrase queries"));
    // Long disjunctions: luceneutil's three-term, stop-word and many-term ORs and every union
    // of three or more words in the game's log.
    let nightly = shared.join("queries/luceneutil/wikinightly.tasks");
    queries.extend(luceneutil_tasks(&nightly, &LONG_OR_CLASSES, 20).expect("luceneutil tasks"));
    queries.extend(search_benchmark_game_long_unions(&game, 3, usize::MAX).expect("long unions"));
    queries
}

/// Disjunctions of 3 to 12 terms drawn from the index's own vocabulary, as `apcache-bench
/// peers` generates them.
fn generated_disjunctions(reader: &IndexReader) -> Vec<QuerySpec> {
    let vocabulary = Vocabulary::from_index(reader, DEFAULT_MIN_DF).unwrap();
    LongDisjunctions::default()
        .generate(&vocabulary)
        .unwrap()
        .into_iter()
        .map(|text| QuerySpec {
            class: "or-gen".into(),
            text,
        })
        .collect()
}

#[derive(Debug)]
struct LuceneResult {
    total_hits: u64,
    hits: Vec<(u32, f32)>,
}

fn lucene_search(
    jar: &Path,
    index: &Path,
    queries: &[QuerySpec],
    work: &Path,
) -> Vec<LuceneResult> {
    let file = work.join("queries.txt");
    let mut out = std::fs::File::create(&file).unwrap();
    for q in queries {
        writeln!(out, "{}", q.text).unwrap();
    }
    drop(out);
    let output = Command::new("java")
        .arg("-jar")
        .arg(jar)
        .arg("search")
        .arg(index)
        .arg(&file)
        .args(["-k", &K.to_string()])
        .output()
        .expect("run java");
    assert!(
        output.status.success(),
        "lucene-peer search failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v.get("error").is_none(), "Lucene failed a query: {line}");
            LuceneResult {
                total_hits: v["total_hits"].as_u64().unwrap(),
                hits: v["hits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| {
                        (
                            h["doc"].as_u64().unwrap() as u32,
                            h["score"].as_f64().unwrap() as f32,
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1e-9)
}

/// Whether `ours` is `theirs` up to swaps between near-equal scores.
fn agrees(ours: &[(u32, f32)], theirs: &[(u32, f32)]) -> Result<(), String> {
    if ours.len() != theirs.len() {
        return Err(format!("{} hits vs {}", ours.len(), theirs.len()));
    }
    for (i, (o, t)) in ours.iter().zip(theirs).enumerate() {
        if !close(o.1, t.1) {
            return Err(format!(
                "rank {}: score {} (doc {}) vs Lucene {} (doc {})",
                i + 1,
                o.1,
                o.0,
                t.1,
                t.0
            ));
        }
    }
    // Documents clearly above the last score must be the same set; documents tied (within the
    // tolerance) with the last may differ, as either engine may cut the tie differently.
    if let Some(&(_, last)) = theirs.last() {
        let above = |hits: &[(u32, f32)]| -> HashSet<u32> {
            hits.iter()
                .filter(|h| !close(h.1, last))
                .map(|h| h.0)
                .collect()
        };
        if above(ours) != above(theirs) {
            return Err("different documents".into());
        }
    }
    Ok(())
}

#[test]
fn top_10_and_counts_agree_with_lucene() {
    let Some(shared) = shared_dir() else {
        panic!("../shared (corpus and queries) is missing");
    };
    let work = tempfile::tempdir().unwrap();
    // The first 20,000 documents of part 0, as `title<TAB>body` lines both engines read.
    let corpus = work.path().join("corpus.tsv");
    let mut reader = DocumentReader::new(
        [Input::from_arg(
            shared.join("corpus/enwiki-part0.lines.txt.xz"),
        )],
        ReaderOptions::default(),
    )
    .unwrap();
    let mut documents = Vec::new();
    while documents.len() < DOCUMENTS {
        match reader.next_document().unwrap() {
            Some(doc) => documents.push(doc),
            None => break,
        }
    }
    assert_eq!(documents.len(), DOCUMENTS);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&corpus).unwrap());
    for doc in &documents {
        assert!(!doc.title.contains(['\t', '\n']) && !doc.body.contains(['\t', '\n']));
        writeln!(out, "{}\t{}", doc.title, doc.body).unwrap();
    }
    drop(out);

    let jar = common::lucene_peer();
    let lucene_index = work.path().join("lucene");
    let status = Command::new("java")
        .arg("-jar")
        .arg(&jar)
        .arg("index")
        .arg(&corpus)
        .arg(&lucene_index)
        .arg("--positions")
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run java");
    assert!(status.success(), "lucene-peer index failed");

    let index = work.path().join("apcache");
    build_index_from_documents(&documents, &index, &IndexOptions::default(), |_, _| {}).unwrap();
    let reader = IndexReader::open(&index).unwrap();
    let analyzer = reader.analyzer();
    let searcher = Searcher::new(&reader);

    let mut queries = queries(&shared);
    queries.extend(generated_disjunctions(&reader));
    assert!(queries.len() >= 1_100, "only {} queries", queries.len());
    let lucene = lucene_search(&jar, &lucene_index, &queries, work.path());
    assert_eq!(lucene.len(), queries.len());

    let mut failures = Vec::new();
    let (mut overlap, mut possible, mut compared) = (0usize, 0usize, 0usize);
    let mut refused = Vec::new();
    for (q, theirs) in queries.iter().zip(&lucene) {
        // apcache refuses field syntax (`user:ed`, a field this index does not have), which
        // Lucene runs against a missing field.
        let query = match parse_query(&q.text, &analyzer, DefaultOperator::Or) {
            Ok(query) => query,
            Err(e) => {
                refused.push(format!("{:?}: {e}", q.text));
                continue;
            }
        };
        compared += 1;
        for pruning in [true, false] {
            let options = SearchOptions {
                k: K,
                count: true,
                pruning,
                ..SearchOptions::default()
            };
            let ours = searcher.search(&query, &options).unwrap();
            if ours.total_hits != theirs.total_hits {
                failures.push(format!(
                    "{} {:?}: {} hits, Lucene {}",
                    q.class, q.text, ours.total_hits, theirs.total_hits
                ));
            }
            let hits: Vec<(u32, f32)> = ours.hits.iter().map(|h| (h.doc, h.score)).collect();
            if let Err(why) = agrees(&hits, &theirs.hits) {
                failures.push(format!(
                    "{} {:?} (pruning {pruning}): {why}",
                    q.class, q.text
                ));
            }
        }
        let exact = searcher
            .search(
                &query,
                &SearchOptions {
                    k: K,
                    norms: Norms::Exact,
                    ..SearchOptions::default()
                },
            )
            .unwrap();
        let theirs_docs: HashSet<u32> = theirs.hits.iter().map(|h| h.0).collect();
        overlap += exact
            .hits
            .iter()
            .filter(|h| theirs_docs.contains(&h.doc))
            .count();
        possible += theirs.hits.len();
    }
    eprintln!(
        "refused by apcache's parser ({}): {refused:?}",
        refused.len()
    );
    assert!(compared >= 1_100, "only {compared} queries compared");
    let phrases = queries.iter().filter(|q| q.text.contains('"')).count();
    eprintln!("{phrases} of them phrases");
    eprintln!(
        "{compared} queries compared; with exact (unquantised) norms, {:.1}% of Lucene's top-{K} documents are in apcache's",
        100.0 * overlap as f64 / possible.max(1) as f64
    );
    assert!(
        failures.is_empty(),
        "{} disagreements with Lucene:\n{}",
        failures.len(),
        failures
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
