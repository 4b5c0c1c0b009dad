#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygated's resolver (common/resolver.c: c-ares on the loop, a TTL cache
# with negative caching, one question per name in flight) and the FCrDNS
# signal built on it (policy/fcrdns.c) against a real authoritative
# server: nsd on host 'dns' (tests/lib/nsd.sh), serving a forward zone
# and the reverse zones of the test addresses, asked from host 'gw' by
# tests/common/check-resolver.c. It stops nsd's processes to see a
# timeout.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/nsd.sh"

netns_init
netns_host gw
netns_host dns
netns_link dns 198.51.100.53/24 gw 198.51.100.1/24

zones=$NETNS_TMP/zones
mkdir -p "$zones"
soa='@ 3600 IN SOA ns.mail.test. admin.mail.test. 1 3600 600 86400 2'
{
	echo '$TTL 300'
	echo "$soa"
	echo '@ IN NS ns.mail.test.'
	echo 'ns IN A 198.51.100.53'
	echo '@ IN MX 10 mx1.mail.test.'
	echo 'mx1 IN A 198.51.100.25'
	echo 'mx1 IN AAAA 2001:db8:25::25'
	echo 'mx2 IN A 198.51.100.26'
	echo 'mx3 IN A 198.51.100.27'
	echo 'mx4 IN A 198.51.100.28'
	echo 'short 2 IN A 198.51.100.29'
	echo 'liar IN A 198.51.100.31'
	echo 'mx5 IN A 198.51.100.33'
	# a TXT of 600 bytes in three strings (past 512: EDNS or TCP)
	printf 'long IN TXT "v=spf1 %s" "%s" "%s"\n' "$(printf 'a%.0s' $(seq 193))" \
		"$(printf 'b%.0s' $(seq 200))" "$(printf 'c%.0s' $(seq 200))"
	for i in $(seq 1 40); do echo "many IN A 198.51.100.$((100 + i))"; done
	# SPF (RFC 7208), one domain a case (tests/common/check-resolver.c)
	echo 'helo1 IN A 198.51.100.25'
	echo 'helo1 IN TXT "v=spf1 a -all"'
	echo 'spf-ip IN TXT "v=spf1 ip4:198.51.100.0/24 ip6:2001:db8:25::/48 -all"'
	echo 'spf-a IN TXT "v=spf1 a:mx1.mail.test/30 -all"'
	echo 'spf-mx IN MX 10 mx1.mail.test.'
	echo 'spf-mx IN TXT "v=spf1 mx ~all"'
	echo 'spf-inc IN TXT "v=spf1 include:spf-ip.mail.test ?all"'
	echo 'spf-redir IN TXT "v=spf1 redirect=spf-ip.mail.test"'
	echo 'spf-redir-none IN TXT "v=spf1 redirect=nospf.mail.test"'
	echo 'spf-loop1 IN TXT "v=spf1 include:spf-loop2.mail.test -all"'
	echo 'spf-loop2 IN TXT "v=spf1 include:spf-loop1.mail.test -all"'
	echo 'spf-many IN TXT "v=spf1 a a a a a a a a a a a -all"'
	echo 'spf-many IN A 198.51.100.99'
	echo 'spf-void IN TXT "v=spf1 a:nx1.mail.test a:nx2.mail.test a:nx3.mail.test -all"'
	echo 'spf-two IN TXT "v=spf1 -all"'
	echo 'spf-two IN TXT "v=spf1 +all"'
	echo 'spf-two IN TXT "not spf"'
	echo 'spf-bad IN TXT "v=spf1 foo -all"'
	echo 'nospf IN A 198.51.100.98'
	echo 'spf-exists IN TXT "v=spf1 exists:%{ir}.ok.mail.test -all"'
	echo '25.100.51.198.ok IN A 127.0.0.2'
	echo 'spf-ptr IN TXT "v=spf1 ptr:mail.test -all"'
	echo 'spf-macro IN TXT "v=spf1 a:%{l}.mail.test -all"'
	echo 'spf-fresh IN TXT "v=spf1 ip4:198.51.100.25 -all"'
	# the terms trust asks about (issue 56): +all, an exists: any
	# address meets
	echo 'spf-plus-all IN TXT "v=spf1 +all"'
	echo 'spf-exists-any IN TXT "v=spf1 exists:nospf.mail.test -all"'
	# a name DNS cannot ask (a 64-octet label): no match, not temperror
	printf 'spf-longlabel IN TXT "v=spf1 a:%s.mail.test -all"\n' "$(printf 'a%.0s' $(seq 64))"
	printf 'spf-longinc IN TXT "v=spf1 include:%s.mail.test -all"\n' "$(printf 'a%.0s' $(seq 64))"
	# sender domains (policy/sender_domain.c): an MX, only an A, only
	# an AAAA, a null MX (RFC 7505), a name without mail records
	echo 'with-mx IN MX 10 mx1.mail.test.'
	echo 'only-a IN A 198.51.100.61'
	echo 'only-aaaa IN AAAA 2001:db8:25::61'
	echo 'null-mx IN MX 0 .'
	echo 'null-mx IN A 198.51.100.62'
	echo 'txt-only IN TXT "v=spf1 -all"'
	echo 'fresh-domain IN MX 10 mx1.mail.test.'
	# any name under big.mail.test: 16 SPF-looking TXT records of 3.5
	# kB (issue 55: names a client invents, 56 kB each)
	x250=$(printf 'x%.0s' $(seq 250))
	for i in $(seq 1 16); do
		line="*.big IN TXT \"v=spf1 $i\""
		for k in $(seq 1 14); do line+=" \"$x250\""; done
		echo "$line"
	done
	# and 40 other records before its SPF record
	for i in $(seq 1 40); do echo "forty IN TXT \"verification-$i\""; done
	echo 'forty IN TXT "v=spf1 ip4:198.51.100.25 -all"'
} >"$zones/mail.test.zone"
{
	echo '$TTL 300'
	echo "$soa"
	echo '@ IN NS ns.mail.test.'
	echo '25 IN PTR mx1.mail.test.'
	echo '30 IN PTR liar.mail.test.'
	echo '33 IN PTR nope2.mail.test.'
	echo '33 IN PTR mx5.mail.test.'
	echo '34 IN PTR mx6.mail.test.'
} >"$zones/100.51.198.in-addr.arpa.zone"
{
	echo '$TTL 300'
	echo "$soa"
	echo '@ IN NS ns.mail.test.'
	# 2001:db8:25::25 under 8.b.d.0.1.0.0.2.ip6.arpa
	echo '5.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.5.2.0.0 IN PTR mx1.mail.test.'
} >"$zones/8.b.d.0.1.0.0.2.ip6.arpa.zone"
nsd_start dns 198.51.100.53 mail.test 100.51.198.in-addr.arpa 8.b.d.0.1.0.0.2.ip6.arpa
mapfile -t nsd_pids < <(nsd_pids)

nsx gw "$GREYGATE_BUILD/tests/check-resolver" 198.51.100.53 "${nsd_pids[@]}" ||
	fail "check-resolver failed (nsd's log: $(tail -5 "$NETNS_TMP/nsd.log"))"
echo "ok: the resolver against nsd: records of each type, TTLs and negative TTLs kept and no longer, one question for many, cancel, a timeout; FCrDNS confirmed (v4, v6, second name), unconfirmed, no PTR, temperror with the server away; SPF check_host of each mechanism, include, redirect, macros, the limits, temperror; sender domains with MX, A, AAAA, null MX, none, no such, temperror; the cache held to its bytes under 600 invented names of 56 kB; an SPF record after 40 other TXT records found"
