#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Transactions against this machine's kernel (issues 3 and 5):
#  - inside a network namespace of its own, the agent changes that
#    namespace's sysctls, rolls them back, and leaves the host's untouched;
#  - what the kernel would refuse in the namespace (an unknown or
#    disallowed congestion control, a read-only sysctl) is refused at the
#    plan; a step the kernel refuses anyway (a port range below
#    ip_unprivileged_port_start) rolls the whole transaction back, with the
#    kernel's error in the result;
#  - a plan kept under its id is applied once, exactly, and refused with
#    nothing applied when its target moved since (the namespace's sysctl);
#  - this machine's own NIC IRQ affinity is set and restored through a
#    transaction, leaving the machine exactly as found.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root for network namespaces and IRQ affinity"; exit 77; }
for t in ip jq curl; do command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }; done

ns=nt-txn-$$
work=$(mktemp -d)
agents=()
cleanup() {
	for p in "${agents[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	[ -n "${irq:-}" ] && [ -n "${irq_orig:-}" ] && echo "$irq_orig" > /proc/irq/$irq/smp_affinity_list 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# start_agent NAME [netns]: sets $url
start_agent() {
	local name=$1 netns=${2:-}
	mkdir -p "$work/$name"
	if [ -n "$netns" ]; then
		ip netns exec "$netns" "$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/$name" > "$work/$name.out" 2>&1 &
	else
		"$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/$name" > "$work/$name.out" 2>&1 &
	fi
	agents+=($!)
	for _ in $(seq 100); do grep -q listening "$work/$name.out" && break; sleep 0.05; done
	url=$(sed -n 's/^listening on //p' "$work/$name.out")
}
# post URL BODY: prints body, sets $code
post() {
	local out
	out=$(curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' -d "$2" "$1")
	code=${out##*$'\n'}
	body=${out%$'\n'*}
}

ip netns add "$ns" || { echo "SKIP: cannot create a network namespace"; exit 77; }
ip -n "$ns" link set lo up
host_somax=$(cat /proc/sys/net/core/somaxconn)
host_rmem=$(cat /proc/sys/net/ipv4/tcp_rmem)
ns_somax=$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)
ns_rmem=$(ip netns exec "$ns" cat /proc/sys/net/ipv4/tcp_rmem)

# The agent inside the namespace: it must talk through the namespace's own
# loopback, so curl runs there too.
start_agent nsagent "$ns"
[ -n "$url" ] && ok || { bad "agent in $ns did not start: $(cat "$work/nsagent.out")"; exit 1; }
nscurl() { ip netns exec "$ns" curl -s "$@"; }
health=$(nscurl "$url/v1/health")
[ "$(jq -r .netns <<<"$health")" = "$(ip netns exec "$ns" readlink /proc/self/ns/net)" ] && ok || bad "health netns: $health"

profile='{"profile":{"name":"ns-buffers","sysctl":{"net.core.somaxconn":"'$((ns_somax + 77))'","net.ipv4.tcp_rmem":"4096 87380 16777216"}}}'
out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' -d "$profile" "$url/v1/transactions")
code=${out##*$'\n'}; body=${out%$'\n'*}
[ "$code" = 201 ] && ok || bad "apply in namespace: $code $body"
[ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "status $(jq -r .status <<<"$body")"
id=$(jq -r .id <<<"$body")
[ "$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)" = $((ns_somax + 77)) ] && ok || bad "somaxconn not set in the namespace"
[ "$(ip netns exec "$ns" cat /proc/sys/net/ipv4/tcp_rmem | tr -s '\t ' ' ')" = "4096 87380 16777216" ] && ok || bad "tcp_rmem not set in the namespace"
[ "$(cat /proc/sys/net/core/somaxconn)" = "$host_somax" ] && ok || bad "the host's somaxconn changed"
[ "$(cat /proc/sys/net/ipv4/tcp_rmem)" = "$host_rmem" ] && ok || bad "the host's tcp_rmem changed"

out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' -d '{}' "$url/v1/transactions/$id/rollback")
code=${out##*$'\n'}; body=${out%$'\n'*}
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "rollback: $code $body"
[ "$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)" = "$ns_somax" ] && ok || bad "somaxconn not restored in the namespace"
[ "$(ip netns exec "$ns" cat /proc/sys/net/ipv4/tcp_rmem)" = "$ns_rmem" ] && ok || bad "tcp_rmem not restored in the namespace"

# What the kernel would refuse in the namespace is refused at the plan, 422
# naming the path: a congestion control it does not have, one
# it has but does not allow a child namespace (cubic is not in
# tcp_allowed_congestion_control), and net.core.rmem_max, the machine's.
plan422() {
	local out code body
	out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' -d "$1" "$url/v1/plan")
	code=${out##*$'\n'}; body=${out%$'\n'*}
	[ "$code" = 422 ] && ok || bad "plan $1: $code $body"
	jq -e --arg p "$2" --arg w "$3" '.errors[] | select(.path == $p and (.message | contains($w)))' <<<"$body" >/dev/null &&
		ok || bad "plan $1: no error at $2 saying '$3': $body"
}
cc=net.ipv4.tcp_congestion_control
plan422 '{"profile":{"name":"cc","sysctl":{"'$cc'":"nosuchcc"}}}' "\$.sysctl['$cc']" "'nosuchcc' is not"
if ! ip netns exec "$ns" grep -qw cubic /proc/sys/net/ipv4/tcp_allowed_congestion_control &&
	ip netns exec "$ns" grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control; then
	plan422 '{"profile":{"name":"cc","sysctl":{"'$cc'":"cubic"}}}' "\$.sysctl['$cc']" "not in net.ipv4.tcp_allowed_congestion_control"
else
	echo "note: cubic is allowed in a child namespace here (or not available): allowed-list refusal not exercised"
fi
# net.core.rmem_max is one for the whole machine (read-only in a child
# namespace on kernels that show it there): refused for its scope first.
plan422 '{"profile":{"name":"ro","sysctl":{"net.core.rmem_max":"16777216"}}}' "\$.sysctl['net.core.rmem_max']" "is machine-wide"

# The kernel refuses a step the plan cannot foresee (a local port range
# below ip_unprivileged_port_start): the earlier step (somaxconn) is undone
# and the failing step carries the error.
bad_profile='{"profile":{"name":"refused","sysctl":{"net.core.somaxconn":"'$((ns_somax + 5))'","net.ipv4.ip_local_port_range":"100 200"}}}'
out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' -d "$bad_profile" "$url/v1/transactions")
code=${out##*$'\n'}; body=${out%$'\n'*}
[ "$(jq -r .status <<<"$body")" = rolled_back ] && ok || bad "refused step: status $(jq -r .status <<<"$body") ($code)"
jq -e '.error | test("Invalid argument|EINVAL"; "i")' <<<"$body" >/dev/null && ok || bad "kernel error not carried: $(jq -r .error <<<"$body")"
[ "$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)" = "$ns_somax" ] && ok || bad "somaxconn not rolled back after the refused step"
hist=$(nscurl "$url/v1/transactions")
[ "$(jq '.total' <<<"$hist")" -eq 3 ] && ok || bad "history total $(jq .total <<<"$hist")"

# A plan kept under its id: applied exactly, once, and refused
# with nothing applied when its target moved since.
nspost() {   # nspost URL BODY: sets $code and $body
	local out
	out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' -d "$2" "$1")
	code=${out##*$'\n'}; body=${out%$'\n'*}
}
plan_profile='{"name":"ns-plan","sysctl":{"net.core.somaxconn":"'$((ns_somax + 33))'"}}'
nspost "$url/v1/plan" "$plan_profile"
pid=$(jq -r '.id // empty' <<<"$body")
[ "$code" = 200 ] && [[ $pid == p-* ]] && ok || bad "plan id: $code $body"
[ "$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)" = "$ns_somax" ] && ok || bad "planning changed somaxconn"
nspost "$url/v1/transactions?steps=failed" '{"plan_id":"'$pid'"}'
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && [ "$(jq .nsteps <<<"$body")" = 1 ] &&
	[ "$(jq '.steps | length' <<<"$body")" = 0 ] && ok || bad "apply by plan id: $code $body"
pid_txn=$(jq -r .id <<<"$body")
[ "$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)" = $((ns_somax + 33)) ] && ok || bad "the plan's somaxconn not set"
nspost "$url/v1/transactions" '{"plan_id":"'$pid'"}'
[ "$code" = 410 ] && [ "$(jq -r .type <<<"$body" | sed 's/.*\///')" = plan-used ] && ok || bad "plan id reused: $code $body"
nspost "$url/v1/transactions/$pid_txn/rollback?steps=none" '{}'
[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "rollback of the plan's transaction: $code $body"
[ "$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)" = "$ns_somax" ] && ok || bad "somaxconn not restored after the plan's rollback"
nspost "$url/v1/plan" "$plan_profile"
pid=$(jq -r '.id // empty' <<<"$body")
ip netns exec "$ns" sh -c "echo $((ns_somax + 1)) > /proc/sys/net/core/somaxconn"
nspost "$url/v1/transactions" '{"plan_id":"'$pid'"}'
[ "$code" = 409 ] && [ "$(jq -r '.moved[0].target' <<<"$body")" = net.core.somaxconn ] &&
	[ "$(jq -r '.moved[0].now' <<<"$body")" = $((ns_somax + 1)) ] && ok || bad "moved target: $code $body"
[ "$(ip netns exec "$ns" cat /proc/sys/net/core/somaxconn)" = $((ns_somax + 1)) ] && ok || bad "a moved plan changed somaxconn"
ip netns exec "$ns" sh -c "echo $ns_somax > /proc/sys/net/core/somaxconn"

# This machine's own NIC IRQ: the host agent moves it and restores it.
start_agent hostagent
topo=$(curl -s "$url/v1/topology")
nic=$(jq -r '[.nics[] | select(.virtual == false and (.irqs | length) > 0)][0].name // empty' <<<"$topo")
ncpu=$(nproc)
if [ -z "$nic" ] || [ "$ncpu" -lt 2 ]; then
	echo "note: no physical NIC with IRQs or one CPU only: host IRQ affinity not exercised"
else
	# Snapshot every IRQ of the NIC; move them all to the last CPU.
	declare -A before_list before_mask
	for irq in $(jq -r --arg n "$nic" '.nics[] | select(.name == $n) | .irqs[] | select(.managed != true) | .irq' <<<"$topo"); do
		before_list[$irq]=$(cat /proc/irq/$irq/smp_affinity_list)
		before_mask[$irq]=$(cat /proc/irq/$irq/smp_affinity)
	done
	irq=""  # nothing for cleanup to restore: the rollback does it, checked below
	target=$(( ncpu - 1 ))
	post "$url/v1/transactions" '{"profile":{"name":"host-irq","irq_affinity":[{"interface":"'$nic'","cpus":"'$target'"}]}}'
	[ "$code" = 201 ] && [ "$(jq -r .status <<<"$body")" = applied ] && ok || bad "host IRQ apply: $code $body"
	hid=$(jq -r .id <<<"$body")
	nsteps=$(jq '.steps | length' <<<"$body")
	changed=0
	for i in "${!before_list[@]}"; do [ "${before_list[$i]}" != "$target" ] && changed=$((changed+1)); done
	[ "$nsteps" -eq "$changed" ] && ok || bad "$nsteps steps for $changed IRQs not yet on CPU $target"
	for i in "${!before_list[@]}"; do
		[ "$(cat /proc/irq/$i/smp_affinity_list)" = "$target" ] && ok || bad "IRQ $i affinity $(cat /proc/irq/$i/smp_affinity_list), wanted $target"
		b=$(jq -r --arg i "$i" '.steps[] | select(.target == $i) | .before' <<<"$body")
		[ -z "$b" ] || [ "$b" = "${before_list[$i]}" ] && ok || bad "IRQ $i journalled before-value $b, was ${before_list[$i]}"
		# The effective CPUs are recorded beside the verified mask.
		o=$(jq -r --arg i "$i" '.steps[] | select(.target == $i) | .observed // ""' <<<"$body")
		[ -z "$b" ] || [[ $o == "effective "* ]] && ok || bad "IRQ $i step observed '$o'"
	done
	post "$url/v1/transactions/$hid/rollback" '{}'
	[ "$code" = 201 ] && ok || bad "host IRQ rollback: $code $body"
	for i in "${!before_list[@]}"; do
		[ "$(cat /proc/irq/$i/smp_affinity_list)" = "${before_list[$i]}" ] && ok || bad "IRQ $i not restored: $(cat /proc/irq/$i/smp_affinity_list) vs ${before_list[$i]}"
		[ "$(cat /proc/irq/$i/smp_affinity)" = "${before_mask[$i]}" ] && ok || bad "IRQ $i mask not restored"
	done
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
