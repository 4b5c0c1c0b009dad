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
# (and says what the hand-off's default, auto, comes to here)
[ "$(tail -1 <<<"$out")" = "greygated: $conf: ok" ] &&
	[ "$(wc -l <<<"$out")" = 2 ] &&
	grep -q "^greygated: \[handoff\] mode = auto: " <<<"$out" || fail "unexpected: $out"
echo "ok: etc/greygate.conf is read as it is"


# (postgrey's whitelist files, which the check reads, from a temp folder:
# postgrey need not be installed)
mkdir "$tmp/postgrey"
printf 'example.org\n/^mx\\d+\\.example\\.net$/\n198.51.100.0/24\n' >"$tmp/postgrey/whitelist_clients"
printf 'postmaster@\n' >"$tmp/postgrey/whitelist_recipients"
# ([handoff]'s examples, address and source, are proxy-v2's)
sed -e 's/^#\([a-z_]* = \)/\1/' -e "s|/etc/postgrey/|$tmp/postgrey/|" \
	-e 's/^mode = auto$/mode = proxy-v2/' "$conf" >"$tmp/all.conf"
grep -q "^hostname = " "$tmp/all.conf" || fail "no commented example was switched on"
grep -q "^whitelist_clients = $tmp/postgrey/" "$tmp/all.conf" || fail "no whitelist example"
out=$("$greygated" --config "$tmp/all.conf" --check-config 2>&1) || fail "$out"
[ "$out" = "greygated: $tmp/all.conf: ok" ] || fail "unexpected: $out"
echo "ok: with its commented examples switched on"

# --check-config reads the whitelist files: a missing one is an error, a
# bad line a warning with its line.
rm "$tmp/postgrey/whitelist_recipients"
out=$("$greygated" --config "$tmp/all.conf" --check-config 2>&1) && fail "a missing whitelist file passed"
[[ "$out" == *"whitelist_recipients: No such file or directory"* ]] || fail "unexpected: $out"
printf 'postmaster@\n' >"$tmp/postgrey/whitelist_recipients"
printf 'two words\n' >>"$tmp/postgrey/whitelist_clients"
out=$("$greygated" --config "$tmp/all.conf" --check-config 2>&1) || fail "$out"
[[ "$out" == *"whitelist_clients:4: warning: skipped: does not look like"* ]] || fail "unexpected: $out"
echo "ok: --check-config reads postgrey's whitelist files"
