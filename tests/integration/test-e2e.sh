#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Greylisting end to end, all real parts: a sending Postfix on 'sender'
# relays to the gateway 'gw', where greygated (delay 5 s) runs in front of
# a receiving Postfix. The first attempt meets the tarpit's 451; Postfix
# retries on its own; the retry after the delay passes the client's /24
# into pass4; the next attempt reaches the MTA; the message arrives once.
# A second message then goes straight through. A fire-and-forget 'bot'
# never reaches the MTA; a greytrap recipient traps its client; an
# allow-listed host never meets the tarpit; kill -9 of greygated drops
# the table (mail flows to the MTA) and a restart restores the passes.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
netns_host bot
netns_link bot 198.51.100.20/24 gw 198.51.100.1/24
nsx bot ip addr add 198.51.100.30/24 dev "$(netns_dev bot gw)"

# The receiving MTA on the gateway.
postfix_new mx gw "203.0.113.1, [2001:db8:1::1], 198.51.100.1"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"

# The sending MTA: relays everything to the gateway, retries fast.
postfix_relay out sender 203.0.113.1

# greygated on the gateway.
mkdir -p "$NETNS_TMP/allow.d" "$NETNS_TMP/store"
echo "198.51.100.30 # a friend's server" >"$NETNS_TMP/allow.d/friends.txt"
greygated_conf "log_level = debug
[greylist]
delay = 5
trap_recipients = spamtrap@example.org"
greygated_start
log=$GG_LOG

mbox=$(postfix_mailbox mx)
delivered() { [ "$(grep -c "^Subject: $1\$" "$mbox" 2>/dev/null)" = "$2" ]; }
send() { # SUBJECT: inject into the sending Postfix
	printf 'Subject: %s\n\nhello\n' "$1" |
		nsx sender /usr/sbin/sendmail -C "$(postfix_dir out)" -f alice@sender.test bob@example.org
}

# --- a well-behaved sender is greylisted, retries, passes, delivers ---
t0=$(date +%s)
send "first-$NETNS_RUN"
wait_for 60 delivered "first-$NETNS_RUN" 1 || {
	cat "$log"; tail -n 30 "$(postfix_log out)"; fail "first message not delivered"
}
took=$(( $(date +%s) - t0 ))
grep -q "status=deferred (host 203.0.113.1\[203.0.113.1\] said: 451 4.7.1 <bob@example.org>: Greylisted, please try again in 5 seconds (in reply to RCPT TO command))" \
	"$(postfix_log out)" || fail "the sender did not see our 451"
grep -q "action=greylist, reason=new, client=203.0.113.10, helo=out.test.example, sender=alice@sender.test, recipient=bob@example.org, delay=5" "$log" ||
	fail "no greylist decision logged"
grep -q "action=pass, reason=retry-passed, client=203.0.113.10, key=203.0.113.0/24" "$log" ||
	fail "no pass decision logged"
nsx gw nft -j list set inet greygate pass4 |
	jq -e '.nftables[] | select(.set) | .set.elem[]? | select(.elem.val == "203.0.113.0")' >/dev/null ||
	fail "203.0.113.0/24 not in pass4"
echo "ok: greylisted, retried, passed into pass4, delivered once after ${took}s"

# --- the next message goes straight through ---
greylists_before=$(grep -c "action=greylist" "$log")
t0=$(date +%s%N)
send "second-$NETNS_RUN"
wait_for 20 delivered "second-$NETNS_RUN" 1 || fail "second message not delivered"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$(grep -c "action=greylist" "$log")" = "$greylists_before" ] || fail "second message was greylisted"
[ "$ms" -lt 5000 ] || fail "second message took ${ms} ms"
delivered "first-$NETNS_RUN" 1 || fail "first message arrived twice"
echo "ok: second message delivered directly in ${ms} ms"

# --- a fire-and-forget bot never gets in ---
out=$(nsx bot swaks --server 198.51.100.1 --from bot@spam.test --to bob@example.org \
	--header "Subject: bot-$NETNS_RUN" 2>&1 || true)
echo "$out" | grep -q "<\*\* 451 4.7.1 <bob@example.org>: Greylisted" || { echo "$out"; fail "bot did not get 451"; }
echo "$out" | grep -q "^<-  220 gw.test ESMTP" || fail "bot did not meet the tarpit's banner"
sleep 1
delivered "bot-$NETNS_RUN" 0 || fail "bot's message was delivered"
grep -q "action=greylist, reason=new, client=198.51.100.20" "$log" || fail "bot not greylisted"
echo "ok: bot stopped at the tarpit"

# --- a greytrap traps its client ---
nsx bot swaks --server 198.51.100.1 --from bot@spam.test --to spamtrap@example.org >/dev/null 2>&1 || true
wait_for 5 grep -q "action=trap, reason=trapped, client=198.51.100.20" "$log" || fail "trap not logged"
nsx gw nft -j list set inet greygate trap4 |
	jq -e '.nftables[] | select(.set) | .set.elem[]? | select(.elem.val == "198.51.100.20")' >/dev/null ||
	fail "198.51.100.20 not in trap4"
echo "ok: greytrap traps the client"

# --- an allow-listed host reaches the MTA at once ---
nsx bot swaks --server 198.51.100.1 --local-interface 198.51.100.30 --from friend@friend.test \
	--to bob@example.org --header "Subject: friend-$NETNS_RUN" >/dev/null 2>&1 ||
	fail "allow-listed host could not deliver"
wait_for 10 delivered "friend-$NETNS_RUN" 1 || fail "friend's message not delivered"
nsx gw nft -j list set inet greygate allow4 |
	jq -e --arg f "$NETNS_TMP/allow.d/friends.txt" '.nftables[] | select(.set) | .set.elem[]? |
		select(.elem.comment == $f)' >/dev/null || fail "allow4 entry does not name its file"
echo "ok: allow-listed host delivered directly; allow4 names the file"

# --- SIGHUP reloads the allow lists ---
echo "198.51.100.50/32" >"$NETNS_TMP/allow.d/more.txt"
kill -HUP "$GG_PID"
in_allow() {
	nsx gw nft -j list set inet greygate allow4 |
		jq -e '.nftables[] | select(.set) | .set.elem[]? | select(.elem.val == "198.51.100.50")' >/dev/null
}
wait_for 5 in_allow || fail "SIGHUP did not load the new allow entry"
echo "ok: SIGHUP reloads the allow lists"

# --- IPv6: greylisted, passed by its /64 in pass6, then delivered ---
v6() { # SUBJECT: one swaks attempt over IPv6, its output
	nsx sender swaks --server 2001:db8:1::1 --from carol@sender.test --to bob@example.org \
		--header "Subject: $1" 2>&1 || true
}
v6 "v6-$NETNS_RUN" | grep -q "<\*\* 451 4.7.1" || fail "IPv6 first attempt not greylisted"
sleep 5
v6 "v6-$NETNS_RUN" | grep -q "<\*\* 451 4.7.1" || fail "IPv6 retry not answered by the tarpit"
grep -q "action=pass, reason=retry-passed, client=2001:db8:1::10, key=2001:db8:1::/64" "$log" ||
	fail "IPv6 pass not logged"
v6 "v6-$NETNS_RUN" | grep -q "^<-  250 .*queued as" || fail "IPv6 third attempt not delivered"
wait_for 10 delivered "v6-$NETNS_RUN" 1 || fail "IPv6 message not in the mailbox"
echo "ok: IPv6 greylisted, passed by /64, delivered"

# --- STARTTLS at the tarpit passes the client's /24 (tls_pass) ---
nsx bot ip addr add 198.51.100.40/24 dev "$(netns_dev bot gw)"
out=$(nsx bot swaks --server 198.51.100.1 --local-interface 198.51.100.40 --tls \
	--from tls@tls.test --to bob@example.org 2>&1 || true)
echo "$out" | grep -q "<\*\* 454 4.7.0 TLS not available" || { echo "$out"; fail "no 454 to STARTTLS"; }
wait_for 5 grep -q "action=pass, reason=starttls, client=198.51.100.40, key=198.51.100.0/24" "$log" ||
	fail "STARTTLS pass not logged"
nsx bot swaks --server 198.51.100.1 --local-interface 198.51.100.40 --from tls@tls.test \
	--to bob@example.org --header "Subject: tls-$NETNS_RUN" >/dev/null 2>&1 ||
	fail "client passed by STARTTLS could not deliver"
wait_for 10 delivered "tls-$NETNS_RUN" 1 || fail "STARTTLS-passed message not delivered"
# The trapped host in the same /24 still meets the tarpit.
out=$(nsx bot swaks --server 198.51.100.1 --local-interface 198.51.100.20 \
	--from bot@spam.test --to bob@example.org 2>&1 || true)
echo "$out" | grep -q "^<-  220 gw.test ESMTP" || fail "trapped host got past the tarpit"
echo "ok: STARTTLS passes the /24; the trapped host in it stays in the tarpit"

# --- kill -9: the table goes, mail flows; restart restores the passes ---
kill -9 "$GG_PID"
wait "$GG_PID" 2>/dev/null || true
wait_for 5 bash -c "! ip netns exec $(netns_ns gw) nft list table inet greygate >/dev/null 2>&1" ||
	fail "table still there after kill -9"
nsx bot swaks --server 198.51.100.1 --from other@bot.test --to bob@example.org \
	--header "Subject: failopen-$NETNS_RUN" >/dev/null 2>&1 || fail "MTA not reachable with greygated dead"
wait_for 10 delivered "failopen-$NETNS_RUN" 1 || fail "fail-open message not delivered"
greygated_start
nsx gw nft -j list set inet greygate pass4 |
	jq -e '.nftables[] | select(.set) | .set.elem[]? | select(.elem.val == "203.0.113.0")' >/dev/null ||
	fail "pass not restored after restart"
grep -q "restored 3 passed and 1 trapped" "$log" || fail "restore not logged"
echo "ok: kill -9 fails open; restart restores passes from the store"
