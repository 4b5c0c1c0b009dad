# SPDX-License-Identifier: GPL-2.0-or-later
# Test hosts as network namespaces joined by veth pairs, for bash tests.
# Source it, then:
#   netns_init                         temp dir, per-run suffix, cleanup trap
#   netns_host NAME                    a host (namespace) with lo up
#   netns_sender_gw                    hosts 'sender' and 'gw', linked
#   netns_link A ADDR_A B ADDR_B       a veth pair between hosts A and B;
#                                      ADDR is CIDR, v4 or v6; more address
#                                      pairs may follow
#   nsx NAME CMD...                    run CMD inside host NAME
#   netns_dev A B                      host A's device name toward B
#   netns_spawn NAME CMD...            start CMD in the background inside
#                                      host NAME; its PID is in $SPAWNED
#   netns_on_exit CMD                  run CMD at cleanup (before the hosts go)
# Everything is removed on exit, even after a failure: processes still in
# our namespaces (ours by construction) are ended by PID, then the
# namespaces are deleted, which takes their veths with them. Nothing here
# ever runs a command in the root namespace: every network command names
# one of our own namespaces, and addresses outside the test ranges
# (198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32) are refused.

NETNS_RUN=""
NETNS_TMP=""
declare -A NETNS_NAME=()
declare -A NETNS_DEV=()
NETNS_LINKS=0
NETNS_EXIT_HOOKS=()
SPAWNED=""

netns_die() {
	echo "netns: $*" >&2
	exit 1
}

netns_init() {
	[ "$(id -u)" -eq 0 ] || { echo "netns: needs root (skipped)" >&2; exit 77; }
	NETNS_RUN=$(printf '%04x%02x' $(( $$ & 0xffff )) $(( RANDOM & 0xff )))
	NETNS_TMP=$(mktemp -d "/tmp/greygate-test.XXXXXX")
	# Postfix's unprivileged daemons must reach their files under here.
	chmod 755 "$NETNS_TMP"
	trap netns_cleanup EXIT
	trap 'exit 130' INT TERM
}

netns_ns() {
	local ns=${NETNS_NAME[$1]:-}
	[ -n "$ns" ] || netns_die "no test host '$1'"
	printf '%s' "$ns"
}

netns_host() {
	local name=$1 ns="gg-$1-$NETNS_RUN"
	[ -n "$NETNS_RUN" ] || netns_die "netns_init first"
	[ -z "${NETNS_NAME[$name]:-}" ] || netns_die "host '$name' exists"
	ip netns add "$ns" || netns_die "cannot add namespace $ns"
	NETNS_NAME[$name]=$ns
	ip -n "$ns" link set lo up
}

netns_check_addr() {
	case "$1" in
	198.51.100.*/* | 203.0.113.*/*) ;;
	2001:[dD][bB]8:*/* | 2001:[dD][bB]8::*/*) ;;
	*) netns_die "address $1 is outside the test ranges" ;;
	esac
}

netns_add_addr() {
	local ns=$1 dev=$2 addr=$3
	netns_check_addr "$addr"
	case "$addr" in
	*:*) ip -n "$ns" -6 addr add "$addr" dev "$dev" nodad ;;
	*) ip -n "$ns" addr add "$addr" dev "$dev" ;;
	esac
}

netns_link() {
	local a b nsa nsb veth_a veth_b
	[ $# -ge 4 ] && [ $(( $# % 2 )) -eq 0 ] ||
		netns_die "usage: netns_link A ADDR_A B ADDR_B [ADDR_A ADDR_B]..."
	a=$1 b=$3
	nsa=$(netns_ns "$a") nsb=$(netns_ns "$b")
	NETNS_LINKS=$(( NETNS_LINKS + 1 ))
	# Names stay within IFNAMSIZ (15) and carry the run suffix.
	veth_a="gv${NETNS_RUN}${NETNS_LINKS}a"
	veth_b="gv${NETNS_RUN}${NETNS_LINKS}b"
	# Made inside host A, so not even for a moment in the root namespace.
	ip -n "$nsa" link add "$veth_a" type veth peer name "$veth_b" netns "$nsb" ||
		netns_die "cannot link $a and $b"
	netns_add_addr "$nsa" "$veth_a" "$2"
	netns_add_addr "$nsb" "$veth_b" "$4"
	shift 4
	while [ $# -gt 0 ]; do
		netns_add_addr "$nsa" "$veth_a" "$1"
		netns_add_addr "$nsb" "$veth_b" "$2"
		shift 2
	done
	ip -n "$nsa" link set "$veth_a" up
	ip -n "$nsb" link set "$veth_b" up
	NETNS_DEV["$a:$b"]=$veth_a
	NETNS_DEV["$b:$a"]=$veth_b
}

# netns_dev A B: the name of host A's end of its link to host B.
netns_dev() {
	local dev=${NETNS_DEV["$1:$2"]:-}
	[ -n "$dev" ] || netns_die "no link from $1 to $2"
	printf '%s' "$dev"
}

nsx() {
	local ns
	ns=$(netns_ns "$1") || exit 1
	shift
	ip netns exec "$ns" "$@"
}

netns_spawn() {
	local ns
	ns=$(netns_ns "$1") || exit 1
	shift
	# <&0: keep the caller's stdin (bash gives background jobs /dev/null).
	ip netns exec "$ns" "$@" <&0 &
	SPAWNED=$!
}

netns_on_exit() {
	NETNS_EXIT_HOOKS+=("$*")
}

netns_cleanup() {
	local status=$? hook name ns pids
	trap - EXIT
	for hook in "${NETNS_EXIT_HOOKS[@]}"; do
		eval "$hook" >/dev/null 2>&1 || true
	done
	for name in "${!NETNS_NAME[@]}"; do
		ns=${NETNS_NAME[$name]}
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -z "$pids" ] || kill $pids 2>/dev/null
	done
	sleep 0.2
	# Until each is gone: a process started meanwhile (a build, a
	# Postfix child) is ended too, and the deletion tried again.
	for name in "${!NETNS_NAME[@]}"; do
		ns=${NETNS_NAME[$name]}
		for try in 1 2 3 4 5 6 7 8 9 10; do
			pids=$(ip netns pids "$ns" 2>/dev/null)
			[ -z "$pids" ] || kill -9 $pids 2>/dev/null
			ip netns del "$ns" 2>/dev/null
			[ -e "/run/netns/$ns" ] || break
			sleep 0.3
		done
		[ ! -e "/run/netns/$ns" ] ||
			echo "netns: could not remove $ns: $(ip netns pids "$ns" 2>&1 | tr '\n' ' ')" >&2
	done
	wait 2>/dev/null
	if [ -n "$NETNS_TMP" ] && [ -d "$NETNS_TMP" ]; then
		if [ "$status" -ne 0 ] && [ -n "${GG_KEEP_FAILED:-}" ]; then
			echo "netns: kept $NETNS_TMP for inspection" >&2
		else
			rm -rf "$NETNS_TMP"
		fi
	fi
	exit "$status"
}

# netns_sender_gw: the usual pair: 'sender' (203.0.113.10, 2001:db8:1::10)
# linked to 'gw' (203.0.113.1, 2001:db8:1::1), after netns_init.
netns_sender_gw() {
	netns_host sender
	netns_host gw
	netns_link sender 203.0.113.10/24 gw 203.0.113.1/24 \
		2001:db8:1::10/64 2001:db8:1::1/64
}

# wait_for SECONDS CMD...: retry CMD every 0.1 s until it succeeds.
wait_for() {
	local deadline=$(( $(date +%s%N) / 1000000 + $1 * 1000 ))
	shift
	until "$@"; do
		[ $(( $(date +%s%N) / 1000000 )) -lt $deadline ] || return 1
		sleep 0.1
	done
}

# fail MESSAGE: end the test as failed.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
