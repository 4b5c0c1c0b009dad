#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygated refuses to start with a clear one-line error and exit code 2,
# leaving nothing behind (no nft table), for: a bad value (a duration, a
# size), an unknown key, settings that would stop all mail, a missing or
# root user, a missing config file (or a folder given as one), a missing
# interface, no libpcap, no CAP_NET_ADMIN, a store folder that is not its own, a
# damaged store, and a table of its name that someone else owns.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
greygated=$GREYGATE_BUILD/daemon/greygated

netns_init
netns_host gw
conf=$NETNS_TMP/greygate.conf

expect_refusal() { # WHAT PATTERN ARGS...
	local what=$1 pattern=$2 out rc=0
	shift 2
	out=$(nsx gw "$@" 2>&1) || rc=$?
	[ "$rc" = 2 ] || fail "$what: exit $rc, want 2 ($out)"
	[ "$(echo "$out" | wc -l)" = 1 ] || fail "$what: more than one line: $out"
	echo "$out" | grep -- "$pattern" >/dev/null || fail "$what: '$out' does not say '$pattern'"
	if nsx gw nft list table inet greygate >/dev/null 2>&1; then
		fail "$what: the table was left behind"
	fi
	echo "ok: $what: $out"
}

write_conf() {
	printf '[gateway]\nstore_dir = %s/store\nallow_dir = %s/allow\ncontrol_socket = %s/control.sock\n%s\n' \
		"$NETNS_TMP" "$NETNS_TMP" "$NETNS_TMP" "$1" >"$conf"
}

write_conf "[greylist]
delay = 5x"
expect_refusal "bad value" "greygate.conf:6: \[greylist\] delay = 5x: want a duration" \
	"$greygated" --config "$conf" --foreground
write_conf "capture_buffer = 100k"
expect_refusal "capture ring too small" \
	"greygate.conf:5: \[gateway\] capture_buffer = 100k: out of range (256k to 1024m)" \
	"$greygated" --config "$conf" --foreground
write_conf "[greylist]
delai = 5"
expect_refusal "unknown key" "greygate.conf:6: \[greylist\] delai = 5: unknown key" \
	"$greygated" --config "$conf" --check-config
expect_refusal "missing config" "no-such.conf: No such file or directory" \
	"$greygated" --config "$NETNS_TMP/no-such.conf"
expect_refusal "a directory as config" "$NETNS_TMP: not a file" \
	"$greygated" --config "$NETNS_TMP" --check-config
# Settings that would stop all mail, in the file and at the start.
write_conf "[tarpit]
session_timeout = 0"
expect_refusal "session_timeout = 0" "greygate.conf:6: \[tarpit\] session_timeout = 0: out of range" \
	"$greygated" --config "$conf" --foreground
write_conf "[greylist]
delay = 1d
retry_window = 1h"
expect_refusal "delay past retry_window" \
	"greygate.conf:7: delay (86400s) must be shorter than retry_window (3600s)" \
	"$greygated" --config "$conf" --check-config
# A policy door that cannot fit the descriptor limit is lowered to what
# fits and said, by --check-config too (issue 29 R5, R10).
write_conf "gateway = no
[policy]
listen = inet:127.0.0.1:10023
max_connections = 100000"
out=$(prlimit --nofile=4096:4096 "$greygated" --config "$conf" --check-config 2>&1) ||
	fail "--check-config refused a door it can lower: $out"
grep -F "warning: [policy] max_connections = 100000 cannot fit 4096 file descriptors (RLIMIT_NOFILE): 3840 instead" \
	<<<"$out" >/dev/null || fail "--check-config did not say the door cannot fit: $out"
echo "ok: a policy door past the descriptor limit is said, and lowered"
# The child's user must exist and not be root: refused before anything
# is opened (it used to log "up" while its child died again and again).
write_conf "user = nosuchuser"
expect_refusal "missing user" "user = nosuchuser: no such user" \
	"$greygated" --config "$conf" --foreground
expect_refusal "missing user (check)" "user = nosuchuser: no such user" \
	"$greygated" --config "$conf" --check-config
write_conf "user = root"
expect_refusal "user root" "user = root: the child must not run as root" \
	"$greygated" --config "$conf" --foreground
write_conf "interface = nosuch0"
expect_refusal "missing interface" "interface = nosuch0: no such interface" \
	"$greygated" --config "$conf" --foreground
expect_refusal "missing interface (check)" "interface = nosuch0: no such interface" \
	"$greygated" --config "$conf" --check-config
# (the same refusal when the sensor captures the interface itself)
write_conf "interface = nosuch0
nflog_group = 0"
expect_refusal "missing interface, captured" "interface = nosuch0: no such interface" \
	"$greygated" --config "$conf" --foreground
# Without libpcap (its file covered by an empty one, in a mount namespace
# of greygated's own): the capture's check says so, by the library's name.
write_conf ""
pcap_file=$(readlink -f "$(cc -print-file-name=libpcap.so)")
[ -f "$pcap_file" ] || fail "libpcap's file not found ($pcap_file)"
: >"$NETNS_TMP/empty.so"
expect_refusal "libpcap missing" "capture on nflog:[0-9]*: libpcap: .*libpcap[^ ]*: file too short$" \
	unshare --mount --propagation private sh -c \
	'mount --bind "$0" "$1" && exec "$2" --config "$3" --foreground' \
	"$NETNS_TMP/empty.so" "$pcap_file" "$greygated" "$conf"
write_conf ""
expect_refusal "no CAP_NET_ADMIN" "needs CAP_NET_ADMIN" \
	setpriv --bounding-set=-net_admin "$greygated" --config "$conf" --foreground

# A store folder that is not greygated's own is refused.
mkdir -m 0777 "$NETNS_TMP/shared-store"
chown nobody "$NETNS_TMP/shared-store"
printf '[gateway]\nstore_dir = %s/shared-store\nallow_dir = %s/allow\ncontrol_socket = %s/control.sock\n' \
	"$NETNS_TMP" "$NETNS_TMP" "$NETNS_TMP" >"$conf"
expect_refusal "a store folder of another user" \
	"store $NETNS_TMP/shared-store: owned by uid $(id -u nobody), mode 777: refused" \
	"$greygated" --config "$conf" --foreground
chown root "$NETNS_TMP/shared-store"
expect_refusal "a store folder others may write" "mode 777: refused" \
	"$greygated" --config "$conf" --foreground
ln -s "$NETNS_TMP/shared-store" "$NETNS_TMP/linked-store"
printf '[gateway]\nstore_dir = %s/linked-store\nallow_dir = %s/allow\ncontrol_socket = %s/control.sock\n' \
	"$NETNS_TMP" "$NETNS_TMP" "$NETNS_TMP" >"$conf"
expect_refusal "a store folder that is a link" "linked-store: not a folder (a link?): refused" \
	"$greygated" --config "$conf" --foreground
# (--check-config says it too: issue 29 R10)
expect_refusal "a store folder that is a link (check)" "linked-store: not a folder (a link?): refused" \
	"$greygated" --config "$conf" --check-config

# A damaged store (cut short, empty): an error that says how, never a
# crash; with store_move_aside it is set aside, said in the log, and
# greygated starts empty.
mkdir -p -m 0700 "$NETNS_TMP/store"
write_conf ""
: >"$NETNS_TMP/store/data.mdb"
expect_refusal "an empty store file" "data.mdb is empty (set store_move_aside = yes" \
	"$greygated" --config "$conf" --foreground
write_conf "store_move_aside = yes"
netns_spawn gw "$greygated" --config "$conf" --foreground >"$NETNS_TMP/empty.log" 2>&1
wait_for 10 grep -q "greygated .* up" "$NETNS_TMP/empty.log" || { cat "$NETNS_TMP/empty.log"; fail "did not start after an empty store"; }
kill "$SPAWNED"
wait "$SPAWNED" || true
grep -q "data.mdb is empty: data.mdb.bad-[0-9]* set aside: starting with an empty greylist" "$NETNS_TMP/empty.log" ||
	fail "setting an empty store aside was not said: $(cat "$NETNS_TMP/empty.log")"
# greygated's own store, from a run just now, cut short.
rm -f "$NETNS_TMP"/store/*
write_conf ""
netns_spawn gw "$greygated" --config "$conf" --foreground >"$NETNS_TMP/pop.log" 2>&1
wait_for 10 grep -q "greygated .* up" "$NETNS_TMP/pop.log" || fail "did not start"
kill "$SPAWNED"
wait "$SPAWNED" || true
truncate -s 8192 "$NETNS_TMP/store/data.mdb"
expect_refusal "a store cut short" "data.mdb is 8192 bytes, its header says [0-9]*: cut short" \
	"$greygated" --config "$conf" --foreground
rm -f "$NETNS_TMP"/store/*

# A corrupt store: an error naming the fix; with store_move_aside it is
# kept aside and greygated starts empty.
mkdir -p "$NETNS_TMP/store"
head -c 65536 /dev/urandom >"$NETNS_TMP/store/data.mdb"
write_conf ""
expect_refusal "corrupt store" "store_move_aside = yes" \
	"$greygated" --config "$conf" --foreground
write_conf "store_move_aside = yes"
netns_spawn gw "$greygated" --config "$conf" --foreground >"$NETNS_TMP/aside.log" 2>&1
wait_for 10 grep -q "greygated .* up" "$NETNS_TMP/aside.log" || { cat "$NETNS_TMP/aside.log"; fail "did not start with store_move_aside"; }
kill "$SPAWNED"
wait "$SPAWNED" || true
ls "$NETNS_TMP"/store/data.mdb.bad-* >/dev/null || fail "corrupt store not kept aside"
echo "ok: corrupt store moved aside with store_move_aside = yes"
write_conf ""

# A table of that name made by someone else is not taken over.
nsx gw nft add table inet greygate
out=$(nsx gw "$greygated" --config "$conf" --foreground 2>&1) && fail "started over a foreign table"
echo "$out" | grep "already exists and is not ours" >/dev/null || fail "foreign table: '$out'"
nsx gw nft list table inet greygate >/dev/null || fail "the foreign table was removed"
echo "ok: foreign table: $out"

# A tarpit port held at start, as the child of a greygated killed a moment
# ago holds it until its parent-death signal is through: waited for (it
# used to refuse at once, so a supervisor's restart failed one time in
# three), and refused only once held past 5 s.
nsx gw nft delete table inet greygate
write_conf ""
hold_port() { # SECONDS: port 2525 listened on by another process
	netns_spawn gw python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("0.0.0.0", 2525))
s.listen()
print("held", flush=True)
time.sleep(float(sys.argv[1]))' "$1" >"$NETNS_TMP/hold.out"
	wait_for 5 grep -q held "$NETNS_TMP/hold.out" || fail "the port was not held"
}
hold_port 2
netns_spawn gw "$greygated" --config "$conf" --foreground >"$NETNS_TMP/held.log" 2>&1
gg=$SPAWNED
wait_for 15 grep -q "greygated .* up" "$NETNS_TMP/held.log" || { cat "$NETNS_TMP/held.log"; fail "did not start once the port was free"; }
grep -q "tarpit port 2525 was held by another (a greygated that had just died?): bound after [0-9]* ms" "$NETNS_TMP/held.log" ||
	fail "the wait for the port was not said: $(cat "$NETNS_TMP/held.log")"
kill "$gg"
wait "$gg" || true
echo "ok: a tarpit port held for 2 s at start: waited for, then started"
hold_port 9
holder=$SPAWNED
expect_refusal "a tarpit port held past 5 s" "tarpit port 2525: Address already in use (still, after 5 s)" \
	"$greygated" --config "$conf" --foreground
kill "$holder" 2>/dev/null || true

# greygated as a container's first process (PID 1 of its own PID
# namespace): its child must know its parent by pid, not by "not 1" (it
# used to exit at once, and again after every restart).
nsx gw nft delete table inet greygate 2>/dev/null || true
write_conf ""
netns_spawn gw unshare --pid --fork "$greygated" --config "$conf" --foreground \
	>"$NETNS_TMP/pid1.log" 2>&1
wait_for 10 grep -q "greygated .* up" "$NETNS_TMP/pid1.log" || { cat "$NETNS_TMP/pid1.log"; fail "did not start as PID 1"; }
sleep 3
[ "$(grep -c "child [0-9]* started" "$NETNS_TMP/pid1.log")" = 1 ] && ! grep -q "child [0-9]* exited" "$NETNS_TMP/pid1.log" ||
	fail "as PID 1 the child keeps ending: $(grep child "$NETNS_TMP/pid1.log")"
# And it stops on SIGTERM, as a container's stop sends it: the kernel
# gives a namespace's first process only signals it has a handler for.
gg=$(pgrep -f "greygated --config $conf --foreground" | while read -r p; do
	[ "$(ps -o comm= -p "$p")" = greygated ] && echo "$p"; done | head -n1)
[ -n "$gg" ] || fail "greygated as PID 1 not found"
kill -TERM "$gg"
wait_for 5 grep -q "stopped" "$NETNS_TMP/pid1.log" || fail "as PID 1, SIGTERM does not stop greygated"
wait "$SPAWNED" || true
echo "ok: as PID 1 of its own PID namespace, its child stays up and SIGTERM stops it"
