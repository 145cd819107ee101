#!/usr/bin/env bash
# Installs the official LanceDB Node SDK into a per-version cache directory
# (once) and prints that directory. The SDK is our oracle for the Lance file
# and table formats; pinning exact versions keeps fixtures reproducible.
#
# Safe to run concurrently (several test runs or helpers at once): the install
# happens under an exclusive flock into a temporary directory beside the cache
# entry and is renamed into place only when npm succeeded, so no caller ever
# sees a half-installed SDK (before, a second caller's `rm -rf` could empty the
# directory a first caller had already printed).
#
# usage: scripts/lancedb/install.sh [version]   (default 0.31.0)
# env:   LANCECAT_CACHE  cache root (default $HOME/.cache/lancecat)
set -euo pipefail

version="${1:-0.31.0}"
cache="${LANCECAT_CACHE:-$HOME/.cache/lancecat}"
dir="$cache/lancedb-$version"

# A completed install leaves a marker; a half-finished one (interrupted npm)
# is never renamed into place, so the fast path trusts the marker alone.
if [[ ! -f "$dir/.installed" ]]; then
	mkdir -p "$cache"
	(
		exec 9>"$cache/.lancedb-$version.lock"
		flock 9
		# Someone else may have installed it while we waited.
		if [[ -f "$dir/.installed" ]]; then
			exit 0
		fi
		rm -rf "$dir" "$cache/.tmp-lancedb-$version."*
		tmp=$(mktemp -d "$cache/.tmp-lancedb-$version.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		# Progress goes to stderr so stdout is only the directory.
		npm i --prefix "$tmp" --no-audit --no-fund --loglevel=error -E \
			"@lancedb/lancedb@$version" "apache-arrow@18" >&2
		touch "$tmp/.installed"
		mv "$tmp" "$dir"
		trap - EXIT
	)
fi
echo "$dir"
