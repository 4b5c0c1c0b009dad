#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the DNS signals (issue 31) cost greygated's decisions, with real
# parts: nsd on host 'dns' serving every client's PTR and forward name
# and a new sender domain per client (a wildcard's SPF record, neutral,
# and MX), behind bench/dns-delay-relay holding each answer DELAY_MS (a
# DNS server that far away: the kernel here has no sch_netem); greygated
# on 'gw' asking only the relay; bench/smtp-load on 'sender' opening one
# session from each of CLIENTS addresses, CONC at a time, each with its
# own sender domain (every session a new client and a new domain).
# Side by side in one run, each greygated freshly started: lookups = no
# (the reference: no DNS at all), then lookups = yes twice, the second
# time the same clients again (the resolver's cache warm). For each: the
# RCPT's time (sent to answered: the decision) p50 and p99, and for the
# lookups the questions sent to the server per client and the share
# answered from the cache.
# Run as root after a build:  bench/dns-cost.sh [CLIENTS] [DELAY_MS] [CONC]
set -euo pipefail
here=$(cd "$(dirname "$0")/../tests/integration" && pwd)
top=$(cd "$here/../.." && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$top/build}
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/nsd.sh"
clients=${1:-200}
delay=${2:-50}
conc=${3:-4}
load=$GREYGATE_BUILD/bench/smtp-load
relay=$GREYGATE_BUILD/bench/dns-delay-relay
[ -x "$load" ] && [ -x "$relay" ] || { echo "build first: $load or $relay is missing" >&2; exit 1; }
[ "$clients" -ge 1 ] && [ "$clients" -le 240 ] || { echo "CLIENTS: 1 to 240" >&2; exit 2; }

netns_init
netns_sender_gw
nsd_host
sources=()
for i in $(seq 11 $(( 10 + clients ))); do
	nsx sender ip addr add "203.0.113.$i/24" dev "$(netns_dev sender gw)"
	sources+=("203.0.113.$i")
done

zones=$NETNS_TMP/zones
mkdir -p "$zones"
soa='@ 3600 IN SOA ns.bench.test. admin.bench.test. 1 3600 600 86400 300'
zone() { { echo '$TTL 3600'; echo "$soa"; echo '@ IN NS ns.bench.test.'; cat; } >"$zones/$1.zone"; }
{
	echo 'ns IN A 198.51.100.53'
	echo 'mx IN A 198.51.100.25'
	echo '* IN TXT "v=spf1 ?all"'
	echo '* IN MX 10 mx.bench.test.'
} | zone bench.test
for i in $(seq 11 $(( 10 + clients ))); do echo "h$i IN A 203.0.113.$i"; done | zone clients.test
for i in $(seq 11 $(( 10 + clients ))); do echo "$i IN PTR h$i.clients.test."; done |
	zone 113.0.203.in-addr.arpa
nsd_start dns 198.51.100.53 bench.test clients.test 113.0.203.in-addr.arpa
netns_add_addr "$(netns_ns dns)" "$(netns_dev dns gw)" 198.51.100.55/24
netns_spawn dns "$relay" 198.51.100.55 53 198.51.100.53 53 $(( delay * 1000 ))
wait_for 10 eval "nsx gw dig +short +time=2 +tries=1 @198.51.100.55 h11.clients.test A | grep -q 203.0.113.11" ||
	fail "the relay does not answer"
took=$(nsx gw dig +time=2 +tries=1 @198.51.100.55 h12.clients.test A | sed -n 's/^;; Query time: //p')
echo "dns cost: $clients clients, $conc at a time, DNS $delay ms away (dig through the relay: $took); $(nproc) cores"

export GG_SIGNALS_DEFAULT=1
metric() { ggctl metrics | awk -v m="$1" '$1 == m {print $2}'; }
fresh() { # LOOKUPS: greygated started afresh, empty store and cache
	[ -z "${GG_PID:-}" ] || { kill "$GG_PID"; wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"; }
	rm -rf "$NETNS_TMP/store"
	mkdir -p "$NETNS_TMP/store"
	greygated_conf "
[signals]
lookups = $1
dns_servers = 198.51.100.55
rdns_patterns = $top/etc/dynamic-rdns"
	greygated_start
}
run() { # NAME: one session from each client; the RCPT's times, the questions
	local out asked0 cached0 joined0 asked cached joined
	asked0=$(metric 'greygate_dns_questions_total{answered="server"}')
	cached0=$(metric 'greygate_dns_questions_total{answered="cache"}')
	joined0=$(metric 'greygate_dns_questions_total{answered="in_flight"}')
	out=$(nsx sender env SMTP_LOAD_ONCE=1 SMTP_LOAD_SENDER_DOMAIN=bench.test \
		"$load" 203.0.113.1 25 "$conc" 600 "${sources[@]}") || fail "$1: $out"
	asked=$(( ${asked0:+$(metric 'greygate_dns_questions_total{answered="server"}') - asked0} + 0 ))
	cached=$(( ${cached0:+$(metric 'greygate_dns_questions_total{answered="cache"}') - cached0} + 0 ))
	joined=$(( ${joined0:+$(metric 'greygate_dns_questions_total{answered="in_flight"}') - joined0} + 0 ))
	printf '%-26s %s' "$1" "$(sed -E 's/.*(sessions=[0-9]+ failed=[0-9]+).*(rcpt_median_ms=[0-9.]+ rcpt_p99_ms=[0-9.]+).*/\1 \2/' <<<"$out")"
	if [ -n "$asked0" ]; then
		printf ' questions_per_client=%s cache_share=%s' \
			"$(awk -v a="$asked" -v c="$clients" 'BEGIN {printf "%.2f", a / c}')" \
			"$(awk -v a="$asked" -v c="$cached" -v j="$joined" 'BEGIN {t = a + c + j; printf "%.2f", t ? (c + j) / t : 0}')"
	fi
	echo
}
fresh no
run "lookups = no"
fresh yes
run "lookups = yes, cold"
run "lookups = yes, warm"
grep -E "signals=" "$GG_LOG" | head -1 | sed 's/^/  a decision line: /' || true
