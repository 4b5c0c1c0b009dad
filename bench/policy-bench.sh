#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The policy door beside Debian's postgrey (1.37), in one run with the
# same requests: both in a namespace of their own on loopback, each
# answering bench/policy-load.c's full Postfix requests (about 640 bytes;
# a quarter of them retries of a triplet sent before) over 1, 8 and 64
# connections for SECONDS each. For each: requests per second, latency
# p50 and p99, and the server's CPU per request (its /proc ticks over the
# run). Both read the same whitelist files (postgrey's, as Debian ships
# them). postgrey logs to syslog, and a machine without one (as here)
# takes none of its lines: greygate is measured at log_level = warn (no
# line per request) for equal terms, and again at info, its default,
# writing a line per request to a file. Then each store's size on disk
# after TRIPLETS first sights, per million triplets.
# With GREYGATE_REF_BUILD (another build dir, e.g. of an older commit),
# its greygated runs too, at warn, in the same rounds: before and after,
# twice at each number of connections, in the order A B B A (whichever
# runs first has tended to win: each goes first once).
# Run as root after a build:  bench/policy-bench.sh [SECONDS] [TRIPLETS]
# (installs postgrey with scripts/deps bench; its service stays off)
set -euo pipefail
here=$(cd "$(dirname "$0")/../tests/integration" && pwd)
top=$(cd "$here/../.." && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$top/build}
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"
seconds=${1:-10}
triplets=${2:-200000}
load=$GREYGATE_BUILD/bench/policy-load
[ -x "$load" ] || { echo "build first: $load is missing" >&2; exit 1; }
"$top/scripts/deps" bench

netns_init
netns_host gw
clients=/etc/postgrey/whitelist_clients
recipients=/etc/postgrey/whitelist_recipients

# postgrey as Debian runs it, on its own port and database.
start_postgrey() { # DBDIR PORT
	install -d -o postgrey -g postgrey -m 700 "$1"
	netns_spawn gw postgrey --inet=127.0.0.1:"$2" --dbdir="$1" --delay=300 \
		--user=postgrey --group=postgrey --whitelist-clients="$clients" \
		--whitelist-recipients="$recipients" >"$1.log" 2>&1
	PG_PID=$SPAWNED
	wait_for 20 nsx gw bash -c "exec 3<>/dev/tcp/127.0.0.1/$2" 2>/dev/null ||
		{ cat "$1.log"; fail "postgrey did not start"; }
}

# greygated as the policy door alone.
start_door() { # STORE PORT [LOG_LEVEL] [BUILD]
	install -d -m 700 "$1"
	greygated_conf "gateway = no
log_level = ${3:-warn}
[policy]
listen = inet:127.0.0.1:$2
whitelist_clients = $clients
whitelist_recipients = $recipients"
	sed -i -e "s|^store_dir = .*|store_dir = $1|" \
		-e "s|^control_socket = .*|control_socket = $NETNS_TMP/control-$2.sock|" \
		"$NETNS_TMP/greygate.conf"
	GG_LOG=$NETNS_TMP/greygated-$2.log
	netns_spawn gw "${4:-$GREYGATE_BUILD}/daemon/greygated" --foreground \
		--config "$NETNS_TMP/greygate.conf" >>"$GG_LOG" 2>&1
	GG_PID=$SPAWNED
	# (at log_level warn it does not say it is up: its port does)
	wait_for 10 nsx gw bash -c "exec 3<>/dev/tcp/127.0.0.1/$2" 2>/dev/null ||
		{ cat "$GG_LOG"; fail "greygated did not start"; }
}

stop_pid() { kill "$1" 2>/dev/null || true; wait_for 10 eval "! kill -0 $1 2>/dev/null" || true; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

run() { # NAME PID PORT CONNS
	local t0 t1 out n
	t0=$(ticks "$2")
	out=$(nsx gw "$load" 127.0.0.1 "$3" "$4" "$seconds") || fail "$1: the load failed"
	t1=$(ticks "$2")
	n=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<<"$out")
	printf '%-20s conns %2d  %s cpu_us_per_request=%.1f\n' "$1" "$4" "$out" \
		"$(awk -v t=$(( t1 - t0 )) -v hz="$hz" -v n="$n" 'BEGIN {print t * 1e6 / hz / n}')"
}

fill() { # NAME PORT
	nsx gw "$load" 127.0.0.1 "$2" 8 3600 "$triplets" 0 >/dev/null || fail "$1: filling failed"
}

size_kib() { du -sk "$1" | awk '{print $1}'; }

echo "policy bench: $seconds s per run, $(nproc) cores; postgrey $(dpkg-query -W -f='${Version}' postgrey)"
start_postgrey "$NETNS_TMP/pg" 10030
start_door "$NETNS_TMP/gg" 10031
GG_QUIET=$GG_PID
start_door "$NETNS_TMP/gg-info" 10032 info
GG_INFO=$GG_PID
GG_REF=
if [ -n "${GREYGATE_REF_BUILD:-}" ]; then
	start_door "$NETNS_TMP/gg-ref" 10033 warn "$GREYGATE_REF_BUILD"
	GG_REF=$GG_PID
fi
for c in 1 8 64; do
	run postgrey "$PG_PID" 10030 "$c"
	run greygate "$GG_QUIET" 10031 "$c"
	if [ -n "$GG_REF" ]; then
		run "greygate, ref" "$GG_REF" 10033 "$c"
		run "greygate, ref" "$GG_REF" 10033 "$c"
		run greygate "$GG_QUIET" 10031 "$c"
	fi
	run "greygate, info log" "$GG_INFO" 10032 "$c"
done
stop_pid "$GG_INFO"
[ -z "$GG_REF" ] || stop_pid "$GG_REF"
GG_PID=$GG_QUIET

# Store sizes: a fresh store each, TRIPLETS first sights.
stop_pid "$PG_PID"
stop_pid "$GG_PID"
rm -rf "$NETNS_TMP/pg" "$NETNS_TMP/gg"
start_postgrey "$NETNS_TMP/pg" 10030
start_door "$NETNS_TMP/gg" 10031
fill postgrey 10030
fill greygate 10031
stop_pid "$PG_PID"
stop_pid "$GG_PID"
for s in "postgrey pg" "greygate gg"; do
	set -- $s
	kib=$(size_kib "$NETNS_TMP/$2")
	printf '%-20s store after %d triplets: %d KiB on disk, %.0f MiB per million\n' \
		"$1" "$triplets" "$kib" "$(awk -v k="$kib" -v n="$triplets" 'BEGIN {print k / 1024 * 1e6 / n}')"
done
