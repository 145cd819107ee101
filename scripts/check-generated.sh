#!/usr/bin/env bash
# Fails when `make generate` changes any generated file: generated code must match its sources
# (and is never edited by hand).
set -euo pipefail
cd "$(dirname "$0")/.."

generated=(gen lance/pb authz/model.json)
snapshot() {
  find "${generated[@]}" -type f 2>/dev/null | LC_ALL=C sort | xargs -r sha256sum
}
before=$(snapshot)
make --no-print-directory generate >/dev/null
after=$(snapshot)
if [[ "$before" != "$after" ]]; then
  echo "check-generated: 'make generate' changed generated files:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  git --no-pager diff --stat -- "${generated[@]}" >&2 || true
  echo "Regenerate with 'make generate' and commit the result; never edit generated code by hand." >&2
  exit 1
fi
echo "check-generated: generated code matches its sources"
