#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every fuzz target for MINUTES CPU-minutes each (default 60; "30s" for
# seconds; the test suite's short runs are 6 s), one libFuzzer process per
# core at a time ($FUZZ_JOBS to say otherwise).
# Each starts from its committed seeds and its kept corpus
# (tests/fuzz/corpus/TARGET), and what it found is merged back into that
# corpus, minimised (-merge=1: only inputs that add coverage stay). A
# crash stops that target and leaves its input in the work dir, named in
# the table. Prints one line per target: runs, coverage (edges), features,
# corpus size, crashes; the last line says whether all were clean.
# Run after a fuzz build:
#   CC=clang meson setup build-fuzz -Dfuzz=true \
#     -Db_sanitize=address,undefined -Db_lundef=false
#   meson compile -C build-fuzz
#   bench/fuzz-long.sh [MINUTES] [TARGET...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GREYGATE_FUZZ_BUILD:-$top/build-fuzz}
span=${1:-60}
shift || true
case $span in
*s) seconds=${span%s} ;;
*) seconds=$(( span * 60 )) ;;
esac
# (libFuzzer takes 0 for "for ever")
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -gt 0 ] ||
	{ echo "fuzz-long: MINUTES (or Ns) must be above 0, not '$span'" >&2; exit 2; }
targets=("$@")
if [ ${#targets[@]} = 0 ]; then
	for exe in "$build"/tests/fuzz/fuzz-*; do
		[ -x "$exe" ] && [ -f "$exe" ] && targets+=("${exe##*/fuzz-}")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets in $build/tests/fuzz (build them first)" >&2; exit 2; }
jobs=${FUZZ_JOBS:-$(nproc)}
work=$(mktemp -d /tmp/greygate-fuzz.XXXXXX)
echo "fuzzing ${targets[*]} for $seconds CPU-second(s) each, $jobs at a time; work in $work"

run_one() { # TARGET: fuzz, then merge into the kept corpus; a result line
	local t=$1 exe=$build/tests/fuzz/fuzz-$1 kept=$top/tests/fuzz/corpus/$1
	local out=$work/$t new=$work/$t.new rc=0
	mkdir -p "$kept" "$new"
	"$exe" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
		-error_exitcode=1 -artifact_prefix="$work/$t-" "$new" "$kept" \
		"$top/tests/fuzz/seed-$t" >"$out.log" 2>&1 || rc=$?
	# Minimised: what adds coverage, from what was kept and what is new.
	mkdir -p "$out.merged"
	"$exe" -merge=1 -max_len=4096 "$out.merged" "$kept" "$new" >"$out.merge.log" 2>&1 || true
	if [ -n "$(ls -A "$out.merged")" ]; then
		rm -rf "$kept"
		mv "$out.merged" "$kept"
	fi
	local done runs cov ft crashes
	done=$(grep -E '^#[0-9]+\s+DONE' "$out.log" | tail -1 || true)
	runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$out.log" | grep -oE '[0-9]+$' || echo "?")
	cov=$(grep -oE 'cov: [0-9]+' <<<"${done:-$(grep -E 'cov:' "$out.log" | tail -1)}" | grep -oE '[0-9]+' || echo "?")
	ft=$(grep -oE 'ft: [0-9]+' <<<"${done:-$(grep -E 'ft:' "$out.log" | tail -1)}" | grep -oE '[0-9]+' || echo "?")
	crashes=$(find "$work" -maxdepth 1 -name "$t-*" | wc -l)
	printf '%-10s runs %12s  cov %6s  ft %7s  corpus %5s  crashes %s%s\n' \
		"$t" "$runs" "$cov" "$ft" "$(ls "$kept" | wc -l)" "$crashes" \
		"$([ "$rc" = 0 ] || echo " (exit $rc: see $out.log)")"
	[ "$rc" = 0 ] && [ "$crashes" = 0 ]
}

status=0
pids=()
for t in "${targets[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || status=1; done
	run_one "$t" >"$work/$t.result" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
cat "$work"/*.result
if [ "$status" = 0 ]; then
	echo "all clean: ${#targets[@]} targets, $seconds CPU-second(s) each"
	rm -rf "$work"
else
	echo "CRASHES or failures: inputs and logs kept in $work"
fi
exit "$status"
