#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The manual pages: every page is clean for mandoc's linter (warnings and
# worse) and groff's (-ww), man -l shows it, and each program's options
# and commands as its --help lists them are in its page, so a page cannot
# fall behind its program. greygate.conf(5) is made at build time from the
# example config and greygated's keys (man/conf-to-man.py), which refuses
# to make it when the two differ: here it names every key.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$GREYGATE_BUILD
fail() { echo "FAIL: $*" >&2; exit 1; }

pages=("$top"/man/*.[18] "$build/man/greygate.conf.5")
for page in "${pages[@]}"; do
	[ -s "$page" ] || fail "$page: missing"
	out=$(mandoc -T lint -W warning "$page" 2>&1 || true)
	[ -z "$out" ] || fail "mandoc: $out"
	out=$(groff -ww -mandoc -Tutf8 -z "$page" 2>&1 || true)
	[ -z "$out" ] || fail "groff: $page: $out"
	MANWIDTH=80 man -l "$page" 2>/dev/null | grep "^NAME" >/dev/null || fail "man -l $page shows no NAME"
done
echo "ok: ${#pages[@]} pages lint clean (mandoc -T lint -W warning, groff -ww) and render"

shown() { MANWIDTH=200 man -l "$1" 2>/dev/null | sed 's/‐/-/g'; }
# in_page PAGE WORDS...: each word appears in the rendered page.
in_page() {
	local page=$1 text word
	shift
	text=$(shown "$page")
	for word in "$@"; do
		grep -F -- "$word" <<<"$text" >/dev/null || fail "$(basename "$page") does not mention $word"
	done
}
long_options() { grep -o -- '--[a-z][a-z-]*' | sort -u; }

in_page "$top/man/greygated.8" $("$build/daemon/greygated" --help | long_options)
in_page "$top/man/greygatectl.8" $("$build/tools/greygatectl" --help 2>&1 | awk '/^  [a-z]/{print $1}' | sort -u) \
	$("$build/tools/greygatectl" --help 2>&1 | long_options)
in_page "$top/man/greygate-sniff.8" $("$build/tools/greygate-sniff" --help 2>&1 | grep -o -- '-[a-zA-Z]\b\|--[a-z]*' | sort -u)
in_page "$top/man/greygate-sim.1" $("$build/tools/greygate-sim" --help 2>&1 | long_options)
in_page "$top/man/greygate-provider-banks.8" $(python3 "$top/scripts/provider-banks" --help | long_options | grep -v -- --help)
echo "ok: each page names every option and command its program's --help lists"

conf=$(shown "$build/man/greygate.conf.5")
while read -r section key when; do
	grep -E "^ +$key = .*\(.*$when\)" <<<"$conf" >/dev/null ||
		fail "greygate.conf(5) lacks [$section] $key ($when)"
done < <("$build/daemon/greygated" --keys)
echo "ok: greygate.conf(5) has every key of greygated's, with its default and whether it needs a restart"

# The maker refuses an example that lacks a key, or has one too many.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/daemon/greygated" --keys >"$tmp/keys"
grep -v "^route_table = " "$top/etc/greygate.conf" >"$tmp/lacking.conf"
! python3 "$top/man/conf-to-man.py" "$tmp/lacking.conf" "$tmp/keys" "$tmp/out.5" today 2>"$tmp/err" ||
	fail "a page was made from an example lacking a key"
grep "\[handoff\] route_table is a key of greygated's but is not in the example" "$tmp/err" >/dev/null ||
	fail "unexpected: $(cat "$tmp/err")"
echo "ok: an example config that lacks a key stops the page's making, naming the key"
