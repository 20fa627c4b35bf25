#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Contract tests: the API against openapi/openapi.yaml, checked by
# tools no one on the team wrote. One entry point for ctest:
#   run.sh lint                 Spectral (spectral:oas), zero errors
#   run.sh python               the document read as YAML 1.1 (PyYAML) against
#                               the OpenAPI 3.1 schema and 2020-12 meta-schema
#                               (openapi_yaml11.py; Debian packages, no npm)
#   run.sh schemas              the schemas as JSON Schema 2020-12 (Ajv,
#                               strict), their examples, and a canary proving
#                               Prism flags bad answers and passes good ones
#   run.sh proxy TEST_BINARY    an integration test with every response
#                               passing through Prism's validating proxy
#   run.sh client               openapi-typescript + openapi-fetch client
#                               (type-checked by tsc) as the fleet controller
#   run.sh property             fast-check requests generated from the document
# Environment (set by ctest): NT_BIN, NT_FIXTURES, NT_SRC.
#
# The npm packages come from package-lock.json into tests/contract/node_modules
# by tests/prepare.sh (set-up, which deploy/dev.sh test runs before ctest);
# the tests download nothing. Exit 77 (skipped) when they are not installed
# for this package-lock.json, or node is missing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NT_SRC=${NT_SRC:-$(cd "$here/../.." && pwd)}
src=$NT_SRC
doc=$src/openapi/openapi.yaml

skip() { echo "SKIP: $*"; exit 77; }
# shellcheck source=../npm_ready.sh
. "$here/../npm_ready.sh"

ensure_modules() {
	npm_ready "$here" contract
	export PATH="$here/node_modules/.bin:$PATH"
}

# ---- no process outlives the run ----
# Everything below runs in one child carrying a marker in its environment
# (NT_CONTRACT_RUN, unique per run), which every process it starts
# inherits: the test binary, npm, tsx, the agents, the Prism proxies, even
# those in process groups of their own. On exit, normal or by INT, TERM or
# HUP, every live process with the marker is sent SIGTERM (with its process
# group when it leads one), then SIGKILL after a grace period, and waited
# for. A test that passed but left a process running fails. If run.sh
# itself is SIGKILLed (a ctest timeout), a watcher that holds the read end
# of a pipe only run.sh writes to sees end-of-file and does the same sweep.
run_id="nt-contract.$$.$(date +%s%N)"

marked() { # live processes carrying this run's marker, except run.sh
	local f pid
	for f in $(grep -lzxF "NT_CONTRACT_RUN=$run_id" /proc/[0-9]*/environ 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/environ}
		if [ "$pid" != "$$" ] && [ -d "/proc/$pid" ]; then echo "$pid"; fi
	done
	return 0
}

sweep() { # SIGNAL: to every marked process, and its group when it leads one
	local pid
	for pid in $(marked); do
		if [ "$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$pid" ]; then
			kill -s "$1" -- "-$pid" 2>/dev/null || true
		fi
		kill -s "$1" "$pid" 2>/dev/null || true
	done
	return 0
}

stop_all() { # kill every marked process; 0 when there was none
	local left i
	left=$(marked)
	[ -n "$left" ] || return 0
	sweep TERM
	for i in $(seq 50); do
		[ -n "$(marked)" ] || break
		sleep 0.1
	done
	sweep KILL
	for i in $(seq 50); do
		[ -n "$(marked)" ] || break
		sleep 0.1
	done
	return 1
}

child=""
finish() {
	local rc=$1 left
	trap - EXIT INT TERM HUP
	set +e
	if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
		kill -TERM "$child" 2>/dev/null
	fi
	left=$(marked | while read -r p; do ps -o pid=,args= -p "$p"; done)
	if ! stop_all; then
		echo "contract: still running when the test ended, killed:" >&2
		printf '%s\n' "$left" >&2
		# Only a clean exit is turned into a failure: a test that failed
		# or was interrupted keeps its own status.
		[ "$rc" -eq 0 ] && rc=1
	fi
	[ -n "$child" ] && wait "$child" 2>/dev/null
	if [ -n "$(marked)" ]; then
		echo "contract: processes of this run survive SIGKILL:" >&2
		marked >&2
		rc=1
	fi
	exec 7>&- # the watcher finds nothing left and ends
	[ -n "${watcher:-}" ] && wait "$watcher" 2>/dev/null
	exit "$rc"
}
trap 'finish 1' EXIT
trap 'finish 130' INT
trap 'finish 143' TERM
trap 'finish 129' HUP

exec 7> >(
	trap '' INT TERM HUP
	exec >/dev/null 2>&1 # ctest's output pipes are not held
	read -r _ || true
	for sig in TERM TERM KILL; do
		[ -n "$(marked)" ] || exit 0
		sweep "$sig"
		sleep 2
	done
)
watcher=$!

main() {
	cmd=${1:-}
	[ $# -gt 0 ] && shift
	case "$cmd" in
	lint)
		ensure_modules
		cd "$here"
		spectral lint --ruleset "$here/.spectral.yaml" --fail-severity error "$doc"
		;;
	python)
		# The document as Python's OpenAPI tools read it (YAML 1.1), with
		# Debian's interpreter and its python3-yaml and python3-jsonschema.
		py=python3
		[ -x /usr/bin/python3 ] && py=/usr/bin/python3
		"$py" "$here/openapi_yaml11.py" "$doc"
		;;
	proxy)
		[ $# -ge 1 ] || { echo "usage: run.sh proxy TEST_BINARY" >&2; exit 2; }
		ensure_modules
		export NT_VIA_PRISM=1 NT_PRISM="$here/node_modules/.bin/prism" NT_OPENAPI="$doc"
		"$@"
		;;
	schemas | client | property)
		ensure_modules
		cd "$here"
		# The client types are generated from the document at test time, so
		# they can never be stale; tsc then proves the client code agrees.
		# (Written aside and renamed: parallel tests share the file.)
		openapi-typescript "$doc" -o "$here/src/.schema.d.ts.$$" >/dev/null
		mv -f "$here/src/.schema.d.ts.$$" "$here/src/schema.d.ts"
		tsc --noEmit -p "$here"
		tsx "$here/src/$cmd.test.ts"
		;;
	*)
		echo "usage: run.sh lint | python | schemas | proxy TEST_BINARY | client | property" >&2
		exit 2
		;;
	esac
}

# The child: the work, with the marker, without the watcher's pipe.
(
	export NT_CONTRACT_RUN=$run_id
	main "$@"
) 7>&- &
child=$!
rc=0
wait "$child" || rc=$?
child=""
finish "$rc"
