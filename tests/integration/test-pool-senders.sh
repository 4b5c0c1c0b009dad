#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Pool senders keyed by their SPF domain ([signals] pool_spf, issue 31),
# with real parts: nsd on 'dns' serving sender.test, whose SPF authorises
# a pool of servers in three /64s (forward-confirmed names of its own,
# out-N.sender.test: pooled, as a client fcrdns+spf would trust; trust =
# no here, so each is greylisted); greygated on 'gw' with the hand-off to a real Postfix; a
# sending Postfix on 'sender' whose source address moves between the
# pool's networks. Asserted: greylisted from the first network, the
# message is delivered by its first retry, from the second network (no
# other deferral), a second message from the third network on its first
# attempt; each pass is the sending network's, the triplet the pool's
# ("spf" in list grey). Not pooled, each retry from another network is
# new: a sender without SPF, and anyone with pool_spf = no (a reload);
# then a message whose retries come from three networks is delivered,
# and its delay in the pass's line and the report is the sending
# Postfix's own (from its first attempt, not from the first sight of the
# network that passed: issue 32).
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
# The pool's networks, 2001:db8:b1::/64 to b7, on the sender's link.
for n in 1 2 3 4 5 6 7 8 9 a; do
	netns_add_addr "$(netns_ns sender)" "$(netns_dev sender gw)" "2001:db8:b$n::10/64"
	netns_add_addr "$(netns_ns gw)" "$(netns_dev gw sender)" "2001:db8:b$n::1/64"
done

mkdir -p "$NETNS_TMP/zones"
cat >"$NETNS_TMP/zones/sender.test.zone" <<'Z'
$TTL 300
@ 3600 IN SOA ns.sender.test. admin.sender.test. 1 3600 600 86400 60
@ IN NS ns.sender.test.
@ IN TXT "v=spf1 ip6:2001:db8:b0::/44 -all"
@ IN MX 10 mx.sender.test.
ns IN A 198.51.100.53
mx IN AAAA 2001:db8:b0::25
Z
# the pool's names: out-N.sender.test, forward-confirmed (issue 56: a
# client is pooled only when fcrdns+spf would trust it)
for n in 1 2 3 4 5 6 7 8 9 a; do echo "out-$n IN AAAA 2001:db8:b$n::10"; done \
	>>"$NETNS_TMP/zones/sender.test.zone"
{
	printf '$TTL 300\n@ 3600 IN SOA ns.sender.test. admin.sender.test. 1 3600 600 86400 60\n@ IN NS ns.sender.test.\n'
	for n in 1 2 3 4 5 6 7 8 9 a; do
		echo "0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.$n IN PTR out-$n.sender.test."
	done
} >"$NETNS_TMP/zones/b.0.0.8.b.d.0.1.0.0.2.ip6.arpa.zone"
nsd_start dns 198.51.100.53 sender.test b.0.0.8.b.d.0.1.0.0.2.ip6.arpa

# The MTA behind the gateway, with a PROXY v2 listener for the hand-off;
# the sending Postfix retries every 10 s, past the 3 s delay: its first
# retry is one that may pass.
postfix_new mx gw "203.0.113.1, [2001:db8:1::1]"
postfix_proxy_listener mx
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_relay out sender "ipv6:2001:db8:1::1" "smtp_tls_security_level = none
smtp_address_preference = ipv6
smtp_bind_address6 = 2001:db8:b1::10
queue_run_delay = 10s
minimal_backoff_time = 10s
maximal_backoff_time = 10s"

greygated_conf "[greylist]
delay = 3s
[handoff]
mode = proxy-v2
address = 127.0.0.1:10025
[signals]
lookups = yes
dns_servers = 198.51.100.53
rdns_patterns = $(realpath "$here/../../etc/dynamic-rdns")
suspicious_delay = 0
# (pooling counts where trust does not pass at once)
trust = no
# (pool_spf = yes: the default)"
greygated_start
logged() { grep -F -- "$1" "$GG_LOG" >/dev/null; }
outlog=$(postfix_log out)

# --- from the first network: greylisted, the triplet the pool's ---
out_send "pool-1"
wait_for 30 grep -q "status=deferred.*Greylisted" "$outlog" ||
	{ tail -n 20 "$GG_LOG" "$outlog"; fail "pool-1 was not greylisted"; }
line=$(grep -F "action=greylist, reason=new, client=2001:db8:b1::10," "$GG_LOG") ||
	fail "no greylisting of 2001:db8:b1::10: $(tail -n 5 "$GG_LOG")"
[[ "$line" == *"signals=fcrdns:confirmed:out-1.sender.test;rdns:plain;spf:pass:sender.test;pooled" ]] ||
	fail "the line does not say pooled: $line"
ggctl list grey --json | jq -e 'any(.[]; .client == "spf" and .sender == "alice@sender.test" and .recipient == "bob@example.org")' >/dev/null ||
	fail "list grey: $(ggctl list grey)"
echo "ok: greylisted from 2001:db8:b1::/64, its triplet keyed by the pool (spf), the line says pooled"

# --- its first retry comes from the second network: delivered ---
out_reconfigure "smtp_bind_address6 = 2001:db8:b2::10"
wait_for 60 mail_delivered mx "pool-1" || { tail -n 20 "$GG_LOG" "$outlog"; fail "pool-1 was not delivered"; }
! grep -q "status=deferred" "$outlog" || fail "the retry from b2 was deferred: $(grep status= "$outlog")"
out_sent_once "pool-1"
logged "action=pass, reason=retry-passed, client=2001:db8:b2::10, key=2001:db8:b2::/64" ||
	fail "no pass of b2's network: $(grep 2001:db8:b2 "$GG_LOG")"
mail_received mx "pool-1" | grep -F "[IPv6:2001:db8:b2::10]" >/dev/null ||
	fail "the Received header does not name b2: $(mail_received mx pool-1)"
nsx gw nft list set inet greygate pass6 >"$NETNS_TMP/pass6"
grep -F "2001:db8:b2:: timeout" "$NETNS_TMP/pass6" >/dev/null || fail "b2 is not in pass6: $(cat "$NETNS_TMP/pass6")"
! grep -F "2001:db8:b1::" "$NETNS_TMP/pass6" >/dev/null || fail "b1 was passed: $(cat "$NETNS_TMP/pass6")"
echo "ok: delivered by its first retry, from 2001:db8:b2::/64 (one deferral in all); b2's network passed, not b1's"

# --- a second message from the third network: its first attempt ---
out_reconfigure "smtp_bind_address6 = 2001:db8:b3::10"
out_send "pool-2"
wait_for 30 mail_delivered mx "pool-2" || { tail -n 20 "$GG_LOG" "$outlog"; fail "pool-2 was not delivered"; }
! grep -q "status=deferred" "$outlog" || fail "pool-2 was deferred: $(grep status= "$outlog")"
logged "action=pass, reason=retry-passed, client=2001:db8:b3::10, key=2001:db8:b3::/64" ||
	fail "no pass of b3's network: $(grep 2001:db8:b3 "$GG_LOG")"
echo "ok: a second message from 2001:db8:b3::/64 delivered on its first attempt (the pool's triplet had waited)"

try() { # SOURCE SENDER: one attempt at the tarpit for bob@example.org;
	# its RCPT reply
	SMTP_SENDER=$2 nsx sender python3 "$here/../lib/smtp-session.py" try "$1" 2001:db8:1::1 2>&1 | grep '^RCPT' || true
}

# --- greygatectl release names a pooled triplet by its client ---
reply=$(try 2001:db8:b7::10 erin@sender.test)
[[ "$reply" == "RCPT 451 "*Greylisted* ]] || fail "erin, from b7: $reply"
out=$(ggctl release 2001:db8:b7::10 --from erin@sender.test --to bob@example.org) ||
	fail "the pooled triplet was not released: $out; $(grep release "$GG_LOG")"
[[ "$out" == "released 2001:db8:b7::10 (key 2001:db8:b7::/64): it passes now"* ]] || fail "release said: $out"
logged "action=pass, reason=released, key=2001:db8:b7::/64, sender=erin@sender.test, recipient=bob@example.org" ||
	fail "the release was not logged: $(grep release "$GG_LOG")"
echo "ok: greygatectl release CLIENT --from --to finds the pool's triplet (the sender was pooled)"

# --- not pooled: another network is another client ---
not_pooled() { # WHAT SENDER FROM AGAIN_FROM
	local reply line
	reply=$(try "2001:db8:$3::10" "$2")
	[[ "$reply" == "RCPT 451 "*Greylisted* ]] || fail "$1, from $3: $reply"
	wait_may_pass "2001:db8:$3::/64"
	reply=$(try "2001:db8:$4::10" "$2")
	[[ "$reply" == "RCPT 451 "*Greylisted* ]] || fail "$1, again from $4: $reply"
	wait_for 5 eval "grep -F 'action=greylist, reason=new, client=2001:db8:$4::10,' '$GG_LOG' | grep -qF 'sender=$2'" ||
		fail "$1: the attempt from $4 was not new: $(grep "2001:db8:$4::10" "$GG_LOG")"
	line=$(grep -F "action=greylist, reason=new, client=2001:db8:$4::10," "$GG_LOG" | grep -F "sender=$2")
	[[ "$line" != *pooled* ]] || fail "$1: pooled: $line"
}
not_pooled "no SPF" carol@nospf.test b4 b5
# (the pool's triplet of alice, passed above, is not this one's key)
echo 'pool_spf = no' >>"$NETNS_TMP/greygate.conf"
ggctl reload >/dev/null || fail "reload failed"
not_pooled "pool_spf = no" alice@sender.test b5 b6
echo "ok: not pooled (no SPF; pool_spf = no after a reload): the retry from another network is greylisted as new"

# --- not pooled, retried from b8, b9, ba, then b9 again: delivered by
# b9's triplet, its delay the message's ---
deferred_from() { # NETWORK: the next attempt comes from it, and is deferred
	out_reconfigure "smtp_bind_address6 = 2001:db8:$1::10"
	wait_for 30 grep -q "status=deferred.*Greylisted" "$outlog" ||
		{ tail -n 20 "$GG_LOG" "$outlog"; fail "three networks: not greylisted from $1"; }
}
out_reconfigure "smtp_bind_address6 = 2001:db8:b8::10"
# (a sender of its own: alice's earlier attempts from b5 and b6 above
# would be this message's first, as greylisting keys messages)
printf 'Subject: three-nets\n\nhello\n' |
	nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" -f dave@sender.test bob@example.org
wait_for 30 grep -q "status=deferred.*Greylisted" "$outlog" ||
	{ tail -n 20 "$GG_LOG" "$outlog"; fail "three networks: not greylisted from b8"; }
deferred_from b9
deferred_from ba
out_reconfigure "smtp_bind_address6 = 2001:db8:b9::10"
wait_for 30 mail_delivered mx "three-nets" || { tail -n 20 "$GG_LOG" "$outlog"; fail "three networks: not delivered"; }
sent=$(grep "status=sent (250 2.0.0 Ok: queued" "$outlog") || fail "three networks: no sent line: $(grep status= "$outlog")"
postfix_delay=$(sed -E 's/.* delay=([0-9.]+),.*/\1/' <<<"$sent")
line=$(grep -F "action=pass, reason=retry-passed, client=2001:db8:b9::10," "$GG_LOG" | tail -n 1) ||
	fail "three networks: no pass of b9"
gg_delay=$(sed -E 's/.* delay=([0-9]+),.*/\1/' <<<"$line")
# (b9's own triplet is younger by a retry, 10 s: counted from it, the
# two would be that far apart)
awk -v g="$gg_delay" -v p="$postfix_delay" 'BEGIN {exit !(g - p <= 2 && p - g <= 2)}' ||
	fail "three networks: greygate says delay=$gg_delay, the sender's log delay=$postfix_delay ($line)"
[ "$(ggctl report --json | jq .delay.max)" = "$gg_delay" ] ||
	fail "three networks: the report's longest delay is $(ggctl report --json | jq -c .delay), not $gg_delay"
echo "ok: a message retried from b8, b9, ba and b9: delivered, its delay ${gg_delay}s in the pass's line and the report, the sender's log says ${postfix_delay}s"
