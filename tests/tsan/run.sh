#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The integration tests that run the agent's threads against each other,
# again under ThreadSanitizer (ctest label "tsan"): concurrent applies and
# a second apply racing a plan (test_txn_crash, test_txn), the drift
# watcher beside API requests (test_desired), suspended slow requests and
# transactions on threads of their own,
# trickling connections and the connection reaper (test_hostile), and
# requests sharing one host read (unit test_read_share), the IRQ files of
# a big host read in parts by several threads with files held open
# (test_irq_parts, test_big_host_reads). A second
# build tree (NT_TSAN_BUILD, default BUILD/tsan) builds only the agent and
# those tests; any report, also one from an agent a test started and
# stopped, fails the run.
#
#   ctest -L tsan                (from the normal build directory)
#   NT_TSAN_TESTS='-R test_desired' bash tests/tsan/run.sh
set -euo pipefail

src=${NT_SRC:?NT_SRC: the source tree}
build=${NT_TSAN_BUILD:?NT_TSAN_BUILD: the build tree to use}
jobs=${NT_TSAN_JOBS:-$(nproc)}
tests=(test_txn_crash test_txn test_desired test_hostile test_read_share test_irq_parts test_big_host_reads)

# shellcheck source=tests/sanitize/common.sh
. "$src/tests/sanitize/common.sh"
san_require thread
san_build "$src" "$build" "$jobs" thread "" nettune "${tests[@]}"

logs=$(mktemp -d /tmp/nt-tsan-XXXXXX)
trap 'rm -rf "$logs"' EXIT
# Every report is kept (halt_on_error=0) so one run shows them all; any
# report file fails the run. The suppressions are for libraries' own
# synchronisation TSan cannot see (each explained in the file).
export TSAN_OPTIONS="log_path=$logs/tsan:halt_on_error=0:exitcode=66:second_deadlock_stack=1:suppressions=$src/tests/tsan/suppressions.txt"

rc=0
cd "$build"
regex="^(unit|integration)/($(IFS='|'; echo "${tests[*]}"))\$"
# shellcheck disable=SC2086
ctest -R "$regex" -j"$jobs" --output-on-failure --timeout 600 ${NT_TSAN_TESTS:-} || rc=$?
# shellcheck disable=SC2046
san_reports "ThreadSanitizer reports:" 80 $(find "$logs" -name 'tsan.*' | sort) || rc=1
exit $rc
