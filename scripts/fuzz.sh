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
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$pkg"
done
echo "fuzz: ${#targets[@]} targets passed"
