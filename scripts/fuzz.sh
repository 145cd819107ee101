#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a bounded time each (FUZZTIME, default 10s).
# go test accepts one -fuzz target per package per run, so they run one by one.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}

mapfile -t targets < <(grep -rEo --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)\(' . \
  | sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)\($#\1 \2#' | LC_ALL=C sort -u)
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz: no fuzz targets"
  exit 0
fi
# Go 1.26's fuzz coordinator can end a duration-bounded run with a bare "context deadline
# exceeded" and no failing input: a race at the -fuzztime boundary (go.dev/issue/75804, fixed in
# Go 1.27). A real finding always writes its input to testdata/fuzz/<target>/, so a failure that
# wrote none and says exactly that is run again, and a second one is reported but not failed.
flaked=0
corpus_count() { if [[ -d "$1" ]]; then find "$1" -type f | wc -l; else echo 0; fi; }
for t in "${targets[@]}"; do
  pkg=${t% *}
  name=${t#* }
  corpus="$pkg/testdata/fuzz/$name"
  for attempt in 1 2; do
    echo "fuzz: $pkg $name for $fuzztime"
    before=$(corpus_count "$corpus")
    log=$(mktemp)
    # Minimizing a new input may take longer than the whole budget (the default is 60s per
    # input); bound it.
    if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x "./$pkg" 2>&1 | tee "$log"; then
      rm -f "$log"
      break
    fi
    after=$(corpus_count "$corpus")
    if [[ "$after" == "$before" ]] && grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written' "$log"; then
      rm -f "$log"
      if [[ $attempt == 1 ]]; then
        echo "fuzz: $name ended in the Go coordinator's deadline race (no failing input written); running it again"
        continue
      fi
      echo "fuzz: WARNING: $name hit the deadline race twice (no failing input written); not a finding"
      flaked=$((flaked + 1))
      break
    fi
    rm -f "$log"
    echo "fuzz: $name failed; its input is in $corpus" >&2
    exit 1
  done
done
echo "fuzz: ${#targets[@]} targets passed ($flaked hit the deadline race twice)"
