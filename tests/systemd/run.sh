#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package under real systemd: a Debian 12 root made by mmdebstrap
# from Debian's repositories (by the set-up), the package built by
# `deploy/dev.sh deb` and installed with apt-get (which pulls its runtime
# libraries from the set-up's cache), then the root booted with systemd-nspawn --boot in its own
# network namespace. Checked there:
#   - the unit starts and is active only once the agent said READY=1;
#   - the agent's journal lines carry priorities (an invalid profile file is
#     a warning, PRIORITY=4);
#   - `systemctl reload` re-reads a changed profile file, same process;
#   - the hardening holds: in the agent's own mount namespace /etc, /usr and
#     /home cannot be written, /proc/sys/kernel neither, /proc/sys/net can,
#     and its bounding set is CAP_NET_ADMIN + CAP_KILL; and it still does its
#     work: a profile changing net.core.somaxconn is applied and verified;
#   - kill -9 brings it back through Restart=on-failure;
#   - a desired state kept in /etc/nettune/desired.json is held after a
#     reload and re-applied at start after the value was reset;
#   - the watchdog is armed (WatchdogUSec) and pinged (a frozen agent, SIGSTOP,
#     is killed by systemd with SIGABRT and restarted);
#   - systemctl stop stops it cleanly; apt-get remove keeps the state,
#     purge removes it.
# Needs root, systemd-nspawn and what tests/systemd/prepare.sh (the set-up)
# put in /var/cache/nettune-systemd (NETTUNE_SYSTEMD_CACHE to move it): the
# root, apt's lists and the runtime libraries; the test itself sends nothing
# off the machine. Where it cannot run it exits 77 with the reason. Everything it starts is stopped
# on exit, also on failure.
set -uo pipefail

src=${NT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
cache=${NETTUNE_SYSTEMD_CACHE:-/var/cache/nettune-systemd}
work=$(mktemp -d /tmp/nettune-systemd.XXXXXX)
name=nt-sd-$$
nspawn_pid=
fails=0
passes=0

skip() { echo "SKIP: $*"; exit 77; }
pass() { passes=$((passes + 1)); echo "ok: $*"; }
fail() { fails=$((fails + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

cleanup() {
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		# SIGTERM makes nspawn ask the container's systemd to power off.
		kill -TERM "$nspawn_pid" 2>/dev/null
		for _ in $(seq 1 60); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL "$nspawn_pid" 2>/dev/null
		wait "$nspawn_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || skip "needs root (systemd-nspawn)"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn missing (apt-get install systemd-container)"
command -v nsenter >/dev/null || skip "nsenter missing (util-linux)"
[ -d /sys/fs/cgroup ] || skip "no cgroup file system: systemd cannot boot in a container here"

# The root, the package lists and the runtime libraries come from the
# set-up (tests/systemd/prepare.sh, which tests/prepare.sh runs): the test
# downloads nothing.
ls "$cache"/lists/*_Packages >/dev/null 2>&1 && [ -x "$cache/root-base/lib/systemd/systemd" ] ||
	skip "the Debian 12 root is not prepared in $cache: tests/prepare.sh BUILD_DIR -L systemd makes it (deploy/dev.sh test runs it first); tests download nothing"

# The package, built the documented way (the unit tests already ran in
# their own label: nocheck). NETTUNE_TEST_DEB=FILE uses a package already
# built (while working on this test).
t0=$(date +%s)
if [ -n "${NETTUNE_TEST_DEB:-}" ]; then
	deb=$NETTUNE_TEST_DEB
	echo "using $deb"
elif ! DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" NETTUNE_DEB_DIR="$work/deb" \
	"$src/deploy/dev.sh" deb >"$work/deb.log" 2>&1; then
	tail -30 "$work/deb.log"
	fail "deploy/dev.sh deb builds the package and lintian finds no error"
	exit 1
else
	deb=$(ls "$work"/deb/nettune_*_*.deb | head -1)
	pass "package built, lintian clean of errors ($(basename "$deb"), $(($(date +%s) - t0)) s)"
fi

# A copy of the root for this run; apt's lists and downloads are cached.
t0=$(date +%s)
cp -a "$cache/root-base" "$work/root"
cp "$deb" "$work/root/root/"
echo "nettune-test" >"$work/root/etc/hostname"
nspawn_common=(--register=no --keep-unit -D "$work/root" -M "$name"
	--bind="$cache/lists:/var/lib/apt/lists" --bind="$cache/archives:/var/cache/apt/archives")
# Without a network (--private-network): the runtime libraries are the ones
# the set-up fetched into the bound archives; one it missed fails here.
# (apt-get's --no-download refuses a local .deb: "Pathname to install is not
# absolute".)
if ! systemd-nspawn "${nspawn_common[@]}" --private-network --pipe /bin/sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /root/$(basename "$deb")" >"$work/install.log" 2>&1; then
	tail -20 "$work/install.log"
	fail "apt-get install ./nettune.deb in a fresh Debian 12 with the libraries tests/systemd/prepare.sh fetched"
	exit 1
fi
pass "apt-get install ./nettune.deb pulled its dependencies from the prepared cache, no network ($(($(date +%s) - t0)) s)"

# The fleet's files (issue 40): the package carries the alerting rules and
# the dashboard where docs/operations.md says, as they are in deploy/, and
# the installed rules load.
for f in prometheus/nettune.rules.yml grafana/nettune-dashboard.json; do
	if cmp -s "$src/deploy/$f" "$work/root/usr/share/nettune/$f"; then
		pass "the package installs /usr/share/nettune/$f, identical to deploy/$f"
	else
		fail "the package installs /usr/share/nettune/$f, identical to deploy/$f"
	fi
done
if command -v promtool >/dev/null; then
	if promtool check rules "$work/root/usr/share/nettune/prometheus/nettune.rules.yml" >"$work/promtool.log" 2>&1; then
		pass "promtool check rules accepts the installed rules ($(grep -c 'alert:' "$work/root/usr/share/nettune/prometheus/nettune.rules.yml") alerts)"
	else
		cat "$work/promtool.log"
		fail "promtool check rules accepts the installed rules"
	fi
fi

# Test fixtures inside the root: profile files (one valid, one not) and a
# shorter watchdog so its check fits in the test's time.
mkdir -p "$work/root/etc/systemd/system/nettune.service.d"
printf '[Service]\nWatchdogSec=4s\nTimeoutAbortSec=2s\n' >"$work/root/etc/systemd/system/nettune.service.d/test.conf"
echo '{"sysctl": {"net.core.somaxconn": "1024"}}' >"$work/root/etc/nettune/profiles/t1.json"
echo '{"sysctl": {"net.core.somaxconn": "many"}}' >"$work/root/etc/nettune/profiles/bad.json"

t0=$(date +%s)
systemd-nspawn "${nspawn_common[@]}" --boot --private-network >"$work/console.log" 2>&1 &
nspawn_pid=$!
# The container's init: the process named systemd under nspawn.
leader=
for _ in $(seq 1 60); do
	for p in $(pgrep -P "$nspawn_pid") $(pgrep -P "$(pgrep -P "$nspawn_pid" | head -1)" 2>/dev/null); do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = systemd ] && leader=$p
	done
	[ -n "$leader" ] && break
	kill -0 "$nspawn_pid" 2>/dev/null || break
	sleep 0.5
done
if [ -z "$leader" ]; then
	tail -20 "$work/console.log"
	skip "systemd-nspawn --boot did not start systemd in a container here"
fi
in_ct() { nsenter -t "$leader" -a -- "$@"; }
# Wait for the boot to finish (or degrade).
for _ in $(seq 1 120); do
	st=$(in_ct systemctl is-system-running 2>/dev/null)
	case $st in running|degraded) break ;; esac
	sleep 0.5
done
echo "container booted ($st) in $(($(date +%s) - t0)) s"

prop() { in_ct systemctl show -P "$1" nettune.service; }
api() { in_ct curl -sf --max-time 10 "$@"; }
wait_active_pid() { # wait until active with a main PID other than $1
	for _ in $(seq 1 80); do
		local pid
		pid=$(prop MainPID)
		[ "$(prop ActiveState)" = active ] && [ "$pid" != 0 ] && [ "$pid" != "$1" ] && return 0
		sleep 0.25
	done
	return 1
}

check "the unit is enabled by the package and started at boot" wait_active_pid 0
check "Type=notify: active means READY=1 came (status text 'serving')" \
	test "$(prop Type)/$(prop StatusText)" = "notify/serving"
check "the API answers in the container" api http://127.0.0.1:8470/v1/health -o /dev/null
check "the watchdog is armed (WatchdogUSec=4s)" test "$(prop WatchdogUSec)" = 4s
check "the state directory is root's, mode 0700" \
	test "$(in_ct stat -c '%U %a' /var/lib/nettune)" = "root 700"
api http://127.0.0.1:8470/v1/profiles/t1 >"$work/t1.json"
check "a valid profile file is loaded at start" grep -q '"1024"' "$work/t1.json"
in_ct journalctl -u nettune.service -o json --no-pager >"$work/journal.json"
check "an invalid profile file is a warning in the journal (PRIORITY=4) naming the file and JSON path" \
	python3 -c '
import json, sys
hits = [json.loads(l) for l in open(sys.argv[1]) if "profile_invalid" in l]
ok = any(h.get("PRIORITY") == "4" and "bad.json" in h["MESSAGE"] and "net.core.somaxconn" in h["MESSAGE"] for h in hits)
sys.exit(0 if ok else 1)' "$work/journal.json"
check "an access line is info (PRIORITY=6) with no <N> left in the text" \
	python3 -c '
import json, sys
hits = [json.loads(l) for l in open(sys.argv[1]) if " access " in l]
sys.exit(0 if hits and all(h.get("PRIORITY") == "6" and not h["MESSAGE"].startswith("<") for h in hits) else 1)' "$work/journal.json"

# Reload: a changed file is re-read by the same process.
pid1=$(prop MainPID)
echo '{"sysctl": {"net.core.somaxconn": "2048"}}' >"$work/root/etc/nettune/profiles/t1.json"
in_ct systemctl reload nettune.service
api http://127.0.0.1:8470/v1/profiles/t1 >"$work/t1.json"
check "systemctl reload re-reads a changed profile file" grep -q '"2048"' "$work/t1.json"
check "reload keeps the process (MainPID $pid1)" test "$(prop MainPID)" = "$pid1"
check "after reload the unit is active again (READY=1 after RELOADING=1)" test "$(prop ActiveState)" = active

# Hardening, seen from inside the agent's own mount namespace. The
# agent's PID on this side: the nettune process in the container's PID
# namespace whose innermost PID is the unit's MainPID.
host_pid() {
	local want ns p
	want=$(prop MainPID)
	ns=$(readlink /proc/"$leader"/ns/pid)
	for p in $(pgrep -x nettune); do
		[ "$(readlink /proc/"$p"/ns/pid)" = "$ns" ] || continue
		[ "$(awk '/^NSpid:/ {print $NF}' /proc/"$p"/status)" = "$want" ] && echo "$p"
	done
}
pid_host=$(host_pid)
[ -n "$pid_host" ] || fail "cannot find the agent's process"
in_agent_fails() { ! nsenter -t "$pid_host" -m -- sh -c "$1" 2>/dev/null; }
# The container itself may write these: what stops the agent is its unit.
check "(control) the container's root can write /etc, /usr and /home" \
	in_ct sh -c 'touch /etc/p /usr/p && mkdir -p /home/p && rm -r /etc/p /usr/p /home/p'
check "the agent cannot write /etc" in_agent_fails 'echo x > /etc/nettune-probe'
check "the agent cannot write /usr" in_agent_fails 'echo x > /usr/nettune-probe'
check "the agent cannot write /home" in_agent_fails 'mkdir -p /home/x'
check "the agent's /tmp is its own (PrivateTmp)" \
	bash -c "nsenter -t $pid_host -m -- sh -c 'echo x > /tmp/nettune-probe' && nsenter -t $leader -a -- test ! -e /tmp/nettune-probe"
check "the agent can write its state directory" nsenter -t "$pid_host" -m -- sh -c 'echo x > /var/lib/nettune/probe && rm /var/lib/nettune/probe'
check "the agent's capability bounding set is CAP_NET_ADMIN and CAP_KILL" \
	grep -q '^CapBnd:[[:space:]]*0000000000001020$' /proc/"$pid_host"/status
check "no new privileges" grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/"$pid_host"/status
check "a seccomp filter is on" grep -q '^Seccomp:[[:space:]]*2$' /proc/"$pid_host"/status
api -X POST -H 'Content-Type: application/json' -d '{"profile_name": "t1"}' \
	http://127.0.0.1:8470/v1/transactions >"$work/txn.json"
check "under the sandbox a profile is applied: net.core.somaxconn set to 2048 and verified" \
	bash -c "grep -q '\"status\":[[:space:]]*\"applied\"' '$work/txn.json' && [ \"\$(nsenter -t $leader -a cat /proc/sys/net/core/somaxconn)\" = 2048 ]"
check "nothing was written to /etc by the agent" bash -c "! ls '$work/root/etc/nettune-probe' 2>/dev/null"
# Under the unit's seccomp filter the agent still raises its open-files
# limit (its soft limit is the hard one) and holds the IRQ files of the
# host between reads (nettune_held_files, both files of each IRQ).
api http://127.0.0.1:8470/v1/topology >/dev/null
api http://127.0.0.1:8470/metrics >"$work/metrics.txt"
check "the agent's open-files soft limit is raised to its hard limit" \
	awk '/^Max open files/ { exit !($4 == $5 && $4 > 1024) }' /proc/"$pid_host"/limits
check "the agent holds the IRQ files open between reads (nettune_held_files > 0)" \
	awk '/^nettune_held_files / { found = 1; ok = $2 > 0 } END { exit !(found && ok) }' "$work/metrics.txt"

# The agent pings the watchdog: still the same process after twice
# WatchdogSec.
pid1=$(prop MainPID)
sleep 8
check "the agent pings the watchdog (same process after 2 x WatchdogSec)" \
	test "$(prop MainPID)/$(prop NRestarts)/$(prop ActiveState)" = "$pid1/0/active"
# Notifications and the watchdog's probe need no library: after pinging
# for 8 s the service maps neither libcurl nor libsystemd (opened only by
# the CLI's agent commands and sd-bus calls, kernel/dynlib.h).
check "the service maps neither libcurl nor libsystemd (with its watchdog on)" \
	bash -c "grep -q libc.so /proc/$pid_host/maps && ! grep -qE 'libcurl|libsystemd' /proc/$pid_host/maps"

# kill -9: Restart=on-failure brings it back.
pid1=$(prop MainPID)
in_ct kill -9 "$pid1"
check "kill -9 brings the agent back through Restart=" wait_active_pid "$pid1"
check "systemd counted the restart (NRestarts=1)" test "$(prop NRestarts)" = 1

# The watchdog: a frozen agent (SIGSTOP) stops pinging and is restarted.
pid1=$(prop MainPID)
in_ct kill -STOP "$pid1"
sleep 6
check "a frozen agent is killed by the watchdog and restarted" wait_active_pid "$pid1"
in_ct journalctl -u nettune.service --no-pager >"$work/journal.txt"
check "the journal says the watchdog fired" grep -qi "watchdog timeout" "$work/journal.txt"

# The desired state as a file (desired_file in the packaged configuration):
# written, then `systemctl reload`, and the agent holds it (policy repair);
# then a "reboot" of the service with the value reset behind its back: the
# fresh agent re-applies it at start, as a transaction with reason "boot".
ct_somaxconn() { in_ct cat /proc/sys/net/core/somaxconn; }
wait_somaxconn() { for _ in $(seq 1 60); do [ "$(ct_somaxconn)" = "$1" ] && return 0; sleep 0.25; done; return 1; }
echo '{"name": "held", "sysctl": {"net.core.somaxconn": "3000"}}' >"$work/root/etc/nettune/desired.json"
in_ct systemctl reload nettune.service
check "a desired state written to /etc/nettune/desired.json is held after reload (somaxconn 3000)" wait_somaxconn 3000
api http://127.0.0.1:8470/v1/desired >"$work/desired.json"
check "  ... GET /v1/desired names it and the file" \
	bash -c "grep -q '\"held\"' '$work/desired.json' && grep -q 'file:/etc/nettune/desired.json' '$work/desired.json'"
in_ct systemctl stop nettune.service
in_ct sh -c 'echo 4096 > /proc/sys/net/core/somaxconn'
in_ct systemctl start nettune.service
check "after a restart with the value reset, the desired state is re-applied at start" wait_somaxconn 3000
api 'http://127.0.0.1:8470/v1/transactions?limit=5' >"$work/boot.json"
check "  ... as a transaction with reason boot" grep -q '"reason":[[:space:]]*"boot"' "$work/boot.json"
rm -f "$work/root/etc/nettune/desired.json"

# Stop, remove, purge.
in_ct systemctl stop nettune.service
check "systemctl stop stops it cleanly (Result=success)" \
	test "$(prop ActiveState)/$(prop Result)" = "inactive/success"
in_ct env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq nettune >/dev/null 2>&1
check "apt-get remove keeps the state directory and the configuration" \
	test -f "$work/root/var/lib/nettune/nettune.db" -a -f "$work/root/etc/nettune/nettune.conf"
in_ct env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq nettune >/dev/null 2>&1
check "apt-get purge removes the state directory and the configuration file" \
	test ! -e "$work/root/var/lib/nettune" -a ! -e "$work/root/etc/nettune/nettune.conf"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
