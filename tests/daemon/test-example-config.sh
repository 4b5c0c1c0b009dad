#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The example configuration an admin copies (etc/greygate.conf) is read by
# greygated as it is, and with its commented-out examples switched on.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
greygated=$GREYGATE_BUILD/daemon/greygated
conf=$top/etc/greygate.conf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$greygated" --config "$conf" --check-config 2>&1) || fail "$out"
[ "$out" = "greygated: $conf: ok" ] || fail "unexpected: $out"
echo "ok: etc/greygate.conf is read as it is"

sed 's/^#\([a-z_]* = \)/\1/' "$conf" >"$tmp/all.conf"
grep -q "^hostname = " "$tmp/all.conf" || fail "no commented example was switched on"
out=$("$greygated" --config "$tmp/all.conf" --check-config 2>&1) || fail "$out"
echo "ok: with its commented examples switched on"
