#!/usr/bin/env bash
# Authorization at listing scale (issue 13), against a real OpenFGA (scripts/with-services.sh):
#   - ListTables of every table of a namespace of 1,000 and 2,000 tables (then 10,000) with
#     authorization off, and on for the estate admin, a namespace reader and a caller holding
#     reader on 10 of the tables (p50/p99, and the ratio to off; acceptance at 2,000: on ≤ 3 × off
#     + 10 ms), a caller who sees nothing refused (403), and DescribeTable for each caller;
#   - creates per second (DeclareTable) with authorization off and on, 1 and 8 at a time.
#
# usage: scripts/bench/authz.sh [benchtime]     (default 20x for listings, 200x for creates)
# env:   LANCECAT_BENCH_SKIP_10K=1   skip the 10,000-table run (its setup takes a minute or two)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
list_time="${1:-20x}"
cd "$repo"
run() { "$repo/scripts/with-services.sh" go test -run '^$' -count=1 -timeout 60m "$@" ./server 2>&1 |
	grep -E '^(Benchmark|ok|FAIL|---|    )' || true; }
run -bench 'BenchmarkFilteredListing' -benchtime "$list_time"
run -bench 'BenchmarkCreates' -benchtime 200x
if [ -z "${LANCECAT_BENCH_SKIP_10K:-}" ]; then
	LANCECAT_BENCH_TABLES=10000 run -bench 'BenchmarkFilteredListing' -benchtime "$list_time"
fi
