#!/usr/bin/env bash
# Runs the fault campaign (issue 36) for [seconds] (default 75) under scripts/with-services.sh
# (OpenFGA; the campaign starts and restarts its own MinIO) and prints, last,
#   faults: N operations, M faults, K anomalies
# exiting 0 only when K is 0. `run.sh --mutant` runs the mutant instead (a build whose S3
# PutIfAbsent is unconditional), which must report anomalies.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
test=TestCampaign
if [[ ${1:-} == --mutant ]]; then
	test=TestMutantIsCaught
	shift
fi
secs=${1:-75}
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [--mutant] [seconds]" >&2; exit 2; }
log=$(mktemp "${TMPDIR:-/tmp}/lancecat-faults.XXXXXX")
trap 'rm -f "$log"' EXIT
cd "$ROOT"
status=0
LANCECAT_REQUIRE_SERVICES=1 LANCECAT_FAULTS_SECONDS=$secs \
	scripts/with-services.sh go test -count=1 -v -timeout $((secs + 600))s -run "^${test}\$" ./scripts/faults/ 2>&1 | tee "$log" || status=$?
summary=$(grep -o 'faults: [0-9]* operations, [0-9]* faults, [0-9]* anomalies' "$log" | tail -1 || true)
if [[ -z "$summary" ]]; then
	echo "faults: 0 operations, 0 faults, 1 anomalies (the campaign did not finish; see above)"
	exit 1
fi
if [[ $test == TestMutantIsCaught ]]; then
	echo "mutant $summary"
	exit "$status"
fi
echo "$summary"
k=$(sed -E 's/.* ([0-9]+) anomalies/\1/' <<<"$summary")
[[ $status -eq 0 && $k -eq 0 ]]
