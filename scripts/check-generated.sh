#!/usr/bin/env bash
# Fails when `make generate` changes any generated file: generated code must match its sources
# (and is never edited by hand).
set -euo pipefail
cd "$(dirname "$0")/.."

generated=(gen client/nsclient client/controlclient lance/pb authz/model.json server/routes_gen_test.go docs/reference)
snapshot() {
  find "${generated[@]}" -type f 2>/dev/null | LC_ALL=C sort | xargs -r sha256sum
}
# The Lance spec lives outside the repo (the pin names it); without it gen/nsapi cannot be
# regenerated, and the spec package's TestGeneratedCodeIsFromThePin checks it against the pin instead.
pinned=${SPEC:-$(sed -n 's/^ *"file": *"\(.*\)",*$/\1/p' spec/lance-namespace.pin.json)}
if [[ ! -f "$pinned" ]]; then
  echo "check-generated: the pinned spec $pinned is absent: gen/nsapi and client/nsclient are not regenerated (spec/TestGeneratedCodeIsFromThePin and TestClientAndServerFromOneSpec check them against the pin)" >&2
fi
if [[ ! -d ../shared/lance-format/protos ]]; then
  echo "check-generated: ../shared/lance-format/protos is absent: lance/pb is not regenerated" >&2
fi
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
