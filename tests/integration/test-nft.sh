#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nft manager against the real kernel, inside test namespaces: the
# table, sets, chains and counters as described; timeouts that expire and
# refreshes that extend; the table gone when its owner is killed; and
# traffic: a client not in a set lands on the tarpit port, one in pass
# (by /24, /64 or its own address) or allow reaches the MTA, one in trap
# goes back to the tarpit, a direct connection to the tarpit port is
# dropped. IPv4 and IPv6.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
driver=$GREYGATE_BUILD/tests/nft-driver

netns_init
netns_sender_gw

# The manager, fed commands through a fifo so the test can talk to it.
mkfifo "$NETNS_TMP/cmd"
exec 3<>"$NETNS_TMP/cmd" # read-write: opening it never blocks
netns_spawn gw "$driver" <"$NETNS_TMP/cmd" >"$NETNS_TMP/out" 2>&1
driver_pid=$SPAWNED
wait_for 5 grep -q '^ready' "$NETNS_TMP/out" || { cat "$NETNS_TMP/out"; fail "driver did not start"; }

say() { echo "$*" >&3; }
# commit: send the queue, wait for the answer line.
answers() { grep -c '^committed' "$NETNS_TMP/out" || true; }
commit() {
	local before
	before=$(answers)
	say commit
	wait_for 5 eval '[ "$(answers)" -gt "$before" ]' ||
		fail "no answer to commit"
	tail -n 1 "$NETNS_TMP/out"
}
nftj() { nsx gw nft -j list table inet greygate; }

# --- the ruleset as described ---
json=$(nftj)
for s in allow4 allow6 pass4 pass6 trap4 trap6; do
	case $s in
	allow*) want='index("interval") and index("timeout")' ;;
	*) want='index("timeout") and (index("interval") | not)' ;;
	esac
	echo "$json" | jq -e --arg s "$s" \
		".nftables[] | select(.set.name == \$s) | .set.flags | $want" >/dev/null ||
		fail "set $s missing or with the wrong flags"
	echo "$json" | jq -e --arg s "$s" \
		'.nftables[] | select(.set.name == $s) | .set.comment | startswith("greygate: ")' >/dev/null ||
		fail "set $s has no comment"
done
for c in allowed passed trapped greylisted; do
	echo "$json" | jq -e --arg c "$c" '.nftables[] | select(.counter.name == $c)' >/dev/null ||
		fail "counter $c missing"
done
# nft 1.0.6's JSON misnames the owner flag; its text output has it right.
nsx gw nft list table inet greygate | grep -x $'\tflags owner' >/dev/null || fail "table not owned"
# (dstnat - 10: before a router's port forward; test-firewall.sh)
echo "$json" | jq -e '.nftables[] | select(.chain.name == "prerouting") | select(.chain.type == "nat" and .chain.hook == "prerouting" and .chain.prio == -110)' >/dev/null ||
	fail "prerouting chain wrong"
echo "$json" | jq -e '.nftables[] | select(.chain.name == "tarpit_guard") | select(.chain.type == "filter" and .chain.hook == "input")' >/dev/null ||
	fail "tarpit_guard chain wrong"
nsx gw nft list chain inet greygate prerouting | grep 'tcp dport 25 counter name "greylisted" redirect to :2525' >/dev/null ||
	fail "no catch-all redirect rule"
echo "ok: ruleset"

# A second owner cannot take the table.
if nsx gw "$driver" </dev/null >"$NETNS_TMP/second" 2>&1; then
	fail "a second manager opened the same table"
fi
grep -q "already exists and is not ours" "$NETNS_TMP/second" || fail "no clear error for a taken table"
echo "ok: a taken table is refused with a clear error"

# --- traffic ---
for port_banner in "25 MTA" "2525 TARPIT"; do
	set -- $port_banner
	netns_spawn gw python3 "$here/../lib/banner-server.py" 203.0.113.1 "$1" "$2" >/dev/null
	netns_spawn gw python3 "$here/../lib/banner-server.py" 2001:db8:1::1 "$1" "$2" >/dev/null
done
probe() { # ADDR PORT: the banner the sender reads, or "none"
	nsx sender timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2 && head -n 1 <&3 | tr -d '\r'" 2>/dev/null || echo none
}
servers_up() {
	[ "$(probe 203.0.113.1 25)" != none ] && [ "$(probe 2001:db8:1::1 25)" != none ]
}
wait_for 5 servers_up || fail "servers not up"

expect() { # ADDR PORT WANT WHY
	local got
	got=$(probe "$1" "$2")
	[ "$got" = "$3" ] || fail "$4: connecting to $1 port $2 reached '$got', want '$3'"
}
expect 203.0.113.1 25 TARPIT "unknown v4 client"
expect 2001:db8:1::1 25 TARPIT "unknown v6 client"
expect 203.0.113.1 2525 none "direct v4 connection to the tarpit port"
expect 2001:db8:1::1 2525 none "direct v6 connection to the tarpit port"

say add pass 203.0.113.0/24 60000 test pass
say add pass 2001:db8:1::/64 60000
commit >/dev/null
expect 203.0.113.1 25 MTA "v4 client in a passed /24"
# Reading the sets back (what greygatectl list will show).
say list pass
wait_for 5 grep -q '^end' "$NETNS_TMP/out" || fail "no answer to list"
grep -q '^203.0.113.0/24 60000 [0-9]* test pass$' "$NETNS_TMP/out" || fail "list pass lacks 203.0.113.0/24"
grep -q '^2001:db8:1::/64 60000 [0-9]* -$' "$NETNS_TMP/out" || fail "list pass lacks 2001:db8:1::/64"
# Each element once: libnftnl's iterator returns the element it stands on.
[ "$(sed -n '/^[0-9]/p' "$NETNS_TMP/out" | sort | uniq -d)" = "" ] ||
	fail "list pass repeats an element: $(cat "$NETNS_TMP/out")"
expect 2001:db8:1::1 25 MTA "v6 client in a passed /64"
# The pass rule looks the source's /24 up (a hash set of /24 keys).
nsx gw nft list chain inet greygate prerouting |
	grep 'tcp dport 25 ip saddr & 255.255.255.0 == @pass4 counter name "passed" accept' >/dev/null ||
	fail "pass4 rule does not mask to /24"
# In an allow set an overlap is refused by the kernel, which keeps one of
# the two: the manager says so (greygated merges before it sends).
say add allow 198.51.100.0/24
say add allow 198.51.100.7/32
out=$(commit)
[ "$out" = "committed 1 refused" ] || fail "an overlapping allow entry was not reported: $out"
grep -q "^refused 198.51.100.7/32: File exists" "$NETNS_TMP/out" || fail "the refusal does not name the entry"
say del allow 198.51.100.0/24
# Any range, not only a CIDR, and read back as it is.
say add allow 198.51.100.7-198.51.100.20
commit >/dev/null
say list allow
wait_for 5 grep -q '^end' "$NETNS_TMP/out" || fail "no answer to list allow"
grep -q '^198.51.100.7-198.51.100.20 0 0 -$' "$NETNS_TMP/out" || fail "list allow: $(cat "$NETNS_TMP/out")"
nsx gw nft -j list set inet greygate allow4 | jq -e '.nftables[] | select(.set) |
	.set.elem == [{"range": ["198.51.100.7", "198.51.100.20"]}]' >/dev/null ||
	fail "the kernel holds: $(nsx gw nft list set inet greygate allow4)"
say flush allow
commit >/dev/null
# 20,000 elements (more than a netlink batch used to carry) go in one
# batch: no packet sees the sets half loaded.
say batches
wait_for 5 grep -q '^batches' "$NETNS_TMP/out" || fail "no answer to batches"
before=$(grep '^batches' "$NETNS_TMP/out" | tail -n1 | cut -d' ' -f2)
say bulk 20000
[ "$(commit)" = "committed 0 refused" ] || fail "bulk commit"
say batches
wait_for 5 eval '[ "$(grep -c "^batches" "$NETNS_TMP/out")" = 2 ]' || fail "no answer to batches"
after=$(grep '^batches' "$NETNS_TMP/out" | tail -n1 | cut -d' ' -f2)
[ $(( after - before )) = 1 ] || fail "20,000 elements went in $(( after - before )) batches"
n=$(nsx gw nft -j list set inet greygate allow6 | jq '[.nftables[] | select(.set) | .set.elem[]?] | length')
[ "$n" = 20000 ] || fail "allow6 holds $n elements, want 20000"
say flush allow
commit >/dev/null

say add trap 203.0.113.10 60000
commit >/dev/null
expect 203.0.113.1 25 TARPIT "trapped client in a passed /24"
say del trap 203.0.113.10
say del pass 203.0.113.0/24
say add allow 203.0.113.10/32
commit >/dev/null
expect 203.0.113.1 25 MTA "allow-listed client"
say flush allow
commit >/dev/null
expect 203.0.113.1 25 TARPIT "client after the allow list was flushed"
counters=$(nsx gw nft -j list counters table inet greygate)
for c in allowed passed trapped greylisted; do
	echo "$counters" | jq -e --arg c "$c" '.nftables[] | select(.counter.name == $c) | .counter.packets > 0' >/dev/null ||
		fail "counter $c did not count"
done
echo "ok: traffic steered by the sets, counters count"

# --- a refusal inside a batch names its element; the rest is applied ---
say add pass 198.51.102.0/24 60000
say add pass 198.51.103.0/24 4611686018427387904 # a timeout the kernel refuses
say add pass 198.51.104.0/24 60000
[ "$(commit)" = "committed 1 refused" ] || fail "want exactly one refusal"
grep -q "^refused 198.51.103.0/24: " "$NETNS_TMP/out" || fail "the refusal does not name its element"
for a in 198.51.102.0 198.51.104.0; do
	nsx gw nft -j list set inet greygate pass4 |
		jq -e --arg a "$a" '.nftables[] | select(.set) | .set.elem[]? | select(.elem.val == $a)' >/dev/null ||
		fail "$a not applied next to the refused element"
done
echo "ok: a refused element is named, the others in its batch are applied"

# --- timeouts ---
# Each check is made against the clock, not a fixed sleep: a busy machine
# may take longer than an element's timeout between two steps (a
# presence is asserted only when read before its end; an absence, after
# waiting past it).
ms() { echo $(( $(date +%s%N) / 1000000 )); }
until_ms() { while [ "$(ms)" -lt "$1" ]; do sleep 0.05; done; }
say add pass 198.51.100.0/24 1500
say add pass 198.51.101.0/24 2500
t0=$(ms)
commit >/dev/null
until_ms $(( t0 + 1200 ))
say add pass 198.51.101.0/24 2500 # refresh: restarts its clock
t1=$(ms)
commit >/dev/null
in_set() { nsx gw nft -j list set inet greygate pass4 |
	jq -e --arg a "$1" '[.nftables[] | select(.set) | .set.elem[]? | .elem.val // .] | index($a)' >/dev/null; }
present=0
in_set 198.51.100.0 && present=1
[ "$present" = 1 ] || [ "$(ms)" -ge $(( t0 + 1500 )) ] || fail "element gone before its timeout"
until_ms $(( t0 + 2000 ))
in_set 198.51.100.0 && fail "element still there after its timeout"
present=0
in_set 198.51.101.0 && present=1
[ "$present" = 1 ] || [ "$(ms)" -ge $(( t1 + 2500 )) ] || fail "refreshed element expired on its old timeout"
until_ms $(( t1 + 3000 ))
in_set 198.51.101.0 && fail "refreshed element outlived its new timeout"
echo "ok: timeouts expire in the kernel, refresh extends"

# --- the owner dies: the table goes (fail open) ---
kill -9 "$driver_pid"
wait "$driver_pid" 2>/dev/null || true
wait_for 5 bash -c "! ip netns exec $(netns_ns gw) nft list table inet greygate >/dev/null 2>&1" ||
	fail "table still there after its owner was killed"
expect 203.0.113.1 25 MTA "client after greygate died (fail open)"
echo "ok: SIGKILL of the owner drops the table"

# --- a site's own mark exempts its traffic ---
: >"$NETNS_TMP/out"
netns_spawn gw "$driver" greygate 0x10 <"$NETNS_TMP/cmd" >"$NETNS_TMP/out" 2>&1
driver_pid=$SPAWNED
wait_for 5 grep -q '^ready' "$NETNS_TMP/out" || { cat "$NETNS_TMP/out"; fail "mark driver did not start"; }
expect 203.0.113.1 25 TARPIT "unmarked client"
nsx gw nft -f - <<'NFT'
table inet site {
	chain mark_friends {
		type filter hook prerouting priority -300; policy accept;
		ip saddr 203.0.113.10 meta mark set 0x10
	}
}
NFT
expect 203.0.113.1 25 MTA "client marked by the site's own ruleset"
nsx gw nft delete table inet site
kill "$driver_pid"
wait "$driver_pid" 2>/dev/null || true
echo "ok: a packet mark set by the site's ruleset skips greygate"

# --- persist: the table outlives its owner, a new one takes it back ---
: >"$NETNS_TMP/out"
netns_spawn gw "$driver" greygate 0 persist <"$NETNS_TMP/cmd" >"$NETNS_TMP/out" 2>&1
driver_pid=$SPAWNED
wait_for 5 grep -q '^ready' "$NETNS_TMP/out" || { cat "$NETNS_TMP/out"; fail "persist driver did not start"; }
say add pass 203.0.113.0/24 60000
commit >/dev/null
kill -9 "$driver_pid"
wait "$driver_pid" 2>/dev/null || true
sleep 0.5
nsx gw nft list table inet greygate >/dev/null 2>&1 || fail "persistent table gone with its owner"
expect 203.0.113.1 25 MTA "passed client with the owner dead (persist)"
nsx gw nft list table inet greygate | grep -x $'\tflags owner' >/dev/null && fail "dead owner still listed"
# Without persist, the orphan is not taken.
nsx gw "$driver" </dev/null >"$NETNS_TMP/second" 2>&1 && fail "a non-persist manager took the orphan"
: >"$NETNS_TMP/out"
netns_spawn gw "$driver" greygate 0 persist <"$NETNS_TMP/cmd" >"$NETNS_TMP/out" 2>&1
driver_pid=$SPAWNED
wait_for 5 grep -q '^ready' "$NETNS_TMP/out" || { cat "$NETNS_TMP/out"; fail "persist driver did not take the table back"; }
nsx gw nft list table inet greygate | grep -x $'\tflags owner' >/dev/null || fail "table not owned after takeover"
[ "$(nsx gw nft list tables | grep -c 'inet greygate')" = 1 ] || fail "two tables after takeover"
echo "ok: persist: the table outlives its owner and is taken back"
