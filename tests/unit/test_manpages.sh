#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The man pages the build makes (deploy/mangen.c): nettune.conf(5) lists every
# configuration key of the option table (the rows of cli/options.c marked
# NT_OPT_CONF, read here from the source, not through mangen), nettune(8) every
# one as a serve option and every exit code, and `man -l` renders both at 80
# columns without a warning (groff -ww too). It also drops a key from a copy of
# nettune.conf(5) to show that a missing key is caught.
set -u
src=${NT_SRC:?}
build=$(dirname "${NT_BIN:?}")
pass=0; fail=0
check() { local what=$1; shift; if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $what"; fi; }
for t in man groff python3; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed (Debian packages man-db, groff-base)"; exit 77; }
done
conf5=$build/nettune.conf.5 page8=$build/nettune.8
check "nettune.conf.5 was built" [ -s "$conf5" ]
check "nettune.8 was built" [ -s "$page8" ]
[ "$fail" = 0 ] || exit 1

# The configuration keys, from the option table's source.
keys=$(python3 - "$src/cli/options.c" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
table = text[text.index("nt_cli_options[] = {"):]
table = table[:table.index("};")]
for m in re.finditer(r'\{\s*"([a-z0-9-]+)",([^{}]*)\}', table):
    if "NT_OPT_CONF" in m.group(2):
        print(m.group(1))
PY
)
nkeys=$(wc -w <<<"$keys")
check "the option table has configuration keys ($nkeys)" [ "$nkeys" -ge 15 ]

# lists KEYS PAGE: every key as a .TP entry of nettune.conf(5); prints the missing.
lists() {
	local k ok=0
	for k in $1; do
		grep -q "^\\\\fB${k//-/_}\\\\fR = " "$2" || { echo "missing: ${k//-/_}"; ok=1; }
	done
	return $ok
}
check "nettune.conf(5) lists every configuration key: $(lists "$keys" "$conf5")" lists "$keys" "$conf5"
for k in $keys; do
	check "nettune(8) has serve option --$k" grep -q "^\\\\fB\\\\-\\\\-${k//-/\\\\-}\\\\fR " "$page8"
done
while read -r code; do
	check "nettune(8) has exit code $code" grep -qx "$code" "$page8"
done < <("$NT_BIN" --help | sed -n '/^Exit status:/,$p' | awk '$1 ~ /^[0-9]+$/ {print $1}')
check "nettune(8) names every command of --help" bash -c '
	for c in topology diagnose irqs rates placement run serve plan apply try confirm rollback show history desired drift bench\\\\-run tune; do
		grep -q "^\\\\fB$c\\\\fR\|^\\\\fB$c \|^\\\\fB$c\\\\-" "$0" || { echo "missing $c"; exit 1; }
	done' "$page8"

# Every form of a command --help shows is in nettune(8): apply --plan ID too.
check "nettune(8) documents apply --plan ID" grep -q '^\\fBapply \\-\\-plan\\fR \\fIID\\fR' "$page8"

# The shipped profiles' folder is one fact: --help's is nettune(8)'s FILES entry.
shipped=$("$NT_BIN" --help | sed -n 's/^\(\/[^ ]*\) (where this build installs them)\.$/\1/p')
check "--help names the shipped profiles' folder" [ -n "$shipped" ]
check "nettune(8) names the folder --help does ($shipped)" grep -qx "\\.I ${shipped//\//\\/}/NAME\\.json" "$page8"
check "nettune(8) names no other" [ "$(grep -c share/nettune/profiles "$page8")" = 1 ]

# Rendered without a warning.
for f in "$conf5" "$page8"; do
	out=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	check "man --warnings -l ${f##*/} is silent: $out" [ -z "$out" ]
	out=$(groff -ww -man -Tutf8 -z "$f" 2>&1)
	check "groff -ww ${f##*/} is silent: $out" [ -z "$out" ]
	check "${f##*/} renders to text" bash -c "MANWIDTH=80 man -l '$f' 2>/dev/null | grep -q NAME"
done

# The check must be able to fail: a copy of nettune.conf(5) without max_body.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
grep -v '^\\fBmax_body\\fR' "$conf5" > "$tmp/conf.5"
if lists "$keys" "$tmp/conf.5" >/dev/null; then
	fail=$((fail+1)); echo "FAIL: a page without max_body was not noticed"
else
	pass=$((pass+1))
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
