#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The VM lab's benchmark, run inside the guest (bench/lab.sh boots it with
# tests/lab/run.sh and LAB_TESTS=bench/lab): the agent on a real kernel with
# hundreds of NIC IRQs, each figure beside a reference from the same run.
#
#   - GET /v1/topology, warm: median curl time_total of 30 requests after 3,
#     against `lstopo-no-graphics --of xml` (whole process, median of 15);
#     `nettune topology --json`, whole process, median of 15;
#   - apply and roll back: POST /v1/plan with every NIC IRQ `local` plus 3
#     sysctls, then POST /v1/transactions?steps=failed {"plan_id"} and
#     POST /v1/transactions/ID/rollback?steps=failed, 5 rounds (client
#     time_total of the apply and rollback, the plan's apart, and the
#     agent's duration_ms, medians), against
#     bench_writeloop on / writing the same IRQs with the same values (the
#     plan's), median of 5: the bare open/write/close loop, and beside it the
#     agent's own kernel write path (kernel_apply_ms);
#   - the agent's VmRSS after all of it;
#   - with nettune-base in the guest (bench/lab.sh BUILD BASE), the apply
#     and rollback rounds of that agent too, taking turns with this one.
#
# After each apply a sample of the IRQs must read back their new CPU list
# (smp_affinity_list) with the effective CPU inside it, and after each
# rollback their old list: a check that does not hold fails the script.
# Times never do. One line `LAB-BENCH {json}` carries the figures.
# The effective CPU is checked only with interrupt remapping (the lab's
# NETTUNE_LAB_INTREMAP=1, which bench/lab.sh sets): without it x86 moves an
# MSI interrupt when it next fires, and these NICs carry no traffic.
. /lab/lib.bash

ROUNDS=5
TOPO_REQS=30
PROC_RUNS=15

# median: of the numbers on stdin, one a line.
median() {
    sort -g | awk '{v[NR] = $1} END {if (NR == 0) {print "null"; exit}
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# A whole process's wall time in ms: proc_ms CMD ARGS... (output discarded).
proc_ms() {
    local t0=$EPOCHREALTIME
    "$@" >/dev/null 2>&1 || return 1
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.3f\n", (b - a) * 1000}'
}
# POST a JSON body, timing it: sets API_CODE, API_BODY and API_MS (curl's
# time_total in ms).
api_timed() {   # api_timed PATH JSON-BODY
    local out
    out=$(curl -s --max-time 300 -X POST -H 'Content-Type: application/json' --data-binary "$2" \
          -w '\n%{http_code} %{time_total}' "$NT_URL$1")
    API_BODY=${out%$'\n'*}
    read -r API_CODE API_MS <<< "${out##*$'\n'}"
    API_MS=$(awk -v s="$API_MS" 'BEGIN {printf "%.3f", s * 1000}')
}

# The multi-queue NICs (tests/lab/run.sh NETTUNE_LAB_MQ, MACs 52:54:00:01:*)
# probe after /init has seen the first three NICs: wait for all of them.
want=${NT_LAB_MQ_NICS:-0}
[ "$want" -gt 0 ] || echo "note: no multi-queue NICs (NETTUNE_LAB_MQ unset): only the lab's 3 NICs"
mq_nics=()
for _ in $(seq 1 300); do
    mq_nics=()
    for d in /sys/class/net/*; do
        case $(cat "$d/address" 2>/dev/null) in 52:54:00:01:*) mq_nics+=("${d##*/}") ;; esac
    done
    [ ${#mq_nics[@]} -ge "$want" ] && break
    sleep 0.1
done
[ ${#mq_nics[@]} -ge "$want" ] || { echo "only ${#mq_nics[@]} of $want multi-queue NICs appeared"; exit 1; }
for d in /sys/class/net/eth*; do ip link set "${d##*/}" up || bad "ip link set ${d##*/} up"; done
for n in "${mq_nics[@]}"; do
    echo "$n: $(cat "/sys/class/net/$n/address"), node $(cat "/sys/class/net/$n/device/../numa_node")," \
         "$(ethtool -l "$n" 2>/dev/null | awk '/^Current/{c=1} c && /^Combined:/{print $2; exit}') combined channels," \
         "$(pci_irqs "$(pci_of "$n")" | wc -l) MSI-X IRQs"
done
intremap=false
dmesg | grep -q 'Enabled IRQ remapping' && intremap=true
[ $intremap = true ] ||
    echo "note: no interrupt remapping: an IRQ moves when it next fires, so effective_affinity_list is not checked"
cpus=$(nproc)
echo "guest: $cpus CPUs, nodes $(cat /sys/devices/system/node/online), kernel $(uname -r)," \
     "$(grep -c '^ *[0-9]*:' /proc/interrupts) IRQs in /proc/interrupts"

nt_start || exit 1

# 1. Reading the host.
for _ in 1 2 3; do curl -s -o /dev/null "$NT_URL/v1/topology"; done
for _ in $(seq 1 "$TOPO_REQS"); do
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$NT_URL/v1/topology"
done > /tmp/topo.txt
expect_eq "GET /v1/topology replies other than 200" "$(awk '$1 != 200' /tmp/topo.txt | wc -l)" 0
topo_ms=$(awk '$1 == 200 {printf "%.3f\n", $2 * 1000}' /tmp/topo.txt | median)
lstopo_ms=$(for _ in $(seq 1 "$PROC_RUNS"); do proc_ms lstopo-no-graphics --of xml; done | median)
cli_ms=$(for _ in $(seq 1 "$PROC_RUNS"); do proc_ms "$NT_BIN" topology --json; done | median)
[ "$lstopo_ms" != null ] || bad "lstopo-no-graphics --of xml failed"
[ "$cli_ms" != null ] || bad "nettune topology --json failed"
echo "GET /v1/topology warm median ${topo_ms} ms; lstopo --of xml ${lstopo_ms} ms; nettune topology --json ${cli_ms} ms"

# 2. The plan, and the bare loop writing the same IRQs.
profile='{"name":"bench","irq_affinity":[{"interface":"*","policy":"local"}],
  "sysctl":{"net.core.rmem_max":"16777216","net.core.wmem_max":"16777216",
            "net.ipv4.tcp_rmem":"4096 87380 16777216"}}'
profile=$(jq -c . <<< "$profile")
api_timed /v1/plan "$profile"
expect_eq "POST /v1/plan" "$API_CODE" 200
jq -r '.warnings[]? | "plan warning: \(.)"' <<< "$API_BODY" 2>/dev/null
jq -r '.steps[] | select(.kind == "irq_affinity") | "\(.target) \(.after | gsub(" "; "")) \(.before | gsub(" "; ""))"' \
    <<< "$API_BODY" > /tmp/irqs.txt 2>/dev/null
nsteps=$(jq '.steps | length' <<< "$API_BODY" 2>/dev/null || echo 0)
nirq=$(wc -l < /tmp/irqs.txt)
nsys=$(jq '[.steps[] | select(.kind == "sysctl")] | length' <<< "$API_BODY" 2>/dev/null || echo 0)
echo "plan: $nsteps steps, $nirq IRQ steps, $nsys sysctl steps"
[ "$nirq" -ge 1 ] || { bad "the plan moves no IRQ"; finish "nothing to measure"; }
expect_eq "sysctl steps" "$nsys" 3

# A sample of the IRQs (every 16th, at least 8) to check by reading /proc.
mapfile -t sample < <(awk -v n="$nirq" 'NR % (n >= 128 ? 16 : 1) == 1 || n < 8' /tmp/irqs.txt)
# Builtins only from here on in the checks: under TCG a fork costs tens of
# ms, and the checks must not stretch the time between the rounds.
cpus_of() {   # cpus_of CPULIST: the CPUs into the array CPUS
    local part a b c parts
    CPUS=()
    IFS=, read -ra parts <<< "$1"
    for part in "${parts[@]}"; do
        a=${part%-*} b=${part#*-}
        for ((c = a; c <= b; c++)); do CPUS+=("$c"); done
    done
}
within() {   # within CPULIST-A CPULIST-B: is every CPU of A in B?
    local -A in_b=()
    local c
    cpus_of "$2"
    for c in "${CPUS[@]}"; do in_b[$c]=1; done
    cpus_of "$1"
    [ ${#CPUS[@]} -gt 0 ] || return 1
    for c in "${CPUS[@]}"; do [ -n "${in_b[$c]:-}" ] || return 1; done
}
check_sample() {   # check_sample after|before WHEN
    local irq aft bef want aff eff line wrong=0
    for line in "${sample[@]}"; do
        read -r irq aft bef <<< "$line"
        if [ "$1" = after ]; then want=$aft; else want=$bef; fi
        aff='' eff=''
        read -r aff < "/proc/irq/$irq/smp_affinity_list"
        read -r eff < "/proc/irq/$irq/effective_affinity_list"
        if [ "$aff" != "$want" ]; then
            bad "$2: irq $irq smp_affinity_list $aff, want $want"; wrong=$((wrong + 1))
        elif [ $intremap = true ] && ! within "$eff" "$want"; then
            bad "$2: irq $irq effective_affinity_list '$eff' not within $want"; wrong=$((wrong + 1))
        fi
    done
    [ $wrong = 0 ] && ok "$2: ${#sample[@]} sampled IRQs read back their $1 CPUs (list$([ $intremap = true ] && echo ' and effective'))"
}
check_sample before "before any write"
# The sysctls too: the profile's values after each apply, these after each rollback.
declare -A sys_before=()
for k in net.core.rmem_max net.core.wmem_max net.ipv4.tcp_rmem; do sys_before[$k]=$(sysctl_get "$k"); done
check_sysctls() {   # check_sysctls after|before WHEN
    local k want
    declare -A prof=([net.core.rmem_max]=16777216 [net.core.wmem_max]=16777216 [net.ipv4.tcp_rmem]="4096 87380 16777216")
    for k in "${!sys_before[@]}"; do
        if [ "$1" = after ]; then want=${prof[$k]}; else want=${sys_before[$k]}; fi
        [ "$(sysctl_get "$k")" = "$want" ] || bad "$2: $k is '$(sysctl_get "$k")', want '$want'"
    done
}

# One round first, not counted: under TCG the first run of a kernel path
# pays for its translation, which would land on whichever side ran first.
bench_writeloop / /tmp/irqs.txt 1 >/dev/null 2>&1
loop=$(bench_writeloop / /tmp/irqs.txt "$ROUNDS" 2>/tmp/loop.err) ||
    { cat /tmp/loop.err; bad "bench_writeloop / failed"; loop='{}'; }
echo "bench_writeloop: $loop"
check_sample before "after bench_writeloop (it writes the old values back)"

# 3. Apply and roll back through the API.
# txn_rounds TAG: ROUNDS rounds through the agent running now, each checked
# in /proc; the times are appended to the arrays TAG_ap (client, apply),
# TAG_apa (the agent's duration_ms), TAG_rb and TAG_rba (rollback).
# An agent that keeps plans under an id (POST /v1/plan's id) is used as a client that
# reviews first would: the plan (timed apart, into TAG_pl), then the apply
# of exactly that plan and the rollback, answered without their steps
# (steps=failed); an older one (nettune-base) gets the profile as before.
txn_rounds() {
    local -n t_ap=${1}_ap t_apa=${1}_apa t_rb=${1}_rb t_rba=${1}_rba t_pl=${1}_pl
    local r id st pid lean
    for r in $(seq 1 "$ROUNDS"); do
        api_timed /v1/plan "$profile"
        pid=$(jq -r '.id // empty' <<< "$API_BODY" 2>/dev/null)
        lean=''
        if [ -n "$pid" ]; then
            t_pl+=("$API_MS")
            lean='?steps=failed'
            api_timed "/v1/transactions$lean" "{\"plan_id\":\"$pid\"}"
        else
            api_timed /v1/transactions "{\"profile\":$profile}"
        fi
        id=$(jq -r '.id // empty' <<< "$API_BODY" 2>/dev/null)
        st=$(jq -r '.status // empty' <<< "$API_BODY" 2>/dev/null)
        if [ "$API_CODE" != 201 ] || [ "$st" != applied ] || [ -z "$id" ]; then
            bad "$1 round $r apply: HTTP $API_CODE, status '$st'"
            jq -c '{error, failed: [.steps[]? | select(.result != "applied")][:5]}' <<< "$API_BODY" 2>/dev/null ||
                echo "$API_BODY" | head -c 2000
            [ -n "$id" ] || break
        fi
        t_ap+=("$API_MS"); t_apa+=("$(jq -r '.duration_ms' <<< "$API_BODY")")
        echo "$1 round $r: apply txn $id $st, ${API_MS} ms (agent ${t_apa[-1]} ms, $(jq '.nsteps // (.steps | length)' <<< "$API_BODY") steps${pid:+, by plan id})"
        check_sample after "$1 round $r after the apply"
        check_sysctls after "$1 round $r after the apply"
        api_timed "/v1/transactions/$id/rollback$lean" '{}'
        st=$(jq -r '.status // empty' <<< "$API_BODY" 2>/dev/null)
        [ "$API_CODE" = 201 ] && [ "$st" = applied ] ||
            { bad "$1 round $r rollback of $id: HTTP $API_CODE, status '$st'"; jq -c .error <<< "$API_BODY" 2>/dev/null; }
        t_rb+=("$API_MS"); t_rba+=("$(jq -r '.duration_ms' <<< "$API_BODY")")
        echo "$1 round $r: rollback ${API_MS} ms (agent ${t_rba[-1]} ms)"
        check_sample before "$1 round $r after the rollback"
        check_sysctls before "$1 round $r after the rollback"
    done
}
now_ap=() now_apa=() now_rb=() now_rba=() now_pl=()
base_ap=() base_apa=() base_rb=() base_rba=() base_pl=()
# With a second agent in the guest (bench/lab.sh BUILD BASE puts BASE's
# nettune here as nettune-base), both take turns on the same IRQs, each
# from a fresh state directory: base, this build, base, this build. One
# boot for both keeps TCG's and the host's drift out of the comparison.
base_bin=$(command -v nettune-base || true)
if [ -n "$base_bin" ]; then
    this_bin=$NT_BIN
    for turn in 1 2; do
        nt_stop; NT_BIN=$base_bin; nt_start || { bad "nettune-base did not start"; break; }
        txn_rounds base
        nt_stop; NT_BIN=$this_bin; nt_start || { bad "nettune did not start again"; break; }
        txn_rounds now
    done
else
    txn_rounds now
fi

sleep 1
rss_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$NT_PID/status")
echo "agent VmRSS ${rss_kb} kB"
med() { printf '%s\n' "$@" | grep -v -e null -e '^$' | median; }

jq -nc --argjson cpus "$cpus" --argjson nics "${#mq_nics[@]}" --argjson queues "${NT_LAB_MQ_QUEUES:-0}" \
    --argjson irqs "$nirq" --argjson steps "$nsteps" --argjson rounds "${#now_ap[@]}" \
    --argjson topo "$topo_ms" --argjson lstopo "$lstopo_ms" --argjson cli "$cli_ms" \
    --argjson loop "$loop" \
    --argjson ap "$(med "${now_ap[@]}")" --argjson apa "$(med "${now_apa[@]}")" \
    --argjson rb "$(med "${now_rb[@]}")" --argjson rba "$(med "${now_rba[@]}")" \
    --argjson pl "$(med "${now_pl[@]}")" \
    --argjson bap "$(med "${base_ap[@]}")" --argjson bapa "$(med "${base_apa[@]}")" \
    --argjson brb "$(med "${base_rb[@]}")" --argjson brba "$(med "${base_rba[@]}")" \
    --argjson rss "${rss_kb:-null}" --arg kernel "$(uname -r)" --argjson intremap $intremap '{
      kernel: $kernel, intremap: $intremap, cpus: $cpus, mq_nics: $nics, mq_queue_pairs: $queues, irq_steps: $irqs, steps: $steps,
      rounds: $rounds, topology_ms: $topo, lstopo_ms: $lstopo, cli_topology_ms: $cli,
      apply_ms: $ap, apply_agent_ms: $apa, rollback_ms: $rb, rollback_agent_ms: $rba, plan_ms: $pl,
      base: (if $bap == null then null else {apply_ms: $bap, apply_agent_ms: $bapa,
             rollback_ms: $brb, rollback_agent_ms: $brba} end),
      loop: $loop, rss_kb: $rss}' | sed 's/^/LAB-BENCH /'

nt_stop
finish "$nirq IRQs placed and put back $((${#now_ap[@]} + ${#base_ap[@]})) times, checked in /proc; figures on the LAB-BENCH line"
