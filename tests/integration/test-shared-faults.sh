#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A site of gateways on one real redis-server through the faults an
# outside tester found (issue 29), all real parts: three gateways (the
# policy door, asked by a real Postfix on mx1 and by hand), Redis on a
# host of its own. Asserted:
#  - D2: a pass a gateway holds is never answered "Greylisted" by it: the
#    pass deleted from Redis, the client's mail from a new sender through
#    mx1's Postfix is accepted at once, and the pass is written back;
#  - R1: Redis restarted and answering -LOADING for seconds: the gateway
#    asks again on the same connection and is back within seconds of the
#    load's end (it stayed AWAY for good);
#  - D1, D5: mx1 and mx2 cut off from Redis (an nft drop in their
#    namespaces), Redis emptied, a newcomer with another delay reaches it
#    first and writes its settings; healed: mx1 and mx2 keep running, say
#    Redis was emptied (not "trimmed"), put the site's settings and the
#    passes they hold back, and the triplets they greylisted (a sender
#    greylisted at mx2 before the emptying passes on its retry); the
#    newcomer yields (log, status, metric) and keeps running; started
#    again while Redis is away from it, it yields once it reaches Redis;
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"

[ -x /usr/bin/redis-server ] || { echo "no redis-server (scripts/deps installs it): skipped"; exit 77; }

netns_init
for host in sender mx1 mx2 mx3 redis; do netns_host $host; done
netns_link sender 203.0.113.10/28 mx1 203.0.113.1/28
netns_link mx1 198.51.100.1/28 redis 198.51.100.2/28
netns_link mx2 198.51.100.17/28 redis 198.51.100.18/28
netns_link mx3 198.51.100.33/28 redis 198.51.100.34/28

. "$here/../lib/shared-site.sh"
redis_setup 198.51.100.2 198.51.100.18 198.51.100.34

# Each gateway the policy door alone (no capture: nothing but the store
# to share), delay 1 s.
site_conf() { # NAME REDIS_ADDRESS [DELAY]
	gg_conf "$1" "$2" "[policy]
listen = inet:127.0.0.1:10023"
	sed -i -e 's/^interface = any$/gateway = no/' -e "s/^delay = 3\$/delay = ${3:-1}/" \
		"$NETNS_TMP/$1/greygate.conf"
}
site_conf mx1 198.51.100.2
site_conf mx2 198.51.100.18
gg_start mx1
gg_start mx2
client=203.0.113.10
net=203.0.113.0/24

postfix_new rx1 mx1 "203.0.113.1" "
smtpd_recipient_restrictions = check_policy_service inet:127.0.0.1:10023, permit_mynetworks, reject"
postfix_start rx1
postfix_wait_listening rx1 203.0.113.1 || fail "mx1's Postfix is not listening"
rcpt() { # [SENDER]
	SMTP_SENDER=${1:-alice@client.test} nsx sender python3 "$here/../lib/smtp-session.py" \
		try "$client" 203.0.113.1 || true
}

# The client passes at mx1: greylisted, then its retry after the delay.
[[ "$(rcpt)" == *"RCPT 450"* ]] || fail "the first attempt was not greylisted"
sleep 1.2
reply=$(rcpt)
[[ "$reply" == *"RCPT 250"* ]] || fail "the retry did not pass: $reply"
wait_for 5 eval '[ "$(ggctl mx2 status --json | jq .shared.passes_known)" -ge 1 ]' ||
	fail "mx2 did not hear of the pass"
echo "ok: a client passed at mx1, mx2 knows of it"

# --- D2: the store lacks a pass a gateway holds ---
[ "$(rcli DEL "gg:pass:$net")" = 1 ] || fail "no pass key in Redis"
reply=$(rcpt new-sender@client.test)
[[ "$reply" == *"RCPT 250"* ]] || fail "a pass mx1 holds, gone from Redis, was answered: $reply"
[ "$(rcli EXISTS "gg:pass:$net")" = 1 ] || fail "the pass was not written back"
echo "ok: a pass gone from Redis is still a pass at the gateway that holds it, and is written back"

# --- R1: Redis answers -LOADING for seconds after a restart ---
for i in $(seq 1 2000); do echo "SET filler:$i x"; done | rcli >/dev/null
rcli SAVE >/dev/null
redis_stop
cp "$rdir/redis.conf" "$rdir/redis.conf.plain"
printf 'loading-process-events-interval-bytes 1024\nkey-load-delay 1500\n' >>"$rdir/redis.conf"
netns_spawn redis /usr/bin/redis-server "$rdir/redis.conf"
REDIS_PID=$SPAWNED
wait_for 10 logged mx1 "LOADING" || fail "mx1 did not say Redis answers LOADING: $(grep store: "$(gg_log mx1)" | tail -3)"
wait_for 20 grep -q "Done loading" "$rdir/redis.log" || fail "Redis did not load"
wait_for 3 eval 'ggctl mx1 status | grep -q "^store: .*connected"' ||
	fail "mx1 not back 3 s after Redis loaded: $(ggctl mx1 status | grep store:)"
echo "ok: Redis loading its data for $(grep -o 'loaded from disk: [0-9.]* seconds' "$rdir/redis.log" | grep -o '[0-9.]*') s: mx1 asked again and came back"

# --- D1, D5: a newcomer with other settings first at an emptied Redis ---
# (and D2's waiting triplets: a sender mx2 greylisted just before)
waiter=2001:db8:77::1
triplet="gg:grey:2001:db8:77::/64 carol@sender.test dave@example.org"
[[ "$(ask_door mx2 $waiter)" == action=DEFER_IF_PERMIT* ]] || fail "the waiter was not greylisted at mx2"
[ "$(rcli EXISTS "$triplet")" = 1 ] || fail "no triplet key in Redis for the waiter"
cut() { nsx "$1" nft -f - <<NFT
table inet cut {
	chain out { type filter hook output priority 0; ip daddr $2 drop; }
}
NFT
}
cut mx1 198.51.100.2
cut mx2 198.51.100.18
redis_stop
mv "$rdir/redis.conf.plain" "$rdir/redis.conf"
rm -f "$rdir/dump.rdb"
redis_start
site_conf mx3 198.51.100.34 5
gg_start mx3
[ "$(rcli HGET gg:config delay)" = 5 ] || fail "the newcomer did not write its settings into the empty store"
nsx mx1 nft delete table inet cut
nsx mx2 nft delete table inet cut
# (an attempt meets the old connection's end at once)
ask_door mx1 $client >/dev/null || true
ask_door mx2 $client >/dev/null || true
wait_for 15 eval '[ "$(rcli HGET gg:config delay)" = 1 ]' ||
	fail "the site's settings were not put back: $(rcli HGETALL gg:config | tr '\n' ' ')"
wait_for 15 logged mx3 "this gateway yields" ||
	fail "the newcomer did not yield: $(grep store: "$(gg_log mx3)" | tail -3)"
for gw in mx1 mx2 mx3; do
	kill -0 "${GG_PID[$gw]}" || fail "$gw stopped: $(tail -3 "$(gg_log $gw)")"
done
! grep -h "stopping" "$(gg_log mx1)" "$(gg_log mx2)" || fail "a gateway of the site said it stops"
logged mx1 "this site's are back" || logged mx2 "this site's are back" ||
	fail "neither gateway said it put the site's settings back"
ggctl mx3 status | grep "^store: .*SETTINGS DISAGREE, this gateway yields" >/dev/null ||
	fail "the newcomer's status: $(ggctl mx3 status | grep store:)"
ggctl mx3 metrics | grep -x "greygate_shared_settings_disagree 1" >/dev/null ||
	fail "no greygate_shared_settings_disagree 1"
ggctl mx1 metrics | grep -x "greygate_shared_settings_disagree 0" >/dev/null ||
	fail "mx1 says it disagrees"
echo "ok: the newcomer that wrote delay 5 into the emptied store yields; mx1 and mx2 run on with delay 1"
# The yielding gateway writes nothing, but greylists from what it
# greylisted itself: a retry after its delay (5 s) passes there (issue
# 57: each was reason=new, and mail whose retries all reached it never
# passed). (Redis away is the same path: decided from what is known here.)
yielder=2001:db8:78::1
[[ "$(ask_door mx3 $yielder)" == action=DEFER_IF_PERMIT* ]] || fail "the yielding gateway did not greylist a new client"
sleep 5.5
reply=$(ask_door mx3 $yielder)
[[ "$reply" != action=DEFER_IF_PERMIT* ]] ||
	fail "the yielding gateway's retry after its delay was greylisted again: $reply; $(grep "client_address=$yielder" "$(gg_log mx3)")"
[ "$(grep -c "action=greylist, reason=new, client_address=$yielder," "$(gg_log mx3)")" = 1 ] ||
	fail "the yielding gateway saw the triplet new more than once: $(grep "client_address=$yielder" "$(gg_log mx3)")"
echo "ok: the yielding gateway greylists from its own: a retry after its delay passes there ($reply)"
for gw in mx1 mx2; do
	wait_for 5 logged $gw "store: Redis at redis://" ||
		fail "$gw said nothing of the emptied Redis"
	logged $gw "was emptied since this gateway last agreed" ||
		fail "$gw did not say Redis was emptied: $(grep store: "$(gg_log $gw)" | tail -4)"
	! logged $gw "trimmed past" || fail "$gw called the emptied Redis a trimmed stream"
done
wait_for 5 eval '[ "$(rcli EXISTS "gg:pass:$net")" = 1 ]' ||
	fail "the pass the gateways held was not written back into the emptied store"
reply=$(rcpt third-sender@client.test)
[[ "$reply" == *"RCPT 250"* ]] || fail "the passed client after the emptying: $reply"
wait_for 5 eval '[ "$(rcli EXISTS "$triplet")" = 1 ]' ||
	fail "the triplet mx2 greylisted was not written back into the emptied store: $(grep "written back" "$(gg_log mx2)" | tail -2)"
logged mx2 "1 triplet(s) greylisted here lately written back" ||
	fail "mx2 did not say it wrote the triplet back: $(grep "written back" "$(gg_log mx2)" | tail -2)"
reply=$(ask_door mx2 $waiter)
[[ "$reply" != action=DEFER_IF_PERMIT* ]] || fail "the waiter, retrying after the delay, waits a whole delay again: $reply"
echo "ok: mx1 and mx2 say Redis was emptied and write back the pass they hold (the client still passes) and the triplet mx2 greylisted (its retry passes)"

# --- D1 in another order: the newcomer started while Redis is away from
# it runs on its own settings; once it reaches Redis it yields, and the
# site's settings stay ---
kill "${GG_PID[mx3]}"
wait "${GG_PID[mx3]}" || fail "mx3 did not stop cleanly"
yielded=$(grep -c "this gateway yields" "$(gg_log mx3)")
away=$(grep -c "new clients are greylisted meanwhile" "$(gg_log mx3)") || true
cut mx3 198.51.100.34
gg_start mx3
wait_for 10 eval '[ "$(grep -c "new clients are greylisted meanwhile" "$(gg_log mx3)")" -gt "$away" ]' ||
	fail "mx3 did not say Redis was away at its start: $(grep store: "$(gg_log mx3)" | tail -3)"
nsx mx3 nft delete table inet cut
ask_door mx3 $client >/dev/null || true
wait_for 20 eval '[ "$(grep -c "this gateway yields" "$(gg_log mx3)")" -gt "$yielded" ]' ||
	fail "the newcomer started while Redis was away did not yield: $(grep store: "$(gg_log mx3)" | tail -3)"
[ "$(rcli HGET gg:config delay)" = 1 ] || fail "the newcomer started while Redis was away wrote its settings: $(rcli HGETALL gg:config | tr '\n' ' ')"
for gw in mx1 mx2 mx3; do
	kill -0 "${GG_PID[$gw]}" || fail "$gw stopped: $(tail -3 "$(gg_log $gw)")"
done
echo "ok: a newcomer with delay 5 started while Redis was away from it yields once it reaches Redis; the site keeps delay 1"

# --- greygatectl release on a shared store: every gateway passes it ---
released=2001:db8:78::1
[[ "$(ask_door mx1 $released)" == action=DEFER_IF_PERMIT* ]] || fail "the client to release was not greylisted at mx1"
out=$(ggctl mx2 release $released --from carol@sender.test --to dave@example.org) || fail "release at mx2: $out"
[[ "$out" == "releasing $released (key 2001:db8:78::/64) through the shared store"* ]] || fail "release at mx2 said: $out"
wait_for 5 logged mx2 "action=pass, reason=released, key=2001:db8:78::/64" || fail "mx2 did not log the release"
wait_for 5 eval '[ "$(rcli EXISTS "gg:pass:2001:db8:78::/64")" = 1 ]' || fail "the release is not in Redis"
wait_for 5 eval '[[ "$(ask_door mx1 $released)" != action=DEFER_IF_PERMIT* ]]' ||
	fail "mx1 still greylists the client released at mx2: $(ask_door mx1 $released)"
echo "ok: a client released at mx2 (its triplet waited at mx1) passes at mx1"

# --- Redis stopped (SIGSTOP), then going on: a gap, never an emptying
# (issue 57 item 9: the log said "Redis was emptied and written anew
# since") ---
emptied_before=$(cat "$(gg_log mx1)" "$(gg_log mx2)" | grep -c "was emptied" || true)
kill -STOP "$REDIS_PID"
netns_on_exit "kill -CONT $REDIS_PID"
sleep 6
kill -CONT "$REDIS_PID"
wait_for 20 eval '[[ "$(ask_door mx1 $released)" != action=DEFER_IF_PERMIT* ]]' ||
	fail "mx1 does not answer from Redis after it went on"
sleep 3
[ "$(cat "$(gg_log mx1)" "$(gg_log mx2)" | grep -c "was emptied" || true)" = "$emptied_before" ] ||
	fail "a stopped Redis was said emptied: $(grep -h "was emptied" "$(gg_log mx1)" "$(gg_log mx2)" | tail -2)"
echo "ok: Redis stopped 6 s and going on: no gateway says it was emptied"

for gw in mx1 mx2 mx3; do
	kill "${GG_PID[$gw]}"
	wait "${GG_PID[$gw]}" || fail "$gw did not stop cleanly"
done
echo "ok: the three gateways stop cleanly"
