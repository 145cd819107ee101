#!/usr/bin/env bash
# Installs the pinned test-service binaries (MinIO, OpenFGA) from the Go module
# proxy into a per-version cache and prints their absolute paths, one per line.
#
#   scripts/tools.sh minio|openfga|all
#
# Cache layout: ${LANCECAT_CACHE:-$HOME/.cache/lancecat}/bin/<name>-<version>/<binary>
#
# Idempotent and safe to run concurrently: each tool is built under an
# exclusive flock, into a temporary directory on the same filesystem, and only
# renamed into place once `go install` has succeeded, so an interrupted build
# never leaves a partial binary that looks cached.
set -euo pipefail

# ---- Pinned versions: change them here and only here. ----------------------
MINIO_PKG=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
OPENFGA_PKG=github.com/openfga/openfga/cmd/openfga
OPENFGA_VERSION=v1.22.1
# -----------------------------------------------------------------------------

CACHE_DIR="${LANCECAT_CACHE:-$HOME/.cache/lancecat}"
BIN_ROOT="$CACHE_DIR/bin"

usage() {
	echo "usage: $0 minio|openfga|all" >&2
	exit 2
}

log() { echo "tools.sh: $*" >&2; }

# install_tool <name> <package> <version> <binary>
# Prints the absolute path of the installed binary.
install_tool() {
	local name=$1 pkg=$2 version=$3 binary=$4
	local dest_dir="$BIN_ROOT/$name-$version"
	local dest="$dest_dir/$binary"

	# Fast path: already cached (binaries are only ever renamed into place).
	if [[ -x "$dest" ]]; then
		echo "$dest"
		return 0
	fi

	command -v go >/dev/null 2>&1 || {
		log "go not found in PATH; needed to build $pkg@$version"
		return 1
	}
	mkdir -p "$BIN_ROOT"

	# Everything below runs in a subshell holding the lock on fd 9, so the
	# lock (and the temp-dir cleanup trap) are scoped to this one tool.
	(
		exec 9>"$BIN_ROOT/.$name-$version.lock"
		if ! flock -n 9; then
			log "waiting for another build of $name $version to finish..."
			flock 9
		fi

		# Someone else may have built it while we waited.
		if [[ -x "$dest" ]]; then
			echo "$dest"
			exit 0
		fi

		# We hold the lock, so any leftover temp dir for this tool is from an
		# interrupted build and can go.
		rm -rf "$BIN_ROOT/.tmp-$name-$version."*

		tmp=$(mktemp -d "$BIN_ROOT/.tmp-$name-$version.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM

		log "building $pkg@$version (first time only; this takes a few minutes)..."
		start=$SECONDS
		# Run outside any module/workspace so the repo's go.mod/go.work can't
		# influence the build; `go install pkg@version` uses the tool's own go.mod.
		if ! (cd "$tmp" && GOBIN="$tmp" GOWORK=off \
			go install "$pkg@$version" >&2); then
			log "go install $pkg@$version failed"
			exit 1
		fi
		if [[ ! -x "$tmp/$binary" ]]; then
			log "go install $pkg@$version did not produce $binary"
			exit 1
		fi
		mkdir -p "$dest_dir"
		mv -f "$tmp/$binary" "$dest" # same filesystem: atomic rename
		log "installed $name $version in $((SECONDS - start))s: $dest"
		echo "$dest"
	)
}

install_minio() { install_tool minio "$MINIO_PKG" "$MINIO_VERSION" minio; }
install_openfga() { install_tool openfga "$OPENFGA_PKG" "$OPENFGA_VERSION" openfga; }

[[ $# -eq 1 ]] || usage
case "$1" in
minio) install_minio ;;
openfga) install_openfga ;;
all)
	install_minio
	install_openfga
	;;
-h | --help) usage ;;
*) usage ;;
esac
