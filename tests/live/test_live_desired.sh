#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The desired state on this machine's kernel, inside a network namespace of
# its own (its sysctls are the namespace's; the host's are never touched):
#  - policy report: a desired sysctl changed behind the agent's back with
#    `sysctl -w` is reported within the check interval and left alone;
#  - the agent restarted with policy repair re-applies it at start (reason boot);
#  - changed again, it is repaired within the interval (reason drift);
#  - with a long interval, a link appearing in the namespace (an rtnetlink
#    message) makes the agent check within a second or two (reason link-up).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
live_require ip jq curl sysctl

somax() { ip netns exec "$ns" cat /proc/sys/net/core/somaxconn; }
newest() { nscurl "$url/v1/transactions?limit=1" | jq -r ".transactions[0].$1"; }

live_netns nt-desired
host_somax=$(cat /proc/sys/net/core/somaxconn)
want=$(( $(somax) + 101 ))
other=$(( $(somax) + 7 ))

start_agent --drift-policy report --drift-interval 1
[ -n "$url" ] && ok || { bad "agent did not start: $(cat "$work/err")"; exit 1; }
out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' \
	-d '{"persist":true,"profile":{"name":"hold","sysctl":{"net.core.somaxconn":"'$want'"}}}' "$url/v1/transactions")
code=${out##*$'\n'}; body=${out%$'\n'*}
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "persist apply: $code $body"
[ "$(somax)" = "$want" ] && ok || bad "somaxconn $(somax), wanted $want"
[ "$(nscurl "$url/v1/desired" | jq -r .source)" = transaction ] && ok || bad "desired: $(nscurl "$url/v1/desired")"
jq -e '.events | test("link messages")' <<<"$(nscurl "$url/v1/drift")" >/dev/null && ok || bad "no kernel events: $(nscurl "$url/v1/drift" | jq -r .events)"

# Report: seen, not changed.
ip netns exec "$ns" sysctl -qw net.core.somaxconn=$other
drifted() { [ "$(nscurl "$url/v1/drift" | jq -r '.targets[] | select(.target == "net.core.somaxconn") | .current')" = "$other" ]; }
wait_for 4 drifted && ok || bad "drift not reported: $(nscurl "$url/v1/drift")"
sleep 1.5
[ "$(somax)" = "$other" ] && ok || bad "policy report changed somaxconn to $(somax)"
[ "$(nscurl "$url/v1/transactions" | jq .total)" = 1 ] && ok || bad "policy report made a transaction"
stop_agent

# Restart with repair: re-applied at start.
start_agent --drift-policy repair --drift-interval 1
[ -n "$url" ] && ok || { bad "agent did not start again: $(cat "$work/err")"; exit 1; }
is_want() { [ "$(somax)" = "$want" ]; }
wait_for 4 is_want && ok || bad "not re-applied at start: somaxconn $(somax)"
sleep 0.3
[ "$(newest reason)" = boot ] && [ "$(newest status)" = applied ] && ok || bad "boot transaction: $(newest reason) $(newest status)"

# Changed again: repaired within the interval.
ip netns exec "$ns" sysctl -qw net.core.somaxconn=$other
wait_for 4 is_want && ok || bad "not repaired: somaxconn $(somax)"
sleep 0.3
[ "$(newest reason)" = drift ] && ok || bad "repair reason $(newest reason)"
stop_agent

# A long interval: only an event can make the check come early.
start_agent --drift-policy repair --drift-interval 600
wait_for 4 is_want && ok || bad "somaxconn $(somax) after start"
sleep 1
ip netns exec "$ns" sysctl -qw net.core.somaxconn=$other
sleep 1
[ "$(somax)" = "$other" ] && ok || bad "repaired without an event (interval 600 s)"
t0=$(date +%s%N)
ip -n "$ns" link add nt-dummy0 type dummy 2>/dev/null || ip -n "$ns" link add nt-veth0 type veth peer name nt-veth1
wait_for 5 is_want && ok || bad "a link message did not trigger a check: somaxconn $(somax)"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "repaired ${ms} ms after the link appeared"
sleep 0.3
[ "$(newest reason)" = link-up ] && ok || bad "event repair reason $(newest reason)"
stop_agent

[ "$(cat /proc/sys/net/core/somaxconn)" = "$host_somax" ] && ok || bad "the host's somaxconn changed"
live_finish
