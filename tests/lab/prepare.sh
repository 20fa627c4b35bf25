#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepare the guest kernel for the VM lab (tests/lab/README.md):
# Debian's own kernel image plus an out-of-tree netdevsim module, because the
# Debian 6.1 config has CONFIG_NETDEVSIM unset.
#
# Installs nothing. Downloads with `apt-get download`, unpacks with `dpkg -x`,
# and builds netdevsim once, into ${NETTUNE_LAB_CACHE:-/var/cache/nettune-lab}.
# The result is keyed by kernel version (CACHE/kernels/KVER) and is only made
# visible by a rename once complete, so a run that died half-way leaves
# nothing that a later run would trust; a second run downloads and builds
# nothing.
#
# netdevsim is built with tests/lab/netdevsim-rxnfc.patch applied (a flow rule
# table and an ntuple feature bit: the lab's test device for flow rules). The
# kernel directory records the patch's hash (KDIR/netdevsim.patch-sha256); when
# the patch changes, only netdevsim is rebuilt, from the pristine netdevsim
# sources kept in KDIR/netdevsim-src and the header packages kept in the cache
# (downloaded again only when they are missing), and its .ko is replaced by a
# rename.
#
# On success prints the path of the prepared kernel directory on stdout:
#   KDIR/vmlinuz, KDIR/lib/modules/KVER/... (with extra/netdevsim.ko, depmod
#   run), KDIR/KVER (a file holding the version).
# Exit 77 when the downloads cannot be had (no registry) and nothing is cached.
# Set NETTUNE_LAB_OFFLINE=1 to use only what is cached.
set -euo pipefail

CACHE=${NETTUNE_LAB_CACHE:-/var/cache/nettune-lab}
log() { echo "prepare: $*" >&2; }
skip() { echo "prepare: SKIP: $*" >&2; exit 77; }
die() { echo "prepare: ERROR: $*" >&2; exit 1; }

mkdir -p "$CACHE/kernels" || die "cannot create cache dir $CACHE"
# One preparer at a time: two ctest runs on one machine share the cache.
exec 9>"$CACHE/.lock"
flock 9
# Holding the lock, any temporary left here is from a run that was killed
# half-way (kill -9, power loss): it is never trusted, only removed.
rm -rf "$CACHE"/kernels/.work-* "$CACHE"/debs/.dl.* 2>/dev/null || true

patchfile="$(cd "$(dirname "$0")" && pwd)/netdevsim-rxnfc.patch"
[ -f "$patchfile" ] || die "$patchfile missing"
phash=$(sha256sum "$patchfile" | cut -d' ' -f1)
# A kernel prepared with this netdevsim patch (offline, an older one would
# boot a netdevsim the guest tests do not expect).
newest_cached() {
    local d best=
    for d in "$CACHE"/kernels/*/; do
        [ -f "$d/.complete" ] && [ "$(cat "$d/netdevsim.patch-sha256" 2>/dev/null)" = "$phash" ] && best=${d%/}
    done
    [ -n "$best" ] && echo "$best"
}

# Which kernel: the one Debian's linux-image-amd64 metapackage depends on.
kpkg=
if [ "${NETTUNE_LAB_OFFLINE:-0}" != 1 ]; then
    kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
           sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1) || true
    if [ -z "$kpkg" ] && [ "$(id -u)" = 0 ]; then
        # Package lists may simply never have been fetched on this machine.
        log "no linux-image-amd64 in apt lists; running apt-get update once"
        apt-get update -qq >&2 || true
        kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
               sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1) || true
    fi
fi
if [ -z "$kpkg" ]; then
    if cached=$(newest_cached); then
        if [ "${NETTUNE_LAB_OFFLINE:-0}" = 1 ]; then
            log "NETTUNE_LAB_OFFLINE=1; using the cached kernel $(basename "$cached")"
        else
            log "registry unavailable; using cached kernel $(basename "$cached")"
        fi
        echo "$cached"; exit 0
    fi
    skip "cannot resolve linux-image-amd64 through apt (no package registry?) and nothing cached in $CACHE"
fi

kver=${kpkg#linux-image-}                      # e.g. 6.1.0-57-amd64
kdir="$CACHE/kernels/$kver"
if [ -f "$kdir/.complete" ] && [ "$(cat "$kdir/netdevsim.patch-sha256" 2>/dev/null)" = "$phash" ]; then
    log "cached: $kdir"
    echo "$kdir"; exit 0
fi

# All packages come from the same source upload as the image, so pin them to
# the image's version (linux-source-6.1 has many versions in the lists).
pkgver=$(apt-cache show "$kpkg" | sed -n 's/^Version: //p' | head -n1)
[ -n "$pkgver" ] || skip "no version for $kpkg"
kbase=${kver%-amd64}                            # 6.1.0-57
series=$(echo "$kver" | cut -d. -f1-2)          # 6.1

command -v dpkg >/dev/null || die "dpkg missing"
for t in make gcc-12 xz; do
    command -v "$t" >/dev/null || die "$t missing (Debian packages: make gcc-12 xz-utils); the netdevsim build needs it"
done

# Downloads are kept per package version so a run interrupted after the big
# linux-source download does not fetch it again.
debs="$CACHE/debs"
mkdir -p "$debs"
fetch() {   # fetch PKG VERSION
    local pkg=$1 ver=$2 f tmp
    f=$(ls "$debs/${pkg}_"*.deb 2>/dev/null | grep -F "_${ver//:/%3a}_" | head -n1 || true)
    if [ -n "$f" ]; then echo "$f"; return 0; fi
    tmp=$(mktemp -d "$debs/.dl.XXXXXX")
    log "downloading $pkg=$ver"
    if ! (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$ver" >&2); then
        rm -rf "$tmp"; return 1
    fi
    f=$(ls "$tmp"/*.deb | head -n1)
    mv "$f" "$debs/"
    rm -rf "$tmp"
    echo "$debs/$(basename "$f")"
}

# The kernel dir is complete but its netdevsim was built from another patch:
# rebuild only netdevsim.
rebuild=0
[ -f "$kdir/.complete" ] && rebuild=1

t0=$(date +%s)
if [ "$rebuild" = 0 ]; then
    img=$(fetch "$kpkg" "$pkgver") || skip "apt-get download $kpkg failed (no package registry?)"
fi
hdr=$(fetch "linux-headers-$kver" "$pkgver") || skip "download linux-headers-$kver failed"
hdrc=$(fetch "linux-headers-$kbase-common" "$pkgver") || skip "download linux-headers-$kbase-common failed"
kb=$(fetch "linux-kbuild-$series" "$pkgver") || skip "download linux-kbuild-$series failed"
src=
if [ "$rebuild" = 0 ] || [ ! -d "$kdir/netdevsim-src" ]; then
    src=$(fetch "linux-source-$series" "$pkgver") || skip "download linux-source-$series failed"
fi
log "downloads ready in $(( $(date +%s) - t0 )) s"

# Build everything in a temporary directory next to the final one, then rename.
work=$(mktemp -d "$CACHE/kernels/.work-$kver.XXXXXX")
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out" "$work/root"

if [ "$rebuild" = 0 ]; then
    dpkg -x "$img" "$work/img"
    cp "$work/img/boot/vmlinuz-$kver" "$out/vmlinuz"
    mkdir -p "$out/lib/modules"
    mv "$work/img/lib/modules/$kver" "$out/lib/modules/$kver"
    rm -rf "$work/img"
fi

# Headers: the arch package's Makefile and symlinks point at
# /usr/src/linux-headers-*-common and /usr/lib/linux-kbuild-*, so unpack all
# three into one root and rewrite absolute references to that root.
for d in "$hdr" "$hdrc" "$kb"; do dpkg -x "$d" "$work/root"; done
hdir="$work/root/usr/src/linux-headers-$kver"
[ -d "$hdir" ] || die "headers not found in $hdr"
find "$hdir" -maxdepth 1 -type l | while read -r l; do
    tgt=$(readlink "$l")
    case $tgt in /*) ln -sfn "$work/root$tgt" "$l" ;; esac
done
grep -rlsF "/usr/src/linux-headers-" "$hdir/Makefile" "$hdir"/Makefile* 2>/dev/null | sort -u |
    while read -r f; do sed -i "s#\([ =]\)/usr/src/linux-headers-#\1$work/root/usr/src/linux-headers-#g" "$f"; done

# The netdevsim sources, from the linux-source tarball (decompressing it all is
# the slow part, ~10-20 s), kept pristine in KDIR/netdevsim-src for a rebuild.
pristine="$work/netdevsim-src"
if [ -n "$src" ]; then
    dpkg -x "$src" "$work/src"
    tarball=$(ls "$work/src/usr/src/linux-source-$series".tar.* | head -n1)
    tar -xf "$tarball" -C "$work" "linux-source-$series/drivers/net/netdevsim"
    rm -rf "$work/src"
    mv "$work/linux-source-$series/drivers/net/netdevsim" "$pristine"
else
    cp -a "$kdir/netdevsim-src" "$pristine"
fi
nsim="$work/netdevsim"
cp -a "$pristine" "$nsim"
patch -p1 -s -d "$nsim" <"$patchfile" || die "$patchfile does not apply to $series's netdevsim"

log "building netdevsim (patched: $(basename "$patchfile")) against $kver"
t1=$(date +%s)
# The headers' kbuild uses the compiler the kernel was built with (gcc-12).
make -C "$hdir" M="$nsim" CONFIG_NETDEVSIM=m CC=gcc-12 -j"$(nproc)" modules >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; die "netdevsim build failed"; }
log "netdevsim built in $(( $(date +%s) - t1 )) s"

if [ "$rebuild" = 1 ]; then
    # Each file replaced by a rename; the hash last, so a run killed
    # half-way rebuilds again.
    extra="$kdir/lib/modules/$kver/extra"
    cp "$nsim/netdevsim.ko" "$extra/.netdevsim.ko.new"
    mv -f "$extra/.netdevsim.ko.new" "$extra/netdevsim.ko"
    depmod -b "$kdir" "$kver"
    if [ ! -d "$kdir/netdevsim-src" ]; then
        mv "$pristine" "$kdir/.netdevsim-src.new" && mv "$kdir/.netdevsim-src.new" "$kdir/netdevsim-src"
    fi
    echo "$phash" >"$kdir/.netdevsim.patch-sha256.new"
    mv -f "$kdir/.netdevsim.patch-sha256.new" "$kdir/netdevsim.patch-sha256"
    [ -z "$src" ] || rm -f "$src"
    log "rebuilt netdevsim in $kdir in $(( $(date +%s) - t0 )) s"
    echo "$kdir"
    exit 0
fi
mkdir -p "$out/lib/modules/$kver/extra"
cp "$nsim/netdevsim.ko" "$out/lib/modules/$kver/extra/"
depmod -b "$out" "$kver"
mv "$pristine" "$out/netdevsim-src"
echo "$phash" > "$out/netdevsim.patch-sha256"
echo "$kver" > "$out/KVER"
touch "$out/.complete"

rm -rf "$kdir"
mv "$out" "$kdir"
# Kernels of earlier Debian updates are no longer what linux-image-amd64
# names; ~400 MB each, so keep only the current one.
for d in "$CACHE"/kernels/*/; do
    [ "${d%/}" = "$kdir" ] || rm -rf "${d%/}"
done
# The image and the kernel source are no longer needed once the kernel dir
# is complete (~150 MB); the header packages (~14 MB) stay for a rebuild of
# netdevsim when its patch changes.
rm -f "$img" "$src"
log "prepared $kdir in $(( $(date +%s) - t0 )) s"
echo "$kdir"
