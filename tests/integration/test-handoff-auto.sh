#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hand-off's default, [handoff] mode = auto, with real parts: a
# greygated with no [handoff] section in front of a Debian Postfix on the
# gateway that was not reconfigured at all. auto is transparent here (the
# kernel has policy routing), said by --check-config, at start and in
# status; the MTA is asked where the first client was going, if that is
# an address of the gateway's own (a client going through it to another
# host cannot choose where greygated connects). While
# nothing answers there, a passing attempt hears 451 as with the hand-off
# off (status says why); once Postfix starts, auto sees it within its
# 10-second probe and a sending Postfix's passing retry is delivered on
# that very attempt, the Received header naming the sender. The first
# client after a start, passed at once, is delivered on that attempt
# (its pass waits for auto's first probe). With tls_pass = no, auto is
# off, and says why.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/handoff.sh"

netns_init
netns_sender_gw
# a host behind the gateway, which routes for it (nothing listens there)
netns_host mxb
netns_link gw 198.51.100.1/24 mxb 198.51.100.2/24
nsx gw sysctl -qw net.ipv4.ip_forward=1
nsx sender ip route add 198.51.100.0/24 via 203.0.113.1
nsx mxb ip route add default via 198.51.100.1
session() { nsx sender python3 "$here/../lib/smtp-session.py" "$@"; }
auto() { ggctl status --json | jq -c .handoff; }

# Set up, not started: nothing answers on 203.0.113.1:25 at first.
postfix_new mx gw "203.0.113.1"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = none"

mkdir -p "$NETNS_TMP/store"
# The defaults: the hand-off (auto) and DNS lookups, asked of an address
# nothing answers on (no DNS here: every client is greylisted as without).
export GG_HANDOFF_DEFAULT=1 GG_SIGNALS_DEFAULT=1
greygated_conf "[greylist]
delay = 3
[signals]
dns_servers = 198.51.100.53"
grep -q "^\[handoff\]" "$NETNS_TMP/greygate.conf" && fail "the test's config names a hand-off mode"
out=$(nsx gw "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/greygate.conf" --check-config 2>&1) ||
	fail "--check-config: $out"
grep -q "mode = auto: transparent, once the MTA at the address clients go to answers" <<<"$out" ||
	fail "--check-config does not say what auto does: $out"
greygated_start
grep -q "hand-off: auto: transparent, once the MTA at the address clients go to answers" "$GG_LOG" ||
	{ cat "$GG_LOG"; fail "the start does not say what auto does"; }
auto | jq -e '.setting == "auto" and .mode == "transparent" and (.ready | not) and (.auto | test("waiting for a client"))' >/dev/null ||
	fail "status before any client: $(auto)"
ggctl status | grep -q "^hand-off:  auto: waiting for a client to show where the MTA is" ||
	fail "status text: $(ggctl status | grep hand-off)"
echo "ok: no [handoff] section: auto, transparent here, said by --check-config, at start and in status"
grep -q "signals: FCrDNS, the PTR's shape and SPF looked up for each tarpit client" "$GG_LOG" ||
	fail "lookups are not on by default"
[ -f /usr/local/share/greygate/dynamic-rdns ] || [ -f /usr/share/greygate/dynamic-rdns ] ||
	grep -q "signals: .*/dynamic-rdns is not installed: only PTR names that embed the address count as dynamic" "$GG_LOG" ||
	fail "the shipped PTR patterns, not installed, were not said (or stopped greygated)"
echo "ok: DNS lookups are on by default; the shipped PTR patterns, where not installed, are said, not fatal"

# --- a client going through the gateway to another host: not asked ---
session try 203.0.113.10 198.51.100.2 | grep -q "^RCPT 451 .*Greylisted" || fail "through the router: not greylisted"
grep -q "hand-off: auto: a client was going to 198.51.100.2:25, not an address of this host" "$GG_LOG" ||
	{ tail "$GG_LOG"; fail "a foreign destination was not said"; }
! grep -q "asking the MTA at 198.51.100.2" "$GG_LOG" || fail "auto asked a host the client chose"
auto | jq -e '.auto | test("waiting for a client")' >/dev/null || fail "status: $(auto)"
echo "ok: a client going to another host through the gateway: not asked there, said once"

# --- nothing answers where the client was going: held, as if off ---
session try 203.0.113.10 203.0.113.1 | grep -q "^RCPT 451 .*Greylisted" || fail "not greylisted (early)"
grep -q "hand-off: auto: asking the MTA at 203.0.113.1:25, where clients go" "$GG_LOG" ||
	{ tail "$GG_LOG"; fail "the MTA's address was not learnt from the client's destination"; }
wait_for 10 eval 'auto | jq -e ".auto | test(\"does not answer yet\")" >/dev/null' ||
	fail "status does not say the MTA does not answer: $(auto)"
wait_may_pass 203.0.113.0/24
out=$(session try 203.0.113.10 203.0.113.1)
grep -q "^RCPT 451 .*Passed greylisting" <<<"$out" || fail "the passing attempt, with no MTA: $out"
[ "$(auto | jq .started)" = 0 ] || fail "a hand-off was begun with no MTA answering: $(auto)"
echo "ok: no MTA answering yet: the passing attempt heard 451 and nothing was handed over; status says why"

# --- the MTA starts: auto sees it, the passing retry delivers ---
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
wait_for 25 eval 'auto | jq -e .ready >/dev/null' || fail "auto did not see the MTA start: $(auto)"
grep -q "hand-off: the MTA at 203.0.113.1:25 offers STARTTLS" "$GG_LOG" || fail "the MTA's EHLO was not read"
ggctl status | grep -q "^hand-off:  auto: the MTA at 203.0.113.1:25 answers: " ||
	fail "status text: $(ggctl status | grep hand-off)"
# The probe went from this host's 203.0.113.1, inside the network passed
# above: greygated's own connection, not a client's fast-path session
# (issue 57: counted as one). (the child's figures come up each second)
sleep 2
fp=$(ggctl status --json | jq .decisions.fastpath_sessions)
[ "$fp" = 0 ] || fail "greygated's probe of the MTA was counted as $fp fast-path session(s)"
ggctl forget 203.0.113.10 >/dev/null
out_send "auto-$NETNS_RUN"
sent_by_the_pass "auto" mx "auto-$NETNS_RUN" 203.0.113.10 203.0.113.10
# (the child's counters come up each second)
wait_for 5 eval '[ "$(auto | jq .joined)" = 1 ]' || fail "hand-offs: $(auto)"
echo "ok: the MTA started: auto saw it, the sender's passing retry was delivered on that attempt ($PASS_DEFERRALS deferral(s))"

# --- the first client after a start, passed at once (tls_pass = yes: at
# its first STARTTLS, decided in the milliseconds auto's first probe of
# the MTA takes): delivered on that attempt, after each of 5 starts
# (issue 57 item 1: 451, or its STARTTLS unanswered, in 4 runs of 7) ---
out_reconfigure "smtp_tls_security_level = may"
for n in 1 2 3 4 5; do
	kill "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
	rm -rf "$NETNS_TMP/store"
	mkdir -p "$NETNS_TMP/store"
	greygated_conf "[greylist]
tls_pass = yes
[signals]
lookups = no"
	greygated_start
	: >"$(postfix_log out)"
	out_send "first-$n-$NETNS_RUN"
	wait_for 30 mail_delivered mx "first-$n-$NETNS_RUN" ||
		{ tail -n 5 "$GG_LOG" "$(postfix_log out)"; fail "start $n: the first client was not delivered"; }
	! grep -q "status=deferred" "$(postfix_log out)" ||
		fail "start $n: the first client was deferred: $(grep status= "$(postfix_log out)")"
done
echo "ok: the first client after a start, passed at its first STARTTLS, was delivered on that attempt after each of 5 starts"

# --- tls_pass = no: auto is off, and says why ---
kill "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
greygated_conf "[greylist]
delay = 3
tls_pass = no"
out=$(nsx gw "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/greygate.conf" --check-config 2>&1) ||
	fail "--check-config refused auto with tls_pass = no: $out"
grep -q "mode = auto: off: tls_pass = no would deliver the passing attempt in the clear" <<<"$out" ||
	fail "--check-config: $out"
greygated_start
auto | jq -e '.setting == "auto" and .mode == "off"' >/dev/null || fail "status: $(auto)"
grep -q "hand-off: auto: off: tls_pass = no would deliver" "$GG_LOG" || fail "the start does not say auto is off"
echo "ok: tls_pass = no: auto is off, said by --check-config, at start and in status"
