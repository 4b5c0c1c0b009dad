#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hand-off's cost, side by side in one run with the same client
# talking to the MTA directly (a real Postfix on 'gw', its PROXY listener
# on 127.0.0.1:10025; greygated with delay 0 and one key per address):
#   - latency: from sending the RCPT that passes to the MTA's 250 reaching
#     the client (greygated decides, connects, sends the PROXY header, the
#     tarpit replays EHLO, MAIL and RCPT), against the same RCPT on the
#     fast path right after: median and p99 over N clients;
#   - a later RCPT of a handed session: on the plain join (straight to the
#     MTA) against the gate's (a session handed for postmaster@ without
#     passing the client: the tarpit asks greygated, then the MTA);
#   - bulk: a message of MIB MiB through the join, and through the gate,
#     against the same on the fast path: MiB/s, and the child's CPU time
#     per MiB (the join or the gate, and the capture of the client's bytes
#     to the tarpit's port; on the fast path the child only captures
#     them).
# Run as root after a build:  bench/handoff-bench.sh [N] [MIB] [BULK-N]
set -euo pipefail
here=$(cd "$(dirname "$0")/../tests/integration" && pwd)
bench=$(cd "$(dirname "$0")" && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$(cd "$here/../.." && pwd)/build}
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
n=${1:-200}
mib=${2:-10}
bulk_n=${3:-5}

netns_init
netns_host client
netns_host gw
addrs=()
for i in $(seq 1 $(( n + 3 * bulk_n ))); do addrs+=("2001:db8:5::$(printf '%x' $(( 0x1000 + i )))"); done
netns_link client 2001:db8:5::10/64 gw 2001:db8:5::1/64
for a in "${addrs[@]}"; do netns_add_addr "$(netns_ns client)" "$(netns_dev client gw)" "$a/64"; done

postfix_new mx gw "[2001:db8:5::1]" "
message_size_limit = 0
virtual_mailbox_limit = 0
in_flow_delay = 0
smtpd_client_connection_rate_limit = 0
smtpd_client_connection_count_limit = 0"
echo "127.0.0.1:10025 inet n - n - - smtpd -o smtpd_upstream_proxy_protocol=haproxy" \
	>>"$(postfix_dir mx)/master.cf"
postfix_start mx
postfix_wait_listening mx 2001:db8:5::1 || fail "mx is not listening"
mkdir -p "$NETNS_TMP/store"
greygated_conf "[greylist]
delay = 0
client_prefix6 = 128
[handoff]
mode = proxy-v2
address = 127.0.0.1:10025"
greygated_start
wait_for 10 grep "the tarpit's EHLO lists" "$GG_LOG" >/dev/null || fail "the MTA's EHLO was not learnt"
child=$(ggctl status --json | jq .child.pid)
load() { nsx client python3 "$bench/handoff-load.py" "$@"; }
ticks() { awk '{print $14 + $15}' "/proc/$child/stat"; }
hz=$(getconf CLK_TCK)

stats() { # column of numbers on stdin: "median p99"
	sort -n | awk '{v[NR] = $1} END {
		m = v[int((NR + 1) / 2)]; p = v[int((NR * 99 + 99) / 100)]
		printf "%.2f %.2f", m, p }'
}

load latency 2001:db8:5::1 "${addrs[@]:0:n}" >"$NETNS_TMP/lat.txt" || fail "latency run failed"
[ -z "${BENCH_DEBUG:-}" ] || cat "$NETNS_TMP/lat.txt"
read -r hm hp <<<"$(awk '{print $1}' "$NETNS_TMP/lat.txt" | stats)"
read -r dm dp <<<"$(awk '{print $2}' "$NETNS_TMP/lat.txt" | stats)"
read -r gm gp <<<"$(awk '{print $3}' "$NETNS_TMP/lat.txt" | stats)"
read -r jm jp <<<"$(awk '{print $4}' "$NETNS_TMP/lat.txt" | stats)"

bulk_addrs=("${addrs[@]:n:bulk_n}")
t0=$(ticks)
load handed 2001:db8:5::1 "$mib" "${bulk_addrs[@]}" >"$NETNS_TMP/handed.txt" || fail "bulk through the join failed"
t1=$(ticks)
load direct 2001:db8:5::1 "$mib" "${bulk_addrs[@]}" >"$NETNS_TMP/direct.txt" || fail "bulk on the fast path failed"
t2=$(ticks)
gated_addrs=("${addrs[@]:n+bulk_n:bulk_n}")
load gated 2001:db8:5::1 "$mib" "${gated_addrs[@]}" >"$NETNS_TMP/gated.txt" || fail "bulk through the gate failed"
t3=$(ticks)
rate() { awk -v mib="$mib" '{s += $1} END {printf "%.1f", mib * NR / s}' "$1"; }
hr=$(rate "$NETNS_TMP/handed.txt")
dr=$(rate "$NETNS_TMP/direct.txt")
gr=$(rate "$NETNS_TMP/gated.txt")
per_mib() { awk -v t="$1" -v hz="$hz" -v mib="$mib" -v k="$bulk_n" 'BEGIN {printf "%.1f", t * 1000 / hz / (mib * k)}'; }

echo "hand-off bench: $n clients for latency, $bulk_n messages of $mib MiB each way; $(nproc) cores"
printf '%-34s %12s %12s\n' "RCPT to the MTA's 250 (ms)" median p99
printf '%-34s %12s %12s\n' "handed (the attempt that passes)" "$hm" "$hp"
printf '%-34s %12s %12s\n' "direct (fast path)" "$dm" "$dp"
printf '%-34s %12s %12s\n' "a later RCPT, joined" "$jm" "$jp"
printf '%-34s %12s %12s\n' "a later RCPT, gated (asks first)" "$gm" "$gp"
printf '%-34s %12s %16s\n' "a $mib MiB message" "MiB/s" "child ms/MiB"
printf '%-34s %12s %16s\n' "through the join" "$hr" "$(per_mib $(( t1 - t0 )))"
printf '%-34s %12s %16s\n' "direct (fast path)" "$dr" "$(per_mib $(( t2 - t1 )))"
printf '%-34s %12s %16s\n' "through the gate" "$gr" "$(per_mib $(( t3 - t2 )))"
awk -v h="$hr" -v d="$dr" -v g="$gr" 'BEGIN {printf "join throughput: %.0f%% of direct; the gate'"'"'s: %.0f%% of the join'"'"'s\n", 100 * h / d, 100 * g / h}'
ggctl status | grep "^hand-off:"
[ -z "${BENCH_DEBUG:-}" ] || tail -n 40 "$(postfix_log mx)"
