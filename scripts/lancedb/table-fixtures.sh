#!/usr/bin/env bash
# Writes the table-format fixtures (history, deletes, indices, tags, a branch,
# compaction; both data storage versions; a V1-named table) with every SDK
# version we interoperate with: <out>/<sdk-version>/{*.lance,expected.json}.
# Then run the Go tests against them:
#
#   LANCE_TABLE_FIXTURES=<out> go test ./lance/ -run SDKTable
#
# usage: scripts/lancedb/table-fixtures.sh <out-dir> [sdk-version...]
set -euo pipefail

if [[ $# -lt 1 ]]; then
	echo "usage: $0 <out-dir> [sdk-version...]" >&2
	exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
shift
versions=("$@")
[[ ${#versions[@]} -gt 0 ]] || versions=(0.31.0 0.39.0)
mkdir -p "$out"
out="$(cd "$out" && pwd)"

for version in "${versions[@]}"; do
	sdk="$("$here/install.sh" "$version")"
	RUST_LOG=error LANCEDB_LOG=error node "$here/table-fixtures.mjs" write "$sdk" "$out/$version"
done
echo "export LANCE_TABLE_FIXTURES=$out"
