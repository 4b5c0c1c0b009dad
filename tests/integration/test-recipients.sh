#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Recipients checked at the tarpit before greylisting ([greylist]
# valid_recipients, issue 31): a real client (swaks) at the gateway's
# port 25 hears 550 5.1.1 at once for a recipient at a listed domain that
# is not listed, and no triplet is kept; listed ones, "@domain" ones and
# domains the file does not name are greylisted; a reload reads the file
# anew (a bad file keeps the list before); the report counts them; the
# third unknown recipient within the hour makes the client suspicious
# (unknown_recipients_suspicious = 3, the default): greylisted for the
# longer delay.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
list=$NETNS_TMP/recipients
printf '# who exists\nbob@example.org\n@catchall.example\n' >"$list"
greygated_conf "[greylist]
delay = 1h
valid_recipients = $list
[signals]
suspicious_delay = 2h"
greygated_start
grep -F "recipients: 3 addresses and domains in $list" "$GG_LOG" >/dev/null ||
	fail "greygated did not say it read the recipients: $(grep recipients "$GG_LOG")"

sw() { nsx sender swaks --server 203.0.113.1 --ehlo sender.test --from alice@sender.test --to "$1" 2>&1 || true; }
out=$(sw dave@example.org)
echo "$out" | grep "^<\*\* 550 5.1.1 <dave@example.org>: Recipient address rejected: User unknown" >/dev/null ||
	fail "an unknown recipient: $out"
wait_for 5 grep -F "action=refuse, reason=unknown-recipient, client=203.0.113.10" "$GG_LOG" >/dev/null ||
	fail "no refusal logged: $(tail -3 "$GG_LOG")"
! ggctl list grey | grep -F "dave@example.org" >/dev/null || fail "a triplet was kept for the unknown recipient"
for rcpt in bob@example.org anyone@catchall.example x@elsewhere.example; do
	out=$(sw "$rcpt")
	echo "$out" | grep "^<\*\* 451 4.7.1 <$rcpt>: Greylisted" >/dev/null || fail "$rcpt: $out"
done
echo "ok: an unknown recipient at a listed domain hears 550 5.1.1 at once, no triplet kept; listed, @domain and other domains greylisted"

# a reload reads the file anew; a bad one keeps the list before
echo "dave@example.org" >>"$list"
ggctl reload >/dev/null || fail "reload failed"
out=$(sw dave@example.org)
echo "$out" | grep "^<\*\* 451 4.7.1 <dave@example.org>: Greylisted" >/dev/null || fail "dave after the reload: $out"
echo "not an address" >>"$list"
ggctl reload >/dev/null || fail "reload failed"
grep -F "reload: [greylist] valid_recipients: $list:5: \"not an address\" is neither an address nor @domain (the recipients before stay)" "$GG_LOG" >/dev/null ||
	fail "the bad file was not said: $(grep reload "$GG_LOG" | tail -2)"
out=$(sw erin@example.org)
echo "$out" | grep "^<\*\* 550 5.1.1" >/dev/null || fail "the list before did not stay: $out"
echo "ok: a reload reads the recipients anew; a bad file is said and the list before stays"

[ "$(ggctl report --json | jq .funnel.refused_recipient)" = 2 ] ||
	fail "report: $(ggctl report --json | jq -c .funnel)"
ggctl metrics | grep -x 'greygate_decisions_total{action="refuse",reason="unknown_recipient"} 2' >/dev/null ||
	fail "metrics: $(ggctl metrics | grep refuse)"
echo "ok: the report and metrics count 2 refusals"

# dave (before the reload) and erin were unknown: a third makes
# 203.0.113.10 a guesser
out=$(sw frank@example.org)
echo "$out" | grep "^<\*\* 550 5.1.1" >/dev/null || fail "frank: $out"
out=$(sw new@catchall.example)
echo "$out" | grep "^<\*\* 451 4.7.1 <new@catchall.example>: Greylisted, please try again in 7200 seconds" >/dev/null ||
	fail "the guesser's next recipient: $out"
wait_for 5 eval "grep -F 'action=greylist, reason=new, client=203.0.113.10,' '$GG_LOG' | grep -F 'recipient=new@catchall.example' | grep -qF 'delay=7200, unknown_recipients=3'" ||
	fail "the line does not say why: $(grep new@catchall "$GG_LOG")"
echo "ok: after 3 unknown recipients within the hour the client is suspicious: greylisted 2 h, its line says unknown_recipients=3"
