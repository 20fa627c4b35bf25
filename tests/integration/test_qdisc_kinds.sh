#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A qdisc kind the kernel lacks is refused at plan time (issue 43, item 4),
# against a real agent on a copy of the x460 fixture whose kernel
# configuration and module lists the test writes (kernel/qdisc_kinds.h: the
# agent reads them under its root, loads no module, sends no request):
#  - /proc/config.gz without CONFIG_NET_SCH_FQ: "fq" is 422 at
#    $.qdisc[0].qdisc naming the kind and the file; mq with an fq child at
#    $.qdisc[0].child; fq_codel (=y) is planned;
#  - /boot/config-RELEASE (read before /proc/config.gz) with
#    CONFIG_NET_SCH_FQ=m: refused while /lib/modules/RELEASE/modules.dep
#    lacks sch_fq, planned once it lists it; /sys/module/sch_fq (loaded)
#    is planned whatever the rest says;
#  - nothing to tell (no configuration, no module lists): planned, the
#    apply being the judge, as before.
# And bench-run's report of a failed apply says what is true: with a step
# failing (NETTUNE_TEST_FAULT), the transaction is rolled back and the
# report says command_ran false, exit_status null, host_restored true by
# the rollback; a profile refused at plan time says host_restored true,
# nothing applied. COMMAND never runs, and bench-run exits 125.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
for t in curl jq gzip; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
[ -n "${NT_BIN:-}" ] && [ -x "$NT_BIN" ] || { echo "SKIP: NT_BIN is not set to the nettune binary"; exit 77; }

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

root=$work/root
cp -a "$NT_FIXTURES/x460-4node-8nic" "$root"
start() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	: > "$work/out"
	"$NT_BIN" serve --listen 127.0.0.1:0 --root "$root" --state-dir "$work/state" > "$work/out" 2>> "$work/err" &
	pid=$!
	for _ in $(seq 150); do grep -q listening "$work/out" && break; sleep 0.1; done
	url=$(sed -n 's/^listening on //p' "$work/out")
	[ -n "$url" ] || { echo "FAIL: agent did not start"; cat "$work/err"; exit 1; }
}
# plan JSON-PROFILE: sets $code and $body
plan() {
	local out
	out=$(curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' -d "{\"profile\":$1}" "$url/v1/plan")
	code=${out##*$'\n'}; body=${out%$'\n'*}
}
fq='{"name":"q","qdisc":[{"interface":"eth0","qdisc":"fq"}]}'
start

# Nothing tells: planned, as before.
plan "$fq"
check "no configuration: fq planned ($code $body)" [ "$code" = 200 ]

# /proc/config.gz without fq.
mkdir -p "$root/proc"
printf 'CONFIG_NET_SCHED=y\nCONFIG_NET_SCH_FQ_CODEL=y\n# CONFIG_NET_SCH_FQ is not set\n# CONFIG_MODULES is not set\n' |
	gzip > "$root/proc/config.gz"
plan "$fq"
echo "fq with config.gz: $code $(jq -c .errors <<<"$body")"
check "fq refused: 422 ($code)" [ "$code" = 422 ]
check "fq refused at \$.qdisc[0].qdisc, naming the kind and the file" jq -e '.errors | length == 1 and
	.[0].path == "$.qdisc[0].qdisc" and (.[0].message | test("no qdisc kind .fq.")) and
	(.[0].message | test("CONFIG_NET_SCH_FQ is not set in /proc/config.gz"))' <<<"$body" >/dev/null
plan '{"name":"q","qdisc":[{"interface":"eth0","qdisc":"mq","child":"fq"}]}'
check "mq's fq child refused at .child ($code)" jq -e '[.errors[] | select(.path == "$.qdisc[0].child" and
	(.message | test("fq")))] | length == 1' <<<"$body" >/dev/null
plan '{"name":"q","qdisc":[{"interface":"eth0","qdisc":"fq_codel"}]}'
check "fq_codel (=y) planned ($code $body)" [ "$code" = 200 ]

# /boot/config-RELEASE, read first: fq as a module.
rel=6.1.0-nt-test
mkdir -p "$root/proc/sys/kernel" "$root/boot" "$root/lib/modules/$rel"
echo "$rel" > "$root/proc/sys/kernel/osrelease"
printf 'CONFIG_MODULES=y\nCONFIG_NET_SCHED=y\nCONFIG_NET_SCH_FQ=m\n' > "$root/boot/config-$rel"
echo "kernel/net/sched/sch_htb.ko:" > "$root/lib/modules/$rel/modules.dep"
plan "$fq"
check "fq=m not installed: refused ($code)" jq -e '.errors[0].message | test("CONFIG_NET_SCH_FQ=m in /boot/config-6.1.0-nt-test, and /lib/modules/6.1.0-nt-test has no sch_fq")' <<<"$body" >/dev/null
echo "kernel/net/sched/sch_fq.ko.xz:" >> "$root/lib/modules/$rel/modules.dep"
plan "$fq"
check "fq=m installed: planned ($code $body)" [ "$code" = 200 ]
# Loaded: whatever the configuration says.
printf 'CONFIG_NET_SCHED=y\n# CONFIG_NET_SCH_FQ is not set\n' > "$root/boot/config-$rel"
plan "$fq"
check "not set: refused again ($code)" [ "$code" = 422 ]
mkdir -p "$root/sys/module/sch_fq"
plan "$fq"
check "/sys/module/sch_fq: planned ($code $body)" [ "$code" = 200 ]
rmdir "$root/sys/module/sch_fq"

# No configuration at all, only /lib/modules' lists, as in the lab's guest
# (an initramfs with Debian's modules and no /boot): mq is built into every
# kernel (net/sched/Makefile's obj-y), never a module nor in
# modules.builtin, so it is planned (it was refused, and the lab's mq-fq
# check failed on it); fq, listed nowhere, is refused.
mv "$root/boot/config-$rel" "$work/config.kept"
mv "$root/proc/config.gz" "$work/config.gz.kept"
echo "kernel/net/sched/sch_htb.ko:" > "$root/lib/modules/$rel/modules.dep"
echo "kernel/net/sched/sch_fq_codel.ko" > "$root/lib/modules/$rel/modules.builtin"
# eth0 with four transmit queues, as mq needs.
mkdir "$root"/sys/class/net/eth0/queues/tx-{1,2,3}
plan '{"name":"q","qdisc":[{"interface":"eth0","qdisc":"mq"}]}'
check "modules lists only: mq planned ($code $body)" [ "$code" = 200 ]
plan "$fq"
check "modules lists only: fq refused, named ($code)" jq -e '.errors[0].message | test("lists no sch_fq")' <<<"$body" >/dev/null
plan '{"name":"q","qdisc":[{"interface":"eth0","qdisc":"mq","child":"fq_codel"}]}'
check "modules lists only: mq with fq_codel children planned ($code $body)" [ "$code" = 200 ]
rmdir "$root"/sys/class/net/eth0/queues/tx-{1,2,3}
mv "$work/config.kept" "$root/boot/config-$rel"
mv "$work/config.gz.kept" "$root/proc/config.gz"

# bench-run: refused at plan time.
"$NT_BIN" bench-run --agent "$url" --root "$root" --profile <(echo "$fq") --report "$work/r1.json" -- \
	touch "$work/ran1" 2> "$work/r1.err"
rc=$?
cat "$work/r1.err"
check "refused: exit 125 ($rc)" [ "$rc" = 125 ]
check "refused: COMMAND did not run" [ ! -e "$work/ran1" ]
check "refused: the report says what is true ($(jq -c '{command_ran, exit_status, host_restored, host_restored_by}' "$work/r1.json"))" \
	jq -e '.command_ran == false and .exit_status == null and .host_restored == true and
	(.host_restored_by | test("nothing was applied"))' "$work/r1.json" >/dev/null

# bench-run: the second step fails, the first is rolled back.
kill "$pid"; wait "$pid" 2>/dev/null; pid=
export NETTUNE_TEST_FAULT=fail:1
start
unset NETTUNE_TEST_FAULT
two='{"name":"two","mtu":[{"interface":"eth0","mtu":9000},{"interface":"eth1","mtu":9000}]}'
"$NT_BIN" bench-run --agent "$url" --root "$root" --profile <(echo "$two") --report "$work/r2.json" -- \
	touch "$work/ran2" 2> "$work/r2.err"
rc=$?
cat "$work/r2.err"
check "failed apply: exit 125 ($rc)" [ "$rc" = 125 ]
check "failed apply: COMMAND did not run" [ ! -e "$work/ran2" ]
check "failed apply: the report says what is true ($(jq -c '{status: .transaction.status, command_ran, exit_status, host_restored, host_restored_by}' "$work/r2.json"))" \
	jq -e '.transaction.status == "rolled_back" and .command_ran == false and .exit_status == null and
	.host_restored == true and (.host_restored_by | test("rollback of transaction [0-9]+ \\(rolled_back"))' "$work/r2.json" >/dev/null
check "failed apply: eth0 back at 1500" [ "$(cat "$root/sys/class/net/eth0/mtu")" = 1500 ]
grep -q "host restored: yes" "$work/r2.err" && ok || bad "bench-run did not say the host was restored"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
