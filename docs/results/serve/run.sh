#!/usr/bin/env bash
# The runs behind docs/results/serve.md. Binaries pinned in $BIN (copies of target/release,
# so that a rebuild by someone else during the runs changes nothing); results beside this file.
#   run.sh NAME INDEX [apcache-bench serve flags...] -- [apcache serve flags...]
set -euo pipefail
BIN=${BIN:-/var/tmp/serve-bench-bin}
out=$(cd "$(dirname "$0")" && pwd)
name=$1; shift
echo "\$ apcache-bench serve $*" > "$out/$name.txt"
"$BIN/apcache-bench" serve --json-out "$out/$name.json" "$@" | tee -a "$out/$name.txt"
