#!/usr/bin/env bash
# Installs one pinned set of Python clients (scripts/python/versions.txt) into a venv of its own
# under the cache, once, and prints the venv's directory (run its bin/python). The venv's name
# carries a hash of the set's lines and of the interpreter, so changing a pin or the interpreter
# makes a new venv and never touches one a running test uses.
#
# Like scripts/lancedb/install.sh it is safe to run concurrently: the install happens under an
# exclusive flock into a temporary directory beside the cache entry and is renamed into place only
# when pip succeeded and every pinned version imports, so no caller sees a half-installed venv.
# The venv is only ever run as <dir>/bin/python (-m pytest, -m pip), which a rename leaves working.
#
# Exit status 75 (EX_TEMPFAIL) when pip failed and the package index does not answer at all: the
# callers skip the Python suites with that message instead of failing (the only allowed skip).
#
# usage: scripts/python/install.sh <set>         (e.g. lancedb-0.40.0; every set: --sets)
#        scripts/python/install.sh --sets        prints the sets, one a line, in file order
# env:   LANCECAT_CACHE   cache root (default $HOME/.cache/lancecat)
#        LANCECAT_PYTHON  the interpreter to build the venv from (default python3)
set -euo pipefail

# shellcheck source=../lib/install-once.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/install-once.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pins="$here/versions.txt"
if [[ "${1:-}" == "--sets" ]]; then
	awk '!/^#/ && NF { if (!seen[$1]++) print $1 }' "$pins"
	exit 0
fi
set_name="${1:?usage: scripts/python/install.sh <set> (scripts/python/install.sh --sets lists them)}"
python="${LANCECAT_PYTHON:-python3}"
cache="${LANCECAT_CACHE:-$HOME/.cache/lancecat}/python"

reqs=$(awk -v s="$set_name" '!/^#/ && $1 == s { print $2 }' "$pins")
# Packages of the set marked "sdist" (third field): built from their source distribution.
sdists=$(awk -v s="$set_name" '!/^#/ && $1 == s && $3 == "sdist" { split($2, p, "=="); printf "%s%s", sep, p[1]; sep = "," }' "$pins")
if [[ -z "$reqs" ]]; then
	echo "python/install.sh: no set '$set_name' in $pins (sets: $(awk '!/^#/ && NF { if (!seen[$1]++) printf "%s ", $1 }' "$pins"))" >&2
	exit 2
fi
if ! pyver=$("$python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null); then
	echo "python/install.sh: no Python interpreter '$python' (set LANCECAT_PYTHON)" >&2
	exit 2
fi
key=$( (echo "$pyver"; echo "$reqs") | sha256sum | cut -c1-12)
dir="$cache/$set_name-$key"

pip_install() {
	local tmp=$1
	start=$SECONDS
	echo "python/install.sh: installing $set_name (Python $pyver) into $dir" >&2
	"$python" -m venv "$tmp"
	echo "$reqs" >"$tmp/requirements.txt"
	# Binary wheels only (no compiler, no sdist build at test time) but for the packages marked
	# sdist (pure Python: pyspark has no wheel); --no-deps because the set is already a
	# complete lock. Progress goes to stderr so stdout is only the directory.
	formats=(--only-binary=:all:)
	if [[ -n "$sdists" ]]; then
		formats+=("--no-binary=$sdists")
	fi
	if ! "$tmp/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
		"${formats[@]}" --no-deps -r "$tmp/requirements.txt" >&2; then
		if ! "$tmp/bin/python" -m pip download --quiet --disable-pip-version-check --no-input \
			--timeout 15 --retries 1 --no-deps --only-binary=:all: -d "$tmp/probe" "pip" >/dev/null 2>&1; then
			echo "python/install.sh: the package index is unreachable: cannot install $set_name" >&2
			exit 75
		fi
		echo "python/install.sh: pip failed installing $set_name (the index answers: a pin is wrong?)" >&2
		exit 1
	fi
	# The lock must be consistent (pip check) and exactly what is installed.
	"$tmp/bin/python" -m pip check >&2
	"$tmp/bin/python" - "$tmp/requirements.txt" <<-'EOF' >&2
		import sys
		from importlib.metadata import version
		bad = []
		for line in open(sys.argv[1]):
		    name, want = line.strip().split("==")
		    got = version(name)
		    if got != want:
		        bad.append(f"{name}: {got}, pinned {want}")
		if bad:
		    sys.exit("installed versions differ from the pins: " + "; ".join(bad))
	EOF
	echo "python/install.sh: $set_name installed in $((SECONDS - start))s" >&2
}
install_once "$cache" "$set_name" "$dir" pip_install
echo "$dir"
