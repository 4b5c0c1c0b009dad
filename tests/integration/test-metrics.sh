#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygated's figures for Prometheus, with real parts: greygatectl metrics
# passes promtool's check; the listener (metrics_listen) serves the same
# over HTTP from a process of its own as the child's user, and nothing but
# GET /metrics; a real Prometheus, started here in the gateway's
# namespace with its own config and data, scrapes it, and after a
# greylisted and a passed client a PromQL query through its HTTP API
# returns those counts; killing greygated's child between two scrapes
# sends no counter back (Prometheus sees no reset); status's text and
# JSON say what the exposition says; greygatectl top's rates count what
# happened between its frames; the example Grafana dashboard's
# queries name only exported figures and Prometheus takes them.
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
mkdir -p "$NETNS_TMP/store"
greygated_conf "metrics_listen = 127.0.0.1:9469
[greylist]
delay = 2"
greygated_start
log=$GG_LOG
grep "metrics: Prometheus's text format at http://127.0.0.1:9469/metrics (served by an unprivileged process)" "$log" >/dev/null ||
	{ cat "$log"; fail "no metrics listener"; }

# One client greylisted, then passed by its retry.
attempt() {
	nsx sender swaks --server 203.0.113.1 --from alice@sender.test --to bob@example.org \
		--quit-after RCPT 2>&1 | grep "^<\*\* 451" >/dev/null || true
}
attempt
sleep 2.5
attempt
grep "action=pass, reason=retry-passed, client=203.0.113.10" "$log" >/dev/null || { cat "$log"; fail "no pass"; }

metrics() { ggctl metrics; }
metric() { metrics | awk -v s="$1" '$1 == s {print $2}'; }
out=$(metrics | promtool check metrics 2>&1) || fail "promtool: $out"
[ -z "$out" ] || fail "promtool: $out"
[ "$(metric 'greygate_decisions_total{action="greylist",reason="new"}')" = 1 ] ||
	fail "greylisted: $(metrics | grep decisions_total)"
[ "$(metric 'greygate_decisions_total{action="pass",reason="retry"}')" = 1 ] ||
	fail "passed: $(metrics | grep decisions_total)"
[ "$(metric 'greygate_set_elements{set="pass4"}')" = 1 ] || fail "pass4: $(metrics | grep set_elements)"
metrics | grep '^greygate_delivery_delay_seconds_bucket{le="+Inf"} ' >/dev/null || fail "no delay histogram"
# the store's latency: a fetch for each decision, every one in +Inf
fetches=$(metric greygate_store_fetch_seconds_count)
[ "${fetches:-0}" -ge 2 ] || fail "the store's latency counts ${fetches:-no} fetches: $(metrics | grep store_fetch)"
metrics | grep -x "greygate_store_fetch_seconds_bucket{le=\"+Inf\"} $fetches" >/dev/null ||
	fail "the latency's +Inf bucket: $(metrics | grep store_fetch)"
echo "ok: greygatectl metrics passes promtool check metrics; 1 greylisted, 1 passed, pass4 1"

# The three renderings agree: status's JSON and text, and the exposition
# (once the child's figures, sent every second, count both attempts).
wait_for 10 eval '[ "$(ggctl status --json | jq .tarpit.connections)" -ge 2 ]' ||
	fail "the child's figures never counted the two attempts: $(ggctl status --json | jq -c .tarpit)"
json=$(ggctl status --json)
[ "$(jq .tarpit.connections <<<"$json")" = "$(metric greygate_tarpit_connections_total)" ] ||
	fail "status and metrics disagree on tarpit connections"
[ "$(jq .decisions.greylisted_new <<<"$json")" = 1 ] || fail "status JSON: $(jq -c .decisions <<<"$json")"
ggctl status | grep "^decisions: .* 1 greylisted new, .* 1 passed by a retry" >/dev/null ||
	fail "status text: $(ggctl status | grep decisions)"
echo "ok: status's text and JSON say what the exposition says"

# The listener: another process, the child's user, GET /metrics only.
http() { nsx gw curl -s -o "$NETNS_TMP/body" -w '%{http_code} %{content_type}' "$@"; }
[ "$(http http://127.0.0.1:9469/metrics)" = "200 text/plain; version=0.0.4; charset=utf-8" ] ||
	fail "GET /metrics: $(http http://127.0.0.1:9469/metrics)"
promtool check metrics <"$NETNS_TMP/body" || fail "promtool on what HTTP served"
[ "$(http http://127.0.0.1:9469/)" = "404 text/plain; charset=utf-8" ] || fail "GET / was not 404"
[ "$(http -X POST http://127.0.0.1:9469/metrics | cut -d' ' -f1)" = 405 ] || fail "POST was not refused"
listener=$(pgrep -P "$GG_PID" -f -- "--metrics-http") || fail "no listener process"
[ "$(ps -o user= -p "$listener")" = greygate ] || fail "the listener runs as $(ps -o user= -p "$listener")"
[ "$(awk '/^CapEff/{print $2}' "/proc/$listener/status")" = 0000000000000000 ] ||
	fail "the listener has capabilities: $(grep Cap "/proc/$listener/status")"
for task in /proc/"$listener"/task/*; do
	grep -q "^Seccomp:\s*2" "$task/status" || fail "listener thread ${task##*/} has no seccomp filter"
done
echo "ok: HTTP from process $listener as greygate, no capabilities, a seccomp filter on each of its threads; 404 elsewhere, 405 for POST"

# 16 connections from 4 addresses (every slot) trickling a request's
# headers a byte a second (issue 29 R9: the listener's inactivity timeout
# never fired and scrapes failed for as long as they lasted): ended 5 s
# after they opened, and a scrape answered.
nsx gw python3 - <<'PY' || fail "slow connections held the metrics listener"
import socket, threading, time
slow = []
for a in range(1, 5):
    for _ in range(4):
        s = socket.create_connection(("127.0.0.1", 9469), source_address=("127.0.0.%d" % a, 0))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        slow.append(s)
t0 = time.time()
stop = False
def trickle():
    while not stop:
        for s in slow:
            try:
                s.send(b"x")
            except OSError:
                pass
        time.sleep(1)
threading.Thread(target=trickle, daemon=True).start()
answered = None
while time.time() - t0 < 25:
    try:
        c = socket.create_connection(("127.0.0.1", 9469), source_address=("127.0.0.9", 0), timeout=1)
        c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        c.settimeout(2)
        head = c.recv(12)
    except OSError:
        head = b""
    if head.startswith(b"HTTP/1.") and head.endswith(b" 200"):
        answered = time.time() - t0
        break
    time.sleep(0.5)
stop = True
assert answered is not None, "no scrape answered in 25 s"
assert answered < 11, answered
print("answered after %.1f s" % answered)
PY
echo "ok: connections trickling a request are ended 5 s after they opened; a scrape is answered"

# A real Prometheus scrapes it every second.
mkdir -p "$NETNS_TMP/prometheus"
cat >"$NETNS_TMP/prometheus.yml" <<'YML'
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: greygate
    static_configs:
      - targets: ['127.0.0.1:9469']
YML
netns_spawn gw prometheus --config.file="$NETNS_TMP/prometheus.yml" \
	--storage.tsdb.path="$NETNS_TMP/prometheus" --web.listen-address=127.0.0.1:9090 \
	>"$NETNS_TMP/prometheus.log" 2>&1
prom_pid=$SPAWNED
netns_on_exit "kill $prom_pid"
query() { # PROMQL: its one value, or nothing
	nsx gw curl -s --get --data-urlencode "query=$1" http://127.0.0.1:9090/api/v1/query |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true
}
wait_for 30 eval '[ "$(query '"'"'greygate_decisions_total{action="greylist",reason="new"}'"'"')" = 1 ]' ||
	{ tail "$NETNS_TMP/prometheus.log"; fail "Prometheus did not get the greylisted count"; }
[ "$(query 'sum by (action) (greygate_decisions_total{action="pass",reason="retry"})')" = 1 ] ||
	fail "Prometheus: passed $(query 'greygate_decisions_total{action="pass"}')"
[ "$(query 'up{job="greygate"}')" = 1 ] || fail "Prometheus: the target is not up"
echo "ok: a real Prometheus scraped it: PromQL says 1 greylisted and 1 passed"

# The example Grafana dashboard asks only for what exists, in PromQL
# that Prometheus takes.
dashboard=$here/../../etc/grafana-dashboard.json
names=$(metrics | awk '/^greygate_/{sub(/[{ ].*/, "", $1); print $1}' | sort -u)
for name in $(jq -r '.panels[].targets[].expr' "$dashboard" | grep -o 'greygate_[a-z_]*' | sort -u); do
	grep -x "$name" <<<"$names" >/dev/null || fail "the dashboard asks for $name, which greygate does not export"
done
while read -r expr; do
	answer=$(nsx gw curl -s --get --data-urlencode "query=$expr" http://127.0.0.1:9090/api/v1/query)
	[ "$(jq -r .status <<<"$answer")" = success ] || fail "the dashboard's '$expr': $answer"
done < <(jq -r '.panels[].targets[].expr' "$dashboard")
echo "ok: the Grafana dashboard's $(jq '[.panels[].targets[]] | length' "$dashboard") queries name exported figures and Prometheus takes them"

# Kill the child between two scrapes: no counter goes back.
attempt
before=$(metric greygate_tarpit_connections_total)
wait_for 10 eval '[ "$(query greygate_tarpit_connections_total)" = "$before" ]' ||
	fail "Prometheus did not scrape $before connections"
child=$(ggctl status --json | jq .child.pid)
kill -9 "$child"
wait_for 20 eval 'ggctl status --json | jq -e --argjson old "$child" ".child.running and .child.pid != \$old" >/dev/null' ||
	fail "no new child"
[ "$(metric greygate_child_restarts_total)" = 1 ] || fail "child restarts: $(metric greygate_child_restarts_total)"
after=$(metric greygate_tarpit_connections_total)
[ "$after" -ge "$before" ] || fail "tarpit connections went back: $before -> $after"
sleep 2.5
[ "$(query 'resets(greygate_tarpit_connections_total[1m])')" = 0 ] ||
	fail "Prometheus saw a counter reset"
[ "$(query 'greygate_child_restarts_total')" = 1 ] || fail "Prometheus: no child restart"
echo "ok: the child killed between scrapes: tarpit connections $before -> $after, no reset seen by Prometheus"
# Every scrape above (a second apart, 404s and 405s too) within the
# listener's filter: still the same process, never restarted.
[ "$(pgrep -P "$GG_PID" -f -- "--metrics-http")" = "$listener" ] ||
	fail "the listener was restarted: $(grep "metrics: the listener" "$log")"
! grep "metrics: the listener" "$log" || fail "the listener ended"

# greygatectl top: a frame, then, after 4 greylisted clients, a frame
# whose rates count them. The 4 sessions must be over 1.5 s before the
# second frame (the child's figures come up each second); on a machine
# too busy for that in INTERVAL seconds, again with twice the interval,
# once the round before is counted whole: its last session, counted
# after its own second frame, would otherwise fall in the next round's
# (seen: 5 connections in an 8 s frame after a 4 s round that did not
# fit).
counted=$(ggctl status --json | jq .tarpit.connections)
top_frames() { # INTERVAL: true if the clients fitted in the frame
	local start took
	ggctl top --count 2 --interval "$1" >"$NETNS_TMP/top.out" 2>&1 &
	top_pid=$!
	wait_for 5 grep "^tarpit " "$NETNS_TMP/top.out" >/dev/null || fail "top: no first frame: $(cat "$NETNS_TMP/top.out")"
	start=$(date +%s%N)
	for i in 1 2 3 4; do
		SMTP_SENDER="top${1}x$i@sender.test" nsx sender python3 "$here/../lib/smtp-session.py" \
			try 2001:db8:1::10 2001:db8:1::1 | grep "^RCPT 451" >/dev/null || fail "top: client $i not greylisted"
	done
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	wait "$top_pid" || fail "top: $(cat "$NETNS_TMP/top.out")"
	counted=$(( counted + 4 ))
	wait_for 10 eval '[ "$(ggctl status --json | jq .tarpit.connections)" -ge "$counted" ]' ||
		fail "top: the round's 4 connections were not counted: $(ggctl status --json | jq -c .tarpit)"
	[ "$took" -le $(( $1 * 1000 - 1500 )) ]
}
interval=4
until top_frames "$interval"; do
	[ "$interval" -lt 32 ] || fail "top: 4 clients took longer than a ${interval} s frame"
	echo "(4 clients did not fit in a ${interval} s frame: again with $(( interval * 2 )) s)"
	interval=$(( interval * 2 ))
done
[ "$(grep -c "^greygate top: " "$NETNS_TMP/top.out")" = 2 ] || fail "top: not 2 frames: $(cat "$NETNS_TMP/top.out")"
grep "(rates from the next frame on)" "$NETNS_TMP/top.out" >/dev/null || fail "top: the first frame does not say it has no rates"
second=$(awk '/^greygate top: /{n++} n == 2' "$NETNS_TMP/top.out")
# 4 connections, 4 greylisted new over the frame (the interval, and up to
# half a second of fetching): 3 would be below the range
four_per_frame() { # RATE
	awk -v r="$1" -v i="$interval" 'BEGIN {exit !(r >= 4 / (i + 0.5) - 0.05 && r <= 4 / i + 0.05)}'
}
rate=$(awk '/^tarpit /{print $4}' <<<"$second")
four_per_frame "$rate" || fail "top: the tarpit's rate ($rate/s, ${interval} s frame): $second"
read -r attempts greylisted new passed < <(sed -nE 's/^decisions +([0-9.]+) attempts\/s: ([0-9.]+) greylisted \(([0-9.]+) new\), ([0-9.]+) passed.*/\1 \2 \3 \4/p' <<<"$second")
for r in "${attempts:-x}" "${greylisted:-x}" "${new:-x}"; do
	four_per_frame "$r" || fail "top: the decisions' rates (${interval} s frame): $second"
done
[ "$passed" = 0.0 ] || fail "top: the decisions' passed rate: $second"
grep -E "^fast path .* passed networks 1 \(sets pass4 1, pass6 0\)" <<<"$second" >/dev/null ||
	fail "top: the passed networks: $second"
grep -E "^store .* fetch [0-9]+\.[0-9][0-9] ms mean$" <<<"$second" >/dev/null ||
	fail "top: the store's latency: $second"
grep -E "^store .* fetch -$" <<<"$(awk '/^greygate top: /{n++} n == 1' "$NETNS_TMP/top.out")" >/dev/null ||
	fail "top: the first frame's store latency: $(cat "$NETNS_TMP/top.out")"
echo "ok: greygatectl top: 2 frames ${interval} s apart, the second's rates count the 4 clients greylisted between them"

# --- the policy door alone (gateway = no), as root: greygated drops every
# capability, so a listener that died cannot be started again as the
# user: said once, no loop, nothing left behind; greygated goes on.
kill "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
greygated_conf "gateway = no
metrics_listen = 127.0.0.1:9469
[policy]
listen = inet:127.0.0.1:10023"
greygated_start
listener=$(pgrep -P "$GG_PID" -f -- "--metrics-http") || fail "door alone: no listener"
[ "$(http http://127.0.0.1:9469/metrics | cut -d' ' -f1)" = 200 ] || fail "door alone: no metrics"
kill -9 "$listener"
wait_for 5 eval '! kill -0 "$listener" 2>/dev/null' || fail "the dead listener was not reaped"
wait_for 10 grep "metrics: the listener on 127.0.0.1:9469 cannot start: cannot become greygate: Operation not permitted; it is not started again until greygated restarts" "$log" >/dev/null ||
	{ tail "$log"; fail "the listener's failure to start again was not said"; }
sleep 6
[ "$(grep -c "metrics: the listener on 127.0.0.1:9469" "$log")" = 2 ] ||
	fail "the listener was tried again: $(grep "metrics: the listener" "$log")"
ggctl status | grep "^gateway:   off" >/dev/null || fail "greygated does not answer"
echo "ok: the door alone: a listener that cannot start again as the user is said once, not retried, and reaped"
