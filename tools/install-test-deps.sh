#!/usr/bin/env bash
# Installs what `cargo test --workspace` needs beyond Rust and a C compiler, where missing:
# Java 17 and Maven (the Lucene agreement test builds tools/lucene-peer), cmake (the Stream
# VByte C library of the codec benchmark's peers), Python 3 and Debian's chromium (the
# server's Python tests, which install their own pip packages). Debian packages, as root.
#
#   sudo bash tools/install-test-deps.sh
set -euo pipefail

missing=()
command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v cmake >/dev/null || missing+=(cmake)
command -v python3 >/dev/null || missing+=(python3 python3-pip)
[[ -x /usr/bin/chromium ]] || missing+=(chromium fonts-dejavu-core)
if ((${#missing[@]} == 0)); then
    echo "install-test-deps.sh: nothing missing"
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "install-test-deps.sh: missing ${missing[*]}: run as root (Debian: sudo apt-get install ${missing[*]})" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-test-deps.sh: installed ${missing[*]}"
