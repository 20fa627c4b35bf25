# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shell functions the sanitizer runs share (tests/sanitize/run.sh,
# tests/tsan/run.sh): each builds its own tree with its sanitizer, runs
# some tests there with reports going to log files, and fails on any
# report. Sourced, not run.

# san_require FLAGS: skip (exit 77, saying why) unless gcc, cmake and
# linking with -fsanitize=FLAGS are all here.
san_require() {
	local c
	for c in gcc cmake; do
		command -v "$c" >/dev/null || { echo "SKIP: $c is not installed"; exit 77; }
	done
	if ! echo 'int main(void){return 0;}' | gcc -x c - -fsanitize="$1" -o /dev/null 2>/dev/null; then
		echo "SKIP: gcc cannot link -fsanitize=$1 here"
		exit 77
	fi
}

# san_build SRC BUILD JOBS SANITIZERS "EXTRA CFLAGS" [TARGET...]: configure
# BUILD from SRC with -fsanitize=SANITIZERS and build it (the TARGETs only,
# when given).
san_build() {
	local src=$1 build=$2 jobs=$3 san=$4 extra=$5
	shift 5
	cmake -S "$src" -B "$build" -DNETTUNE_WERROR=ON -DNETTUNE_SANITIZE_INNER=ON \
		-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-fsanitize=$san $extra -fno-omit-frame-pointer -O1 -g" \
		-DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$san" >/dev/null
	if [ $# -gt 0 ]; then
		cmake --build "$build" -j"$jobs" --target "$@" >/dev/null
	else
		cmake --build "$build" -j"$jobs" >/dev/null
	fi
}

# san_reports TITLE LINES FILE...: print each report file (its first LINES
# lines) under TITLE; returns 1 when there is any.
san_reports() {
	local title=$1 lines=$2 f
	shift 2
	[ $# -gt 0 ] || return 0
	echo "$title"
	for f in "$@"; do
		echo "== $f"
		head -"$lines" "$f"
	done
	return 1
}
