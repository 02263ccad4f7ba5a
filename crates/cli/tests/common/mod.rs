//! What the command-line tests share: running the built `apcache`, the bundled sample.

#![allow(dead_code)] // each test binary uses a different part

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `apcache args`, whatever its exit status.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apcache"))
        .args(args)
        .output()
        .expect("run apcache")
}

/// Runs `apcache args` and asserts that it succeeded.
pub fn apcache(args: &[&str]) -> Output {
    let output = run(args);
    assert!(
        output.status.success(),
        "apcache {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The bundled sample corpus.
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// `p` as a command-line argument.
pub fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}
