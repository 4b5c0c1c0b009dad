#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tarpit with real clients, reached the way the internet reaches it:
# port 25 on the gateway, redirected by greygated's table. swaks (plain,
# PIPELINING with three recipients, STARTTLS offered and refused), the
# null sender, Postfix's smtp-source, and bad clients (garbage, a 100 KB
# line, too many connections, a slowloris, a half-closed socket); a good
# client is answered promptly throughout.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"
abuse="python3 $here/../lib/smtp-abuse.py"

netns_init
netns_sender_gw
greygated_conf "[greylist]
delay = 1h
tls_pass = yes
[tarpit]
max_per_client = 8
session_timeout = 4s"
greygated_start
log=$GG_LOG

sw() { nsx sender swaks --server 203.0.113.1 --ehlo sender.test "$@" 2>&1 || true; }

out=$(sw --from a@sender.test --to bob@example.org)
echo "$out" | grep "^<-  220 gw.test ESMTP" >/dev/null || fail "no banner: $out"
echo "$out" | grep "^<\*\* 451 4.7.1 <bob@example.org>: Greylisted, please try again in 3600 seconds" >/dev/null ||
	fail "plain: no 451 at RCPT: $out"
echo "$out" | grep "^<-  221 2.0.0 Bye" >/dev/null || fail "plain: QUIT not answered: $out"
echo "ok: plain swaks session: 220, 451 at RCPT, 221"

out=$(sw --pipeline --from a@sender.test --to x@example.org,y@example.org,z@example.org)
[ "$(echo "$out" | grep -c "451 4.7.1 <[xyz]@example.org>: Greylisted")" = 3 ] ||
	fail "pipelined: want three 451s: $out"
echo "$out" | grep "PIPELINING" >/dev/null || fail "EHLO does not offer PIPELINING"
echo "ok: PIPELINING with three recipients: three 451s in order"

out=$(sw --from '<>' --to bob@example.org)
echo "$out" | grep "^<-  250 2.1.5 Ok" >/dev/null || fail "null sender: RCPT not 250: $out"
echo "$out" | grep "^<\*\* 451 4.7.1 Greylisted" >/dev/null || fail "null sender: DATA not 451: $out"
echo "ok: null sender: 250 at RCPT, 451 at DATA"

# smtp-source ends at the first refused recipient ("fatal: recipient
# rejected: 451 ..."), so each run is one session; five run at a time.
seq 20 | nsx sender xargs -P 5 -I{} timeout 30 /usr/sbin/smtp-source -m 1 \
	-f src@sender.test -t rcpt{}@example.org 203.0.113.1:25 \
	>"$NETNS_TMP/smtp-source.out" 2>&1 || true
[ "$(grep -c "recipient rejected: 451 4.7.1 <rcpt[0-9]*@example.org>: Greylisted" "$NETNS_TMP/smtp-source.out")" = 20 ] ||
	{ cat "$NETNS_TMP/smtp-source.out"; fail "smtp-source did not see 20 451s"; }
n=0
all_seen() { n=$(grep -c "action=greylist, reason=new, .*recipient=rcpt[0-9]*@example.org" "$log" || true); [ "$n" = 20 ]; }
wait_for 5 all_seen || fail "smtp-source: $n decisions, want 20"
echo "ok: smtp-source: 20 sessions, 5 at a time, all 451, all greylisted"

nsx sender $abuse garbage 203.0.113.1
nsx sender $abuse longline 203.0.113.1
nsx sender $abuse dsnlines 203.0.113.1
nsx sender $abuse halfclose 203.0.113.1
nsx sender $abuse percap 203.0.113.1 12 | tee "$NETNS_TMP/percap"
grep -q "^served=8$" "$NETNS_TMP/percap" || fail "per-client cap is 8"
# A slowloris in the background while a good client is served.
nsx sender $abuse slowloris 203.0.113.1 4 &
slow=$!
sleep 1
nsx sender $abuse good 203.0.113.1
nsx sender $abuse good 2001:db8:1::1
wait "$slow" || fail "slowloris not ended by the session deadline"
kill -0 "$GG_PID" || fail "greygated died"
echo "ok: tarpit survived the bad clients"

# Last: with tls_pass on, STARTTLS at the tarpit passes the client.
out=$(sw --tls-optional --from a@sender.test --to bob@example.org)
echo "$out" | grep "^ -> STARTTLS" >/dev/null || fail "swaks said no STARTTLS: $out"
! echo "$out" | grep -E "^<.* 454|^ -> MAIL FROM" >/dev/null || fail "STARTTLS answered, or the session went on in the clear: $out"
echo "ok: STARTTLS at the tarpit (no hand-off): the session ended unanswered, nothing said in the clear after it"
grep -q "action=pass, reason=starttls, client=203.0.113.10" "$log" || fail "STARTTLS did not pass"

# --- stress mode and the stutter: greygated again with small caps ---
# (The report's figures are saved at a clean stop: the STARTTLS pass just
# above is younger than the 5 s between periodic saves.)
funnel=$(ggctl report --json | jq -c .funnel)
kill "$GG_PID"
wait "$GG_PID" 2>/dev/null || true
greygated_conf "[greylist]
delay = 1h
trap_recipients = trap@example.org
[tarpit]
max_connections = 40
max_per_client = 64
idle_timeout = 30s
stress_high = 20
stress_low = 10
stress_idle_timeout = 1s
stutter = 100ms"
greygated_start
[ "$(ggctl report --json | jq -c .funnel)" = "$funnel" ] ||
	fail "report not saved at the stop: $funnel, now $(ggctl report --json | jq -c .funnel)"
echo "ok: the report's figures are saved when greygated stops"
ggctl forget 203.0.113.10 >/dev/null
# 25 idle connections: past 20 the timeouts shorten for all of them.
nsx sender $abuse idle 203.0.113.1 25 8 | tee "$NETNS_TMP/idle"
grep -q "^closed=25 slowest=[0-3]\." "$NETNS_TMP/idle" || fail "stress mode did not close the idle flood within 4 s"
grep -q "tarpit: stress: 20 connections open; timeouts now 1000 ms idle" "$log" || fail "stress not logged"
grep -q "tarpit: stress over" "$log" || fail "end of stress not logged"
# The child sends its counters every second.
stress_counted() { ggctl status --json | jq -e '.tarpit.stress_entered == 1 and .tarpit.stressed == 0 and
	.tarpit.timeouts == 25' >/dev/null; }
wait_for 3 stress_counted || fail "status: $(ggctl status --json | jq -c .tarpit)"
# Out of stress, an idle client has its full 30 s again.
nsx sender $abuse idle 203.0.113.1 1 3 | grep "^closed=0 " >/dev/null || fail "still in stress mode"
echo "ok: stress mode: past stress_high the idle timeout fell to 1 s for all, then came back"

# A trapped client meets the stutter: a byte every 100 ms.
sw --from bot@sender.test --to trap@example.org >/dev/null
wait_for 5 grep -q "action=trap, reason=trapped, client=203.0.113.10" "$log" || fail "client not trapped"
nsx sender $abuse stutter 203.0.113.1 100
out=$(nsx sender timeout 5 swaks --server 203.0.113.1:2526 --quit-after connect 2>&1 || true)
if echo "$out" | grep "^<-  220" >/dev/null; then fail "the stutter port answers without the redirect"; fi
echo "ok: trapped clients get every reply a byte at a time; the stutter port is not reachable directly"

# --- the idle timeout: a byte now and then buys no time ---
kill "$GG_PID"
wait "$GG_PID" 2>/dev/null || true
greygated_conf "[greylist]
delay = 1h
trap_recipients = trap@example.org
[tarpit]
idle_timeout = 2s
session_timeout = 30s
stutter = 5s"
greygated_start
ggctl forget 203.0.113.10 >/dev/null
out=$(nsx sender $abuse dribble 203.0.113.1 0.5)
t=$(echo "$out" | awk '{print $3}')
awk -v t="$t" 'BEGIN { exit !(t >= 1.5 && t < 4) }' ||
	fail "a dribbling client was held $t s (idle_timeout 2 s, session 30 s)"
echo "ok: a client sending a byte every 0.5 s, never a command, is closed after ${t} s (idle_timeout 2 s)"

# A trapped client that resets while the stutter speaks (a byte every
# 5 s), its pipelined commands past the buffer: closed at once, no
# spinning child.
sw --from bot@sender.test --to trap@example.org >/dev/null
wait_for 5 grep -q "action=trap, reason=trapped, client=203.0.113.10" "$GG_LOG" || fail "client not trapped"
child=$(ggctl status --json | jq -r .child.pid)
cpu() { awk '{print $14 + $15}' "/proc/$child/stat"; }
before=$(cpu)
nsx sender $abuse pipeflood 203.0.113.1 4000 >/dev/null
sleep 3
used=$(( $(cpu) - before ))
[ "$used" -lt 50 ] || fail "the child spent $used ticks after a reset during the stutter"
echo "ok: a reset during the stutter costs the child $used ticks over 3 s"
