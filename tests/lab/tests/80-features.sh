#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Offload features and flow control on the guest's real kernel (6.1):
#  - pause on a netdevsim port (netdevsim implements get/set_pauseparam and
#    refuses autoneg): reported in GET /v1/nics/PORT as `ethtool -a` shows
#    it, set by a profile (checked with `ethtool -a`), rolled back; autoneg
#    refused by the driver, the step failing with the kernel's error and the
#    transaction rolled back;
#  - features on virtio-net: GRO and TSO (GSO or scatter-gather where the
#    device offers no TSO) toggled by a profile, checked with `ethtool -k`,
#    and rolled back to the same `ethtool -k`;
#  - the virtio NIC has no pause settings: refused (422).
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "80 1 1" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 80"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim80/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim80 made no port"; finish "features"; }
cleanup() { nt_stop; echo "80" > /sys/bus/netdevsim/del_device 2>/dev/null || true; }
# pause IFACE RX|TX|Autonegotiate -> on/off as ethtool -a shows it
pause() { ethtool -a "$1" 2>/dev/null | awk -v k="$2:" '$1==k {print $2; exit}'; }
# feat IFACE NAME -> on/off as ethtool -k shows it (ethtool's own name for GRO)
feat() {
    local n=$2
    [ "$n" = rx-gro ] && n=generic-receive-offload
    [ "$n" = tx-generic-segmentation ] && n=generic-segmentation-offload
    ethtool -k "$1" 2>/dev/null | sed -n "s/^[[:space:]]*$n: \(on\|off\).*/\1/p"
}
# marked IFACE NAME WORD: whether ethtool -k marks NAME "[WORD..."
# ("fixed"; "requested": the kernel holds it away from what was asked)
marked() {
    local n=$2
    [ "$n" = tx-generic-segmentation ] && n=generic-segmentation-offload
    ethtool -k "$1" 2>/dev/null | grep -Eq "^[[:space:]]*$n: (on|off) \[$3"
}
flip() { [ "$1" = on ] && echo false || echo true; }

N1=$(nic_by_mac "$MAC_N1") || { bad "no NIC $MAC_N1"; finish "features"; }
nt_start || exit 1
trap cleanup EXIT

# ---- pause on netdevsim ----
rx0=$(pause "$port" RX); tx0=$(pause "$port" TX)
echo "pause before: rx $rx0 tx $tx0"
api GET "/v1/nics/$port"
expect_eq "GET /v1/nics/$port" "$API_CODE" 200
expect_eq "reported pause" "$(jq -c '.pause' <<< "$API_BODY")" \
    "{\"autoneg\":false,\"rx\":$([ "$rx0" = on ] && echo true || echo false),\"tx\":$([ "$tx0" = on ] && echo true || echo false)}"
profile=$(jq -nc --arg p "$port" --argjson rx "$(flip "$rx0")" --argjson tx "$(flip "$tx0")" \
    '{profile: {name: "lab-pause", pause: [{interface: $p, rx: $rx, tx: $tx}]}}')
api POST /v1/transactions "$profile"
echo "apply: HTTP $API_CODE $(jq -c '{id, status, error, steps: [.steps[]? | {kind, target, before, after, result}]}' <<< "$API_BODY" 2>/dev/null)"
expect_eq "pause apply status" "$(jq -r .status <<< "$API_BODY")" applied
id=$(jq -r '.id // empty' <<< "$API_BODY")
expect_ne "RX pause (ethtool -a)" "$(pause "$port" RX)" "$rx0"
expect_ne "TX pause (ethtool -a)" "$(pause "$port" TX)" "$tx0"
if [ -n "$id" ]; then
    api POST "/v1/transactions/$id/rollback" '{}'
    expect_eq "pause rollback status" "$(jq -r .status <<< "$API_BODY")" applied
fi
expect_eq "RX pause after rollback" "$(pause "$port" RX)" "$rx0"
expect_eq "TX pause after rollback" "$(pause "$port" TX)" "$tx0"

# The driver refuses autoneg: the step fails with the kernel's error, and
# the transaction's earlier step (GRO on the virtio NIC) is undone.
gro0=$(feat "$N1" rx-gro)
api POST /v1/transactions "$(jq -nc --arg p "$port" --arg n "$N1" --argjson g "$(flip "$gro0")" \
    '{profile: {name: "lab-autoneg", features: [{interface: $n, features: {"rx-gro": $g}}], pause: [{interface: $p, autoneg: true}]}}')"
echo "autoneg: HTTP $API_CODE $(jq -c '{status, error}' <<< "$API_BODY" 2>/dev/null)"
expect_eq "autoneg refused: status" "$(jq -r .status <<< "$API_BODY")" rolled_back
grep -q "Invalid argument" <<< "$(jq -r .error <<< "$API_BODY")" && ok "the kernel's error is carried" ||
    bad "autoneg error: $(jq -r .error <<< "$API_BODY")"
expect_eq "GRO rolled back with it" "$(feat "$N1" rx-gro)" "$gro0"
expect_eq "autoneg still off" "$(pause "$port" Autonegotiate)" off

# ---- features on virtio ----
before=$(ethtool -k "$N1")
# TSO where the virtio device offers it (fixed off where the host offers
# no offloads), else GSO, scatter-gather or GRO-list: the second feature
# is one the driver can change and the kernel holds as asked.
second=""
for f in tx-tcp-segmentation tx-generic-segmentation tx-scatter-gather rx-gro-list; do
    marked "$N1" "$f" fixed || marked "$N1" "$f" requested || { second=$f; break; }
done
[ -n "$second" ] || { bad "virtio $N1 has no changeable TSO, GSO, SG or GRO-list: $before"; finish "features"; }
tso0=$(feat "$N1" "$second")
echo "virtio $N1: rx-gro $gro0, $second $tso0"
api POST /v1/transactions "$(jq -nc --arg n "$N1" --argjson g "$(flip "$gro0")" --arg s "$second" --argjson t "$(flip "$tso0")" \
    '{profile: {name: "lab-features", features: [{interface: $n, features: {"rx-gro": $g, ($s): $t}}]}}')"
echo "features: HTTP $API_CODE $(jq -c '{id, status, error, errors, steps: [.steps[]? | {target, before, after, result, observed}]}' <<< "$API_BODY" 2>/dev/null)"
expect_eq "features apply status" "$(jq -r .status <<< "$API_BODY")" applied
id=$(jq -r '.id // empty' <<< "$API_BODY")
expect_ne "rx-gro (ethtool -k)" "$(feat "$N1" rx-gro)" "$gro0"
expect_ne "$second (ethtool -k)" "$(feat "$N1" "$second")" "$tso0"
if [ -n "$id" ]; then
    api POST "/v1/transactions/$id/rollback" '{}'
    expect_eq "features rollback status" "$(jq -r .status <<< "$API_BODY")" applied
fi
[ "$(ethtool -k "$N1")" = "$before" ] && ok "ethtool -k $N1 as before" ||
    bad "ethtool -k $N1 differs after the rollback: $(diff <(echo "$before") <(ethtool -k "$N1"))"

# GSO held off by the kernel (no scatter-gather without checksum offload):
# asked on, the kernel keeps it off; the step fails saying so, and GRO,
# changed before it, comes back.
if marked "$N1" tx-generic-segmentation requested; then
    api POST /v1/transactions "$(jq -nc --arg n "$N1" --argjson g "$(flip "$gro0")" \
        '{profile: {name: "lab-held", features: [{interface: $n, features: {"rx-gro": $g, "tx-generic-segmentation": true}}]}}')"
    echo "held: HTTP $API_CODE $(jq -c '{status, error}' <<< "$API_BODY" 2>/dev/null)"
    expect_eq "held GSO: status" "$(jq -r .status <<< "$API_BODY")" rolled_back
    grep -q "the kernel kept tx-generic-segmentation off" <<< "$(jq -r .error <<< "$API_BODY")" &&
        ok "the refusal says the kernel kept it off" || bad "held GSO error: $(jq -r .error <<< "$API_BODY")"
    [ "$(ethtool -k "$N1")" = "$before" ] && ok "ethtool -k $N1 as before after the refusal" ||
        bad "ethtool -k $N1 differs after the refusal: $(diff <(echo "$before") <(ethtool -k "$N1"))"
else
    echo "note: GSO of $N1 is not held off by the kernel here: refusal not exercised"
fi

# No pause on virtio-net.
api POST /v1/plan "$(jq -nc --arg n "$N1" '{name: "x", pause: [{interface: $n, rx: true}]}')"
expect_eq "virtio pause: HTTP status" "$API_CODE" 422
grep -q "has no flow control" <<< "$API_BODY" && ok "refused: no flow control" || bad "virtio pause: $API_BODY"
finish "pause on netdevsim and features on virtio applied, checked with ethtool and rolled back"
