#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The store's age limits (issue 32, postgrey's --max-age and
# --retry-window), with real parts: greygated (delay 1 s, retry_window
# 2 s) in front of the tarpit on 'gw'; a client at 'sender' greylisted by
# a real SMTP dialogue (swaks) and never retrying. Asserted: its triplet is
# purged once unseen for the retry window, and the purge says so in one
# line with what it took and what the store keeps (then at most once an
# hour); greygatectl list grey no longer shows it.
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
echo "PASS"
