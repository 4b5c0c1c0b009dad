# SPDX-License-Identifier: GPL-2.0-or-later
# Many connections at once to the tarpit from 'sender' to 'gw' (203.0.113.1),
# for the flood test and the tarpit benchmark. Needs netns.sh and
# netns_sender_gw.
#   flood_sources FIRST LAST   adds 203.0.113.FIRST..LAST on sender, in
#                              FLOOD_SOURCES
#   flood_hold N               opens N connections at once and holds them;
#                              sets FLOOD_HELD to "banners=K" (K greeted);
#                              to port FLOOD_PORT (25)
#   flood_release              closes them
# greygated's tarpit settings for holding a flood of 10,000 connections
# (for greygated_conf): room for them all, from the sources in turn.
FLOOD_TARPIT_CONF="[tarpit]
max_connections = 12000
max_per_client = 2000
stress_high = 11000
stress_low = 10000
idle_timeout = 120s
session_timeout = 300s"
FLOOD_SOURCES=()
FLOOD_HELD=""
FLOOD_PID=""
FLOOD_RUNS=0
flood_abuse="python3 $(dirname "${BASH_SOURCE[0]}")/smtp-abuse.py"

flood_sources() {
	local i dev
	dev=$(netns_dev sender gw)
	for i in $(seq "$1" "$2"); do
		nsx sender ip addr add "203.0.113.$i/24" dev "$dev"
		FLOOD_SOURCES+=("203.0.113.$i")
	done
}

flood_hold() {
	local fifo out
	FLOOD_RUNS=$(( FLOOD_RUNS + 1 ))
	fifo=$NETNS_TMP/flood.$FLOOD_RUNS out=$NETNS_TMP/flood.$FLOOD_RUNS.out
	mkfifo "$fifo"
	# The flood holds its connections until its stdin (this fifo) closes.
	exec 4<>"$fifo"
	nsx sender env SMTP_PORT="${FLOOD_PORT:-25}" \
		$flood_abuse flood 203.0.113.1 "$1" "${FLOOD_SOURCES[@]}" \
		<"$fifo" >"$out" 4>&- &
	FLOOD_PID=$!
	wait_for 90 grep -q "^banners=" "$out" || fail "flood did not finish"
	FLOOD_HELD=$(cat "$out")
}

flood_release() {
	exec 4>&-
	wait "$FLOOD_PID" || true
}
