#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate-sniff on a live interface (-i): a real Postfix on 'gw', swaks on
# 'sender' over IPv4 and IPv6; the sniffer on gw's side of the link prints
# each RCPT with its reply as it happens.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
sniff=$GREYGATE_BUILD/tools/greygate-sniff

netns_init
netns_sender_gw
postfix_new mx gw "203.0.113.1, [2001:db8:1::1]"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "postfix is not listening"

out=$NETNS_TMP/events.json
netns_spawn gw "$sniff" -i "$(netns_dev gw sender)" >"$out" 2>"$NETNS_TMP/sniff.err"
sniff_pid=$SPAWNED
sleep 1
nsx sender swaks --silent 2 --server 203.0.113.1 --ehlo live.test \
	--from alice@sender.test --to bob@example.org,carol@example.org ||
	fail "swaks over IPv4 failed"
nsx sender swaks --silent 2 --server 2001:db8:1::1 --ehlo live6.test \
	--from dave@sender.test --to erin@example.org || fail "swaks over IPv6 failed"
rcpts() {
	jq -r 'select(.event == "rcpt") | [.client, .helo, .from, .to, (.reply | tostring)] | join(" ")' "$out"
}
want="203.0.113.10 live.test alice@sender.test bob@example.org 250
203.0.113.10 live.test alice@sender.test carol@example.org 250
2001:db8:1::10 live6.test dave@sender.test erin@example.org 250"
got_all() { [ "$(rcpts)" = "$want" ]; }
wait_for 10 got_all || { cat "$out" "$NETNS_TMP/sniff.err"; fail "live events: $(rcpts)"; }
kill "$sniff_pid"
wait "$sniff_pid" 2>/dev/null || true
echo "ok: greygate-sniff -i saw every RCPT live, with its reply"
