#!/usr/bin/env bash
# The VM lab (tests/lab/README.md): boot Debian's kernel under qemu
# (TCG; no KVM needed) with 4 NUMA nodes, virtio NICs behind PCI expander
# bridges on nodes 1 and 3, netdevsim, bonding and a multi-queue virtio-blk,
# run tests/lab/tests/*.sh inside with nettune, and report their results.
#
# Environment: NT_BIN (nettune binary, required), NT_SRC (repo root),
#   NETTUNE_LAB_CACHE (download/build cache, default /var/cache/nettune-lab),
#   NETTUNE_LAB_WORK (where the initramfs and serial log go, default a new
#     /tmp/nettune-lab.XXXXXX; the initramfs is removed after the boot unless
#     NETTUNE_LAB_KEEP=1),
#   NETTUNE_LAB_TIMEOUT (seconds for the whole boot, default 600),
#   LAB_TESTS (folder of guest tests, default tests/lab/tests),
#   NETTUNE_LAB_QEMU (the qemu-system-x86_64 to use, default from PATH),
#   NETTUNE_LAB_OFFLINE=1 (use only the cache; see prepare.sh).
# Exit: 0 all passed; 1 a test failed or the guest never finished;
#   77 skipped (no qemu, qemu cannot start, no package registry), with why.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "lab: SKIP: $*"; exit 77; }
fail() { echo "lab: ERROR: $*"; echo "0 passed, 1 failed"; exit 1; }

: "${NT_BIN:?NT_BIN must name the nettune binary}"
[ -x "$NT_BIN" ] || fail "NT_BIN=$NT_BIN is not an executable (build the nettune target)"

qemu=${NETTUNE_LAB_QEMU:-$(command -v qemu-system-x86_64)}
[ -n "$qemu" ] && [ -x "$qemu" ] || skip "qemu-system-x86_64 not installed (Debian package qemu-system-x86)"
for t in busybox kmod ethtool lstopo-no-graphics curl jq cpio; do
    command -v "$t" >/dev/null ||
        skip "'$t' not installed (the lab needs: qemu-system-x86 busybox-static kmod ethtool iproute2 hwloc-nox curl jq cpio)"
done
# Can qemu start at all here (firmware present, TCG usable)? Start it paused
# with a monitor on stdin and quit at once.
probe=$(echo quit | timeout 60 "$qemu" -machine q35 -accel tcg -nodefaults -display none \
        -S -monitor stdio -serial none 2>&1) ||
    skip "qemu-system-x86_64 cannot start here: $(echo "$probe" | grep -v '^(qemu)' | tail -n 3 | tr '\n' ' ')"
"$qemu" -device help 2>/dev/null | grep -q '"pxb-pcie"' || skip "this qemu has no pxb-pcie device"

# A fresh folder per run unless told: two runs never share a serial log, and
# running from the source tree leaves nothing in it.
work=${NETTUNE_LAB_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/nettune-lab.XXXXXX")}
mkdir -p "$work" || fail "cannot create $work"

t0=$EPOCHREALTIME
kdir=$(bash "$here/prepare.sh")
rc=$?
[ $rc = 77 ] && skip "guest kernel unavailable (see prepare: lines above)"
[ $rc = 0 ] || fail "prepare.sh failed (rc=$rc)"
t1=$EPOCHREALTIME
NT_BIN=$NT_BIN bash "$here/mkinitramfs.sh" "$kdir" "$work/lab.cpio" || fail "mkinitramfs.sh failed"
t2=$EPOCHREALTIME

numa=()
for n in 0 1 2 3; do
    numa+=(-object "memory-backend-ram,id=mem$n,size=512M"
           -numa "node,nodeid=$n,cpus=$((2 * n))-$((2 * n + 1)),memdev=mem$n")
done
# MACs name the NICs (ethN follows probe order, not the command line):
#   52:54:00:00:00:10 on pcie.0 (no node), ...:01:11 on node 1, ...:03:12 on node 3.
# SeaBIOS (the default firmware) is needed: with qboot the NICs behind the
# expander bridges do not appear. -netdev user only: the host network is
# never touched.
cmd=("$qemu" -machine q35 -accel tcg -cpu max -smp 8,sockets=4,cores=2,threads=1 -m 2048M
     -nodefaults -display none -serial stdio -no-reboot -monitor none
     -kernel "$kdir/vmlinuz" -initrd "$work/lab.cpio"
     -append "console=ttyS0 rdinit=/init panic=-1 quiet loglevel=4 mitigations=off"
     "${numa[@]}"
     -device pxb-pcie,id=pxb1,bus_nr=64,numa_node=1,bus=pcie.0
     -device pxb-pcie,id=pxb2,bus_nr=128,numa_node=3,bus=pcie.0
     -device pcie-root-port,id=rp0,bus=pcie.0,chassis=1,addr=0x10
     -device pcie-root-port,id=rp1,bus=pxb1,chassis=2
     -device pcie-root-port,id=rp2,bus=pxb2,chassis=3
     -device pcie-root-port,id=rp3,bus=pcie.0,chassis=4,addr=0x11
     -netdev user,id=n0 -device virtio-net-pci,netdev=n0,bus=rp0,mac=52:54:00:00:00:10,romfile=,rx_queue_size=1024
     -netdev user,id=n1 -device virtio-net-pci,netdev=n1,bus=rp1,mac=52:54:00:00:01:11,romfile=,rx_queue_size=1024
     -netdev user,id=n2 -device virtio-net-pci,netdev=n2,bus=rp2,mac=52:54:00:00:03:12,romfile=,rx_queue_size=1024
     -blockdev null-co,node-name=nul0,size=67108864
     -device virtio-blk-pci,drive=nul0,bus=rp3,num-queues=4)

serial="$work/serial.log"
: > "$serial"
echo "lab: booting (serial log: $serial)"
tboot=$EPOCHREALTIME
t_init='' t_done=''
# Stream the console with a "guest|" prefix and note when /init starts and
# when the guest finishes, for the timing summary.
while IFS= read -r line; do
    line=${line%$'\r'}
    printf '%s\n' "$line" >> "$serial"
    printf 'guest| %s\n' "$line"
    case $line in
        *LAB-INIT*) t_init=$EPOCHREALTIME ;;
        *LAB-DONE*) t_done=$EPOCHREALTIME ;;
    esac
done < <(timeout --kill-after=10 "${NETTUNE_LAB_TIMEOUT:-600}" "${cmd[@]}" </dev/null 2>&1)
tend=$EPOCHREALTIME
# The initramfs (~30 MB) is rebuilt every run; keep only the serial log.
[ "${NETTUNE_LAB_KEEP:-0}" = 1 ] || rm -f "$work/lab.cpio"

secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b - a}'; }
to_init=never; init_done=never
[ -n "$t_init" ] && to_init="$(secs "$tboot" "$t_init") s"
[ -n "$t_init" ] && [ -n "$t_done" ] && init_done="$(secs "$t_init" "$t_done") s"
echo "lab: timing: prepare $(secs "$t0" "$t1") s, initramfs $(secs "$t1" "$t2") s," \
     "qemu start to /init $to_init, /init to LAB-DONE $init_done, whole boot $(secs "$tboot" "$tend") s"

pass=0 failed=0 skipped=0
while IFS= read -r r; do
    echo "$r"
    case $r in
        "LAB-RESULT "*" PASS"*) pass=$((pass + 1)) ;;
        "LAB-RESULT "*" SKIP"*) skipped=$((skipped + 1)) ;;
        *) failed=$((failed + 1)) ;;
    esac
done < <(grep -a -o 'LAB-RESULT .*' "$serial")

if ! grep -aq 'LAB-DONE' "$serial"; then
    echo "lab: the guest never printed LAB-DONE (timeout, panic or boot failure); see $serial"
    failed=$((failed + 1))
fi
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$pass" -gt 0 ] && exit 0
[ "$failed" = 0 ] && [ "$pass" = 0 ] && { echo "lab: no guest test passed"; exit 1; }
exit 1
