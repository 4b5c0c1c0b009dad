#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The policy door full (issue 57 item 6): 8,000 idle connections from
# one peer (a local MTA's smtpd processes are one), then 50 newcomers,
# each closing the longest idle for itself. What greygated's CPU pays a
# newcomer (its utime + stime in /proc, ticks of 10 ms, per eviction),
# for this build and, side by side, a reference build (REF_BUILD: a
# build directory of another commit, e.g. the one before issue 57's
# change: git worktree add /tmp/ref HEAD~N && meson setup /tmp/ref/build
# && meson compile -C /tmp/ref/build). Run as root, in a namespace of
# its own (nothing leaves it).
#   sudo bench/door-evict.sh [CONNECTIONS [NEWCOMERS]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/tests/integration
GREYGATE_BUILD=${GREYGATE_BUILD:-$root/build}
N=${1:-8000}
NEW=${2:-50}
. "$root/tests/lib/netns.sh"
. "$root/tests/lib/greygated.sh"

netns_init
netns_host gw
ulimit -n $(( N + NEW + 1024 ))

cat >"$NETNS_TMP/hold.py" <<'PY'
import socket, sys, time
path, n, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s
held = [conn() for _ in range(n)]
time.sleep(1)
print("held", flush=True)
sys.stdin.readline()
extra = []
for _ in range(new):
    extra.append(conn())
# each newcomer's eviction done once the door answers it: one request
req = b"request=smtpd_access_policy\nprotocol_state=RCPT\nclient_address=192.0.2.1\nsender=a@a.test\nrecipient=b@b.test\n\n"
extra[-1].sendall(req)
extra[-1].settimeout(30)
extra[-1].recv(512)
print("done", flush=True)
PY

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # BUILD NAME: one greygated of BUILD, the door filled, NEW newcomers
	local build=$1 name=$2 before after fifo out
	rm -rf "$NETNS_TMP/store" && mkdir -p "$NETNS_TMP/store"
	greygated_conf "gateway = no
[policy]
listen = unix:$NETNS_TMP/door.sock
max_connections = $N
idle_timeout = 600s"
	GG_BIN=$build/daemon/greygated greygated_start
	fifo=$NETNS_TMP/hold.$name out=$NETNS_TMP/hold.$name.out
	mkfifo "$fifo"
	exec 5<>"$fifo"
	nsx gw python3 "$NETNS_TMP/hold.py" "$NETNS_TMP/door.sock" "$N" "$NEW" <"$fifo" >"$out" &
	local pid=$!
	wait_for 120 grep -q held "$out" || fail "$name: the $N connections were not opened"
	before=$(ticks "$GG_PID")
	echo >&5
	wait_for 300 grep -q done "$out" || fail "$name: the newcomers were not answered"
	after=$(ticks "$GG_PID")
	exec 5>&-
	wait "$pid" || true
	printf '%s\t%s\t%s\t%s\n' "$name" "$N" "$NEW" \
		"$(awk -v t=$(( after - before )) -v n="$NEW" 'BEGIN {printf "%d ticks, %.2f ms a newcomer", t, t * 10 / n}')"
	kill "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "$name: greygated did not stop"
}

{
	printf 'build\tconnections\tnewcomers\tgreygated CPU\n'
	run "$GREYGATE_BUILD" this
	[ -z "${REF_BUILD:-}" ] || run "$REF_BUILD" reference
} | column -t -s $'\t'
