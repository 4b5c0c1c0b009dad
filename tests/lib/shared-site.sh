# SPDX-License-Identifier: GPL-2.0-or-later
# A site of gateways sharing one real redis-server, for bash tests (after
# netns.sh and netns_init, with a host 'redis'):
#   redis_setup ADDR...        its config (a password, these addresses,
#                              port 6379, its own dir, no saving), started
#   redis_start / redis_stop   by PID ($REDIS_PID); stop continues a
#                              stopped one first
#   rcli ARGS...               redis-cli on the first address
#   gg_conf NAME REDIS [EXTRA] a gateway's config in $NETNS_TMP/NAME
#                              (capturing on any interface, delay 3, its
#                              own store dir, control socket, log)
#   gg_start NAME [HOST]       greygated on HOST (NAME's namespace), up
#   gg_log NAME, logged NAME TEXT, ggctl NAME ARGS...
#   in_set HOST SET NET/PREFIX the set holds the network's address
#   ask_door HOST CLIENT       the policy door's (127.0.0.1:10023) answer
#                              for one RCPT from CLIENT

redis_setup() {
	rdir=$NETNS_TMP/redis
	mkdir -m 700 "$rdir"
	password=shared-$RANDOM$RANDOM
	REDIS_ADDR=$1
	cat >"$rdir/redis.conf" <<CONF
bind $*
port 6379
requirepass $password
dir $rdir
save ""
appendonly no
daemonize no
logfile $rdir/redis.log
CONF
	REDIS_PID=""
	netns_on_exit redis_stop
	redis_start
	printf '%s\n' "$password" >"$NETNS_TMP/redis.pass"
	chmod 600 "$NETNS_TMP/redis.pass"
}
redis_start() {
	netns_spawn redis /usr/bin/redis-server "$rdir/redis.conf"
	REDIS_PID=$SPAWNED
	wait_for 10 nsx redis redis-cli -h "$REDIS_ADDR" --no-auth-warning -a "$password" ping >/dev/null 2>&1 ||
		fail "redis-server did not start: $(tail -5 "$rdir/redis.log")"
}
redis_stop() {
	[ -n "$REDIS_PID" ] || return 0
	kill -CONT "$REDIS_PID" 2>/dev/null || true
	kill "$REDIS_PID" 2>/dev/null || true
	wait "$REDIS_PID" 2>/dev/null || true
	REDIS_PID=""
}
rcli() { nsx redis redis-cli -h "$REDIS_ADDR" --no-auth-warning -a "$password" "$@"; }

declare -A GG_PID=()
gg_conf() { # NAME REDIS_ADDRESS [EXTRA]
	local d=$NETNS_TMP/$1
	mkdir -p "$d/store" "$d/allow.d"
	cat >"$d/greygate.conf" <<CONF
[gateway]
interface = any
store_dir = $d/store
allow_dir = $d/allow.d
hostname = $1.test
control_socket = $d/control.sock
store = redis://$2:6379/0
store_password_file = $NETNS_TMP/redis.pass
log_level = debug
[handoff]
mode = off
[signals]
lookups = no
[greylist]
delay = 3
${3:-}
CONF
}
gg_log() { printf '%s/%s/greygated.log' "$NETNS_TMP" "$1"; }
gg_ups() { local n; n=$(grep -c "greygated .* up" "$(gg_log "$1")" 2>/dev/null) || true; echo "${n:-0}"; }
gg_up_again() { [ "$(gg_ups "$1")" -gt "$2" ]; }
gg_start() { # NAME [HOST]: started in HOST's namespace (NAME's), waited for
	local ups
	ups=$(gg_ups "$1")
	netns_spawn "${2:-$1}" "$GREYGATE_BUILD/daemon/greygated" --foreground \
		--config "$NETNS_TMP/$1/greygate.conf" >>"$(gg_log "$1")" 2>&1
	GG_PID[$1]=$SPAWNED
	wait_for 10 gg_up_again "$1" "$ups" ||
		{ cat "$(gg_log "$1")"; fail "greygated on $1 did not start"; }
}
ggctl() { "$GREYGATE_BUILD/tools/greygatectl" --socket "$NETNS_TMP/$1/control.sock" "${@:2}"; }
in_set() { # HOST SET NETWORK/PREFIX: the set holds the network's address
	nsx "$1" nft -j list set inet greygate "$2" 2>/dev/null |
		jq -e --arg a "${3%/*}" '.nftables[] | select(.set) | .set.elem[]? | select(.elem.val == $a)' >/dev/null
}
logged() { grep -F -- "$2" "$(gg_log "$1")" >/dev/null; }
ask_door() { # HOST CLIENT: the policy door's answer for one RCPT
	nsx "$1" python3 - "$2" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", 10023), timeout=5)
s.sendall(("request=smtpd_access_policy\nprotocol_state=RCPT\nclient_address=%s\n"
           "sender=carol@sender.test\nrecipient=dave@example.org\n\n" % sys.argv[1]).encode())
print(s.recv(1000).decode().split("\n")[0])
PY
}
