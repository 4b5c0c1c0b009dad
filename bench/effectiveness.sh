#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The default month (etc/sim-month.ini) through greygate-sim for the
# default policy and a few variants, side by side with the article's
# figures for its real September 2016. No root needed.
#   bench/effectiveness.sh [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$root/build}
sim=$GREYGATE_BUILD/tools/greygate-sim
seed=${1:-1}
tmp=$(mktemp -d /tmp/greygate-effect.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

variant() { # NAME [GREYLIST-LINES]
	local name=$1 conf=$tmp/$1.conf out t0 t1
	printf '[greylist]\n%s\n' "${2:-}" >"$conf"
	t0=$(date +%s%N)
	out=$("$sim" --config "$conf" --seed "$seed" --json 2>/dev/null)
	t1=$(date +%s%N)
	echo "$out" | jq -r --arg n "$name" --arg ms "$(( (t1 - t0) / 1000000 ))" '
		[$n,
		 .sim.unwanted_messages - .sim.unwanted_delivered, .sim.unwanted_delivered,
		 .sim.legit_delivered, .sim.legit_lost, .sim.legit_delayed,
		 .sim.delay.median, (.sim.delay.mean | floor), .sim.delay.p90, .sim.delay.p99,
		 .sim.delay.max, .sim.store_triplets, $ms] | @tsv'
}

{
	printf 'variant\tbots stopped\tbots through\twanted delivered\tlost\tdelayed\tmedian s\tmean s\tp90 s\tp99 s\tmax s\ttriplets\tms\n'
	variant default
	variant full-address-keys "client_prefix4 = 32
client_prefix6 = 128"
	variant delay-60s "delay = 60"
	variant delay-1500s "delay = 1500"
	variant tls_pass-off "tls_pass = no"
	printf 'article (Sep 2016, milter-greylist)\t71100\t-\t22300 passed\t-\t-\t900\t~8000\t-\t-\t-\t-\t-\n'
} | column -t -s $'\t'
