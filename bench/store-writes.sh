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
# commit). No root needed.
#   bench/store-writes.sh [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$root/build}
sim=$GREYGATE_BUILD/tools/greygate-sim
seed=${1:-1}
tmp=$(mktemp -d /tmp/greygate-store-writes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
days=$(awk '/^days = / {print $3; exit}' "$root/etc/sim-month.ini")

row() { # INTERVAL
	printf '[gateway]\nstore_commit_interval = %s\n' "$1" >"$tmp/c.conf"
	"$sim" --config "$tmp/c.conf" --workload "$root/etc/sim-month.ini" \
		--seed "$seed" --json 2>/dev/null |
		jq -r --arg i "$1" --argjson hours "$(( ${days:-30} * 24 ))" '
			[$i, .sim.store_commits,
			 (.sim.store_written / 1048576 | floor),
			 (.sim.store_written / 1024 / $hours | floor),
			 .sim.unwanted_delivered, .sim.legit_lost] | @tsv'
}

{
	printf 'store_commit_interval\tcommits\tMiB written\tKiB an hour\tbots through\twanted lost\n'
	for i in 200ms 1m 5m 15m 1h; do row "$i"; done
} | column -t -s $'\t'
