//! `apcache bench queries --mode ...` on an index of the bundled sample: every serving mode
//! answers the workload with the same hit counts as `base`, the cache modes hit once warm,
//! bad configurations are clear errors at start, and a DRAM limit is either enforced or
//! reported as not enforced.

use std::process::Output;

mod common;
use common::{bench, index_sample, path, run};

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("a JSON report")
}

#[test]
fn every_mode_answers_like_base() {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    index_sample(&index);
    let workload = scratch.path().join("w.txt");
    bench(&[
        "workload",
        path(&index),
        "--type",
        "and",
        "--class",
        "H",
        "--rp",
        "0.5",
        "--count",
        "200",
        "--seed",
        "1",
        "-o",
        path(&workload),
    ]);
    let common = [
        "queries",
        path(&index),
        "--queries",
        path(&workload),
        "-k",
        "100",
        "--count",
        "--warmup",
        "1",
        "--repeat",
        "1",
        "--threads",
        "2",
        "--json",
    ];
    let mode = |extra: &[&str]| {
        let mut args = common.to_vec();
        args.extend_from_slice(extra);
        json(&bench(&args))
    };
    let base = mode(&["--mode", "base"]);
    let hits =
        |report: &serde_json::Value| report["repetitions"][0]["total_hits"].as_u64().unwrap();
    assert!(hits(&base) > 0);
    let tier = scratch.path().join("tier");
    for extra in [
        vec!["--mode", "base-prefetch", "--lookahead", "4"],
        vec![
            "--mode",
            "hybrid",
            "--cache-size",
            "4MiB",
            "--tier",
            "anonymous",
        ],
        vec![
            "--mode",
            "hybrid-prefetch",
            "--cache-size",
            "4MiB",
            "--segment-size",
            "4KiB",
            "--tier-dir",
            path(&tier),
            "--metadata-dir",
            path(&tier),
            "--loader",
            "mmap",
        ],
        vec![
            "--mode",
            "hybrid-prefetch",
            "--cache-size",
            "1MiB",
            "--segment-size",
            "8KiB",
            "--tier",
            "anonymous",
            "--eviction",
            "clock",
            "--guard-queued",
            "--emulate-latency-us",
            "20",
        ],
    ] {
        let report = mode(&extra);
        assert_eq!(hits(&report), hits(&base), "{extra:?}");
        let rep = &report["repetitions"][0];
        assert!(rep["qps"].as_f64().unwrap() > 0.0, "{extra:?}");
        if extra[1].starts_with("hybrid-prefetch") {
            assert!(rep["hits"].as_u64().unwrap() > 0, "{extra:?}: {rep}");
        }
        if extra.contains(&"--emulate-latency-us") {
            let warnings = report["warnings"].to_string();
            assert!(warnings.contains("EMULATED"), "{warnings}");
            assert!(
                report["loader"].to_string().contains("emulated"),
                "{report}"
            );
        }
    }
    // A DRAM limit: enforced (root, a memory controller), or said not to be.
    let limited = mode(&[
        "--mode",
        "hybrid-prefetch",
        "--cache-size",
        "4MiB",
        "--tier",
        "anonymous",
        "--memory-limit",
        "256MiB",
    ]);
    assert_eq!(hits(&limited), hits(&base));
    let dram = &limited["dram"];
    if dram["enforced"].as_bool().unwrap() {
        assert!(
            dram["cgroup_peak_bytes"].as_u64().unwrap() <= 256 << 20,
            "{dram}"
        );
    } else {
        assert!(
            limited["warnings"].to_string().contains("NOT enforced"),
            "{limited}"
        );
    }
    // Clear errors at start.
    for (extra, says) in [
        (
            vec![
                "--mode",
                "hybrid-prefetch",
                "--cache-size",
                "4KiB",
                "--tier",
                "anonymous",
            ],
            "largest term",
        ),
        (
            vec![
                "--mode",
                "hybrid",
                "--cache-size",
                "1MiB",
                "--tier-dir",
                "/proc/no/such/dir",
            ],
            "tier",
        ),
        (vec!["--mode", "fast"], "invalid value 'fast'"),
        (
            vec![
                "--mode",
                "base",
                "--memory-limit",
                "4KiB",
                "--metadata-dir",
                "/dev/shm",
                "--metadata-in-budget",
            ],
            "cannot be held in DRAM",
        ),
    ] {
        let mut args = common.to_vec();
        args.extend_from_slice(&extra);
        let output = run(&args);
        assert!(!output.status.success(), "{extra:?} succeeded");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{extra:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
