#!/usr/bin/env bash
# Prints the path of an nginx binary from Debian's package, cached under
# $LANCECAT_CACHE/nginx-<version>/ (default ~/.cache/lancecat). The .deb is fetched with
# `apt-get download` and unpacked with `dpkg -x`: nothing is installed system-wide, no root needed
# to run it. The version is pinned in versions.env.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"
cache=${LANCECAT_CACHE:-$HOME/.cache/lancecat}
log() { echo "nginx.sh: $*" >&2; }

for dir in "$cache"/nginx-"$NGINX_DEB_VERSION" "$cache"/nginx-*; do
  if [[ -x "$dir/usr/sbin/nginx" && -f "$dir/.complete" ]]; then
    [[ "$dir" == "$cache/nginx-$NGINX_DEB_VERSION" ]] || log "using cached $(basename "$dir") (the pin is $NGINX_DEB_VERSION)"
    echo "$dir/usr/sbin/nginx"
    exit 0
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
version=$NGINX_DEB_VERSION
if ! apt-get download "nginx=$version" >"$work/apt.log" 2>&1; then
  version=$(apt-cache policy nginx 2>/dev/null | sed -n 's/^ *Candidate: *//p')
  if [[ -z "$version" || "$version" == "(none)" ]]; then
    cat "$work/apt.log" >&2
    log "nginx $NGINX_DEB_VERSION is not served and apt knows no candidate (apt-get update?)"
    exit 1
  fi
  log "nginx $NGINX_DEB_VERSION is no longer served; taking the candidate $version (bump NGINX_DEB_VERSION in versions.env)"
  apt-get download "nginx=$version" >>"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
fi
dest="$cache/nginx-$version"
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
dpkg -x nginx_*.deb "$dest.tmp"
"$dest.tmp/usr/sbin/nginx" -v 2>/dev/null || { log "the unpacked nginx does not run (missing libraries?)"; "$dest.tmp/usr/sbin/nginx" -v; exit 1; }
touch "$dest.tmp/.complete"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$dest/usr/sbin/nginx"
