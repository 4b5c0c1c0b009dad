#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nft manager benchmark, inside a throw-away network namespace:
# elements/s of greygate's batched updates (batches of 1, 100, 1,000) side
# by side with `nft -f` loading the same number of elements into a set
# of the same kind (what a script would do), and the latency of one pass.
# Run as root after a build:   bench/nft-bench.sh [ELEMENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
build=${GREYGATE_BUILD:-build}
ns=gg-nftbench-$$
ip netns add "$ns"
trap 'ip netns del "$ns"' EXIT

ip netns exec "$ns" "$build/bench/nft-bench" "$n"

# nft -f: the same kind of set (hash, timeout), the same elements.
file=$(mktemp)
trap 'rm -f "$file"; ip netns del "$ns"' EXIT
{
	printf 'table inet script {\n\tset pass4 {\n\t\ttype ipv4_addr\n\t\tflags timeout\n\t}\n}\n'
	python3 - "$n" <<'PY'
import sys
n = int(sys.argv[1])
for start in range(0, n, 1000):
    elems = ", ".join("%d.%d.%d.0 timeout 1h" % (20 + (i >> 16), i >> 8 & 255, i & 255)
                      for i in range(start, min(n, start + 1000)))
    print("add element inet script pass4 { %s }" % elems)
PY
} >"$file"
t0=$(date +%s%N)
ip netns exec "$ns" nft -f "$file"
t1=$(date +%s%N)
awk -v n="$n" -v ns=$(( t1 - t0 )) 'BEGIN { printf "nft -f, one file          %9d elements %8.3f s %10.0f elements/s\n", n, ns / 1e9, n / (ns / 1e9) }'
