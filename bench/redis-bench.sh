#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Decisions per second of one gateway against a shared Redis store beside
# LMDB (bench/redis-bench.c), with a redis-server started here for the
# run on a unix socket in a temp dir (no TCP), its own config, stopped by
# its PID.
#   bench/redis-bench.sh [EVENTS] [IN_FLIGHT]      (200000, 64)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GREYGATE_BUILD:-$top/build}
dir=$(mktemp -d /tmp/greygate-redis-bench.XXXXXX)
pid=""
cleanup() { [ -z "$pid" ] || { kill "$pid"; wait "$pid" 2>/dev/null; }; rm -rf "$dir"; }
trap cleanup EXIT
password=bench-$$
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
