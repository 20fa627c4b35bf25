#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepare the lab's second guest kernel (tests/lab/README.md, "Two kernels"):
# the newest kernel Debian ships, linux-image-amd64 of trixie-backports (7.3
# on 2026-12-04), with an out-of-tree netdevsim built from that kernel's
# source, patched with tests/lab/netdevsim-rxnfc-7.patch. The same layout as
# prepare.sh makes (KDIR/vmlinuz, KDIR/lib/modules/KVER with
# extra/netdevsim.ko and depmod run, KDIR/KVER), so run.sh and
# mkinitramfs.sh take either.
#
# Installs nothing on this machine. The suite's package lists are read into
# the cache with apt's own options (this machine's sources are not touched);
# packages come with `apt-get download` and are unpacked with `dpkg -x`. That
# kernel is built with gcc-14 and its kbuild tools need glibc 2.38, which
# Debian 12 lacks, so netdevsim is compiled in a throw-away trixie root
# (mmdebstrap, a test dependency) holding the kernel's headers, in a private
# mount namespace that gives it /proc; the root is removed once the module
# is built.
#
# Cached in ${NETTUNE_LAB_CACHE:-/var/cache/nettune-lab}/kernels-newest/KVER,
# made visible by a rename once complete and keyed by the patch's hash (a
# changed patch rebuilds netdevsim only, from the pristine sources kept in
# KVER/netdevsim-src: nothing of the kernel is downloaded again); the
# package lists are read again at most once a day (NETTUNE_LAB_REFRESH=1:
# now), so a run resolves the same kernel as the last one did that day.
# Prints KDIR on stdout. Exit 77 when nothing can be downloaded and nothing is
# cached (no registry, no mmdebstrap); NETTUNE_LAB_OFFLINE=1 uses the cache
# only. NETTUNE_LAB_MIRROR: the Debian mirror (default: this machine's).
set -euo pipefail

CACHE=${NETTUNE_LAB_CACHE:-/var/cache/nettune-lab}
SUITE=trixie-backports
BASE_SUITE=trixie
log() { echo "prepare-newest: $*" >&2; }
skip() { echo "prepare-newest: SKIP: $*" >&2; exit 77; }
die() { echo "prepare-newest: ERROR: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
patchfile=$here/netdevsim-rxnfc-7.patch
[ -f "$patchfile" ] || die "$patchfile missing"
phash=$(sha256sum "$patchfile" | cut -d' ' -f1)
kernels=$CACHE/kernels-newest
mkdir -p "$kernels" "$CACHE/apt-newest/lists/partial" "$CACHE/apt-newest/cache/archives/partial" ||
    die "cannot create the cache in $CACHE"
exec 9>"$CACHE/.lock-newest"
flock 9
rm -rf "$kernels"/.work-* "$CACHE"/debs-newest/.dl.* 2>/dev/null || true

newest_cached() {
    local d best=
    for d in "$kernels"/*/; do
        [ -f "$d/.complete" ] && [ "$(cat "$d/netdevsim.patch-sha256" 2>/dev/null)" = "$phash" ] && best=${d%/}
    done
    [ -n "$best" ] && echo "$best"
}
offline() {
    if cached=$(newest_cached); then
        log "$1; using the cached kernel $(basename "$cached")"
        echo "$cached"; exit 0
    fi
    skip "$1, and no kernel is cached in $kernels"
}
[ "${NETTUNE_LAB_OFFLINE:-0}" = 1 ] && offline "NETTUNE_LAB_OFFLINE=1"

# The suite's lists, apart from this machine's own.
mirror=${NETTUNE_LAB_MIRROR:-}
if [ -z "$mirror" ]; then
    mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
    [ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\(http[^ ]*\/debian\)\/* .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n1)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || skip "no $keyring (Debian package debian-archive-keyring)"
aptdir=$CACHE/apt-newest
printf 'deb [signed-by=%s] %s %s main\ndeb [signed-by=%s] %s %s main\n' \
    "$keyring" "$mirror" "$SUITE" "$keyring" "$mirror" "$BASE_SUITE" > "$aptdir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache" -o Dir::State::Status=/dev/null
          -o APT::Sandbox::User=root)
if [ "${NETTUNE_LAB_REFRESH:-0}" = 1 ] || [ -z "$(find "$aptdir/lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null)" ]; then
    log "reading the package lists of $SUITE and $BASE_SUITE from $mirror"
    apt-get "${apt_opts[@]}" update -qq >&2 || offline "apt-get update of $SUITE failed (no package registry?)"
fi
# The suite's linux-image-amd64 names the kernel (backports are never the
# candidate version, so pick its version by suite).
metaver=$(apt-cache "${apt_opts[@]}" madison linux-image-amd64 2>/dev/null |
          awk -F'|' -v s=" $SUITE/" 'index($3, s) {gsub(/ /, "", $2); print $2; exit}')
[ -n "$metaver" ] || offline "no linux-image-amd64 in $SUITE"
kpkg=$(apt-cache "${apt_opts[@]}" show "linux-image-amd64=$metaver" |
       sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*-amd64\) (= [^)]*).*/\1/p' | head -n1)
[ -n "$kpkg" ] || die "cannot read the kernel package linux-image-amd64=$metaver depends on"
kver=${kpkg#linux-image-}                      # 7.3.4+deb13-amd64
series=$(echo "$kver" | cut -d. -f1-2)          # 7.3
kdir=$kernels/$kver
if [ -f "$kdir/.complete" ] && [ "$(cat "$kdir/netdevsim.patch-sha256" 2>/dev/null)" = "$phash" ]; then
    log "cached: $kdir"
    echo "$kdir"; exit 0
fi
command -v mmdebstrap >/dev/null || offline "mmdebstrap is not installed (it makes the root netdevsim for $kver is built in)"
[ "$(id -u)" = 0 ] || offline "building netdevsim for $kver needs root (a chroot)"

# build_netdevsim OUT: netdevsim.ko from OUT/netdevsim-src with the patch, in a
# throw-away trixie root with the kernel's headers (and so gcc-14 and kbuild)
# and pahole for the module's BTF, into OUT/lib/modules/KVER/extra; depmod;
# OUT keyed by the patch's hash and marked complete.
build_netdevsim() {
    local out=$1 root=$work/root t1
    t1=$(date +%s)
    log "making a $BASE_SUITE root with linux-headers-$kver (mmdebstrap)"
    mmdebstrap --quiet --variant=buildd --include="linux-headers-$kver,pahole" "$BASE_SUITE" "$root" \
        "deb [signed-by=$keyring] $mirror $BASE_SUITE main" "deb [signed-by=$keyring] $mirror $SUITE main" \
        >"$work/mmdebstrap.log" 2>&1 || { tail -n 20 "$work/mmdebstrap.log" >&2; offline "mmdebstrap of $BASE_SUITE failed"; }
    log "root made in $(( $(date +%s) - t1 )) s"
    cp -a "$out/netdevsim-src" "$root/root/nsim"
    patch -p1 -s -d "$root/root/nsim" <"$patchfile" || die "$patchfile does not apply to $series's netdevsim"
    t1=$(date +%s)
    # objtool reads /proc: mounted in a mount namespace of its own, gone with it.
    unshare -m sh -c 'mount -t proc proc "$1/proc" && chroot "$1" make -C "/usr/src/linux-headers-$2" M=/root/nsim CONFIG_NETDEVSIM=m -j"$3" modules' \
        sh "$root" "$kver" "$(nproc)" >"$work/build.log" 2>&1 ||
        { tail -n 30 "$work/build.log" >&2; die "netdevsim build for $kver failed"; }
    log "netdevsim built in $(( $(date +%s) - t1 )) s"
    mkdir -p "$out/lib/modules/$kver/extra"
    rm -f "$out/lib/modules/$kver/extra/netdevsim.ko"
    cp "$root/root/nsim/netdevsim.ko" "$out/lib/modules/$kver/extra/"
    strip --strip-debug "$out/lib/modules/$kver/extra/netdevsim.ko"
    rm -rf "$root"
    depmod -b "$out" "$kver"
    echo "$phash" >"$out/netdevsim.patch-sha256"
    echo "$kver" >"$out/KVER"
    touch "$out/.complete"
}

t0=$(date +%s)
work=$(mktemp -d "$kernels/.work-$kver.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$work/out

# The kernel is cached and only the patch changed: the kernel's packages are
# not downloaded again (they are not kept); netdevsim is rebuilt from the
# pristine sources kept beside it, in a copy made visible by a rename.
if [ -f "$kdir/.complete" ] && [ -d "$kdir/netdevsim-src" ]; then
    log "the patch changed: rebuilding netdevsim only for the cached $kver"
    cp -a "$kdir" "$out"
    rm -f "$out/.complete" "$out/netdevsim.patch-sha256"
    build_netdevsim "$out"
    mv "$kdir" "$work/old"
    mv "$out" "$kdir"
    log "prepared $kdir in $(( $(date +%s) - t0 )) s"
    echo "$kdir"
    exit 0
fi

debs=$CACHE/debs-newest
mkdir -p "$debs"
fetch() {   # fetch PKG VERSION: the .deb's path, downloaded once
    local pkg=$1 ver=$2 f tmp
    f=$(ls "$debs/${pkg}_"*.deb 2>/dev/null | grep -F "_${ver//:/%3a}_" | head -n1 || true)
    if [ -n "$f" ]; then echo "$f"; return 0; fi
    tmp=$(mktemp -d "$debs/.dl.XXXXXX")
    log "downloading $pkg=$ver"
    if ! (cd "$tmp" && apt-get "${apt_opts[@]}" download -q "$pkg=$ver" >&2); then
        rm -rf "$tmp"; return 1
    fi
    f=$(ls "$tmp"/*.deb | head -n1)
    mv "$f" "$debs/"
    rm -rf "$tmp"
    echo "$debs/$(basename "$f")"
}
# linux-image-KVER is a 2 KB package: the kernel is in linux-binary-KVER, the
# modules in linux-modules-KVER, and config, System.map and modules.builtin*
# (without which depmod cannot index the tree) in linux-base-KVER.
parts=()
for p in binary modules base; do
    parts+=("$(fetch "linux-$p-$kver" "$metaver")") || offline "apt-get download linux-$p-$kver failed"
done
src=$(fetch "linux-source-$series" "$metaver") || offline "apt-get download linux-source-$series failed"
log "downloads ready in $(( $(date +%s) - t0 )) s"

mkdir -p "$out/lib/modules"
for d in "${parts[@]}"; do dpkg -x "$d" "$work/img"; done
[ -f "$work/img/usr/lib/modules/$kver/vmlinuz" ] || die "no vmlinuz in linux-binary-$kver"
mv "$work/img/usr/lib/modules/$kver" "$out/lib/modules/$kver"
mv "$out/lib/modules/$kver/vmlinuz" "$out/vmlinuz"
rm -rf "$work/img"

# netdevsim's sources from the kernel's source tarball, kept pristine.
dpkg -x "$src" "$work/src"
tarball=$(ls "$work/src/usr/src/linux-source-$series".tar.* | head -n1)
tar -xf "$tarball" -C "$work" "linux-source-$series/drivers/net/netdevsim"
rm -rf "$work/src"
mv "$work/linux-source-$series/drivers/net/netdevsim" "$out/netdevsim-src"

build_netdevsim "$out"
rm -rf "$kdir"
mv "$out" "$kdir"
# One newest kernel is kept (~250 MB), and none of its downloads.
for d in "$kernels"/*/; do [ "${d%/}" = "$kdir" ] || rm -rf "${d%/}"; done
rm -f "$debs"/*.deb
log "prepared $kdir in $(( $(date +%s) - t0 )) s"
echo "$kdir"
