#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The web view (/ui/) in a real browser: Debian's chromium, headless, driven
# by puppeteer-core (npm, from package-lock.json) against `nettune serve` on
# copies of fixture trees. One entry point for ctest:
#   run.sh [chromium]   every check in src/ui.test.ts in Debian's chromium
#   run.sh firefox      the same in Debian's firefox-esr (WebDriver BiDi)
# Environment (set by ctest): NT_BIN, NT_FIXTURES, NT_SRC, NT_ARTIFACTS
# (screenshots go there); CHROMIUM, FIREFOX override the browser found on PATH.
#
# Exit 77 (skipped) with the reason when the browser or the npm packages
# cannot be had: no browser, no node/npm, an unreachable npm registry, or a
# browser that cannot start here.
#
# No process outlives the run: as root the test runs as PID 1 of its own PID
# namespace (unshare --kill-child), so when it ends, however it ends (a
# failed check, an exception, ctest's timeout killing this script), the
# kernel kills every agent and browser process it started. Without that the
# test's own exit handlers stop them (src/ui.test.ts, contract/src/agent.ts).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NT_SRC=${NT_SRC:-$(cd "$here/../.." && pwd)}
skip() { echo "SKIP: $*"; exit 77; }

export NT_UI_BROWSER=${1:-chromium}
case "$NT_UI_BROWSER" in
chromium) bin=${CHROMIUM:-$(command -v chromium || true)} ;;
firefox) bin=${FIREFOX:-$(command -v firefox-esr || command -v firefox || true)} ;;
*) echo "usage: run.sh [chromium | firefox]" >&2; exit 2 ;;
esac
[ -n "$bin" ] || skip "$NT_UI_BROWSER is not installed (Debian: apt-get install chromium firefox-esr; deploy/dev.sh test does)"
export NT_UI_BROWSER_BIN=$bin
command -v node >/dev/null 2>&1 || skip "node is not installed (Debian: apt-get install nodejs npm; deploy/dev.sh test does)"
command -v npm >/dev/null 2>&1 || skip "npm is not installed (Debian: apt-get install npm; deploy/dev.sh test does)"

# npm ci once per package-lock.json, under a lock so parallel runs share it.
want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
have=""
exec 9>"$here/.npm-install.lock"
flock 9
[ -f "$here/node_modules/.nt-lock-sha256" ] && have=$(cat "$here/node_modules/.nt-lock-sha256")
if [ "$want" != "$have" ]; then
	echo "ui: npm ci in $here (node $(node --version), npm $(npm --version))"
	if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >"$here/.npm-ci.log" 2>&1; then
		cat "$here/.npm-ci.log" >&2
		if ! (cd "$here" && timeout 30 npm ping) >/dev/null 2>&1; then
			skip "npm packages cannot be installed: the npm registry ($(cd "$here" && npm config get registry)) is unreachable"
		fi
		echo "ui: npm ci failed although the registry answers" >&2
		exit 1
	fi
	echo "$want" >"$here/node_modules/.nt-lock-sha256"
fi
flock -u 9
exec 9>&-

export NT_ARTIFACTS=${NT_ARTIFACTS:-$PWD/ui-artifacts}
mkdir -p "$NT_ARTIFACTS"
cd "$here"
# Type-checked first: a wrong selector type or API field fails here.
"$here/node_modules/.bin/tsc" --noEmit -p "$here"
run=("$here/node_modules/.bin/tsx" "$here/src/ui.test.ts")
if [ "$(id -u)" -eq 0 ] && unshare --pid --fork --kill-child --mount-proc true 2>/dev/null; then
	exec unshare --pid --fork --kill-child --mount-proc "${run[@]}"
fi
exec "${run[@]}"
