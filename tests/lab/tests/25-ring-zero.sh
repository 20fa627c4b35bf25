#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# netdevsim ports start with rings of 0 on 6.1 and of 512 on 7.x (LAB.md). A
# transaction that raises them and its rollback must bring them back to
# exactly that: the journal's before-value is a real size (0 included), not
# "leave unchanged". The same transaction
# changes the port's channel count (4 queues), made first (channels go
# before the NIC's other settings: the driver builds its queues anew; only
# RSS tables and flow rules go before channels that lower the count,
# 26-channels-lower.sh).
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "77 1 4" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 77"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim77/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim77 made no port"; finish "ring zero"; }
rx0=$(ring_cur "$port" RX) tx0=$(ring_cur "$port" TX)
# Which the running netdevsim makes, by the kernel's version: 0 up to 6.x.
want0=0
[ "$(uname -r | cut -d. -f1)" -ge 7 ] && want0=512
expect_eq "$port RX ring at creation ($(uname -r))" "$rx0" "$want0"
expect_eq "$port TX ring at creation ($(uname -r))" "$tx0" "$want0"
chan_cur() { ethtool -l "$1" 2>/dev/null | awk '/^Current hardware settings/{c=1} c && $1=="Combined:" {print $2; exit}'; }
chan_before=$(chan_cur "$port")
[ -n "$chan_before" ] && ok "$port combined channels at creation: $chan_before" || bad "ethtool -l $port shows no combined count"
chan_want=2
[ "$chan_before" = 2 ] && chan_want=1

nt_start || exit 1
api POST /v1/transactions "$(jq -nc --arg n "$port" --arg c "$chan_want" '{profile: {name: "lab-ring-zero",
    rings: [{interface: $n, rx: 1024, tx: 256}],
    channels: [{interface: $n, combined: ($c | tonumber)}]}}')"
expect_eq "apply HTTP status" "$API_CODE" 201
expect_eq "apply status" "$(jq -r .status <<< "$API_BODY")" applied
expect_eq "$port RX ring applied" "$(ring_cur "$port" RX)" 1024
expect_eq "$port combined channels applied" "$(chan_cur "$port")" "$chan_want"
jq -e '.steps | map(.kind) | index("channels") < index("rings")' <<< "$API_BODY" >/dev/null &&
    ok "the channels step comes before the rings" || bad "steps in the wrong order: $(jq -c '[.steps[].kind]' <<< "$API_BODY")"
id=$(jq -r .id <<< "$API_BODY")
api POST "/v1/transactions/$id/rollback" '{}'
expect_eq "rollback HTTP status" "$API_CODE" 201
expect_eq "rollback status" "$(jq -r .status <<< "$API_BODY")" applied
expect_eq "$port RX ring restored" "$(ring_cur "$port" RX)" "$rx0"
expect_eq "$port TX ring restored" "$(ring_cur "$port" TX)" "$tx0"
expect_eq "$port combined channels restored" "$(chan_cur "$port")" "$chan_before"
nt_stop
echo 77 > /sys/bus/netdevsim/del_device
finish "netdevsim rings raised and restored to $rx0/$tx0"
