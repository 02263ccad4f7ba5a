//! `apcache index` refuses an input without documents and commits nothing; `apcache check`
//! names the files an interrupted writer left, passes unless `--strict`, and the next writer
//! removes them.

mod common;

use common::{apcache, path, run, sample};

#[test]
fn an_input_without_documents_commits_nothing() {
    let work = tempfile::tempdir().unwrap();
    let empty = work.path().join("empty.tsv");
    std::fs::write(&empty, "").unwrap();
    let index = work.path().join("index");

    let output = run(&["index", path(&empty), "-o", path(&index)]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!("no documents in {}", empty.display())),
        "{stderr}"
    );
    assert!(!index.join("MANIFEST").exists());

    // With --force over an index, the old index stays.
    apcache(&["index", path(&sample()), "-o", path(&index)]);
    let old = std::fs::read(index.join("MANIFEST")).unwrap();
    let output = run(&["index", path(&empty), "-o", path(&index), "--force"]);
    assert!(!output.status.success());
    assert_eq!(std::fs::read(index.join("MANIFEST")).unwrap(), old);
    apcache(&["check", "--strict", path(&index)]);
}

#[test]
fn check_warns_of_leftovers_and_the_next_writer_removes_them() {
    let work = tempfile::tempdir().unwrap();
    let index = work.path().join("index");
    apcache(&["index", path(&sample()), "-o", path(&index)]);
    apcache(&["check", "--strict", path(&index)]);
    let leftovers = ["MANIFEST.tmp", "seg_000042.post", "seg_000043.dict.tmp"];
    for name in leftovers {
        std::fs::write(index.join(name), b"left by a killed writer").unwrap();
    }

    let text = String::from_utf8(apcache(&["check", path(&index)]).stdout).unwrap();
    for name in leftovers {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("warning: {name}: not named by the manifest"))),
            "no warning for {name}:\n{text}"
        );
    }
    assert!(text.contains("no problems, 3 warnings"), "{text}");
    let strict = run(&["check", "--strict", path(&index)]);
    assert!(!strict.status.success());
    let json: serde_json::Value =
        serde_json::from_slice(&apcache(&["check", "--json", path(&index)]).stdout).unwrap();
    assert_eq!(json["warnings"].as_array().unwrap().len(), 3, "{json}");
    assert_eq!(json["problems"].as_array().unwrap().len(), 0, "{json}");

    // `merge` is a writer: it removes them even when it has nothing to merge.
    apcache(&["merge", path(&index)]);
    for name in leftovers {
        assert!(!index.join(name).exists(), "{name} is still there");
    }
    apcache(&["check", "--strict", path(&index)]);
}
