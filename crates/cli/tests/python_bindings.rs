//! The Python bindings' tests (python/tests) against this build of `apcache`: `run.sh`
//! installs the package with `pip install ./python` (maturin builds it) and runs pytest,
//! which compares the bindings' results with this binary's `search --json` and `search
//! --topics --trec`. A missing Python, pip package or Rust build is a failure, never a skip.

use std::path::Path;
use std::process::Command;

#[test]
fn the_python_bindings_pass_against_this_build() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/tests/run.sh");
    let status = Command::new("bash")
        .arg(&script)
        .env("APCACHE_BIN", env!("CARGO_BIN_EXE_apcache"))
        .status()
        .expect("bash runs the Python bindings' tests");
    assert!(
        status.success(),
        "the Python bindings' tests failed: {status}"
    );
}
