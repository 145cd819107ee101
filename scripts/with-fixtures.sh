#!/usr/bin/env bash
# Runs a command with the official LanceDB SDKs and their fixture datasets available: installs the
# pinned SDKs (scripts/lancedb/install.sh), writes the fixtures into the cache when the fixture
# scripts changed, exports where they are, and runs the command. `make test` wraps `go test` in
# this, so the interop tests never skip there.
#
#   LANCECAT_LANCEDB_SDK       SDK install dirs, colon-separated (0.31.0:0.39.0)
#   LANCECAT_LANCEDB_FIXTURES  data-file fixtures (scripts/lancedb/fixtures.sh)
#   LANCE_TABLE_FIXTURES       table-format fixtures (scripts/lancedb/table-fixtures.sh)
#   LANCECAT_PYTHON_SDK        Python client venvs (scripts/python/install.sh, pins in
#                              scripts/python/versions.txt), colon-separated, newest first
#   LANCECAT_PYTHON_UNAVAILABLE  set instead (to the reason) when the package index is unreachable:
#                              the Python suites skip with it; any other install failure fails here
#   LANCECAT_PYTHON_<NAME>     the venv of each other set (pylance-14.0.2: LANCECAT_PYTHON_PYLANCE,
#                              spark-3.5.8: LANCECAT_PYTHON_SPARK, ray-2.60.0: LANCECAT_PYTHON_RAY,
#                              daft-0.7.26: LANCECAT_PYTHON_DAFT)
#   LANCECAT_MAVEN_<SET>       the jars of each Maven set (scripts/python/install-maven.sh,
#                              pins in scripts/python/maven-versions.txt): LANCECAT_MAVEN_LANCE_SPARK
#   LANCECAT_MAVEN_UNAVAILABLE set instead (to the reason) when Maven Central is unreachable
#
# usage: scripts/with-fixtures.sh <command...>
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${LANCECAT_CACHE:-$HOME/.cache/lancecat}"

sdks=()
for version in 0.31.0 0.39.0; do
  sdks+=("$("$here/lancedb/install.sh" "$version")")
done

# Fixtures are a function of the scripts that write them (which pin the SDK versions).
key=$(cat "$here"/lancedb/*.sh "$here"/lancedb/*.mjs | sha256sum | cut -c1-16)
dir="$cache/fixtures/$key"
# Written under an exclusive lock: two runs that both found no fixtures (two checkouts sharing
# the cache) once wrote into one .tmp at the same time, and the cache kept one run's expected.json
# beside the other's data files (lance/lancefile TestSDKFixtures: "no such file").
mkdir -p "$cache/fixtures"
(
  flock 9
  if [[ ! -f "$dir/.complete" ]]; then
    echo "with-fixtures: writing LanceDB SDK fixtures into $dir (once per fixture-script change)" >&2
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    "$here/lancedb/fixtures.sh" "$dir.tmp/file" >&2
    "$here/lancedb/table-fixtures.sh" "$dir.tmp/table" >&2
    touch "$dir.tmp/.complete"
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
  fi
) 9>"$cache/fixtures/$key.lock"
pys=()
while read -r set; do
  status=0
  venv=$("$here/python/install.sh" "$set") || status=$?
  if [[ $status == 75 ]]; then
    export LANCECAT_PYTHON_UNAVAILABLE="the package index is unreachable: Python client set $set could not be installed"
    pys=()
    break
  elif [[ $status != 0 ]]; then
    echo "with-fixtures: scripts/python/install.sh $set failed (status $status)" >&2
    exit "$status"
  fi
  case "$set" in
  lancedb-*) pys+=("$venv") ;;
  *)
    # An engine's set (spark-3.5.8): LANCECAT_PYTHON_SPARK, colon-joined if a family has several.
    var="LANCECAT_PYTHON_$(echo "${set%-*}" | tr 'a-z-' 'A-Z_')"
    export "$var=${!var:+${!var}:}$venv"
    ;;
  esac
done < <("$here/python/install.sh" --sets | grep -v '^schemathesis-') # tools are installed by their tests
# The engines' JVM jars (scripts/python/maven-versions.txt): LANCECAT_MAVEN_<SET> is the jars
# directory of each set (lance-spark-0.4.0 -> LANCECAT_MAVEN_LANCE_SPARK); LANCECAT_MAVEN_UNAVAILABLE
# says why instead when Maven Central does not answer.
while read -r set; do
  status=0
  mdir=$("$here/python/install-maven.sh" "$set") || status=$?
  if [[ $status == 75 ]]; then
    export LANCECAT_MAVEN_UNAVAILABLE="Maven Central is unreachable: jar set $set could not be installed"
    break
  elif [[ $status != 0 ]]; then
    echo "with-fixtures: scripts/python/install-maven.sh $set failed (status $status)" >&2
    exit "$status"
  fi
  var="LANCECAT_MAVEN_$(echo "${set%-*}" | tr 'a-z-' 'A-Z_')"
  export "$var=$mdir/jars"
done < <("$here/python/install-maven.sh" --sets)
if [[ ${#pys[@]} -gt 0 ]]; then
  LANCECAT_PYTHON_SDK=$(IFS=:; echo "${pys[*]}")
  export LANCECAT_PYTHON_SDK
fi
LANCECAT_LANCEDB_SDK=$(IFS=:; echo "${sdks[*]}")
export LANCECAT_LANCEDB_SDK
export LANCECAT_LANCEDB_FIXTURES="$dir/file"
export LANCE_TABLE_FIXTURES="$dir/table"
exec "$@"
