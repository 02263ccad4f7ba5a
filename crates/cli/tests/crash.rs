//! Crash consistency: `apcache index` and `apcache merge` are killed with SIGKILL at many
//! moments; every time, the index left behind must open, pass `check`, and hold exactly the
//! documents it claims (each stored title is the input's title for that DID). A build into an
//! empty directory that is killed leaves what it committed, marked incomplete; a forced rebuild
//! that is killed leaves the old index exactly as it was, or the complete new one. A merge that
//! is killed must lose no document.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use apcache_index::check::check_index;
use apcache_index::format::FileKind;
use apcache_index::segment::SegmentReader;
use apcache_index::{IndexError, Manifest};

fn sample() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

fn apcache(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_apcache"));
    command
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

fn titles() -> Vec<String> {
    std::fs::read_to_string(sample())
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// Runs `command` and kills it after `delay` (unless it finished); true if it was killed.
fn kill_after(mut command: Command, delay: Duration) -> bool {
    let mut child: Child = command.spawn().expect("spawn apcache");
    let started = Instant::now();
    while started.elapsed() < delay {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    true
}

/// The index in `dir` is sound; returns its manifest (None when no commit happened).
fn assert_sound(dir: &Path, titles: &[String], context: &str) -> Option<Manifest> {
    let manifest = match Manifest::load(dir) {
        Ok(manifest) => manifest,
        Err(IndexError::NoIndex(_)) => return None,
        Err(e) => panic!("{context}: the manifest does not load: {e}"),
    };
    let report = check_index(dir).unwrap();
    assert!(report.is_clean(), "{context}: {:?}", report.problems);
    for segment in &manifest.segments {
        let reader = SegmentReader::open(dir, segment).unwrap();
        for (local, did) in segment.docs.docs().enumerate().step_by(37) {
            let stored = reader.stored(local as u32).unwrap();
            assert_eq!(stored.title, titles[did as usize], "{context}: DID {did}");
        }
    }
    Some(manifest)
}

/// The document count of the sound index in `dir` (None when no commit happened).
fn sound_documents(dir: &Path, titles: &[String], context: &str) -> Option<u64> {
    assert_sound(dir, titles, context).map(|m| m.documents())
}

/// A deterministic spread of delays (no clock-seeded randomness: a failure must reproduce).
fn delays(count: u64, max_ms: u64) -> impl Iterator<Item = Duration> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..count).map(move |i| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        // Half evenly spread, half pseudo-random, so early and late moments are both hit.
        let ms = if i % 2 == 0 {
            i * max_ms / count
        } else {
            state % max_ms
        };
        Duration::from_millis(ms)
    })
}

/// Kills per test: `default` in the test suite, `APCACHE_KILLS` for the documented long run
/// (`APCACHE_KILLS=100 cargo test --release -p apcache-cli --test crash`).
fn kills(default: u64) -> u64 {
    std::env::var("APCACHE_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// How long an uninterrupted run of `command` takes.
fn duration_of(mut command: Command) -> Duration {
    let started = Instant::now();
    assert!(command.status().unwrap().success());
    started.elapsed()
}

/// `apcache index INPUT -o OUT` with a budget that makes many segments, and `extra`.
fn index_command(input: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut args = vec![
        "index",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--memory-budget-mib",
        "1",
    ];
    args.extend(extra);
    apcache(&args)
}

/// What `apcache ARGS` printed (standard output, then standard error) and whether it succeeded.
fn output_of(args: &[&str]) -> (String, bool) {
    let output = Command::new(env!("CARGO_BIN_EXE_apcache"))
        .args(args)
        .output()
        .unwrap();
    let mut text = String::from_utf8(output.stdout).unwrap();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    (text, output.status.success())
}

#[test]
fn killing_index_leaves_the_last_commit_readable_and_correct() {
    let titles = titles();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    let out = dir.to_str().unwrap();
    let whole = duration_of(index_command(&sample(), &dir, &[]));
    let complete = assert_sound(&dir, &titles, "complete build").unwrap();
    assert_eq!(complete.documents(), titles.len() as u64);
    assert!(complete.build.is_none(), "a complete build is not marked");

    let mut killed = 0;
    let mut partial = 0;
    for (i, delay) in delays(kills(16), whole.as_millis() as u64 + 1).enumerate() {
        // A build into a directory without an index, over whatever the last run left.
        let _ = std::fs::remove_file(dir.join("MANIFEST"));
        if kill_after(index_command(&sample(), &dir, &[]), delay) {
            killed += 1;
        }
        let context = format!("index killed after {delay:?} (run {i})");
        let Some(manifest) = assert_sound(&dir, &titles, &context) else {
            continue;
        };
        let docs = manifest.documents();
        if manifest.build.is_none() {
            assert_eq!(docs, titles.len() as u64, "{context}: complete");
            continue;
        }
        partial += 1;
        // An interrupted build's index says so in `stats`; `check`, `search` and
        // `serve-stdin` refuse it unless told to accept a partial index.
        let note = format!("incomplete: an interrupted build left {docs} documents");
        let (stats, ok) = output_of(&["stats", out]);
        assert!(ok && stats.starts_with(&note), "{context}: {stats}");
        let (check, ok) = output_of(&["check", out]);
        assert!(!ok, "{context}: a partial index passed check: {check}");
        let (check, ok) = output_of(&["check", "--allow-partial", out]);
        assert!(ok, "{context}: {check}");
        assert!(
            check.contains(&format!("warning: MANIFEST: {note}")),
            "{context}: {check}"
        );
        assert!(
            !output_of(&["check", "--allow-partial", "--strict", out]).1,
            "{context}"
        );
        let (search, ok) = output_of(&["search", out, "the"]);
        assert!(
            !ok && search.contains("partial index"),
            "{context}: {search}"
        );
        let (search, ok) = output_of(&["search", out, "the", "--allow-partial", "--count"]);
        assert!(ok && search.contains(&note), "{context}: {search}");
    }
    assert!(
        killed >= 8,
        "only {killed} runs were killed before they ended"
    );
    assert!(partial >= 1, "no kill landed between two commits");
    eprintln!("{killed} builds killed: {partial} left a partial index, none lost a commit");
    // A build after a crash starts cleanly over whatever the crash left.
    assert!(index_command(&sample(), &dir, &["--force"])
        .status()
        .unwrap()
        .success());
    let rebuilt = assert_sound(&dir, &titles, "rebuild").unwrap();
    assert_eq!(rebuilt.documents(), titles.len() as u64);
    assert!(rebuilt.build.is_none());
}

#[test]
fn killing_a_forced_rebuild_leaves_the_old_index_or_the_new_one() {
    let titles = titles();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    // The old index: the sample's first 500 documents, several segments.
    let old_input = work.path().join("old.tsv");
    let text = std::fs::read_to_string(sample()).unwrap();
    let head: String = text.lines().take(500).map(|l| format!("{l}\n")).collect();
    std::fs::write(&old_input, head).unwrap();
    let build_old = || {
        let mut command = index_command(&old_input, &dir, &["--force", "--no-merge"]);
        assert!(command.status().unwrap().success());
        assert_eq!(sound_documents(&dir, &titles, "old index"), Some(500));
        std::fs::read(dir.join("MANIFEST")).unwrap()
    };
    let rebuild = || index_command(&sample(), &dir, &["--force"]);
    build_old();
    let whole = duration_of(rebuild());
    assert_eq!(
        sound_documents(&dir, &titles, "complete rebuild"),
        Some(titles.len() as u64)
    );
    let mut old_manifest = build_old();

    let (mut killed, mut old_kept, mut new_complete) = (0, 0, 0);
    for (i, delay) in delays(kills(16), whole.as_millis() as u64 + 1).enumerate() {
        if kill_after(rebuild(), delay) {
            killed += 1;
        }
        let context = format!("rebuild killed after {delay:?} (run {i})");
        let manifest = assert_sound(&dir, &titles, &context)
            .unwrap_or_else(|| panic!("{context}: no index left"));
        assert!(manifest.build.is_none(), "{context}: an incomplete index");
        if std::fs::read(dir.join("MANIFEST")).unwrap() == old_manifest {
            // The old index, exactly: the same manifest, and `check` found every file it
            // names with the length and checksum it records.
            old_kept += 1;
        } else {
            assert_eq!(
                manifest.documents(),
                titles.len() as u64,
                "{context}: neither the old index nor the new one"
            );
            new_complete += 1;
            old_manifest = build_old();
        }
    }
    assert!(
        killed >= 8,
        "only {killed} rebuilds were killed before they ended"
    );
    assert!(
        old_kept >= 4,
        "only {old_kept} kills landed before the final commit"
    );
    eprintln!("{killed} killed: {old_kept} left the old index, {new_complete} the new one");
    // A rebuild after the crashes replaces the old index and leaves nothing else.
    assert!(rebuild().status().unwrap().success());
    assert_eq!(
        sound_documents(&dir, &titles, "rebuild"),
        Some(titles.len() as u64)
    );
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(
        files,
        2 + FileKind::SEGMENT_FILES.len() + 1,
        "MANIFEST, LOCK and the merged segment's files"
    );
}

#[test]
fn killing_merge_loses_no_document() {
    let titles = titles();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    let out = dir.to_str().unwrap();
    let build = || index_command(&sample(), &dir, &["--force", "--no-merge"]);
    let merge = ["merge", out];
    // How long a whole merge takes here; the kills are spread over that time.
    assert!(build().status().unwrap().success());
    let whole = duration_of(apcache(&merge));

    let mut killed = 0;
    for (i, delay) in delays(kills(10), whole.as_millis() as u64 + 1).enumerate() {
        assert!(build().status().unwrap().success());
        let segments = Manifest::load(&dir).unwrap().segments.len();
        assert!(segments > 2);
        if kill_after(apcache(&merge), delay) {
            killed += 1;
        }
        let context = format!("merge killed after {delay:?} (run {i})");
        assert_eq!(
            sound_documents(&dir, &titles, &context),
            Some(titles.len() as u64),
            "{context}"
        );
        // Finishing the merge afterwards works and also loses nothing.
        assert!(apcache(&merge).status().unwrap().success(), "{context}");
        assert_eq!(Manifest::load(&dir).unwrap().segments.len(), 1);
        assert_eq!(
            sound_documents(&dir, &titles, &context),
            Some(titles.len() as u64)
        );
        let files = std::fs::read_dir(&dir).unwrap().count();
        // MANIFEST, LOCK and the merged segment's files.
        assert_eq!(
            files,
            2 + FileKind::SEGMENT_FILES.len() + 1,
            "{context}: leftovers of the killed merge were not removed"
        );
    }
    assert!(
        killed >= 3,
        "only {killed} merges were killed before they ended"
    );
    eprintln!("{killed} merges killed: no document lost");
}
