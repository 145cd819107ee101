#!/usr/bin/env bash
# Prints the directory holding PostgreSQL's server programs (initdb, postgres, pg_ctl, psql) of
# the major version pinned in versions.env: Debian's installed package when present
# (/usr/lib/postgresql/<major>/bin), else the packages fetched with `apt-get download` and unpacked
# under $LANCECAT_CACHE/postgresql-<major>-<version>/ (run with LD_LIBRARY_PATH=<dir>/../lib, which
# this prints on a second line when it is needed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"
cache=${LANCECAT_CACHE:-$HOME/.cache/lancecat}
log() { echo "postgres.sh: $*" >&2; }
major=$POSTGRESQL_MAJOR

if [[ -x "/usr/lib/postgresql/$major/bin/initdb" && -x "/usr/lib/postgresql/$major/bin/postgres" ]]; then
  echo "/usr/lib/postgresql/$major/bin"
  exit 0
fi
for dir in "$cache"/postgresql-"$major"-*; do
  if [[ -f "$dir/.complete" ]]; then
    echo "$dir/usr/lib/postgresql/$major/bin"
    echo "$dir/usr/lib/x86_64-linux-gnu"
    exit 0
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download "postgresql-$major" "postgresql-client-$major" libpq5 >"$work/apt.log" 2>&1; then
  cat "$work/apt.log" >&2
  log "could not fetch postgresql-$major from Debian's archive"
  exit 1
fi
version=$(dpkg-deb -f postgresql-"$major"_*.deb Version)
dest="$cache/postgresql-$major-$version"
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
for deb in ./*.deb; do dpkg -x "$deb" "$dest.tmp"; done
LD_LIBRARY_PATH="$dest.tmp/usr/lib/x86_64-linux-gnu" "$dest.tmp/usr/lib/postgresql/$major/bin/postgres" --version >&2 ||
  { log "the unpacked postgres does not run (missing libraries: install postgresql-$major)"; exit 1; }
touch "$dest.tmp/.complete"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$dest/usr/lib/postgresql/$major/bin"
echo "$dest/usr/lib/x86_64-linux-gnu"
