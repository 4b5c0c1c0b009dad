#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygatectl check (issue 59) against a live gateway, with real parts: a
# greygated in front of Debian's Postfix, its hand-off to a PROXY v2
# listener. Healthy, every line is OK and the exit status 0; then each
# check is broken in turn, its line asserted, and mended: the MTA
# stopped (asked now, not remembered), a nat chain of another table
# before greygate's on prerouting, the control socket opened to every
# user, the child killed, DNS that does not answer (auto's hand-off
# before its first client is OK, waiting), and, for a door
# alone (a second greygated), a store on a 4 MiB disk and the door's
# socket opened to every user. greygated not running: FAIL, exit 2.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
postfix_new mx gw "203.0.113.1"
postfix_proxy_listener mx
postfix_start mx
proxy_up() { nsx gw bash -c "exec 3<>/dev/tcp/127.0.0.1/10025" 2>/dev/null; }
wait_for 10 proxy_up || fail "Postfix's PROXY listener did not start"

mkdir -p "$NETNS_TMP/store"
export GG_HANDOFF_DEFAULT=1 # (its own [handoff] below)
greygated_conf "[handoff]
mode = proxy-v2
address = 127.0.0.1:10025"
greygated_start

# check: its output in $out, its exit status in $rc
check() { rc=0; out=$(ggctl check) || rc=$?; }
line() { # LEVEL WHAT: the line of WHAT says LEVEL
	grep -E "^$1 +$2" <<<"$out" >/dev/null || fail "no '$1 $2' line (exit $rc):
$out"
}

# --- healthy: every line OK ---
check
[ "$rc" = 0 ] || fail "a healthy gateway: exit $rc:
$out"
for what in "child: pid [0-9]+" "table: inet greygate steers port 25 at priority -110, before every other" \
	"store: $NETNS_TMP/store writable" "DNS: lookups off" "clock:" "control socket: $NETNS_TMP/control.sock mode 0660" \
	"hand-off: proxy-v2: the MTA at 127.0.0.1:10025 answers"; do
	line OK "$what"
done
echo "ok: a healthy gateway: every line OK, exit 0"

# --- the MTA stopped: the hand-off fails, asked now ---
postfix_stop mx
check
[ "$rc" = 2 ] || fail "the MTA stopped: exit $rc"
line FAIL "hand-off: proxy-v2: the MTA does not answer as proxy-v2: passing clients hear 451"
postfix_start mx
wait_for 10 proxy_up || fail "Postfix did not start again"
check
line OK "hand-off: proxy-v2: the MTA at 127.0.0.1:10025 answers"
echo "ok: the MTA stopped: FAIL hand-off (asked at the check, not remembered), OK again once it answers"

# --- another table's nat chain before greygate's ---
nsx gw nft add table ip rival
nsx gw nft add chain ip rival early "{ type nat hook prerouting priority -150; }"
check
[ "$rc" = 1 ] || fail "a rival chain: exit $rc"
line WARN "table: inet greygate steers port 25 at priority -110, but table ip rival chain early at -150 runs first"
nsx gw nft delete table ip rival
check
line OK "table: inet greygate steers port 25"
echo "ok: a nat chain of another table before greygate's: WARN table, naming it"

# --- the control socket open to every user ---
chmod o+rw "$GG_SOCK"
check
[ "$rc" = 2 ] || fail "an open control socket: exit $rc"
line FAIL "control socket: $GG_SOCK is open to every local user \(mode 0666\)"
chmod o-rw "$GG_SOCK"
echo "ok: the control socket open to everyone: FAIL"

# --- the child killed: restarted, said ---
child=$(ggctl status --json | jq -r .child.pid)
[ "$child" -gt 0 ] || fail "no child pid in status"
kill -9 "$child"
# (once greygated saw it end: a new child, or none yet)
wait_for 10 eval '[ "$(ggctl status --json | jq -r .child.pid)" != "$child" ]' ||
	fail "greygated did not see its child end"
check
[ "$rc" -ge 1 ] || fail "the child killed: exit $rc:
$out"
grep -E "^(WARN|FAIL) +child: (none running|pid [0-9]+, up [0-9]+ s, restarted \(2 starts\))" <<<"$out" >/dev/null ||
	fail "the child's end not said: $out"
echo "ok: the child killed: $(grep child: <<<"$out")"

# --- the defaults' auto hand-off before any client; DNS that does not
# answer (nothing at 203.0.113.53) ---
kill "$GG_PID"
wait "$GG_PID" 2>/dev/null || true
greygated_conf "[signals]
lookups = yes
dns_servers = 203.0.113.53
budget = 500ms"
greygated_start
check
line OK "hand-off: auto: waiting for the first client to show where the MTA is"
line OK "DNS: answering \(0 questions"
echo "ok: auto before its first client: OK, waiting"
dns_silent() {
	nsx sender timeout 5 python3 "$here/../lib/smtp-session.py" try 203.0.113.10 203.0.113.1 >/dev/null 2>&1 || true
	check
	grep -q "^FAIL DNS: no server answers" <<<"$out"
}
wait_for 60 dns_silent || fail "DNS that does not answer is not said: $out"
[ "$rc" = 2 ] || fail "DNS silent: exit $rc"
echo "ok: DNS that does not answer: FAIL DNS"

# --- a door alone: its store on a 4 MiB disk, its socket open ---
small=$NETNS_TMP/small
cat >"$NETNS_TMP/door.conf" <<CONF
[gateway]
gateway = no
store_dir = $small/store
allow_dir = $NETNS_TMP/allow.d
control_socket = $NETNS_TMP/door-control.sock
[policy]
listen = unix:$NETNS_TMP/door.sock
socket_group = root
CONF
greygated_small_disk "$small" "$NETNS_TMP/door.conf" "$NETNS_TMP/door.log"
wait_for 10 test -S "$NETNS_TMP/door.sock" || { cat "$NETNS_TMP/door.log"; fail "the door did not start"; }
dctl() { rc=0; out=$("$GREYGATE_BUILD/tools/greygatectl" --socket "$NETNS_TMP/door-control.sock" check) || rc=$?; }
dctl
line FAIL "store: $small/store has [0-9]+ MiB free: the store cannot grow"
line OK "policy door: $NETNS_TMP/door.sock mode 0660"
grep -q "child:\|table:\|hand-off:" <<<"$out" && fail "a door alone has no child, table nor hand-off: $out"
chmod o+rw "$NETNS_TMP/door.sock"
dctl
line FAIL "policy door: $NETNS_TMP/door.sock is open to every local user"
echo "ok: a door alone: its store's small disk and its open socket: FAIL each"

# --- greygated not running ---
rc=0
out=$("$GREYGATE_BUILD/tools/greygatectl" --socket "$NETNS_TMP/nobody.sock" check 2>/dev/null) || rc=$?
[ "$rc" = 2 ] || fail "no greygated: exit $rc"
line FAIL "greygated: no answer on $NETNS_TMP/nobody.sock"
echo "ok: greygated not running: FAIL, exit 2"
