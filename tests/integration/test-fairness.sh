#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One client's flood costs only that client. Ten clients each pipeline
# 20,000 RCPTs in one write (nine with a new transaction every 100, one in
# a single transaction) while a well-behaved client runs 300 sessions:
# each tarpit session asks greygated one question at a time, so every one
# of the 300 first attempts is decided and recorded (before, the sensor's
# events of the flood filled the socket to greygated and others' were
# dropped); the floods meet the recipient caps (452 past 100 in a
# transaction, 421 past 1,000 questions in a session), and nothing is
# dropped on the way up.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"
abuse="python3 $here/../lib/smtp-abuse.py"

netns_init
netns_sender_gw
for i in $(seq 40 49); do nsx sender ip addr add "203.0.113.$i/24" dev "$(netns_dev sender gw)"; done
mkdir -p "$NETNS_TMP/store"
greygated_conf "[greylist]
delay = 1h
[tarpit]
max_per_client = 200"
greygated_start

pids=()
for i in $(seq 40 49); do
	every=100
	[ "$i" != 49 ] || every=20000
	nsx sender $abuse rcptflood 203.0.113.1 20000 "203.0.113.$i" "$every" >"$NETNS_TMP/flood.$i" &
	pids+=($!)
done
sleep 0.2
nsx sender $abuse goodmany 203.0.113.1 300 >"$NETNS_TMP/good"
for p in "${pids[@]}"; do wait "$p" || fail "a flood client failed"; done
grep -q "^sessions=300 451=300 " "$NETNS_TMP/good" || fail "good client: $(cat "$NETNS_TMP/good")"
for i in $(seq 40 48); do
	n=$(grep -o "451=[0-9]*" "$NETNS_TMP/flood.$i" | cut -d= -f2)
	[ "${n:-0}" -ge 900 ] && [ "$n" -le 1000 ] ||
		fail "flood from .$i: $(cat "$NETNS_TMP/flood.$i") (want 1,000 questions at most)"
done
grep -q "451=100 452=" "$NETNS_TMP/flood.49" || fail "one transaction: $(cat "$NETNS_TMP/flood.49")"
n=$(grep -o "452=[0-9]*" "$NETNS_TMP/flood.49" | cut -d= -f2)
[ "$n" -ge 1000 ] || fail "one transaction: only $n 452s"
recorded() { [ "$(grep -c "action=greylist, reason=new, client=203.0.113.10, .*sender=good-[a-z]*@a.test" "$GG_LOG")" = 300 ]; }
wait_for 10 recorded || fail "$(grep -c "sender=good-" "$GG_LOG") of 300 good attempts recorded"
ggctl list grey --json | jq -e '[.[] | select(.sender | startswith("good-"))] | length == 300' >/dev/null ||
	fail "the store holds $(ggctl list grey --json | jq '[.[] | select(.sender | startswith("good-"))] | length') good triplets"
# The child's counters come up once a second.
counted() { ggctl status --json | jq -e '.sensor.events_dropped == 0 and .tarpit.verdicts_late == 0 and
	.tarpit.verdicts_unsent == 0 and .tarpit.asked == 9400' >/dev/null; }
wait_for 5 counted || fail "status: $(ggctl status --json | jq -c '{sensor, tarpit}')"
echo "ok: 10 floods of 20,000 pipelined RCPTs: 9,100 questions asked in all, the rest capped (452, 421); all 300 good attempts recorded, nothing dropped ($(cat "$NETNS_TMP/good"))"

# A burst: 1,200 sessions ask at the same moment. The child's socket
# takes a few hundred records at a time; greygated's answers wait for
# room (before, those past it were lost, and their sessions got the plain
# deferral two seconds late).
out=$(nsx sender bash -c "ulimit -n 4096; $abuse burst 203.0.113.1 1200 $(echo 203.0.113.{40..49})")
echo "$out" | grep "^451=1200 slowest=" >/dev/null || fail "burst: $out"
burst_counted() { ggctl status --json | jq -e '.tarpit.verdicts_late == 0 and .tarpit.verdicts_unsent == 0 and
	.tarpit.asked == 10600' >/dev/null; }
wait_for 5 burst_counted || fail "burst: status: $(ggctl status --json | jq -c .tarpit)"
echo "ok: 1,200 sessions asking at once: every one answered by its verdict, none late ($out)"
