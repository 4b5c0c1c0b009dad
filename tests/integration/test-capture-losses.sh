#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Packets the capture loses are said in greygated's log, with what to do
# about it: the child is stopped (SIGSTOP) so that its ring (the smallest
# capture_buffer, 256k) fills with the handshakes of 3,000 connections
# the kernel completes meanwhile; once it runs again the kernel's count of
# lost packets reaches greygated, which warns, names capture_buffer, and
# shows the count in greygatectl status. Greylisting goes on afterwards.
# (The interface capture, nflog_group = 0: on NFLOG the bots' handshakes
# are never logged to the sensor.)
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
greygated_conf "capture_buffer = 256k
nflog_group = 0
[tarpit]
max_connections = 5000
max_per_client = 5000"
greygated_start
child=$(ggctl status --json | jq -r .child.pid)
kill -STOP "$child"
netns_on_exit "kill -CONT $child"
nsx sender python3 - <<'PY'
import socket
socks = []
for i in range(3000):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("203.0.113.1", 25))
    except BlockingIOError:
        pass
    socks.append(s)
import time
time.sleep(1)
for s in socks:
    s.close()
PY
kill -CONT "$child"
lost() { grep -q "capture: [0-9]* packets lost since the child started (its ring was full); .*raise capture_buffer (now 256 KiB)" "$GG_LOG"; }
wait_for 15 lost || { tail -5 "$GG_LOG"; fail "no warning of the lost packets"; }
ggctl status --json | jq -e '.sensor.pcap_dropped > 0' >/dev/null ||
	fail "status: $(ggctl status --json | jq -c .sensor)"
echo "ok: lost packets are warned of, with capture_buffer named; status counts them ($(grep -o "capture: [0-9]* packets lost" "$GG_LOG"))"

[ "$(grep -c "packets lost" "$GG_LOG")" = 1 ] || fail "warned more than once a minute"
out=$(nsx sender swaks --server 203.0.113.1 --from a@sender.test --to bob@example.org 2>&1 || true)
echo "$out" | grep "451 4.7.1" >/dev/null || { echo "$out"; fail "no 451 after the losses"; }
echo "ok: greylisting goes on after the losses"
