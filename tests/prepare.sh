#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test suite's set-up: everything the selected tests need from outside
# this machine, fetched before ctest starts, so that no test sends a packet
# off the machine (tests/unit/no_outside_traffic.py keeps downloads out of
# every other script). deploy/dev.sh test runs it after the build with the
# same ctest arguments; run it yourself before a bare `ctest`:
#   tests/prepare.sh BUILD_DIR [ctest selection: -L LABEL, -R REGEX, ...]
# What each test needs:
#   lab/vm          Debian 12's kernel and its netdevsim (tests/lab/prepare.sh)
#   lab/vm-newest   the newest Debian kernel and its netdevsim
#                   (tests/lab/prepare_newest.sh)
#   contract/*      tests/contract's npm packages (tests/prepare_npm.sh)
#   ui/*            tests/ui's npm packages
#   systemd/*       a Debian 12 root, apt's lists and the package's runtime
#                   libraries (tests/systemd/prepare.sh)
# Each step is a no-op when its cache is current (the lab kernels and the
# systemd lists are looked up again: the Debian mirror is asked once more).
# Exits non-zero when a step fails; where a test would be skipped for lack
# of root or a tool, its step says so and prepares nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: tests/prepare.sh BUILD_DIR [ctest selection]}" && pwd)
shift
command -v jq >/dev/null || { echo "prepare: jq is not installed (deploy/dev.sh test installs it)" >&2; exit 1; }

mapfile -t tests < <(cd "$build" && ctest --show-only=json-v1 "$@" | jq -r '.tests[].name')
want() { # want PATTERN: a selected test's name matches the glob PATTERN
	local t
	for t in "${tests[@]}"; do
		# shellcheck disable=SC2053
		[[ $t == $1 ]] && return 0
	done
	return 1
}

t0=$(date +%s)
if want 'lab/vm'; then
	echo "prepare: lab/vm: Debian 12's kernel" >&2
	NETTUNE_LAB_OFFLINE=0 bash "$here/lab/prepare.sh" >/dev/null
fi
if want 'lab/vm-newest'; then
	echo "prepare: lab/vm-newest: the newest Debian kernel" >&2
	NETTUNE_LAB_OFFLINE=0 bash "$here/lab/prepare_newest.sh" >/dev/null
fi
if want 'contract/*'; then bash "$here/prepare_npm.sh" "$here/contract"; fi
if want 'ui/*'; then bash "$here/prepare_npm.sh" "$here/ui"; fi
if want 'systemd/*'; then bash "$here/systemd/prepare.sh" "$build"; fi
echo "prepare: done in $(($(date +%s) - t0)) s for ${#tests[@]} selected test(s)" >&2
