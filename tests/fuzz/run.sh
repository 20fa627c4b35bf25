#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzz the parsers with libFuzzer (clang): cpulists and masks
# (fuzz_cpuset), /proc/interrupts and /proc/softirqs (fuzz_interrupts),
# the host read's block-wise /proc/interrupts reader against the whole-text
# parse (fuzz_irqread), /proc/net/softnet_stat (fuzz_softnet), irqbalance's
# setup reply (fuzz_irqbalance), the netdev family's netlink replies cut
# into datagrams (fuzz_netdev), an ethtool netlink GET reply
# (fuzz_ethtool_reply), a fixture root's NIC document through every reader
# of the fixture's kernel and a write each (fuzz_fixture), request bodies
# through the JSON pre-scan,
# the parser, profile validation and planning (fuzz_profile), request
# targets through path splitting and route matching (fuzz_request), their
# query strings (fuzz_query), the files the agent reads at start: its
# configuration (fuzz_config), its tokens (fuzz_tokens) and the desired
# state (fuzz_desired), and the figures bench-run reads from a benchmark's
# output (fuzz_metric). fuzz_profile and fuzz_desired plan against a root
# whose NICs have every kind of ethtool setting (every_kind_root.py: the
# EPYC fixture with coalescing, features and pause added), so validation
# gets past each section. Each starts from its seeds:
# tests/fuzz/seeds/TARGET (kept crash inputs are regression cases, run
# first every time) plus files from the repository (fixtures, shipped
# profiles, deploy/nettune.conf). CI runs each for NT_FUZZ_SECONDS
# (default 6, the whole label in about 3 minutes with the build); the long
# run (a build tree kept between runs keeps its corpus in BUILD/corpus):
#
#   NT_SRC=$PWD NT_FUZZ_BUILD=/tmp/nt-fuzz NT_FUZZ_SECONDS=600 bash tests/fuzz/run.sh
#   NT_SRC=$PWD NT_FUZZ_BUILD=/tmp/nt-fuzz NT_FUZZ_TARGETS=fuzz_profile NT_FUZZ_SECONDS=3600 bash tests/fuzz/run.sh
#
# A crash leaves its input in NT_FUZZ_BUILD/artifacts; copy it into
# tests/fuzz/seeds/TARGET/ with the fix, so it is replayed from then on.
set -euo pipefail

src=${NT_SRC:?NT_SRC: the source tree}
build=${NT_FUZZ_BUILD:?NT_FUZZ_BUILD: the build tree to use}
secs=${NT_FUZZ_SECONDS:-6}
targets=${NT_FUZZ_TARGETS:-fuzz_cpuset fuzz_interrupts fuzz_irqread fuzz_softnet fuzz_irqbalance
	fuzz_netdev fuzz_ethtool_reply fuzz_fixture fuzz_profile fuzz_request fuzz_query fuzz_config fuzz_tokens fuzz_desired
	fuzz_metric}

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
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
CC=clang cmake -S "$src" -B "$build" -DNETTUNE_FUZZ=ON -DNETTUNE_SANITIZE_INNER=ON \
	-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$flags" "${launcher[@]}" >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"$(nproc)" --target $targets >/dev/null

fx=$src/tests/fixtures
corpus=$build/corpus
every=$build/every-kind-root
python3 "$src/tests/fuzz/every_kind_root.py" "$fx" "$every"
mkdir -p "$build/artifacts"
# What a target makes in TMPDIR (fuzz_fixture's root) goes here and is
# removed at the end, not left in /tmp by every run.
scratch=$build/tmp
rm -rf "$scratch"
mkdir -p "$scratch"
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
	fuzz_irqread)
		# The first byte picks the block: 5, 65 and 255 bytes.
		for f in "$fx"/*/proc/interrupts; do
			[ -f "$f" ] || continue
			for b in 002 040 177; do
				{ printf "\\$b"; cat "$f"; } >"$c/$b-$(echo "$f" | md5sum | cut -c1-16)"
			done
		done ;;
	fuzz_softnet)
		# The first byte picks the online CPUs: 2 and 4, one apart.
		for f in "$fx"/*/proc/net/softnet_stat; do
			[ -f "$f" ] || continue
			for b in 002 004; do
				{ printf "\\$b"; cat "$f"; } >"$c/$b-$(echo "$f" | md5sum | cut -c1-16)"
			done
		done ;;
	fuzz_config)
		# The shipped file as it is, and with every key set.
		cp -f "$src/deploy/nettune.conf" "$c/nettune.conf"
		sed 's/^#\([a-z_]* =\)/\1/' "$src/deploy/nettune.conf" >"$c/nettune.conf-set" ;;
	fuzz_fixture)
		for f in "$fx"/*/ethtool/*.json "$every"/ethtool/*.json; do
			[ -f "$f" ] && cp -f "$f" "$c/$(echo "$f" | md5sum | cut -c1-16)"
		done ;;
	fuzz_profile | fuzz_desired)
		for f in "$src"/profiles/*.json "$src"/tests/fuzz/seeds/fuzz_profile/*; do
			[ -f "$f" ] && cp -f "$f" "$c/$(echo "$f" | md5sum | cut -c1-16)"
		done ;;
	*) ;;
	esac
	# A target's words (tests/fuzz/TARGET.dict), where the mutations alone
	# seldom spell what the parser looks for.
	dict=()
	[ -f "$src/tests/fuzz/$t.dict" ] && dict=(-dict="$src/tests/fuzz/$t.dict")
	root=$fx/x460-4node-8nic
	case $t in fuzz_profile | fuzz_desired) root=$every ;; esac
	echo "== $t: $(ls "$c" | wc -l) inputs, ${secs} s"
	if ! (cd "$build/artifacts" && TMPDIR=$scratch NT_FUZZ_ROOT=$root \
		"$build/$t" "${dict[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 "$c" 2>"$build/$t.log"); then
		echo "FAIL: $t found a crash or hang; input in $build/artifacts"
		tail -40 "$build/$t.log"
		rc=1
	else
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build/$t.log" | tr '\n' ' '
		echo
	fi
done
rm -rf "$scratch"
exit $rc
