#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate never makes plaintext a session the MTA alone would run in TLS.
# A sending Postfix at smtp_tls_security_level = may, a receiving Postfix
# that offers STARTTLS with a certificate made here (port 25 with XCLIENT
# for greygate's source, a PROXY listener on loopback, the policy door
# asked at RCPT); for every tls_pass mode with every hand-off mode that
# greygated takes (strict with auto, the default, too: issue 57), a
# message is sent through a fresh greylist. Asserted
# for each: delivered once, its Received header says ESMTPS, the MTA
# logged the TLS session, and the wire between the sender and the gateway
# (captured there) never carries MAIL FROM or RCPT TO in the clear after a
# STARTTLS the sender asked for. tls_pass = no with the hand-off on (which
# would deliver in the clear) is refused by --check-config and at start,
# naming the choices.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw

postfix_tls_cert
postfix_new mx gw "203.0.113.1, 127.0.0.1" "
smtpd_authorized_xclient_hosts = 127.0.0.2
smtpd_recipient_restrictions = check_policy_service inet:127.0.0.1:10023, permit_mynetworks, reject_unauth_destination
$POSTFIX_TLS_SMTPD"
postfix_proxy_listener mx
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = may
smtp_tls_loglevel = 1"
mbox=$(postfix_mailbox mx)
copies() { # SUBJECT: how many messages with it the MTA delivered
	[ -f "$mbox" ] || { echo 0; return; }
	grep -c "^Subject: $1\$" "$mbox" || true
}
mxlog=$(postfix_log mx)
dev=$(netns_dev sender gw)

handoff_conf() { # MODE
	case "$1" in
	off) ;;
	# (the default: it learns the MTA from the first client, so strict
	# with it was refused before auto was known: issue 57)
	auto) printf '[handoff]\nmode = auto\n' ;;
	transparent) printf '[handoff]\nmode = transparent\naddress = 203.0.113.1:25\n' ;;
	proxy-v2) printf '[handoff]\nmode = proxy-v2\naddress = 127.0.0.1:10025\n' ;;
	xclient) printf '[handoff]\nmode = xclient\naddress = 127.0.0.1:25\nsource = 127.0.0.2\n' ;;
	esac
}

mode_conf() { # HANDOFF TLS_PASS: greygate.conf for the pair, a fresh store
	rm -rf "$NETNS_TMP/store"
	mkdir -p "$NETNS_TMP/store"
	greygated_conf "[greylist]
delay = 2
tls_pass = $2
$(handoff_conf "$1")
[policy]
listen = inet:127.0.0.1:10023
mta_asks = yes"
}

# tls_pass = no with the hand-off on: refused, naming the choices.
for mode in transparent proxy-v2 xclient; do
	mode_conf "$mode" no
	out=$(nsx gw "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/greygate.conf" --check-config 2>&1) &&
		fail "$mode: tls_pass = no with the hand-off was taken"
	grep -q "tls_pass = no with the hand-off on would deliver the passing attempt in the clear.*choose tls_pass = greylist" <<<"$out" ||
		fail "$mode: the refusal does not say why: $out"
done
echo "ok: tls_pass = no with the hand-off on is refused, naming tls_pass = greylist, strict, yes, or the hand-off off"

run() { # HANDOFF TLS_PASS
	local what="$1, tls_pass = $2" subject="tls-$1-$2-$NETNS_RUN" cap tls0 out log0 runlog
	cap=$NETNS_TMP/wire-$1-$2.pcap
	mode_conf "$1" "$2"
	netns_spawn sender tcpdump -i "$dev" -U -n -w "$cap" 'tcp port 25' 2>"$cap.err"
	local dump=$SPAWNED
	wait_for 5 grep -q "listening on" "$cap.err" || fail "$what: tcpdump did not start"
	greygated_start
	log0=$(wc -l <"$GG_LOG")
	[ "$1" = off ] || [ "$1" = auto ] ||
		wait_for 10 grep -q "hand-off: the MTA at .* offers STARTTLS: yes" "$GG_LOG" ||
		{ tail "$GG_LOG"; fail "$what: the MTA's EHLO was not learnt"; }
	tls0=$(grep -c "TLS connection established from unknown\[203.0.113.10\]" "$mxlog" || true)
	printf 'Subject: %s\n\nhello\n' "$subject" |
		nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" -f alice@sender.test bob@example.org
	wait_for 60 eval '[ "$(copies "$subject")" -ge 1 ]' ||
		{ tail -n 20 "$GG_LOG" "$(postfix_log out)"; fail "$what: not delivered"; }
	sleep 1
	# The report counts the network greylisted at STARTTLS apart from
	# the RCPTs' triplets, and its pass as by STARTTLS.
	[ "$2" != greylist ] || ggctl report --json |
		jq -e '.funnel.tls_greylisted == 1 and .funnel.passed_other == 1 and .funnel.passed_retry == 0 and .funnel.greylisted == 0' >/dev/null ||
		fail "$what: report: $(ggctl report --json | jq -c .funnel)"
	# ... and the message's delay, delivered by the pass or, without the
	# hand-off, on the fast path in TLS (issue 57: missing there)
	[ "$2" != greylist ] ||
		wait_for 5 eval 'ggctl report --json | jq -e ".delay.passes == 1" >/dev/null' ||
		fail "$what: report's delay: $(ggctl report --json | jq -c .delay)"
	# ... passed by its address alone (issue 56: a STARTTLS from a
	# neighbour passed a snowshoe block's /24s)
	if [ "$2" = greylist ]; then
		# (listed first: grep -q leaving early would fail nft's
		# pipe under pipefail)
		sets=$(nsx gw nft list set inet greygate trust4; nsx gw nft list set inet greygate pass4)
		grep -q "203\.0\.113\.10 " <<<"$sets" ||
			fail "$what: 203.0.113.10 is not in trust4: $sets"
		! grep -q "203\.0\.113\.0/24" <<<"$sets" ||
			fail "$what: its /24 was passed: $sets"
	fi
	kill "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "$what: greygated did not stop"
	kill "$dump"
	wait "$dump" 2>/dev/null || true
	[ "$(copies "$subject")" = 1 ] || fail "$what: delivered more than once"
	awk -v s="Subject: $subject" '/^From /{h=""} {h=h"\n"$0} $0==s{print h; exit}' "$mbox" |
		grep -q "with ESMTPS id" ||
		fail "$what: the Received header does not say ESMTPS"
	[ "$(grep -c "TLS connection established from unknown\[203.0.113.10\]" "$mxlog" || true)" -gt "$tls0" ] ||
		fail "$what: the MTA logged no TLS session with the sender"
	out=$(python3 "$here/../lib/clear-envelope.py" "$cap") ||
		{ echo "$out"; fail "$what: the envelope crossed in the clear after STARTTLS"; }
	if [ "$2" = greylist ]; then
		# Greylisted at STARTTLS by its address, passed by its
		# STARTTLS after the delay: never at once.
		runlog=$(tail -n +$((log0 + 1)) "$GG_LOG")
		grep -q "action=greylist, reason=new, client=203.0.113.10, key=203.0.113.10/32, helo=.*, at=starttls, delay=2" <<<"$runlog" ||
			{ echo "$runlog" | tail; fail "$what: the first STARTTLS was not greylisted"; }
		grep -q "action=pass, reason=starttls-retry, client=203.0.113.10, key=203.0.113.10/32" <<<"$runlog" ||
			{ echo "$runlog" | tail; fail "$what: no pass by the STARTTLS after the delay"; }
		! grep -q "action=pass, reason=starttls," <<<"$runlog" || fail "$what: passed at its first STARTTLS"
	fi
	echo "ok: $what: delivered once in ESMTPS; on the wire: $(tail -1 <<<"$out")"
}

for pair in off:greylist off:yes off:no transparent:greylist transparent:yes \
	transparent:strict auto:strict proxy-v2:greylist proxy-v2:yes proxy-v2:strict \
	xclient:greylist xclient:yes xclient:strict; do
	run "${pair%%:*}" "${pair#*:}"
done
