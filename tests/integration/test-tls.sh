#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Senders that deliver over TLS, as every MTA does when offered it: a
# receiving Postfix offering STARTTLS (a certificate made here), a sending
# Postfix at smtp_tls_security_level = may. STARTTLS at the tarpit passes
# the client (tls_pass); its mail then goes straight to the MTA, in TLS,
# where the sensor sees the session up to STARTTLS and nothing after. Each
# such session is a visit: it refreshes the pass (refresh_interval = 1s
# here), is counted in list pass and the report, and the report says what
# TLS hides. (Before, a passed TLS sender was never refreshed, counted
# nowhere, and fell out of pass4 when pass_ttl ran out.)
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw

postfix_tls_cert
postfix_new mx gw "203.0.113.1" "
$POSTFIX_TLS_SMTPD"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = may
smtp_tls_loglevel = 1"

mkdir -p "$NETNS_TMP/store"
greygated_conf "[greylist]
delay = 1h
refresh_interval = 1s
tls_pass = yes"
greygated_start
log=$GG_LOG
mbox=$(postfix_mailbox mx)
delivered() { [ "$(grep -c "^Subject: $1\$" "$mbox" 2>/dev/null)" = 1 ]; }
send() {
	printf 'Subject: %s\n\nhello\n' "$1" |
		nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" -f alice@sender.test bob@example.org
}
pass_json() { ggctl list pass --json | jq -c '.[] | select(.client == "203.0.113.0/24")'; }

# The first message: STARTTLS at the tarpit passes the /24 (delay is an
# hour: only tls_pass can), the retry goes to the MTA in TLS.
send "tls-1-$NETNS_RUN"
wait_for 60 delivered "tls-1-$NETNS_RUN" || { tail -20 "$(postfix_log out)"; cat "$log"; fail "not delivered"; }
grep -q "action=pass, reason=starttls, client=203.0.113.10, key=203.0.113.0/24, helo=out.test.example, ttl=" "$log" ||
	fail "no STARTTLS pass logged (or with an empty sender and recipient)"
grep -q "Anonymous TLS connection established from .*203.0.113.10" "$(postfix_log mx)" ||
	fail "the MTA did not see TLS: $(grep -i tls "$(postfix_log mx)" | tail -3)"
wait_for 5 eval '[ "$(pass_json | jq .sessions)" -ge 1 ]' || fail "the TLS session was not counted: $(pass_json)"
first=$(pass_json | jq -r .expires)
echo "ok: passed by STARTTLS at the tarpit, delivered over TLS; the session counted ($(pass_json))"

# Two more messages, a few seconds apart: each session refreshes the pass.
for i in 2 3; do
	sleep 2
	send "tls-$i-$NETNS_RUN"
	wait_for 30 delivered "tls-$i-$NETNS_RUN" || fail "message $i not delivered"
done
wait_for 5 eval '[ "$(pass_json | jq .sessions)" -ge 3 ]' || fail "sessions: $(pass_json)"
[ "$(pass_json | jq -r .expires)" \> "$first" ] || fail "the pass was not refreshed: $first, now $(pass_json)"
grep -q "action=refresh, reason=fastpath-refresh, client=203.0.113.10, key=203.0.113.0/24" "$log" ||
	fail "no refresh logged"
ggctl report --json | jq -e '.funnel.fastpath_sessions >= 3 and .funnel.fastpath_tls >= 3' >/dev/null ||
	fail "report: $(ggctl report --json | jq -c .funnel)"
ggctl report | grep "fast-path sessions were in TLS: what they delivered" >/dev/null ||
	fail "the report does not say what TLS hides: $(ggctl report)"
ggctl status --json | jq -e '.decisions.refreshed >= 1' >/dev/null || fail "status: refreshed 0"
echo "ok: every TLS session refreshed the pass (expires $first -> $(pass_json | jq -r .expires)); the report counts them and says what TLS hides"
