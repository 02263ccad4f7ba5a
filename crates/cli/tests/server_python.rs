//! The server's Python tests (crates/server/tests/python) against this build of `apcache`:
//! the official elasticsearch client against the compatible API, plain HTTP, and the search
//! page in headless Chromium. `run.sh` installs the Python packages and, as root, Debian's
//! chromium where missing, or says how to get them.

use std::path::Path;
use std::process::Command;

#[test]
fn the_python_suite_passes_against_this_build() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/python/run.sh");
    let status = Command::new("bash")
        .arg(&script)
        .env("APCACHE_BIN", env!("CARGO_BIN_EXE_apcache"))
        .status()
        .expect("bash runs the Python suite");
    assert!(
        status.success(),
        "the server's Python tests failed: {status}"
    );
}
