//! I/O faults in the writers: a write failing with EIO or ENOSPC, an fsync failing, the
//! commit's rename failing, injected at every n-th call through the crate's fail points. A
//! build, a forced rebuild or a merge that meets one must report the error, and the index
//! must be what it was before: it opens, passes `check`, and answers as before. A later
//! writer then succeeds over whatever the failed one left.

use std::path::{Path, PathBuf};

use apcache_index::analyzer::Analyzer;
use apcache_index::check::check_index;
use apcache_index::fault;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::merge::merge_index;
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, SearchOptions, Searcher};
use apcache_index::{IndexError, Manifest};

/// Writes lines `from..to` of the bundled sample to `dir/name`.
fn input(dir: &Path, name: &str, from: usize, to: usize) -> PathBuf {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv");
    let text = std::fs::read_to_string(sample).unwrap();
    let lines: String = text
        .lines()
        .skip(from)
        .take(to - from)
        .map(|l| format!("{l}\n"))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, lines).unwrap();
    path
}

/// Builds `input` into `dir` in small flushes (so a build has many writes to fail).
fn build(
    input: &Path,
    dir: &Path,
    force: bool,
    merge: bool,
) -> Result<apcache_index::indexer::IndexReport, IndexError> {
    let options = IndexOptions {
        memory_budget: 1 << 20,
        batch_docs: 32,
        force,
        merge,
        ..IndexOptions::default()
    };
    build_index(vec![Input::from_arg(input)], dir, &options, |_, _| {})
}

/// What a reader sees: documents, and a few queries' totals and hits.
fn answers(index: &Path) -> Result<Vec<String>, IndexError> {
    let reader = IndexReader::open(index)?;
    let searcher = Searcher::new(&reader);
    let analyzer = Analyzer::english();
    let mut out = vec![format!("{} documents", reader.doc_count())];
    for text in ["the", "river OR city", "+united +states", "album -band"] {
        let query = parse_query(text, &analyzer, DefaultOperator::Or).unwrap();
        let options = SearchOptions {
            k: 10,
            count: true,
            ..SearchOptions::default()
        };
        let r = searcher.search(&query, &options)?;
        out.push(format!("{text}: {} {:?}", r.total_hits, r.hits));
    }
    Ok(out)
}

/// The index in `dir` is sound and answers as one of `states` does: the last commit's, or,
/// when the fault came after the commit's rename (the fsync of the directory), the new one's.
fn assert_one_of(dir: &Path, states: &[&[String]], context: &str) {
    let report = check_index(dir).unwrap();
    assert!(
        report.problems.is_empty(),
        "{context}: {:?}",
        report.problems
    );
    let got = answers(dir).unwrap();
    assert!(
        states.contains(&got.as_slice()),
        "{context}: the index holds neither the last commit nor the new one: {got:?}"
    );
}

/// A failed writer removed what it wrote: no temporary file and no segment file that the
/// committed manifest does not name is left for the next writer (the disk it filled is freed).
fn assert_nothing_left(dir: &Path, context: &str) {
    let leftovers = Manifest::load(dir).unwrap().leftovers(dir).unwrap();
    assert!(leftovers.is_empty(), "{context}: left {leftovers:?}");
}

const FAULTS: [(&str, &str); 4] = [
    (fault::WRITE, "eio"),
    (fault::WRITE, "enospc"),
    (fault::FSYNC, "eio"),
    (fault::COMMIT, "eio"),
];

/// The n-th calls (0-based) of a fail point at which a fault is injected: early, middle and
/// late in a build of a few hundred documents.
const AT: [usize; 6] = [0, 1, 3, 9, 27, 81];

#[test]
fn failed_writes_leave_the_last_commit_intact() {
    let scenario = fail::FailScenario::setup();
    let work = tempfile::tempdir().unwrap();
    let old_input = input(work.path(), "old.tsv", 0, 300);
    let new_input = input(work.path(), "new.tsv", 300, 700);
    let dir = work.path().join("index");
    build(&old_input, &dir, false, true).unwrap();
    let want = answers(&dir).unwrap();
    let fresh = work.path().join("fresh");
    build(&new_input, &fresh, false, true).unwrap();
    let want_new = answers(&fresh).unwrap();

    let (mut injected, mut completed) = (0, 0);
    for (point, error) in FAULTS {
        for at in AT {
            let context = format!("{point} {error} at call {at}");
            fail::cfg(point, &format!("{at}*off->1*return({error})->off")).unwrap();
            let rebuild = build(&new_input, &dir, true, true);
            fail::remove(point);
            match rebuild {
                Err(e) => {
                    injected += 1;
                    let text = e.to_string();
                    assert!(
                        text.contains(if error == "enospc" {
                            "No space left"
                        } else {
                            "Input/output error"
                        }),
                        "{context}: the error does not say what failed: {text}"
                    );
                    assert_one_of(&dir, &[&want, &want_new], &context);
                    assert_nothing_left(&dir, &context);
                }
                // The fault point was not reached this many times: the rebuild is whole.
                Ok(_) => {
                    completed += 1;
                    assert_eq!(answers(&dir).unwrap(), want_new, "{context}");
                }
            }
            // Back to the old index for the next fault.
            if answers(&dir).unwrap() != want {
                build(&old_input, &dir, true, true).unwrap();
                assert_eq!(answers(&dir).unwrap(), want, "{context}");
            }
        }
    }
    assert!(
        injected >= 15,
        "{injected} faults injected, {completed} runs whole"
    );
    eprintln!("rebuilds: {injected} met a fault and left a sound index, {completed} ran whole");
    // A writer after the failures replaces the index and leaves no temporary file behind.
    build(&new_input, &dir, true, true).unwrap();
    let manifest = Manifest::load(&dir).unwrap();
    assert!(manifest.leftovers(&dir).unwrap().is_empty());
    assert!(check_index(&dir).unwrap().is_clean());
    scenario.teardown();
}

#[test]
fn a_failed_merge_loses_nothing() {
    let scenario = fail::FailScenario::setup();
    let work = tempfile::tempdir().unwrap();
    let docs = input(work.path(), "docs.tsv", 0, 400);
    let dir = work.path().join("index");
    build(&docs, &dir, false, false).unwrap();
    let segments = Manifest::load(&dir).unwrap().segments.len();
    assert!(segments > 2);
    let want = answers(&dir).unwrap();
    let mut injected = 0;
    for (point, error) in FAULTS {
        for at in AT {
            let context = format!("merge, {point} {error} at call {at}");
            fail::cfg(point, &format!("{at}*off->1*return({error})->off")).unwrap();
            let merged = merge_index(&dir, None, None);
            fail::remove(point);
            if merged.is_ok() {
                // Whole: the same documents in one segment. Start over from the segments.
                assert_eq!(answers(&dir).unwrap(), want, "{context}");
                build(&docs, &dir, true, false).unwrap();
                continue;
            }
            injected += 1;
            // The same documents, in the old segments or (a fault after the commit's rename)
            // in the merged one.
            assert_one_of(&dir, &[&want], &context);
            assert_nothing_left(&dir, &context);
            if Manifest::load(&dir).unwrap().segments.len() != segments {
                build(&docs, &dir, true, false).unwrap();
            }
        }
    }
    assert!(injected >= 15, "only {injected} merges met a fault");
    eprintln!("merges: {injected} met a fault and lost no document");
    scenario.teardown();
}

#[test]
fn a_failed_first_build_leaves_no_file_behind() {
    let scenario = fail::FailScenario::setup();
    let work = tempfile::tempdir().unwrap();
    let docs = input(work.path(), "docs.tsv", 0, 400);
    let mut injected = 0;
    for (point, error) in FAULTS {
        for at in AT {
            let context = format!("first build, {point} {error} at call {at}");
            let dir = work.path().join(format!("index-{injected}-{at}"));
            fail::cfg(point, &format!("{at}*off->1*return({error})->off")).unwrap();
            let built = build(&docs, &dir, false, true);
            fail::remove(point);
            if built.is_ok() {
                continue;
            }
            injected += 1;
            match Manifest::load(&dir) {
                // Nothing committed: the directory the build created is gone.
                Err(IndexError::NoIndex(_)) => assert!(!dir.exists(), "{context}: {dir:?} left"),
                // Flushes committed before the fault: a partial index, and nothing else.
                Ok(manifest) => {
                    assert!(manifest.leftovers(&dir).unwrap().is_empty(), "{context}");
                    assert!(check_index(&dir).unwrap().is_clean(), "{context}");
                }
                Err(e) => panic!("{context}: {e}"),
            }
        }
    }
    assert!(injected >= 15, "only {injected} builds met a fault");
    scenario.teardown();
}
