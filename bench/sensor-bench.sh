#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sensor benchmark: on a generated capture of SMTP sessions (default
# 1,000,000 packets; most short botnet-like sessions, one in ten with a
# body), packets/s and sessions/s of `greygate-sniff -r` (output to
# /dev/null), side by side with (a) a bare pcap_next_ex loop over the same
# file (the floor) and (b) `tshark -r FILE -Y smtp.req.command` (what an
# admin would use today). Peak memory of each. Run as root from the top
# of the tree after a build (meson setup build && meson compile -C build):
#   bench/sensor-bench.sh [PACKETS]
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1000000}
build=${GREYGATE_BUILD:-build}
cap=bench/out/smtp-$packets.pcap

need=()
command -v tshark >/dev/null || need+=(tshark)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
mkdir -p bench/out
[ -f "$cap" ] || python3 bench/make-smtp-pcap.py "$cap" "$packets" >/dev/null
sessions=$("$build/tools/greygate-sniff" -r "$cap" | grep -c '"event":"close"')

run() { # NAME CMD...: best of three wall times, and the peak RSS
	local name=$1 best="" rss t
	shift
	for _ in 1 2 3; do
		/usr/bin/time -f "%e %M" -o bench/out/time.txt "$@" >/dev/null 2>&1
		read -r t rss <bench/out/time.txt
		if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
	done
	awk -v n="$name" -v t="$best" -v p="$packets" -v s="$sessions" -v r="$rss" \
		'BEGIN { printf "%-36s %8.2f %14.0f %12.0f %10d\n", n, t, p / t, s / t, r }'
}

echo "capture: $cap ($packets packets, $sessions sessions)"
printf '%-36s %8s %14s %12s %10s\n' "" seconds packets/s sessions/s "RSS KiB"
run "floor: pcap_next_ex loop" "$build/bench/pcap-floor" "$cap"
run "greygate-sniff -r" "$build/tools/greygate-sniff" -r "$cap"
run "tshark -r -Y smtp.req.command" tshark -r "$cap" -Y smtp.req.command
