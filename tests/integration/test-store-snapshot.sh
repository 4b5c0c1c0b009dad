#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The store on tmpfs with a snapshot on "flash" (issue 33), with real
# parts: greygated on 'gw' with store_dir on a real tmpfs, mounted in
# greygated's own mount namespace (ip netns exec gives each its own), so
# that it is gone when greygated stops, as a reboot empties a router's
# RAM. Asserted: the mount never shows outside; at the first start the
# log says there is no snapshot yet; a client released (greygatectl) and
# a run-time allow entry are in the snapshot greygated writes when it
# stops; the next start, on an empty tmpfs, says it restored the snapshot
# and the client is in the store and in the kernel's pass set again, the
# allow entry back, and the privacy key made at the first start is the
# one read (restored before it is looked for: a new key would make every
# stored hash a stranger); greygatectl status and metrics tell of the
# snapshots (promtool checks the metrics); without store_snapshot_dir, a
# store_dir on tmpfs is warned of.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
mkdir -p "$NETNS_TMP/store" "$NETNS_TMP/allow.d" "$NETNS_TMP/ram"
chmod 700 "$NETNS_TMP/store"
store=$NETNS_TMP/store
flash=$NETNS_TMP/flash
real=$GREYGATE_BUILD/daemon/greygated
# greygated on a fresh tmpfs each time: the tmpfs lives in the mount
# namespace ip netns exec made for it, and ends with it.
GG_BIN=$NETNS_TMP/greygated-on-tmpfs
cat >"$GG_BIN" <<EOF
#!/bin/sh
mount -t tmpfs -o mode=0700,size=64m greygate-test "$store" || exit 1
mount -t tmpfs -o mode=0700,size=64m greygate-test "$NETNS_TMP/ram" || exit 1
exec "$real" "\$@"
EOF
chmod 755 "$GG_BIN"
export GG_BIN

greygated_conf "store_snapshot_dir = $flash
[greylist]
privacy = yes"
in_set() { # SET ELEMENT (the set read whole first: no early exit)
	local set
	set=$(nsx gw nft list set inet greygate "$1") || return 1
	grep -qE "[{ ]$2 " <<<"$set"
}
stop() {
	kill -TERM "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
}

greygated_start
mounts=$(cat /proc/self/mountinfo)
[[ "$mounts" != *greygate-test* ]] || fail "the test's tmpfs shows outside greygated's mount namespace"
grep -q "holds no snapshot yet: the greylist starts empty" "$GG_LOG" ||
	fail "the first start did not say there is no snapshot: $(cat "$GG_LOG")"
! grep -q "is on tmpfs and no store_snapshot_dir" "$GG_LOG" || fail "warned of tmpfs with a snapshot set"
fingerprints() { grep -o "key $store/privacy.key, fingerprint [0-9a-f]*[;)]" "$GG_LOG" || true; }
[[ "$(fingerprints)" == *"; made now"* || "$(fingerprints)" == *";" ]] ||
	fail "no privacy key made at the first start: $(grep privacy "$GG_LOG")"
ggctl release 203.0.113.10 >/dev/null || fail "release failed"
ggctl allow 198.51.100.0/24 --comment bank >/dev/null || fail "allow failed"
in_set pass4 203.0.113.0 || fail "the released client is not in pass4"
stop
grep -q "store: snapshot written to $flash" "$GG_LOG" ||
	fail "no snapshot at stop: $(tail -5 "$GG_LOG")"
[ -s "$flash/data.mdb" ] && [ -s "$flash/allow-runtime.txt" ] ||
	fail "the snapshot lacks its files: $(ls -la "$flash")"
[ -z "$(ls -A "$store")" ] || fail "the tmpfs outlived greygated: $(ls -A "$store")"
echo "ok: the tmpfs is greygated's alone; the snapshot is written at stop with the run-time allow list"

greygated_start
grep -q "store: restored from the snapshot in $flash, taken " "$GG_LOG" ||
	fail "the restore was not said: $(cat "$GG_LOG")"
grep -q "^203.0.113.0/24 " <<<"$(ggctl list pass)" || fail "the store lacks the pass after the restore: $(ggctl list pass)"
wait_for 10 in_set pass4 203.0.113.0 || fail "the restored pass is not in pass4: $(nsx gw nft list set inet greygate pass4)"
grep -q "198.51.100.0/24" <<<"$(ggctl list allow)" || fail "the run-time allow entry was lost: $(ggctl list allow)"
fp=$(fingerprints)
[ "$(wc -l <<<"$fp")" = 2 ] && [ "$(head -1 <<<"$fp" | tr -d ';)')" = "$(tail -1 <<<"$fp" | tr -d ';)')" ] &&
	[[ "$(tail -1 <<<"$fp")" == *")" ]] || fail "the privacy key was not the one restored: $fp"
status=$(ggctl status)
[[ "$status" == *"snapshot:  to $flash every 21600 s: 0 taken, 0 failed, 0 not written (nothing changed), the last 0 bytes; none yet since the start"* ]] ||
	fail "status does not tell of the snapshots: $status"
metrics=$(ggctl metrics)
grep -q '^greygate_store_snapshots_total{result="taken"} 0$' <<<"$metrics" ||
	fail "no snapshot metrics: $(grep snapshot <<<"$metrics")"
out=$(promtool check metrics <<<"$metrics" 2>&1) || fail "promtool: $out"
stop
echo "ok: after a 'reboot' (a fresh tmpfs) the store is restored: the pass in the store and the kernel's set, the allow entry back"

# A snapshot folder on the same tmpfs keeps nothing across a reboot.
greygated_conf "store_snapshot_dir = $NETNS_TMP/ram/snap"
greygated_start
grep -q "store_snapshot_dir $NETNS_TMP/ram/snap is on tmpfs too: the snapshot is lost with the store at every reboot" "$GG_LOG" ||
	fail "a snapshot folder on tmpfs was not warned of: $(tail -5 "$GG_LOG")"
stop
echo "ok: a store_snapshot_dir on tmpfs is warned of"

greygated_conf ""
greygated_start
grep -q "store_dir $store is on tmpfs and no store_snapshot_dir is set: the greylist and its passes are lost at every reboot" "$GG_LOG" ||
	fail "a store_dir on tmpfs without a snapshot was not warned of"
echo "ok: a store_dir on tmpfs without store_snapshot_dir is warned of"
echo "PASS"
