#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygated as a service: the systemd units meson generates pass
# systemd-analyze verify; greygated tells $NOTIFY_SOCKET "READY=1" once it
# is up (Type=notify), and SIGTERM stops it
# cleanly, removing its table and control socket.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_host gw

# The units as meson makes them, with the programs where this build has
# them (systemd-analyze checks that they exist).
units=$NETNS_TMP/units
mkdir -p "$units"
for u in greygated.service greygate-provider-banks.service; do
	sed -e "s#/usr/local/sbin/greygated#$GREYGATE_BUILD/daemon/greygated#" \
		-e "s#/usr/local/sbin/greygate-provider-banks#$(realpath "$here/../../scripts/provider-banks")#" \
		-e "s#/usr/local/bin/greygatectl#$GREYGATE_BUILD/tools/greygatectl#" \
		"$GREYGATE_BUILD/$u" >"$units/$u"
done
cp "$here/../../etc/greygate-provider-banks.timer" "$units/"
grep -q "^Type=notify$" "$units/greygated.service" || fail "greygated.service is not Type=notify"
out=$(systemd-analyze verify "$units"/* 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify complains: $out"
echo "ok: the systemd units (greygated, the providers' banks and their timer) verify"

# A notify socket like systemd's, listening before greygated starts.
notify=$NETNS_TMP/notify.sock
python3 - "$notify" >"$NETNS_TMP/notify.out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
print(s.recv(256).decode(), flush=True)
PY
listener=$!
wait_for 5 test -S "$notify" || fail "notify listener did not start"
mkdir -p "$NETNS_TMP/store"
greygated_conf
export NOTIFY_SOCKET=$notify
greygated_start
unset NOTIFY_SOCKET
wait "$listener" || fail "no readiness message"
[ "$(cat "$NETNS_TMP/notify.out")" = "READY=1" ] || fail "notify said: $(cat "$NETNS_TMP/notify.out")"
echo "ok: greygated sends READY=1 to \$NOTIFY_SOCKET when up"

kill -TERM "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "SIGTERM did not stop greygated"
grep -q "stopped" "$GG_LOG" || fail "no clean stop logged"
if nsx gw nft list table inet greygate >/dev/null 2>&1; then fail "table left after SIGTERM"; fi
[ ! -e "$GG_SOCK" ] || fail "control socket left after SIGTERM"
echo "ok: SIGTERM stops greygated, its table and control socket go with it"
