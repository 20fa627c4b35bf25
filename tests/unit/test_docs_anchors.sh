#!/usr/bin/env bash
# Every `docs/<page>.md#anchor` cited anywhere in the repository (code
# comments, diagnostic texts, tests, READMEs) names a page that exists and
# an anchor on it: a `## anchor` / `### anchor` heading or an
# `<a id="anchor">`. A renamed section then fails here instead of leaving a
# dead reference in a message a user reads. It also breaks a copy of a page
# to show that a missing anchor is caught.
set -u
SRC=${NT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -d "$SRC/docs" ] || { echo "SKIP: no docs folder under $SRC"; exit 77; }
command -v grep >/dev/null || { echo "SKIP: grep missing"; exit 77; }

# anchors PAGE: the anchors a page defines, one a line.
anchors() {
	grep -oE '^#{2,3} [a-z0-9][a-z0-9-]*$' "$1" | sed 's/^#* //'
	grep -oE '<a id="[^"]+">' "$1" | sed 's/<a id="//; s/">//'
}

# refs: every distinct PAGE#anchor cited, without the docs/ prefix. The
# fixture trees (tens of thousands of captured files) are skipped; their
# README and generator are read.
refs() {
	{
		grep -rhoE 'docs/[a-z0-9_-]+\.md#[a-z0-9-]+' "$SRC" --exclude-dir=.git \
			--exclude-dir=node_modules --exclude-dir=fixtures --exclude-dir=build
		grep -rhoE 'docs/[a-z0-9_-]+\.md#[a-z0-9-]+' "$SRC/tests/fixtures/README.md" \
			"$SRC/tests/fixtures/gen"
	} | sed 's|^docs/||' | sort -u
}

# check DOCS_DIR: print every dangling reference; exit status 1 if any.
check() {
	local docs=$1 bad=0 ref page anchor
	while IFS= read -r ref; do
		page=${ref%%#*}
		anchor=${ref#*#}
		if [ ! -f "$docs/$page" ]; then
			echo "missing page: docs/$page (cited as docs/$ref)"
			bad=1
		elif ! anchors "$docs/$page" | grep -qxF "$anchor"; then
			echo "missing anchor: docs/$ref"
			bad=1
		fi
	done < <(refs)
	# Links inside a page to its own sections: (#anchor).
	for page in "$docs"/*.md; do
		while IFS= read -r anchor; do
			anchors "$page" | grep -qxF "$anchor" ||
				{ echo "missing anchor: ${page##*/}#$anchor (linked inside the page)"; bad=1; }
		done < <(grep -oE '\]\(#[a-z0-9-]+\)' "$page" | sed 's/^](#//; s/)$//' | sort -u)
	done
	return $bad
}

nrefs=$(refs | wc -l)
[ "$nrefs" -gt 0 ] || { echo "FAIL: no docs references found under $SRC"; exit 1; }
check "$SRC/docs" || { echo "FAIL"; exit 1; }

# The check must be able to fail: a copy of the pages without one anchor.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cp -a "$SRC/docs/." "$tmp/"
sed -i 's/^## first-cpu-serves$/## first-cpu-served/' "$tmp/field-reports.md"
if check "$tmp" >/dev/null; then
	echo "FAIL: a removed anchor (first-cpu-serves) was not noticed"
	exit 1
fi
echo "ok: $nrefs distinct docs references resolve"
