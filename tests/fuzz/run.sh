#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzz the parsers with libFuzzer (clang): cpulists and masks
# (fuzz_cpuset), /proc/interrupts and /proc/softirqs (fuzz_interrupts),
# irqbalance's setup reply (fuzz_irqbalance), the netdev family's netlink
# replies cut into datagrams (fuzz_netdev), and request bodies through
# the JSON pre-scan, the parser, profile validation and planning
# (fuzz_profile), and request targets through path splitting and route
# matching (fuzz_request). Each starts from its seeds: tests/fuzz/seeds/TARGET (kept
# crash inputs are regression cases, run first every time) plus files from
# the fixtures. CI runs each for NT_FUZZ_SECONDS (default 20); the long run:
#
#   NT_FUZZ_SECONDS=3600 NT_FUZZ_BUILD=/tmp/nt-fuzz bash tests/fuzz/run.sh
#   NT_FUZZ_TARGETS=fuzz_profile NT_FUZZ_SECONDS=600 bash tests/fuzz/run.sh
#
# A crash leaves its input in NT_FUZZ_BUILD/artifacts; copy it into
# tests/fuzz/seeds/TARGET/ with the fix, so it is replayed from then on.
set -euo pipefail

src=${NT_SRC:?NT_SRC: the source tree}
build=${NT_FUZZ_BUILD:?NT_FUZZ_BUILD: the build tree to use}
secs=${NT_FUZZ_SECONDS:-20}
targets=${NT_FUZZ_TARGETS:-fuzz_cpuset fuzz_interrupts fuzz_irqbalance fuzz_netdev fuzz_profile fuzz_request}

command -v clang >/dev/null || { echo "SKIP: clang is not installed"; exit 77; }
probe=$(mktemp /tmp/nt-fuzz-probe-XXXXXX)
if ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}\n' |
	clang -x c - -fsanitize=fuzzer -o "$probe" 2>/dev/null; then
	rm -f "$probe"
	echo "SKIP: clang cannot link libFuzzer (Debian: libclang-rt-14-dev)"
	exit 77
fi
rm -f "$probe"

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1"
CC=clang cmake -S "$src" -B "$build" -DNETTUNE_FUZZ=ON -DNETTUNE_SANITIZE_INNER=ON \
	-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$flags" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"$(nproc)" --target $targets >/dev/null

fx=$src/tests/fixtures
corpus=$build/corpus
mkdir -p "$build/artifacts"
rc=0
for t in $targets; do
	c=$corpus/$t
	mkdir -p "$c"
	[ -d "$src/tests/fuzz/seeds/$t" ] && cp -f "$src/tests/fuzz/seeds/$t"/* "$c"/ 2>/dev/null || true
	case $t in
	fuzz_cpuset)
		find "$fx" \( -name '*cpulist*' -o -name 'cpumap' -o -name 'smp_affinity*' \
			-o -name 'effective_affinity*' -o -name 'online' -o -name 'possible' \) -type f |
			sort | sed -n 1,300p | while read -r f; do cp -f "$f" "$c/$(echo "$f" | md5sum | cut -c1-16)"; done ;;
	fuzz_interrupts)
		for f in "$fx"/*/proc/interrupts "$fx"/*/proc/softirqs; do
			[ -f "$f" ] && cp -f "$f" "$c/$(echo "$f" | md5sum | cut -c1-16)"
		done ;;
	fuzz_profile) ;;
	fuzz_irqbalance) ;;
	fuzz_netdev) ;;
	esac
	echo "== $t: $(ls "$c" | wc -l) inputs, ${secs} s"
	if ! (cd "$build/artifacts" && NT_FUZZ_ROOT=$fx/x460-4node-8nic \
		"$build/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 "$c" 2>"$build/$t.log"); then
		echo "FAIL: $t found a crash or hang; input in $build/artifacts"
		tail -40 "$build/$t.log"
		rc=1
	else
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build/$t.log" | tr '\n' ' '
		echo
	fi
done
exit $rc
