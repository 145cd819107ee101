#!/usr/bin/env bash
# Writes and scans the same data with lancecat and with the official LanceDB
# SDK in one run and prints the ratios: 200,000 rows of (int64 id, utf8 name,
# float32[128] vector) and 1,000,000 rows of (int64 id, float64 value, utf8
# label). lancebench generates the tables once as Arrow IPC; both sides start
# from those bytes.
#
# usage: scripts/bench/run.sh [work-dir]      (default: a fresh temp dir)
# env:   LANCECAT_BENCH_SDK   SDK version (default 0.39.0)
#        LANCECAT_BENCH_REPS  repetitions, best counts (default 3)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir="${1:-$(mktemp -d)}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
reps="${LANCECAT_BENCH_REPS:-3}"
sdk="$("$repo/scripts/lancedb/install.sh" "${LANCECAT_BENCH_SDK:-0.39.0}")"

(cd "$repo" && go build -o "$dir/lancebench" ./scripts/bench/lancebench)
"$dir/lancebench" gen "$dir"
"$dir/lancebench" run "$dir" "$reps" > "$dir/go.json"
RUST_LOG=error LANCEDB_LOG=error node "$here/bench.mjs" "$sdk" "$dir" "$reps" "$dir/go.json"
echo "(raw figures: $dir/results.json)"
