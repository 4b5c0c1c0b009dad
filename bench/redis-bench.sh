#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Decisions per second of one gateway against a shared Redis store beside
# LMDB (bench/redis-bench.c), with a redis-server started here for the
# run, its own config, stopped by its PID:
#   bench/redis-bench.sh [EVENTS] [IN_FLIGHT]          (200000, 64) on a
#       unix socket in a temp dir (no TCP)
#   bench/redis-bench.sh --veth DELAY_MS [EVENTS] [IN_FLIGHT]   over TCP
#       between two namespaces joined by a veth (198.51.100.0/24), with
#       DELAY_MS added to Redis's replies (so to each round trip) by tc
#       netem, or where the kernel has no sch_netem by bench/delay-relay
#       beside Redis (said in the output); needs root
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GREYGATE_BUILD:-$top/build}
password=bench-$$

if [ "${1:-}" = --veth ]; then
	delay=$2
	shift 2
	. "$top/tests/lib/netns.sh"
	netns_init
	netns_host gw
	netns_host redis
	netns_link gw 198.51.100.1/30 redis 198.51.100.2/30
	port=6379 how="netem ${delay} ms"
	if [ "$delay" != 0 ] &&
		! nsx redis tc qdisc add dev "$(netns_dev redis gw)" root netem delay "${delay}ms" 2>/dev/null; then
		# (no sch_netem: the replies held by a relay in Redis's namespace)
		port=6380 how="no sch_netem here: ${delay} ms added by bench/delay-relay"
		netns_spawn redis "$build/bench/delay-relay" 198.51.100.2 6380 198.51.100.2 6379 $(( delay * 1000 ))
		netns_on_exit "kill $SPAWNED"
	fi
	cat >"$NETNS_TMP/redis.conf" <<CONF
bind 198.51.100.2
port 6379
dir $NETNS_TMP
requirepass $password
save ""
appendonly no
logfile $NETNS_TMP/redis.log
CONF
	netns_spawn redis redis-server "$NETNS_TMP/redis.conf"
	netns_on_exit "kill $SPAWNED"
	wait_for 10 nsx redis bash -c 'exec 3<>/dev/tcp/198.51.100.2/6379' 2>/dev/null ||
		netns_die "redis-server did not start"
	# (redis-cli --latency: a PING at a time for a second; min max avg n)
	rtt=$(nsx gw timeout 1.5 redis-cli -h 198.51.100.2 -p $port --no-auth-warning -a "$password" \
		--latency --raw 2>/dev/null | tail -1 | cut -d' ' -f3) || true
	echo "redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), TCP over a veth," \
		"$how: a PING's round trip ${rtt:-?} ms"
	nsx gw "$build/bench/redis-bench" 198.51.100.2:$port "$password" "${1:-200000}" "${2:-64}"
	exit 0
fi

dir=$(mktemp -d /tmp/greygate-redis-bench.XXXXXX)
pid=""
cleanup() { [ -z "$pid" ] || { kill "$pid"; wait "$pid" 2>/dev/null; }; rm -rf "$dir"; }
trap cleanup EXIT
cat >"$dir/redis.conf" <<CONF
port 0
unixsocket $dir/redis.sock
unixsocketperm 700
dir $dir
requirepass $password
save ""
appendonly no
logfile $dir/redis.log
CONF
redis-server "$dir/redis.conf" &
pid=$!
for _ in $(seq 100); do [ -S "$dir/redis.sock" ] && break; sleep 0.05; done
echo "redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), unix socket"
"$build/bench/redis-bench" "$dir/redis.sock" "$password" "${1:-200000}" "${2:-64}"
