#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Pass propagation between gateways sharing one Redis: three greygateds
# (A, B, C), each in a namespace of its own with its own nft table, and a
# redis-server (requirepass) in another, joined by veths (198.51.100.0/24
# only; no packet leaves the namespaces). N passes are made one at a time
# at A through its policy door; bench/propagation.py times each from A's
# answer to the element in B's and C's kernel sets (`nft monitor`).
# Target (issue 18): p99 under 50 ms on one host. Needs root.
#   bench/shared-propagation.sh [N]          (10000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GREYGATE_BUILD:-$top/build}
n=${1:-10000}
. "$top/tests/lib/netns.sh"

netns_init
netns_host redis
i=0
for gw in a b c; do
	netns_host "$gw"
	netns_link "$gw" "198.51.100.$((i * 16 + 1))/28" redis "198.51.100.$((i * 16 + 2))/28"
	i=$((i + 1))
done
dir=$NETNS_TMP
mkdir -m 700 "$dir/redis"
cat >"$dir/redis/redis.conf" <<CONF
bind 198.51.100.2 198.51.100.18 198.51.100.34
port 6379
requirepass bench-$$
dir $dir/redis
save ""
appendonly no
logfile $dir/redis/redis.log
CONF
printf 'bench-%s\n' "$$" >"$dir/redis.pass"
chmod 600 "$dir/redis.pass"
netns_spawn redis redis-server "$dir/redis/redis.conf"
netns_on_exit "kill $SPAWNED"
sleep 0.5

i=0
for gw in a b c; do
	mkdir -p "$dir/$gw/store" "$dir/$gw/allow.d"
	cat >"$dir/$gw/greygate.conf" <<CONF
[gateway]
interface = any
store_dir = $dir/$gw/store
allow_dir = $dir/$gw/allow.d
hostname = $gw.bench
control_socket = $dir/$gw/control.sock
store = redis://198.51.100.$((i * 16 + 2)):6379/0
store_password_file = $dir/redis.pass
log_level = warn
[greylist]
delay = 1
# (as the entries in bench/RESULTS.md measured it: the policy door alone
# asks, no DNS here)
[handoff]
mode = off
[signals]
lookups = no
[policy]
listen = unix:$dir/$gw/policy.sock
test_time = yes
CONF
	netns_spawn "$gw" "$build/daemon/greygated" --foreground --config "$dir/$gw/greygate.conf" \
		>"$dir/$gw/log" 2>&1
	netns_on_exit "kill $SPAWNED"
	i=$((i + 1))
done
for gw in a b c; do
	wait_for 10 test -S "$dir/$gw/policy.sock" || { cat "$dir/$gw/log"; netns_die "greygated $gw did not start"; }
done
echo "redis-server $(redis-server --version | grep -o 'v=[0-9.]*') over veth, 3 gateways, $n passes made at A one at a time"
python3 "$top/bench/propagation.py" "$dir/a/policy.sock" "$n" 1 "$(netns_ns b)" "$(netns_ns c)"
