#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/provider-banks against a real DNS server (dnsmasq on host 'dns')
# holding SPF records of made-up providers: nested include:, redirect=, a,
# mx, IPv6, an include loop and a record over the lookup limit. The banks
# are written one file a provider, with their source on each line,
# greygated reloads them, an address in a bank reaches the MTA without the
# tarpit while one outside still meets it; a dry run shows the diff and
# writes nothing; with DNS down the previous files stay and it exits 1.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
banks=$here/../../scripts/provider-banks

netns_init
netns_sender_gw
netns_host dns
netns_link dns 198.51.100.53/24 gw 198.51.100.1/24
nsx sender ip addr add 203.0.113.70/24 dev "$(netns_dev sender gw)"

netns_spawn dns dnsmasq --no-daemon --no-resolv --no-hosts --local=/test/ \
	--listen-address=198.51.100.53 --bind-interfaces --port=53 \
	--user=nobody --group=nogroup --pid-file= --log-facility=- \
	--txt-record=bankone.test,"v=spf1 include:_spf.bankone.test ip6:2001:db8:5::/48 -all" \
	--txt-record=_spf.bankone.test,"v=spf1 ip4:203.0.113.64/27 ip4:203.0.113.96/27 a:mail.bankone.test ~all" \
	--host-record=mail.bankone.test,198.51.100.77 \
	--txt-record=banktwo.test,"v=spf1 redirect=_spf.banktwo.test" \
	--txt-record=_spf.banktwo.test,"v=spf1 mx:banktwo.test -all" \
	--mx-host=banktwo.test,mx1.banktwo.test,10 \
	--host-record=mx1.banktwo.test,203.0.113.130,2001:db8:6::130 \
	--txt-record=loop.test,"v=spf1 include:loop2.test -all" \
	--txt-record=loop2.test,"v=spf1 ip4:198.51.100.200 include:loop.test -all" \
	--txt-record=toomany.test,"v=spf1 a a a a a a a a a a a -all" \
	--host-record=toomany.test,198.51.100.99 \
	>"$NETNS_TMP/dnsmasq.log" 2>&1
dnsmasq_pid=$SPAWNED
wait_for 5 eval 'nsx gw dig +short +time=1 @198.51.100.53 bankone.test TXT | grep spf1 >/dev/null' ||
	{ cat "$NETNS_TMP/dnsmasq.log"; fail "dnsmasq does not answer"; }

postfix_new mx gw "203.0.113.1"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
mkdir -p "$NETNS_TMP/allow.d" "$NETNS_TMP/store"
greygated_conf
greygated_start

cat >"$NETNS_TMP/banks.txt" <<'TXT'
# test providers
bankone.test   # 2026-12: retries from all over its /26
banktwo.test   # 2026-12: its MX sends too
loop.test      # includes itself
toomany.test   # eleven lookups
TXT
run_banks() { # ARGS...: the script on gw; sets rc, out (stdout), err
	rc=0
	nsx gw "$banks" --list "$NETNS_TMP/banks.txt" --allow-dir "$NETNS_TMP/allow.d" \
		--server 198.51.100.53 --timeout 1 --greygatectl "$GREYGATE_BUILD/tools/greygatectl" \
		--socket "$GG_SOCK" "$@" >"$NETNS_TMP/banks.out" 2>"$NETNS_TMP/banks.err" || rc=$?
	out=$(cat "$NETNS_TMP/banks.out")
	err=$(cat "$NETNS_TMP/banks.err")
}
cidrs() { sed 's/#.*//; /^[[:space:]]*$/d; s/[[:space:]]*$//' "$1"; }

run_banks
[ "$rc" = 1 ] || fail "exit $rc, want 1 (two domains fail): $out $err"
echo "$err" | grep "loop.test: include loop: loop.test -> loop2.test -> loop.test; no file written" >/dev/null ||
	fail "include loop not reported: $err"
echo "$err" | grep "toomany.test: more than 10 DNS lookups" >/dev/null || fail "lookup limit not reported: $err"
[ ! -e "$NETNS_TMP/allow.d/provider-loop.test.txt" ] || fail "a file for the looping domain"
one=$NETNS_TMP/allow.d/provider-bankone.test.txt
two=$NETNS_TMP/allow.d/provider-banktwo.test.txt
[ "$(cidrs "$one")" = "$(printf '198.51.100.77/32\n203.0.113.64/26\n2001:db8:5::/48')" ] ||
	fail "bankone: $(cat "$one")"
[ "$(cidrs "$two")" = "$(printf '203.0.113.130/32\n2001:db8:6::130/128')" ] || fail "banktwo: $(cat "$two")"
grep -q "^# greygate provider bank: bankone.test (2026-12: retries from all over its /26)" "$one" ||
	fail "bankone header: $(cat "$one")"
grep -q "^# spf bankone.test -> _spf.bankone.test: v=spf1 ip4:203.0.113.64/27" "$one" ||
	fail "bankone's SPF chain not in its header"
grep -q "^203.0.113.64/26 .*# bankone.test -> _spf.bankone.test ip4:203.0.113.64/27; bankone.test -> _spf.bankone.test ip4:203.0.113.96/27" "$one" ||
	fail "bankone's /26 does not name its sources: $(cat "$one")"
grep -q "^203.0.113.130/32 .*# banktwo.test -> _spf.banktwo.test mx:banktwo.test" "$two" ||
	fail "banktwo's MX address does not name its source"
echo "ok: banks resolved through include, redirect, a, mx and ip6; loop and lookup limit refused"

echo "$out" | grep "greygated reloaded its allow lists" >/dev/null || fail "greygated not reloaded: $out"
ggctl list allow | grep "^203.0.113.64/26 .*provider-bankone.test.txt" >/dev/null ||
	fail "greygated did not load the bank: $(ggctl list allow)"
nsx gw nft list set inet greygate allow6 | grep '2001:db8:5::/48 comment ".*provider-bankone.test.txt"' >/dev/null ||
	fail "2001:db8:5::/48 not in allow6 with its file: $(nsx gw nft list set inet greygate allow6)"
banner() { nsx sender swaks --server 203.0.113.1 --local-interface "$1" --quit-after connect 2>&1 | grep "^<-  220" || true; }
[ -n "$(banner 203.0.113.70)" ] || fail "no banner for the bank's address"
banner 203.0.113.70 | grep "gw.test" >/dev/null && fail "an address in the bank met the tarpit"
banner 203.0.113.10 | grep "220 gw.test ESMTP" >/dev/null || fail "an address outside the banks got past the tarpit"
echo "ok: greygated reloaded; the bank reaches the MTA, others meet the tarpit"

run_banks
[ "$rc" = 1 ] && echo "$out" | grep "bankone.test: 3 networks, unchanged" >/dev/null || fail "second run: $rc $out"
sed -i '/^203.0.113.64/d' "$one"
before=$(md5sum <"$one")
run_banks --dry-run
echo "$out" | grep "^+203.0.113.64/26" >/dev/null || fail "dry run shows no diff: $out"
[ "$(md5sum <"$one")" = "$before" ] || fail "dry run wrote the file"
run_banks --no-reload
cidrs "$one" | grep "^203.0.113.64/26$" >/dev/null || fail "the bank was not restored"
echo "ok: unchanged banks are left alone; a dry run shows the diff and writes nothing"

kill "$dnsmasq_pid"
wait "$dnsmasq_pid" 2>/dev/null || true
before=$(md5sum <"$one")
run_banks bankone.test
[ "$rc" = 1 ] || fail "exit $rc with DNS down, want 1"
echo "$err" | grep "bankone.test: .*; its previous file is kept" >/dev/null || fail "DNS failure not reported: $err"
[ "$(md5sum <"$one")" = "$before" ] || fail "DNS failure changed the file"
echo "ok: with DNS down the previous file stays and the run fails"
