#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent on a real kernel with hundreds of NIC IRQs: boots the VM lab
# (tests/lab/run.sh) with extra multi-queue virtio NICs and runs the guest
# benchmark bench/lab/10-bench.sh in it, then prints its figures beside
# their references from the same boot, as bench/run.py does on a tree
# (docs/benchmarks.md, "On a real kernel").
#
#   bench/lab.sh BUILD_DIR [BASE_DIR]   (as root: the multi-queue NICs need taps)
#
# BUILD_DIR must hold nettune and bench_writeloop. BASE_DIR, another build's
# folder holding nettune (the code before a change), adds that agent to the
# same boot: the two take turns at the apply and rollback rounds, and the
# table shows both (under TCG two boots differ by more than most changes do).
# The lab's knobs are
# passed on, with these defaults here:
#   NETTUNE_LAB_ACCEL=auto       KVM when the guest runs under it, else TCG
#                                (about 10x slower: only the ratios mean much);
#                                a qemu that stalls or exits under KVM before
#                                /init is booted again with TCG, saying why
#   NETTUNE_LAB_MQ="8 32"        8 NICs of 32 queue pairs: 8 x 65 = 520 IRQs
#                                on nodes 1 and 3, 2 CPUs each
#   NETTUNE_LAB_INTREMAP=1       interrupt remapping, as servers have: the
#                                kernel moves an IRQ in the write (without
#                                it, on the IRQ's next interrupt)
#   NETTUNE_LAB_TEST_TIMEOUT=1200, NETTUNE_LAB_TIMEOUT=1500 (seconds)
# The whole console goes to a log whose path is printed; the guest's `ok:`
# lines are left out of what is shown. Exit: run.sh's (0 every check held,
# 77 skipped, saying why), or 1 when the guest printed no figures.
# Ratios and goals are printed, never enforced.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-}
base=${2:-}
[ -n "$build" ] && [ $# -le 2 ] || { echo "usage: bench/lab.sh BUILD_DIR [BASE_DIR]" >&2; exit 2; }
for b in nettune bench_writeloop; do
    [ -x "$build/$b" ] || { echo "bench/lab.sh: $build/$b is missing (cmake --build $build)" >&2; exit 2; }
done
[ -z "$base" ] || [ -x "$base/nettune" ] || { echo "bench/lab.sh: $base/nettune is missing" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench/lab.sh: jq is needed (Debian package jq)" >&2; exit 2; }

log=$(mktemp "${TMPDIR:-/tmp}/nettune-lab-bench.XXXXXX.log") || exit 1
bins=$build/bench_writeloop
if [ -n "$base" ]; then
    # In the guest as nettune-base, which 10-bench.sh looks for.
    basedir=$(mktemp -d "${TMPDIR:-/tmp}/nettune-lab-base.XXXXXX") || exit 1
    cp "$base/nettune" "$basedir/nettune-base" || exit 1
    bins="$bins $basedir/nettune-base"
fi
echo "bench/lab.sh: console log: $log"
pid=''
# run.sh stops its qemu when it is stopped; stop it if this script is.
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; [ -z "${basedir:-}" ] || rm -rf "$basedir"' EXIT
trap 'exit 143' TERM INT HUP

NT_BIN=$build/nettune NT_LAB_BINS=$bins LAB_TESTS=$here/lab \
NETTUNE_LAB_ACCEL=${NETTUNE_LAB_ACCEL:-auto} NETTUNE_LAB_MQ=${NETTUNE_LAB_MQ:-8 32} \
NETTUNE_LAB_INTREMAP=${NETTUNE_LAB_INTREMAP:-1} \
NETTUNE_LAB_TEST_TIMEOUT=${NETTUNE_LAB_TEST_TIMEOUT:-1200} NETTUNE_LAB_TIMEOUT=${NETTUNE_LAB_TIMEOUT:-1500} \
    bash "$here/../tests/lab/run.sh" > "$log" 2>&1 &
pid=$!
# Shown as it comes, in the background: bash runs a trap only once the
# foreground command is done, and `wait` is what a signal interrupts.
tail -n +1 -f --pid="$pid" "$log" | grep --line-buffered -v '^guest| ok: ' &
wait "$pid"
rc=$?
pid=''
wait
echo "bench/lab.sh: console log: $log"

res=$(grep -a -o 'LAB-BENCH {.*}' "$log" | tail -n 1 | cut -d' ' -f2-)
[ -n "$res" ] || { echo "bench/lab.sh: the guest printed no LAB-BENCH line (run.sh exit $rc)"; [ $rc = 77 ] && exit 77; exit 1; }
timing=$(grep -a -o 'lab: timing .*' "$log" | tail -n 1)
accel=$(sed -n 's/^lab: timing (accel \([a-z]*\).*/\1/p' <<< "$timing")

echo
echo "$timing"
jq -r --arg accel "$accel" '"guest: \(.kernel) under \($accel), interrupt remapping \(if .intremap then "on" else "off" end),"
  + " \(.cpus) CPUs, \(.mq_nics) NICs x \(.mq_queue_pairs) queue pairs, a plan of \(.steps) steps"
  + " (\(.irq_steps) IRQs + sysctls), \(.rounds) rounds\n"' <<< "$res"
jq -r --arg accel "$accel" '
  def f: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
  def ratio(a; b): if a == null or b == null or b == 0 then "-" else ((a / b * 100 | round / 100 | tostring) + "x") end;
  def met(c): if c == null then "-" elif c then "yes" else "no" end;
  # Under TCG every figure is stretched: only the ratios say something.
  def abs_met(c): if $accel == "kvm" then met(c) else "- (tcg)" end;
  (["work", "value", "reference", "ref value", "ratio", "goal", "met"] | @tsv),
  (["GET /v1/topology, warm, median (curl, 30)", "\(.topology_ms | f) ms",
    "lstopo-no-graphics --of xml", "\(.lstopo_ms | f) ms", ratio(.topology_ms; .lstopo_ms), "<= 5 ms",
    abs_met(if .topology_ms == null then null else .topology_ms <= 5 end)] | @tsv),
  (["nettune topology --json, whole process", "\(.cli_topology_ms | f) ms", "-", "-", "-", "<= 15 ms",
    abs_met(if .cli_topology_ms == null then null else .cli_topology_ms <= 15 end)] | @tsv),
  (["apply via API: \(.steps) steps", "\(.apply_ms | f) ms", "C loop: \(.loop.irqs) writes",
    "\(.loop.apply_ms | f) ms", ratio(.apply_ms; .loop.apply_ms), "<= 2x the loop",
    met(if .apply_ms == null or .loop.apply_ms == null then null else .apply_ms <= 2 * .loop.apply_ms end)] | @tsv),
  (["  agent duration_ms", "\(.apply_agent_ms | f) ms", "C loop", "\(.loop.apply_ms | f) ms",
    ratio(.apply_agent_ms; .loop.apply_ms), "-", "-"] | @tsv),
  (["  its kernel write path alone", "\(.loop.kernel_apply_ms | f) ms", "C loop", "\(.loop.apply_ms | f) ms",
    ratio(.loop.kernel_apply_ms; .loop.apply_ms), "-", "-"] | @tsv),
  (["roll it back via API", "\(.rollback_ms | f) ms", "C loop: old values", "\(.loop.restore_ms | f) ms",
    ratio(.rollback_ms; .loop.restore_ms), "<= 2x the loop",
    met(if .rollback_ms == null or .loop.restore_ms == null then null else .rollback_ms <= 2 * .loop.restore_ms end)] | @tsv),
  (["  agent duration_ms", "\(.rollback_agent_ms | f) ms", "C loop", "\(.loop.restore_ms | f) ms",
    ratio(.rollback_agent_ms; .loop.restore_ms), "-", "-"] | @tsv),
  (["  its kernel write path alone", "\(.loop.kernel_restore_ms | f) ms", "C loop", "\(.loop.restore_ms | f) ms",
    ratio(.loop.kernel_restore_ms; .loop.restore_ms), "-", "-"] | @tsv),
  (["agent VmRSS after all of it", "\(if .rss_kb == null then null else .rss_kb / 1024 end | f) MB", "-", "-", "-",
    "<= 8 MB", met(if .rss_kb == null then null else .rss_kb <= 8192 end)] | @tsv),
  # BASE_DIR given: this build against its agent, the same rounds in the same boot.
  (if .base == null then empty else
    (["apply via API, this build", "\(.apply_ms | f) ms", "BASE_DIR agent, same boot", "\(.base.apply_ms | f) ms",
      ratio(.apply_ms; .base.apply_ms), "-", "-"] | @tsv),
    (["  agent duration_ms", "\(.apply_agent_ms | f) ms", "BASE_DIR agent", "\(.base.apply_agent_ms | f) ms",
      ratio(.apply_agent_ms; .base.apply_agent_ms), "-", "-"] | @tsv),
    (["roll it back via API, this build", "\(.rollback_ms | f) ms", "BASE_DIR agent, same boot",
      "\(.base.rollback_ms | f) ms", ratio(.rollback_ms; .base.rollback_ms), "-", "-"] | @tsv),
    (["  agent duration_ms", "\(.rollback_agent_ms | f) ms", "BASE_DIR agent", "\(.base.rollback_agent_ms | f) ms",
      ratio(.rollback_agent_ms; .base.rollback_agent_ms), "-", "-"] | @tsv)
  end)
' <<< "$res" | column -t -s $'\t'
echo
# The goals, each a ratio to the bare loop of the same boot.
echo "goals, each beside its floor from this boot:"
jq -r '
  def f: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
  def goal(name; v; fl; lim):
    [name, "\(v | f) ms", "\(fl | f) ms",
     (if v == null or fl == null or fl == 0 then "-" else ((v / fl * 100 | round / 100 | tostring) + "x") end),
     "<= \(lim)x", (if v == null or fl == null or fl == 0 then "-" elif v <= lim * fl then "yes" else "no" end)] | @tsv;
  (["goal", "value", "floor (C loop)", "ratio", "want", "met"] | @tsv),
  goal("apply via API at the client / bare loop"; .apply_ms; .loop.apply_ms; 3),
  goal("agent duration_ms / bare loop"; .apply_agent_ms; .loop.apply_ms; 2),
  goal("rollback via API / bare loop"; .rollback_ms; .loop.restore_ms; 3),
  (if .plan_ms == null then empty else
    (["  (the plan before each apply, by id)", "\(.plan_ms | f) ms", "-", "-", "-", "-"] | @tsv) end),
  (["  (the kernel write path alone / loop)", "\(.loop.kernel_apply_ms | f) ms", "\(.loop.apply_ms | f) ms",
    (if .loop.kernel_apply_ms == null or .loop.apply_ms == null then "-"
     else ((.loop.kernel_apply_ms / .loop.apply_ms * 100 | round / 100 | tostring) + "x") end), "-", "-"] | @tsv)
' <<< "$res" | column -t -s $'\t'
echo
echo "goals are reported, not enforced; the guest's checks decide the exit status"
exit $rc
