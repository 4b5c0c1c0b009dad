# SPDX-License-Identifier: GPL-2.0-or-later
# Mail through the gateway, for the tests that send it (test-e2e.sh,
# test-handoff.sh, test-transparent.sh, ...): a sending
# Postfix instance 'out' on host 'sender', receiving instances by name.
# Needs netns.sh, postfix.sh and greygated.sh.
#   mail_copies MTA SUBJECT     messages with that Subject in MTA's mailbox
#   mail_delivered MTA SUBJECT  exactly one?
#   mail_received MTA SUBJECT   that message's headers, up to its Subject
#   out_send SUBJECT            a message from alice@sender.test to
#                               bob@example.org through 'out'
#   out_reconfigure MAIN_CF...  'out's new settings, its log started afresh
#   out_sent_once WHAT          'out' logged its message sent, once
#   sent_by_the_pass WHAT MTA SUBJECT CLIENT RECEIVED
#       'out's message was deferred by greylisting only, then went in
#       once, on the attempt that passed (greygated logged CLIENT's pass),
#       and its Received header names RECEIVED; the deferrals' count is
#       left in PASS_DEFERRALS

mail_copies() { grep -c "^Subject: $2\$" "$(postfix_mailbox "$1")" 2>/dev/null || true; }
mail_delivered() { [ "$(mail_copies "$1" "$2")" = 1 ]; }
mail_received() {
	awk -v s="Subject: $2" '/^From /{h=""} {h=h"\n"$0} $0==s{print h; exit}' "$(postfix_mailbox "$1")"
}

out_send() { # SUBJECT (from $OUT_FROM, to $OUT_TO: alice@sender.test, bob@example.org)
	printf 'Subject: %s\n\nhello\n' "$1" |
		nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" \
			-f "${OUT_FROM:-alice@sender.test}" "${OUT_TO:-bob@example.org}"
}

out_reconfigure() {
	postconf -c "$(postfix_dir out)" -e "$@"
	nsx sender postfix -c "$(postfix_dir out)" reload >/dev/null 2>&1
	: >"$(postfix_log out)"
}

# out_sent_once WHAT: the sending Postfix logged its message sent, once.
# (It logs "sent" once it read the MTA's 250, which may come after the
# MTA's own delivery to the mailbox: CI, busy, saw the mailbox first.)
out_sent_once() {
	local outlog
	outlog=$(postfix_log out)
	wait_for 10 grep -q "status=sent (250 2.0.0 Ok: queued" "$outlog" ||
		fail "$1: delivered, but the sender never logged it sent: $(grep status= "$outlog")"
	[ "$(grep -c "status=sent (250 2.0.0 Ok: queued" "$outlog")" = 1 ] ||
		fail "$1: not sent once: $(grep status= "$outlog")"
}

PASS_DEFERRALS=0
sent_by_the_pass() {
	local outlog
	outlog=$(postfix_log out)
	wait_for 60 mail_delivered "$2" "$3" || { tail -n 30 "$GG_LOG" "$outlog"; fail "$1: not delivered"; }
	out_sent_once "$1"
	! grep -q "Passed greylisting" "$outlog" || fail "$1: the passing attempt was answered 451"
	PASS_DEFERRALS=$(grep -c "status=deferred" "$outlog" || true)
	[ "$(grep -c "status=deferred.*said: 451 4.7.1 <bob@example.org>: Greylisted" "$outlog" || true)" = "$PASS_DEFERRALS" ] ||
		fail "$1: a deferral that is not greylisting's: $(grep status= "$outlog")"
	grep -q "action=pass, reason=retry-passed, client=$4" "$GG_LOG" || fail "$1: no pass"
	mail_received "$2" "$3" | grep "from out.test.example (unknown \[$5\])" >/dev/null ||
		fail "$1: the Received header does not name the client: $(mail_received "$2" "$3")"
}
