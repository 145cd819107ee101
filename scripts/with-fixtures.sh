#!/usr/bin/env bash
# Runs a command with the LanceDB SDK fixtures available: writes them with the pinned official
# SDKs (scripts/lancedb/fixtures.sh) into the cache when the fixture scripts changed, exports their
# location, and runs the command. `make test` wraps `go test` in this, so the interop tests never
# skip there.
#
# usage: scripts/with-fixtures.sh <command...>
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${LANCECAT_CACHE:-$HOME/.cache/lancecat}"

# Fixtures are a function of the scripts that write them (which pin the SDK versions).
key=$(cat "$here"/lancedb/*.sh "$here"/lancedb/*.mjs | sha256sum | cut -c1-16)
dir="$cache/fixtures/$key"
if [[ ! -f "$dir/.complete" ]]; then
  echo "with-fixtures: writing LanceDB SDK fixtures into $dir (once per fixture-script change)" >&2
  rm -rf "$dir.tmp"
  mkdir -p "$dir.tmp"
  "$here/lancedb/fixtures.sh" "$dir.tmp" >&2
  for extra in "$here"/lancedb/*-fixtures.sh; do
    [[ -e "$extra" ]] || continue
    "$extra" "$dir.tmp" >&2
  done
  touch "$dir.tmp/.complete"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
fi
export LANCECAT_LANCEDB_FIXTURES="$dir"
exec "$@"
