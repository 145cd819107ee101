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
for t in "${targets[@]}"; do
  pkg=${t% *}
  name=${t#* }
  echo "fuzz: $pkg $name for $fuzztime"
  # Minimizing a new input may take longer than the whole budget (the default is 60s per input);
  # bound it so a bounded run never ends in "context deadline exceeded".
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 100x "./$pkg"
done
echo "fuzz: ${#targets[@]} targets passed"
