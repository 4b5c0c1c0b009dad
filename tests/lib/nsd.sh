# SPDX-License-Identifier: GPL-2.0-or-later
# A real authoritative DNS server for a test: nsd inside one of the
# test's hosts, its own config, zones and state under $NETNS_TMP, ended
# with the namespaces. Source after netns.sh, then:
#   nsd_start HOST ADDRESS ZONE...   serve $NETNS_TMP/zones/ZONE.zone for
#                                    each ZONE on ADDRESS:53; waits until
#                                    it answers for the first ZONE's SOA
#   nsd_pids                         nsd's processes (it answers from its
#                                    children's children), to stop and
#                                    continue them
#   nsd_host                         host 'dns' linked to 'gw',
#                                    198.51.100.53 (gw 198.51.100.1)
NSD_PID=""

nsd_host() {
	netns_host dns
	netns_link dns 198.51.100.53/24 gw 198.51.100.1/24
}

nsd_start() {
	local host=$1 addr=$2 z
	shift 2
	command -v nsd >/dev/null || fail "nsd is not installed (scripts/deps)"
	{
		cat <<CONF
server:
	ip-address: $addr
	port: 53
	do-ip6: no
	username: ""
	chroot: ""
	zonesdir: "$NETNS_TMP/zones"
	pidfile: "$NETNS_TMP/nsd.pid"
	database: ""
	zonelistfile: "$NETNS_TMP/zone.list"
	xfrdfile: "$NETNS_TMP/xfrd.state"
	xfrdir: "$NETNS_TMP"
	server-count: 1
	verbosity: 1
remote-control:
	control-enable: no
CONF
		for z in "$@"; do
			printf 'zone:\n\tname: %s\n\tzonefile: %s.zone\n' "$z" "$z"
		done
	} >"$NETNS_TMP/nsd.conf"
	netns_spawn "$host" nsd -d -c "$NETNS_TMP/nsd.conf" >"$NETNS_TMP/nsd.log" 2>&1
	NSD_PID=$SPAWNED
	wait_for 10 eval "nsx '$host' dig +short +time=1 +tries=1 @'$addr' '$1' SOA | grep -q ." ||
		{ cat "$NETNS_TMP/nsd.log"; fail "nsd does not answer"; }
}

nsd_descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; nsd_descendants "$c"; done; }
nsd_pids() { echo "$NSD_PID"; nsd_descendants "$NSD_PID"; }
