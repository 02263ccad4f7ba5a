//! Crash consistency: `apcache index` and `apcache merge` are killed with SIGKILL at many
//! moments; every time, the index left behind must open, pass `check`, and hold exactly the
//! documents it claims (each stored title is the input's title for that DID). A merge that is
//! killed must lose no document.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use apcache_index::check::check_index;
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

/// The index in `dir` is sound; returns its document count (None when no commit happened).
fn assert_sound(dir: &Path, titles: &[String], context: &str) -> Option<u64> {
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
    Some(manifest.documents())
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

/// How long an uninterrupted run of `command` takes.
fn duration_of(mut command: Command) -> Duration {
    let started = Instant::now();
    assert!(command.status().unwrap().success());
    started.elapsed()
}

fn index_args(out: &str) -> Vec<String> {
    let sample = sample().to_str().unwrap().to_string();
    [
        sample.as_str(),
        "-o",
        out,
        "--memory-budget-mib",
        "1",
        "--force",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn killing_index_leaves_the_last_commit_readable_and_correct() {
    let titles = titles();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    let out = dir.to_str().unwrap();
    let args = index_args(out);
    let mut full: Vec<&str> = vec!["index"];
    full.extend(args.iter().map(String::as_str));
    let whole = duration_of(apcache(&full));
    assert_eq!(
        assert_sound(&dir, &titles, "complete build"),
        Some(titles.len() as u64)
    );

    let mut killed = 0;
    let mut partial = 0;
    for (i, delay) in delays(16, whole.as_millis() as u64 + 1).enumerate() {
        if kill_after(apcache(&full), delay) {
            killed += 1;
        }
        let context = format!("index killed after {delay:?} (run {i})");
        if let Some(docs) = assert_sound(&dir, &titles, &context) {
            if docs < titles.len() as u64 {
                partial += 1;
            }
        }
    }
    assert!(
        killed >= 8,
        "only {killed} runs were killed before they ended"
    );
    assert!(partial >= 1, "no kill landed between two commits");
    // A build after a crash starts cleanly over whatever the crash left.
    assert!(apcache(&full).status().unwrap().success());
    assert_eq!(
        assert_sound(&dir, &titles, "rebuild"),
        Some(titles.len() as u64)
    );
}

#[test]
fn killing_merge_loses_no_document() {
    let titles = titles();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("index");
    let out = dir.to_str().unwrap();
    let args = index_args(out);
    let mut build: Vec<&str> = vec!["index", "--no-merge"];
    build.extend(args.iter().map(String::as_str));
    let merge = ["merge", out];
    // How long a whole merge takes here; the kills are spread over that time.
    assert!(apcache(&build).status().unwrap().success());
    let whole = duration_of(apcache(&merge));

    let mut killed = 0;
    for (i, delay) in delays(10, whole.as_millis() as u64 + 1).enumerate() {
        assert!(apcache(&build).status().unwrap().success());
        let segments = Manifest::load(&dir).unwrap().segments.len();
        assert!(segments > 2);
        if kill_after(apcache(&merge), delay) {
            killed += 1;
        }
        let context = format!("merge killed after {delay:?} (run {i})");
        assert_eq!(
            assert_sound(&dir, &titles, &context),
            Some(titles.len() as u64),
            "{context}"
        );
        // Finishing the merge afterwards works and also loses nothing.
        assert!(apcache(&merge).status().unwrap().success(), "{context}");
        assert_eq!(Manifest::load(&dir).unwrap().segments.len(), 1);
        assert_eq!(
            assert_sound(&dir, &titles, &context),
            Some(titles.len() as u64)
        );
        let files = std::fs::read_dir(&dir).unwrap().count();
        // MANIFEST, LOCK and the merged segment's six files.
        assert_eq!(
            files, 8,
            "{context}: leftovers of the killed merge were not removed"
        );
    }
    assert!(
        killed >= 3,
        "only {killed} merges were killed before they ended"
    );
}
