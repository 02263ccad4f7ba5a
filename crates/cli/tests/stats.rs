//! `apcache stats` prints a table for people and JSON for programs.

mod common;

use common::{apcache, path, sample};

#[test]
fn stats_prints_a_table_or_json() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    apcache(&["index", path(&sample()), "-o", path(&index)]);

    let text = String::from_utf8(apcache(&["stats", path(&index)]).stdout).unwrap();
    assert!(!text.contains('{'), "JSON in the text:\n{text}");
    for row in [
        "documents ",
        "segments ",
        "terms ",
        "postings ",
        "codec ",
        "file kind ",
        "store ",
        "total ",
        "postings size ",
        "searchable bytes ",
        "store bytes ",
    ] {
        assert!(
            text.lines().any(|line| line.starts_with(row)),
            "no {row:?} row:\n{text}"
        );
    }
    assert!(text.contains("% of raw"), "{text}");
    assert!(text.contains("MiB") || text.contains("KiB"), "{text}");

    let json = apcache(&["stats", path(&index), "--json"]).stdout;
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let lines = std::fs::read_to_string(sample()).unwrap().lines().count();
    assert_eq!(json["documents"], lines as u64);
    let bytes = json["bytes"].as_object().unwrap();
    let total: u64 = bytes.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(json["total_bytes"], total);
    assert_eq!(
        json["searchable_bytes"].as_u64().unwrap() + json["store_bytes"].as_u64().unwrap(),
        total
    );
    assert_eq!(json["store_bytes"], bytes["store"]);
    let fraction = json["postings_fraction_of_raw"].as_f64().unwrap();
    assert!(fraction > 0.0 && fraction < 1.0, "{fraction}");
}
