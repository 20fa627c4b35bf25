#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `nettune topology --json` run inside a named network namespace sees that
# namespace: its veth pair and not the host's eth0, and the namespace's own
# value of a per-namespace sysctl (net.core.somaxconn), not the host's.
# `ip netns exec` remounts /sys for the namespace, which is what makes the
# sysfs-based reader see the namespace's links.
set -u

skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (ip netns add)"
command -v ip >/dev/null || skip "the ip tool is not installed"
command -v python3 >/dev/null || skip "python3 is needed to check the JSON"
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"
"$NT_BIN" topology --json >/dev/null 2>&1 || skip "\`nettune topology --json\` does not work on the host yet"

ns="nt-test-$$"
va="ntv0-$$"
vb="ntv1-$$"
cleanup() { ip netns del "$ns" 2>/dev/null; }
trap cleanup EXIT

ip netns add "$ns" || skip "cannot create a network namespace"
ip -n "$ns" link add "$va" type veth peer name "$vb" || { echo "FAIL: veth in $ns"; exit 1; }
ip -n "$ns" link set "$va" mtu 9000
ip -n "$ns" link set lo up
ip -n "$ns" link set "$vb" up

# A value the host is unlikely to have, so reading the host's by mistake shows.
host_somax=$(cat /proc/sys/net/core/somaxconn)
ns_somax=$((host_somax == 1234 ? 1235 : 1234))
ip netns exec "$ns" sh -c "echo $ns_somax > /proc/sys/net/core/somaxconn" ||
	{ echo "FAIL: cannot set somaxconn in $ns"; exit 1; }
[ "$(cat /proc/sys/net/core/somaxconn)" = "$host_somax" ] ||
	skip "net.core.somaxconn is not per-namespace on this kernel"

out=$(mktemp)
trap 'cleanup; rm -f "$out"' EXIT
ip netns exec "$ns" "$NT_BIN" topology --json >"$out" ||
	{ echo "FAIL: nettune topology --json in $ns exited $?"; exit 1; }
host_has_eth0=0
[ -e /sys/class/net/eth0 ] && host_has_eth0=1

python3 - "$out" "$va" "$vb" "$ns_somax" "$host_has_eth0" <<'EOF'
import json, sys
path, va, vb, somax, host_eth0 = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
doc = json.load(open(path))
failed = 0
def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failed += 1
nics = {n.get("name"): n for n in doc.get("nics", [])}
check(va in nics, f"{va} listed (nics: {sorted(nics)})")
check(vb in nics, f"{vb} listed")
if host_eth0:
    check("eth0" not in nics, "host eth0 not listed")
if va in nics and "mtu" in nics[va]:
    check(nics[va]["mtu"] == 9000, f"{va} mtu 9000 (got {nics[va]['mtu']})")
sysctl = doc.get("sysctl", doc.get("sysctls", {}))
val = sysctl.get("net.core.somaxconn") if isinstance(sysctl, dict) else None
check(val is not None and str(val).strip() == somax,
      f"net.core.somaxconn is the namespace's {somax} (got {val!r})")
sys.exit(1 if failed else 0)
EOF
rc=$?
[ $rc = 0 ] || { echo "--- topology output:"; head -c 3000 "$out"; echo; }
exit $rc
