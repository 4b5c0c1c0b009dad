#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygated out of descriptors (issue 57 item 8): each tarpit session's
# socket comes to greygated with the child's record of it; with its
# table full, the kernel cannot give it one, and the log blamed the honest
# child ("more than one descriptor came with it"). Here greygated starts
# with RLIMIT_NOFILE 40 (prlimit), 40 connections are held at the
# tarpit: the log says "out of descriptors" with the limit, once, never
# blames the child, and greygated goes on (a good client answered once
# the flood is gone).
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/flood.sh"

netns_init
netns_sender_gw
flood_sources 11 12
mkdir -p "$NETNS_TMP/store"
# greygated holds about 18 descriptors at start, its child 11: with 40
# each and the tarpit's 25 connections at most, greygated runs out first
# (about 22 sessions in), the child never.
limit=40
cat >"$NETNS_TMP/limited" <<SH
#!/bin/sh
exec prlimit --nofile=$limit:$limit "$GREYGATE_BUILD/daemon/greygated" "\$@"
SH
chmod +x "$NETNS_TMP/limited"
greygated_conf "[tarpit]
max_connections = 25
max_per_client = 25
idle_timeout = 120s"
GG_BIN=$NETNS_TMP/limited greygated_start
grep -q "only $limit file descriptors (RLIMIT_NOFILE)" "$GG_LOG" ||
	fail "the start did not say the limit: $(grep -i descriptors "$GG_LOG")"

flood_hold 25
wait_for 10 grep -q "out of descriptors: a session's socket from the child could not be taken" "$GG_LOG" ||
	{ tail "$GG_LOG"; fail "running out of descriptors was not said ($FLOOD_HELD)"; }
grep -q "RLIMIT_NOFILE $limit;" "$GG_LOG" || fail "the limit was not named: $(grep 'out of descriptors' "$GG_LOG")"
! grep -q "more than one descriptor" "$GG_LOG" || fail "the child was blamed: $(grep -m1 'more than one descriptor' "$GG_LOG")"
[ "$(grep -c "out of descriptors" "$GG_LOG")" = 1 ] || fail "said more than once a minute: $(grep -c 'out of descriptors' "$GG_LOG")"
flood_release
kill -0 "$GG_PID" || fail "greygated died"
wait_for 20 eval "nsx sender python3 '$here/../lib/smtp-abuse.py' good 203.0.113.1 | grep -q '^ok: good client got 451'" ||
	fail "greygated did not answer once the flood was gone"
echo "ok: out of descriptors ($limit, $FLOOD_HELD of 25 greeted): said once with the limit, the child not blamed, greygated answering after"
