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
# are not there: no browser, no node, npm packages not installed by
# tests/prepare.sh (the test downloads nothing), or a browser that cannot
# start here.
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

# The npm packages: installed by tests/prepare.sh (set-up), never here.
# shellcheck source=../npm_ready.sh
. "$here/../npm_ready.sh"
npm_ready "$here" ui

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
