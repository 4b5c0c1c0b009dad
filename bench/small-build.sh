#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The small build against the full one, side by side in one run: the
# stripped sizes of greygated, greygatectl and greygate-sniff, and
# greygated's and its child's RSS idle and with 1,000 tarpit sessions
# held, each greygated in turn on the same namespaces (root). RSS counts
# the shared libraries' pages every process maps (the C library's 1.6 MiB
# among them); PSS shares them out, and "own" is what the process alone
# holds (private pages).
#   bench/small-build.sh [DIR]   (DIR: where the builds go, default a
#                                 temp dir removed at the end)
# Builds: "full" is meson's release build with everything on (what a
# distribution ships); "full-min" is the small build's flags with every
# part on; "small" is packaging/small-build.ini. Targets (issue 33):
# greygated stripped under 256 KiB, under 4 MiB RSS idle.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$bench/.." && pwd)
here=$top/tests/integration
dir=${1:-}
sessions=1000
keep=1
[ -n "$dir" ] || { dir=$(mktemp -d /tmp/greygate-small.XXXXXX); keep=0; }
mkdir -p "$dir"

build() { # NAME STRIP MESON-ARGS...
	local name=$1 strip=$2
	shift 2
	[ -f "$dir/$name/build.ninja" ] ||
		meson setup "$dir/$name" "$top" "$@" >/dev/null
	meson compile -C "$dir/$name" daemon/greygated tools/greygatectl \
		tools/greygate-sniff >/dev/null
	mkdir -p "$dir/$name/stripped"
	for p in daemon/greygated tools/greygatectl tools/greygate-sniff; do
		"$strip" -o "$dir/$name/stripped/${p#*/}" "$dir/$name/$p"
	done
}
builds="full full-min small"
echo "building ($builds, and small-arm64 with scripts/deps cross) in $dir"
build full strip --buildtype=release
build full-min strip --native-file "$top/packaging/small-build.ini" \
	-Dredis=enabled -Dmetrics_http=enabled -Dpcre2=enabled \
	-Dpolicy_door=enabled
build small strip --native-file "$top/packaging/small-build.ini"
# (sizes only: its memory would be qemu's)
sizes="$builds"
if command -v aarch64-linux-gnu-gcc >/dev/null; then
	build small-arm64 aarch64-linux-gnu-strip \
		--cross-file "$top/packaging/cross-arm64.ini" \
		--cross-file "$top/packaging/small-build.ini"
	sizes="$sizes small-arm64"
fi

printf '\n%-11s %12s %12s %15s\n' build greygated greygatectl greygate-sniff
for b in $sizes; do
	s=$dir/$b/stripped
	printf '%-11s %12s %12s %15s\n' "$b" "$(stat -c %s "$s/greygated")" \
		"$(stat -c %s "$s/greygatectl")" "$(stat -c %s "$s/greygate-sniff")"
done

# RSS: each greygated in turn in one pair of namespaces.
GREYGATE_BUILD=$dir/full
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/flood.sh"
netns_init
netns_sender_gw
flood_sources 11 12
# "RSS/PSS/own" in KiB, from the kernel's sums of the process's maps.
mem() {
	awk '/^Rss:/ {r = $2} /^Pss:/ {p = $2} /^Private_(Clean|Dirty):/ {o += $2}
		END {printf "%d/%d/%d", r, p, o}' "/proc/$1/smaps_rollup"
}
printf '\n%s\n%-10s %18s %18s %22s %22s\n' "memory, KiB: RSS/PSS/own" build \
	"greygated idle" "child idle" "greygated $sessions held" \
	"child $sessions held"
for b in $builds; do
	rm -rf "$NETNS_TMP/store"
	mkdir -p "$NETNS_TMP/store"
	greygated_conf "$FLOOD_TARPIT_CONF"
	GG_BIN=$dir/$b/stripped/greygated
	greygated_start
	child=$(ggctl status --json | jq -r .child.pid)
	sleep 3
	idle_parent=$(mem "$GG_PID") idle_child=$(mem "$child")
	flood_hold "$sessions"
	[ "$FLOOD_HELD" = "banners=$sessions" ] ||
		fail "$b: $FLOOD_HELD of $sessions banners"
	held_parent=$(mem "$GG_PID") held_child=$(mem "$child")
	flood_release
	printf '%-10s %18s %18s %22s %22s\n' "$b" "$idle_parent" "$idle_child" \
		"$held_parent" "$held_child"
	kill "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "$b did not stop"
done
[ "$keep" = 1 ] || rm -rf "$dir"
