#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Interrupt coalescing as a kind of setting, on the guest's real kernel:
# netdevsim implements every coalescing parameter. The agent reports them in
# the topology as `ethtool -c` does, applies a coalesce profile as a
# transaction (checked with `ethtool -c`), and rolls it back to the values
# it found. A parameter the virtio NIC does not support is refused (422)
# naming it, and nothing changes.
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "55 1 2" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 55"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim55/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim55 made no port"; finish "coalesce"; }
cleanup() { nt_stop; echo "55" > /sys/bus/netdevsim/del_device 2>/dev/null || true; }

# ethtool -c PARAM: coal IFACE rx-usecs | "Adaptive RX" -> value
coal() {
    case $2 in
        adaptive-rx) ethtool -c "$1" 2>/dev/null | awk '$1=="Adaptive" && $2=="RX:" {print $3; exit}' ;;
        adaptive-tx) ethtool -c "$1" 2>/dev/null | awk '$1=="Adaptive" {print $5; exit}' ;;
        *) ethtool -c "$1" 2>/dev/null | awk -v k="$2:" '$1==k {print $2; exit}' ;;
    esac
}
# Start from values a driver would have, so the rollback restores real ones.
ethtool -C "$port" rx-usecs 20 tx-usecs 30 rx-frames 5 tx-frames 6 adaptive-rx off adaptive-tx off ||
    { bad "ethtool -C $port failed"; finish "coalesce"; }
declare -A before=()
for k in rx-usecs tx-usecs rx-frames tx-frames adaptive-rx adaptive-tx; do before[$k]=$(coal "$port" "$k"); done
echo "before: $(for k in "${!before[@]}"; do printf '%s=%s ' "$k" "${before[$k]}"; done)"

nt_start || exit 1
trap cleanup EXIT

api GET "/v1/nics/$port"
expect_eq "GET /v1/nics/$port" "$API_CODE" 200
expect_eq "reported coalescing" "$(jq -c '.coalesce | {rx_usecs, tx_usecs, rx_frames, tx_frames, adaptive_rx, adaptive_tx}' <<< "$API_BODY")" \
    '{"rx_usecs":20,"tx_usecs":30,"rx_frames":5,"tx_frames":6,"adaptive_rx":false,"adaptive_tx":false}'

profile=$(jq -nc --arg p "$port" '{profile: {name: "lab-coalesce",
    coalesce: [{interface: $p, rx_usecs: 64, tx_frames: 32, adaptive_rx: true}]}}')
api POST /v1/transactions "$profile"
echo "apply: HTTP $API_CODE $(jq -c '{id, status, error, steps: [.steps[]? | {kind, target, before, after, result}]}' <<< "$API_BODY" 2>/dev/null)"
expect_eq "apply HTTP status" "$API_CODE" 201
expect_eq "transaction status" "$(jq -r .status <<< "$API_BODY")" applied
# The value names the classic fields, then any field only ethtool netlink
# carries that the driver reports (netdevsim: cqe_mode_rx/tx), unchanged.
extra=$(jq -r '.steps[0].before' <<< "$API_BODY")
extra=${extra#*adaptive_tx=off}
expect_eq "the step" "$(jq -r '.steps[0] | "\(.kind) \(.target) \(.after)"' <<< "$API_BODY")" \
    "coalesce $port rx_usecs=64,tx_usecs=30,rx_frames=5,tx_frames=32,adaptive_rx=on,adaptive_tx=off$extra"
id=$(jq -r '.id // empty' <<< "$API_BODY")
expect_eq "rx-usecs (ethtool -c)" "$(coal "$port" rx-usecs)" 64
expect_eq "tx-frames (ethtool -c)" "$(coal "$port" tx-frames)" 32
expect_eq "Adaptive RX (ethtool -c)" "$(coal "$port" adaptive-rx)" on
expect_eq "tx-usecs untouched" "$(coal "$port" tx-usecs)" "${before[tx-usecs]}"
expect_eq "rx-frames untouched" "$(coal "$port" rx-frames)" "${before[rx-frames]}"

# Planned again: nothing left to do.
api POST /v1/plan "$(jq -c .profile <<< "$profile")"
expect_eq "plan of the applied profile" "$(jq -c '.steps' <<< "$API_BODY")" "[]"

# A parameter the virtio NIC lacks (adaptive TX) is refused, naming it.
N1=$(nic_by_mac "$MAC_N1") || { bad "no NIC $MAC_N1"; finish "coalesce"; }
api POST /v1/plan "$(jq -nc --arg n "$N1" '{name: "x", coalesce: [{interface: $n, adaptive_tx: true}]}')"
expect_eq "unsupported parameter: HTTP status" "$API_CODE" 422
grep -q "does not support coalescing adaptive_tx" <<< "$API_BODY" && ok "the refusal names adaptive_tx" ||
    bad "refusal: $API_BODY"

[ -n "$id" ] || finish "apply failed"
api POST "/v1/transactions/$id/rollback" '{}'
echo "rollback: HTTP $API_CODE $(jq -c '{id, status, error}' <<< "$API_BODY" 2>/dev/null)"
expect_eq "rollback HTTP status" "$API_CODE" 201
expect_eq "rollback status" "$(jq -r .status <<< "$API_BODY")" applied
for k in rx-usecs tx-usecs rx-frames tx-frames adaptive-rx adaptive-tx; do
    expect_eq "after rollback: $k" "$(coal "$port" "$k")" "${before[$k]}"
done
finish "coalescing reported, applied, verified with ethtool -c and rolled back on netdevsim"
