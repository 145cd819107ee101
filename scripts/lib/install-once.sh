# shellcheck shell=bash
# install_once: the one copy of the installers' (scripts/lancedb/install.sh,
# scripts/python/install.sh, scripts/python/install-maven.sh) concurrency-safe
# fill of a cache entry. Sourced, not run.
#
# usage: install_once <cache> <name> <dir> <fill>
#
# Makes <dir> once, however many callers race: under an exclusive flock on
# <cache>/.<name>.lock, <fill> is called with a fresh temporary directory
# beside it (<cache>/.tmp-<name>-XXXXXX) and fills it; only when it returns 0
# is the temporary directory marked (.installed) and renamed to <dir>, so no
# caller ever sees a half-made entry and the fast path trusts the marker alone
# (before the lock, a second caller's rm -rf could empty a directory a first
# caller had already printed). A caller that waited on the lock finds the
# entry made and returns. <fill> runs in a subshell: its exit status (75, say,
# for "the network does not answer") is install_once's.
install_once() {
	local cache=$1 name=$2 dir=$3 fill=$4
	if [[ -f "$dir/.installed" ]]; then
		return 0
	fi
	mkdir -p "$cache"
	(
		exec 9>"$cache/.$name.lock"
		flock 9
		# Someone else may have installed it while we waited.
		if [[ -f "$dir/.installed" ]]; then
			exit 0
		fi
		rm -rf "$dir" "$cache/.tmp-$name-"*
		tmp=$(mktemp -d "$cache/.tmp-$name-XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		"$fill" "$tmp"
		touch "$tmp/.installed"
		mv "$tmp" "$dir"
		trap - EXIT
	)
}
