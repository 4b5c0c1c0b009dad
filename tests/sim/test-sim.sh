#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate-sim on small hand-made workloads whose outcome can be worked out
# by hand (delay 300 s, the default): a Postfix-like sender is delivered
# at its first attempt after its client passed, 900 s after the first; a
# pool sender rotating over two /16s waits until it returns to a network
# that passed, 3600 s (pooled by its SPF domain, 2700 s, or 900 s with
# the hand-off); a STARTTLS sender is greylisted by its network
# (tls_pass = greylist, the default: passed by its STARTTLS at 300 s,
# delivered by the retry after, 600 s; with tls_pass = yes it passes at
# once and is delivered at its first retry); bots are stopped; with the
# hand-off the retry that passes delivers, a STARTTLS sender at 300 s
# (its first attempt with tls_pass = yes, which lets STARTTLS bots in
# too); the same seed gives the same month, and bad workloads are clear
# errors.
set -euo pipefail
sim=$GREYGATE_BUILD/tools/greygate-sim
tmp=$(mktemp -d /tmp/greygate-sim-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run() { # WORKLOAD-TEXT [CONFIG-TEXT]: prints the JSON (the hand-off off
	# unless CONFIG-TEXT has a [handoff] section, lookups off unless it
	# has [signals])
	printf '[sim]\ndays = 1\n%s\n' "$1" >"$tmp/w.ini"
	: >"$tmp/c.conf"
	case "${2:-}" in
	*"[handoff]"*) ;;
	*) printf '[handoff]\nmode = off\n' >>"$tmp/c.conf" ;;
	esac
	case "${2:-}" in
	*"[signals]"*) ;;
	*) printf '[signals]\nlookups = no\n' >>"$tmp/c.conf" ;;
	esac
	printf '%s\n' "${2:-}" >>"$tmp/c.conf"
	"$sim" --workload "$tmp/w.ini" --config "$tmp/c.conf" --json 2>/dev/null
}
handoff="[handoff]
mode = proxy-v2
address = 127.0.0.1:10025"
tls_yes="[greylist]
tls_pass = yes"
# One message each, from one address, as a Postfix and a STARTTLS sender.
postfix="[class postfix]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7
retry = 5m, 10m, 20m"
tls="[class tls]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7
retry = 5m
starttls = yes"
check() { # JSON JQ-EXPR WHAT
	echo "$1" | jq -e "$2" >/dev/null || fail "$3: $(echo "$1" | jq -c .sim)"
}

out=$(run "$postfix")
check "$out" '.sim.legit_delivered == 1 and .sim.legit_delayed == 1 and .sim.delay.max == 900 and
	.report.funnel.passed_retry == 1 and .sim.sessions == 3' "postfix-like"
echo "ok: a Postfix-like sender: 451 at 0 s, passes at 300 s, delivered at 900 s"

out=$(run "[class pool]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7, 203.0.113.9
pick = rotate
retry = 15m")
check "$out" '.sim.legit_delivered == 1 and .sim.delay.max == 3600 and .sim.sessions == 5 and
	.report.funnel.passed_retry == 2' "pool over two /16s"
echo "ok: a pool over two /16s is delivered when it returns to a passed network: 3600 s"

# The same pool with SPF passing (its servers named in its domain) and
# pool_spf (with lookups, trust = no): its triplet
# is the pool's, so the retry from the other /16 passes (900 s) and the
# next, from the first, passes it too; delivered by the one after, on the
# fast path (2700 s); with the hand-off by the first retry (900 s).
spf_pool="[class pool]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7, 203.0.113.9
pick = rotate
retry = 15m
fcrdns = 100%
aligned = 100%
spf_pass = yes"
# (trust = no: a client pooling counts for is one fcrdns+spf would pass
# at once)
lookups="[signals]
lookups = yes
trust = no"
out=$(run "$spf_pool" "$lookups")
check "$out" '.sim.pool_spf and .sim.legit_delivered == 1 and .sim.delay.max == 2700 and .sim.sessions == 4 and
	.report.funnel.passed_retry == 2' "pool with SPF, pooled"
out=$(run "$spf_pool" "$lookups
$handoff")
check "$out" '.sim.legit_delivered == 1 and .sim.delay.max == 900 and .sim.sessions == 2' "pool with SPF, pooled, hand-off"
out=$(run "$spf_pool" "$lookups
pool_spf = no")
check "$out" '(.sim.pool_spf | not) and .sim.delay.max == 3600' "pool with SPF, pool_spf = no"
echo "ok: a pool whose SPF passes, pooled: delivered at 2700 s (900 s with the hand-off) instead of 3600 s"

out=$(run "$tls" "$tls_yes")
check "$out" '.sim.legit_delivered == 1 and .sim.delay.max == 300 and .report.funnel.passed_other == 1' "STARTTLS, tls_pass = yes"
echo "ok: tls_pass = yes: a STARTTLS sender passes at once and is delivered at its first retry"
out=$(run "$tls")
check "$out" '.sim.legit_delivered == 1 and .sim.delay.max == 600 and .sim.sessions == 3' "STARTTLS greylisted"
echo "ok: tls_pass = greylist: a STARTTLS sender passes by its STARTTLS after the delay, delivered at 600 s"


out=$(run "[class bots]
kind = bot
messages = 50
clients = random
retry = none
burst = 2
burst_gap = 3s")
check "$out" '.sim.unwanted_messages == 50 and .sim.unwanted_delivered == 0 and
	.sim.unwanted_attempts == 150 and .report.funnel.passed_retry == 0' "bots"
echo "ok: bots retrying back to back are all stopped"

# The hand-off: the retry that passes delivers. The default, auto, is
# the simulated gateway's transparent hand-off (its MTA answers).
printf '[greylist]\ndelay = 300\n' >"$tmp/c.conf"
printf '[sim]\ndays = 1\n%s\n' "$postfix" >"$tmp/w.ini"
out=$("$sim" --workload "$tmp/w.ini" --config "$tmp/c.conf" --json 2>/dev/null)
check "$out" '.sim.handoff and .sim.delay.max == 300' "postfix-like, the default hand-off (auto)"
out=$(run "$postfix" "$handoff")
check "$out" '.sim.handoff and .sim.legit_delivered == 1 and .sim.delay.max == 300 and .sim.sessions == 2 and
	.sim.met_tarpit == 1 and .sim.delay_tarpit.max == 300' "postfix-like with the hand-off"
echo "ok: with the hand-off, the Postfix-like sender is delivered by the retry that passes: 300 s"

out=$(run "$tls" "$tls_yes
$handoff")
check "$out" '.sim.legit_delivered == 1 and .sim.legit_delayed == 0 and .sim.met_tarpit == 1 and
	.sim.delay_tarpit.max == 0 and .sim.sessions == 1' "STARTTLS with the hand-off, tls_pass = yes"
echo "ok: with the hand-off and tls_pass = yes, a STARTTLS sender is delivered on its first attempt"
out=$(run "$tls" "$handoff")
check "$out" '.sim.legit_delivered == 1 and .sim.delay_tarpit.max == 300 and .sim.sessions == 2' \
	"STARTTLS with the hand-off, greylisted"
echo "ok: with the hand-off and tls_pass = greylist, a STARTTLS sender is delivered by its STARTTLS after the delay"


# Shares: every bot says STARTTLS; with tls_pass = yes and the hand-off
# each is delivered, without the hand-off none, with tls_pass strict or
# greylist none.
bots="starttls_bots = 100%
[class bots]
kind = bot
messages = 50
clients = random
retry = none"
out=$(run "$bots" "$tls_yes
$handoff")
check "$out" '.sim.unwanted_delivered == 50 and .sim.unwanted_by_tls == 50' "TLS bots, hand-off, tls_pass = yes"
out=$(run "$bots" "$handoff")
check "$out" '.sim.unwanted_delivered == 0' "TLS bots, hand-off, tls_pass = greylist"
out=$(run "$bots")
check "$out" '.sim.unwanted_delivered == 0' "TLS bots, no hand-off"
out=$(run "$bots" "[greylist]
tls_pass = strict
$handoff
[policy]
listen = inet:127.0.0.1:10023
mta_asks = yes")
check "$out" '.sim.unwanted_delivered == 0' "TLS bots, hand-off, tls_pass strict"
# tls_pass = no with the hand-off would deliver in the clear: refused.
printf '[greylist]\ntls_pass = no\n%s\n' "$handoff" >"$tmp/c.conf"
! "$sim" --config "$tmp/c.conf" --json >/dev/null 2>"$tmp/err" || fail "tls_pass = no with the hand-off was taken"
grep -q "tls_pass = no with the hand-off on would deliver the passing attempt in the clear" "$tmp/err" ||
	fail "the refusal does not say why: $(cat "$tmp/err")"
out=$(run "starttls_legit = 0%
$tls" "$handoff")
check "$out" '.sim.delay.max == 300' "starttls_legit = 0% overrides the class"
echo "ok: STARTTLS shares: bots that say it are delivered with tls_pass = yes and the hand-off, and only then"

# DNS signals (with lookups): a class whose addresses are
# forward-confirmed and whose SPF passes is trusted: with the hand-off
# delivered on its first attempt, in TLS too (its PTR name's domain lets
# it send); without SPF's pass it waits as any; fcrdns_legit overrides
# the class; an address without FCrDNS or with a dynamic-looking name
# waits as any and is never trusted (suspicious with
# suspect_without_fcrdns, suspect_dynamic_rdns); a listed one (with DNS
# lists named), SPF fail and a sender's domain without mail are
# suspicious (suspicious_delay) and never trusted; SPF fail and a domain
# without mail are refused when the settings say (the message lost: a
# wanted sender bounces it).
named="[class named]
kind = mta
messages = 1
arrival = start
clients = 198.51.100.7
retry = 5m
fcrdns = 100%
aligned = 100%
spf_pass = yes"
signals="[signals]
lookups = yes
$handoff"
signals_with() { # LINES: [signals] with them, then the hand-off
	printf '[signals]\nlookups = yes\n%s\n%s\n' "$1" "$handoff"
}
out=$(run "$named" "$signals")
check "$out" '.sim.legit_delivered == 1 and .sim.delay.max == 0 and .sim.sessions == 1 and .report.funnel.passed_trusted == 1' "trusted"
# (its DNS: the PTR, the name's address, the sender domain's SPF and MX)
check "$out" '.sim.dns_asked == 4 and .sim.dns_cached == 0' "trusted: the DNS questions"
out=$(run "$named
starttls = yes" "$signals")
check "$out" '.sim.delay.max == 0 and .sim.sessions == 1' "trusted at STARTTLS"
# (at STARTTLS: the PTR, the name's address, its domain's SPF)
check "$out" '.sim.dns_asked == 3 and .sim.dns_cached == 0' "trusted at STARTTLS: the DNS questions"
out=$(run "${named/spf_pass = yes/spf_pass = no}" "$signals")
check "$out" '.sim.delay.max == 300 and .report.funnel.passed_trusted == 0' "FCrDNS without SPF's pass"
# (the retry 300 s later, within the TTLs: all four from the cache)
check "$out" '.sim.dns_asked == 4 and .sim.dns_cached == 4' "the retry's DNS from the cache"
out=$(run "$named")
check "$out" '.sim.dns_asked == 0 and .sim.dns_cached == 0' "lookups = no: no DNS"
out=$(run "fcrdns_legit = 0%
$named" "$signals
[greylist]
delay = 300")
check "$out" '.sim.delay.max == 300 and .report.funnel.passed_trusted == 0' "fcrdns_legit = 0%: the plain delay"
out=$(run "fcrdns_legit = 0%
$named" "$(signals_with "suspect_without_fcrdns = yes")")
check "$out" '.sim.delay.max == 900 and .report.funnel.passed_trusted == 0' "fcrdns_legit = 0%, suspect_without_fcrdns: suspicious, 15 min"
out=$(run "dynamic_legit = 100%
fcrdns_legit = 0%
$named" "$signals
[greylist]
delay = 300")
check "$out" '.sim.delay.max == 300 and .report.funnel.passed_trusted == 0' "dynamic_legit = 100%: the plain delay, not trusted"
out=$(run "dynamic_legit = 100%
fcrdns_legit = 0%
$named" "$(signals_with "suspect_dynamic_rdns = yes")")
check "$out" '.sim.delay.max == 900 and .report.funnel.passed_trusted == 0' "dynamic_legit = 100%, suspect_dynamic_rdns: suspicious, 15 min"
# (the (dns questions): a dynamic-looking name is asked forward too)
check "$out" '.sim.dns_asked == 4' "a dynamic-looking name's questions"
out=$(run "$named
listed = 100%" "$signals")
check "$out" '.sim.delay.max == 0 and .report.funnel.passed_trusted == 1' "listed without DNS lists named: nothing"
out=$(run "$named
listed = 100%" "$(signals_with "dnsbl_sites = bl.example")")
check "$out" '.sim.delay.max == 900 and .report.funnel.passed_trusted == 0' "listed, with DNS lists: suspicious"
for share in spf_fail no_mail_domain; do
	out=$(run "$named
$share = 100%" "$signals")
	check "$out" '.sim.delay.max == 900 and .report.funnel.passed_trusted == 0 and .sim.legit_lost == 0' "$share: suspicious"
done
out=$(run "$named
spf_fail = 100%" "$(signals_with "refuse_spf_fail = yes")")
check "$out" '.sim.legit_lost == 1 and .sim.legit_refused == 1 and .sim.sessions == 1 and .report.funnel.refused_spf == 1' "spf_fail, refuse_spf_fail: refused, lost"
out=$(run "$named
no_mail_domain = 100%" "$(signals_with "refuse_unknown_sender_domain = yes")")
check "$out" '.sim.legit_refused == 1 and .report.funnel.refused_sender_domain == 1' "no_mail_domain, refused"
out=$(run "$named
no_mail_domain = 100%" "$(signals_with "sender_domain = no
refuse_unknown_sender_domain = yes")")
check "$out" '.sim.legit_refused == 0 and .report.funnel.passed_trusted == 1' "no_mail_domain, not asked: trusted"
# Issue 56's rules, by greygated's own judgement (policy/trust.c): a
# pass by +all, by a net wider than trust_spf_widest, or by a record not
# of the PTR name's domain trusts nobody; a silent DNS list neither; a
# share of the fire-and-forget bots sent as an adversary's class.
for change in "spf_by = all" "spf_by = wide" "aligned = 0%"; do
	out=$(run "$named
$change" "$signals")
	check "$out" '.report.funnel.passed_trusted == 0 and .sim.delay.max == 300' "$change: not trusted"
done
out=$(run "$named
spf_by = wide" "$(signals_with "trust_spf_widest = 8")")
check "$out" '.report.funnel.passed_trusted == 1' "spf_by = wide, trust_spf_widest = 8: trusted"
out=$(run "dnsbl_silent = 100%
$named" "$(signals_with "dnsbl_sites = bl.example")")
check "$out" '.report.funnel.passed_trusted == 0' "dnsbl_silent = 100%: not trusted"
adversary="[class bots]
kind = bot
messages = 100
retry = none
[class careful]
kind = bot
messages = 0
retry = none
fcrdns = 100%
aligned = 100%
spf_pass = yes"
out=$(run "adversary = careful
adversary_share = 50%
$adversary" "$signals")
check "$out" '.sim.unwanted_messages == 100 and .sim.unwanted_first == 50 and .sim.unwanted_delivered == 50' "adversary_share = 50%: half the bots sent as the careful class, each trusted"
out=$(run "adversary = careful
adversary_share = 50%
${adversary/spf_pass = yes/spf_pass = yes
spf_by = all}" "$signals")
check "$out" '.sim.unwanted_delivered == 0' "the adversary with +all: stopped"
run "adversary = nobody
$adversary" >/dev/null 2>"$tmp/err" && fail "an unknown adversary was taken"
echo "ok: issue 56's rules in the sim: +all, a wide net, an unaligned name, a silent list trust nobody; adversary_share moves bots to an adversary's class"

# Recipients that do not exist: with valid_recipients named, refused at
# the tarpit (both of the message's: the message is lost, a bounce);
# without, greylisted as any.
out=$(run "$named
recipients = 2
unknown_recipients = 100%" "$(signals_with "")
[greylist]
valid_recipients = /nonexistent/the-model-stands-for-it")
check "$out" '.sim.legit_refused == 1 and .report.funnel.refused_recipient == 2 and .sim.sessions == 1' "unknown recipients, checked: refused"
out=$(run "$named
spf_pass = no
unknown_recipients = 100%" "$signals")
check "$out" '.sim.legit_refused == 0 and .report.funnel.refused_recipient == 0 and .sim.delay.max == 300' "unknown recipients, not checked: greylisted"
echo "ok: DNS signals: trusted on the first attempt (in TLS too), FCrDNS without SPF waits, none waits the plain delay (the suspicious one when said), a dynamic name, a listing, SPF fail and a domain without mail the suspicious one or refused as set; the questions greygated would send, the retry's from the cache"

a=$("$sim" --json --seed 7 2>/dev/null)
b=$("$sim" --json --seed 7 2>/dev/null)
c=$("$sim" --json --seed 8 2>/dev/null)
[ "$a" = "$b" ] || fail "the same seed gave two different months"
[ "$a" != "$c" ] || fail "another seed gave the same month"
check "$a" '.sim.legit_messages == 22300 and .sim.unwanted_messages == 71100' "default month"
echo "ok: the default month is the same for a seed, and another for another seed"

# The store's size: 2,000 bots over 10 days, each triplet unseen after
# its one attempt; with retry_window = 1d the purge (as greygated's)
# deletes those a day old, without it (purge = no) all stay, and the
# file is larger.
bots="[class b]
kind = bot
messages = 2000
clients = random
retry = none
senders = 2000"
window="[greylist]
retry_window = 1d"
kept=$(run "days = 10
purge = no
$bots" "$window")
check "$kept" '.sim.store_triplets == 2000 and .sim.purged_triplets == 0' "purge = no: every triplet kept"
purged=$(run "days = 10
$bots" "$window")
check "$purged" '.sim.purged_triplets > 1000 and .sim.store_triplets + .sim.purged_triplets == 2000' "purged"
[ "$(echo "$purged" | jq .sim.store_bytes)" -lt "$(echo "$kept" | jq .sim.store_bytes)" ] ||
	fail "the purged store is not smaller: $(echo "$purged" | jq .sim.store_bytes) against $(echo "$kept" | jq .sim.store_bytes)"
echo "ok: the store's size: the purge deletes triplets past the retry window, and the file stays smaller than without it"

# The store's writes, committed by greygated's rule: each of the 2,000
# bots' attempts a commit at the default interval (200 ms: they come
# minutes apart, but for the few in the same second), far fewer an hour
# apart; the bytes LMDB wrote follow.
often=$(run "days = 10
purge = no
$bots" "[gateway]
store_commit_interval = 200ms")
hourly=$(run "days = 10
purge = no
$bots" "[gateway]
store_commit_interval = 1h")
check "$often" '.sim.store_commits > 1950 and .sim.store_commits <= 2000 and .sim.store_written >= 1950 * 4096' "200ms: a commit an attempt"
check "$hourly" '.sim.store_commits <= 10 * 24 and .sim.store_commits > 0' "1h: a commit an hour at most"
[ "$(echo "$hourly" | jq .sim.store_written)" -lt "$(echo "$often" | jq .sim.store_written)" ] ||
	fail "committing hourly wrote no less: $(echo "$hourly" | jq .sim.store_written) against $(echo "$often" | jq .sim.store_written)"
echo "ok: the store's writes: $(echo "$often" | jq .sim.store_commits) commits ($(( $(echo "$often" | jq .sim.store_written) / 1024 )) KiB) every 200ms, $(echo "$hourly" | jq .sim.store_commits) ($(( $(echo "$hourly" | jq .sim.store_written) / 1024 )) KiB) hourly"

printf '[sim]\n[class x]\nkind = spam\n' >"$tmp/bad.ini"
out=$("$sim" --workload "$tmp/bad.ini" 2>&1) && fail "a bad workload ran"
[ "$out" = "greygate-sim: $tmp/bad.ini:3: [class x] kind = spam: want mta or bot" ] || fail "bad workload: $out"
echo "ok: a bad workload is a one-line error naming the line"
