# Shared helpers for the VM lab's guest tests (sourced, not run: only *.sh
# files are tests). Everything here runs inside the guest, as root.
set -u
export LC_ALL=C
NT_BIN=${NT_BIN:-/usr/bin/nettune}
NT_URL=http://127.0.0.1:8470
# The NICs qemu was given (tests/lab/run.sh), by MAC, and the NUMA node of the
# PCI bus each sits on: pcie.0 has none (-1), the expander bridges 1 and 3.
MAC_N0=52:54:00:00:00:10
MAC_N1=52:54:00:00:01:11
MAC_N3=52:54:00:00:03:12
declare -A NODE_OF_MAC=([$MAC_N0]=-1 [$MAC_N1]=1 [$MAC_N3]=3)

FAILS=0
ok()  { echo "ok: $*"; }
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
expect_eq() {   # expect_eq DESCRIPTION GOT WANT
    if [ "$2" = "$3" ]; then ok "$1 = '$2'"; else bad "$1: got '$2', want '$3'"; fi
}
expect_ne() {   # expect_ne DESCRIPTION GOT NOT_WANT
    if [ "$2" != "$3" ]; then ok "$1 = '$2' (not '$3')"; else bad "$1: still '$2'"; fi
}
finish() {   # finish SUMMARY: the last line is the reason run.sh shows
    if [ "$FAILS" = 0 ]; then echo "PASS: $1"; exit 0; fi
    echo "FAIL: $FAILS check(s) failed: $1"; exit 1
}
skip() { echo "SKIP: $*"; exit 77; }

# The net device with MAC $1.
nic_by_mac() {
    local d
    for d in /sys/class/net/*; do
        [ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
    done
    return 1
}
# The PCI function of a virtio net device: its `device` link is virtioN, the
# PCI function is one level up (LAB.md).
pci_of() { basename "$(readlink -f "/sys/class/net/$1/device/..")"; }
# The IRQ numbers of a PCI function's MSI/MSI-X vectors.
pci_irqs() { ls "/sys/bus/pci/devices/$1/msi_irqs" 2>/dev/null | sort -n; }
irq_aff() { cat "/proc/irq/$1/smp_affinity_list"; }

# ethtool -g current value: ring_cur IFACE RX|TX
ring_cur() {
    ethtool -g "$1" 2>/dev/null |
        awk -v k="$2:" '/^Current hardware settings/{c=1} c && $1==k {print $2; exit}'
}
ring_max() {
    ethtool -g "$1" 2>/dev/null |
        awk -v k="$2:" '/^Pre-set maximums/{c=1} /^Current/{c=0} c && $1==k {print $2; exit}'
}
sysctl_get() { tr -s ' \t' ' ' < "/proc/sys/${1//.//}"; }

# Expand a cpulist ("2-3,6") to one CPU a line.
cpulist_expand() {
    local part a b
    IFS=, read -ra parts <<< "$1"
    for part in "${parts[@]}"; do
        a=${part%-*}; b=${part#*-}
        seq "$a" "$b"
    done
}
# Is every CPU of cpulist $1 within cpulist $2?
cpulist_within() {
    local c
    for c in $(cpulist_expand "$1"); do
        cpulist_expand "$2" | grep -qx "$c" || return 1
    done
}

# Start the agent on the live guest with a throw-away state dir; stopped at exit.
NT_PID=
NT_LOG=
# The state letter of process $1 ("" when gone): a child that exited stays a
# zombie (Z) until waited, which kill -0 cannot tell from a live one.
proc_state() { sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
# Each thread of process $1 with where it waits in the kernel: what a hung
# agent is blocked on (a netlink reply, a lock, a driver call).
thread_stacks() {
    local t
    for t in /proc/"$1"/task/*; do
        echo "  thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)) state $(sed -n 's/^State:[[:space:]]*//p' "$t/status" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
        sed 's/^/    /' "$t/stack" 2>/dev/null | head -n 8
    done
}
# Stop the agent: TERM, then up to 10 s for it to exit. An agent that does
# not is a failure shown with its threads' stacks and log, then killed, so a
# hang ends this test instead of the whole guest run.
nt_stop() {
    [ -n "$NT_PID" ] || return 0
    local pid=$NT_PID st rc=0
    NT_PID=
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do
        st=$(proc_state "$pid")
        [ -z "$st" ] || [ "$st" = Z ] && break
        sleep 0.1
    done
    st=$(proc_state "$pid")
    if [ -n "$st" ] && [ "$st" != Z ]; then
        bad "the agent (pid $pid) did not exit 10 s after SIGTERM; its threads:"
        thread_stacks "$pid"
        [ -n "$NT_LOG" ] && { echo "  its log (last 20 lines):"; tail -n 20 "$NT_LOG" | sed 's/^/    /'; }
        kill -KILL "$pid" 2>/dev/null
        rc=1
    fi
    wait "$pid" 2>/dev/null
    return $rc
}
# The EXIT trap: a hung agent fails the test even after finish said PASS.
nt_stop_at_exit() { nt_stop || exit 1; }
nt_start() {
    local state i code
    state=$(mktemp -d /tmp/nt-state.XXXXXX)
    NT_LOG=$state/serve.log
    "$NT_BIN" serve --listen 127.0.0.1:8470 --root / --state-dir "$state" >"$NT_LOG" 2>&1 &
    NT_PID=$!
    # The guest's per-test timeout sends TERM: exit through the EXIT trap so
    # the agent does not outlive the test and hold the port for the next one.
    trap nt_stop_at_exit EXIT
    trap 'exit 143' TERM INT
    for i in $(seq 1 100); do
        code=$(curl -s -o /dev/null -w '%{http_code}' "$NT_URL/v1/health" 2>/dev/null)
        [ "$code" = 200 ] && return 0
        kill -0 "$NT_PID" 2>/dev/null || break
        sleep 0.2
    done
    echo "nettune serve did not come up (last HTTP code '$code'):"
    cat "$state/serve.log"
    return 1
}
# nt_agent STATE EXTRA...: (re)start the agent with its state kept in STATE
# across starts (a desired state, a "reboot"); stopped at exit.
nt_agent() {
    local state=$1
    shift
    nt_stop
    NT_LOG=$state/serve.log
    "$NT_BIN" serve --listen 127.0.0.1:8470 --root / --state-dir "$state" "$@" >>"$NT_LOG" 2>&1 &
    NT_PID=$!
    trap 'exit 143' TERM INT
    for _ in $(seq 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$NT_URL/v1/health")" = 200 ] && return 0
        sleep 0.2
    done
    echo "nettune serve did not come up:"; cat "$state/serve.log"
    return 1
}
# Milliseconds since boot (busybox date has no %N).
now_ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }
# wait_for SECONDS COMMAND...: until COMMAND succeeds; prints how long it took.
wait_for() {
    local s=$1 t0; shift
    t0=$(now_ms)
    for _ in $(seq $((s * 10))); do
        if "$@"; then echo "  (after $(( $(now_ms) - t0 )) ms)"; return 0; fi
        sleep 0.1
    done
    return 1
}
# api METHOD PATH [JSON-BODY]: sets API_CODE and API_BODY.
api() {
    local out
    if [ $# -ge 3 ]; then
        out=$(curl -s --max-time 120 -X "$1" -H 'Content-Type: application/json' --data-binary "$3" \
              -w '\n%{http_code}' "$NT_URL$2")
    else
        out=$(curl -s --max-time 120 -X "$1" -w '\n%{http_code}' "$NT_URL$2")
    fi
    API_CODE=${out##*$'\n'}
    API_BODY=${out%$'\n'*}
}
