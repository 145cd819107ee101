#!/usr/bin/env bash
# Installs the official LanceDB Node SDK into a per-version cache directory
# (once) and prints that directory. The SDK is our oracle for the Lance file
# and table formats; pinning exact versions keeps fixtures reproducible.
#
# usage: scripts/lancedb/install.sh [version]   (default 0.31.0)
# env:   LANCECAT_CACHE  cache root (default $HOME/.cache/lancecat)
set -euo pipefail

version="${1:-0.31.0}"
cache="${LANCECAT_CACHE:-$HOME/.cache/lancecat}"
dir="$cache/lancedb-$version"

# A completed install leaves a marker; a half-finished one (interrupted npm)
# is retried from scratch rather than trusted.
if [[ ! -f "$dir/.installed" ]]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	# Progress goes to stderr so stdout is only the directory.
	npm i --prefix "$dir" --no-audit --no-fund --loglevel=error -E \
		"@lancedb/lancedb@$version" "apache-arrow@18" >&2
	touch "$dir/.installed"
fi
echo "$dir"
