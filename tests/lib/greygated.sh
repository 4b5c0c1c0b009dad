# SPDX-License-Identifier: GPL-2.0-or-later
# Running greygated in a test: needs netns.sh and a host 'gw'.
#   greygated_conf [EXTRA]  writes $NETNS_TMP/greygate.conf: capture on
#                           any, the test's own store and allow dirs and
#                           control socket ($GG_SOCK), hostname gw.test,
#                           the hand-off off (a test that wants it says
#                           its [handoff] mode; GG_HANDOFF_DEFAULT=1: the
#                           default, auto), no DNS lookups (a test that
#                           wants them says [signals] lookups = yes, with
#                           its own DNS server; GG_SIGNALS_DEFAULT=1: the
#                           default, on), then EXTRA (INI lines)
#   ggctl ARGS              greygatectl on the test's socket
#   greygated_small_disk DIR CONF LOG
#                           starts greygated (CONF) in a mount namespace
#                           of its own where DIR is a 4 MiB tmpfs holding
#                           an empty store/ (nothing of the machine's is
#                           mounted); sets SMALL_PID
#   greygated_start         starts it on gw in the foreground, logging to
#                           $GG_LOG; sets GG_PID; waits until it is up
#                           ($GG_BIN instead of the build's greygated,
#                           when set)
GG_LOG=""
GG_PID=""
GG_SOCK=""

greygated_conf() {
	GG_SOCK=$NETNS_TMP/control.sock
	cat >"$NETNS_TMP/greygate.conf" <<CONF
[gateway]
interface = any
store_dir = $NETNS_TMP/store
allow_dir = $NETNS_TMP/allow.d
hostname = gw.test
control_socket = $NETNS_TMP/control.sock
$([ "${GG_HANDOFF_DEFAULT:-}" = 1 ] || printf '[handoff]\nmode = off\n[gateway]')
$([ "${GG_SIGNALS_DEFAULT:-}" = 1 ] || printf '[signals]\nlookups = no\n[gateway]')
${1:-}
CONF
}

greygated_ups() { grep -c "greygated .* up" "$GG_LOG" 2>/dev/null || true; }

greygated_start() {
	local before
	GG_LOG=$NETNS_TMP/greygated.log
	[ -f "$GG_LOG" ] || : >"$GG_LOG"
	before=$(greygated_ups)
	netns_spawn gw "${GG_BIN:-$GREYGATE_BUILD/daemon/greygated}" --foreground \
		--config "$NETNS_TMP/greygate.conf" >>"$GG_LOG" 2>&1
	GG_PID=$SPAWNED
	wait_for 10 eval '[ "$(greygated_ups)" -gt "$before" ]' ||
		{ cat "$GG_LOG"; fail "greygated did not start"; }
}

greygated_small_disk() {
	mkdir -m 700 "$1"
	unshare -m --propagation private sh -c "mount -t tmpfs -o size=4m,mode=700 tmpfs '$1' &&
		mkdir -m 700 '$1/store' &&
		exec '$GREYGATE_BUILD/daemon/greygated' --foreground --config '$2'" \
		>"$3" 2>&1 &
	SMALL_PID=$!
	netns_on_exit "kill $SMALL_PID"
}

ggctl() { "$GREYGATE_BUILD/tools/greygatectl" --socket "$GG_SOCK" "$@"; }
# wait_may_pass KEY: until a triplet of KEY (a client's network as
# greygatectl list grey names it, 2001:db8:6::/64) may pass, its delay
# over ("may-pass", or "retried" after an early retry): the retry that
# follows passes, with no fixed sleep past the delay (awk reads the list
# whole: no early exit under pipefail).
wait_may_pass() {
	wait_for 30 eval "ggctl list grey | awk -v k='$1' '\$1 == k && (\$NF == \"may-pass\" || \$NF == \"retried\") {f = 1} END {exit !f}'" ||
		fail "no triplet of $1 may pass: $(ggctl list grey)"
}
