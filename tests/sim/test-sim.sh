#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate-sim on small hand-made workloads whose outcome can be worked out
# by hand (delay 300 s, the default): a Postfix-like sender is delivered
# at its first attempt after its client passed, 900 s after the first; a
# pool sender rotating over two /16s waits until it returns to a network
# that passed, 3600 s; a STARTTLS sender passes at once and is delivered
# at its first retry; bots are stopped; the same seed gives the same month,
# and bad workloads are clear errors.
set -euo pipefail
sim=$GREYGATE_BUILD/tools/greygate-sim
tmp=$(mktemp -d /tmp/greygate-sim-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run() { # WORKLOAD-TEXT: prints the JSON
	printf '[sim]\ndays = 1\n%s\n' "$1" >"$tmp/w.ini"
	"$sim" --workload "$tmp/w.ini" --json 2>/dev/null
}
check() { # JSON JQ-EXPR WHAT
	echo "$1" | jq -e "$2" >/dev/null || fail "$3: $(echo "$1" | jq -c .sim)"
}

out=$(run "[class postfix]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7
retry = 5m, 10m, 20m")
check "$out" '.sim.legit_delivered == 1 and .sim.legit_delayed == 1 and .sim.delay.max == 900 and
	.report.funnel.passed_retry == 1 and .sim.sessions == 3' "postfix-like"
echo "ok: a Postfix-like sender: 451 at 0 s, passes at 300 s, delivered at 900 s"

out=$(run "[class pool]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7, 203.0.113.9
pick = rotate
retry = 15m")
check "$out" '.sim.legit_delivered == 1 and .sim.delay.max == 3600 and .sim.sessions == 5 and
	.report.funnel.passed_retry == 2' "pool over two /16s"
echo "ok: a pool over two /16s is delivered when it returns to a passed network: 3600 s"

out=$(run "[class tls]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7
retry = 5m
starttls = yes")
check "$out" '.sim.legit_delivered == 1 and .sim.delay.max == 300 and .report.funnel.passed_other == 1' "STARTTLS"
echo "ok: a STARTTLS sender passes at once and is delivered at its first retry"

out=$(run "[class bots]
kind = bot
messages = 50
clients = random
retry = none
burst = 2
burst_gap = 3s")
check "$out" '.sim.unwanted_messages == 50 and .sim.unwanted_delivered == 0 and
	.sim.unwanted_attempts == 150 and .report.funnel.passed_retry == 0' "bots"
echo "ok: bots retrying back to back are all stopped"

a=$("$sim" --json --seed 7 2>/dev/null)
b=$("$sim" --json --seed 7 2>/dev/null)
c=$("$sim" --json --seed 8 2>/dev/null)
[ "$a" = "$b" ] || fail "the same seed gave two different months"
[ "$a" != "$c" ] || fail "another seed gave the same month"
check "$a" '.sim.legit_messages == 22300 and .sim.unwanted_messages == 71100' "default month"
echo "ok: the default month is the same for a seed, and another for another seed"

printf '[sim]\n[class x]\nkind = spam\n' >"$tmp/bad.ini"
out=$("$sim" --workload "$tmp/bad.ini" 2>&1) && fail "a bad workload ran"
[ "$out" = "greygate-sim: $tmp/bad.ini:3: [class x] kind = spam: want mta or bot" ] || fail "bad workload: $out"
echo "ok: a bad workload is a one-line error naming the line"
