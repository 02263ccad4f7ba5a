//! `apcache-bench documents` end to end on a few hundred made-up packages: apcache and tantivy
//! each in their own `document-engine` process, every request answered alike, a row per class
//! and mode, and the indexes reused by a second run.

mod common;

use std::io::Write;
use std::path::PathBuf;

use apcache_bench::document_bench::{self, DocumentBenchConfig, MODES};
use apcache_bench::document_queries::CLASSES;
use serde_json::json;

fn packages(path: &std::path::Path) {
    let mut out = std::fs::File::create(path).unwrap();
    let words = [
        "game", "tool", "library", "network", "graphics", "audio", "editor", "data",
    ];
    for i in 0..300usize {
        let w = |k: usize| words[(i * 7 + k * 3) % words.len()];
        let section = ["games", "net", "libs"][i % 3];
        let priority = ["optional", "standard"][i % 2];
        let document = json!({
            "id": format!("pkg{i}"), "package": format!("pkg{i}"),
            "section": section, "priority": priority,
            "architecture": "amd64", "installed_size": (i * 37) % 1000, "size": (i * 101) % 5000,
            "tags": [format!("role::{}", w(1)), format!("use::{}", w(2))],
            "depends": ["libc6"], "homepage": format!("https://example.org/{i}"),
            "summary": format!("{} {} for {}", w(0), w(1), w(2)),
            "description": format!("a {} {} with {} and {} support, number {i}", w(3), w(0), w(4), w(5)),
        });
        writeln!(out, "{document}").unwrap();
    }
}

#[test]
fn engines_answer_alike_and_every_class_is_reported() {
    let work = tempfile::tempdir().unwrap();
    let documents = work.path().join("packages.jsonl");
    packages(&documents);
    let config = DocumentBenchConfig {
        documents,
        mapping: common::repository().join("docs/results/debian-mapping.json"),
        id_field: "id".into(),
        copies: 2,
        per_class: 2,
        seed: 3,
        rounds: 2,
        warmup: 1,
        work: work.path().join("work"),
        lucene: None,
        tantivy: true,
        engine_binary: PathBuf::from(env!("CARGO_BIN_EXE_apcache-bench")),
    };
    let mut said = Vec::new();
    let report = document_bench::run(&config, |what| said.push(what.to_owned())).unwrap();
    assert_eq!(report.queries, 2 * CLASSES.len());
    assert_eq!(report.builds.len(), 2);
    for build in &report.builds {
        // Two copies, the second's ids made distinct.
        assert_eq!(build.documents, 600, "{build:?}");
    }
    assert_eq!(report.rows.len(), (CLASSES.len() + 1) * MODES.len());
    for row in &report.rows {
        assert_eq!(row.engines.len(), 2);
        assert!(row.engines.values().all(|s| s.count > 0), "{row:?}");
        assert!(row.mean_ratio.is_some() && row.p99_ratio.is_some());
    }
    assert_eq!(report.disagreements["tantivy"], Vec::<String>::new());
    let text = report.to_text();
    assert!(
        text.contains("sort-keyword") && text.contains("TOP_10_COUNT"),
        "{text}"
    );

    // A second run finds both indexes built from the same input.
    let mut again = Vec::new();
    document_bench::run(&config, |what| again.push(what.to_owned())).unwrap();
    assert_eq!(
        again.iter().filter(|w| w.contains("reusing")).count(),
        2,
        "{again:?}"
    );
    assert!(said.iter().all(|w| !w.contains("reusing")));
}
