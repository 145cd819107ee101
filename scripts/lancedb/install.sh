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

# shellcheck source=../lib/install-once.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/install-once.sh"

version="${1:-0.31.0}"
cache="${LANCECAT_CACHE:-$HOME/.cache/lancecat}"
dir="$cache/lancedb-$version"

# Progress goes to stderr so stdout is only the directory.
npm_install() {
	npm i --prefix "$1" --no-audit --no-fund --loglevel=error -E \
		"@lancedb/lancedb@$version" "apache-arrow@18" >&2
}
install_once "$cache" "lancedb-$version" "$dir" npm_install
echo "$dir"
