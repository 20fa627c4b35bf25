#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Set-up, not a test: `npm ci` from DIR/package-lock.json into
# DIR/node_modules, once per lock file (a stamp holds its hash), under a
# lock so two preparers share one install. tests/prepare.sh runs it for
# tests/contract and tests/ui; the tests themselves only check the stamp
# (tests/npm_ready.sh) and download nothing.
# Usage: prepare_npm.sh DIR
set -euo pipefail
dir=$(cd "${1:?usage: prepare_npm.sh DIR}" && pwd)
name=$(basename "$dir")
command -v node >/dev/null 2>&1 || { echo "prepare: $name: node is not installed (apt-get install nodejs npm)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "prepare: $name: npm is not installed (apt-get install npm)" >&2; exit 1; }
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
exec 9>"$dir/.npm-install.lock"
flock 9
have=""
[ -f "$dir/node_modules/.nt-lock-sha256" ] && have=$(cat "$dir/node_modules/.nt-lock-sha256")
if [ "$want" = "$have" ]; then
	echo "prepare: $name: npm packages already installed for this package-lock.json" >&2
	exit 0
fi
echo "prepare: $name: npm ci (node $(node --version), npm $(npm --version))" >&2
if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$dir/.npm-ci.log" 2>&1; then
	cat "$dir/.npm-ci.log" >&2
	echo "prepare: $name: npm ci failed (registry: $(cd "$dir" && npm config get registry))" >&2
	exit 1
fi
echo "$want" >"$dir/node_modules/.nt-lock-sha256"
