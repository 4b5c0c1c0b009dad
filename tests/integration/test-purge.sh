#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The store's age limits (issue 32, postgrey's --max-age and
# --retry-window), with real parts: greygated (delay 1 s, retry_window
# 2 s) in front of the tarpit on 'gw'; a client at 'sender' greylisted by
# a real SMTP dialogue (swaks) and never retrying. Asserted: its triplet is
# purged once unseen for the retry window, and the purge says so in one
# line with what it took and what the store keeps (then at most once an
# hour); greygatectl list grey no longer shows it. With
# store_commit_interval = 1h (a router's flash), a pass is written no
# sooner: a kill -9 loses it (the client meets the tarpit again), a clean
# stop writes it; at the default a pass survives the kill.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
mkdir -p "$NETNS_TMP/store"
greygated_conf "[greylist]
delay = 1
retry_window = 2s"
greygated_start
log=$GG_LOG

# (swaks ends non-zero on a 451: its output read whole)
out=$(nsx sender swaks --server 203.0.113.1 --from alice@sender.test --to bob@example.org \
	--quit-after RCPT --timeout 5 2>&1) || true
grep "^<\*\* *451 " <<<"$out" >/dev/null || fail "the client was not greylisted: $out"
grep "^203.0.113.0/24 " <<<"$(ggctl list grey)" >/dev/null || fail "no waiting triplet: $(ggctl list grey)"
wait_for 10 grep -F "store: purged 1 triplet(s) unseen for the retry window (2s), 0 pass(es) and 0 trap(s) past their end; 0 triplet(s), 0 pass(es) and 0 trap(s) kept" "$log" >/dev/null ||
	fail "the purge was not said: $(grep "store:" "$log" | tail -3)"
! grep "^203.0.113.0/24 " <<<"$(ggctl list grey)" >/dev/null || fail "still listed: $(ggctl list grey)"
echo "ok: a triplet unseen for the retry window is purged, and the purge says what it took and what is kept"

# --- store_commit_interval: the store written at most that often ---
rcpt() { # what the tarpit answers the client's RCPT
	nsx sender swaks --server 203.0.113.1 --from alice@sender.test --to bob@example.org \
		--quit-after RCPT --timeout 5 2>&1 | grep "^<\*\* *451 " || true
}
passed() {
	nsx gw nft -j list set inet greygate pass4 |
		jq -e '.nftables[] | select(.set) | .set.elem[]? | select(.elem.val == "203.0.113.0")' >/dev/null
}
pass_client() { # greylisted, then passed by its retry
	rcpt | grep -q "Greylisted" || fail "$1: not greylisted first"
	wait_may_pass 203.0.113.0/24
	rcpt | grep -q "Passed greylisting" || fail "$1: the retry did not pass"
	passed || fail "$1: not in the pass set"
}
stop() { # SIGNAL
	local child
	child=$(ggctl status --json | jq -r .child.pid)
	kill "-$1" "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null && ! kill -0 "$child" 2>/dev/null' ||
		fail "greygated did not stop on $1"
}
restart() { # SIGNAL CONFIG
	stop "$1"
	greygated_conf "$2"
	greygated_start
}
hourly="store_commit_interval = 1h
[greylist]
delay = 1"
restart TERM "$hourly"
pass_client "1h"
restart KILL "$hourly"
! passed || fail "1h: a pass survived kill -9 before its commit was due"
# Nothing of it was written (the interval counts from the start): it is
# greylisted again, and its retry passes it again.
rcpt | grep -q "Greylisted" || fail "1h: after the kill, not greylisted again"
wait_may_pass 203.0.113.0/24
rcpt | grep -q "Passed greylisting" || fail "1h: the retry after the kill did not pass"
echo "ok: store_commit_interval = 1h: nothing written before the interval is lost to kill -9; the client is greylisted again and its retry passes it"
restart TERM "$hourly"
passed || fail "1h: a clean stop did not write the pass"
echo "ok: store_commit_interval = 1h: a clean stop writes what waited, the pass is restored"
restart TERM "[greylist]
delay = 1"
ggctl forget 203.0.113.0 >/dev/null
pass_client "200ms"
restart KILL "[greylist]
delay = 1"
passed || fail "200ms: the pass did not survive kill -9"
echo "ok: at the default interval a pass is written at once and survives kill -9"
echo "PASS"
