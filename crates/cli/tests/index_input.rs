//! `apcache index` and the user's files and text: it writes only into an empty directory or an
//! index and removes only its own files; it detects an input's format once per file and keeps
//! a body's tabs; it reports every skipped line with its file, number and reason; it refuses an
//! input that is not documents. And `search` takes a query that starts with `-`.

mod common;

use std::path::Path;

use common::{apcache, path, run, sample};

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_directory_that_is_not_an_index_is_refused_and_left_as_it_was() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.tmp"), "notes").unwrap();
    std::fs::write(dir.join("seg_plan.txt"), "x").unwrap();
    let sample = sample();
    for force in [false, true] {
        let mut args = vec!["index", path(&sample), "-o", path(&dir)];
        if force {
            args.push("--force");
        }
        let output = run(&args);
        assert!(!output.status.success(), "force={force}");
        let text = stderr(&output);
        assert!(
            text.contains("is not empty and holds no apcache index")
                && text.contains("notes.tmp, seg_plan.txt"),
            "{text}"
        );
        // Nothing removed, nothing added (not even the writer's lock).
        assert_eq!(names(&dir), ["notes.tmp", "seg_plan.txt"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("notes.tmp")).unwrap(),
            "notes"
        );
    }
}

#[test]
fn a_writer_removes_only_its_own_files_from_an_index() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    apcache(&["index", path(&sample()), "-o", path(&dir)]);
    // A user's files beside the index, named like apcache's but not apcache's.
    let theirs = [
        "notes.tmp",
        "seg_plan.txt",
        "seg_000001.post.bak",
        "seg_7.post",
    ];
    for name in theirs {
        std::fs::write(dir.join(name), "mine").unwrap();
    }
    // A leftover of a killed writer, which is apcache's.
    std::fs::write(dir.join("seg_000099.post.tmp"), "left").unwrap();
    apcache(&["index", path(&sample()), "-o", path(&dir), "--force"]);
    assert!(!dir.join("seg_000099.post.tmp").exists());
    apcache(&["merge", path(&dir)]);
    for name in theirs {
        assert_eq!(
            std::fs::read_to_string(dir.join(name)).unwrap(),
            "mine",
            "{name}"
        );
    }
    // `check` calls none of them leftovers.
    apcache(&["check", "--strict", path(&dir)]);
}

#[test]
fn what_a_killed_first_build_left_is_taken_over() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    std::fs::create_dir(&dir).unwrap();
    // A build killed before its first commit: its lock and half-written segment files.
    for name in ["LOCK", "seg_000000.post.tmp", "seg_000000.store.tmp"] {
        std::fs::write(dir.join(name), "").unwrap();
    }
    apcache(&["index", path(&sample()), "-o", path(&dir)]);
    apcache(&["check", "--strict", path(&dir)]);
}

#[test]
fn a_new_directory_is_removed_when_its_build_fails() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("new");
    let empty = work.path().join("empty.tsv");
    std::fs::write(&empty, "").unwrap();
    assert!(!run(&["index", path(&empty), "-o", path(&dir)])
        .status
        .success());
    assert!(!dir.exists());
}

#[test]
fn the_format_is_detected_once_per_file_and_tabs_stay_in_the_body() {
    let work = tempfile::tempdir().unwrap();
    let tsv = work.path().join("tabs.tsv");
    std::fs::write(
        &tsv,
        "Tabbed\tfirst part\tzanzibar second part\nPlain\tan ordinary body\n",
    )
    .unwrap();
    let dir = work.path().join("tsv");
    apcache(&["index", path(&tsv), "-o", path(&dir)]);
    // The text between the body's tabs is indexed, not dropped as a date.
    for word in ["first", "zanzibar"] {
        let found = stdout(&apcache(&["search", path(&dir), word, "--json"]));
        let found: serde_json::Value = serde_json::from_str(&found).unwrap();
        assert_eq!(
            found["total"],
            serde_json::json!({"value": 1, "exact": true}),
            "{found}"
        );
    }

    // A luceneutil line file: the date field is dropped; a later line without a date is a
    // bad line of that file, reported with its number, not read as title<TAB>body.
    let lines = work.path().join("lines.txt");
    std::fs::write(
        &lines,
        "Anarchism\t30-APR-2012 03:25:17.000\tAnarchism is a philosophy\n\
         Autism\t30-APR-2012 03:25:18.000\tAutism is a disorder\n\
         Broken\tno date here\n",
    )
    .unwrap();
    let dir = work.path().join("lines");
    let output = apcache(&["index", path(&lines), "-o", path(&dir)]);
    assert!(
        stderr(&output).contains(&format!("{}:3:", lines.display())),
        "{}",
        stderr(&output)
    );
    let found = stdout(&apcache(&["search", path(&dir), "APR", "--json"]));
    assert!(found.contains("\"value\":0"), "{found}");
}

#[test]
fn every_skipped_line_is_reported_with_its_file_number_and_reason() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("docs.tsv");
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!("Title {i}\tbody number {i}\n"));
        if i % 3 == 0 {
            text.push_str("a line without a tab\n");
        }
    }
    std::fs::write(&input, &text).unwrap();
    let bad_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.contains('\t'))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(bad_lines.len(), 134);

    let dir = work.path().join("index");
    let report = work.path().join("bad.txt");
    let output = apcache(&[
        "index",
        path(&input),
        "-o",
        path(&dir),
        "--bad-lines",
        path(&report),
    ]);
    let shown = stderr(&output);
    // The first 100 on standard error, then where the rest are.
    let listed: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("skipped "))
        .collect();
    assert_eq!(listed.len(), 100, "{shown}");
    assert_eq!(
        listed[0],
        format!(
            "skipped {}:{}: expected 2 tab-separated fields, found 1",
            input.display(),
            bad_lines[0]
        )
    );
    assert!(shown.contains("and 34 more skipped lines"), "{shown}");
    // All of them in the file.
    let written = std::fs::read_to_string(&report).unwrap();
    let numbers: Vec<usize> = written
        .lines()
        .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(numbers, bad_lines);

    // And in the JSON report.
    let output = apcache(&["index", path(&input), "-o", path(&dir), "--force", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let skipped = json["skipped_lines"].as_array().unwrap();
    assert_eq!(skipped.len(), 134);
    assert_eq!(skipped[1]["line"], bad_lines[1]);
    assert_eq!(skipped[1]["file"], input.display().to_string());
}

#[test]
fn an_input_that_is_not_documents_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("listing.txt");
    let mut text = String::from("one\tdocument\n");
    for i in 0..50 {
        text.push_str(&format!("file-{i}.txt\n"));
    }
    std::fs::write(&input, text).unwrap();
    let dir = work.path().join("index");
    let output = run(&["index", path(&input), "-o", path(&dir)]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("does not look like documents: 50 of its first 51 lines"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.exists());
}

#[test]
fn a_query_may_start_with_a_minus() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    apcache(&["index", path(&sample()), "-o", path(&dir)]);
    let output = apcache(&["search", path(&dir), "-river"]);
    assert!(
        stdout(&output).starts_with("0 hits for -river"),
        "{}",
        stdout(&output)
    );
    let output = apcache(&["search", path(&dir), "-river +valley", "--json"]);
    assert!(stdout(&output).contains("\"total\""), "{}", stdout(&output));
}
