#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How close to the floor greygate whole could come if greygated spent
# nothing on a session's socket: the tarpit bench's back-to-back turns
# (tarpit-bench.sh --split) for a build of HEAD with
# bench/experiments/no-session-socket.patch (the child sends no socket
# with a session's opening; greygated makes its ends up, one of the
# bench's sources by the session's id, without a system call: an
# experiment, never a build to run, since the child would then name the
# addresses) and for this tree's build, in turns (experiment, tree,
# experiment, tree). It bounds what any other way of learning a
# session's ends (greygated accepting the connections itself, say)
# could gain. Run as root after a build:
#   bench/upper-bound.sh [ROUNDS [SECONDS]]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${GREYGATE_BUILD:-$top/build}
rounds=${1:-2}
secs=${2:-10}
work=$(mktemp -d /tmp/greygate-upper.XXXXXX)
cleanup() {
	git -C "$top" worktree remove --force "$work/tree" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
git -C "$top" worktree add -q --detach "$work/tree" HEAD
git -C "$work/tree" apply "$top/bench/experiments/no-session-socket.patch" || {
	echo "bench/upper-bound.sh: the patch no longer applies to HEAD: refresh bench/experiments/no-session-socket.patch" >&2
	exit 1
}
meson setup "$work/build" "$work/tree" --buildtype=debugoptimized >/dev/null
ninja -C "$work/build" daemon/greygated tools/greygatectl bench/smtp-load bench/smtp-floor >/dev/null
for turn in 1 2; do
	echo "=== the experiment (no session socket goes up), turn $turn"
	GREYGATE_BUILD=$work/build "$top/bench/tarpit-bench.sh" --split --rounds "$rounds" "$secs"
	echo "=== this tree ($build), turn $turn"
	GREYGATE_BUILD=$build "$top/bench/tarpit-bench.sh" --split --rounds "$rounds" "$secs"
done
