#!/usr/bin/env bash
# Benchmarks lancecat against the official LanceDB SDK in one run and prints the
# ratios (lancecat / SDK, best of reps). lancebench generates the tables once as
# Arrow IPC; both sides start from those bytes.
#
# files:     writes and scans with lancecat's Go library vs the SDK: 200,000
#            rows of (int64 id, utf8 name, float32[128] vector) and 1,000,000
#            rows of (int64 id, float64 value, utf8 label) (bench.mjs).
# dataplane: `lancecat serve` on a temp local root, the 200,000-row table
#            created through REST, timed over REST (count_rows, count with a
#            filter, a filtered query, two-column full scans, brute-force
#            top-10 kNN) vs the SDK embedded (no server) on that same table;
#            peak RSS (VmHWM) of the server and of node (lancebench rest +
#            dataplane.mjs).
#
# usage: scripts/bench/run.sh [work-dir]      (default: a fresh temp dir)
# env:   LANCECAT_BENCH_SDK    SDK version (default 0.39.0)
#        LANCECAT_BENCH_REPS   repetitions, best counts (default 3)
#        LANCECAT_BENCH_PARTS  which parts (default "files dataplane")
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir="${1:-$(mktemp -d)}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
reps="${LANCECAT_BENCH_REPS:-3}"
parts=" ${LANCECAT_BENCH_PARTS:-files dataplane} "
sdk="$("$repo/scripts/lancedb/install.sh" "${LANCECAT_BENCH_SDK:-0.39.0}")"

(cd "$repo" && go build -o "$dir/lancebench" ./scripts/bench/lancebench && go build -o "$dir/lancecat" ./cmd/lancecat)
"$dir/lancebench" gen "$dir"
if [[ "$parts" == *" files "* ]]; then
	"$dir/lancebench" run "$dir" "$reps" > "$dir/go.json"
	RUST_LOG=error LANCEDB_LOG=error node "$here/bench.mjs" "$sdk" "$dir" "$reps" "$dir/go.json"
fi
if [[ "$parts" == *" dataplane "* ]]; then
	"$dir/lancebench" rest "$dir/lancecat" "$dir" "$reps" > "$dir/dataplane.json"
	RUST_LOG=error LANCEDB_LOG=error node "$here/dataplane.mjs" "$sdk" "$dir" "$reps"
fi
echo "(raw figures: $dir/results.json, $dir/dataplane-results.json; server log: $dir/lancecat-serve.log)"
