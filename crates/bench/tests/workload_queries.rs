//! `apcache-bench workload` then `apcache-bench queries` on an index of the bundled sample: the
//! workload is reproducible by seed, every query of it parses, and the harness reports every
//! repetition as JSON and CSV.

use std::path::Path;

mod common;
use apcache_index::analyzer::Stemming;
use apcache_index::indexer::IndexOptions;
use common::{bench, index_sample_with, path};

#[test]
fn workload_then_bench_queries() {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    // Stemmed: terms a second stemming would change are left out of workloads.
    let mut options = IndexOptions::default();
    options.analyzer.stemming = Stemming::SnowballEnglish;
    index_sample_with(&index, options);

    let workload = |seed: &str, out: &Path| {
        let output = bench(&[
            "workload",
            path(&index),
            "--type",
            "or",
            "--class",
            "M",
            "--count",
            "300",
            "--seed",
            seed,
            "-o",
            path(out),
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(stderr.contains("thresholds"), "{stderr}");
        std::fs::read_to_string(out).unwrap()
    };
    let w1 = scratch.path().join("w1.txt");
    let first = workload("3", &w1);
    assert_eq!(first.lines().count(), 300);
    assert!(first.lines().all(|l| l.split(' ').count() == 2), "{first}");
    assert_eq!(workload("3", &scratch.path().join("w2.txt")), first);
    assert_ne!(workload("4", &scratch.path().join("w3.txt")), first);

    let csv = scratch.path().join("r.csv");
    let output = bench(&[
        "queries",
        path(&index),
        "--queries",
        path(&w1),
        "--threads",
        "2",
        "--warmup",
        "1",
        "--repeat",
        "2",
        "--json",
        "--csv",
        path(&csv),
    ]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["queries"], 300);
    assert_eq!(report["skipped"], 0);
    assert_eq!(report["threads"], 2);
    assert_eq!(report["options"]["k"], 1024);
    let repetitions = report["repetitions"].as_array().unwrap();
    assert_eq!(repetitions.len(), 2);
    for r in repetitions {
        assert_eq!(r["queries"], 300);
        assert!(r["qps"].as_f64().unwrap() > 0.0);
        let p = |field: &str| r[field].as_f64().unwrap();
        assert!(p("p50_us") <= p("p99_us") && p("p99_us") <= p("p999_us"));
        assert!(r["total_hits"].as_u64().unwrap() > 0);
    }
    assert_eq!(repetitions[0]["total_hits"], repetitions[1]["total_hits"]);
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("index,load,threads,k,"));

    let output = bench(&[
        "queries",
        path(&index),
        "--queries",
        path(&w1),
        "--format",
        "plain",
        "--repeat",
        "1",
        "--cold",
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("cold: ") && text.contains("cached at start"),
        "{text}"
    );
}
