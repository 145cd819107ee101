#!/usr/bin/env bash
# Writes the LanceDB fixture datasets for every SDK version we interoperate
# with: <out-dir>/<sdk-version>/... (see write-fixtures.mjs for the layout).
# Point LANCECAT_LANCEDB_FIXTURES at <out-dir> to run the Go fixture tests.
#
# usage: scripts/lancedb/fixtures.sh <out-dir>
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: $0 <out-dir>" >&2
	exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
mkdir -p "$out"

for version in 0.31.0 0.39.0; do
	sdk="$("$here/install.sh" "$version")"
	# The SDK logs a warning per created table on stderr; keep only our lines.
	RUST_LOG=error LANCEDB_LOG=error node "$here/write-fixtures.mjs" "$sdk" "$out/$version"
done
echo "fixtures written to $out (export LANCECAT_LANCEDB_FIXTURES=$(cd "$out" && pwd))"
