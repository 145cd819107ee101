#!/usr/bin/env bash
# Benchmarks lancecat against the official LanceDB SDK in one run and prints the
# ratios (lancecat / SDK). lancebench generates the tables once as Arrow IPC;
# both sides start from those bytes.
#
# files:     writes and scans with lancecat's Go library vs the SDK: 200,000
#            rows of (int64 id, utf8 name, float32[128] vector) and 1,000,000
#            rows of (int64 id, float64 value, utf8 label) (bench.mjs).
# dataplane: `lancecat serve` on a temp local root, the 200,000-row table
#            created through REST, timed over REST (count_rows, count with a
#            filter, a filtered query, two-column full scans, brute-force
#            top-10 kNN) vs the SDK embedded (no server) on that same table;
#            peak RSS (VmHWM) of the server and of node (lancebench rest +
#            dataplane.mjs). Each operation is timed by lancecat, then at
#            once by the SDK (so both see the same load on a shared
#            machine). Both sides time each operation alike: warm-up
#            runs untimed (at least 3 and 200 ms: connection, table open,
#            caches), then at least LANCECAT_BENCH_REPS runs, more while they
#            fit in LANCECAT_BENCH_SECONDS (at most 500); the median is judged
#            against the goal, the best is shown next to it. (Best of a few
#            runs measured mostly connection warm-up for the sub-millisecond
#            operations: GET /healthz 489 µs best of 5, 63 µs best of 50.)
#            It also times the HTTP floor: a minimal Go net/http server in
#            its own process answering count_rows with a constant, timed by
#            the same client (lancebench httpfloor) — no server can answer
#            count_rows faster than that, while the SDK embedded has no hop.
#
# What costs the goals not met (issue 35; profiles of lancecat serve through --metrics-addr
# /debug/pprof while remote-loop.mjs replays one SDK request; 2026-12-04, a 2-core machine at
# load 20-40, so the ratios move by +-50% between runs: judge them by pairs, not one line):
#   filtered scans whose filter does not read every output column: were decoding every output
#     column of every row (FSST names: 26% of the CPU of `id = 5`); now late-materialized
#     (query/late.go): `id = 5` over [id, name] 9x -> 1.5x the SDK embedded.
#   count_rows(filter) (`id % 3 = 0 AND name LIKE ...`): FSST-decoding every name (24% of the
#     CPU) although two thirds of the rows fail `id % 3 = 0`: the conjuncts are evaluated
#     together, not the cheap one first on the rest's rows.
#   full scan [id vector] (100 MB answer): the server is idle (4% CPU) while the SDK's client
#     takes the IPC file in; the cost is in the client reading a whole file reply.
#   declare_table vs the official adapter: the server waits on fsync of the catalog commit
#     (goroutine dumps: 3 of 4 in-flight declares in Fsync; its CPU profile is empty), which
#     Lance's DirectoryNamespace on a local root does not do. create_namespace, insert and the
#     SDK's write go through commits too; they were not profiled.
#   small answers still pay: the fragment's data file opened per request (lancefile.Open, 8% of
#     the CPU of `id = 5`: no reader cache between requests) and the id column decoded for every
#     row (unpackLanes, 14%).
#
# usage: scripts/bench/run.sh [work-dir]      (default: a fresh temp dir)
# env:   LANCECAT_BENCH_SDK    SDK version (default 0.39.0)
#        LANCECAT_BENCH_REPS   repetitions: files, best of them (default 3);
#                              dataplane, the least timed runs (default 3)
#        LANCECAT_BENCH_SECONDS dataplane: timed seconds per operation and side
#                              (default 1)
#        LANCECAT_BENCH_PARTS  which parts (default "files dataplane"; "remote" adds issue 35's)
#
# remote:    the client users run (issue 35): each Node SDK of LANCECAT_LANCEDB_SDK (default
#            0.31.0 and 0.39.0) and the Python lancedb 0.40.0 in remote mode against a fresh
#            `lancecat serve`, interleaved with the same SDK embedded on the same table
#            (remote.mjs, remote.py), printed as ratios to the goals (remote-report.mjs).
#            LANCECAT_BENCH_ROWS (default 200000; quick mode: 50000) sizes the table,
#            LANCECAT_BENCH_INDEX=1 adds the IVF_PQ build and indexed kNN,
#            LANCECAT_BENCH_PYTHON=0 leaves the Python SDK out.
# official:  the official server beside us (issue 35 item 5): pylance 14.0.2's
#            lance.namespace.RestAdapter("dir") and `lancecat serve`, each on a fresh
#            local root, the same namespace-mode workload through pylance's RestNamespace,
#            interleaved op by op, at 1 and LANCECAT_BENCH_CLIENTS (16) clients (official.py).
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
if [[ "$parts" == *" files "* || "$parts" == *" dataplane "* ]]; then "$dir/lancebench" gen "$dir"; fi
if [[ "$parts" == *" files "* ]]; then
	"$dir/lancebench" run "$dir" "$reps" > "$dir/go.json"
	RUST_LOG=error LANCEDB_LOG=error node "$here/bench.mjs" "$sdk" "$dir" "$reps" "$dir/go.json"
fi
if [[ "$parts" == *" dataplane "* ]]; then
	# Each operation's SDK timing runs right after lancecat's (lancebench starts
	# it), so both sides of a ratio see the same machine load.
	rm -f "$dir"/sdk-*.json
	RUST_LOG=error LANCEDB_LOG=error "$dir/lancebench" rest "$dir/lancecat" "$dir" "$reps" \
		-- node "$here/dataplane.mjs" "$sdk" "$dir" "$reps" > "$dir/dataplane.json"
	RUST_LOG=error LANCEDB_LOG=error node "$here/dataplane.mjs" "$sdk" "$dir" "$reps"
fi
results=()
run_remote() { # <name> <command...>: a fresh server and root, then the command with url root pid out
	local name="$1"; shift
	local root="$dir/remote-$name"
	rm -rf "$root" "$root-sdk" "$root-official"
	local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	local mport; mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$dir/lancecat" serve --root "$root" --listen "127.0.0.1:$port" --metrics-addr "127.0.0.1:$mport" --log-level warn >>"$dir/lancecat-serve.log" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
	echo "remote/$name: lancecat serve pid $pid on :$port (pprof on :$mport)" >&2
	local rc=0
	RUST_LOG=error LANCEDB_LOG=error "$@" "http://127.0.0.1:$port" "$root" "$pid" "$dir/remote-$name.json" || rc=$?
	kill -INT "$pid"; wait "$pid" || true
	rm -rf "$root" "$root-sdk" "$root-official"
	[[ $rc == 0 ]] && results+=("$dir/remote-$name.json")
	return 0
}
if [[ "$parts" == *" remote "* ]]; then
	sdks="${LANCECAT_LANCEDB_SDK:-$("$repo/scripts/lancedb/install.sh" 0.31.0):$("$repo/scripts/lancedb/install.sh" 0.39.0)}"
	# The HTTP floor for count_rows: a minimal Go server, timed through each SDK's own client.
	fport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$dir/lancebench" httpfloor "127.0.0.1:$fport" &
	floor_pid=$!
	trap 'kill "$floor_pid" 2>/dev/null || true' EXIT
	export LANCECAT_BENCH_FLOOR_URL="http://127.0.0.1:$fport"
	IFS=: read -ra sdk_dirs <<<"$sdks"
	for d in "${sdk_dirs[@]}"; do
		run_remote "node-$(basename "$d")" node "$here/remote.mjs" "$d"
	done
	if [[ "${LANCECAT_BENCH_PYTHON:-1}" != 0 ]]; then
		venv="$("$repo/scripts/python/install.sh" lancedb-0.40.0)"
		run_remote python-lancedb-0.40.0 "$venv/bin/python" "$here/remote.py"
	fi
	kill "$floor_pid" 2>/dev/null || true
	node "$here/remote-report.mjs" "${results[@]}"
fi
if [[ "$parts" == *" official "* ]]; then
	venv="$("$repo/scripts/python/install.sh" pylance-14.0.2)"
	run_remote official "$venv/bin/python" "$here/official.py"
fi
echo "(raw figures: $dir/results.json, $dir/dataplane-results.json; server log: $dir/lancecat-serve.log)"
