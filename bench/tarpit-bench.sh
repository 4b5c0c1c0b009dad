#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tarpit against a botnet, side by side in one run with (a) Postfix's
# smtpd at its default settings answering the same sessions with a 4xx
# (smtpd_recipient_restrictions = defer) and (b) smtp-floor, the least an
# epoll responder can do. Sessions per second (connect, EHLO, MAIL, RCPT
# -> 4xx, QUIT) with 50 and 500 clients at a time, driven by smtp-load
# from 20 source addresses, for: the floor (also behind the nft redirect
# greygate uses); greygate's tarpit alone on a port as the floor is
# (bench/tarpit-alone.c: the comparison on equal terms); Postfix; and
# greygate whole (the nft redirect, the child's tarpit and sensor, the
# parent deciding and logging every RCPT). With the CPU time the servers
# spent per 1,000 sessions: steadier than the rate on a shared machine
# (and the load generator's); how often each server process slept and
# was woken, a session (a wake-up is costly on a VM); and the system
# calls a session costs the child (strace -c).
# And memory with 10,000 idle connections held
# (measured first, on fresh servers; for greygate twice, to see whether it
# is given back), with a well-behaved client served meanwhile. With
# GREYGATE_REF_BUILD set to another build (of an earlier commit, say),
# greygate whole is run again from that build, as its reference.
# Then greygate whole again, fresh, with its sensor on the interface and
# on NFLOG ([gateway] nflog_group: the fast path alone) in turns, with
# what the sensor read and what its capture dropped. Last, the floor
# behind the redirect and greygate whole in turns, with the ratio of
# each pair (the issue's measure, taken back to back).
# With --split, only that last part (--rounds N: N times, with the
# median of the pairs), each turn's CPU time split by process
# (greygated's child and parent; the load generator's too), and where
# the time goes by perf's samples (perf: scripts/deps bench).
# Run as root after a build:
#   bench/tarpit-bench.sh [--split [--rounds N]] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/../tests/integration" && pwd)
GREYGATE_BUILD=${GREYGATE_BUILD:-$(cd "$here/../.." && pwd)/build}
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"
. "$here/../lib/greygated.sh"
. "$here/../lib/flood.sh"
abuse="python3 $here/../lib/smtp-abuse.py"
load=$GREYGATE_BUILD/bench/smtp-load
mode=all rounds=1
if [ "${1:-}" = --split ]; then
	mode=split
	shift
	if [ "${1:-}" = --rounds ]; then
		rounds=$2
		shift 2
	fi
fi
secs=${1:-10}
HOLD=10000

netns_init
netns_sender_gw
flood_sources 100 119
nsx sender sysctl -qw net.ipv4.ip_local_port_range="1024 65535" net.ipv4.tcp_tw_reuse=1
# A closed connection's conntrack entry lingers 120 s (TIME_WAIT): run
# after run, hundreds of thousands of sessions fill the gateway's table
# (262,144) and the kernel drops new SYNs, so whichever run came last
# was slowed by the ones before (seen: "nf_conntrack: table full" and a
# run at a tenth of its rate). Gone at once here: every run starts equal.
nsx gw sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_time_wait=1
gw_ns=$(netns_ns gw)

cpu_ticks() { # PID...: their user+system time, in clock ticks
	local p t=0
	for p in "$@"; do t=$(( t + $(awk '{print $14 + $15}' "/proc/$p/stat") )); done
	echo "$t"
}
wakeups() { # PID: the times it has slept and been woken
	awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$1/status"
}
run_load() { # NAME PORT [PID...]: both concurrencies; with PIDs, their CPU
	# time and wake-ups a session
	local c out name=$1 port=$2 t0 w0 sessions load_ms p each woken
	shift 2
	for c in 50 500; do
		t0=() w0=()
		for p in "$@"; do
			t0+=("$(cpu_ticks "$p")")
			w0+=("$(wakeups "$p")")
		done
		# (bash's times: the shell's, then its children's user and
		# system time, the load generator's)
		out=$(nsx sender "$load" 203.0.113.1 "$port" "$c" "$secs" "${FLOOD_SOURCES[@]}" && times) ||
			fail "$name at $c: $out"
		load_ms=$(echo "$out" | awk 'NR == 3 { split($1, u, "m"); split($2, s, "m")
			printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }')
		out=$(echo "$out" | head -1)
		sessions=$(echo "$out" | sed 's/.*sessions=\([0-9]*\).*/\1/')
		if [ $# -gt 0 ]; then
			each=() woken=()
			for p in "$@"; do
				each+=($(( ($(cpu_ticks "$p") - t0[${#each[@]}]) * 10 * 1000 / sessions )))
				woken+=("$(awk -v n="$(( $(wakeups "$p") - w0[${#woken[@]}] ))" -v s="$sessions" \
					'BEGIN { printf "%.2f", n / s }')")
			done
			out="$out cpu_ms_per_1000=$(IFS=+; echo $(( ${each[*]} )))"
			[ $# -eq 1 ] || out="$out (each: $(IFS=+; echo "${each[*]}"))"
			out="$out wakeups_a_session=$(IFS=+; echo "${woken[*]}")"
		fi
		out="$out load_cpu_ms_per_1000=$(( load_ms * 1000 / sessions ))"
		printf '%-22s concurrency %3d  %s\n' "$name" "$c" "$out"
	done
}
# PSS: shared pages (libraries, Postfix's many smtpd) counted once.
pss_kib() { # PID...: their summed PSS, KiB
	local p t=0 v
	for p in "$@"; do
		v=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
		t=$(( t + ${v:-0} ))
	done
	echo "$t"
}
ns_pss() { # every process in the gw namespace
	# shellcheck disable=SC2046
	pss_kib $(ip netns pids "$gw_ns")
}
hold() { # hold $HOLD idle connections; sets held, and good (a good client meanwhile)
	flood_hold "$HOLD"
	held=$FLOOD_HELD
	good=$(nsx sender env SMTP_PORT="${FLOOD_PORT:-25}" $abuse good 203.0.113.1 2>&1 |
		grep -o "got .* in [0-9.]* s" || echo "no answer")
}
release() { flood_release; }
# The system calls a session costs the child, each counted by strace -c
# over a short run at 500 clients (strace slows the child: the counts per
# session hold, the rate does not).
syscalls_per_session() { # NAME CHILD-PID
	local out sessions
	command -v strace >/dev/null || { printf '%-22s system calls: no strace (scripts/deps bench)\n' "$1"; return; }
	strace -c -f -o "$NETNS_TMP/strace" -p "$2" 2>/dev/null &
	local tracer=$!
	sleep 0.5
	out=$(nsx sender "$load" 203.0.113.1 25 500 3 "${FLOOD_SOURCES[@]}") || fail "$1 under strace: $out"
	kill -INT "$tracer"
	wait "$tracer" 2>/dev/null || true
	sessions=$(echo "$out" | sed 's/.*sessions=\([0-9]*\).*/\1/')
	printf '%-22s system calls a session in the child: %s\n' "$1" "$(awk -v n="$sessions" '
		$1 ~ /^[0-9.]+$/ && NF >= 5 { # % time, seconds, usecs/call, calls, [errors,] syscall
			if ($NF == "total") total = $4
			else if ($4 / n >= 0.01) list = list sprintf(" %s %.2f", $NF, $4 / n)
		}
		END { printf "%.1f (%s)", total / n, substr(list, 2) }' "$NETNS_TMP/strace")"
}

# The floor behind the redirect and greygate whole, back to back.
floor_redirect() { # on|off: port 25 redirected to the floor's port 2600
	if [ "$1" = off ]; then
		nsx gw nft delete table inet floor_redirect
		return
	fi
	nsx gw nft -f - <<'NFT'
table inet floor_redirect {
	chain prerouting {
		type nat hook prerouting priority dstnat;
		tcp dport 25 redirect to :2600
	}
}
NFT
}
gg_stop() {
	kill "$GG_PID"
	wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
}
gg_fresh() { # [EXTRA-CONF]: greygated whole (from GG_BIN if set), an empty store
	rm -rf "$NETNS_TMP/store"
	mkdir -p "$NETNS_TMP/store"
	greygated_conf "log_level = info
${1:-}
$FLOOD_TARPIT_CONF"
	greygated_start
}
gg_child() { ggctl status --json | jq -r .child.pid; }
turn_out() { # NAME OUTPUT: printed, and kept for the ratios
	echo "$2"
	echo "$2" | sed "s/^/$1 /" >>"$NETNS_TMP/turns"
}
floor_up() { # the floor on 2600, port 25 redirected to it; FLOOR_PID
	netns_spawn gw "$GREYGATE_BUILD/bench/smtp-floor" 2600
	FLOOR_PID=$SPAWNED
	sleep 0.5
	floor_redirect on
}
floor_down() {
	floor_redirect off
	kill "$FLOOR_PID"
	wait "$FLOOR_PID" 2>/dev/null || true
}
floor_turn() {
	floor_up
	turn_out floor "$(run_load "floor, nft redirect" 25 "$FLOOR_PID")"
	floor_down
}
gg_turn() {
	gg_fresh
	turn_out greygate "$(run_load "greygate whole" 25 "$(gg_child)" "$GG_PID")"
	gg_stop
}
# The issue's ratio, greygate whole against the floor behind the same
# redirect, taken in turns (floor, greygate, greygate, floor): the
# floor's own rate has moved by 75% between two runs minutes apart on
# this shared machine, so each pair is measured back to back. greygated
# is stopped before (the floor's redirect would meet its rules). With
# each pair's ratio, the ratio the CPU time predicts: on two cores the
# servers and the load generator share, the rate goes as the inverse
# of everyone's CPU time a session, (floor + its load) / (greygate + its
# load), while the cores are busy (busy= says how busy).
in_turns() { # [ROUNDS]
	local round
	: >"$NETNS_TMP/turns"
	for round in $(seq "${1:-1}"); do
		floor_turn
		gg_turn
		gg_turn
		floor_turn
	done
	# (pairs: each floor with the greygate next to it, at each
	# concurrency: the Nth of one with the Nth of the other; with more
	# than two pairs, their median too)
	awk 'function median(a, n,   i, j, t) {
	       for (i = 2; i <= n; i++)
	         for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	       return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	     { for (i = 1; i <= NF; i++) {
	         if ($i == "concurrency") c = $(i + 1)
	         split($i, kv, "=")
	         if (kv[1] == "rate") r = kv[2]
	         if (kv[1] == "cpu_ms_per_1000") cpu = kv[2]
	         if (kv[1] == "load_cpu_ms_per_1000") l = kv[2]
	       }
	       k = $1 c; n[k]++; rate[k, n[k]] = r; all[k, n[k]] = cpu + l }
	     END { for (c = 50; c <= 500; c += 450) {
	             f = "floor" c; g = "greygate" c; by_rate = by_cpu = ""
	             for (i = 1; i <= n[f]; i++) {
	               rr[i] = rate[g, i] / rate[f, i]; rc[i] = all[f, i] / all[g, i]
	               by_rate = by_rate sprintf(" %.2fx", rr[i]); by_cpu = by_cpu sprintf(" %.2fx", rc[i])
	             }
	             printf "greygate / the floor behind the redirect, %d clients:%s (from the CPU time a session:%s)\n", c, by_rate, by_cpu
	             if (n[f] > 2)
	               printf "  median of %d pairs: %.2fx (from the CPU time: %.2fx)\n", n[f], median(rr, n[f]), median(rc, n[f]) } }' \
		"$NETNS_TMP/turns"
}
# Where the time goes (--split, with perf): one more run at 50 clients
# of each, its processes sampled by perf; each symbol's share of a
# process's samples times that process's CPU time a session gives
# microseconds a session. Printed: the most of each process, and where
# greygate's child spends more than the floor.
perf_run() { # TAG PID...: a 50-client run, each PID sampled to $NETNS_TMP/perf.TAG.N
	local i=0 p pids=() t0 out sessions
	for p in "${@:2}"; do
		perf record -q -F 999 -g -o "$NETNS_TMP/perf.$1.$i" -p "$p" 2>/dev/null &
		pids+=($!)
		i=$(( i + 1 ))
	done
	sleep 0.5
	t0=()
	for p in "${@:2}"; do t0+=("$(cpu_ticks "$p")"); done
	out=$(nsx sender "$load" 203.0.113.1 25 50 "$secs" "${FLOOD_SOURCES[@]}") || fail "$1 under perf: $out"
	sessions=$(echo "$out" | sed 's/.*sessions=\([0-9]*\).*/\1/')
	i=0
	for p in "${@:2}"; do
		# (ticks of 10 ms: nanoseconds a session)
		echo $(( ($(cpu_ticks "$p") - t0[i]) * 10000000 / sessions )) >"$NETNS_TMP/perf.$1.$i.ns"
		i=$(( i + 1 ))
	done
	kill -INT "${pids[@]}"
	wait "${pids[@]}" 2>/dev/null || true
}
perf_symbols() { # FILE-STEM: "microseconds symbol", most first
	perf report -q -i "$1" --no-children --sort sym -g none --stdio 2>/dev/null |
		awk -v ns="$(cat "$1.ns")" '$1 ~ /%$/ { p = $1 + 0; $1 = ""; sub(/^ +(\[[k.]\] )?/, "")
			printf "%.2f %s\n", p * ns / 1e5, $0 }'
}
where_the_time_goes() {
	command -v perf >/dev/null || { echo "where the time goes: no perf (scripts/deps bench)"; return; }
	floor_up
	perf_run floor "$FLOOR_PID"
	floor_down
	gg_fresh
	perf_run gg "$(gg_child)" "$GG_PID"
	gg_stop
	echo "== where the time goes, microseconds a session (50 clients, perf -F 999)"
	awk '{ printf "%s%.1f", (NR > 1 ? ", " : ""), $1 / 1000 } END { print "" }' "$NETNS_TMP/perf.floor.0.ns" \
		"$NETNS_TMP/perf.gg.0.ns" "$NETNS_TMP/perf.gg.1.ns" | sed 's/^/the floor, greygate'"'"'s child, its parent: /'
	# (what a system call costs on this machine, for scale)
	perf bench syscall basic -l 2000000 2>/dev/null | grep usecs/op | sed 's/^ */a system call (getppid): /' || true
	perf_symbols "$NETNS_TMP/perf.floor.0" >"$NETNS_TMP/sym.floor"
	perf_symbols "$NETNS_TMP/perf.gg.0" >"$NETNS_TMP/sym.child"
	perf_symbols "$NETNS_TMP/perf.gg.1" >"$NETNS_TMP/sym.parent"
	echo "-- the parent, its most"
	head -15 "$NETNS_TMP/sym.parent"
	echo "-- the child beyond the floor (child - floor, floor, child)"
	awk 'FNR == NR { f[substr($0, index($0, " ") + 1)] = $1; next }
	     { s = substr($0, index($0, " ") + 1); c[s] = $1 }
	     END { for (s in c) printf "%.2f %.2f %.2f %s\n", c[s] - f[s], f[s], c[s], s
	           for (s in f) if (!(s in c)) printf "%.2f %.2f 0.00 %s\n", -f[s], f[s], s }' \
		"$NETNS_TMP/sym.floor" "$NETNS_TMP/sym.child" | sort -rn | awk 'NR <= 20' 
}
if [ "$mode" = split ]; then
	echo "== the floor behind the redirect and greygate whole (NFLOG, the default), in turns"
	in_turns "$rounds"
	where_the_time_goes
	exit 0
fi

echo "== floor: bench/smtp-floor.c"
netns_spawn gw "$GREYGATE_BUILD/bench/smtp-floor" 2600
floor_pid=$SPAWNED
sleep 0.5
run_load "floor" 2600 "$floor_pid"
# The same floor reached as greygate's tarpit is: port 25 redirected by an
# nft rule (conntrack and NAT on every connection), the part of greygate's
# cost that any firewall-level greylister (spamd behind pf's rdr) pays.
floor_redirect on
run_load "floor, nft redirect" 25 "$floor_pid"
floor_redirect off
kill "$floor_pid"
wait "$floor_pid" 2>/dev/null || true

echo "== greygate's tarpit alone: bench/tarpit-alone.c (no redirect, no capture, no policy)"
netns_spawn gw "$GREYGATE_BUILD/bench/tarpit-alone" 2601
alone_pid=$SPAWNED
sleep 0.5
alone_idle=$(pss_kib "$alone_pid")
FLOOD_PORT=2601 hold
alone_held=$held
alone_good=$good
alone_pss=$(pss_kib "$alone_pid")
release
run_load "greygate tarpit alone" 2601 "$alone_pid"
kill "$alone_pid"
wait "$alone_pid" 2>/dev/null || true

echo "== Postfix smtpd, default settings, smtpd_recipient_restrictions = defer"
postfix_new mx gw "203.0.113.1" "smtpd_recipient_restrictions = defer"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "Postfix did not start"
run_load "postfix" 25
# The memory on a fresh start: its processes from the load would count.
postfix_stop mx
pf_gone() { [ -z "$(ip netns pids "$gw_ns")" ]; }
wait_for 20 pf_gone || fail "Postfix did not stop"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || fail "Postfix did not start again"
idle_pf=$(ns_pss)
hold
pf_held=$held
pf_good=$good
pf_pss=$(ns_pss)
release
postfix_stop mx

echo "== greygate: redirect, tarpit, sensor and policy"
gg_fresh
child=$(gg_child)
gg_before=$(pss_kib "$child")
hold
gg_held=$held
gg_good=$good
gg_child=$(pss_kib "$child")
gg_parent=$(pss_kib "$GG_PID")
release
# A second wave once the first is over (the sensor lets go of a tarpit
# flow SENSOR_TARPIT_FLOW_IDLE_SEC after the tarpit did): is the memory
# reused, or does it grow?
sleep 30
gg_flows_left=$(ggctl status --json | jq .sensor.flows_open)
hold
gg_child2=$(pss_kib "$child")
release
sleep 2
run_load "greygate whole" 25 "$child" "$GG_PID"
syscalls_per_session "greygate whole" "$child"
ggctl status --json | jq -c '{sensor: .sensor, tarpit: .tarpit}'
# What the sensor hears under the flood: every port-25 packet of the
# interface (nflog_group = 0), or the fast path alone (nflog_group, 2525
# by default: greygate's rules log only allowed and passed clients' SMTP), each
# freshly started, in turns; with the packets the sensor read and those
# the capture dropped during that run.
echo "== greygate whole, the sensor on the interface and on NFLOG, fresh, in turns"
sensor_fresh() { # NAME EXTRA-CONF
	gg_stop
	gg_fresh "$2"
	run_load "$1" 25 "$(gg_child)" "$GG_PID"
	sleep 2 # (the child's last figures)
	printf '%-22s sensor: %s\n' "$1" "$(ggctl status --json |
		jq -c '.sensor | {packets, pcap_dropped, rcpts}')"
}
# (in turns A B B A: whichever runs first in a turn has tended to win,
# so each goes first once)
for turn in 1 2; do
	if [ "$turn" = 1 ]; then
		sensor_fresh "greygate, interface" "nflog_group = 0"
		sensor_fresh "greygate, nflog" "nflog_group = 2525"
	else
		sensor_fresh "greygate, nflog" "nflog_group = 2525"
		sensor_fresh "greygate, interface" "nflog_group = 0"
	fi
done
if [ -n "${GREYGATE_REF_BUILD:-}" ]; then
	# Each freshly started, with an empty store, in turns: the same
	# conditions for both (the runs above follow the memory tests), and
	# the settings both know.
	echo "== greygate whole, this build and the reference build ($GREYGATE_REF_BUILD), fresh, in turns"
	whole_fresh() { # NAME BUILD
		gg_stop
		GG_BIN=$2/daemon/greygated gg_fresh
		run_load "$1" 25 "$(gg_child)" "$GG_PID"
		syscalls_per_session "$1" "$(gg_child)"
	}
	for turn in 1 2; do # (A B B A, as above)
		if [ "$turn" = 1 ]; then
			whole_fresh "greygate whole, ref" "$GREYGATE_REF_BUILD"
			whole_fresh "greygate whole, fresh" "$GREYGATE_BUILD"
		else
			whole_fresh "greygate whole, fresh" "$GREYGATE_BUILD"
			whole_fresh "greygate whole, ref" "$GREYGATE_REF_BUILD"
		fi
	done
fi
echo "== the floor behind the redirect and greygate whole (NFLOG, the default), in turns"
gg_stop
in_turns
echo
printf 'memory (PSS) with %d idle connections opened at once, before the load runs:\n' "$HOLD"
printf '  postfix:  %s greeted; all its processes %d KiB (%d KiB idle); a good client meanwhile: %s\n' \
	"$pf_held" "$pf_pss" "$idle_pf" "$pf_good"
printf '  greygate'"'"'s tarpit alone: %s greeted; %d KiB (%d KiB idle), %d bytes per held connection; a good client meanwhile: %s\n' \
	"$alone_held" "$alone_pss" "$alone_idle" $(( (alone_pss - alone_idle) * 1024 / HOLD )) "$alone_good"
printf '  greygate: %s greeted; child (tarpit + sensor) %d KiB (%d KiB idle), parent %d KiB; a good client meanwhile: %s\n' \
	"$gg_held" "$gg_child" "$gg_before" "$gg_parent" "$gg_good"
printf '  greygate, a second wave of %d 30 s later (%s flows of the first left): child %d KiB\n' \
	"$HOLD" "$gg_flows_left" "$gg_child2"
printf '  greygate per held connection: %d bytes (the child'"'"'s growth / %d)\n' \
	$(( (gg_child - gg_before) * 1024 / HOLD )) "$HOLD"
