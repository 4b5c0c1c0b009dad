#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sensor benchmark: on a generated capture of SMTP sessions (default
# 1,000,000 packets; most short botnet-like sessions, one in ten with a
# body), packets/s and sessions/s of `greygate-sniff -r` (output to
# /dev/null), side by side with (a) a bare pcap_next_ex loop over the same
# file (the floor), once as libpcap opens a file (4 KiB reads) and once
# through the same 1 MiB stdio buffer greygate-sniff gives libpcap, and
# (b) `tshark -r FILE -Y smtp.req.command` (what an admin would use
# today). Wall time is the best of nine runs taken in turns (tshark: of
# three), read to the microsecond: on a shared VM the best run is the one
# least disturbed. Peak memory from one more run under /usr/bin/time. Run as root from the top of
# the tree after a build (meson setup build && meson compile -C build):
#   bench/sensor-bench.sh [PACKETS]
# With GREYGATE_REF_BUILD set to another build (of an earlier commit),
# its greygate-sniff runs in the same turns, as the reference.
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

time_one() { # CMD...: wall seconds of one run
	local start=$EPOCHREALTIME
	"$@" >/dev/null 2>&1
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'
}

rss_of() { # CMD...: peak RSS (KiB) of one more run
	/usr/bin/time -f "%M" -o bench/out/rss.txt "$@" >/dev/null 2>&1
	cat bench/out/rss.txt
}

row() { # NAME SECONDS RSS
	awk -v n="$1" -v t="$2" -v r="$3" -v p="$packets" -v s="$sessions" \
		'BEGIN { printf "%-44s %8.3f %12.0f %11.0f %9d\n", n, t, p / t, s / t, r }'
}

names=("floor: pcap_next_ex loop"
	"floor: pcap_next_ex loop, 1 MiB stdio buffer"
	"greygate-sniff -r (1 MiB stdio buffer)")
cmds=("$build/bench/pcap-floor $cap"
	"$build/bench/pcap-floor -b 1048576 $cap"
	"$build/tools/greygate-sniff -r $cap")
best=("" "" "")
if [ -n "${GREYGATE_REF_BUILD:-}" ]; then
	names+=("greygate-sniff -r, reference build")
	cmds+=("$GREYGATE_REF_BUILD/tools/greygate-sniff -r $cap")
	best+=("")
fi
for _ in 1 2 3 4 5 6 7 8 9; do
	for i in "${!cmds[@]}"; do
		# shellcheck disable=SC2086 # the commands are word lists
		t=$(time_one ${cmds[i]})
		if [ -z "${best[i]}" ] || awk "BEGIN{exit !($t < ${best[i]})}"; then
			best[i]=$t
		fi
	done
done
echo "capture: $cap ($packets packets, $sessions sessions)"
printf '%-44s %8s %12s %11s %9s\n' "" seconds packets/s sessions/s "RSS KiB"
for i in "${!cmds[@]}"; do
	# shellcheck disable=SC2086
	row "${names[i]}" "${best[i]}" "$(rss_of ${cmds[i]})"
done
tbest=""
for _ in 1 2 3; do
	t=$(time_one tshark -r "$cap" -Y smtp.req.command)
	if [ -z "$tbest" ] || awk "BEGIN{exit !($t < $tbest)}"; then tbest=$t; fi
done
row "tshark -r -Y smtp.req.command" "$tbest" \
	"$(rss_of tshark -r "$cap" -Y smtp.req.command)"
awk -v f="${best[0]}" -v fb="${best[1]}" -v g="${best[2]}" 'BEGIN {
	printf "greygate-sniff: %.0f%% of the floor'"'"'s speed, %.0f%% of the buffered floor'"'"'s\n",
		100 * f / g, 100 * fb / g }'
