#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Trust that bots cannot claim (issue 56), with real parts: nsd on 'dns'
# serving the senders' forward and reverse zones, greygated on 'gw' with
# its defaults (trust = fcrdns+spf, the network keys /24) and the
# hand-off to a real Postfix, a sending Postfix and scripted clients on
# 'sender'. Each attack is one DNS record a spammer sets up for nothing,
# and is greylisted, its line saying why:
#   - a host with a PTR name of its own domain, which says v=spf1 +all;
#   - ... which says ip4:128.0.0.0/1 (a net no provider names);
#   - a hosting PTR name, the sender a forged domain whose record
#     includes the hoster's whole /8;
#   - ... a forged domain that names the host narrowly (a domain not the
#     PTR name's: unrelated);
#   - the neighbour of a trusted host (before: its whole /24 passed for
#     35 days), with no PTR;
#   - a DNS list that does not answer (greygated restarted naming one):
#     the provider-style sender is no longer trusted.
# Delivered on the first attempt: a provider-style sender (its customer's
# domain includes the provider's record, the provider's FCrDNS name),
# through a real Postfix, passed alone (its /32 in set trust4, for
# trust_ttl: 1 day);
# an aligned small server (mail.small.test, v=spf1 mx -all). Forgetting
# a trusted address drops its own pass from the store and trust4.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/handoff.sh"
. "$here/../lib/nsd.sh"

netns_init
netns_sender_gw
nsd_host
# (203.0.113.10: netns_sender_gw's own)
for a in 40 41 42 43 50 51 60 77; do
	nsx sender ip addr add 203.0.113.$a/24 dev "$(netns_dev sender gw)"
done

zones=$NETNS_TMP/zones
mkdir -p "$zones"
zone() { # NAME: the zone's head, then its records from stdin
	{
		echo '$TTL 300'
		echo '@ 3600 IN SOA ns.provider.test. admin.provider.test. 1 3600 600 86400 60'
		echo '@ IN NS ns.provider.test.'
		cat
	} >"$zones/$1.zone"
}
# A provider: its servers' names mail-N.provider.test, its outbound net
# in _spf.provider.test; its customer's domain includes it.
zone provider.test <<'Z'
ns IN A 198.51.100.53
_spf IN TXT "v=spf1 ip4:203.0.113.10 ip4:203.0.113.48/28 -all"
mail-10 IN A 203.0.113.10
mail-50 IN A 203.0.113.50
mail-51 IN A 203.0.113.51
Z
zone customer.test <<'Z'
@ IN TXT "v=spf1 include:_spf.provider.test -all"
@ IN MX 10 mx.customer.test.
mx IN A 198.51.100.80
Z
# (203.0.113.10 is the provider's too: the real Postfix sends from it)
zone small.test <<'Z'
@ IN TXT "v=spf1 mx -all"
@ IN MX 10 mail.small.test.
mail IN A 203.0.113.60
Z
# The attacker's own domain and its VPSs; a hoster's; forged senders'.
zone attacker.test <<'Z'
@ IN TXT "v=spf1 +all"
@ IN MX 10 vps.attacker.test.
vps IN A 203.0.113.40
wide IN TXT "v=spf1 ip4:128.0.0.0/1 -all"
wide IN MX 10 vps.attacker.test.
vps2 IN A 203.0.113.41
Z
zone hoster.test <<'Z'
_spf IN TXT "v=spf1 ip4:203.0.0.0/8 -all"
vps7 IN A 203.0.113.42
vps8 IN A 203.0.113.43
Z
zone victim.test <<'Z'
@ IN TXT "v=spf1 include:_spf.hoster.test -all"
@ IN MX 10 mx.victim.test.
mx IN A 198.51.100.81
Z
zone lazy.test <<'Z'
@ IN TXT "v=spf1 ip4:203.0.113.0/24 -all"
@ IN MX 10 mx.lazy.test.
mx IN A 198.51.100.82
Z
zone 113.0.203.in-addr.arpa <<'Z'
10 IN PTR mail-10.provider.test.
40 IN PTR vps.attacker.test.
41 IN PTR vps2.attacker.test.
42 IN PTR vps7.hoster.test.
43 IN PTR vps8.hoster.test.
50 IN PTR mail-50.provider.test.
51 IN PTR mail-51.provider.test.
60 IN PTR mail.small.test.
Z
nsd_start dns 198.51.100.53 provider.test customer.test small.test attacker.test \
	hoster.test victim.test lazy.test 113.0.203.in-addr.arpa

# The MTA behind the gateway, with a PROXY v2 listener for the hand-off;
# the provider's sending Postfix on 'sender', from 203.0.113.10.
postfix_new mx gw "203.0.113.1"
postfix_proxy_listener mx
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = none
smtp_bind_address = 203.0.113.10"

# greygated's defaults but the delay (1 h: no retry passes in the test)
# and its DNS server.
export GG_SIGNALS_DEFAULT=1
greygated_conf "[greylist]
delay = 1h
[handoff]
mode = proxy-v2
address = 127.0.0.1:10025
[signals]
dns_servers = 198.51.100.53
budget = 1s
rdns_patterns = $(realpath "$here/../../etc/dynamic-rdns")"
greygated_start
logged() { grep -F -- "$1" "$GG_LOG" >/dev/null; }
try() { # SOURCE SENDER: one attempt at the tarpit; prints the RCPT reply
	SMTP_SENDER=$2 nsx sender python3 "$here/../lib/smtp-session.py" try "$1" 203.0.113.1 2>&1 || true
}
set_of() { nsx gw nft list set inet greygate "$1" | sed -n '/elements/,$p'; }
# greylisted SOURCE SENDER SIGNALS: its first attempt greylisted (451),
# its line ending with SIGNALS
greylisted() {
	local reply line
	reply=$(try "$1" "$2")
	[[ "$reply" == *"RCPT 451 4.7.1 <"*"Greylisted"* ]] || fail "$1 ($2): $reply"
	wait_for 5 logged "action=greylist, reason=new, client=$1," ||
		fail "$1 was not greylisted: $(grep "client=$1," "$GG_LOG")"
	line=$(grep -F "action=greylist, reason=new, client=$1," "$GG_LOG" | tail -n 1)
	[[ "$line" == *", signals=$3" ]] || fail "$1's line does not end signals=$3: $line"
}

# --- a provider-style sender: delivered on its first attempt, passed
# alone, for a day ---
OUT_FROM=alice@customer.test out_send "provider-1"
wait_for 30 mail_delivered mx "provider-1" ||
	{ tail -n 20 "$GG_LOG" "$(postfix_log out)"; fail "provider-1 was not delivered"; }
! grep -q "status=deferred" "$(postfix_log out)" || fail "the provider's sender was deferred: $(grep status= "$(postfix_log out)")"
logged "action=pass, reason=trusted, client=203.0.113.10, key=203.0.113.10/32, helo=out.test.example, sender=alice@customer.test, recipient=bob@example.org, delay=0, ttl=86400," ||
	fail "no trusted pass of 203.0.113.10 alone: $(grep 203.0.113.10 "$GG_LOG")"
set_of trust4 | grep -Eq "203\.0\.113\.10 timeout 1d" ||
	fail "trust4 does not hold 203.0.113.10 for a day: $(set_of trust4)"
! set_of pass4 | grep -q "203.0.113.0" || fail "its /24 was passed: $(set_of pass4)"
echo "ok: a provider-style sender (its customer's record includes the provider's, the provider's FCrDNS name): delivered on its first attempt, 203.0.113.10 alone in trust4 for 1d"

# --- its next message takes the fast path, and is seen there: the sensor
# hears trust4's clients and the decision finds the address's own pass
# (issue 56: neither did; the report counted no session of theirs) ---
OUT_FROM=alice@customer.test out_send "provider-2"
wait_for 30 mail_delivered mx "provider-2" ||
	{ tail -n 20 "$GG_LOG" "$(postfix_log out)"; fail "provider-2 was not delivered"; }
wait_for 10 eval 'ggctl report --json | jq -e ".funnel.fastpath_sessions >= 1 and .funnel.fastpath_deliveries >= 1" >/dev/null' ||
	fail "the trusted client's fast path went unseen: $(ggctl report --json | jq -c .funnel)"
[ "$(grep -c "client=203.0.113.10," "$GG_LOG")" = 1 ] ||
	fail "its second message met the tarpit: $(grep "client=203.0.113.10," "$GG_LOG")"
echo "ok: its second message on the fast path, heard and counted (a session, a delivery)"

# --- its neighbour, no PTR: greylisted (issue 56: it went to the MTA on
# its first attempt, its /24 passed by the other's trust) ---
greylisted 203.0.113.77 "bot@lazy.test" "fcrdns:no-ptr;spf:pass:lazy.test"
echo "ok: the trusted host's neighbour (no PTR): greylisted on its first attempt"

# --- an aligned small server: trusted ---
reply=$(try 203.0.113.60 "owner@small.test" | grep '^RCPT')
[[ "$reply" == "RCPT 250"* ]] || fail "the aligned small server was not passed at once: $reply"
logged "action=pass, reason=trusted, client=203.0.113.60, key=203.0.113.60/32" ||
	fail "no trusted pass of 203.0.113.60: $(grep 203.0.113.60 "$GG_LOG")"
echo "ok: an aligned small server (mail.small.test, v=spf1 mx -all): passed at once, handed to the MTA"

# --- the attacks, each one DNS record ---
greylisted 203.0.113.40 "bot@attacker.test" \
	"fcrdns:confirmed:vps.attacker.test;rdns:plain;spf:pass:attacker.test;untrusted:spf-all"
greylisted 203.0.113.41 "bot@wide.attacker.test" \
	"fcrdns:confirmed:vps2.attacker.test;rdns:plain;spf:pass:wide.attacker.test;untrusted:spf-wide"
greylisted 203.0.113.42 "ceo@victim.test" \
	"fcrdns:confirmed:vps7.hoster.test;rdns:plain;spf:pass:victim.test;untrusted:spf-wide"
greylisted 203.0.113.43 "news@lazy.test" \
	"fcrdns:confirmed:vps8.hoster.test;rdns:plain;spf:pass:lazy.test;untrusted:unrelated"
! set_of trust4 | grep -Eq "203\.0\.113\.4[0-3]" || fail "an attacker was passed: $(set_of trust4)"
echo "ok: own domain with +all, own domain with ip4:128.0.0.0/1, a forged domain including a hoster's /8, a forged domain naming a hosting host: greylisted, each line saying why"

# --- forgotten: the address's own pass goes from the store and trust4 ---
ggctl list pass | grep -q "^203.0.113.10/32 " || fail "list pass: $(ggctl list pass)"
ggctl forget 203.0.113.10 >/dev/null || fail "forget 203.0.113.10"
! ggctl list pass | grep -q "^203.0.113.10/32 " || fail "forgotten, still in the store: $(ggctl list pass)"
! set_of trust4 | grep -q "203.0.113.10 " || fail "forgotten, still in trust4: $(set_of trust4)"
echo "ok: greygatectl forget 203.0.113.10: its own pass gone from the store and from trust4"

# --- a DNS list that does not answer: no trust (greygated restarted with
# one: dnsbl_sites is read at start) ---
restart() {
	kill "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
	greygated_start
}
echo "dnsbl_sites = silent.test" >>"$NETNS_TMP/greygate.conf"
restart
greylisted 203.0.113.50 "alice@customer.test" \
	"fcrdns:confirmed:mail-50.provider.test;rdns:plain;spf:pass:customer.test;untrusted:lists-silent"
sed -i '/^dnsbl_sites = silent.test$/d' "$NETNS_TMP/greygate.conf"
restart
reply=$(try 203.0.113.51 "alice@customer.test" | grep '^RCPT')
[[ "$reply" == "RCPT 250"* ]] || fail "the provider's server was not trusted once the list was gone: $reply"
echo "ok: with a DNS list that does not answer, the provider-style sender is greylisted (lists-silent); without it, trusted"
