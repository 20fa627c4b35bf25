#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file the repository tracks says its licence (Apache-2.0,
# LICENSE) in an SPDX line within its first three lines, so a file copied
# out of the tree still carries it. Fixture data, the OpenAPI document
# (its info.license says it) and npm's lock files are not source.
set -u
cd "${NT_SRC:?NT_SRC: the source tree}" || exit 1
if ! git rev-parse --git-dir >/dev/null 2>&1; then
	echo "SKIP: not a git checkout (the tracked files are not known)"
	exit 77
fi
missing=0 checked=0
while IFS= read -r f; do
	[ -f "$f" ] || continue
	checked=$((checked + 1))
	if ! head -3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0'; then
		echo "FAIL: $f has no SPDX line in its first three lines"
		missing=$((missing + 1))
	fi
done < <(git ls-files -- '*.c' '*.h' '*.sh' '*.py' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt' \
	'*.ts' '*.mjs' '*.js' '*.yml' '*.yaml' '*.css' '*.html' |
	grep -v -e '^tests/fixtures/' -e 'node_modules/' -e 'package-lock' -e '^openapi/')
# The check can fail: a file without the line is caught.
t=$(mktemp)
printf 'int x;\n' >"$t"
if head -3 "$t" | grep -q 'SPDX-License-Identifier'; then
	echo "FAIL: the check passed a file without an SPDX line"
	missing=$((missing + 1))
fi
rm -f "$t"
[ "$checked" -gt 100 ] || { echo "FAIL: only $checked source files found"; missing=$((missing + 1)); }
echo "$checked source files checked, $missing without an SPDX line"
[ "$missing" -eq 0 ]
