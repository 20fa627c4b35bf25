#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every `docs/<page>.md#anchor` cited anywhere in the repository (code
# comments, diagnostic texts, tests, READMEs) names a page that exists and
# an anchor on it: a `## anchor` / `### anchor` heading, the anchor GitHub
# makes of any heading (`## The service` is #the-service), or an
# `<a id="anchor">`. So does every Markdown link of README.md and of the
# pages of docs/ to a file of the repository (`](fleet.md#the-agents)`,
# `](../tests/lab/README.md)`), and no link points outside the repository.
# A renamed section then fails here instead of leaving a dead reference in
# a message a user reads. It also breaks a copy of a page to show that a
# missing anchor is caught.
set -u
SRC=${NT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -d "$SRC/docs" ] || { echo "SKIP: no docs folder under $SRC"; exit 77; }
command -v grep >/dev/null || { echo "SKIP: grep missing"; exit 77; }

# anchors PAGE: the anchors a page defines, one a line.
anchors() {
	grep -oE '^#{2,3} [a-z0-9][a-z0-9-]*$' "$1" | sed 's/^#* //'
	grep -oE '<a id="[^"]+">' "$1" | sed 's/<a id="//; s/">//'
	# GitHub's: lower case, punctuation but '-' and '_' dropped, spaces to '-'.
	grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ //' | tr 'A-Z' 'a-z' |
		sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
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

# links FILE DOCS_DIR: every Markdown link of FILE (README.md, or a page of
# DOCS_DIR) to a repository file, and to its anchor, resolves; FILE's folder
# is the base of a relative link, and a page of DOCS_DIR sees DOCS_DIR as
# docs/. Links out of the repository (http:, https:) are reported.
links() {
	local file=$1 docs=$2 base link target anchor bad=0
	base=$(dirname "$file")
	while IFS= read -r link; do
		case $link in
		http:* | https:* | mailto:*)
			echo "${file##*/}: links outside the repository: $link"
			bad=1
			continue ;;
		'#'*) continue ;; # the page's own sections: check() above
		esac
		target=${link%%#*}
		anchor=
		[ "$target" != "$link" ] && anchor=${link#*#}
		target=$base/$target
		[ -e "$target" ] || { echo "${file##*/}: missing file: $link"; bad=1; continue; }
		if [ -n "$anchor" ] && ! anchors "$target" | grep -qxF "$anchor"; then
			echo "${file##*/}: missing anchor: $link"
			bad=1
		fi
	done < <(grep -oE '\]\([^)[:space:]]+\)' "$file" | sed 's/^](//; s/)$//' | sort -u)
	return $bad
}

# check_links DOCS_DIR: the README (its docs/ links against DOCS_DIR) and
# every page of DOCS_DIR.
check_links() {
	local docs=$1 bad=0 page tmp
	tmp=$(mktemp -d) || return 1
	mkdir "$tmp/repo"
	# A view of the repository whose docs/ is DOCS_DIR.
	for f in "$SRC"/* "$SRC"/.[!.]*; do
		[ -e "$f" ] && [ "${f##*/}" != docs ] && ln -s "$f" "$tmp/repo/${f##*/}"
	done
	ln -s "$docs" "$tmp/repo/docs"
	links "$tmp/repo/README.md" "$docs" || bad=1
	for page in "$tmp/repo/docs"/*.md; do
		links "$page" "$docs" || bad=1
	done
	rm -rf "$tmp"
	return $bad
}

nrefs=$(refs | wc -l)
[ "$nrefs" -gt 0 ] || { echo "FAIL: no docs references found under $SRC"; exit 1; }
check "$SRC/docs" || { echo "FAIL"; exit 1; }
check_links "$SRC/docs" || { echo "FAIL"; exit 1; }
nlinks=$(cat "$SRC/README.md" "$SRC"/docs/*.md | grep -oE '\]\([^)[:space:]]+\)' | wc -l)

# The check must be able to fail: a copy of the pages without one anchor.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cp -a "$SRC/docs/." "$tmp/"
sed -i 's/^## first-cpu-serves$/## first-cpu-served/' "$tmp/field-reports.md"
if check "$tmp" >/dev/null; then
	echo "FAIL: a removed anchor (first-cpu-serves) was not noticed"
	exit 1
fi
# ... and a page link to a section renamed away.
if [ -f "$tmp/operations.md" ]; then
	sed -i 's/^## Tokens and TLS$/## Tokens, TLS/' "$tmp/operations.md"
	if check_links "$tmp" >/dev/null; then
		echo "FAIL: a link to a renamed section (operations.md#tokens-and-tls) was not noticed"
		exit 1
	fi
fi
echo "ok: $nrefs distinct docs references and $nlinks links of README.md and docs/ resolve"
