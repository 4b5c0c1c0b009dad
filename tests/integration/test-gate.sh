#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The gate, attacked with real parts (issue 55): an unpassed client names
# postmaster@ first (an exempt recipient: handed to the MTA unpassed, the
# tarpit between the two), then tries every form a real Postfix 3.7 reads
# as a RCPT that the gate once passed on unread or read otherwise: TAB
# after the verb, white space before it (space, TAB, CR, VT, FF), a path
# with a second '<' inside or text after its '>', a NUL, a list, a verb
# split across reads, a line longer than the gate's buffer, pipelined
# forms, VRFY, XCLIENT, XFORWARD, AUTH; and a nested path as the first
# RCPT. Behind each hand-off mode in turn (PROXY v2, XCLIENT, transparent)
# the MTA delivers postmaster@'s copy on the first attempt and no other:
# not one victim in its mailbox or its log; and the same behind Exim 4.96
# (Debian's exim4-daemon-light: transparent, the one mode it takes). A
# client that hangs up, or resets, mid-body costs the child no CPU (it
# spun at 100% of a core).
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/handoff.sh"
. "$here/../lib/exim.sh"

netns_init
netns_sender_gw
attack() { nsx sender python3 "$here/../lib/gate-attack.py" "$@"; }

# The MTA: port 25 (XCLIENT for greygate's own source address) and a
# PROXY listener on loopback; delay = 1h: nothing passes by retrying here.
netns_add_addr "$(netns_ns gw)" "$(netns_dev gw sender)" 203.0.113.2/24
postfix_new mx gw "203.0.113.1" "
smtpd_authorized_xclient_hosts = 203.0.113.2"
postfix_proxy_listener mx
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
wait_for 10 nsx gw bash -c "exec 3<>/dev/tcp/127.0.0.1/10025" 2>/dev/null ||
	fail "mx's PROXY listener is not up"
mbox=$(postfix_mailbox mx)
mxlog=$(postfix_log mx)
mkdir -p "$NETNS_TMP/store"

start_mode() { # MODE [HANDOFF LINES]
	if [ -n "$GG_PID" ]; then
		kill "$GG_PID"
		wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
	fi
	greygated_conf "[greylist]
delay = 1h
[handoff]
mode = $1
timeout = 5s
$2"
	greygated_start
	wait_for 10 grep -q "hand-off: the MTA at .* offers" "$GG_LOG" ||
		{ tail "$GG_LOG"; fail "$1: the MTA's EHLO was not learnt"; }
}

# victims: how many copies for a recipient other than postmaster@ the MTA
# delivered, or logged as taken, ever (Postfix: Delivered-To and to=<>;
# Exim: Envelope-to and "=> victim").
victims() {
	{ grep -ciE "^(Delivered-To|Envelope-to): .*victim" "$mbox" 2>/dev/null || true; } | head -1
}
victims_logged() { grep -cE "to=<victim|[=-]> victim" "$mxlog" || true; }
# delivered SUBJECT: postmaster@'s copy, once, and addressed to it
delivered() {
	[ "$(grep -c "^Subject: $1\$" "$mbox" 2>/dev/null)" = 1 ] &&
		awk -v s="Subject: $1" '/^From /{h=""} {h=h"\n"$0} $0==s{print h; exit}' "$mbox" |
		grep -qiE "^(Delivered-To|Envelope-to): postmaster@example.org"
}

decided() { grep -c "action=greylist, .*client=203.0.113.10, .*recipient=$1@example.org" "$GG_LOG" || true; }
check_mode() { # MODE: the attack behind it
	local mode=$1 subject="gate-$1-$NETNS_RUN" out victim1_before
	victim1_before=$(decided victim1)
	out=$(attack forms 203.0.113.10 203.0.113.1 "$subject") ||
		{ echo "$out"; tail -n 20 "$GG_LOG"; fail "$mode: the attack did not run"; }
	# every form refused or greylisted here, none taken by the MTA
	! grep -E "^FORM .*: 25[0-9]$" <<<"$out" || fail "$mode: a form was taken: $(grep -E ': 25' <<<"$out")"
	grep -q "^NOOP: 250$" <<<"$out" || fail "$mode: NOOP after the pipelined forms: $out"
	[ "$(grep -c "^FORM " <<<"$out")" = 21 ] || fail "$mode: $(grep -c "^FORM " <<<"$out") forms answered: $out"
	grep -q "^FORM 0: 451$" <<<"$out" || fail "$mode: RCPT<TAB>TO: was not asked and greylisted: $out"
	grep -q "^FORM 5: 451$" <<<"$out" || fail "$mode: <CR>RCPT TO: was not asked and greylisted: $out"
	grep -q "^FORM 3: 501$" <<<"$out" || fail "$mode: the nested path was not refused: $out"
	grep -q "^FORM 12: 502$" <<<"$out" || fail "$mode: XCLIENT was not refused: $out"
	grep -q "^FORM long: 500$" <<<"$out" || fail "$mode: the long line was not refused: $out"
	grep -q "^DATA: 250$" <<<"$out" || fail "$mode: postmaster@'s message was not taken: $out"
	grep -q "^MAIL tab: 250$" <<<"$out" || fail "$mode: MAIL<TAB>FROM: was not passed on as MAIL: $out"
	wait_for 20 delivered "$subject" ||
		fail "$mode: postmaster@'s copy was not delivered once: $(grep -ciE "^Subject: $subject" "$mbox") copies"
	sleep 1
	[ "$(victims)" = 0 ] && [ "$(victims_logged)" = 0 ] ||
		fail "$mode: the MTA took a victim: $(grep "to=<victim" "$mxlog" | head -3)"
	# greygated decided the recipients that reached it
	[ "$(decided victim1)" -gt "$victim1_before" ] ||
		fail "$mode: victim1's RCPT<TAB>TO: was not decided by greygated"
	[ "$(nsx gw nft list set inet greygate pass4 | grep -c '203.0.113')" = 0 ] ||
		fail "$mode: the client's network was passed"
	# the nested path as the first recipient: refused at the tarpit
	out=$(attack first 203.0.113.10 203.0.113.1)
	grep -q "^FIRST: 501$" <<<"$out" || fail "$mode: the first RCPT's nested path: $out"
	[ "$(victims)" = 0 ] || fail "$mode: the first nested path delivered"
	echo "ok: $mode: 21 forms past postmaster@ refused or greylisted, postmaster@ delivered on the first attempt, no victim delivered"
}

# The child's CPU (user + system ticks) while a client that left mid-body
# is gone: a gate that watched it spun at 100% of a core (~100 a second).
child_ticks() {
	awk '{print $14 + $15}' "/proc/$(ggctl status --json | jq .child.pid)/stat"
}
check_gone() { # HOW
	local t0 t1 out
	out=$(attack gone 203.0.113.10 203.0.113.1 "$1") || fail "gone $1: $out"
	grep -q "^GONE: DATA 354$" <<<"$out" || fail "gone $1: $out"
	sleep 0.5
	t0=$(child_ticks)
	sleep 3
	t1=$(child_ticks)
	[ $(( t1 - t0 )) -lt 60 ] || fail "gone $1: the child used $(( t1 - t0 )) ticks in 3 s"
	! grep -q "^Subject: never$" "$mbox" || fail "gone $1: the half message was delivered"
	echo "ok: a client that $([ "$1" = half ] && echo half-closes || echo resets) mid-body: $(( t1 - t0 )) ticks of the child's CPU in 3 s, nothing delivered"
}

start_mode proxy-v2 "address = 127.0.0.1:10025"
check_mode proxy-v2
check_gone half
check_gone reset
start_mode xclient "address = 203.0.113.1:25
source = 203.0.113.2"
check_mode xclient
start_mode transparent "address = 203.0.113.1:25"
check_mode transparent
check_gone reset

# Exim behind the transparent hand-off, on the same address
postfix_stop mx
wait_for 10 eval '! nsx gw bash -c "exec 3<>/dev/tcp/203.0.113.1/25" 2>/dev/null' ||
	fail "mx still listens on 203.0.113.1:25"
exim_new ex gw 203.0.113.1
exim_start ex
mbox=$(exim_mailbox ex)
mxlog=$(exim_log ex)
start_mode transparent "address = 203.0.113.1:25"
check_mode exim-transparent
check_gone reset
