#!/usr/bin/env bash
# The read benchmark of issue 15 in one run: the official LanceDB SDK writes a 200,000-row table
# (id int64, s utf8, v float32[128]); the SDK embedded (no server) and package query (the engine,
# no HTTP hop) then time count_rows, count with a filter, a filtered query, a two-column full scan
# and brute-force top-10 kNN on that very dataset; prints both with the ratios and peak RSS.
#
# usage: scripts/query/bench.sh [work-dir]     (default: a fresh temp dir; reuse one to skip the write)
# env:   LANCECAT_BENCH_SDK   SDK version (default 0.39.0)
#        LANCECAT_BENCH_REPS  repetitions, best counts (default 5)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir="${1:-$(mktemp -d)}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
reps="${LANCECAT_BENCH_REPS:-5}"
sdk="$("$repo/scripts/lancedb/install.sh" "${LANCECAT_BENCH_SDK:-0.39.0}")"

(cd "$repo" && go build -o "$dir/querybench" ./scripts/query/querybench)
RUST_LOG=error LANCEDB_LOG=error node "$here/bench.mjs" "$sdk" "$dir" "$reps" create
"$dir/querybench" "$dir/db/t.lance" "$reps" > "$dir/go.json"
RUST_LOG=error LANCEDB_LOG=error node "$here/bench.mjs" "$sdk" "$dir" "$reps" run "$dir/go.json"
echo "(raw figures: $dir/results.json)"
