#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Set-up for tests/systemd/run.sh, not a test: everything it needs from
# Debian's repositories, so that the test itself downloads nothing.
#   - the Debian 12 root (mmdebstrap, minbase with systemd, dbus and curl),
#     made once into CACHE/root-base;
#   - the package lists (CACHE/lists) and the runtime libraries the package
#     will depend on that the root lacks (CACHE/archives), fetched by apt in
#     the root: the test then installs the package with
#     `apt-get install --no-download` in a container without a network.
# The libraries are the ones dpkg-shlibdeps finds for the built agent
# (BUILD_DIR/nettune: what the package's ${shlibs:Depends} will say) and the
# names debian/control's Depends lists itself.
# Usage: prepare.sh BUILD_DIR. CACHE is NETTUNE_SYSTEMD_CACHE, default
# /var/cache/nettune-systemd. Where the test would be skipped (not root, no
# systemd-nspawn or mmdebstrap) it prepares nothing and says why.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: prepare.sh BUILD_DIR}" && pwd)
cache=${NETTUNE_SYSTEMD_CACHE:-/var/cache/nettune-systemd}
log() { echo "prepare: systemd: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then log "not root: nothing to prepare (the test needs root)"; exit 0; fi
for c in systemd-nspawn mmdebstrap dpkg-shlibdeps; do
	command -v "$c" >/dev/null || { log "$c missing: nothing prepared (the test skips without it)"; exit 0; }
done
[ -x "$build/nettune" ] || { log "no $build/nettune: build first"; exit 1; }

mkdir -p "$cache/lists/partial" "$cache/archives/partial"
if [ ! -x "$cache/root-base/lib/systemd/systemd" ]; then
	log "making the Debian 12 root (once; cached in $cache)"
	rm -rf "$cache/root-base.tmp"
	if ! mmdebstrap --variant=minbase --include=systemd,systemd-sysv,dbus,curl,ca-certificates,procps \
		bookworm "$cache/root-base.tmp" http://deb.debian.org/debian >"$cache/mmdebstrap.log" 2>&1; then
		tail -5 "$cache/mmdebstrap.log" >&2
		rm -rf "$cache/root-base.tmp"
		log "mmdebstrap failed (log: $cache/mmdebstrap.log)"
		exit 1
	fi
	mv "$cache/root-base.tmp" "$cache/root-base"
fi

# The package's runtime dependencies: shlibs of the agent, and the literal
# names of debian/control's Depends (not the ${...} substitutions).
shlibs=$(cd "$src" && dpkg-shlibdeps -O -e"$build/nettune" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
literal=$(awk '/^Package: nettune$/ { p = 1 } p && /^Depends:/ { d = 1; sub(/^Depends:/, ""); print; next }
	d && /^[ \t]/ { print; next } { d = 0 }' "$src/debian/control")
mapfile -t deps < <(printf '%s,%s\n' "$shlibs" "$literal" | tr ',' '\n' |
	sed 's/([^)]*)//g; s/|.*//; s/[[:space:]]//g' | grep -v -e '^$' -e '^\$' | sort -u)
[ ${#deps[@]} -gt 0 ] || { log "found no runtime dependency of $build/nettune"; exit 1; }
missing=()
for p in "${deps[@]}"; do
	dpkg-query --admindir="$cache/root-base/var/lib/dpkg" -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
log "runtime dependencies: ${deps[*]}; not in the root: ${missing[*]:-none}"

# apt in the root, its changes to the root itself thrown away (a volatile
# overlay): only the bound lists and archives keep what it fetched.
if ! systemd-nspawn --quiet --register=no --keep-unit --volatile=overlay -D "$cache/root-base" \
	--bind="$cache/lists:/var/lib/apt/lists" --bind="$cache/archives:/var/cache/apt/archives" \
	--pipe /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--download-only --no-install-recommends ${missing[*]}" >"$cache/prepare.log" 2>&1; then
	tail -20 "$cache/prepare.log" >&2
	log "apt-get in the root could not fetch the lists or the libraries"
	exit 1
fi
log "ready: $(ls "$cache"/archives/*.deb 2>/dev/null | wc -l) package(s) in $cache/archives"
