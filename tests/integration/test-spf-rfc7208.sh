#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate's SPF evaluator (policy/spf_check.c, through greygated's
# resolver) held to RFC 7208 section by section, 4 to 7: the cases of
# tests/data/spf-rfc7208.cases (each a rule of the RFC, with what it
# says) against tests/data/spf-rfc7208.zone, served by a real nsd on host
# 'dns', asked from host 'gw' by tests/common/check-resolver.c
# --spf-cases. Every case must agree.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/nsd.sh"

netns_init
netns_host gw
nsd_host

zones=$NETNS_TMP/zones
mkdir -p "$zones"
soa='@ 3600 IN SOA ns.rfc.test. admin.rfc.test. 1 3600 600 86400 2'
{
	echo '$TTL 300'
	echo '$ORIGIN rfc.test.'
	echo "$soa"
	grep -v '^\$ORIGIN' "$here/../data/spf-rfc7208.zone"
} >"$zones/rfc.test.zone"
{
	echo '$TTL 300'
	echo "$soa"
	echo '@ IN NS ns.rfc.test.'
	echo '11 IN PTR mail.rfc.test.'
	echo '12 IN PTR liar.rfc.test.'
} >"$zones/100.51.198.in-addr.arpa.zone"
nsd_start dns 198.51.100.53 rfc.test 100.51.198.in-addr.arpa

out=$(nsx gw "$GREYGATE_BUILD/tests/check-resolver" --spf-cases \
	"$here/../data/spf-rfc7208.cases" 198.51.100.53 2>&1) || {
	echo "$out"
	fail "the evaluator disagrees with RFC 7208 (nsd's log: $(tail -3 "$NETNS_TMP/nsd.log"))"
}
for s in 4 5 6 7; do
	echo "ok: RFC 7208 section $s: $(grep -cE "^ok $s[. ]" <<<"$out") cases agree"
done
echo "ok: $(tail -n 1 <<<"$out")"
