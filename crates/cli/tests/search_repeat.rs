//! `apcache search --repeat`: every run is timed; with a result cache the runs after the
//! first come from it, with the same answer.

mod common;

use common::{apcache, path, sample};

#[test]
fn repeated_runs_after_the_first_come_from_the_result_cache() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    apcache(&["index", path(&sample()), "-o", path(&index)]);
    let search = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "search",
            path(&index),
            "river OR city",
            "--json",
            "--repeat",
            "3",
        ];
        args.extend_from_slice(extra);
        serde_json::from_slice(&apcache(&args).stdout).unwrap()
    };
    let plain = search(&[]);
    let cached = search(&["--mode", "base", "--result-cache-size", "1MiB"]);
    let from_cache = |v: &serde_json::Value| -> Vec<bool> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["result_cache"].as_bool().unwrap())
            .collect()
    };
    assert_eq!(from_cache(&plain), [false, false, false]);
    assert_eq!(from_cache(&cached), [false, true, true]);
    assert_eq!(plain["hits"], cached["hits"]);
    assert_eq!(plain["total"], cached["total"]);
}
