#!/usr/bin/env bash
# Contract tests (issue 6): the API against openapi/openapi.yaml, checked by
# tools no one on the team wrote. One entry point for ctest:
#   run.sh lint                 Spectral (spectral:oas), zero errors
#   run.sh proxy TEST_BINARY    an integration test with every response
#                               passing through Prism's validating proxy
#   run.sh client               openapi-typescript + openapi-fetch client
#                               (type-checked by tsc) as the fleet controller
#   run.sh property             fast-check requests generated from the document
# Environment (set by ctest): NT_BIN, NT_FIXTURES, NT_SRC.
#
# The npm packages come from package-lock.json (`npm ci`) into
# tests/contract/node_modules, once, under a lock so parallel ctest runs
# share one install. Exit 77 (skipped) only when they cannot be installed
# at all: no node/npm, or the registry cannot be reached.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NT_SRC=${NT_SRC:-$(cd "$here/../.." && pwd)}
src=$NT_SRC
doc=$src/openapi/openapi.yaml

skip() { echo "SKIP: $*"; exit 77; }

ensure_modules() {
	command -v node >/dev/null 2>&1 || skip "node is not installed (Debian: apt-get install nodejs npm; deploy/dev.sh test does)"
	command -v npm >/dev/null 2>&1 || skip "npm is not installed (Debian: apt-get install npm; deploy/dev.sh test does)"
	local want have=""
	want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
	exec 9>"$here/.npm-install.lock"
	flock 9
	[ -f "$here/node_modules/.nt-lock-sha256" ] && have=$(cat "$here/node_modules/.nt-lock-sha256")
	if [ "$want" != "$have" ]; then
		echo "contract: npm ci in $here (node $(node --version), npm $(npm --version))"
		if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >"$here/.npm-ci.log" 2>&1; then
			cat "$here/.npm-ci.log" >&2
			# Only an unreachable registry is a reason to skip; any other
			# install failure is a real failure.
			if ! (cd "$here" && timeout 30 npm ping) >/dev/null 2>&1; then
				skip "npm packages cannot be installed: the npm registry ($(cd "$here" && npm config get registry)) is unreachable"
			fi
			echo "contract: npm ci failed although the registry answers" >&2
			exit 1
		fi
		echo "$want" >"$here/node_modules/.nt-lock-sha256"
	fi
	flock -u 9
	export PATH="$here/node_modules/.bin:$PATH"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
lint)
	ensure_modules
	cd "$here"
	spectral lint --ruleset "$here/.spectral.yaml" --fail-severity error "$doc"
	;;
proxy)
	[ $# -ge 1 ] || { echo "usage: run.sh proxy TEST_BINARY" >&2; exit 2; }
	ensure_modules
	export NT_VIA_PRISM=1 NT_PRISM="$here/node_modules/.bin/prism" NT_OPENAPI="$doc"
	exec "$@"
	;;
client | property)
	ensure_modules
	cd "$here"
	# The client types are generated from the document at test time, so
	# they can never be stale; tsc then proves the client code agrees.
	openapi-typescript "$doc" -o "$here/src/schema.d.ts" >/dev/null
	tsc --noEmit -p "$here"
	exec tsx "$here/src/$cmd.test.ts"
	;;
*)
	echo "usage: run.sh lint | proxy TEST_BINARY | client | property" >&2
	exit 2
	;;
esac
