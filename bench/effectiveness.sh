#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The default month (etc/sim-month.ini) through greygate-sim for the
# default policy and a few variants, side by side with the article's
# figures for its real September 2016 (pool senders keyed by their SPF
# domain among them); then the hand-off off and on, for
# shares of wanted senders (0%, 50%, 95%) and of bots (0%, 30%) that say
# STARTTLS, with tls_pass (greylist, the default; yes; strict). No root
# needed.
#   bench/effectiveness.sh [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$root/build}
sim=$GREYGATE_BUILD/tools/greygate-sim
seed=${1:-1}
tmp=$(mktemp -d /tmp/greygate-effect.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# run NAME CONFIG [SIM-LINES]: greygate-sim's JSON for that config, the
# default workload with SIM-LINES added to its [sim] section.
run() {
	local conf=$tmp/$1.conf work=$tmp/$1.ini
	printf '%s\n' "$2" >"$conf"
	awk -v add="${3:-}" '{print} /^\[sim\]$/ && add != "" {print add}' \
		"$root/etc/sim-month.ini" >"$work"
	"$sim" --config "$conf" --workload "$work" --seed "$seed" --json 2>/dev/null
}

variant() { # NAME [GREYLIST-LINES [SIM-LINES]]
	local out t0 t1
	t0=$(date +%s%N)
	out=$(run "$1" "[greylist]
${2:-}" "${3:-}")
	t1=$(date +%s%N)
	echo "$out" | jq -r --arg n "$1" --arg ms "$(( (t1 - t0) / 1000000 ))" '
		[$n,
		 .sim.unwanted_messages - .sim.unwanted_delivered, .sim.unwanted_delivered,
		 .sim.unwanted_refused, .sim.legit_delivered, .sim.legit_lost, .sim.legit_delayed,
		 .sim.delay.median, (.sim.delay.mean | floor), .sim.delay.p90, .sim.delay.p99,
		 .sim.delay.max, .sim.store_triplets, $ms] | @tsv'
}

# adversary NAME SHARE [SIM-LINES [CONFIG]]: the default config (or
# CONFIG's [signals] lines), SHARE of the month's fire-and-forget bots
# sent as class NAME (etc/sim-month.ini's adversaries): fire-and-forget
# bots stopped, of them through on their first attempt, wanted messages
# delivered on their first attempt.
adversary() {
	run "adv-$1-$2" "[signals]
${4:-}" "adversary = $1
adversary_share = $2%
${3:-}" | jq -r --arg n "$1" --arg s "$2%" '
		.sim as $m
		| ($m.unwanted_messages - $m.retrying_messages) as $ff
		| ($m.unwanted_delivered - $m.retrying_delivered) as $through
		| [$n, $s,
		   ((($ff - $through) * 10000 / $ff | floor) / 100 | tostring) + "%",
		   $through, $m.unwanted_first,
		   ((($m.legit_messages - $m.legit_delayed) * 1000 / $m.legit_messages | floor) / 10 | tostring) + "%",
		   $m.legit_lost, $m.delay.median,
		   ($m.retrying_delivered | tostring) + "/" + ($m.retrying_messages | tostring)] | @tsv'
}

handoff() { # MODE TLS_PASS LEGIT% BOTS%
	local conf="[greylist]
tls_pass = $2"
	if [ "$1" = on ]; then
		conf="$conf
[handoff]
mode = proxy-v2
address = 127.0.0.1:10025"
	else
		conf="$conf
[handoff]
mode = off"
	fi
	# strict: the MTA asks the policy door about each recipient
	[ "$2" = strict ] && conf="$conf
[policy]
listen = inet:127.0.0.1:10023
mta_asks = yes"
	run "handoff-$1-$2-$3-$4" "$conf" "starttls_legit = $3%
starttls_bots = $4%" | jq -r --arg h "$1" --arg t "$2" --arg l "$3%" --arg b "$4%" '
		[$h, $t, $l, $b,
		 .sim.unwanted_messages - .sim.unwanted_delivered, .sim.unwanted_delivered,
		 .sim.unwanted_by_tls, .sim.legit_lost, .sim.met_tarpit,
		 .sim.delay_tarpit.median, (.sim.delay_tarpit.mean | floor), .sim.delay_tarpit.p90,
		 .sim.delay_tarpit.p99, .sim.legit_delayed,
		 .sim.delay.median, (.sim.delay.mean | floor), .sim.delay.p90, .sim.delay.p99] | @tsv'
}

{
	printf 'variant\tbots stopped\tbots through\tbots refused\twanted delivered\tlost\tdelayed\tmedian s\tmean s\tp90 s\tp99 s\tmax s\ttriplets\tms\n'
	# (the default hand-off, auto, is on in the simulated gateway: its
	# MTA answers; lookups are on by default, which pools the classes
	# with spf_pass = yes, the two banks, by their SPF domain)
	variant default
	variant handoff-off "[handoff]
mode = off"
	variant lookups-off "[signals]
lookups = no"
	# the defaults before issue 31's: no hand-off, no lookups, STARTTLS
	# passes
	variant before-31 "tls_pass = yes
[handoff]
mode = off
[signals]
lookups = no"
	variant full-address-keys "client_prefix4 = 32
client_prefix6 = 128"
	variant delay-60s "delay = 60"
	variant delay-1500s "delay = 1500"
	variant tls_pass-yes "tls_pass = yes"
	variant tls_pass-off "tls_pass = no"
	# what a client without FCrDNS or with a dynamic-looking name costs
	# when it is suspicious too, and
	# what the suspicious delay buys at all
	variant suspect-without-fcrdns "[signals]
suspect_without_fcrdns = yes"
	variant suspect-dynamic-rdns "[signals]
suspect_dynamic_rdns = yes"
	variant suspicious-delay-0 "[signals]
suspicious_delay = 0"
	# a DNS block list named (the month's bots listed as its comments
	# say), and the article's refusals (SPF fail, a sender's domain
	# without mail, recipients that do not exist: the model's stand for
	# the valid_recipients file)
	variant dnsbl "[signals]
dnsbl_sites = zen.spamhaus.org=127.0.0.[2..11]"
	variant refuse-as-the-article "valid_recipients = /the-model-stands-for-it
[signals]
refuse_spf_fail = yes
refuse_unknown_sender_domain = yes"
	printf 'article (Sep 2016, milter-greylist)\t71100\t-\t+8470\t22300 passed\t-\t-\t900\t~8000\t-\t-\t-\t-\t-\n'
} | column -t -s $'\t'

echo
echo "How the default moves when the model's DNS shares move (etc/sim-month.ini says where each comes from):"
{
	printf 'shares\tbots stopped\tbots through\tbots refused\twanted delivered\tlost\tdelayed\tmedian s\tmean s\tp90 s\tp99 s\tmax s\ttriplets\tms\n'
	variant "as in the month" "" ""
	variant "fcrdns_legit = 50%" "" "fcrdns_legit = 50%"
	variant "fcrdns_legit = 100%" "" "fcrdns_legit = 100%"
	variant "fcrdns_bots = 0%" "" "fcrdns_bots = 0%"
	variant "fcrdns_bots = 58%" "" "fcrdns_bots = 58%"
	variant "dynamic_legit = 0%" "" "dynamic_legit = 0%"
	variant "dynamic_legit = 10%" "" "dynamic_legit = 10%"
	variant "dynamic_bots = 0%" "" "dynamic_bots = 0%"
	variant "fcrdns_legit = 50%, dynamic_legit = 25%" "" "fcrdns_legit = 50%
dynamic_legit = 25%"
	variant "fcrdns_bots = 58%, starttls_bots = 30%" "" "fcrdns_bots = 58%
starttls_bots = 30%"
	variant "starttls_legit = 95%, starttls_bots = 30%" "" "starttls_legit = 95%
starttls_bots = 30%"
} | column -t -s $'\t'

echo
echo "Delay to delivery (first attempt to delivery, seconds) with the hand-off off and on:"
echo "'met tarpit': wanted messages an attempt of which met the tarpit (0 s when handed on the first);"
echo "'delayed': those delivered later than their first attempt."
{
	printf 'hand-off\ttls_pass\tTLS wanted\tTLS bots\tbots stopped\tbots through\tby TLS\tlost\tmet tarpit\tmedian\tmean\tp90\tp99\tdelayed\tmedian\tmean\tp90\tp99\n'
	for legit in 0 50 95; do
		for bots in 0 30; do
			handoff off greylist "$legit" "$bots"
			handoff on greylist "$legit" "$bots"
			handoff off yes "$legit" "$bots"
			handoff on yes "$legit" "$bots"
			handoff on strict "$legit" "$bots"
		done
	done
} | column -t -s $'\t'

echo
echo "The adversaries (issue 56): a share of the month's fire-and-forget bots sent as each"
echo "of etc/sim-month.ini's adversary classes, default config; 'bots stopped' of the"
echo "fire-and-forget bots (retrying bots apart: greylisting does not stop them by design);"
echo "'wanted at once': wanted messages delivered on their first attempt; 'median s': the"
echo "delayed ones' median delay."
{
	printf 'adversary\tshare\tbots stopped\tthrough\tat first attempt\twanted at once\tlost\tmedian s\tretrying through\n'
	for adv in adv-own-all adv-own-wide adv-forged-wide adv-hosting adv-snowshoe adv-campaign adv-snowshoe-careful; do
		for share in 0 1 5 10 20; do
			adversary "$adv" "$share"
		done
	done
	# 30% of bots saying STARTTLS (U. Toronto sinkhole, 2014)
	for adv in adv-own-all adv-forged-wide adv-snowshoe; do
		adversary "$adv" 20 "starttls_bots = 30%"
	done
	# the retrying bots, reported apart
	adversary adv-retrying 20
} | column -t -s $'\t'

echo
echo "How the adversaries' figures move with what the defaults assume:"
{
	printf 'adversary\tshare\tbots stopped\tthrough\tat first attempt\twanted at once\tlost\tmedian s\tretrying through\tassumption\n'
	# small servers aligned: 50% in the month (a scenario)
	for aligned in 0 100; do
		awk -v a="$aligned" '/^\[class (postfix-once|postfix-regular|sendmail|exim|lists|tls-senders)\]$/ {c = 1} /^\[class / && !/postfix|sendmail|exim|lists|tls-senders/ {c = 0} c && /^aligned = / {$0 = "aligned = " a "%"} {print}' \
			"$root/etc/sim-month.ini" >"$tmp/aligned-$aligned.ini"
		"$sim" --workload "$tmp/aligned-$aligned.ini" --seed "$seed" --json 2>/dev/null | jq -r --arg a "$aligned" '
			.sim as $m | ["(none)", "0%", "-", "-", "-",
			  ((($m.legit_messages - $m.legit_delayed) * 1000 / $m.legit_messages | floor) / 10 | tostring) + "%",
			  $m.legit_lost, $m.delay.median, "-", "small servers aligned " + $a + "%"] | @tsv'
	done
	# a DNS list named: silent for 0% and for every lookup
	adversary adv-snowshoe-careful 20 "" "dnsbl_sites = zen.spamhaus.org=127.0.0.[2..11]" | sed 's/$/\tzen named, answering/'
	adversary adv-snowshoe-careful 20 "dnsbl_silent = 100%" "dnsbl_sites = zen.spamhaus.org=127.0.0.[2..11]" | sed 's/$/\tzen named, silent/'
	adversary adv-own-all 20 "" "trust_spf_widest = 8" | sed 's/$/\ttrust_spf_widest = 8/'
	adversary adv-own-wide 20 "" "trust_spf_widest = 8" | sed 's/$/\ttrust_spf_widest = 8/'
	adversary adv-campaign 20 "" "pool_spf = no" | sed 's/$/\tpool_spf = no/'
	# a STARTTLS is greylisted by its address: a block's hosts that say
	# it again after the delay pass (each alone); fewer addresses or
	# more STARTTLS, more of them do
	adversary adv-snowshoe-dense 20 "starttls_bots = 30%" | sed 's/$/\ta \/22, not a \/20/'
	adversary adv-snowshoe 20 "starttls_bots = 100%" | sed 's/$/\tevery bot says STARTTLS/'
} | column -t -s $'\t'
