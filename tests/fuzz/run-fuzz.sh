#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A short fuzz run: TARGET SEED_DIR SECONDS, from the seeds and the
# corpus bench/fuzz-long.sh keeps (corpus/NAME beside the seeds, if
# any). New inputs go to a temp dir (the committed ones stay as they
# are); a crash fails the test and its input is printed.
set -euo pipefail
target=$1 seeds=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# -error_exitcode=1: libFuzzer's own default, 77, is what meson takes for
# a skipped test, and a crash would pass for one.
"$target" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
	-error_exitcode=1 \
	-artifact_prefix="$work/" "$work" "$seeds" \
	$(corpus=$(dirname "$seeds")/corpus/${seeds##*/seed-}; [ -d "$corpus" ] && echo "$corpus")
