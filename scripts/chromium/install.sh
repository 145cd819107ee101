#!/usr/bin/env bash
# Installs headless Chromium for the console's browser tests (console/browser_test.go) and prints
# the absolute path of the browser binary.
#
#   scripts/chromium/install.sh
#
# Debian's own package, in order of preference:
#   1. a chromium already on PATH (nothing to do);
#   2. as root: `apt-get install chromium` (the system package, with its libraries);
#   3. otherwise: `apt-get download` the chromium packages and `dpkg-deb -x` them into
#      ${LANCECAT_CACHE:-$HOME/.cache/lancecat}/chromium/<version>/ (works when the shared
#      libraries it needs are already installed, as on a machine with any desktop stack).
# Idempotent and safe to run concurrently: the work runs under an exclusive flock, and an
# extraction is renamed into place only once complete, so an interrupted run never leaves a
# half-extracted browser that looks cached. Exits non-zero, saying why, when none of the three works;
# the browser tests then skip with that message (and fail under LANCECAT_REQUIRE_SERVICES=1).
set -euo pipefail

CACHE_DIR="${LANCECAT_CACHE:-$HOME/.cache/lancecat}/chromium"
log() { echo "chromium/install.sh: $*" >&2; }

find_on_path() {
	local b
	for b in chromium chromium-browser google-chrome-stable google-chrome; do
		if command -v "$b" >/dev/null 2>&1; then
			command -v "$b"
			return 0
		fi
	done
	return 1
}

find_cached() {
	local d
	for d in "$CACHE_DIR"/*/usr/lib/chromium/chromium; do
		if [[ -x "$d" ]]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# Fast paths: nothing to lock.
find_on_path && exit 0
find_cached && exit 0

mkdir -p "$CACHE_DIR"
exec 9>"$CACHE_DIR/.lock"
if ! flock -n 9; then
	log "waiting for another install to finish..."
	flock 9
fi
find_on_path && exit 0
find_cached && exit 0

command -v apt-get >/dev/null 2>&1 || {
	log "no chromium on PATH and no apt-get to install Debian's package"
	exit 1
}

if [[ $(id -u) -eq 0 ]]; then
	log "installing Debian's chromium with apt-get (first time only)..."
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2; then
		log "apt-get install failed; refreshing the package lists once and retrying"
		apt-get update >&2 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2
	fi
	find_on_path && exit 0
	log "apt-get installed chromium but no browser binary is on PATH"
	exit 1
fi

command -v dpkg-deb >/dev/null 2>&1 || {
	log "not root (apt-get install needs it) and no dpkg-deb to extract the package"
	exit 1
}
version=$(apt-cache policy chromium 2>/dev/null | sed -n 's/^ *Candidate: *//p')
[[ -n "$version" && "$version" != "(none)" ]] || {
	log "not root, and apt knows no chromium package to download (run apt-get update as root?)"
	exit 1
}
rm -rf "$CACHE_DIR/.tmp."*
tmp=$(mktemp -d "$CACHE_DIR/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "not root: downloading chromium $version and extracting it into $CACHE_DIR..."
(cd "$tmp" && apt-get download chromium chromium-common >&2)
mkdir "$tmp/root"
for deb in "$tmp"/*.deb; do
	dpkg-deb -x "$deb" "$tmp/root"
done
[[ -x "$tmp/root/usr/lib/chromium/chromium" ]] || {
	log "the extracted package has no usr/lib/chromium/chromium"
	exit 1
}
safe=${version//[^A-Za-z0-9.+~-]/_}
rm -rf "${CACHE_DIR:?}/$safe"
mv "$tmp/root" "$CACHE_DIR/$safe"
find_cached
