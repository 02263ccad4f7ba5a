//! `apcache bench queries --peers`: tantivy (and Lucene, where its jar is built) run the same
//! workload on indexes of the same stored documents, beside apcache, and count the same hits.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{bench, index_sample, path};

fn lucene_jar() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/lucene-peer/target/lucene-peer.jar")
}

/// Checks one engine's repetitions in the JSON report; returns their `total_hits`.
fn check_repetitions(engine: &str, repetitions: &serde_json::Value, queries: u64) -> Vec<u64> {
    let repetitions = repetitions.as_array().expect("repetitions");
    assert_eq!(repetitions.len(), 2, "{engine}");
    repetitions
        .iter()
        .map(|r| {
            assert_eq!(r["queries"], queries, "{engine}");
            let f = |field: &str| r[field].as_f64().unwrap();
            assert!(f("qps") > 0.0 && f("wall_s") > 0.0, "{engine}: {r}");
            assert!(f("mean_us") > 0.0, "{engine}: {r}");
            assert!(
                f("p50_us") <= f("p99_us") && f("p99_us") <= f("p999_us"),
                "{engine}: {r}"
            );
            r["total_hits"].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn peers_run_the_same_workload_and_count_the_same_hits() {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    let peer_dir = scratch.path().join("peers");
    index_sample(&index);
    let workload = scratch.path().join("and-H.txt");
    bench(&[
        "workload",
        path(&index),
        "--type",
        "and",
        "--class",
        "H",
        "--count",
        "100",
        "--seed",
        "1",
        "-o",
        path(&workload),
    ]);

    let jar = lucene_jar();
    let with_lucene = jar.is_file()
        && Command::new("java")
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success());
    if !with_lucene {
        eprintln!(
            "Lucene left out: {} not built (mvn -q -f tools/lucene-peer/pom.xml package) or no java",
            jar.display()
        );
    }
    let peers = if with_lucene {
        "tantivy,lucene"
    } else {
        "tantivy"
    };

    // k = 0: every engine counts, so every count is compared.
    let csv = scratch.path().join("r.csv");
    let output = bench(&[
        "queries",
        path(&index),
        "--queries",
        path(&workload),
        "-k",
        "0",
        "--threads",
        "2",
        "--warmup",
        "1",
        "--repeat",
        "2",
        "--peers",
        peers,
        "--lucene-jar",
        path(&jar),
        "--peer-dir",
        path(&peer_dir),
        "--json",
        "--csv",
        path(&csv),
    ]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["engine"], "apcache");
    assert_eq!(report["queries"], 100);
    let apcache_hits = check_repetitions("apcache", &report["repetitions"], 100);
    assert!(apcache_hits[0] > 0);
    let engines: Vec<&str> = report["peers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["engine"].as_str().unwrap())
        .collect();
    assert_eq!(
        engines,
        if with_lucene {
            vec!["tantivy", "lucene"]
        } else {
            vec!["tantivy"]
        }
    );
    for peer in report["peers"].as_array().unwrap() {
        let engine = peer["engine"].as_str().unwrap();
        assert_eq!(peer["failed"], 0, "{engine}");
        assert_eq!(peer["hits_checked"], 100, "{engine}: {peer}");
        assert_eq!(peer["hits_differ"], 0, "{engine}: {peer}");
        assert!(peer["index_built_s"].as_f64().is_some(), "{engine}: built");
        let hits = check_repetitions(engine, &peer["repetitions"], 100);
        assert_eq!(hits, apcache_hits, "{engine}");
    }
    assert_eq!(report["peers"][0]["threads"], 2);
    if with_lucene {
        assert_eq!(report["peers"][1]["threads"], 1);
    }
    let csv = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 1 + 2 * (1 + engines.len()), "{csv}");
    assert!(rows[0].ends_with(",engine"), "{csv}");
    assert!(
        rows[1].ends_with(",apcache") && rows[3].ends_with(",tantivy"),
        "{csv}"
    );

    // Top 10: the peers' indexes are reused; the table shows the engines side by side.
    let output = bench(&[
        "queries",
        path(&index),
        "--queries",
        path(&workload),
        "-k",
        "10",
        "--repeat",
        "2",
        "--peers",
        peers,
        "--lucene-jar",
        path(&jar),
        "--peer-dir",
        path(&peer_dir),
    ]);
    let text = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("indexing"), "{stderr}");
    assert!(text.contains("engine  rep queries"), "{text}");
    for engine in &engines {
        assert_eq!(
            text.lines()
                .filter(|l| {
                    let mut cells = l.split_whitespace();
                    cells.next() == Some(*engine)
                        && cells.next().is_some_and(|rep| rep.parse::<usize>().is_ok())
                })
                .count(),
            2,
            "{text}"
        );
        assert!(
            text.contains(&format!("{engine}: hit counts equal apcache's"))
                || text.contains(&format!("{engine}: hit counts not compared")),
            "{text}"
        );
    }
    assert!(text.contains("(reused)"), "{text}");
}

#[test]
fn a_missing_lucene_jar_is_a_clear_error() {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    index_sample(&index);
    let queries = scratch.path().join("q.txt");
    std::fs::write(&queries, "the\n").unwrap();
    let missing = scratch.path().join("missing.jar");
    let output = Command::new(env!("CARGO_BIN_EXE_apcache-bench"))
        .args([
            "queries",
            path(&index),
            "--queries",
            path(&queries),
            "--peers",
            "lucene",
            "--lucene-jar",
            path(&missing),
            "--peer-dir",
            path(&scratch.path().join("peers")),
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("missing.jar") && stderr.contains("does not exist"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
