#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate on a gateway that forwards to an MTA behind it: 'sender' ->
# 'gw' (routing, greygated) -> 'mx' (Postfix). The sender relays to the
# MTA's own address; the gateway's table sends the first attempts to its
# local tarpit and, once the sender's /24 has passed, forwards it on.
# greygated watches only the outside interface, so port 25 arriving on the
# inside one is left alone. Then the hand-off through the router, over
# IPv6: the MTA behind has a PROXY listener on its own address, greygated
# hands the passing attempt to it there, and the gateway's table keeps
# everyone else from reaching that listener.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
netns_host mx
netns_link gw 198.51.100.1/24 mx 198.51.100.2/24 2001:db8:2::1/64 2001:db8:2::2/64
nsx gw sysctl -qw net.ipv4.ip_forward=1
nsx gw sysctl -qw net.ipv6.conf.all.forwarding=1
nsx sender ip route add 198.51.100.0/24 via 203.0.113.1
nsx sender ip -6 route add 2001:db8:2::/64 via 2001:db8:1::1
nsx mx ip route add 203.0.113.0/24 via 198.51.100.1
nsx mx ip -6 route add 2001:db8:1::/64 via 2001:db8:2::1

postfix_new mx mx "198.51.100.2, [2001:db8:2::2]"
postfix_proxy_listener mx "[2001:db8:2::2]:10025"
postfix_start mx
postfix_wait_listening mx 198.51.100.2 || fail "mx is not listening"
postfix_relay out sender 198.51.100.2

outside=$(netns_dev gw sender)
greygated_conf "interface = $outside
[greylist]
delay = 5"
greygated_start
log=$GG_LOG

printf 'Subject: fwd-%s\n\nhello\n' "$NETNS_RUN" |
	nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" -f alice@sender.test bob@example.org
mbox=$(postfix_mailbox mx)
wait_for 60 grep -qs "^Subject: fwd-$NETNS_RUN\$" "$mbox" || {
	cat "$log"; tail -n 20 "$(postfix_log out)"; fail "message not delivered through the gateway"
}
grep -q "said: 451 4.7.1 <bob@example.org>: Greylisted" "$(postfix_log out)" ||
	fail "the first attempt did not meet the tarpit"
grep -q "action=pass, reason=retry-passed, client=203.0.113.10, key=203.0.113.0/24" "$log" ||
	fail "no pass logged"
grep -q "^Received: from .*\[203.0.113.10\]" "$mbox" || fail "mx did not see the real client address"
echo "ok: forwarded gateway: tarpitted, passed, delivered to the MTA behind it"

nsx gw nft list chain inet greygate prerouting | grep "iifname != \"$outside\" accept" >/dev/null ||
	fail "no rule leaving other interfaces alone"
out=$(nsx mx swaks --server 198.51.100.1 --quit-after connect 2>&1 || true)
if echo "$out" | grep "^<-  220 gw.test" >/dev/null; then fail "port 25 from the inside met the tarpit"; fi
# (Over IPv6: the sender's IPv4 /24 has passed by now.)
out=$(nsx sender swaks --server 2001:db8:1::1 --quit-after connect 2>&1 || true)
echo "$out" | grep "^<-  220 gw.test" >/dev/null || fail "port 25 from the outside did not meet the tarpit: $out"
echo "ok: only the interface the sensor watches is greylisted"

# --- the hand-off through the router, over IPv6 ---
kill "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
greygated_conf "interface = $outside
[greylist]
delay = 5
[handoff]
mode = proxy-v2
address = [2001:db8:2::2]:10025"
greygated_start
outlog=$(postfix_log out)
postconf -c "$(postfix_dir out)" -e "relayhost = [ipv6:2001:db8:2::2]:25" "smtp_address_preference = ipv6"
nsx sender postfix -c "$(postfix_dir out)" reload >/dev/null 2>&1
: >"$outlog"
printf 'Subject: fwd6-%s\n\nhello\n' "$NETNS_RUN" |
	nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" -f alice@sender.test bob@example.org
wait_for 60 grep -qs "^Subject: fwd6-$NETNS_RUN\$" "$mbox" || {
	cat "$GG_LOG"; tail -n 20 "$outlog"; fail "v6: not delivered through the gateway"
}
grep "said: 451 4.7.1 <bob@example.org>: Greylisted" "$outlog" >/dev/null || fail "v6: the first attempt did not meet the tarpit"
! grep "Passed greylisting" "$outlog" >/dev/null || fail "v6: the passing attempt was answered 451"
grep "action=pass, reason=retry-passed, client=2001:db8:1::10" "$GG_LOG" >/dev/null || fail "v6: no pass"
grep "^Received: from out.test.example (unknown \[IPv6:2001:db8:1::10\])" "$mbox" >/dev/null ||
	fail "v6: the MTA did not see the real client: $(grep "^Received" "$mbox")"
echo "ok: router, IPv6: the passing attempt handed to the MTA behind, delivered once, the real client named"
! nsx sender timeout 3 bash -c "exec 3<>/dev/tcp/2001:db8:2::2/10025" 2>/dev/null ||
	fail "the sender reached the MTA's PROXY listener through the gateway"
echo "ok: the MTA's PROXY listener behind the gateway is out of the sender's reach"
