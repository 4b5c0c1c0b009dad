#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygatectl release (issue 32: the admin on the phone with a sender
# waiting for a code), with real parts: greygated (delay 1 h) in front of
# the tarpit on 'gw'; a client at 'sender' is greylisted by a real SMTP
# dialogue (swaks). Asserted: a release naming a triplet that does not
# wait releases nothing and says so; --from without --to is refused;
# the release of the waiting triplet puts the client's /24 in the
# kernel's pass set and the store, logs who asked, and the client's next
# connection is no longer sent to the tarpit; a release without a
# triplet passes the key at once. (On a shared store: test-shared-faults.)
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
mkdir -p "$NETNS_TMP/store" "$NETNS_TMP/allow.d"
greygated_conf "[greylist]
delay = 1h"
greygated_start
log=$GG_LOG

attempt() { # the first reply line to RCPT from 203.0.113.10 (or none)
	nsx sender swaks --server 203.0.113.1 --from Alice@Sender.test --to bob@example.org \
		--quit-after RCPT --timeout 5 2>&1 |
		awk '/^ *-> RCPT TO/ {r=1; next} r && /^<(\*\*|-) +[0-9][0-9][0-9]/ {print $2; exit}' || true
}
# (the set read whole first: grep -q leaving early would fail the pipe)
in_set() { # [SET ELEMENT]
	local set
	set=$(nsx gw nft list set inet greygate "${1:-pass4}") || return 1
	grep -qE "[{ ]${2:-203.0.113.0} " <<<"$set"
}

[[ "$(attempt)" == *451 ]] || fail "the first attempt was not greylisted: $(attempt)"
[[ "$(attempt)" == *451 ]] || fail "the early retry was not greylisted"

# Who waits for mail from sender.test: the admin's first question.
[ "$(ggctl list grey --from Sender.TEST | grep -c "alice@sender.test *bob@example.org")" = 1 ] ||
	fail "list grey --from: $(ggctl list grey --from Sender.TEST)"
[ "$(ggctl list grey --to nobody@ | grep -c @)" = 0 ] || fail "list grey --to filtered nothing"
out=$(ggctl list pass --from x 2>&1) && fail "list pass took --from: $out"
echo "ok: list grey --from, --to show only the triplets they name"

out=$(ggctl release 203.0.113.10 --from alice@sender.test --to carol@example.org 2>&1) &&
	fail "a triplet that does not wait was released: $out"
[[ "$out" == *"no triplet alice@sender.test -> carol@example.org waits"* ]] || fail "release of no triplet: $out"
out=$(ggctl release 203.0.113.10 --from alice@sender.test 2>&1) && fail "--from alone was taken: $out"
[[ "$out" == *"--from and --to go together"* ]] || fail "--from alone: $out"
out=$(ggctl release 203.0.113.0/16 2>&1) && fail "a /16 was released: $out"
! in_set || fail "something was released by the refused requests"
echo "ok: nothing released for a triplet that does not wait, --from alone, a network wider than the key"

out=$(ggctl release 203.0.113.10 --from Alice@Sender.test --to bob@example.org) || fail "release: $out"
[[ "$out" == "released 203.0.113.10 (key 203.0.113.0/24): it passes now, for "* ]] || fail "release said: $out"
in_set || fail "the released client is not in the pass set: $(nsx gw nft list set inet greygate pass4; tail -5 "$log")"
grep -qE "action=pass, reason=released, key=203.0.113.0/24, sender=alice@sender.test, recipient=bob@example.org, ttl=[0-9]+, by=uid 0 gid 0 pid [0-9]+" "$log" ||
	fail "the release was not logged with who asked: $(grep release "$log" | tail -2)"
grep -q "^203.0.113.0/24 " <<<"$(ggctl list pass)" || fail "the store lacks the released pass: $(ggctl list pass)"
# (no MTA behind: the fast path's connection is refused, not a tarpit's 451)
[[ "$(attempt)" != *451 ]] || fail "the released client still meets the tarpit"
echo "ok: the waiting triplet released: in the pass set and the store, logged with who asked; the client is past the tarpit"

out=$(ggctl release 2001:db8:9::1) || fail "release without a triplet: $out"
in_set pass6 2001:db8:9:: || fail "2001:db8:9::/64 is not in pass6: $(nsx gw nft list set inet greygate pass6; tail -3 "$log")"
echo "ok: a release without --from/--to passes the client's key at once"
echo "PASS"
