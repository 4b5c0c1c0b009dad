#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The transparent hand-off, all real parts: receiving Postfixes that were
# not reconfigured at all (no PROXY listener, no XCLIENT) get the passing
# attempt from the client's own address. One greygated on 'gw' in front
# of two MTAs: Postfix on the gateway itself (203.0.113.1, 2001:db8:1::1)
# and Postfix on 'mxb' behind it (198.51.100.2, 2001:db8:2::2), the
# gateway routing for it; each hand-off goes where its client was going.
# Asserted: a sending Postfix over IPv4 and IPv6 and through the router,
# deferred by greylisting, then delivered once by the retry that passed,
# the Received header naming the sender's real address, and the hand-off
# connection never sent to the tarpit again (greygate's own nat rules see
# the client's connections only) nor counted as a fast-path session by
# the sensor that hears it; a STARTTLS client delivered on its
# first attempt in TLS with the MTA's own certificate; greygated killed
# with -9 during a joined hand-off leaves its policy rule behind, the
# next start removes it (one rule, never two), a fast-path session to the
# MTA goes on through both, and an orderly stop leaves nothing.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/handoff.sh"

netns_init
netns_sender_gw
netns_host client
netns_link client 2001:db8:5::10/64 gw 2001:db8:5::1/64 \
	2001:db8:6::10/64 2001:db8:6::1/64 2001:db8:7::10/64 2001:db8:7::1/64
netns_host mxb
netns_link gw 198.51.100.1/24 mxb 198.51.100.2/24 2001:db8:2::1/64 2001:db8:2::2/64
nsx gw sysctl -qw net.ipv4.ip_forward=1
nsx gw sysctl -qw net.ipv6.conf.all.forwarding=1
nsx sender ip route add 198.51.100.0/24 via 203.0.113.1
nsx client ip -6 route add 2001:db8:2::/64 via 2001:db8:5::1
nsx mxb ip route add default via 198.51.100.1
nsx mxb ip -6 route add default via 2001:db8:2::1
session() { # HOST MODE ARGS...
	local host=$1
	shift
	nsx "$host" python3 "$here/../lib/smtp-session.py" "$@"
}

postfix_tls_cert
# Both MTAs as Debian installs them, plus TLS: nothing for greygate.
postfix_new mx gw "203.0.113.1, [2001:db8:1::1], [2001:db8:5::1]" "$POSTFIX_TLS_SMTPD"
postfix_start mx
postfix_new mxb mxb "198.51.100.2, [2001:db8:2::2]"
postfix_start mxb
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_wait_listening mxb 198.51.100.2 || fail "mxb is not listening"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = none"
outlog=$(postfix_log out)

mkdir -p "$NETNS_TMP/store"
greygated_conf "[greylist]
delay = 4
tls_pass = yes
[handoff]
mode = transparent
address = 203.0.113.1:25
timeout = 5s"
nsx gw "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/greygate.conf" --check-config 2>/dev/null |
	grep "mode = transparent needs CAP_NET_ADMIN (root), policy routing by mark and port, IP_TRANSPARENT" >/dev/null ||
	fail "--check-config does not say what transparent mode needs"
# An admin's own rule of the same mark and table (issue 29 R8: it was
# deleted, and logged as a previous greygated's leftover): greygated
# refuses to start and leaves it be.
nsx gw ip rule add fwmark 0x4767 lookup 4767 priority 100
rc=0
out=$(nsx gw timeout 20 "$GREYGATE_BUILD/daemon/greygated" --foreground --config "$NETNS_TMP/greygate.conf" 2>&1) || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "greygated started over an admin's rule of its mark and table (status $rc): $out"
grep -F "another rule (not greygate's: ip rule show) routes by this mark or looks up this table" <<<"$out" >/dev/null ||
	fail "the refusal does not say why: $out"
[ "$(nsx gw ip rule show | grep -c "fwmark 0x4767 lookup 4767")" = 1 ] || fail "the admin's rule was touched"
nsx gw ip rule del fwmark 0x4767 lookup 4767 priority 100
echo "ok: an admin's rule of the same mark and table: greygated refuses to start and leaves it be"
greygated_start
log=$GG_LOG
rules() { nsx gw ip $1 rule show | grep -c "fwmark 0x4767 ipproto tcp sport 25 lookup 4767" || true; }
grep "hand-off: transparent: .* lookup 4767 (IPv4 and IPv6)" "$log" >/dev/null || { cat "$log"; fail "no transparent start line"; }
[ "$(rules -4)" = 1 ] && [ "$(rules -6)" = 1 ] || fail "policy rules: v4 $(rules -4), v6 $(rules -6), not one each"
wait_for 10 grep "hand-off: the MTA at 203.0.113.1:25 offers STARTTLS: yes" "$log" >/dev/null ||
	{ cat "$log"; fail "the MTA's EHLO was not learnt"; }

greylisted() { nsx gw nft list counter inet greygate greylisted | awk '/packets/{print $2}'; }
# passed_and_handed WHAT MTA SUBJECT CLIENT RECEIVED: sent_by_the_pass, and
# the hand-off's own connection never met the nat rules: one redirected
# connection per attempt of the sender's.
passed_and_handed() {
	sent_by_the_pass "$@"
	[ "$(( $(greylisted) - greylisted0 ))" = $(( PASS_DEFERRALS + 1 )) ] ||
		fail "$1: $(( $(greylisted) - greylisted0 )) connections redirected for $PASS_DEFERRALS deferrals and the pass"
	echo "ok: $1: $PASS_DEFERRALS greylisting 451(s), delivered once by the retry that passed, Received names $4, $(( PASS_DEFERRALS + 1 )) redirected connection(s)"
}

# --- the MTA on the gateway, IPv4 and IPv6 ---
greylisted0=$(greylisted)
out_send "v4-$NETNS_RUN"
passed_and_handed "IPv4, MTA on the gateway" mx "v4-$NETNS_RUN" 203.0.113.10 203.0.113.10
grep "connect from unknown\[203.0.113.10\]" "$(postfix_log mx)" >/dev/null || fail "the MTA did not see the client's address"
# (greygated's own connections, the probe's, ask EHLO only.)
! grep "disconnect from unknown\[203.0.113.1\] .*mail=" "$(postfix_log mx)" >/dev/null ||
	fail "the MTA got mail from greygate's address, not the client's"

greylisted0=$(greylisted)
out_reconfigure "relayhost = [ipv6:2001:db8:1::1]:25" "smtp_address_preference = ipv6"
out_send "v6-$NETNS_RUN"
passed_and_handed "IPv6, MTA on the gateway" mx "v6-$NETNS_RUN" 2001:db8:1::10 IPv6:2001:db8:1::10

# --- the MTA behind the router ---
ggctl forget 203.0.113.10 >/dev/null
greylisted0=$(greylisted)
out_reconfigure "relayhost = [198.51.100.2]:25" "smtp_address_preference = ipv4"
out_send "behind-$NETNS_RUN"
passed_and_handed "IPv4, MTA behind the router" mxb "behind-$NETNS_RUN" 203.0.113.10 203.0.113.10
grep "connect from unknown\[203.0.113.10\]" "$(postfix_log mxb)" >/dev/null || fail "mxb did not see the client's address"

session client try 2001:db8:6::10 2001:db8:2::2 | grep "^RCPT 451" >/dev/null || fail "router v6: not greylisted first"
wait_may_pass 2001:db8:6::/64
out=$(session client deliver 2001:db8:6::10 2001:db8:2::2 "behind6-$NETNS_RUN") || { echo "$out"; tail "$log"; fail "router v6"; }
wait_for 10 mail_delivered mxb "behind6-$NETNS_RUN" || fail "router v6: not delivered"
mail_received mxb "behind6-$NETNS_RUN" | grep "(unknown \[IPv6:2001:db8:6::10\])" >/dev/null ||
	fail "router v6: the Received header does not name the client: $(mail_received mxb "behind6-$NETNS_RUN")"
echo "ok: IPv6, MTA behind the router: the passing session handed over and delivered, Received names 2001:db8:6::10"

# The hand-off's connections left from the clients' own addresses, to port
# 25, heard by the sensor (interface any): none was a fast-path session
# (issue 32: 18 of 100 runs counted one; the child's figures come up each
# second, so two are let go by before the count is read).
sleep 2
fp=$(ggctl status --json | jq .decisions.fastpath_sessions)
[ "$fp" = 0 ] || fail "greygate's own hand-off connections were counted as $fp fast-path session(s)"
echo "ok: 4 hand-offs, 0 fast-path sessions counted"

# --- STARTTLS: delivered on the first attempt, TLS end to end ---
ggctl forget 2001:db8:1::10 >/dev/null
out_reconfigure "relayhost = [ipv6:2001:db8:1::1]:25" "smtp_address_preference = ipv6" \
	"smtp_tls_security_level = may" "smtp_tls_loglevel = 1"
out_send "tls-$NETNS_RUN"
wait_for 30 mail_delivered mx "tls-$NETNS_RUN" || { tail -n 30 "$log" "$outlog"; fail "TLS: not delivered"; }
! grep -q "status=deferred" "$outlog" || fail "TLS: deferred: $(grep status= "$outlog")"
grep -q "action=pass, reason=starttls, client=2001:db8:1::10" "$log" || fail "TLS: no STARTTLS pass"
grep -q "TLS connection established from unknown\[2001:db8:1::10\]" "$(postfix_log mx)" ||
	fail "TLS: the MTA did not do TLS with the client"
mail_received mx "tls-$NETNS_RUN" | grep "with ESMTPS id" >/dev/null || fail "TLS: the Received header does not say ESMTPS"
nsx client swaks --server 2001:db8:5::1 --local-interface 2001:db8:7::10 --tls --quit-after TLS \
	--tls-get-peer-cert "$NETNS_TMP/peer.pem" >"$NETNS_TMP/swaks-tls.log" 2>&1 ||
	{ cat "$NETNS_TMP/swaks-tls.log"; fail "TLS: swaks"; }
cmp -s <(openssl x509 -in "$NETNS_TMP/peer.pem" -outform der) <(openssl x509 -in "$tls/cert.pem" -outform der) ||
	fail "TLS: the certificate the client saw is not the MTA's"
echo "ok: STARTTLS: delivered on the first attempt in TLS; the client saw the MTA's own certificate"

# --- kill -9 during a joined hand-off; the fast path goes on ---
session client try 2001:db8:5::10 2001:db8:5::1 | grep "^RCPT 451" >/dev/null || fail "kill: not greylisted first"
wait_may_pass 2001:db8:5::/64
# 203.0.113.10 has passed: its session goes straight to the MTA.
session sender hold 203.0.113.10 203.0.113.1 14 "fast-$NETNS_RUN" >"$NETNS_TMP/fast.out" 2>&1 &
fast=$!
session client hold 2001:db8:5::10 2001:db8:5::1 30 "joined-$NETNS_RUN" >"$NETNS_TMP/joined.out" 2>&1 &
wait_for 10 grep "^RCPT 250" "$NETNS_TMP/joined.out" >/dev/null || { cat "$NETNS_TMP/joined.out"; fail "kill: the hand-off was not joined"; }
wait_for 5 grep "^NOOP 250" "$NETNS_TMP/fast.out" >/dev/null || { cat "$NETNS_TMP/fast.out"; fail "kill: no fast-path session"; }
kill -9 "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not die"
[ "$(rules -4)" = 1 ] || fail "kill -9: the policy rule is not there to be found ($(rules -4))"
sleep 2
greygated_start
grep "hand-off: removed 2 policy rules (fwmark 0x4767, table 4767) a greygated that did not stop cleanly left" "$log" >/dev/null ||
	{ tail "$log"; fail "the stale rules were not said to be removed"; }
[ "$(rules -4)" = 1 ] && [ "$(rules -6)" = 1 ] || fail "after the restart: v4 $(rules -4), v6 $(rules -6) policy rules, not one each"
wait "$fast" || { cat "$NETNS_TMP/fast.out"; fail "the fast-path session broke"; }
wait_for 10 mail_delivered mx "fast-$NETNS_RUN" || fail "the fast-path session's message is not there"
out=$(session sender deliver 203.0.113.10 203.0.113.1 "after-$NETNS_RUN") || { echo "$out"; fail "fast path after the restart"; }
wait_for 10 mail_delivered mx "after-$NETNS_RUN" || fail "after the restart: not delivered"
echo "ok: kill -9 during a joined hand-off: the next start removed the stale rules (one each now), the fast path went on throughout"

# --- an orderly stop leaves no rule and no route ---
kill "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
[ "$(rules -4)" = 0 ] && [ "$(rules -6)" = 0 ] || fail "after a stop: v4 $(rules -4), v6 $(rules -6) policy rules"
[ -z "$(nsx gw ip route show table 4767)" ] && [ -z "$(nsx gw ip -6 route show table 4767)" ] ||
	fail "after a stop: routes left in table 4767"
echo "ok: an orderly stop removes the policy rules and the routes"
