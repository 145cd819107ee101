#!/usr/bin/env bash
# Copies one pinned set of Maven jars (scripts/python/maven-versions.txt) from Maven Central into a
# directory of its own under the cache, once, and prints that directory (the jars are in its
# jars/). The directory's name carries a hash of the set's lines, so changing a pin makes a new one
# and never touches one a running test uses. Maven's own repository (the plugin it runs, the jars
# it downloads) is kept under the cache too, not in ~/.m2.
#
# Like scripts/python/install.sh it is safe to run concurrently (an exclusive flock, a temporary
# directory renamed into place once every pinned jar is there).
#
# Exit status 75 (EX_TEMPFAIL) when Maven Central does not answer at all: the callers skip the
# suites that need the jars with that message instead of failing (the only allowed skip).
#
# usage: scripts/python/install-maven.sh <set>     (e.g. lance-spark-0.4.0; every set: --sets)
#        scripts/python/install-maven.sh --sets    prints the sets, one a line, in file order
# env:   LANCECAT_CACHE   cache root (default $HOME/.cache/lancecat)
set -euo pipefail

# shellcheck source=../lib/install-once.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/install-once.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pins="$here/maven-versions.txt"
if [[ "${1:-}" == "--sets" ]]; then
	awk '!/^#/ && NF { if (!seen[$1]++) print $1 }' "$pins"
	exit 0
fi
set_name="${1:?usage: scripts/python/install-maven.sh <set> (--sets lists them)}"
cache="${LANCECAT_CACHE:-$HOME/.cache/lancecat}/maven"

coords=$(awk -v s="$set_name" '!/^#/ && $1 == s { print $2 }' "$pins")
if [[ -z "$coords" ]]; then
	echo "install-maven.sh: no set '$set_name' in $pins" >&2
	exit 2
fi
if ! command -v mvn >/dev/null; then
	echo "install-maven.sh: no mvn on PATH (Maven installs the pinned jars)" >&2
	exit 2
fi
key=$(echo "$coords" | sha256sum | cut -c1-12)
dir="$cache/$set_name-$key"

mvn_install() {
	local tmp=$1
	start=$SECONDS
	echo "install-maven.sh: installing $set_name into $dir" >&2
	# A pom listing every pinned jar with nothing transitive: the set is the complete lock.
	{
		echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
		echo '<groupId>lancecat</groupId><artifactId>lancecat-jars</artifactId><version>0</version><dependencies>'
		while IFS=: read -r g a v; do
			echo "<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version>"
			echo '<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>'
		done <<<"$coords"
		echo '</dependencies></project>'
	} >"$tmp/pom.xml"
	if ! mvn -B -q -f "$tmp/pom.xml" -Dmaven.repo.local="$cache/repo" \
		dependency:copy-dependencies -DoutputDirectory="$tmp/jars" >"$tmp/mvn.log" 2>&1; then
		if grep -qiE "unknown ?host|connect timed out|connection refused|network is unreachable|no route to host|could not transfer" "$tmp/mvn.log" &&
			! grep -qiE "could not find artifact|not found" "$tmp/mvn.log"; then
			echo "install-maven.sh: Maven Central is unreachable: cannot install $set_name" >&2
			tail -5 "$tmp/mvn.log" >&2
			exit 75
		fi
		echo "install-maven.sh: mvn failed installing $set_name (Central answers: a pin is wrong?)" >&2
		tail -20 "$tmp/mvn.log" >&2
		exit 1
	fi
	want=$(echo "$coords" | wc -l)
	got=$(find "$tmp/jars" -name '*.jar' | wc -l)
	if [[ "$want" != "$got" ]]; then
		echo "install-maven.sh: $set_name pins $want jars, Maven copied $got" >&2
		exit 1
	fi
	echo "install-maven.sh: $set_name installed in $((SECONDS - start))s" >&2
	rm -f "$tmp/mvn.log"
}
install_once "$cache" "$set_name" "$dir" mvn_install
echo "$dir"
