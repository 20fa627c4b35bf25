#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The unit and integration suites again, built with AddressSanitizer and
# UndefinedBehaviorSanitizer (ctest label "sanitize"): a second build tree
# (NT_SAN_BUILD, default BUILD/sanitize), the same sources, every test
# binary and the agent they start instrumented. Any report fails the run,
# also one from an agent a test started and stopped (its reports go to log
# files, since a test does not always look at its agent's exit status).
#
#   ctest -L sanitize            (from the normal build directory)
#   NT_SAN_JOBS=2 NT_SAN_TESTS='-R test_txn' bash tests/sanitize/run.sh
set -euo pipefail

src=${NT_SRC:?NT_SRC: the source tree}
build=${NT_SAN_BUILD:?NT_SAN_BUILD: the build tree to use}
jobs=${NT_SAN_JOBS:-$(nproc)}

# shellcheck source=tests/sanitize/common.sh
. "$src/tests/sanitize/common.sh"
# libasan/libubsan come with gcc; check that they link.
san_require address,undefined
san_build "$src" "$build" "$jobs" address,undefined -fno-sanitize-recover=undefined

logs=$(mktemp -d /tmp/nt-sanitize-XXXXXX)
trap 'rm -rf "$logs"' EXIT
# halt_on_error: the first report ends the process (and fails its test).
# fast_unwind_on_malloc=0: whole stacks for leaks through libraries built
# without frame pointers (jansson).
export ASAN_OPTIONS="log_path=$logs/asan:halt_on_error=1:detect_leaks=1:exitcode=86:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="log_path=$logs/ubsan:halt_on_error=1:print_stacktrace=1:exitcode=86"
# Leaks inside libraries the agent uses, not its own.
echo "leak:libgnutls" > "$logs/lsan.supp"
echo "leak:libp11-kit" >> "$logs/lsan.supp"
export LSAN_OPTIONS="suppressions=$logs/lsan.supp"

rc=0
cd "$build"
# shellcheck disable=SC2086
ctest -L 'unit|integration' -j"$jobs" --output-on-failure --timeout 600 ${NT_SAN_TESTS:-} || rc=$?
# shellcheck disable=SC2046
san_reports "sanitizer reports:" 60 $(find "$logs" -name 'asan.*' -o -name 'ubsan.*' | sort) || rc=1
exit $rc
