#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An agent started with `ip netns exec NS nettune serve` knows it runs
# outside the initial network namespace (issue 43, item 1):
#  - GET /v1/health says netns_initial false and machine_wide "refused",
#    and the host model says netns_initial false; an agent on the host
#    says netns_initial true;
#  - a plan of {"name":"o","other_irqs":{"cpus":"1"}} (the machine's own
#    IRQs, virtio's included) is refused with 422, naming $.other_irqs.cpus
#    and the key that allows it; so is a host-wide sysctl
#    (net.core.rps_sock_flow_entries), while a per-namespace one
#    (net.core.somaxconn) is planned;
#  - RFS flow tables (rps flow_cnt on lo) plan there with a warning that the
#    machine-wide socket table they need cannot be read or set from it;
#  - an agent whose configuration file says allow_machine_wide = yes plans
#    other_irqs, with the warning, and health says "allowed".
# Plans only: nothing is applied, and every IRQ's affinity is compared
# before and after to show it.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
live_require ip jq curl

irq_snapshot() { for f in /proc/irq/*/smp_affinity_list; do echo "$f $(cat "$f" 2>/dev/null)"; done; }

live_netns nt-scope
irq_snapshot > "$work/irqs.before"
[ "$(wc -l < "$work/irqs.before")" -gt 0 ] || { echo "SKIP: no IRQs under /proc/irq"; exit 77; }

# The agent in the namespace, as docs/ci.md sets it up.
start_agent
[ -n "$url" ] && ok || { bad "agent in $ns did not start: $(cat "$work/err")"; exit 1; }
health=$(nscurl "$url/v1/health")
jq -e '.netns_initial == false and .machine_wide == "refused" and .status == "ok"' <<<"$health" >/dev/null &&
	ok || bad "health in $ns: $health"
topo=$(nscurl "$url/v1/topology")
[ "$(jq -r .host.netns_initial <<<"$topo")" = false ] && ok || bad "topology netns_initial: $(jq -c .host <<<"$topo")"

post /v1/plan '{"profile":{"name":"o","other_irqs":{"cpus":"1"}}}'
echo "other_irqs in $ns: $code $(jq -c '.errors' <<<"$body")"
[ "$code" = 422 ] && ok || bad "other_irqs planned in $ns: $code $(jq -c '{steps: (.steps | length)}' <<<"$body" 2>/dev/null)"
jq -e '.errors | length == 1' <<<"$body" >/dev/null && ok || bad "one error for other_irqs: $body"
jq -e '.errors[] | select(.path == "$.other_irqs.cpus" and (.message | test("machine-wide")) and (.message | test("allow_machine_wide")))' <<<"$body" >/dev/null &&
	ok || bad "the refusal names neither the path nor the key: $body"

post /v1/plan '{"profile":{"name":"s","sysctl":{"net.core.rps_sock_flow_entries":"32768"}}}'
[ "$code" = 422 ] && jq -e '.errors[] | select(.path == "$.sysctl['"'"'net.core.rps_sock_flow_entries'"'"']" and (.message | test("machine-wide")))' <<<"$body" >/dev/null &&
	ok || bad "a host-wide sysctl in $ns: $code $body"
# RFS flow tables of a link here plan, but steer nothing without the
# machine-wide socket table, which this namespace cannot see: said (item 9).
post /v1/plan '{"profile":{"name":"f","rps":[{"interface":"lo","cpus":"0","flow_cnt":4096}]}}'
[ "$code" = 200 ] && jq -e '.warnings[] | select(test("RFS steers nothing.*rps_sock_flow_entries.*machine-wide"))' <<<"$body" >/dev/null &&
	ok || bad "RFS in $ns without the socket table's warning: $code $(jq -c '{warnings, errors}' <<<"$body")"
somax=$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)
post /v1/plan '{"profile":{"name":"n","sysctl":{"net.core.somaxconn":"'$((somax + 1))'"}}}'
[ "$code" = 200 ] && [ "$(jq '.steps | length' <<<"$body")" = 1 ] && ok || bad "a per-namespace sysctl in $ns: $code $body"
stop_agent

# Allowed by the operator, in the configuration file.
printf 'allow_machine_wide = yes\n' > "$work/nettune.conf"
start_agent --config "$work/nettune.conf"
[ -n "$url" ] && ok || { bad "agent with allow_machine_wide did not start: $(cat "$work/err")"; exit 1; }
[ "$(nscurl "$url/v1/health" | jq -r .machine_wide)" = allowed ] && ok || bad "health with allow_machine_wide: $(nscurl "$url/v1/health")"
post /v1/plan '{"profile":{"name":"o","other_irqs":{"cpus":"1"}}}'
echo "other_irqs allowed: $code, $(jq '[.steps[] | select(.kind == "irq_affinity")] | length' <<<"$body" 2>/dev/null) irq_affinity steps"
[ "$code" = 200 ] && ok || bad "other_irqs with allow_machine_wide: $code $body"
jq -e '.warnings[] | select(test("irq_affinity changes the whole machine.*allow_machine_wide"))' <<<"$body" >/dev/null &&
	ok || bad "no warning with allow_machine_wide: $(jq -c .warnings <<<"$body")"
# The plan is of every IRQ not on CPU 1 alone; on a machine where all are,
# there is nothing to plan, and the 200 is all there is to see.
other=$(awk '$2 != "1"' "$work/irqs.before" | wc -l)
[ "$other" = 0 ] || jq -e '[.steps[] | select(.kind == "irq_affinity")] | length > 0' <<<"$body" >/dev/null &&
	ok || bad "no irq_affinity steps planned although $other IRQs are not on CPU 1"
stop_agent

# On the host: the initial namespace.
start_agent_in ""
[ -n "$url" ] && ok || { bad "agent on the host did not start: $(cat "$work/err")"; exit 1; }
health=$(curl -s "$url/v1/health")
jq -e '.netns_initial == true and .machine_wide == "allowed"' <<<"$health" >/dev/null && ok || bad "health on the host: $health"
stop_agent

irq_snapshot > "$work/irqs.after"
cmp -s "$work/irqs.before" "$work/irqs.after" && ok || bad "IRQ affinity changed: $(diff "$work/irqs.before" "$work/irqs.after")"

live_finish
