#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/demo tells the whole story, as the README promises: the first
# attempt meets the tarpit's 451, the retry passes into pass4 and is
# delivered by the hand-off (no second 451; transparent, the default: to
# Postfix as Debian installs it), once, the bot never gets in, and the
# report ends it.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"

out=$("$here/../../scripts/demo" 2>&1) || { echo "$out"; fail "scripts/demo failed"; }
expect() {
	echo "$out" | grep -qE -- "$1" || { echo "$out"; fail "demo output lacks: $1"; }
}
expect "hand-off mode transparent"
expect "from all fwmark 0x4767 ipproto tcp sport 25 lookup 4767"
expect "status=deferred .*451 4.7.1 <bob@example.org>: Greylisted"
expect "action=greylist, reason=new, client=203.0.113.10"
expect "action=pass, reason=retry-passed, client=203.0.113.10, key=203.0.113.0/24"
expect "elements = \{ 203.0.113.0 "
expect "exactly 1 time\(s\)"
expect "relay=203.0.113.1\[203.0.113.1\]:25, .*status=sent"
expect "Received: from out.test.example \(unknown \[203.0.113.10\]\)"
expect "and 0 answers \"Passed greylisting, please try again now\""
expect "<\*\* 451 4.7.1"
expect "It never reached the MTA: 0 copies"
expect "greylisted, never retried +1 "
expect "passed greylisting \(retry\) +1 "
# Its own namespaces, by the suffix it named: other tests' (a run beside
# this one) are none of its business.
run=$(grep -o "namespaces gg-\*-[0-9a-f]*" <<<"$out" | sed 's/.*-//')
[ -n "$run" ] || { echo "$out"; fail "the demo did not name its namespaces"; }
left=$(ip netns list | grep -- "-$run\b" || true)
[ -z "$left" ] || fail "the demo left namespaces behind: $left"
echo "ok: scripts/demo shows the story and cleans up"
