#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate beside a router's own firewall (issue 33): 'sender' -> 'gw'
# (an OpenWrt-like router: fw4's shape of ruleset, input and forward
# dropped from the wan, SMTP port-forwarded from the wan address to the
# MTA behind, masquerade out) -> 'mx' (Postfix). The firewall is loaded
# before greygated starts, as at boot. Asserted: a bot at the router's
# wan address meets the tarpit (451), not the MTA the port forward leads
# to (greygate's redirect must come before any dstnat); the same after
# the firewall is reloaded (its table deleted and made again, as fw4
# does); a real Postfix sender is greylisted, then delivered to the MTA
# through the port forward; a firewall that starts with "flush ruleset"
# (Debian's /etc/nftables.conf) leaves greygate's table whole (the
# kernel refuses to flush or delete a table another socket owns, or to
# flush its chains and sets by name), and
# bots still meet the tarpit; on a router that forwards no port (fw4
# then accepts no redirected connection from the wan), the OpenWrt
# package's fw4 include (packaging/openwrt) lets bots reach the tarpit,
# which without it they cannot; with firewalld's shape of ruleset (its
# own NAT and filter chains at dstnat + 10 and filter + 10, a forward-port
# of SMTP to the MTA), before and after its reload, bots meet the tarpit
# and passed clients reach the MTA through its port forward.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
netns_host mx
netns_link gw 198.51.100.1/24 mx 198.51.100.2/24
nsx gw sysctl -qw net.ipv4.ip_forward=1
nsx mx ip route add default via 198.51.100.1
wan=$(netns_dev gw sender)
lan=$(netns_dev gw mx)

# fw4's shape (OpenWrt 23.05's generated ruleset for its default
# config, abridged to the chains that meet SMTP): zones by interface,
# port redirections accepted by "ct status dnat", the rest of the wan
# rejected; a port forward of SMTP to the MTA; masquerade out the wan.
cat >"$NETNS_TMP/fw4.nft" <<NFT
table inet fw4 {
	chain input {
		type filter hook input priority filter; policy drop;
		iifname "lo" accept comment "!fw4: Accept traffic from loopback"
		ct state established,related accept comment "!fw4: Allow inbound established and related flows"
		iifname "$lan" accept
		iifname "$wan" jump input_wan
	}
	chain input_wan {
		icmp type echo-request accept comment "!fw4: Allow-Ping"
		ct status dnat accept comment "!fw4: Accept port redirections"
		reject with icmpx type port-unreachable
	}
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept comment "!fw4: Allow forwarded established and related flows"
		iifname "$lan" accept
		iifname "$wan" jump forward_wan
	}
	chain forward_wan {
		ct status dnat accept comment "!fw4: Accept port forwards"
		reject with icmpx type port-unreachable
	}
	chain output {
		type filter hook output priority filter; policy accept;
	}
	chain dstnat {
		type nat hook prerouting priority dstnat; policy accept;
		iifname "$wan" jump dstnat_wan
	}
	chain dstnat_wan {
		meta nfproto ipv4 tcp dport 25 dnat ip to 198.51.100.2:25 comment "!fw4: smtp to the mail server"
	}
	chain srcnat {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "$wan" jump srcnat_wan
	}
	chain srcnat_wan {
		meta nfproto ipv4 masquerade comment "!fw4: Masquerade IPv4 wan traffic"
	}
}
NFT
# Debian's /etc/nftables.conf as installed
cat >"$NETNS_TMP/debian.nft" <<'NFT'
flush ruleset
table inet filter {
	chain input {
		type filter hook input priority filter;
	}
	chain forward {
		type filter hook forward priority filter;
	}
	chain output {
		type filter hook output priority filter;
	}
}
NFT
fw4_load() { # as fw4 does: its table deleted if there, then made whole
	nsx gw nft list table inet fw4 >/dev/null 2>&1 && nsx gw nft delete table inet fw4
	nsx gw nft -f "$NETNS_TMP/fw4.nft" || fail "the router's firewall did not load"
}
fw4_load

postfix_new mx mx "198.51.100.2"
postfix_start mx
postfix_wait_listening mx 198.51.100.2 || fail "mx is not listening"
# the port forward works, before greygate
out=$(nsx sender swaks --server 203.0.113.1 --quit-after connect 2>&1 || true)
grep -q "^<-  220 mx.test.example ESMTP" <<<"$out" || fail "the port forward does not reach the MTA: $out"

greygated_conf "interface = $wan
[greylist]
delay = 5"
greygated_start
rcpt_reply() { # SOURCE [TO]: the RCPT's reply at the router's wan address
	SMTP_SENDER=${SMTP_SENDER:-carl@bot.test} nsx sender python3 \
		"$here/../lib/smtp-session.py" try "$1" "${2:-203.0.113.1}" 2>&1 | grep '^RCPT' || true
}
nsx sender ip addr add 203.0.113.66/24 dev "$(netns_dev sender gw)"
reply=$(rcpt_reply 203.0.113.66)
[[ "$reply" == "RCPT 451 "*Greylisted* ]] ||
	fail "a bot at the wan address did not meet the tarpit (the port forward came first?): $reply"
echo "ok: a bot at the router's wan address meets the tarpit, not the port forward's MTA"

fw4_load
reply=$(SMTP_SENDER=dora@bot.test rcpt_reply 203.0.113.66)
[[ "$reply" == "RCPT 451 "*Greylisted* ]] || fail "after the firewall's reload: $reply"
nsx gw nft list table inet greygate >/dev/null || fail "greygate's table is gone after the firewall's reload"
echo "ok: the firewall reloaded (its table deleted and made again): bots still meet the tarpit"

postfix_relay out sender 203.0.113.1
printf 'Subject: fw-%s\n\nhello\n' "$NETNS_RUN" |
	nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" -f alice@sender.test bob@example.org
mbox=$(postfix_mailbox mx)
wait_for 60 grep -qs "^Subject: fw-$NETNS_RUN\$" "$mbox" || {
	tail -n 20 "$GG_LOG" "$(postfix_log out)"; fail "the message was not delivered through the port forward"
}
grep -q "said: 451 4.7.1 <bob@example.org>: Greylisted" "$(postfix_log out)" ||
	fail "the sender's first attempt did not meet the tarpit"
grep -q "action=pass, reason=retry-passed, client=203.0.113.10, key=203.0.113.0/24" "$GG_LOG" ||
	fail "no pass logged"
echo "ok: a real sender greylisted, then delivered to the MTA through the port forward"

# nor may a script flush greygate's table, chain or sets by name: the
# kernel refuses changes to a table its owner's socket holds
for what in "table inet greygate" "chain inet greygate prerouting" "set inet greygate pass4"; do
	! nsx gw nft flush $what 2>/dev/null || fail "nft flush $what was allowed"
done
# (read whole, then searched: grep -q ending early under pipefail would
# fail nft's write)
pass4=$(nsx gw nft list set inet greygate pass4)
grep -q "elements = { 203.0.113.0 " <<<"$pass4" || fail "the passed network left pass4: $pass4"
nsx gw nft -f "$NETNS_TMP/debian.nft" || fail "Debian's nftables.conf did not load"
tables=$(nsx gw nft list tables)
grep -qx "table inet greygate" <<<"$tables" || fail "flush ruleset took greygate's table: $tables"
! grep -q "fw4" <<<"$tables" || fail "flush ruleset left fw4's table: $tables"
# (over IPv6: the sender's IPv4 /24 has passed)
reply=$(SMTP_SENDER=erin@bot.test rcpt_reply 2001:db8:1::10 2001:db8:1::1)
[[ "$reply" == "RCPT 451 "*Greylisted* ]] || fail "after flush ruleset, a bot from another network: $reply"
echo "ok: flushing greygate's table, chain or set by name is refused; a firewall that starts with flush ruleset leaves its table whole; bots still meet the tarpit"

# fw4 on a router without port forwards: its input_wan has no "ct
# status dnat accept", and fw4 includes the files of
# /usr/share/nftables.d/chain-pre/input_wan/ first in that chain.
fw4_include=$(cd "$here/../../packaging/openwrt/greygate/files" && pwd)/fw4-input_wan.nft
fw4_no_forwards() { # [INCLUDE]
	local inc=""
	[ -z "${1:-}" ] || inc="include \"$1\""
	nsx gw nft -f - <<NFT || fail "fw4 without port forwards did not load"
table inet fw4 {
	chain input {
		type filter hook input priority filter; policy drop;
		iifname "lo" accept
		ct state established,related accept
		iifname "$lan" accept
		iifname "$wan" jump input_wan
	}
	chain input_wan {
		$inc
		icmp type echo-request accept
		reject with icmpx type port-unreachable
	}
}
NFT
}
fw4_no_forwards
reply=$(SMTP_SENDER=fred@bot.test rcpt_reply 2001:db8:1::10 2001:db8:1::1)
[[ "$reply" != "RCPT 451 "* ]] ||
	fail "fw4 without port forwards let the redirected bot in by itself: the include would not be needed"
nsx gw nft delete table inet fw4
fw4_no_forwards "$fw4_include"
reply=$(SMTP_SENDER=gina@bot.test rcpt_reply 2001:db8:1::10 2001:db8:1::1)
[[ "$reply" == "RCPT 451 "*Greylisted* ]] ||
	fail "with the OpenWrt package's fw4 include, a bot did not reach the tarpit: $reply"
echo "ok: a router without port forwards: the OpenWrt package's fw4 include lets bots reach the tarpit (refused without it)"
nsx gw nft delete table inet fw4

# firewalld's shape (1.x, nftables backend; abridged to what meets SMTP):
# the public zone on the wan, the lan trusted, a forward-port of SMTP to
# the MTA; "firewall-cmd --reload" deletes its table and makes it again.
cat >"$NETNS_TMP/firewalld.nft" <<NFT
table inet firewalld {
	chain nat_PREROUTING {
		type nat hook prerouting priority dstnat + 10; policy accept;
		iifname "$wan" jump nat_PRE_public
	}
	chain nat_PRE_public {
		meta nfproto ipv4 tcp dport 25 dnat ip to 198.51.100.2:25
	}
	chain nat_POSTROUTING {
		type nat hook postrouting priority srcnat + 10; policy accept;
		oifname "$wan" meta nfproto ipv4 masquerade
	}
	chain filter_INPUT {
		type filter hook input priority filter + 10; policy accept;
		ct state { established, related } accept
		ct status dnat accept
		iifname "lo" accept
		ct state invalid drop
		iifname "$lan" accept
		iifname "$wan" jump filter_IN_public
		reject with icmpx admin-prohibited
	}
	chain filter_IN_public {
		meta l4proto { icmp, ipv6-icmp } accept
		tcp dport 22 accept
		reject with icmpx admin-prohibited
	}
	chain filter_FORWARD {
		type filter hook forward priority filter + 10; policy accept;
		ct state { established, related } accept
		ct status dnat accept
		iifname "lo" accept
		ct state invalid drop
		iifname "$lan" accept
		reject with icmpx admin-prohibited
	}
}
NFT
firewalld_load() {
	nsx gw nft list table inet firewalld >/dev/null 2>&1 && nsx gw nft delete table inet firewalld
	nsx gw nft -f "$NETNS_TMP/firewalld.nft" || fail "firewalld's ruleset did not load"
}
for round in start reload; do
	firewalld_load
	reply=$(SMTP_SENDER=hal-$round@bot.test rcpt_reply 2001:db8:1::10 2001:db8:1::1)
	[[ "$reply" == "RCPT 451 "*Greylisted* ]] ||
		fail "firewalld ($round): a bot did not meet the tarpit: $reply"
	# the sender's /24 passed: straight to the MTA through the forward-port
	out=$(nsx sender swaks --server 203.0.113.1 --quit-after connect 2>&1 || true)
	grep -q "^<-  220 mx.test.example ESMTP" <<<"$out" ||
		fail "firewalld ($round): a passed client did not reach the MTA: $out"
	nsx gw nft list table inet greygate >/dev/null || fail "firewalld ($round) took greygate's table"
done
echo "ok: firewalld's ruleset, loaded and reloaded: bots meet the tarpit, passed clients reach the MTA through its forward-port"
echo "PASS"
