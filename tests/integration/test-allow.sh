#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Allow lists as the kernel gets them, through greygated: entries that
# overlap or touch across files and greygatectl are merged, so every
# address any of them names reaches the MTA (a /32 in one file and its /24
# in another used to leave the /24 in the tarpit, silently); list allow
# shows what the kernel holds; long comment lines, newlines in comments,
# quotes in names cannot forge entries or break nft's printed ruleset;
# nonsense is refused (a /0 forget, an overflowing ttl); a 100,000-entry
# list neither freezes status nor lets a slow listing hold others up.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
for a in 20 77 200; do nsx sender ip addr add 203.0.113.$a/24 dev "$(netns_dev sender gw)"; done
# The MTA: a banner on port 25 (the tarpit's banner is "220 gw.test ESMTP").
netns_spawn gw python3 "$here/../lib/banner-server.py" 203.0.113.1 25 "220 mta.test ESMTP" >/dev/null
wait_for 5 nsx gw bash -c 'exec 3<>/dev/tcp/203.0.113.1/25' 2>/dev/null || fail "the MTA did not start"
# Which banner a client from ADDR meets.
banner() {
	nsx sender python3 -c '
import socket, sys
s = socket.create_connection(("203.0.113.1", 25), 5, (sys.argv[1], 0))
print(s.recv(100).decode().strip())' "$1"
}
allow4() { nsx gw nft -j list set inet greygate allow4 | jq -c '[.nftables[] | select(.set) | .set.elem[]? |
	if .elem then .elem.val else . end | if .prefix then "\(.prefix.addr)/\(.prefix.len)"
	elif .range then "\(.range[0])-\(.range[1])" else . end]'; }

mkdir -p "$NETNS_TMP/allow.d" "$NETNS_TMP/store"
echo "203.0.113.77  # our own relay" >"$NETNS_TMP/allow.d/00-own.txt"
{
	# A comment as long as a provider's SPF record, whose tail looks like
	# an entry: it stays a comment.
	printf '# %s 0.0.0.0/0\n' "$(head -c 600 /dev/zero | tr '\0' x)"
	echo "203.0.113.0/24"
} >"$NETNS_TMP/allow.d/provider-x.txt"
echo '198.51.100.0/25' >"$NETNS_TMP/allow.d/say \"hi\".txt"
greygated_conf "[greylist]
delay = 1h"
greygated_start

[ "$(allow4)" = '["198.51.100.0/25","203.0.113.0/24"]' ] || fail "allow4 holds $(allow4)"
for a in 20 77 200; do
	[ "$(banner 203.0.113.$a)" = "220 mta.test ESMTP" ] || fail "203.0.113.$a met the tarpit"
done
ggctl list allow | grep "^203.0.113.0/24 *never *$NETNS_TMP/allow.d/00-own.txt, $NETNS_TMP/allow.d/provider-x.txt$" >/dev/null ||
	fail "list allow: $(ggctl list allow)"
grep -q "allow lists: 3 entries from 3 files in .*: 2 ranges once merged" "$GG_LOG" || fail "merge not logged"
echo "ok: a /32 in one file and its /24 in another: every address of the /24 reaches the MTA"

# greygatectl's entries merge with the files' and with each other.
ggctl allow 198.51.100.128/25 --comment "second half" | grep "^allowed" >/dev/null || fail "allow"
[ "$(allow4)" = '["198.51.100.0/24","203.0.113.0/24"]' ] || fail "adjacent halves: $(allow4)"
ggctl allow 203.0.113.64/26 --ttl 1h >/dev/null
[ "$(allow4)" = '["198.51.100.0/24","203.0.113.0/24"]' ] || fail "contained: $(allow4)"
nsx gw nft -j list set inet greygate allow4 | jq -e '[.nftables[] | select(.set) | .set.elem[]? |
	select(.elem.val.prefix.addr == "203.0.113.0")] | .[0].elem | has("timeout") | not' >/dev/null ||
	fail "a range with a permanent entry got a timeout"
echo "1.0.0.0/8" >"$NETNS_TMP/allow.d/wide.txt"
ggctl allow 0.0.0.0/0 --ttl 1h >/dev/null
[ "$(allow4)" = '["0.0.0.0/0"]' ] || fail "1.0.0.0/8 and 0.0.0.0/0: $(allow4)"
rm "$NETNS_TMP/allow.d/wide.txt"
# An IPv4-mapped address is the IPv4 address.
ggctl allow ::ffff:198.51.100.9 | grep "^allowed" >/dev/null || fail "allow ::ffff:"
grep -q "^198.51.100.9/32 " "$NETNS_TMP/store/allow-runtime.txt" || fail "::ffff: not kept as IPv4"
echo "ok: greygatectl's entries merge with the files' (adjacent, contained, /0 over /8)"

# greygatectl disallow: a run-time entry goes from the list, the saved
# file and the set; a file's entry or one that is not there is refused.
ggctl disallow 0.0.0.0/0 | grep "^disallowed 0.0.0.0/0$" >/dev/null || fail "disallow"
[ "$(allow4)" = '["198.51.100.0/24","203.0.113.0/24"]' ] || fail "after disallow 0.0.0.0/0: $(allow4)"
! grep -q "^0.0.0.0/0 " "$NETNS_TMP/store/allow-runtime.txt" || fail "disallowed, but still saved"
! ggctl list allow | grep "^0.0.0.0/0 " >/dev/null || fail "disallowed, but still listed"
grep -q "action=disallow, client=0.0.0.0/0, by=uid 0 " "$GG_LOG" || fail "disallow not logged: $(grep disallow "$GG_LOG")"
for what in 0.0.0.0/0 203.0.113.0/24; do
	out=$(ggctl disallow $what 2>&1) && fail "disallow $what: $out"
	echo "$out" | grep "no such run-time entry" >/dev/null || fail "disallow $what: $out"
done
[ "$(allow4)" = '["198.51.100.0/24","203.0.113.0/24"]' ] || fail "a refused disallow changed the set: $(allow4)"
echo "ok: greygatectl disallow: out of the list, the saved file and the set; a file's entry is refused"

# Refused, and nothing changed.
before=$(cat "$NETNS_TMP/store/allow-runtime.txt")
out=$(python3 - "$GG_SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"allow\x00198.51.100.99\x00--comment\x00x\n0.0.0.0/0 0 injected\x00\n")
print(s.recv(200).decode().strip())
PY
)
[ "$out" = "error: argument 4 holds a control character" ] || fail "a newline in a comment: $out"
out=$(ggctl allow 198.51.100.99 --ttl 213503982334602d 2>&1) && fail "overflowing ttl: $out"
echo "$out" | grep "at most 3650d" >/dev/null || fail "ttl refusal: $out"
out=$(ggctl forget 0.0.0.0/0 2>&1) && fail "forget 0.0.0.0/0: $out"
echo "$out" | grep "wider than greylisting's key" >/dev/null || fail "forget refusal: $out"
[ "$(cat "$NETNS_TMP/store/allow-runtime.txt")" = "$before" ] || fail "a refused request changed the saved list"
echo "ok: a newline in a comment, an overflowing ttl and a /0 forget are refused"

# nft's printed ruleset (comments with quotes and all) reads back.
nsx gw nft list table inet greygate >"$NETNS_TMP/table.nft"
netns_host check
nsx check nft -f "$NETNS_TMP/table.nft" || fail "nft -f cannot read the printed table: $(grep comment "$NETNS_TMP/table.nft" | head -3)"
echo "ok: nft list table reads back with nft -f"

# 100,000 entries: status stays instant, and a slow listing holds up
# nobody.
python3 -c '
import ipaddress
base = int(ipaddress.ip_address("2001:db8:ff::"))
print("\n".join(str(ipaddress.ip_address(base + 2 * i)) for i in range(100000)))' \
	>"$NETNS_TMP/allow.d/big.txt"
ggctl reload >/dev/null
wait_for 30 grep -q "allow lists: 100003 entries" "$GG_LOG" || fail "the big list was not loaded"
n=$(nsx gw nft -j list set inet greygate allow6 | jq '[.nftables[] | select(.set) | .set.elem[]?] | length')
[ "$n" = 100000 ] || fail "allow6 holds $n"
t0=$(date +%s%N)
ggctl status --json | jq -e '.sets.allow6 == 100000' >/dev/null || fail "status: $(ggctl status --json | jq -c .sets)"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# (status counts the sets, it does not walk them: some milliseconds; the
# bound is loose, for a busy machine: this is no benchmark)
[ "$ms" -lt 2000 ] || fail "status took $ms ms with 100,000 allow entries"
# A listing read slowly (5 s before its reader starts) while status is
# asked three times: held up by it, status would wait those seconds.
( ggctl list allow | { sleep 5; wc -l; } >"$NETNS_TMP/listed" ) &
lister=$!
sleep 0.3
for i in 1 2 3; do
	t0=$(date +%s%N)
	ggctl status >/dev/null
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$ms" -lt 2000 ] || fail "status took $ms ms during a slow listing"
done
wait "$lister"
[ "$(cat "$NETNS_TMP/listed")" -ge 100000 ] || fail "the listing had $(cat "$NETNS_TMP/listed") lines"
echo "ok: 100,000 entries: status in ${ms} ms, a slow listing holds nobody up"
