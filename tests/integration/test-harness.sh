#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Proves the test harness: two test hosts joined by a veth, a real Postfix
# on 'gw', and swaks on 'sender' delivering over IPv4 and IPv6. Checks the
# mailbox holds both messages exactly once.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"

netns_init
netns_sender_gw

postfix_new mx gw "203.0.113.1, [2001:db8:1::1]"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "postfix is not listening"

token="harness-$NETNS_RUN"
for server in 203.0.113.1 2001:db8:1::1; do
	nsx sender swaks --silent 2 --server "$server" \
		--from alice@sender.test --to bob@example.org \
		--header "Subject: $token via $server" \
		--body "sent by the greygate harness test" ||
		fail "swaks could not deliver via $server"
done

mbox=$(postfix_mailbox mx)
have_both() {
	[ "$(grep -c "^Subject: $token via" "$mbox" 2>/dev/null)" = 2 ]
}
wait_for 20 have_both || {
	cat "$(postfix_log mx)" >&2
	fail "mailbox does not hold both messages"
}
grep -q "^Subject: $token via 203.0.113.1$" "$mbox" || fail "IPv4 message missing"
grep -q "^Subject: $token via 2001:db8:1::1$" "$mbox" || fail "IPv6 message missing"
grep -q "^Received: from .*\[203.0.113.10\]" "$mbox" ||
	fail "IPv4 message did not come from the sender host"
grep -qi "^Received: from .*\[IPv6:2001:db8:1::10\]" "$mbox" ||
	fail "IPv6 message did not come from the sender host"
echo "ok: harness delivered over IPv4 and IPv6"
