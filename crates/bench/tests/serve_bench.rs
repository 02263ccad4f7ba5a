//! `apcache-bench serve` end to end: the `apcache` binary served over HTTP on an index of the
//! bundled sample, at concurrency 1 and 2 for a second each, with the agreement check.

mod common;

use std::path::PathBuf;
use std::process::Command;

/// The `apcache` binary of the same build as `apcache-bench` (the same target directory and
/// profile), built with `cargo build -p apcache-cli` when it is missing.
fn apcache_binary() -> PathBuf {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_apcache-bench"));
    let dir = bench.parent().expect("the binary's directory");
    let apcache = dir.join("apcache");
    if !apcache.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "-p", "apcache-cli"])
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        if dir.file_name().is_some_and(|name| name == "release") {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build -p apcache-cli");
        assert!(status.success(), "cargo build -p apcache-cli failed");
    }
    assert!(apcache.is_file(), "{} was not built", apcache.display());
    apcache
}

#[test]
fn serves_the_sample_over_http_and_agrees_with_the_library() {
    let apcache = apcache_binary();
    let work = tempfile::tempdir().unwrap();
    let index = work.path().join("index");
    common::index_sample(&index);
    let queries = work.path().join("queries.txt");
    std::fs::write(
        &queries,
        "griffith observatory\n+new +york\nthe\nalbert OR einstein\n+war -world\n\"united states\"\ntitle:einstein\n",
    )
    .unwrap();
    let output = common::bench(&[
        "serve",
        common::path(&index),
        "--apcache",
        common::path(&apcache),
        "--queries",
        common::path(&queries),
        "--concurrency",
        "1,2",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--agree",
        "--memory",
        "--json",
        "--",
        "--threads",
        "2",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{report}");
    for run in runs {
        assert!(run["qps"].as_f64().unwrap() > 0.0, "{run}");
        assert!(run["errors"].as_object().unwrap().is_empty(), "{run}");
        assert!(run["p50_us"].as_f64().unwrap() > 0.0, "{run}");
        assert!(run["p99_us"].as_f64() >= run["p50_us"].as_f64(), "{run}");
    }
    // The field query does not parse (the index has one field) and is left out.
    assert_eq!(report["queries"]["kept"], 6, "{report}");
    assert!(
        report["baseline"]["qps"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    let agreement = &report["agreement"];
    assert_eq!(agreement["queries"], 6, "{agreement}");
    assert_eq!(agreement["mismatches"], 0, "{agreement}");
    assert_eq!(agreement["server_errors"], 0, "{agreement}");
    assert!(report["memory"]["process_rss_anon"].as_u64().unwrap() > 0);
    assert_eq!(report["shutdown"]["clean"], true, "{}", report["shutdown"]);
}
