#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The lab's test device itself (tests/lab/netdevsim-rxnfc-7.patch, README "The
# test device"): RSS, RSS contexts and flow rules into a context on a
# netdevsim port, with ethtool(8) as the judge, through the real kernel's
# ethtool ioctl and netlink code (the device only keeps what it is given).
#  - the indirection table (128 entries) follows the channels until it is
#    set; `-X equal 2` sets it, and fewer channels than it names are refused;
#  - hash function, key and per-flow-type hash fields are kept as given, and
#    fields the device cannot hash are refused;
#  - contexts: `-X context new start 2 equal 2` is context 1 (ids from 1,
#    lowest free, 8 at most), `-x context 1` reads its table, a table naming
#    a queue beyond the channels is refused;
#  - a flow rule into context 1 (`-U ... context 1 action 0`), listed by
#    `-u` with its context; one into a context that does not exist, or whose
#    queue offset leaves the channels, is refused;
#  - deleting context 1 while the rule points at it is refused (EBUSY, the
#    7.x core asks the rule table), and works once the rule is gone;
#  - over netlink, with the lab's judge (lab_ethnl_judge, NT_LAB_BINS; no
#    Debian ethtool has these): RSS_CREATE_ACT with and without an id (9 is
#    ERANGE, a taken one EBUSY), the RSS dump, symmetric-xor on a context
#    (asymmetric fields then refused), per-context hash fields,
#    RSS_DELETE_ACT refused under a rule (EBUSY) and done after it;
#  - DIM profiles: rx-profile/tx-profile read (5 entries, usec and pkts),
#    set and read back with adaptive-rx, comps (EOPNOTSUPP) and a sixth
#    entry (E2BIG) refused, kept across `ethtool -C`.
# The ioctl part runs on both lab kernels (6.1's netdevsim patch keeps ids,
# tables and the checks 7.x's core makes itself); the netlink part needs
# Linux 6.17 (RSS_CREATE_ACT) and the profiles 6.11: on an older kernel the
# judge's refusal (EOPNOTSUPP, or no profile attribute) is checked instead.
. /lab/lib.bash

[ -e /sys/bus/netdevsim/new_device ] || modprobe netdevsim || skip "netdevsim module cannot be loaded"
echo "89 1 4" > /sys/bus/netdevsim/new_device || skip "cannot create netdevsim device 89"
for _ in $(seq 50); do
    port=$(ls /sys/bus/netdevsim/devices/netdevsim89/net/ 2>/dev/null | head -n 1)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { bad "netdevsim89 made no port"; finish "netdevsim RSS"; }
trap 'echo 89 > /sys/bus/netdevsim/del_device 2>/dev/null' EXIT
ethtool -x "$port" >/dev/null 2>&1 ||
    skip "netdevsim on $(uname -r) has no RSS (not the lab's patched netdevsim?): $(ethtool -x "$port" 2>&1 | tail -n 1)"
# The console shows no kernel warnings (init quiets it): count them here.
warns() { dmesg | grep -c 'WARNING:\|BUG:'; }
warns0=$(warns)

# The table's entries, space-separated, as ethtool -x prints them.
table() { ethtool -x "$port" "$@" | awk '/^ *[0-9]+:/ {for (i = 2; i <= NF; i++) printf "%s ", $i}' | sed 's/ $//'; }
# What ethtool_rxfh_indir_default makes over N queues (optionally from START).
spread() { local i s=${3:-0}; for ((i = 0; i < $1; i++)); do printf '%s ' $((s + i % $2)); done | sed 's/ $//'; }
hfunc_on() { ethtool -x "$port" "$@" | awk '$2 == "on" {sub(":", "", $1); print $1}'; }
key() { ethtool -x "$port" "$@" | awk '/^RSS hash key:/ {getline; print}'; }
rules() { ethtool -u "$port" | awk '/^Total/ {print $2}'; }

# The default table, and the channels it follows.
expect_eq "table size" "$(table | wc -w)" 128
expect_eq "default table over 4 queues" "$(table)" "$(spread 128 4)"
ethtool -x "$port" | head -n 1
expect_eq "hash function at creation" "$(hfunc_on)" toeplitz
ethtool -L "$port" combined 2
expect_eq "default table after -L combined 2" "$(table)" "$(spread 128 2)"
ethtool -L "$port" combined 4
expect_eq "default table after -L combined 4" "$(table)" "$(spread 128 4)"

# A table set by hand stays, and holds the channels.
ethtool -X "$port" equal 2 || bad "ethtool -X equal 2 failed"
expect_eq "table after -X equal 2" "$(table)" "$(spread 128 2)"
out=$(ethtool -L "$port" combined 1 2>&1) && bad "-L combined 1 with a table naming queue 1 accepted" ||
    ok "-L combined 1 refused: $out"
ethtool -L "$port" combined 3
expect_eq "a set table after -L combined 3" "$(table)" "$(spread 128 2)"
ethtool -L "$port" combined 4
out=$(ethtool -X "$port" weight 1 0 0 0 1 2>&1) && bad "a table naming queue 4 of 4 accepted" || ok "queue 4 of 4 refused: $out"

# Function, key, fields.
ethtool -X "$port" hfunc xor || bad "ethtool -X hfunc xor failed"
expect_eq "hash function after hfunc xor" "$(hfunc_on)" xor
out=$(ethtool -X "$port" hfunc crc32 2>&1) && bad "hfunc crc32 accepted" || ok "hfunc crc32 refused: $out"
ethtool -X "$port" hfunc toeplitz
k=$(seq 1 40 | awk '{printf "%s%02x", (NR > 1 ? ":" : ""), $1}')
ethtool -X "$port" hkey "$k" || bad "ethtool -X hkey failed"
expect_eq "key after hkey" "$(key)" "$k"
expect_eq "tcp4 fields at creation" "$(ethtool -n "$port" rx-flow-hash tcp4 | grep -c 'IP SA\|IP DA\|L4 bytes')" 4
ethtool -N "$port" rx-flow-hash tcp4 sd || bad "ethtool -N rx-flow-hash tcp4 sd failed"
expect_eq "tcp4 fields after sd" "$(ethtool -n "$port" rx-flow-hash tcp4 | grep -c 'IP SA\|IP DA\|L4 bytes')" 2
# ethtool 6.1 exits 0 after this refusal: the message and the fields count.
out=$(ethtool -N "$port" rx-flow-hash udp4 sdv 2>&1)
grep -q "Invalid argument" <<< "$out" && ok "udp4 sdv (VLAN) refused: $out" || bad "udp4 sdv: '$out'"
expect_eq "udp4 fields after the refusal" "$(ethtool -n "$port" rx-flow-hash udp4 | grep -c 'IP SA\|IP DA\|L4 bytes\|VLAN')" 4
ethtool -N "$port" rx-flow-hash tcp4 sdfn

# Contexts.
out=$(ethtool -X "$port" context new start 2 equal 2 2>&1) || bad "context new start 2 equal 2: $out"
echo "$out"
ctx=$(sed -n 's/^New RSS context is \([0-9]*\)/\1/p' <<< "$out")
expect_eq "first context id" "$ctx" 1
expect_eq "context 1 table" "$(table context 1)" "$(spread 128 2 2)"
expect_eq "context 0 table untouched" "$(table)" "$(spread 128 2)"
out=$(ethtool -X "$port" context new start 3 equal 2 2>&1) && bad "a context naming queue 4 of 4 accepted: $out" ||
    ok "context naming queue 4 of 4 refused: $out"
ids=
for _ in 2 3 4 5 6 7 8; do
    ids+="$(ethtool -X "$port" context new equal 4 2>&1 | sed -n 's/^New RSS context is //p') "
done
expect_eq "contexts 2-8" "$ids" "2 3 4 5 6 7 8 "
out=$(ethtool -X "$port" context new equal 4 2>&1) && bad "a ninth context accepted: $out" || ok "ninth context refused: $out"
ethtool -X "$port" context 4 delete || bad "deleting context 4 failed"
expect_eq "the lowest free id again" "$(ethtool -X "$port" context new equal 4 2>&1 | sed -n 's/^New RSS context is //p')" 4
for c in 2 3 4 5 6 7 8; do ethtool -X "$port" context "$c" delete || bad "deleting context $c failed"; done
out=$(ethtool -L "$port" combined 2 2>&1) && bad "-L combined 2 with context 1 on queues 2-3 accepted" ||
    ok "-L combined 2 refused while context 1 names queue 3: $out"

# A flow rule into context 1.
ethtool -K "$port" ntuple on
out=$(ethtool -U "$port" flow-type tcp4 dst-port 5201 context 1 action 0 2>&1) || bad "-U into context 1: $out"
echo "$out"
ethtool -u "$port"
loc=$(ethtool -u "$port" | awk '/^Filter:/ {f = $2} /Dest port: 5201/ {print f}')
[ -n "$loc" ] && ok "rule for port 5201 at location $loc" || bad "no rule for port 5201"
ethtool -u "$port" | sed -n "/^Filter: $loc\$/,/^\$/p" | grep -q "RSS Context ID: 1" &&
    ok "the rule names RSS context 1" || bad "the rule's context: $(ethtool -u "$port")"
n=$(rules)
echo "into context 5: $(ethtool -U "$port" flow-type tcp4 dst-port 5202 context 5 action 0 2>&1)"
expect_eq "rules after one into a missing context" "$(rules)" "$n"
echo "offset 1 into context 1 (queues 2-3 of 4): $(ethtool -U "$port" flow-type tcp4 dst-port 5203 context 1 action 1 2>&1)"
expect_eq "rules after an offset beyond the channels" "$(rules)" "$n"
out=$(ethtool -X "$port" context 1 delete 2>&1) && bad "context 1 deleted under a rule" || ok "deleting context 1 under a rule refused: $out"
expect_eq "context 1 still there" "$(table context 1)" "$(spread 128 2 2)"
ethtool -U "$port" delete "$loc" || bad "deleting rule $loc failed"
ethtool -X "$port" context 1 delete || bad "deleting context 1 without rules failed"
out=$(ethtool -x "$port" context 1 2>&1) && bad "context 1 read after its deletion: $out" || ok "context 1 gone: $(tail -n 1 <<< "$out")"

# The netlink paths (RSS_CREATE_ACT/RSS_DELETE_ACT 6.17+, the RSS dump,
# input_xfrm), which Debian's ethtool cannot reach: the lab's own judge.
J=/usr/bin/lab_ethnl_judge
val() { sed -n "s/^$1=//p" <<< "$2"; }
# MAJOR*1000+MINOR of the running kernel.
kv=$(uname -r | awk -F. '{print $1 * 1000 + $2}')
if [ -x "$J" ] && [ "$kv" -lt 6017 ]; then
    expect_eq "netlink create on $(uname -r) (RSS_CREATE_ACT is 6.17+)" \
        "$($J rss-create "$port" | sed -n 's/^error=\(-[0-9]*\).*/\1/p')" -95
elif [ -x "$J" ]; then
    out=$($J rss-create "$port" indir "0 1")
    expect_eq "netlink create: the lowest free id" "$(val context "$out")" 1
    expect_eq "netlink create: the table replicated to 128" "$(val indir "$out")" "$(spread 128 2)"
    out=$($J rss-create "$port" ctx 5)
    expect_eq "netlink create with id 5" "$(val context "$out")" 5
    expect_eq "context 5 without a table: the default over 4 queues (ethtool -x)" "$(table context 5)" "$(spread 128 4)"
    expect_eq "context 5's function (ethtool -x)" "$(hfunc_on context 5)" toeplitz
    expect_eq "context 5's key is 40 bytes" "$(val hkey_len "$($J rss-get "$port" 5)")" 40
    expect_eq "netlink create with id 9 (ids 1-8)" "$($J rss-create "$port" ctx 9 | sed -n 's/^error=//p')" "-34 Numerical result out of range"
    expect_eq "netlink create with id 5 again" "$($J rss-create "$port" ctx 5 | sed -n 's/^error=\(-[0-9]*\).*/\1/p')" -16
    expect_eq "netlink dump: the contexts" "$($J rss-dump "$port" | sed 's/ indir=.*//' | tr '\n' ' ')" "context=0 context=1 context=5 "
    # Symmetric-xor: the fields of every flow type must be symmetric.
    $J rss-set "$port" 1 xfrm 1 || bad "input_xfrm symmetric-xor on context 1: $($J rss-set "$port" 1 xfrm 1)"
    expect_eq "context 1 input_xfrm" "$(val input_xfrm "$($J rss-get "$port" 1)")" 1
    # The kernel sends no INPUT_XFRM attribute for 0 (none).
    expect_eq "context 0 input_xfrm untouched (no attribute)" "$(val input_xfrm "$($J rss-get "$port")")" ""
    out=$($J rss-set "$port" 1 tcp4 0x70)
    grep -q "^error=-22" <<< "$out" && ok "asymmetric tcp4 fields under symmetric-xor refused: $(echo $out)" ||
        bad "asymmetric fields under symmetric-xor: $out"
    $J rss-set "$port" 1 tcp4 0x30 || bad "tcp4 sd on context 1"
    expect_eq "context 1 tcp4 fields (netlink)" "$(val flow_tcp4 "$($J rss-get "$port" 1)")" 0x30
    expect_eq "context 0 tcp4 fields untouched (ethtool -n)" "$(ethtool -n "$port" rx-flow-hash tcp4 | grep -c 'IP SA\|IP DA\|L4 bytes')" 4
    out=$(ethtool -U "$port" flow-type udp4 dst-port 4789 context 5 action 0 2>&1) || bad "-U into context 5: $out"
    loc=$(ethtool -u "$port" | awk '/^Filter:/ {f = $2} /Dest port: 4789/ {print f}')
    expect_eq "netlink delete of context 5 under a rule" "$($J rss-delete "$port" 5 | sed -n 's/^error=\(-[0-9]*\).*/\1/p')" -16
    ethtool -U "$port" delete "$loc" || bad "deleting rule $loc failed"
    $J rss-delete "$port" 5 || bad "netlink delete of context 5"
    $J rss-delete "$port" 1 || bad "netlink delete of context 1"
    expect_eq "netlink dump after the deletions" "$($J rss-dump "$port" | sed 's/ indir=.*//' | tr '\n' ' ')" "context=0 "
else
    echo "no $J in the initramfs (NT_LAB_BINS): the netlink paths not checked"
fi
ethtool -L "$port" combined 2 || bad "-L combined 2 with no context left failed"
ethtool -K "$port" ntuple off

# DIM profiles (ETHTOOL_A_COALESCE_RX_PROFILE/TX_PROFILE), which no Debian
# ethtool prints: the judge reads and sets them over netlink.
if [ -x "$J" ] && [ "$kv" -lt 6011 ]; then
    c=$($J coal-get "$port")
    expect_eq "no DIM profile on $(uname -r) (profiles are 6.11+)" "$(val rx_profile "$c")" ""
elif [ -x "$J" ]; then
    c=$($J coal-get "$port")
    echo "$c"
    rxp=$(val rx_profile "$c")
    expect_eq "rx-profile entries" "$(wc -w <<< "$rxp")" 5
    expect_eq "tx-profile entries" "$(wc -w <<< "$(val tx_profile "$c")")" 5
    expect_eq "an entry is usec,pkts (no comps)" "$(awk '{print $1}' <<< "$rxp" | tr -cd , | wc -c)" 1
    $J coal-set "$port" rx-profile "2,32 16,64 32,128 64,256 128,256" adaptive-rx 1 || bad "setting rx-profile"
    c=$($J coal-get "$port")
    expect_eq "rx-profile as set" "$(val rx_profile "$c")" "2,32 16,64 32,128 64,256 128,256"
    expect_eq "adaptive-rx as set" "$(val adaptive_rx "$c")" 1
    ethtool -c "$port" | grep -q "^Adaptive RX: on" && ok "ethtool -c: Adaptive RX on" || bad "ethtool -c: $(ethtool -c "$port" | head -n 3)"
    $J coal-set "$port" tx-profile "4,8" || bad "setting tx-profile's first entry"
    expect_eq "tx-profile: the first entry set, the rest kept" "$(val tx_profile "$($J coal-get "$port")" | awk '{print $1}')" 4,8
    out=$($J coal-set "$port" rx-profile "1,1,1")
    grep -q "^error=-95" <<< "$out" && ok "comps refused: $(echo $out)" || bad "comps: $out"
    out=$($J coal-set "$port" rx-profile "1,1 1,1 1,1 1,1 1,1 1,1")
    grep -q "^error=-7" <<< "$out" && ok "six entries refused: $(echo $out)" || bad "six entries: $out"
    expect_eq "rx-profile after the refusals" "$(val rx_profile "$($J coal-get "$port")")" "2,32 16,64 32,128 64,256 128,256"
    ethtool -C "$port" adaptive-rx off rx-usecs 30 || bad "ethtool -C adaptive-rx off rx-usecs 30"
    c=$($J coal-get "$port")
    expect_eq "adaptive-rx after ethtool -C" "$(val adaptive_rx "$c")" 0
    expect_eq "rx-profile after ethtool -C" "$(val rx_profile "$c")" "2,32 16,64 32,128 64,256 128,256"
fi
expect_eq "kernel warnings during the test" "$(warns)" "$warns0"
finish "netdevsim RSS, contexts, rules into a context on $(uname -r)"
