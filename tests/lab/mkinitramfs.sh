#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the VM lab's initramfs: an uncompressed newc cpio (it reaches /init 1-2 s
# sooner under TCG than a gzipped one, LAB.md) holding busybox applets, bash,
# kmod, ethtool, iproute2's ip and tc, hwloc's lstopo, curl, jq and nettune, each with
# the libraries ldd lists; the guest kernel's modules for virtio, bonding,
# netdevsim, veth and the fq and htb qdiscs; the guest test scripts; and an
# /init that runs them.
#
# usage: mkinitramfs.sh KDIR OUT.cpio
#   KDIR     a kernel directory made by prepare.sh
#   NT_BIN   the nettune binary to put in the guest (environment)
#   NT_LAB_BINS  more binaries for /usr/bin of the guest, space-separated
#            (environment; test programs that guest tests run, e.g. the live
#            test test_live_ethtool_group); missing ones are left out
#   LAB_TESTS the folder of guest test scripts (default: tests/ next to this
#            file); tests/lib.bash is put in /lab/ whichever folder it is
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kdir=${1:?usage: mkinitramfs.sh KDIR OUT.cpio}
out=${2:?usage: mkinitramfs.sh KDIR OUT.cpio}
tests=${LAB_TESTS:-$here/tests}
: "${NT_BIN:?NT_BIN must name the nettune binary}"
kver=$(cat "$kdir/KVER")
die() { echo "mkinitramfs: ERROR: $*" >&2; exit 1; }

[ -x "$NT_BIN" ] || die "NT_BIN=$NT_BIN is not an executable"
for t in busybox bash kmod ethtool ip lstopo-no-graphics hwloc-calc curl jq cpio depmod ldd; do
    command -v "$t" >/dev/null || die "'$t' not found (Debian packages: busybox-static bash kmod ethtool iproute2 hwloc-nox curl jq cpio)"
done

stage=$(mktemp -d "${TMPDIR:-/tmp}/nt-lab-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# Merged /usr, as on the Debian host, so library paths from ldd work as-is.
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{proc,sys,dev,tmp,run,etc,root,lab,mnt}
ln -s usr/bin "$stage/bin"; ln -s usr/sbin "$stage/sbin"
ln -s usr/lib "$stage/lib"; ln -s usr/lib64 "$stage/lib64"

# The guest path of a host path: the guest has merged /usr, like the host.
# (Plain parameter expansion: a fork costs ~20 ms on a loaded 2-core host.)
guest_path() {
    case $1 in /lib/*|/lib64/*|/bin/*|/sbin/*) REPLY=/usr$1 ;; *) REPLY=$1 ;; esac
}
# Place a file at the same path in the guest, following symlinks for content
# but keeping the requested name (a soname link such as libhwloc.so.15 must
# exist under that name for the loader).
put() {   # put HOSTPATH [GUESTPATH]
    local dst
    guest_path "${2:-$1}"; dst=$stage$REPLY
    [ -d "${dst%/*}" ] || mkdir -p "${dst%/*}"
    # Replace, never write through, a busybox applet link of the same name.
    if [ -L "$dst" ] || [ -e "$dst" ]; then rm -f "$dst"; fi
    cp -L "$1" "$dst"
}
# A binary and everything ldd says it loads, plus the dynamic loader.
put_bin() {   # put_bin HOSTPATH [GUESTPATH]
    local lib
    put "$1" "${2:-$1}"
    while read -r lib; do
        guest_path "$lib"
        [ -e "$stage$REPLY" ] || put "$lib"
    done < <(ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}')
}

# Busybox first; the real tools below overwrite its applets of the same name.
# No links for ip/modprobe/insmod: busybox's versions must never be picked.
put /bin/busybox /usr/bin/busybox
# Inside a chroot of the stage, busybox makes its applet links pointing at
# /usr/bin/busybox as the guest will see it, in one process.
chroot "$stage" /usr/bin/busybox --install -s /usr/bin ||
    for a in $(busybox --list); do ln -sf busybox "$stage/usr/bin/$a"; done
rm -f "$stage"/usr/bin/{ip,tc,modprobe,insmod,rmmod,lsmod,depmod,modinfo,bash,ethtool,init,linuxrc,'[['}
ln -sf busybox "$stage/usr/bin/sh"

put_bin "$(command -v bash)" /usr/bin/bash
put_bin "$(command -v kmod)" /usr/bin/kmod
for a in modprobe insmod rmmod lsmod depmod modinfo; do ln -sf ../bin/kmod "$stage/usr/sbin/$a"; done
put_bin "$(command -v ethtool)" /usr/sbin/ethtool
put_bin "$(realpath "$(command -v ip)")" /usr/sbin/ip
# tc, for the root qdisc checks (tests/65-link.sh); iproute2 has it beside ip.
command -v tc >/dev/null && put_bin "$(realpath "$(command -v tc)")" /usr/sbin/tc && ln -sf ../sbin/tc "$stage/usr/bin/tc"
ln -sf ../sbin/ip "$stage/usr/bin/ip"
[ -d /usr/share/iproute2 ] && { mkdir -p "$stage/usr/share"; cp -a /usr/share/iproute2 "$stage/usr/share/"; }
[ -d /etc/iproute2 ] && cp -a /etc/iproute2 "$stage/etc/"
put_bin "$(command -v lstopo-no-graphics)" /usr/bin/lstopo-no-graphics
put_bin "$(command -v hwloc-calc)" /usr/bin/hwloc-calc
# hwloc's PCI discovery may come from a plugin (libpciaccess); bring it, but
# not the libxml2 one (it drags in 30 MB of ICU data; hwloc's built-in XML
# writer serves `--of xml`) nor the GPU ones.
for p in /usr/lib/x86_64-linux-gnu/hwloc/hwloc_pci.so; do
    [ -e "$p" ] && put_bin "$p"
done
[ -e /usr/share/misc/pci.ids ] && put /usr/share/misc/pci.ids
[ -e /usr/share/hwloc/hwloc.dtd ] && put /usr/share/hwloc/hwloc.dtd
put_bin "$(command -v curl)" /usr/bin/curl
put_bin "$(command -v jq)" /usr/bin/jq
put_bin "$NT_BIN" /usr/bin/nettune
for b in ${NT_LAB_BINS:-}; do
    if [ -x "$b" ]; then put_bin "$b" "/usr/bin/${b##*/}"
    else echo "mkinitramfs: NT_LAB_BINS: $b is not an executable; left out" >&2; fi
done

# Minimal /etc so libc name lookups of localhost and uid 0 behave.
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$stage/etc/passwd"
printf 'root:x:0:\n' > "$stage/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$stage/etc/hosts"
printf 'hosts: files\n' > "$stage/etc/nsswitch.conf"

# Kernel modules: the wanted ones and everything modules.dep says they need.
mdir="$kdir/lib/modules/$kver"
# The qdiscs and veth are for the link settings (tests/65-link.sh): Debian
# builds them as modules (fq_codel is built in), which the kernel loads on
# demand.
want="virtio_pci virtio_net virtio_blk bonding net_failover failover netdevsim veth sch_fq sch_htb"
declare -A seen=()
queue=()
for m in $want; do
    p=$(awk -F: -v m="$m" '{n=$1; sub(/.*\//,"",n); sub(/\.ko.*$/,"",n); gsub(/-/,"_",n); if (n==m) {print $1; exit}}' "$mdir/modules.dep")
    if [ -z "$p" ]; then
        # Built into this kernel (virtio_pci on 7.x): nothing to bring,
        # and init's modprobe of it succeeds.
        awk -v m="$m" '{n=$0; sub(/.*\//,"",n); sub(/\.ko.*$/,"",n); gsub(/-/,"_",n); if (n==m) f=1} END {exit !f}' \
            "$mdir/modules.builtin" && continue
        die "module $m not in $mdir/modules.dep nor built in"
    fi
    queue+=("$p")
done
while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}; queue=("${queue[@]:1}")
    [ -n "${seen[$p]:-}" ] && continue
    seen[$p]=1
    mkdir -p "$stage/usr/lib/modules/$kver/$(dirname "$p")"
    cp "$mdir/$p" "$stage/usr/lib/modules/$kver/$p"
    # The out-of-tree netdevsim keeps its debug info (5 MB); the guest
    # does not need it and every MB costs boot time under TCG.
    case $p in *.ko) strip --strip-debug "$stage/usr/lib/modules/$kver/$p" 2>/dev/null || true ;; esac
    for d in $(grep "^$p:" "$mdir/modules.dep" | cut -d: -f2-); do queue+=("$d"); done
done
cp "$mdir"/modules.builtin* "$mdir"/modules.order "$stage/usr/lib/modules/$kver/"
# Regenerate the index for exactly the modules present.
depmod -b "$stage" "$kver"

cp "$here/init" "$stage/init"
chmod 755 "$stage/init"
cp "$tests"/*.sh "$stage/lab/" 2>/dev/null || true
mkdir -p "$stage/lab/tests"
mv "$stage"/lab/*.sh "$stage/lab/tests/" 2>/dev/null || true
# The lab's own helpers always, so a LAB_TESTS folder elsewhere (bench/lab)
# can source /lab/lib.bash; that folder's *.bash come after and may add more.
cp "$here/tests/lib.bash" "$stage/lab/"
for f in "$tests"/*.bash; do [ -e "$f" ] && cp "$f" "$stage/lab/"; done
echo "$kver" > "$stage/lab/KVER"

tmp="$out.tmp.$$"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) > "$tmp"
mv "$tmp" "$out"
echo "mkinitramfs: $out ($(du -h "$out" | cut -f1), $(find "$stage" | wc -l) entries)" >&2
