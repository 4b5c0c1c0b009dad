#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sensor hears the fast path only ([gateway] nflog_group, 2525 by
# default): greygate's
# own nft rules log the SMTP of allowed and passed clients, both ways,
# to an NFLOG group, and the child captures that instead of every port-25
# packet. All real parts: a sending Postfix on 'sender' relays to 'gw',
# where greygated (delay 3 s) runs in front of a receiving Postfix. The
# first message is greylisted, passes on its retry and is delivered; 20
# bot sessions at the tarpit then add not one packet to what the sensor
# heard; the next message goes straight through on the fast path and the
# sensor hears it (its recipient, a fast-path session), with nothing
# dropped. With nflog_group = 0 the same bots are heard (the comparison
# that shows what the rules spare the child).
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/handoff.sh"

netns_init
netns_sender_gw
netns_host bot
netns_link bot 198.51.100.20/24 gw 198.51.100.1/24

postfix_new mx gw "203.0.113.1, [2001:db8:1::1], 198.51.100.1"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_relay out sender 203.0.113.1

mkdir -p "$NETNS_TMP/allow.d" "$NETNS_TMP/store"
figure() { ggctl status --json | jq -r "$1"; } # JQ-PATH
# The sensor's packet count once it stops moving: the child reports every
# second, and the kernel hands NFLOG packets over in batches within one.
# Up to 30 s: a busy machine only makes it slower.
packets_settled() {
	local before now deadline=$(( $(date +%s) + 30 ))
	now=$(figure .sensor.packets)
	while :; do
		before=$now
		sleep 3
		now=$(figure .sensor.packets)
		[ "$now" = "$before" ] && break
		[ "$(date +%s)" -lt "$deadline" ] || fail "the sensor's count never settles"
	done
	echo "$now"
}
bots() { # N sessions at the tarpit, each to its 451
	for i in $(seq "$1"); do
		nsx bot swaks --server 198.51.100.1 --from "bot$i@spam.test" \
			--to bob@example.org >/dev/null 2>&1 || true
	done
}

# (the default: no nflog_group in the file)
greygated_conf "[greylist]
delay = 3"
greygated_start
log=$GG_LOG
grep -q "sensor on nflog:2525" "$log" || fail "by default the child does not capture nflog:2525: $(grep 'child' "$log" | head -3)"
rules=$(nsx gw nft list chain inet greygate sensor_in)
# (not over loopback: greygated's own connections to a local MTA, issue 57)
grep -q 'tcp dport 25 iifname != "lo" ip saddr & 255.255.255.0 == @pass4 log group 2525' <<<"$rules" ||
	fail "no rule logs passed clients to group 2525: $rules"
# (an address passed alone too: issue 56, trusted clients went unheard)
grep -q 'iifname != "lo" ip saddr @trust4 log group 2525 accept' <<<"$rules" ||
	fail "no rule logs clients passed alone to group 2525: $rules"
rules=$(nsx gw nft list chain inet greygate sensor_out)
grep -q 'tcp sport 25 oifname != "lo" ip6 daddr & ffff:ffff:ffff:ffff:: == @pass6 log group 2525' <<<"$rules" ||
	fail "no rule logs the MTA's answers to passed clients: $rules"
echo "ok: greygate's rules log the fast path to group 2525, the child captures it"

# --- greylisted, passed, delivered ---
out_send "first-$NETNS_RUN"
wait_for 60 mail_delivered mx "first-$NETNS_RUN" || {
	cat "$log"; tail -n 30 "$(postfix_log out)"; fail "first message not delivered"
}
grep -q "action=pass, reason=retry-passed, client=203.0.113.10" "$log" || fail "no pass logged"
echo "ok: the first message was greylisted, passed and delivered"

# --- bots at the tarpit: the sensor hears none of them ---
packets=$(packets_settled)
[ "$packets" -gt 0 ] || fail "the sensor heard nothing of the first delivery"
conns=$(figure .tarpit.connections)
bots 20
wait_for 10 eval '[ "$(figure .tarpit.connections)" -ge $(( conns + 20 )) ]' ||
	fail "the bots did not reach the tarpit"
after=$(packets_settled)
[ "$after" = "$packets" ] ||
	fail "the sensor heard the bots: $packets packets before, $after after"
echo "ok: 20 bot sessions at the tarpit, not one packet heard ($packets before and after)"

# --- the fast path is heard ---
rcpts=$(figure .sensor.rcpts)
sessions=$(figure .decisions.fastpath_sessions)
out_send "second-$NETNS_RUN"
wait_for 20 mail_delivered mx "second-$NETNS_RUN" || fail "second message not delivered"
wait_for 10 eval '[ "$(figure .sensor.rcpts)" -gt "$rcpts" ]' ||
	fail "the sensor did not hear the fast-path delivery's recipient"
wait_for 10 eval '[ "$(figure .decisions.fastpath_sessions)" -gt "$sessions" ]' ||
	fail "the fast-path session was not counted"
[ "$(figure .sensor.pcap_dropped)" = 0 ] || fail "the capture dropped packets"
echo "ok: the fast-path delivery was heard (recipient, session), nothing dropped"

# --- without it, the interface capture hears the bots (the comparison) ---
kill "$GG_PID"
wait "$GG_PID" 2>/dev/null || true
greygated_conf "nflog_group = 0
[greylist]
delay = 3"
greygated_start
wait_for 10 eval '[ "$(figure .child.running)" = true ]' || fail "the child did not start"
grep -q "sensor on any," "$GG_LOG" || fail "nflog_group = 0 does not capture the interface: $(grep "sensor on" "$GG_LOG")"
packets=$(figure .sensor.packets)
bots 5
wait_for 10 eval '[ "$(figure .sensor.packets)" -gt "$packets" ]' ||
	fail "the interface capture heard no bot (the comparison is void)"
echo "ok: capturing the interface, the bots are heard ($(( $(figure .sensor.packets) - packets )) packets for 5 sessions)"
echo "PASS"
