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
