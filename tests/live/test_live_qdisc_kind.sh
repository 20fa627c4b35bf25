#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A qdisc kind the running kernel lacks is refused at plan time (issue 43,
# item 4), on this machine's kernel, by an agent in a network namespace of
# its own with a veth pair: for fq and fq_codel, what the agent says agrees
# with the kernel's configuration (/proc/config.gz or /boot/config-$(uname
# -r)): a kind built in (=y) or loadable (=m) is planned, one not set is
# 422 naming the kind and the file. Nothing is loaded to find out: the
# loaded modules (/proc/modules, when the kernel has modules) and every
# veth's root qdisc read the same before and after.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root for network namespaces"; exit 77; }
for t in ip jq curl tc; do command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }; done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || { echo "SKIP: NT_BIN is not set to the nettune binary"; exit 77; }

if [ -r "/boot/config-$(uname -r)" ]; then
	config() { cat "/boot/config-$(uname -r)"; }
elif [ -r /proc/config.gz ]; then
	config() { zcat /proc/config.gz; }
else
	echo "SKIP: no kernel configuration to compare with"; exit 77
fi

ns=nt-qkind-$$
work=$(mktemp -d)
agent=""
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null
	wait 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$ns" || { echo "SKIP: cannot create a network namespace"; exit 77; }
ip -n "$ns" link set lo up
ip -n "$ns" link add nt0 type veth peer name nt1 || { echo "SKIP: cannot make a veth pair"; exit 77; }
ip -n "$ns" link set nt0 up
ip -n "$ns" link set nt1 up
modules_before=$(cat /proc/modules 2>/dev/null | awk '{print $1}' | sort)
qdisc_before=$(tc -n "$ns" qdisc show)

ip netns exec "$ns" "$NT_BIN" serve --listen 127.0.0.1:0 --root / --state-dir "$work/state" > "$work/out" 2>"$work/err" &
agent=$!
url=""
for _ in $(seq 100); do grep -q listening "$work/out" && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$url" ] && ok || { bad "agent in $ns did not start: $(cat "$work/err")"; exit 1; }

for kind in fq fq_codel; do
	sym=CONFIG_NET_SCH_$(echo "$kind" | tr a-z A-Z)
	v=$(config | sed -n "s/^$sym=\\([ym]\\)\$/\\1/p")
	[ -d "/sys/module/sch_$kind" ] && v=loaded
	out=$(ip netns exec "$ns" curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' \
		-d "{\"profile\":{\"name\":\"q\",\"qdisc\":[{\"interface\":\"nt0\",\"qdisc\":\"$kind\"}]}}" "$url/v1/plan")
	code=${out##*$'\n'}; body=${out%$'\n'*}
	echo "$kind: $sym=${v:-(not set)}: plan $code $(jq -c '.errors // [.steps[] | "\(.target) \(.before) -> \(.after)"]' <<<"$body")"
	if [ -n "$v" ]; then
		[ "$code" = 200 ] && ok || bad "$kind is in this kernel ($v) but was not planned: $code $body"
	else
		[ "$code" = 422 ] && ok || bad "$kind is not in this kernel but was planned: $code $body"
		jq -e --arg k "$kind" '.errors[0].path == "$.qdisc[0].qdisc" and
			(.errors[0].message | test("no qdisc kind .\($k).")) and (.errors[0].message | test("config"))' <<<"$body" >/dev/null &&
			ok || bad "the refusal does not name $kind and the configuration: $body"
	fi
done

[ "$(cat /proc/modules 2>/dev/null | awk '{print $1}' | sort)" = "$modules_before" ] && ok || bad "modules were loaded"
[ "$(tc -n "$ns" qdisc show)" = "$qdisc_before" ] && ok || bad "a root qdisc changed: $(tc -n "$ns" qdisc show)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
