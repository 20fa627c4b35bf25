# SPDX-License-Identifier: Apache-2.0
# Sourced by the shell live tests that run the agent inside a network
# namespace of their own. What each of them did alike, written once:
#  - counting: ok, bad (prints FAIL), skip_part, and live_finish for the
#    last line and the exit status; skip ends the whole test with 77;
#  - live_require TOOL...: root, NT_BIN and the tools, or the test skips;
#  - live_netns PREFIX: the namespace $ns (PREFIX-PID) with lo up and the
#    scratch folder $work; the EXIT trap stops the agent, calls
#    live_cleanup_more when the test defines it, deletes both;
#  - live_pair PREFIX IF: live_netns, and a second namespace $peer joined
#    to $ns by a veth (IFa in $ns, IFb in $peer, both up; the test gives
#    the addresses, so that its own file says where its packets go), for a
#    client in $ns and a server in $peer (live_iperf3_server ADDR);
#  - start_agent ARGS (in $ns), start_agent_in NS ARGS ("" for the initial
#    namespace), start_agent_cmd CMD (CMD execs the agent), stop_agent; $url is the agent's, empty when it did not
#    start (its stderr is in $work/err);
#  - nscurl, post PATH JSON (sets $code and $body), wait_for SECONDS CMD.
# `ip netns exec` execs its command, so $agent is the agent itself and the
# kill reaches it.

pass=0; fail=0; skipped=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; exit 77; }
skip_part() { skipped=$((skipped+1)); echo "SKIP (part): $*"; }

live_require() {
	local t
	[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
	for t in "$@"; do command -v "$t" >/dev/null || skip "$t is not installed"; done
	[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || skip "NT_BIN is not set to the nettune binary"
}

agent=""
live_cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	# What still runs in the test's namespace (a server started through a
	# function, so not the shell's own child) would keep the wait below,
	# and the namespace, forever.
	local n
	for n in ${ns:-} ${peer:-}; do ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null; done
	wait 2>/dev/null
	declare -F live_cleanup_more >/dev/null && live_cleanup_more
	for n in ${ns:-} ${peer:-}; do ip netns del "$n" 2>/dev/null; done
	[ -n "${work:-}" ] && rm -rf "$work"
}

live_netns() {
	ns=$1-$$
	work=$(mktemp -d)
	trap live_cleanup EXIT
	ip netns add "$ns" || { ns=""; skip "cannot create a network namespace"; }
	ip -n "$ns" link set lo up
}

live_pair() {
	live_netns "$1"
	peer=$1-peer-$$
	ip netns add "$peer" || { peer=""; bad "cannot create the namespace $1-peer-$$"; exit 1; }
	ip -n "$peer" link set lo up
	ip link add "${2}a" netns "$ns" type veth peer name "${2}b" netns "$peer" || { bad "veth ${2}a"; exit 1; }
	ip -n "$ns" link set "${2}a" up
	ip -n "$peer" link set "${2}b" up
}

# live_iperf3_server ADDR: iperf3 -s in $peer bound to ADDR (its output in
# $work/iperf3-server.out), waited on until it listens. live_cleanup
# kills what runs in $peer.
live_iperf3_server() {
	ip netns exec "$peer" iperf3 -s -B "$1" > "$work/iperf3-server.out" 2>&1 &
	for _ in $(seq 50); do
		[ -n "$(ip netns exec "$peer" ss -Hltn 'sport = :5201')" ] && return 0
		sleep 0.1
	done
	bad "iperf3 -s in $peer does not listen: $(cat "$work/iperf3-server.out")"
	exit 1
}

# start_agent_cmd CMD...: CMD execs the agent (its pid is $agent) and is
# waited on until it says where it listens.
start_agent_cmd() {
	: > "$work/out"
	"$@" > "$work/out" 2>>"$work/err" &
	agent=$!
	url=""
	for _ in $(seq 100); do grep -q listening "$work/out" && break; sleep 0.05; done
	url=$(sed -n 's/^listening on //p' "$work/out")
}
start_agent_in() {
	local where=$1; shift
	if [ -n "$where" ]; then
		start_agent_cmd ip netns exec "$where" "$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/state" "$@"
	else
		start_agent_cmd "$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/state" "$@"
	fi
}
start_agent() { start_agent_in "$ns" "$@"; }
stop_agent() { kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null; agent=""; }

nscurl() { ip netns exec "$ns" curl -s "$@"; }
post() {
	local out
	out=$(nscurl -w '\n%{http_code}' -H 'Content-Type: application/json' -d "$2" "$url$1")
	code=${out##*$'\n'}; body=${out%$'\n'*}
}
wait_for() {
	local s=$1; shift
	for _ in $(seq $((s * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}

live_finish() {
	if [ "$skipped" -gt 0 ]; then
		echo "$pass passed, $fail failed, $skipped parts skipped"
	else
		echo "$pass passed, $fail failed"
	fi
	[ "$fail" -eq 0 ]
}
