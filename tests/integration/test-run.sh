#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's first command, as it says to try it: scripts/run inside a
# network namespace (here with a config whose store, allow lists and
# control socket are in the test's temp dir). It installs what is missing,
# makes its release build, brings greygated up with the table in place, a
# client meets the tarpit through it, and Ctrl-C (SIGINT) stops it cleanly
# with the table gone.
set -euo pipefail
here=$(dirname "$0")
top=$(cd "$here/../.." && pwd)
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
greygated_conf ""
out=$NETNS_TMP/run.out
netns_spawn gw "$top/scripts/run" --config "$NETNS_TMP/greygate.conf" >"$out" 2>&1
pid=$SPAWNED
# A clean clone builds build-release first: allow for it.
wait_for 240 grep -q "greygated .* up: " "$out" ||
	{ cat "$out"; fail "scripts/run did not bring greygated up"; }
nsx gw nft list table inet greygate >/dev/null || fail "no table inet greygate"
echo "ok: scripts/run brought greygated up in a namespace"

reply=$(nsx sender swaks --server 203.0.113.1 --ehlo sender.test --from a@sender.test \
	--to bob@example.org 2>&1 || true)
echo "$reply" | grep "^<\*\* 451 4.7.1 <bob@example.org>: Greylisted" >/dev/null ||
	{ echo "$reply"; fail "the client did not meet the tarpit's 451"; }
echo "ok: a client meets the tarpit through it"

kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 0 ] || { cat "$out"; fail "greygated exited $rc on Ctrl-C"; }
grep -q "stopped" "$out" || fail "no clean stop logged"
if nsx gw nft list table inet greygate >/dev/null 2>&1; then fail "table left after Ctrl-C"; fi
echo "ok: Ctrl-C stops it and the table goes"
