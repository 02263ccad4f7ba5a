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
