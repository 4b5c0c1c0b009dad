#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The store's size under the default month (etc/sim-month.ini) replayed
# through the real LMDB store by greygate-sim, with the purge greygated
# runs (triplets unseen for retry_window, passes past their end) and
# without it (purge = no): triplets and passes kept, and the file's
# size at the end. Then three months at the same rate (every class's
# messages times three over 90 days): with the purge the store should
# stay the size of a few days' traffic; without it, it grows with time.
# No root needed.
#   bench/store-size.sh [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$root/build}
sim=$GREYGATE_BUILD/tools/greygate-sim
seed=${1:-1}
tmp=$(mktemp -d /tmp/greygate-store-size.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# row DAYS TIMES PURGE [RETRY-WINDOW]: the month's classes with TIMES
# their messages over DAYS days
row() {
	local work=$tmp/w.ini conf=$tmp/c.conf
	awk -v days="$1" -v times="$2" -v purge="$3" '
		/^\[sim\]$/ {print; print "days = " days; print "purge = " purge; next}
		/^days = / {next}
		/^messages = / {print "messages = " $3 * times; next}
		{print}' "$root/etc/sim-month.ini" >"$work"
	printf '[greylist]\nretry_window = %s\n' "${4:-2d}" >"$conf"
	"$sim" --config "$conf" --workload "$work" --seed "$seed" --json 2>/dev/null |
		jq -r --arg d "$1" --arg p "$3" --arg w "${4:-2d}" '
			[$d, $p, $w, .sim.unwanted_messages + .sim.legit_messages,
			 .sim.store_triplets, .sim.purged_triplets, .sim.store_passes,
			 .sim.purged_passes, (.sim.store_bytes / 1024 | floor)] | @tsv'
}

{
	printf 'days\tpurge\tretry_window\tmessages\ttriplets kept\tpurged\tpasses kept\tpurged\tKiB on disk\n'
	row 30 1 yes
	row 30 1 no
	row 30 1 yes 5d
	row 90 3 yes
	row 90 3 no
} | column -t -s $'\t'
