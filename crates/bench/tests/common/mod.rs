//! What the benchmark binary's tests share: running the built `apcache-bench`, and an index
//! of the bundled sample built through the library.

#![allow(dead_code)] // each test binary uses a different part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;

/// Runs `apcache-bench args`, whatever its exit status.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apcache-bench"))
        .args(args)
        .output()
        .expect("run apcache-bench")
}

/// Runs `apcache-bench args` and asserts that it succeeded.
pub fn bench(args: &[&str]) -> Output {
    let output = run(args);
    assert!(
        output.status.success(),
        "apcache-bench {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Indexes the bundled sample into `dir` with the default options.
pub fn index_sample(dir: &Path) {
    index_sample_with(dir, IndexOptions::default());
}

/// Indexes the bundled sample into `dir` with `options`.
pub fn index_sample_with(dir: &Path, options: IndexOptions) {
    build_index(vec![Input::from_arg(sample())], dir, &options, |_, _| {})
        .expect("index the sample");
}

/// The bundled sample corpus.
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// `p` as a command-line argument.
pub fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The newest modification time of the files under `dir`.
fn newest_under(dir: &Path) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let time = if path.is_dir() {
            newest_under(&path)
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::SystemTime::UNIX_EPOCH)
        };
        newest = newest.max(time);
    }
    newest
}

/// The lucene-peer jar, built if missing or older than its sources.
pub fn lucene_peer() -> PathBuf {
    let tool = repository().join("tools/lucene-peer");
    let jar = tool.join("target/lucene-peer.jar");
    let built = std::fs::metadata(&jar).and_then(|m| m.modified()).ok();
    let sources = newest_under(&tool.join("src")).max(
        std::fs::metadata(tool.join("pom.xml"))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::SystemTime::UNIX_EPOCH),
    );
    if built.is_none_or(|built| built < sources) {
        let status = Command::new("bash")
            .arg(tool.join("build.sh"))
            .status()
            .expect("tools/lucene-peer/build.sh needs bash, Java 17+ and Maven");
        assert!(status.success(), "building tools/lucene-peer failed");
    }
    jar
}

/// The repository's root.
pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}
