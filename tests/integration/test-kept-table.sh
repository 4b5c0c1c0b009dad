#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pass a full disk kept from the store is not lost (issue 29 R7): with
# `persist = yes` the kernel's pass set outlives greygated, and the
# greygated that takes the table back writes what the store lacks back
# into it. Real parts: greygated in front of the tarpit on 'gw', its
# LMDB store on a 4 MiB tmpfs in a mount namespace of the test's own (a
# process holds it, so that the store outlives each greygated; nothing
# of the machine's is mounted). The disk is filled, policy-door requests
# make the commits fail, a client passes by its retry (in the kernel's
# set, not on disk), greygated stops saying what it could not save; the
# disk is freed and greygated started again: the client is in the set
# and in the store, said in the log; a third start finds it held.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
small=$NETNS_TMP/small
mkdir -m 700 "$small"
mkdir -p "$NETNS_TMP/allow.d"
unshare -m --propagation private sh -c "mount -t tmpfs -o size=4m,mode=700 tmpfs '$small' &&
	mkdir -m 700 '$small/store' && touch '$small/ready' && exec sleep 600" &
holder=$!
netns_on_exit "kill $holder"
wait_for 10 nsenter -t "$holder" -m test -f "$small/ready" || fail "the tmpfs was not mounted"
in_small() { nsenter -t "$holder" -m "$@"; }
# greygated in gw's network namespace and the holder's mount namespace.
cat >"$NETNS_TMP/greygated-in-small" <<SH
#!/bin/sh
exec nsenter -t $holder -m -- "$GREYGATE_BUILD/daemon/greygated" "\$@"
SH
chmod 755 "$NETNS_TMP/greygated-in-small"
GG_BIN=$NETNS_TMP/greygated-in-small
greygated_conf "persist = yes
[greylist]
delay = 2
[policy]
listen = unix:$NETNS_TMP/door.sock"
sed -i "s|^store_dir = .*|store_dir = $small/store|" "$NETNS_TMP/greygate.conf"
greygated_start
log=$GG_LOG

attempt() { # the reply to RCPT from 203.0.113.10
	nsx sender swaks --server 203.0.113.1 --from alice@sender.test --to bob@example.org \
		--quit-after RCPT 2>&1 | grep -oE "^<\*\* 451" | head -1 || true
}
ask() { # FIRST LAST: a policy request for each sender FIRST..LAST, all answered
	python3 "$here/../lib/door-requests.py" "$NETNS_TMP/door.sock" "$1" "$2" 198.51.100
}
in_set() { # (or what the set holds, on stderr)
	local set
	set=$(nsx gw nft list set inet greygate pass4) || return 1
	grep -qE "[{ ]203.0.113.0 " <<<"$set" || { echo "$set" >&2; return 1; }
}

[ "$(attempt)" = "<** 451" ] || fail "the first attempt was not greylisted"
in_small sh -c "dd if=/dev/zero of='$small/filler' bs=64k 2>/dev/null; true"
ask 1 400 || fail "the door stopped answering on a full disk"
wait_for 10 grep -q "store: .* write(s) or commit(s) failed" "$log" ||
	fail "the commits did not fail on the full disk: $(grep store: "$log" | tail -3)"
sleep 2.2
attempt >/dev/null
grep -q "action=pass, reason=retry-passed, client=203.0.113.10" "$log" || { tail "$log"; fail "no pass"; }
in_set || { nsx gw nft list set inet greygate pass4; tail -5 "$log"; fail "the pass is not in the kernel's set"; }
kill -TERM "$GG_PID"
wait "$GG_PID" 2>/dev/null || true
grep -qE "store: [0-9]+ write\(s\) could not be saved at stop \(No space left on device\)" "$log" ||
	fail "the unsaved writes were not said at the stop: $(tail -3 "$log")"
nsx gw nft list table inet greygate >/dev/null || fail "the persistent table went with greygated"
in_set || fail "the kept table lost the pass"
echo "ok: on a full disk a client passed into the kernel's set only; the stop said what it could not save; the table stayed"

in_small rm "$small/filler"
greygated_start
wait_for 10 grep -q "nft: 1 passed client(s) the kept table held and the store lacked were written back into it" "$log" ||
	fail "the kept pass was not written back: $(grep nft: "$log" | tail -3)"
in_set || fail "the pass is not in the set after the restart"
grep -q "^203.0.113.0/24 " <<<"$(ggctl list pass)" || fail "the store lacks the pass: $(ggctl list pass)"
echo "ok: the next greygated wrote the kept pass back into the store and kept it in the set"

kill -TERM "$GG_PID"
wait "$GG_PID" 2>/dev/null || true
greygated_start
wait_for 10 grep -q "nft: 0 passed client(s) the kept table held and the store lacked were written back into it .*, 1 it held already" "$log" ||
	fail "the third start: $(grep nft: "$log" | tail -3)"
in_set || fail "the pass is not in the set after the third start"
echo "ok: a start after a clean save finds the kept pass in the store already"
echo "PASS"
