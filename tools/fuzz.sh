#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ under libFuzzer for a while, starting from its checked-in
# seed corpus, and fails if any target crashes (a panic, a sanitizer report, a timeout or an
# out-of-memory).
#
#   bash tools/fuzz.sh            # 20 seconds per target
#   bash tools/fuzz.sh 300        # 5 minutes per target
#   FUZZ_TARGETS="decode_blocks query_parser" bash tools/fuzz.sh 60
#
# Needs: a nightly Rust toolchain (rustup toolchain install nightly) and a C compiler.
# Installs cargo-fuzz (cargo install) when it is missing.
#
# The checked-in corpora (fuzz/corpus/TARGET) are never written: each run works on a copy in
# a temporary directory, which is removed afterwards. A crashing input is kept in
# fuzz/artifacts/TARGET/ (ignored by git); reproduce it with
#   cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-...
# To grow a checked-in corpus on purpose, run cargo fuzz yourself:
#   cargo +nightly fuzz run TARGET fuzz/corpus/TARGET -- -max_total_time=600
#   cargo +nightly fuzz cmin TARGET fuzz/corpus/TARGET
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

per_target=${1:-20}
[[ $per_target =~ ^[0-9]+$ && $per_target -gt 0 ]] || {
    echo "usage: bash tools/fuzz.sh [SECONDS per target, default 20]" >&2
    exit 2
}
toolchain=${FUZZ_TOOLCHAIN:-nightly}

command -v cargo >/dev/null || { echo "fuzz.sh: cargo is required: https://rustup.rs" >&2; exit 1; }
cargo "+$toolchain" --version >/dev/null 2>&1 || {
    echo "fuzz.sh: the $toolchain toolchain is required: rustup toolchain install $toolchain" >&2
    exit 1
}
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# One build for every target (with cargo fuzz's defaults: release, debug assertions,
# AddressSanitizer), so that the time of each run below is fuzzing time.
cargo "+$toolchain" fuzz build

if [[ -n ${FUZZ_TARGETS:-} ]]; then
    read -r -a targets <<<"$FUZZ_TARGETS"
else
    mapfile -t targets < <(cargo "+$toolchain" fuzz list)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/apcache-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=()
summary=()
for target in "${targets[@]}"; do
    corpus="$work/corpus/$target"
    mkdir -p "$corpus" fuzz/artifacts/"$target"
    if [[ -d fuzz/corpus/$target ]]; then
        cp -R fuzz/corpus/"$target"/. "$corpus"/
    fi
    seeds=$(find "$corpus" -type f | wc -l)
    log="$work/$target.log"
    echo "fuzz.sh: $target: ${per_target}s from $seeds corpus input(s)"
    start=$(date +%s.%N)
    status=0
    # A hang (one input over 30 s) counts as a crash; libFuzzer stops at the first crash.
    cargo "+$toolchain" fuzz run "$target" "$corpus" -- \
        -max_total_time="$per_target" -timeout=30 -print_final_stats=1 \
        -artifact_prefix="$PWD/fuzz/artifacts/$target/" >"$log" 2>&1 || status=$?
    end=$(date +%s.%N)
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
    crashes=$(grep -c 'Test unit written to' "$log" || true)
    if ((status != 0)) && ((crashes == 0)); then
        crashes=1 # died without writing an input (a build error, a crash in startup)
    fi
    entries=$(find "$corpus" -type f | wc -l)
    rate=$(awk -v n="${execs:-0}" -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", n / (e - s) }')
    line=$(printf '%-14s executions %10s  (%s/s over %.0f s)  crashes %s  corpus %s -> %s' \
        "$target" "${execs:-?}" "$rate" "$(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')" \
        "$crashes" "$seeds" "$entries")
    echo "fuzz.sh: $line"
    summary+=("$line")
    if ((crashes > 0)); then
        failed+=("$target")
        echo "---- $target: the end of libFuzzer's output ----" >&2
        tail -n 60 "$log" >&2
        echo "----" >&2
    fi
done

echo
echo "fuzz.sh: summary (${per_target}s per target)"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]})); then
    echo "fuzz.sh: FAILED: ${failed[*]} crashed; the inputs are in fuzz/artifacts/" >&2
    exit 1
fi
echo "fuzz.sh: no crashes"
