#!/usr/bin/env bash
# The test suite: what `cargo test` needs beyond Rust, installed where missing (as root, from
# Debian's packages and PyPI), then the Rust tests of every crate, then the server's Python
# tests (the official elasticsearch client, and the web page in headless Chromium) against the
# release binary.
#
#   bash tools/test.sh            # everything
#
# Needs: Rust (rustup) and a C compiler. Installs when missing: Java 17 and Maven (the Lucene
# agreement test builds tools/lucene-peer), cmake (the Stream VByte C library of the codec
# benchmark's peers), Python packages (crates/server/tests/python/requirements.txt) and
# Debian's chromium.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

command -v cargo >/dev/null || { echo "test.sh: cargo is required: https://rustup.rs" >&2; exit 1; }

missing=()
command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v cmake >/dev/null || missing+=(cmake)
command -v python3 >/dev/null || missing+=(python3 python3-pip)
[[ -x /usr/bin/chromium ]] || missing+=(chromium fonts-dejavu-core)
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "test.sh: missing ${missing[*]}: install them (Debian: sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cargo test --workspace
cargo build --release -p apcache-cli
APCACHE_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/apcache" bash crates/server/tests/python/run.sh

# Fuzzing: every fuzz target for 10 seconds from its checked-in corpus (tools/fuzz.sh), where a
# nightly toolchain is installed (cargo-fuzz needs one); fails on any crash. (The list goes
# through a string, not a pipe into grep -q, which under pipefail may fail on SIGPIPE.)
if command -v rustup >/dev/null && grep -q nightly <<<"$(rustup toolchain list 2>/dev/null)"; then
    bash tools/fuzz.sh 10
else
    echo "test.sh: skipping the fuzz targets (tools/fuzz.sh): no nightly toolchain (rustup toolchain install nightly)"
fi
