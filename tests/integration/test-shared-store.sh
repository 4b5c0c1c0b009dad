#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two MX gateways sharing one greylist in Redis, all real parts: a
# redis-server (Debian's, requirepass set) on a host of its own, two
# gateways 'mx1' and 'mx2', each with greygated and its own receiving
# Postfix, and a sending Postfix on 'sender' that tries mx1, then mx2 (two
# relayhosts in turn). Asserted:
#  - the first attempt at mx1 hears 451; the retry lands on mx2 and passes
#    there (mx2 never saw the first attempt); within a second mx1's pass4
#    holds the sender's network too; the mail is delivered, and later
#    mail goes straight through either gateway;
#  - a gateway whose client_prefix4 differs refuses to start, naming the
#    key and both values; one under another's name starts and says so;
#  - mx1 killed with -9 while mx2 passes a client and allows a network:
#    restarted, mx1 rebuilds its sets from the keys and holds both; an
#    allow entry made at mx1 (greygatectl allow) is in mx2's set within
#    a second;
#  - Redis stopped mid-run (SIGSTOP, 10 s; 6 s with GG_QUICK=1):
#    no crash, a new client hears 451 only, a passed client asking
#    through the policy door is still passed (at mx2, which passed it,
#    and at mx1, which learned it), an allow entry made meanwhile holds
#    at once, what was decided and allowed meanwhile is written when
#    Redis answers again (the entry reaches mx1), and that client's retry
#    passes;
#  - greygated --store-copy to-lmdb copies the shared greylist (and the
#    run-time allow entries) into mx1's LMDB store; Redis restarted with an empty dataset: the gateway says
#    so and agrees again, the passes in the kernel's sets go on; the copy
#    goes back with --store-copy to-redis, mx2 hears of its passes, and
#    mx1 started again rebuilds its sets from them;
#  - a client forgotten at mx2 (greygatectl forget) is gone from Redis
#    (its pass and triplet) and from mx1's set within a second;
#    greygatectl list pass, grey and trap read the shared store, 3,000
#    passes too;
#  - greygatectl report --site sums both gateways' figures (text, JSON,
#    SVG), and says what it could not read.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/handoff.sh"

[ -x /usr/bin/redis-server ] || { echo "no redis-server (scripts/deps installs it): skipped"; exit 77; }
outage=10
[ -z "${GG_QUICK:-}" ] || outage=6

netns_init
netns_host sender
netns_host mx1
netns_host mx2
netns_host redis
# The sender reaches each gateway on a link of its own; both of its
# addresses are in 203.0.113.0/24, the one network greylisting keys it by.
netns_link sender 203.0.113.10/28 mx1 203.0.113.1/28
netns_link sender 203.0.113.20/28 mx2 203.0.113.17/28
# Clients of the later steps, each in a network of its own.
netns_link sender 198.51.100.100/28 mx2 198.51.100.97/28 \
	2001:db8:9::10/64 2001:db8:9::1/64
netns_link mx1 198.51.100.1/28 redis 198.51.100.2/28
netns_link mx2 198.51.100.17/28 redis 198.51.100.18/28

# --- Redis, on its own host, with a password ---
. "$here/../lib/shared-site.sh"
redis_setup 198.51.100.2 198.51.100.18

# --- the gateways ---
in_pass4() { in_set "$1" pass4 "$2"; }
in_pass6() { in_set "$1" pass6 "$2"; }
session() { nsx sender python3 "$here/../lib/smtp-session.py" "$@"; }

# (each with the policy door open too: asked during the outage below)
door_conf="[policy]
listen = inet:127.0.0.1:10023"
gg_conf mx1 198.51.100.2 "$door_conf"
gg_conf mx2 198.51.100.18 "$door_conf"
gg_start mx1
gg_start mx2
for gw in mx1 mx2; do
	logged $gw "store: shared in Redis at redis://" || fail "$gw: not on the shared store"
done
[ "$(rcli HGET gg:config client_prefix4)" = 24 ] || fail "the keys were not recorded in Redis"
echo "ok: two gateways share one Redis and agree on the keys"
# What status and the metrics say of it.
ggctl mx1 status | grep "^store: *redis://198.51.100.2:6379/0, connected, stream followed" >/dev/null ||
	fail "status: $(ggctl mx1 status)"
ggctl mx1 status | grep "^sets: .*passes and traps: from every gateway, counted nowhere here" >/dev/null ||
	fail "status shows set counts it does not keep: $(ggctl mx1 status | grep sets:)"
[ "$(ggctl mx1 status --json | jq -c '[.shared.up, .sets.pass4]')" = "[1,null]" ] ||
	fail "status --json: $(ggctl mx1 status --json | jq -c '{shared, sets}')"
metrics=$(ggctl mx1 metrics)
printf '%s\n' "$metrics" | promtool check metrics >/dev/null 2>&1 ||
	fail "promtool: $(printf '%s\n' "$metrics" | promtool check metrics 2>&1 | head -5)"
grep -x "greygate_shared_store_up 1" <<<"$metrics" >/dev/null || fail "no greygate_shared_store_up 1"
! grep 'set="pass4"' <<<"$metrics" >/dev/null || fail "a pass4 count it does not keep is exported"
echo "ok: status and metrics say the store is shared and connected"
# A reload of a setting the shared store agrees on changes nothing: the
# value kept and said, the child not started again (issue 29: it was,
# cutting the sessions it held).
child_pid() { ggctl "$1" status | sed -n 's/^child: *pid \([0-9]*\),.*/\1/p'; }
before=$(child_pid mx1)
[ -n "$before" ] || fail "no child in mx1's status: $(ggctl mx1 status | grep child:)"
sed -i 's/^delay = 3$/delay = 5/' "$NETNS_TMP/mx1/greygate.conf"
ggctl mx1 reload >/dev/null || fail "greygatectl reload failed"
wait_for 5 logged mx1 "reload: [greylist] delay kept at 3" || fail "the kept delay was not said"
[ "$(child_pid mx1)" = "$before" ] || fail "a refused change started the child again"
! logged mx1 "a new child takes over" || fail "a refused change started the child again (log)"
sed -i 's/^delay = 5$/delay = 3/' "$NETNS_TMP/mx1/greygate.conf"
echo "ok: a reload of the shared store's delay keeps it, says so, and leaves the child be"
# A pass the kernel's set cannot take (a /16 on the stream, as a gateway
# keying clients by /16 writes) is said and counted, not dropped unsaid
# (issue 29: set changes' results were ignored).
rcli XADD gg:stream '*' kind pass key 198.51.0.0/16 expires $(( $(date +%s) + 3600 )) by odd.test >/dev/null
wait_for 5 logged mx1 "nft: pass of 198.51.0.0/16 did not reach the kernel's set (Invalid argument): it meets the tarpit again until one of its attempts puts it back" ||
	fail "a pass the set refused was not said: $(grep nft: "$(gg_log mx1)" | tail -2)"
ggctl mx1 metrics | grep -x "greygate_set_changes_failed_total 1" >/dev/null ||
	fail "the failed set change was not counted: $(ggctl mx1 metrics | grep set_changes)"
echo "ok: a set change the kernel's set cannot take is said with what the client sees, and counted"

# --- a gateway that keys clients otherwise refuses to start ---
# (the policy door alone: no capture, no table to clash with mx1's)
gg_conf odd 198.51.100.2 "client_prefix4 = 16
[policy]
listen = unix:$NETNS_TMP/odd/policy.sock"
sed -i 's/^interface = any$/gateway = no/' "$NETNS_TMP/odd/greygate.conf"
rc=0
out=$(nsx mx1 "$GREYGATE_BUILD/daemon/greygated" --foreground --config "$NETNS_TMP/odd/greygate.conf" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "a gateway with client_prefix4 = 16 started: $out"
refusal=$(grep "cannot start" <<<"$out") || fail "no refusal (status $rc): $out"
[[ "$refusal" == *"client_prefix4 is 16 here but 24 in the shared store (set by mx1.test)"* ]] ||
	fail "the refusal does not name the key and both values: $out"
echo "ok: a disagreeing gateway refuses to start: ${refusal#*cannot start: }"

# --- a second gateway under mx1's name is said, not refused ---
gg_conf twin 198.51.100.2 "[policy]
listen = unix:$NETNS_TMP/twin/policy.sock"
sed -i -e 's/^interface = any$/gateway = no/' -e 's/^hostname = twin.test$/hostname = mx1.test/' \
	"$NETNS_TMP/twin/greygate.conf"
netns_spawn mx1 "$GREYGATE_BUILD/daemon/greygated" --foreground \
	--config "$NETNS_TMP/twin/greygate.conf" >>"$(gg_log twin)" 2>&1
GG_PID[twin]=$SPAWNED
wait_for 10 gg_up_again twin 0 || { cat "$(gg_log twin)"; fail "the twin did not start"; }
wait_for 5 logged twin "store: another gateway (instance $(cat "$NETNS_TMP/mx1/store/instance-id")) uses the name mx1.test in the shared store" ||
	fail "the twin did not say its name is taken: $(grep store: "$(gg_log twin)" | tail -3)"
ggctl twin status | grep "^store: .*ANOTHER GATEWAY USES THIS ONE'S NAME" >/dev/null ||
	fail "the twin's status does not say it: $(ggctl twin status | grep store:)"
ggctl twin metrics | grep -x "greygate_shared_name_clash 1" >/dev/null || fail "no greygate_shared_name_clash 1"
ggctl mx1 metrics | grep -x "greygate_shared_name_clash 0" >/dev/null || fail "mx1 says its name clashes already"
kill "${GG_PID[twin]}"
wait "${GG_PID[twin]}" || fail "the twin did not stop cleanly"
echo "ok: a second gateway under mx1's name says so (log, status, metrics)"

# --- the first attempt at mx1, the retry at mx2 ---
postfix_new rx1 mx1 "203.0.113.1"
postfix_new rx2 mx2 "203.0.113.17, 198.51.100.97, [2001:db8:9::1]"
postfix_start rx1
postfix_start rx2
postfix_wait_listening rx1 203.0.113.1 || fail "rx1 is not listening"
postfix_wait_listening rx2 203.0.113.17 || fail "rx2 is not listening"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = none"
outlog=$(postfix_log out)
out_send first
wait_for 20 grep "status=deferred.*451 4.7.1 <bob@example.org>: Greylisted" "$outlog" >/dev/null ||
	fail "the first attempt at mx1 was not greylisted: $(tail -3 "$outlog")"
# Held at once (its next try is 2 s away, the delay 3 s): the retry must
# go to mx2, however long the reload below takes on a busy machine (under
# ASan with other work running, mx1 once got it first and passed it).
nsx sender postsuper -c "$(postfix_dir out)" -h ALL 2>/dev/null
logged mx1 "action=greylist, reason=new, client=203.0.113.10" || fail "mx1 did not greylist it"
[ "$(rcli EXISTS "gg:grey:203.0.113.0/24 alice@sender.test bob@example.org")" = 1 ] ||
	fail "the first sight is not in Redis"
out_reconfigure "relayhost = [203.0.113.17]:25"
sleep 3
nsx sender postsuper -c "$(postfix_dir out)" -H ALL 2>/dev/null
nsx sender postqueue -c "$(postfix_dir out)" -f
wait_for 20 logged mx2 "action=pass, reason=retry-passed, client=203.0.113.20" ||
	{ tail -5 "$(gg_log mx2)"; fail "the retry at mx2 did not pass"; }
passed_at=$(date +%s%N)
wait_for 1 in_pass4 mx1 203.0.113.0/24 ||
	fail "mx1's pass4 does not hold the pass within a second (the stream: $(rcli XRANGE gg:stream - +))"
echo "ok: greylisted at mx1, passed at mx2, in mx1's set $(( ($(date +%s%N) - passed_at) / 1000000 )) ms later"
in_pass4 mx2 203.0.113.0/24 || fail "mx2's own pass4 does not hold it"
wait_for 30 mail_delivered rx2 first || fail "the mail was not delivered at mx2"
echo "ok: delivered at mx2"
out_reconfigure "relayhost = [203.0.113.1]:25"
out_send through-mx1
wait_for 20 mail_delivered rx1 through-mx1 || fail "later mail did not go straight through mx1"
out_reconfigure "relayhost = [203.0.113.17]:25"
out_send through-mx2
wait_for 20 mail_delivered rx2 through-mx2 || fail "later mail did not go straight through mx2"
! grep "status=deferred" "$outlog" >/dev/null || fail "later mail was deferred: $(grep status= "$outlog")"
echo "ok: later mail goes straight through either gateway"

# --- mx1 killed; mx2 passes a client meanwhile; mx1 catches up ---
kill -9 "${GG_PID[mx1]}"
wait "${GG_PID[mx1]}" 2>/dev/null || true
ggctl mx2 allow 2001:db8:77::/48 --comment "a bank, allowed at mx2" >/dev/null ||
	fail "greygatectl allow failed at mx2"
reply=$(session try 198.51.100.100 198.51.100.97) || true
[[ "$reply" == *"RCPT 451"* ]] || fail "a new client at mx2 was not greylisted: $reply"
sleep 3.2
reply=$(session try 198.51.100.100 198.51.100.97) || true
wait_for 5 logged mx2 "action=pass, reason=retry-passed, client=198.51.100.100" ||
	fail "its retry did not pass at mx2: $reply"
gg_start mx1
wait_for 5 in_pass4 mx1 198.51.100.0/24 || fail "restarted mx1 does not hold the pass made while it was down"
in_pass4 mx1 203.0.113.0/24 || fail "restarted mx1 lost the earlier pass"
logged mx1 "rebuilt from the shared store: 2 passed and 0 trapped clients, 1 new allow entries" ||
	fail "mx1 did not say it rebuilt its sets: $(grep rebuilt "$(gg_log mx1)")"
nsx mx1 nft list set inet greygate allow6 | grep -F "2001:db8:77::/48" >/dev/null ||
	fail "restarted mx1 does not allow what mx2 allowed while it was down"
echo "ok: mx1 killed -9 and restarted holds every pass and allow entry, those made while it was down too"
ggctl mx1 allow 198.51.100.64/26 --ttl 1h --comment "allowed at mx1" >/dev/null || fail "greygatectl allow failed at mx1"
wait_for 1 eval 'nsx mx2 nft list set inet greygate allow4 | grep -F "198.51.100.64/26" >/dev/null' ||
	fail "mx1's allow entry did not reach mx2's set within a second"
ggctl mx2 list allow | grep "198.51.100.64/26 .*allowed at mx1" >/dev/null || fail "mx2 does not list it: $(ggctl mx2 list allow)"
logged mx2 "action=allow, client=198.51.100.64/26" || fail "mx2 did not log the allow entry it took"
echo "ok: a run-time allow entry made at mx1 is in mx2's set within a second"
# Removed at mx2 (greygatectl disallow): gone from mx1's set within a
# second, and a mark in Redis keeps a gateway that was away from writing
# it back.
ggctl mx2 disallow 198.51.100.64/26 >/dev/null || fail "greygatectl disallow failed at mx2"
wait_for 1 eval '! nsx mx1 nft list set inet greygate allow4 | grep -F "198.51.100.64/26" >/dev/null' ||
	fail "mx2's disallow did not reach mx1's set within a second"
! nsx mx2 nft list set inet greygate allow4 | grep -F "198.51.100.64/26" >/dev/null || fail "mx2 still allows it"
! ggctl mx1 list allow | grep "198.51.100.64/26" >/dev/null || fail "mx1 still lists it"
logged mx1 "action=disallow, client=198.51.100.64/26 (from the shared store)" || fail "mx1 did not log the removal"
[ "$(rcli HGET gg:allow:198.51.100.64/26 expires)" = 1 ] || fail "no removal mark in Redis"
ttl=$(rcli TTL gg:allow:198.51.100.64/26)
[ "$ttl" -gt 2500000 ] && [ "$ttl" -le 2592000 ] || fail "the removal mark lasts $ttl s, not 30 days"
echo "ok: greygatectl disallow at mx2: out of mx1's set within a second, a 30-day mark in Redis"

# --- Redis stops answering for a while ---
kill -STOP "$REDIS_PID"
reply=$(session try 2001:db8:9::10 2001:db8:9::1) || true
[[ "$reply" == *"RCPT 451"* ]] || fail "a new client during the outage did not hear 451: $reply"
wait_for 10 logged mx2 "store: Redis at redis://198.51.100.18:6379/0: no answer within" ||
	fail "mx2 did not say Redis is away: $(grep store: "$(gg_log mx2)" | tail -3)"
# A passed client asking through the door is still passed: at mx2, which
# passed it; at mx1 (restarted since), which learned it from the keys.
for gw in mx2 mx1; do
	answer=$(ask_door $gw 203.0.113.10) || fail "$gw's door did not answer"
	[ "$answer" = "action=DUNNO" ] || fail "$gw's door, Redis away, for a passed client: $answer"
done
# What it decides from is what it lists, said as such (it failed before).
listed=$(ggctl mx1 list pass) || fail "mx1's list pass failed while Redis was away: $listed"
grep "^203.0.113.0/24 .* - *- *$" <<<"$listed" >/dev/null ||
	fail "mx1 does not list the pass it knows while Redis is away: $listed"
grep -F "(Redis is away: the passes this gateway knows" <<<"$listed" >/dev/null ||
	fail "mx1's list pass does not say Redis is away: $listed"
[ "$(ggctl mx1 list pass --json | jq -r '.[] | select(.client == "203.0.113.0/24") | .deliveries')" = null ] ||
	fail "list pass --json gives counts it does not know while Redis is away"
answer=$(ask_door mx2 2001:db8:5555::1) || fail "mx2's door did not answer"
[[ "$answer" == "action=DEFER_IF_PERMIT "* ]] || fail "mx2's door, Redis away, for a new client: $answer"
# An allow entry made meanwhile holds at once here, and goes to the
# others when Redis is back.
ggctl mx2 allow 2001:db8:66::/48 --comment "allowed while Redis was away" >/dev/null ||
	fail "greygatectl allow failed at mx2 while Redis was away"
logged mx2 "allow 2001:db8:66::/48: Redis is away: allowed here now, at the other gateways once it is back" ||
	fail "mx2 did not say the allow entry waits: $(grep allow "$(gg_log mx2)" | tail -2)"
nsx mx2 nft list set inet greygate allow6 | grep -F "2001:db8:66::/48" >/dev/null ||
	fail "mx2 does not hold its own allow entry while Redis is away"
# One allowed and removed again meanwhile: both go, in that order.
ggctl mx2 allow 2001:db8:67::/48 >/dev/null || fail "greygatectl allow 2001:db8:67::/48 failed while Redis was away"
ggctl mx2 disallow 2001:db8:67::/48 >/dev/null || fail "greygatectl disallow failed while Redis was away"
logged mx2 "disallow 2001:db8:67::/48: Redis is away: removed here now, at the other gateways once it is back" ||
	fail "mx2 did not say the removal waits: $(grep allow "$(gg_log mx2)" | tail -2)"
sleep "$outage"
kill -0 "${GG_PID[mx2]}" || fail "mx2 died while Redis was away"
ggctl mx2 status | grep "store:.*AWAY" >/dev/null || fail "status does not say Redis is away: $(ggctl mx2 status)"
kill -CONT "$REDIS_PID"
wait_for 40 logged mx2 "is back after" || fail "mx2 did not see Redis back"
grep -E "writing [0-9]+ decision\(s\) made while Redis was away" "$(gg_log mx2)" >/dev/null ||
	fail "what mx2 decided meanwhile was not written: $(grep store: "$(gg_log mx2)" | tail -3)"
[ "$(rcli EXISTS "gg:grey:2001:db8:9::/64 alice@client.test bob@example.org")" = 1 ] ||
	fail "the first sight made during the outage is not in Redis"
reply=$(session try 2001:db8:9::10 2001:db8:9::1) || true
wait_for 5 logged mx2 "action=pass, reason=retry-passed, client=2001:db8:9::10" ||
	fail "the client greylisted during the outage did not pass later: $reply"
# (mx1's idle connections meet the outage too, and reconnect within 4 s)
wait_for 6 in_pass6 mx1 2001:db8:9:: || fail "that pass did not reach mx1"
logged mx2 "allow: writing 3 entries made while Redis was away" ||
	fail "mx2 did not write the allow entry made meanwhile"
wait_for 6 eval 'nsx mx1 nft list set inet greygate allow6 | grep -F "2001:db8:66::/48" >/dev/null' ||
	fail "the allow entry made while Redis was away did not reach mx1"
[ "$(rcli HGET gg:allow:2001:db8:66::/48 comment)" = "allowed while Redis was away" ] ||
	fail "the allow entry is not in Redis"
[ "$(rcli HGET gg:allow:2001:db8:67::/48 expires)" = 1 ] || fail "the removal made while Redis was away is not in Redis"
wait_for 6 eval '! nsx mx1 nft list set inet greygate allow6 | grep -F "2001:db8:67::/48" >/dev/null' ||
	fail "mx1 allows what mx2 allowed and removed while Redis was away"
kill -0 "${GG_PID[mx1]}" || fail "mx1 died"
ggctl mx2 status | grep "store:.*connected" >/dev/null || fail "status does not say connected: $(ggctl mx2 status)"
[ "$(ggctl mx1 status --json | jq '.shared.from_known')" -ge 1 ] ||
	fail "mx1 counted no decision from a known pass: $(ggctl mx1 status --json | jq -c .shared)"
echo "ok: Redis away for ${outage} s: 451 meanwhile to new clients, passed clients still passed at the door and listed, an allow entry held here, all written when back, the client passes later"

# --- the greylist copied out of Redis into mx1's LMDB store ---
kill "${GG_PID[mx1]}"
wait "${GG_PID[mx1]}" || fail "mx1 did not stop cleanly"
# (an allow entry in Redis alone, not on the stream: mx1 has not heard
# of it, the copy brings it)
rcli HSET gg:allow:198.51.100.128/28 expires 0 comment "in Redis alone" by mx9.test >/dev/null
copied=$(nsx mx1 "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/mx1/greygate.conf" --store-copy to-lmdb) ||
	fail "--store-copy to-lmdb failed: $copied"
[[ "$copied" == *"copied "[1-9]*" triplets, 3 passes, 0 traps and 3 run-time allow entries from redis://198.51.100.2:6379/0 to LMDB in $NETNS_TMP/mx1/store;"*" 0 failed" ]] ||
	fail "unexpected: $copied"
grep -Fx "198.51.100.128/28 0 in Redis alone" "$NETNS_TMP/mx1/store/allow-runtime.txt" >/dev/null ||
	fail "the allow entry in Redis is not in mx1's list: $(cat "$NETNS_TMP/mx1/store/allow-runtime.txt")"
echo "ok: ${copied#greygated: }"

# --- Redis restarted empty ---
redis_stop
redis_start
for gw in mx2; do
	wait_for 40 logged $gw "store: Redis was emptied" ||
		fail "$gw did not notice the emptied Redis: $(grep store: "$(gg_log $gw)" | tail -3)"
done
wait_for 10 eval '[ "$(rcli HGET gg:config delay)" = 3 ]' || fail "the keys were not agreed again"
kill -0 "${GG_PID[mx2]}" || fail "mx2 died"
# (mx2's run-time allow list, its own entries and those it took, back in
# the store)
wait_for 5 logged mx2 "allow: 2 run-time entries the shared store lacked written from this gateway's list" ||
	fail "mx2 did not share its allow list with the emptied Redis: $(grep allow: "$(gg_log mx2)" | tail -3)"
[ "$(rcli HGET gg:allow:2001:db8:77::/48 comment)" = "a bank, allowed at mx2" ] ||
	fail "mx2's allow entry is not in the emptied Redis again"
in_pass4 mx2 203.0.113.0/24 || fail "mx2's passes went with the emptied Redis"
out_send after-empty
wait_for 20 mail_delivered rx2 after-empty || fail "a passed client's mail did not go straight through after Redis was emptied"
echo "ok: an emptied Redis is noticed, the keys agreed again, the sets' passes go on"

# --- and copied back into the empty Redis: every gateway has it again ---
copied=$(nsx mx1 "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/mx1/greygate.conf" --store-copy to-redis) ||
	fail "--store-copy to-redis failed: $copied"
[[ "$copied" == *" 3 passes, 0 traps and 3 run-time allow entries from LMDB in $NETNS_TMP/mx1/store to redis://"*" 0 failed" ]] ||
	fail "unexpected: $copied"
[ "$(rcli --scan --pattern 'gg:pass:*' | wc -l)" = 3 ] || fail "the passes are not in Redis again"
[ "$(rcli HGET gg:allow:2001:db8:77::/48 comment)" = "a bank, allowed at mx2" ] &&
	[ "$(rcli HGET gg:allow:198.51.100.128/28 comment)" = "in Redis alone" ] &&
	[ "$(rcli EXISTS gg:allow:198.51.100.64/26)" = 0 ] ||
	fail "the allow entries are not in Redis again: $(rcli --scan --pattern 'gg:allow:*')"
[ "$(rcli EXISTS "gg:grey:2001:db8:9::/64 alice@client.test bob@example.org")" = 1 ] ||
	fail "the triplets are not in Redis again"
wait_for 2 eval '[ "$(ggctl mx2 status --json | jq .shared.events)" -ge 3 ]' ||
	fail "mx2 did not hear of the copied passes: $(ggctl mx2 status --json | jq -c .shared)"
gg_start mx1
wait_for 5 logged mx1 "rebuilt from the shared store: 3 passed" || fail "mx1 did not rebuild its sets from the copy"
echo "ok: ${copied#greygated: }; mx2 heard of its passes, mx1 rebuilt from them"

# --- a client forgotten at mx2 is forgotten at mx1 too ---
in_pass6 mx1 2001:db8:9:: || fail "mx1 lost the IPv6 pass before the forget"
said=$(ggctl mx2 forget 2001:db8:9::10) || fail "forget failed: $said"
[[ "$said" == "forgetting 2001:db8:9::10 (key 2001:db8:9::/64) in the shared store"* ]] || fail "unexpected: $said"
wait_for 1 eval '! in_pass6 mx1 2001:db8:9::' || fail "mx1's pass6 still holds the network forgotten at mx2"
! in_pass6 mx2 2001:db8:9:: || fail "mx2's pass6 still holds it"
wait_for 2 logged mx2 "action=forget, key=2001:db8:9::/64, records=2 (the shared store's" ||
	fail "the forget's records were not counted: $(grep forget "$(gg_log mx2)")"
[ "$(rcli --scan --pattern 'gg:*2001:db8:9::*' | wc -l)" = 0 ] || fail "its keys are in Redis still"
[ "$(rcli --scan --pattern 'gg:pass:*' | wc -l)" = 2 ] || fail "the other passes went too"
echo "ok: a client forgotten at mx2 is gone from Redis and from mx1's set within a second"

# --- greygatectl list on the shared store ---
ggctl mx1 list pass | grep "^203.0.113.0/24 " >/dev/null || fail "mx1 does not list the pass: $(ggctl mx1 list pass)"
[ "$(ggctl mx2 list grey --json | jq '[.[] | select(.sender == "alice@sender.test")] | length')" -ge 1 ] ||
	fail "mx2 does not list the triplets: $(ggctl mx2 list grey)"
[ "$(ggctl mx1 list trap | wc -l)" = 1 ] || fail "unexpected traps: $(ggctl mx1 list trap)"
# 3,000 more passes (written straight into Redis): several walks' batches
expires=$(( $(date +%s) + 3600 ))
for i in $(seq 3000); do
	printf 'HSET "gg:pass:2001:db8:aaaa:%x::/64" since 1 expires %s refreshed 1 deliveries 0 sessions 0\n' "$i" "$expires"
done | rcli --pipe >/dev/null
rows=$(ggctl mx1 list pass --json | jq length)
[ "$rows" = 3002 ] || fail "list pass --json gave $rows rows, not 3002"
[ "$(ggctl mx2 list pass | grep -c '^2001:db8:aaaa:')" = 3000 ] || fail "list pass lost rows"
echo "ok: greygatectl list pass, grey and trap read the shared store ($rows passes, as they come)"

# --- the site's report: every gateway's figures, summed ---
# (each gateway writes its own every 5 s when they changed; mx1's is
# counted now; Redis restarted empty above lost the first ones)
own() { ggctl "$1" report --json | jq ".funnel.$2"; }
site_sums() {
	local site
	site=$(ggctl mx1 report --site --json) || return 1
	[ "$(jq -c '[.gateways[].name]' <<<"$site")" = '["mx1.test","mx2.test"]' ] &&
	[ "$(jq .funnel.attempts <<<"$site")" = $(( $(own mx1 attempts) + $(own mx2 attempts) )) ] &&
	[ "$(jq .funnel.passed_retry <<<"$site")" = $(( $(own mx1 passed_retry) + $(own mx2 passed_retry) )) ]
}
wait_for 12 site_sums ||
	fail "the site's report does not sum mx1's and mx2's: $(ggctl mx1 report --site --json | jq -c '{funnel, gateways}'), mx1 $(own mx1 attempts), mx2 $(own mx2 attempts)"
[ "$(own mx2 passed_retry)" -ge 1 ] || fail "mx2 counted no pass by retry"
# (mx1, restarted above, writes its figures within 5 s of agreeing)
wait_for 12 eval '[ "$(rcli EXISTS gg:report:mx1.test)" = 1 ]' ||
	fail "mx1 did not write its figures to Redis"
rcli HSET gg:report:mx9.test figures "not figures" updated 1 >/dev/null
site=$(ggctl mx2 report --site) || fail "report --site failed at mx2"
grep "^greygate report, site of 2 gateways, " <<<"$site" >/dev/null &&
	grep "^mx1.test .* ago " <<<"$site" >/dev/null &&
	grep "^mx2.test .* now " <<<"$site" >/dev/null &&
	grep "^(1 gateway record(s) could not be read: left out)" <<<"$site" >/dev/null ||
	fail "report --site at mx2: $site"
ggctl mx1 report --site --svg "$NETNS_TMP/site.svg" && grep -q "site of 2 gateways" "$NETNS_TMP/site.svg" ||
	fail "report --site --svg"
echo "ok: greygatectl report --site sums every gateway's figures ($(own mx1 attempts) + $(own mx2 attempts) attempts)"

for gw in mx1 mx2; do
	kill "${GG_PID[$gw]}"
	wait "${GG_PID[$gw]}" || fail "$gw did not stop cleanly"
	! grep -E "ERROR|AddressSanitizer|runtime error" "$(gg_log $gw)" || fail "$gw logged errors"
done
echo "ok: both gateways stop cleanly"
