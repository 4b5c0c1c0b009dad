#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package, as an admin meets it: scripts/package builds it
# (dpkg-buildpackage -us -uc -b); lintian finds no error and no warning;
# it depends on libpcap, which greygate loads rather than links;
# in a throw-away root (an overlay of this machine's own, in a mount
# namespace of its own: nothing it does reaches the machine) it installs
# without starting anything (the greygate user and group made, the store
# folder root's 0700, the config a conffile that greygated --check-config
# passes, man greygated shows the page), upgrades over itself keeping the
# admin's edit of the config, and purges to nothing: user, group, store
# and /etc/greygate gone.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root (skipped)" >&2; exit 77; }

tmp=$(mktemp -d /tmp/greygate-test-package.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
deb=$("$top/scripts/package" "$tmp/out") || fail "scripts/package"
echo "ok: built $(basename "$deb")"

# lintian would rather not run as root; it reads the .deb only.
chmod -R a+rX "$tmp/out"
tags=$(runuser -u nobody -- lintian --pedantic "$deb" 2>&1 || true)
if grep -E "^[EW]: " <<<"$tags" >/dev/null; then
	echo "$tags" >&2
	fail "lintian: errors or warnings"
fi
notes=$(grep -c "^[IP]: " <<<"$tags" || true)
echo "ok: lintian: no error, no warning ($notes notes)"
# libpcap is loaded, not linked: the package must still depend on it.
depends=$(dpkg-deb -f "$deb" Depends)
[[ "$depends" == *libpcap0.8* ]] || fail "Depends without libpcap: $depends"
echo "ok: Depends names libpcap0.8 (loaded, not linked)"

# The throw-away root, in a mount namespace that ends with the script.
cat >"$tmp/in-root.sh" <<'SH'
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
deb=/tmp/$(basename "$1")
# As on a machine that never had greygate: no user, no group.
deluser --quiet --system greygate >/dev/null 2>&1 || true
delgroup --quiet --system greygate-admin >/dev/null 2>&1 || true
dpkg -i "$deb" >/tmp/install.log 2>&1 || { cat /tmp/install.log; fail "dpkg -i"; }
getent passwd greygate >/dev/null || fail "no greygate user"
getent group greygate-admin >/dev/null || fail "no greygate-admin group"
[ "$(stat -c '%U %a' /var/lib/greygate)" = "root 700" ] || fail "/var/lib/greygate: $(stat -c '%U %a' /var/lib/greygate)"
[ -d /etc/greygate/allow.d ] || fail "no /etc/greygate/allow.d"
dpkg-query -W -f='${Conffiles}\n' greygate | grep "^ /etc/greygate/greygate.conf " >/dev/null ||
	fail "greygate.conf is not a conffile"
greygated --check-config >/dev/null || fail "greygated --check-config"
man -P cat greygated 2>/dev/null | grep "greygated — greylisting gateway" >/dev/null || fail "man greygated"
man -P cat greygate.conf 2>/dev/null | grep "metrics_listen" >/dev/null || fail "man greygate.conf"
! systemctl is-enabled greygated >/dev/null 2>&1 || fail "greygated was enabled by the install"
! pgrep -x greygated >/dev/null || fail "greygated runs after the install"
echo "ok: installed: user and group made, nothing enabled or started, --check-config passes, man pages there"
sed -i 's/^log_level = info$/log_level = debug/' /etc/greygate/greygate.conf
dpkg -i "$deb" >/tmp/upgrade.log 2>&1 || { cat /tmp/upgrade.log; fail "upgrade"; }
grep "^log_level = debug$" /etc/greygate/greygate.conf >/dev/null || fail "the upgrade lost the admin's edit"
echo "ok: upgraded over itself: the admin's config kept"
dpkg --purge greygate >/tmp/purge.log 2>&1 || { cat /tmp/purge.log; fail "purge"; }
! getent passwd greygate >/dev/null || fail "the greygate user outlived the purge"
! getent group greygate-admin >/dev/null || fail "the greygate-admin group outlived the purge"
[ ! -e /var/lib/greygate ] || fail "/var/lib/greygate outlived the purge"
[ ! -e /etc/greygate ] || fail "/etc/greygate outlived the purge: $(find /etc/greygate)"
echo "ok: purged: user, group, store and /etc/greygate gone"
SH
cat >"$tmp/overlay.sh" <<'SH'
set -eu
t=$1 deb=$2
mount -t tmpfs tmpfs "$t"
mkdir "$t/upper" "$t/work" "$t/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$t/upper,workdir=$t/work" "$t/root"
mount -t proc proc "$t/root/proc"
mount --rbind /dev "$t/root/dev"
mount -t tmpfs tmpfs "$t/root/tmp"
mount -t tmpfs tmpfs "$t/root/run"
cp "$deb" "$3" "$t/root/tmp/"
chroot "$t/root" sh "/tmp/$(basename "$3")" "$deb"
SH
mkdir "$tmp/root"
# Its own PID namespace too (its /proc shows only its processes): a
# greygated running elsewhere on the machine is none of its business.
unshare -m -p -f --propagation private sh "$tmp/overlay.sh" "$tmp/root" "$deb" "$tmp/in-root.sh"
# Nothing of it reached this machine.
[ ! -e /etc/greygate/greygate.conf ] || [ -n "$(dpkg-query -W greygate 2>/dev/null)" ] ||
	fail "the throw-away root's files reached the machine"
