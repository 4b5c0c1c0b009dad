#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the store writes to its disk (a router's flash) under the default
# month (etc/sim-month.ini) replayed through the real LMDB store by
# greygate-sim, committed by greygated's own rule (store_commit_due: every
# store_commit_interval, a pass or trap at once at the default) for each
# interval in turn: the commits, the bytes LMDB gave to write system calls
# (/proc/self/io's wchar: no MDB_WRITEMAP, so every page it writes), and
# that per hour of the month. Not counted: the filesystem's own journal
# and the flash's erase blocks (both multiply it), and the report's
# figures greygated saves every 5 s while mail comes (one record more a
# commit). Then the store on tmpfs with a snapshot on flash every
# store_snapshot_interval (store_snapshot_dir; the commits at the
# default, to tmpfs): what reaches the flash is the snapshots alone.
# No root needed.
#   bench/store-writes.sh [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$root/build}
sim=$GREYGATE_BUILD/tools/greygate-sim
seed=${1:-1}
tmp=$(mktemp -d /tmp/greygate-store-writes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
days=$(awk '/^days = / {print $3; exit}' "$root/etc/sim-month.ini")

row() { # COMMIT_INTERVAL [SNAPSHOT_INTERVAL]
	printf '[gateway]\nstore_commit_interval = %s\n' "$1" >"$tmp/c.conf"
	[ -z "${2:-}" ] || printf 'store_snapshot_dir = %s\nstore_snapshot_interval = %s\n' \
		"$tmp/flash" "$2" >>"$tmp/c.conf"
	"$sim" --config "$tmp/c.conf" --workload "$root/etc/sim-month.ini" \
		--seed "$seed" --json 2>/dev/null |
		jq -r --arg i "$1" --arg s "${2:-}" \
			--argjson hours "$(( ${days:-30} * 24 ))" '
			(if $s == "" then .sim.store_written
			 else .sim.snapshot_written end) as $flash |
			[(if $s == "" then $i else "tmpfs, snapshot " + $s end),
			 (if $s == "" then .sim.store_commits
			  else .sim.snapshots end),
			 ($flash / 1048576 | floor), ($flash / 1024 / $hours | floor),
			 .sim.unwanted_delivered, .sim.legit_lost] | @tsv'
}

{
	printf 'store_commit_interval\tcommits (snapshots)\tMiB to flash\tKiB an hour\tbots through\twanted lost\n'
	for i in 200ms 1m 5m 15m 1h; do row "$i"; done
	for s in 1h 6h 1d; do row 200ms "$s"; done
} | column -t -s $'\t'
