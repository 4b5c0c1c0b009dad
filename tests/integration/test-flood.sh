#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tarpit under 10,000 connections opened at once, through the real
# redirect, twice: every one gets its banner, a well-behaved client is
# answered promptly meanwhile, and the child's memory stays flat from one
# wave to the next (the sensor lets go of the first wave's flows).
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/flood.sh"
abuse="python3 $here/../lib/smtp-abuse.py"
N=10000

netns_init
netns_sender_gw
flood_sources 11 20
mkdir -p "$NETNS_TMP/store"
greygated_conf "capture_buffer = 16m
$FLOOD_TARPIT_CONF"
greygated_start
grep -q "capturing on any (ring 16384 KiB)" "$GG_LOG" ||
	fail "capture_buffer = 16m not applied: $(grep up "$GG_LOG")"
child=$(ggctl status --json | jq -r .child.pid)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$child/status"; }

wave() { # NUMBER: hold N connections, check a good client meanwhile
	flood_hold "$N"
	[ "$FLOOD_HELD" = "banners=$N" ] || fail "wave $1: $FLOOD_HELD of $N banners"
	held_rss=$(rss)
	nsx sender $abuse good 203.0.113.1 | grep "^ok: good client got 451 in 0\.[0-4]" >/dev/null ||
		fail "good client not served promptly with $N connections held"
	flood_release
}

wave 1
first=$held_rss
flows_gone() { [ "$(ggctl status --json | jq .sensor.flows_open)" = 0 ]; }
wait_for 40 flows_gone || fail "the sensor still follows $(ggctl status --json | jq .sensor.flows_open) flows of the first wave"
wave 2
second=$held_rss
echo "child RSS with $N held: first wave ${first} KiB, second wave ${second} KiB"
[ "$second" -le $(( first + first / 10 )) ] || fail "memory grew from ${first} to ${second} KiB"
kill -0 "$GG_PID" || fail "greygated died"
echo "ok: $N connections at once, twice: all greeted, good client served, memory flat"
