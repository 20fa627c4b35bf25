#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The two commands of the README:
#   deploy/dev.sh serve [nettune serve options]   build, then run the agent on this host
#   deploy/dev.sh test                            build, fetch what the tests need
#                                                 (tests/prepare.sh), then run every
#                                                 test (ctest), which sends nothing
#                                                 off the machine
# and the package:
#   deploy/dev.sh deb                             build the Debian package (build-deb/)
# Both install the Debian 12 packages they need first (as root, or via sudo).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${NETTUNE_BUILD_DIR:-$here/build}

# Build dependencies of the agent.
build_pkgs=(build-essential cmake pkg-config libmicrohttpd-dev libjansson-dev libnuma-dev
	libnl-3-dev libnl-route-3-dev libnl-genl-3-dev libsqlite3-dev libcurl4-openssl-dev libsystemd-dev
	# token hashes and client-certificate checks (api/auth.c, api/server.c)
	libgnutls28-dev)
# Making and checking the Debian package (debian/).
deb_pkgs=(debhelper dpkg-dev fakeroot lintian)
# What the tests use to check the agent against the real system: the real
# tools (ip, ethtool, numactl, lstopo: hwloc-nox, also the reference of
# bench/run.py), the real irqbalance daemon, sqlite3,
# python3/jq for fixture generation and JSON checks, and the VM lab's qemu,
# busybox and kernel-module tools.
test_pkgs=(iproute2 ethtool irqbalance sqlite3 python3 jq numactl hwloc-nox procps psmisc curl
	ca-certificates
	# security tests: certificates for the TLS test (openssl), the no-stray-writes
	# trace (strace), `promtool check metrics` (Debian ships it in prometheus)
	openssl strace prometheus
	# fuzzing (tests/fuzz): clang and its libFuzzer runtime; the sanitizer
	# build (tests/sanitize) uses gcc's libasan/libubsan from build-essential
	clang libclang-rt-14-dev
	# the API contract tests (tests/contract): Spectral, Prism, openapi-typescript,
	# fast-check come from the npm registry via `npm ci`; the document read as
	# YAML 1.1 and validated by Python (openapi_yaml11.py)
	nodejs npm python3-yaml python3-jsonschema
	# the Ansible collection's tests (ansible_collections/nettune/agent): the
	# playbooks and modules run by Debian's ansible-core, checked by ansible-lint
	ansible-core ansible-lint
	# nettune bench-run's test: traffic between network namespaces
	iperf3
	# the man pages rendered without a warning (tests/unit/test_manpages.sh)
	man-db groff-base
	# the web view in real browsers (tests/ui): headless chromium and
	# firefox-esr, driven by puppeteer-core from the npm registry
	chromium firefox-esr
	# the VM lab (tests/lab): qemu, the initramfs tools, and what building
	# netdevsim against Debian's kernel headers needs
	qemu-system-x86 busybox-static kmod cpio make gcc-12 binutils xz-utils libelf1 libssl3
	# the package under real systemd (tests/systemd): a Debian 12 root made
	# by mmdebstrap, booted by systemd-nspawn; the bash-completion check
	mmdebstrap systemd-container bash-completion)

# What the unit tests alone use (tests/unit): the fixture and docs checks'
# python3 and jq, promtool (the alerting rules), man and groff (the man
# pages), systemd-analyze (the unit file's sandbox). `test -L unit` installs
# only these with the build dependencies; any other selection installs
# everything above, since which packages a label or a -R pattern needs is
# not cheap to know.
unit_pkgs=(python3 jq prometheus man-db groff-base systemd)

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Packages that stand for a command: when the command is already there
# (a newer Node.js from another Debian source bundles its own npm, which
# Debian's npm package conflicts with), the package is not needed.
declare -A provides_cmd=([nodejs]=node [npm]=npm)

install_pkgs() {
	local missing=()
	for p in "$@"; do
		if [ -n "${provides_cmd[$p]:-}" ] && command -v "${provides_cmd[$p]}" >/dev/null; then
			continue
		fi
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "installing Debian packages: ${missing[*]}"
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# unit_only ARGS: whether the ctest arguments select the unit label and
# nothing else (-L unit, -Lunit, --label-regex unit, -L '^unit$'), with no
# other selecting option beside it.
unit_only() {
	local label="" other=0
	while [ $# -gt 0 ]; do
		case "$1" in
		-R | -E | -LE | --label-exclude | --tests-regex | --exclude-regex | -I | --tests-information) other=1; shift ;;
		-R* | -E* | -LE* | -I* | --tests-regex=* | --exclude-regex=* | --label-exclude=*) other=1 ;;
		-L | --label-regex) label=${2:-}; shift ;;
		-L*) label=${1#-L} ;;
		--label-regex=*) label=${1#*=} ;;
		esac
		shift
	done
	[ "$other" = 0 ] && { [ "$label" = unit ] || [ "$label" = '^unit$' ]; }
}

# build [TARGET]: configure and build everything, or only TARGET.
build() {
	cmake -S "$here" -B "$build" -DNETTUNE_WERROR=ON >/dev/null
	cmake --build "$build" -j"$(nproc)" ${1:+--target "$1"}
}

# deb: dpkg-buildpackage -b -us -uc on a copy of the tree (it writes its
# output next to the source, so the source is copied under the output
# directory), then lintian. Prints the .deb's path last.
deb() {
	local out=${NETTUNE_DEB_DIR:-$here/build-deb}
	local version
	version=$(sed -n '1s/^nettune (\([^)]*\)).*/\1/p' "$here/debian/changelog")
	rm -rf "$out" && mkdir -p "$out/nettune-$version"
	if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$here" ls-files -z -co --exclude-standard |
			tar -C "$here" --null -T - -cf - | tar -C "$out/nettune-$version" -xf -
	else
		tar -C "$here" --exclude=./build --exclude=./build-deb --exclude=./state -cf - . |
			tar -C "$out/nettune-$version" -xf -
	fi
	(cd "$out/nettune-$version" && dpkg-buildpackage -b -us -uc >"$out/build.log" 2>&1) || {
		tail -40 "$out/build.log" >&2
		echo "dpkg-buildpackage failed; the whole log is $out/build.log" >&2
		return 1
	}
	# Errors fail; the warnings kept are listed, with why, in
	# debian/README.source.
	lintian --fail-on error --suppress-tags-from-file "$here/debian/lintian-kept" \
		"$out"/nettune_"$version"_*.changes
	ls "$out"/nettune_"$version"_*.deb
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
serve)
	install_pkgs "${build_pkgs[@]}"
	build nettune
	mkdir -p "$here/state"
	as_root "$build/nettune" serve --listen 127.0.0.1:8470 --root / --state-dir "$here/state" "$@"
	;;
test)
	if unit_only "$@"; then
		install_pkgs "${build_pkgs[@]}" "${unit_pkgs[@]}"
	else
		install_pkgs "${build_pkgs[@]}" "${test_pkgs[@]}" "${deb_pkgs[@]}"
	fi
	build
	# Everything the selected tests need from outside this machine (lab
	# kernels, npm packages, the systemd test's Debian root) is fetched
	# here, before ctest: no test sends a packet off the machine.
	unit_only "$@" || bash "$here/tests/prepare.sh" "$build" "$@"
	cd "$build"
	# Two tests at a time on two CPUs (at most 4): the unit, integration and
	# contract tests pair up; those that measure, boot a machine or build a
	# tree of their own run alone (RUN_SERIAL in tests/CMakeLists.txt).
	# NETTUNE_TEST_JOBS, or a -j among the arguments, says otherwise.
	jobs=${NETTUNE_TEST_JOBS:-$(nproc)}
	[ "$jobs" -gt 4 ] && jobs=4
	exec ctest --output-on-failure --timeout 1800 --parallel "$jobs" "$@"
	;;
deb)
	install_pkgs "${build_pkgs[@]}" "${deb_pkgs[@]}"
	deb
	;;
*)
	echo "usage: deploy/dev.sh serve [options] | deploy/dev.sh test [ctest options] | deploy/dev.sh deb" >&2
	exit 2
	;;
esac
