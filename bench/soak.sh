#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygated under a mixed load for a long while, watched for growth and
# loss (issue 29): in namespaces, greygated (the gateway, the policy door
# and the hand-off, PROXY v2 to a Postfix listener) in front of a real
# Postfix that asks the door about every recipient; from 'sender', bots
# at the tarpit, senders greylisted then passed and handed off with a
# message, then on the fast path with another (bench/soak-load.py), and
# a sending Postfix whose mail goes through every 20 s; greygatectl
# status and list every 5 s, a reload every minute (each one changes the
# tarpit's idle timeout, 31 s, 30 s, ...: a new child takes over, the one
# before drains); with --redis, the store is a real redis-server, restarted
# halfway through. --pass-ttl N makes passes last N minutes (refreshed
# every minute), so that the pass sets and what greygated keeps for them
# level off once passes expire as fast as they come: how a long-running
# gateway looks, where the default (35 days) only grows in an hour.
# Every 10 s it samples greygated's and its child's anonymous RSS and
# descriptors, the pass sets' sizes (on Redis, uncounted: the passes
# greygated knows instead), the store's size and the policy door's
# answer time (20 requests), into soak.csv, and draws soak.svg at the end.
# It fails when, after the first fifth, RSS or descriptors grow (the
# least-squares slope over the rest, projected over that span, beyond
# max(2 MiB, 5%) for RSS and 4 for descriptors), when a message accepted
# is missing or delivered twice, or when a sanitizer speaks (GG_BIN=an
# ASan build's greygated).
#   bench/soak.sh [--minutes N | --seconds N] [--redis] [--pass-ttl N] [--out DIR]  (root)
# (--seconds, 60 or more: the test run's short soak; one reload at least)
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
here=$bench/../tests/integration
GREYGATE_BUILD=${GREYGATE_BUILD:-$(cd "$bench/.." && pwd)/build}
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/handoff.sh"

minutes=60 redis=0 out=$PWD pass_ttl= seconds=
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) minutes=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--redis) redis=1; shift ;;
	--pass-ttl) pass_ttl=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: soak.sh [--minutes N | --seconds N] [--redis] [--pass-ttl N] [--out DIR]" >&2; exit 2 ;;
	esac
done
if [ -n "$seconds" ]; then
	[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 60 ] ||
		{ echo "soak: --seconds must be a whole number, 60 or more (one reload at least)" >&2; exit 2; }
else
	[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || { echo "soak: --minutes must be a whole number above 0" >&2; exit 2; }
	seconds=$(( minutes * 60 ))
fi
[ -z "$pass_ttl" ] || [[ "$pass_ttl" =~ ^[0-9]+$ && "$pass_ttl" -ge 2 ]] ||
	{ echo "soak: --pass-ttl must be a whole number of minutes, 2 or more" >&2; exit 2; }
mkdir -p "$out"
csv=$out/soak.csv svg=$out/soak.svg

# Under ASan, freed memory waits in a quarantine (256 MiB by default)
# before it is reused: kept small, RSS shows what greygate holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64"

netns_init
netns_sender_gw
# Bots' and senders' own addresses: anything in these is bound on the
# sender (local routes), routed there from the gateway.
nsx sender ip route add local 198.51.100.64/26 dev lo
nsx sender ip -6 route add local 2001:db8:100::/48 dev lo
nsx gw ip route add 198.51.100.64/26 via 203.0.113.10
nsx gw ip -6 route add 2001:db8:100::/48 via 2001:db8:1::10
nsx sender sysctl -qw net.ipv4.ip_local_port_range="1024 65535" net.ipv6.ip_nonlocal_bind=1

postfix_new mx gw "203.0.113.1, [2001:db8:1::1]" "
smtpd_recipient_restrictions = check_policy_service inet:127.0.0.1:10023, permit_mynetworks, reject"
echo "127.0.0.1:10025 inet n - n - - smtpd -o smtpd_upstream_proxy_protocol=haproxy" \
	>>"$(postfix_dir mx)/master.cf"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = none"

store_conf=""
if [ "$redis" = 1 ]; then
	netns_host redis
	netns_link gw 198.51.100.1/28 redis 198.51.100.2/28
	. "$here/../lib/shared-site.sh"
	# (its ggctl names one of several gateways: the soak has one, as
	# greygated.sh has it)
	. "$here/../lib/greygated.sh"
	redis_setup 198.51.100.2
	store_conf="store = redis://198.51.100.2:6379/0
store_password_file = $NETNS_TMP/redis.pass"
fi
mkdir -p "$NETNS_TMP/store"
greygated_conf "$store_conf
[greylist]
delay = 2
${pass_ttl:+pass_ttl = ${pass_ttl}m
refresh_interval = 1m}
[policy]
listen = inet:127.0.0.1:10023
[handoff]
mode = proxy-v2
address = 127.0.0.1:10025
timeout = 10s
[tarpit]
idle_timeout = 30s"
greygated_start
log=$GG_LOG

child_pid() { ggctl status --json | jq -r '.child.pid // empty'; }
# Anonymous memory: the heap and the like (the store's file, mapped, is
# the store's size, sampled on its own).
rss_kb() { awk '/^RssAnon/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
door_ms() { # 20 requests on one connection: the mean answer time
	nsx gw python3 - <<'PY'
import socket, time
s = socket.create_connection(("127.0.0.1", 10023), timeout=5)
t = []
for i in range(20):
    t0 = time.perf_counter()
    s.sendall(b"request=smtpd_access_policy\nprotocol_state=RCPT\n"
              b"client_address=2001:db8:200::%x\nsender=probe@soak.test\n"
              b"recipient=bob@example.org\n\n" % i)
    buf = b""
    while not buf.endswith(b"\n\n"):
        buf += s.recv(1000)
    t.append(time.perf_counter() - t0)
print("%.3f" % (sum(t) / len(t) * 1000))
PY
}

: >"$NETNS_TMP/sent"
echo "t_s,rss_parent_kb,rss_child_kb,fds_parent,fds_child,pass4,pass6,passes_known,store_bytes,door_ms" >"$csv"
nsx sender python3 "$bench/soak-load.py" 203.0.113.1 "$seconds" 2 "$NETNS_TMP/sent" 2001:db8:1::1 \
	2>"$NETNS_TMP/load.err" &
load=$!
echo "soak: $seconds s$([ "$redis" = 1 ] && echo ", on Redis"); samples in $csv"
start=$(date +%s)
n_out=0 last_reload=$start restarted=0 reloads=0
while kill -0 "$load" 2>/dev/null; do
	now=$(date +%s)
	t=$(( now - start ))
	kill -0 "$GG_PID" || fail "greygated died: $(tail -5 "$log")"
	cpid=$(child_pid)
	json=$(ggctl status --json)
	echo "$t,$(rss_kb "$GG_PID"),$(rss_kb "${cpid:-0}"),$(fds "$GG_PID"),$(fds "${cpid:-0}"),$(jq '.sets.pass4 // 0' <<<"$json"),$(jq '.sets.pass6 // 0' <<<"$json"),$(jq '.shared.passes_known // 0' <<<"$json"),$(jq '.store.used_bytes // 0' <<<"$json"),$(door_ms)" >>"$csv"
	# the sending Postfix, and greygatectl as an admin would
	n_out=$(( n_out + 1 ))
	out_send "soak-out-$n_out"
	echo "soak-out-$n_out" >>"$NETNS_TMP/sent.out"
	for i in 1 2; do
		ggctl status >/dev/null || fail "greygatectl status failed"
		# (on Redis while it is away, the passes known here are listed)
		said=$(ggctl list pass 2>&1 >/dev/null) || fail "greygatectl list pass failed: $said"
		sleep 5
	done
	if [ $(( now - last_reload )) -ge 60 ]; then
		# Each one changes the tarpit: a new child takes over while
		# the one before finishes its joined sessions.
		reloads=$(( reloads + 1 ))
		sed -i "s/^idle_timeout = .*/idle_timeout = $(( 30 + reloads % 2 ))s/" "$NETNS_TMP/greygate.conf"
		ggctl reload >/dev/null || fail "greygatectl reload failed"
		last_reload=$now
	fi
	if [ "$redis" = 1 ] && [ "$restarted" = 0 ] && [ "$t" -ge $(( seconds / 2 )) ]; then
		redis_stop
		redis_start
		restarted=1
	fi
done
wait "$load" || true
echo "soak: load: $(cat "$NETNS_TMP/load.err")"

# Every message accepted, delivered once (the last ones given time).
mbox=$(postfix_mailbox mx)
missing=0 doubled=0
check_mail() {
	local subject c
	while read -r subject; do
		c=$(mail_copies mx "$subject")
		[ "$c" = 1 ] && continue
		[ "$c" = 0 ] && missing=$(( missing + 1 )) || doubled=$(( doubled + 1 ))
	done <"$1"
}
sleep 10
check_mail "$NETNS_TMP/sent"
# (the sending Postfix's last ones may still be queued: all but the last 2)
head -n -2 "$NETNS_TMP/sent.out" >"$NETNS_TMP/sent.out.due"
check_mail "$NETNS_TMP/sent.out.due"
accepted=$(( $(wc -l <"$NETNS_TMP/sent") + $(wc -l <"$NETNS_TMP/sent.out.due") ))

python3 "$bench/soak-verdict.py" "$csv" "$svg" || verdict=1
sanitizer=$(grep -c -E "ERROR: (Address|Leak)Sanitizer|runtime error:" "$log" || true)
echo "soak: $accepted messages accepted: $missing missing, $doubled delivered twice; sanitizer reports: $sanitizer"
[ "$missing" = 0 ] && [ "$doubled" = 0 ] || fail "messages lost or doubled"
[ "$sanitizer" = 0 ] || fail "a sanitizer spoke: $(grep -m3 -E 'ERROR: |runtime error:' "$log")"
[ -z "${verdict:-}" ] || fail "something grew after the warm-up (soak-verdict above)"
echo "ok: soak of $seconds s: flat, nothing lost; $csv, $svg"
