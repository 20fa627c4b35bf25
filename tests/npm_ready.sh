# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by tests/contract/run.sh and tests/ui/run.sh: whether DIR's npm
# packages were installed for its package-lock.json (by tests/prepare.sh,
# through tests/prepare_npm.sh). A test downloads nothing: without them it
# is skipped (exit 77) saying how to install them.
# npm_ready DIR NAME: returns 0, or calls skip with the reason.
npm_ready() {
	local dir=$1 name=$2 want have=""
	command -v node >/dev/null 2>&1 || skip "node is not installed (Debian: apt-get install nodejs npm; deploy/dev.sh test does)"
	want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
	[ -f "$dir/node_modules/.nt-lock-sha256" ] && have=$(cat "$dir/node_modules/.nt-lock-sha256")
	[ "$want" = "$have" ] ||
		skip "$name's npm packages are not installed for this package-lock.json: tests/prepare.sh BUILD_DIR -L $name installs them (deploy/dev.sh test runs it first); tests download nothing"
}
