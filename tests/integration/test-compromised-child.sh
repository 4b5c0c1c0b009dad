#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygated against a compromised child. greygated-seam (a build for the
# tests only) runs tests/daemon/evil-child in its child's place: it starts
# the real child behind itself and relays its records both ways, so real
# senders are served as ever, and on command sends records of its own, as
# a child whose parser an attacker took over could: an attempt in the old
# layout naming 127.0.0.1, questions of sessions never opened or already
# closed, a session id used again, sessions opened without a socket, with
# a unix socket, a listener or two descriptors, a descriptor on a
# question, one question asked twice, records out of order, every field
# at its extremes, sensor events off the fast path (which the policy would
# pass on a retry), a flood. Asserted for each: greygated refuses it in a
# log line, opens no connection (every SYN greygated's host sends is
# counted), adds nothing to any set, and keeps serving. Then, with the
# transparent hand-off: a real client that reached the tarpit on port 22
# (redirected there by a rule of the test's) passes greylisting but is
# never connected to port 22; greygated's loop answers while the child
# reads nothing; and a real Postfix sender is greylisted, passes and is
# delivered once through the hand-off, the MTA seeing its own address.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/handoff.sh"

netns_init
netns_sender_gw
netns_host client
netns_link client 198.51.100.10/24 gw 198.51.100.1/24 \
	198.51.100.11/24 198.51.100.2/24 198.51.100.20/24 198.51.100.3/24
nsx client ip route add 203.0.113.0/24 via 198.51.100.1

postfix_new mx gw "203.0.113.1"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "mx is not listening"
postfix_relay out sender 203.0.113.1 "smtp_tls_security_level = none"

# What greygated's host sends: every SYN, and those to port 22; and a
# rule of the test's sending port 22 to the tarpit, as a misconfigured
# or hostile redirect could.
nsx gw nft -f - <<'NFT'
table inet ggtest {
	counter syns {}
	counter syns22 {}
	chain out {
		type filter hook output priority 0;
		tcp flags & (syn | ack) == syn counter name "syns"
		tcp dport 22 tcp flags & (syn | ack) == syn counter name "syns22"
	}
	chain pre {
		type nat hook prerouting priority dstnat;
		tcp dport 22 redirect to :2525
	}
}
NFT
syns() { nsx gw nft list counter inet ggtest "${1:-syns}" | awk '/packets/{print $2}'; }

mkdir -p "$NETNS_TMP/store"
mkfifo "$NETNS_TMP/evil.ctl"
export GREYGATE_TEST_CHILD=$GREYGATE_BUILD/tests/evil-child
export GREYGATE_REAL_CHILD=$GREYGATE_BUILD/daemon/greygated
export GG_EVIL_CTL=$NETNS_TMP/evil.ctl GG_EVIL_LOG=$NETNS_TMP/evil.log
GG_BIN=$GREYGATE_BUILD/tests/greygated-seam
greygated_conf "[greylist]
delay = 3
trap_recipients = spamtrap@example.org
[handoff]
mode = transparent
address = 203.0.113.1:25
timeout = 5s
[tarpit]
max_per_client = 1000"
greygated_start
log=$GG_LOG
wait_for 10 grep -q "hand-off: the MTA at 203.0.113.1:25 offers" "$log" ||
	{ cat "$log"; fail "the MTA's EHLO was not learnt"; }

evil() { # COMMAND [SECONDS, 5]: sent, and done within SECONDS
	local before
	before=$(grep -c . "$NETNS_TMP/evil.log" 2>/dev/null || true)
	echo "$1" >"$NETNS_TMP/evil.ctl"
	wait_for "${2:-5}" eval '[ "$(grep -c . "$NETNS_TMP/evil.log")" -gt "$before" ]' ||
		fail "the evil child did not do '$1'"
	grep -q "^done: $1\$" "$NETNS_TMP/evil.log" || fail "the evil child: $(tail -1 "$NETNS_TMP/evil.log")"
}
refusals() { grep -c "child: record refused" "$log" || true; }
# refused COMMAND WHY...: each WHY a refusal's log line, within a second
refused() {
	local cmd=$1 before want
	shift
	before=$(refusals)
	want=$(( before + $# ))
	evil "$cmd"
	wait_for 3 eval '[ "$(refusals)" -ge "$want" ]' ||
		{ tail -5 "$log"; fail "$cmd: $# refusals wanted, $(( $(refusals) - before )) said"; }
	for why in "$@"; do
		tail -n +1 "$log" | grep "child: record refused" | tail -n $(( $(refusals) - before )) |
			grep -q -- "$why" || fail "$cmd: no refusal says '$why'"
	done
}
sets() { nsx gw nft list set inet greygate "$1" | sed -n '/elements/,$p'; }

# Real sessions at the tarpit first: one that stays (the evil child holds
# its socket, as a compromised child would) and one that ended.
cat >"$NETNS_TMP/idle.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("203.0.113.1", 25), source_address=(sys.argv[1], 0))
s.recv(512)
s.sendall(b"EHLO idle.test\r\n")
s.recv(512)
if sys.argv[2] == "quit":
    s.sendall(b"QUIT\r\n")
    s.recv(512)
else:
    time.sleep(float(sys.argv[2]))
PY
netns_spawn client python3 "$NETNS_TMP/idle.py" 198.51.100.10 60
nsx client python3 "$NETNS_TMP/idle.py" 198.51.100.11 quit
sleep 1

pass0=$(sets pass4) trap0=$(sets trap4) allow0=$(sets allow4) syns0=$(syns)
refused v2-attempt "a record of another size or version"
refused attempt-unknown "not open (never opened, or ended)"
refused attempt-closed "not open"
refused open-reuse "its id is not new"
refused open-nofd "a session opened without its socket"
refused open-unix "not a TCP socket"
refused open-listener "not connected (a listener"
refused open-two "more than one descriptor"
refused fd-on-attempt "a descriptor with a record that takes none"
refused double-ask "a question number asked before"
refused out-of-order "a session closed that is not open" "not open"
refused extremes "a question of an unknown kind" "a session opened without its socket" \
	"a session closed that is not open" "a log line of no level" "of a type the child may not send" \
	"an event of no address family" "another size or version"
# The sensor's word off the fast path, twice past the delay: the policy
# would have passed 203.0.113.66; and on the fast path, an unpassed client
# "writing to" a greytrap.
refused "event 0 203.0.113.66 bob@example.org" "not of the fast path"
sleep 4
refused "event 0 203.0.113.66 bob@example.org" "not of the fast path"
refused "event 1 127.0.0.1 bob@example.org" "not of the fast path"
# A handed session's later RCPT names its session: one never handed
# (the idle client's) or ended is refused, whatever address it carries.
refused "session-event live 203.0.113.66 spamtrap@example.org" "an event of a session not handed to the MTA"
refused "session-event closed 203.0.113.66 spamtrap@example.org" "an event of a session that is not open"
evil "event 2 203.0.113.66 spamtrap@example.org"
evil "event 2 203.0.113.66 bob@example.org"
sleep 1
[ "$(syns)" = "$syns0" ] || fail "greygated opened $(( $(syns) - syns0 )) connection(s) for forged records"
[ "$(sets pass4)" = "$pass0" ] || fail "pass4 changed: $(sets pass4)"
[ "$(sets trap4)" = "$trap0" ] || fail "trap4 changed: $(sets trap4)"
[ "$(sets allow4)" = "$allow0" ] || fail "allow4 changed: $(sets allow4)"
! grep -E "action=(pass|trap)[^ ]* .*client=(127\.0\.0\.1|203\.0\.113\.66)" "$log" || fail "a forged client was passed or trapped"
n=$(refusals)
echo "ok: $n forged records refused, each said in a line; no connection opened, no set changed"

# A flood: counted, the log held to its limit, greygated still answering.
evil "flood 2000"
wait_for 5 eval '[ "$(ggctl status --json | jq .child.records_refused)" -ge $(( n + 2000 )) ]' ||
	fail "the flood was not counted: $(ggctl status --json | jq -c .child)"
[ "$(refusals)" -le 60 ] || fail "$(refusals) refusals logged in a minute (at most 60)"
grep -q "records refused" <<<"$(ggctl status)" || fail "status does not say records were refused"
grep -q "^greygate_child_records_refused_total [0-9]" <<<"$(ggctl metrics)" || fail "no metric of refused records"
echo "ok: a flood of 2,000 forged questions: counted ($(ggctl status --json | jq .child.records_refused)), $(refusals) lines logged, greygated answering"

# Two descriptors with each of 500 records: refused, and greygated keeps
# none of them (it kept both of each, in its own table, until 2026-12-06).
fds() { find "/proc/$GG_PID/fd" -mindepth 1 | wc -l; }
fd0=$(fds) n=$(ggctl status --json | jq .child.records_refused)
evil "open-two 500"
wait_for 5 eval '[ "$(ggctl status --json | jq .child.records_refused)" -ge $(( n + 500 )) ]' ||
	fail "the records with two descriptors were not refused: $(ggctl status --json | jq -c .child)"
[ $(( $(fds) - fd0 )) -lt 50 ] || fail "greygated kept the descriptors it was sent: $fd0 open before, $(fds) after"
echo "ok: 500 records with two descriptors each: refused, greygated holds $(fds) descriptors ($fd0 before)"

# A real client redirected to the tarpit from port 22: greylisted, then
# passed, but never handed to port 22.
try22() { SMTP_PORT=22 nsx client python3 "$here/../lib/smtp-session.py" try 198.51.100.10 203.0.113.1; }
grep -q "^RCPT 451 4.7.1 <bob@example.org>: Greylisted" <<<"$(try22)" || fail "port 22: not greylisted"
sleep 4
grep -q "^RCPT 451" <<<"$(try22)" || fail "port 22: the passing attempt was not answered 451"
grep -q "198.51.100.10: hand-off refused: the client was going to port 22, not to smtp_port 25" "$log" ||
	{ tail "$log"; fail "port 22: no refusal logged"; }
[ "$(syns syns22)" = 0 ] || fail "greygated connected to port 22"
echo "ok: a client that came in on port 22 passed greylisting; its hand-off to port 22 was refused, no connection made"

# The child reads nothing: greygated's loop goes on.
evil stop-reading
cat >"$NETNS_TMP/ask.py" <<'PY'
import socket, sys
socks = []
for i in range(int(sys.argv[2])):
    s = socket.create_connection(("203.0.113.1", 25), source_address=(sys.argv[1], 0))
    s.sendall(b"EHLO many.test\r\nMAIL FROM:<m@many.test>\r\nRCPT TO:<r%d@example.org>\r\n" % i)
    socks.append(s)
PY
nsx client python3 "$NETNS_TMP/ask.py" 198.51.100.20 150 2>/dev/null || true
start=$(date +%s%N)
ggctl status >/dev/null || fail "status failed while the child read nothing"
# (held up by the child, status would wait until it reads again: the
# bound is loose, for a busy machine)
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 5000 ] || fail "status took over 5 s while the child read nothing"
evil start-reading
echo "ok: while the child read nothing, greygated answered at once"

# A real sender, through all of it.
out_send "real-$NETNS_RUN"
sent_by_the_pass "a real sender" mx "real-$NETNS_RUN" 203.0.113.10 203.0.113.10
grep "connect from unknown\[203.0.113.10\]" "$(postfix_log mx)" >/dev/null || fail "the MTA did not see the client's own address"
echo "ok: a real Postfix sender: greylisted, passed, delivered once through the hand-off, the MTA seeing 203.0.113.10"

# Last (its session's id is the real child's next): a socket the child
# opens as a session with SO_LINGER {1, 40} and bytes its client will
# never read, its own copy closed: greygated's close of it must not wait
# (issue 55: status, the door and every decision stopped for 40 s).
cat >"$NETNS_TMP/stuck.py" <<'PY'
import socket, sys, time
socks = []
for i in range(200):  # (until the evil child took one: up to 30 s)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((sys.argv[1], 0))
    s.settimeout(2)
    try:
        s.connect(("203.0.113.1", 25))
    except OSError:
        pass
    socks.append(s)
    time.sleep(0.15)
time.sleep(60)
PY
# (198.51.100.0/24 passed above: forgotten, so that it meets the tarpit)
ggctl forget 198.51.100.11 >/dev/null || fail "forget 198.51.100.11"
netns_spawn client python3 "$NETNS_TMP/stuck.py" 198.51.100.11
evil linger 25
start=$(date +%s%N)
ggctl status >/dev/null || fail "status failed after the lingering socket"
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 5000 ] ||
	fail "status took $(( ($(date +%s%N) - start) / 1000000 )) ms after the lingering socket"
echo "ok: a session's socket with SO_LINGER {1, 40} and unread bytes: greygated closed it and answered at once"
