#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# [greylist] privacy (issue 32; postgrey's --privacy), with real parts.
# On LMDB: greygated on 'gw' with privacy and no key yet makes the key
# (mode 600) and says so; --check-config names it and its fingerprint; a
# client at 'sender' greylisted by a real SMTP dialogue (swaks) leaves no
# address in the store file, only hashes ("h:..." in list grey); list
# grey --from with the whole address finds the triplet (a part of it
# cannot); release --from --to with the addresses releases it, logged
# with the addresses. On a shared Redis: two door-only gateways; the
# triplet the first greylists is in Redis under hashes alone; a second
# gateway with another key refuses to start, naming privacy and both
# fingerprints; with the first's key copied it starts, and the retry it
# is asked about passes there (the same hashes).
set -euo pipefail
here=$(dirname "$0")
. "$here/../lib/netns.sh"
. "$here/../lib/greygated.sh"

netns_init
netns_sender_gw
mkdir -p "$NETNS_TMP/store" "$NETNS_TMP/allow.d"
greygated_conf "[greylist]
delay = 1h
privacy = yes"
key=$NETNS_TMP/store/privacy.key
out=$(nsx gw "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/greygate.conf" --check-config 2>&1) ||
	fail "--check-config: $out"
[[ "$out" == *"privacy: $key does not exist yet: greygated makes it at start"* ]] ||
	fail "--check-config without the key: $out"
[ ! -e "$key" ] || fail "--check-config made the key"
greygated_start
[ "$(stat -c %a "$key")" = 600 ] || fail "the key's mode: $(stat -c %a "$key")"
grep -qxE '[0-9a-f]{64}' "$key" || fail "the key file: $(cat "$key")"
fp=$(grep -o "privacy: senders and recipients are stored as keyed hashes (key $key, fingerprint [0-9a-f]\{16\}; made now" "$GG_LOG" |
	grep -o 'fingerprint [0-9a-f]*' | cut -d' ' -f2) || fail "no privacy line: $(grep privacy "$GG_LOG")"
out=$(nsx gw "$GREYGATE_BUILD/daemon/greygated" --config "$NETNS_TMP/greygate.conf" --check-config 2>&1) ||
	fail "--check-config: $out"
[[ "$out" == *"privacy: senders and recipients stored as keyed hashes (key $key, fingerprint $fp)"* ]] ||
	fail "--check-config with the key: $out"
echo "ok: privacy's key made at start (mode 600, fingerprint $fp), said by --check-config"

attempt() { # the RCPT's reply code from 203.0.113.10
	nsx sender swaks --server 203.0.113.1 --from Alice@Sender.test --to bob@example.org \
		--quit-after RCPT --timeout 5 2>&1 |
		awk '/^ *-> RCPT TO/ {r=1; next} r && /^<(\*\*|-) +[0-9][0-9][0-9]/ {print $2; exit}' || true
}
[[ "$(attempt)" == *451 ]] || fail "the first attempt was not greylisted"
list=$(ggctl list grey)
[ "$(grep -c "^203.0.113.0/24 *h:[0-9a-f]\{32\} *h:[0-9a-f]\{32\} " <<<"$list")" = 1 ] ||
	fail "list grey does not show the triplet as hashes: $list"
! grep -q @ <<<"$list" || fail "list grey shows an address: $list"
kill "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"
for word in alice sender.test bob example.org; do
	! grep -qai -- "$word" "$NETNS_TMP/store/data.mdb" || fail "the store file holds '$word'"
done
echo "ok: the store file holds no sender or recipient; list grey shows their hashes"

greygated_start
[ "$(ggctl list grey --from alice@sender.test --to bob@example.org | grep -c "^203.0.113.0/24 ")" = 1 ] ||
	fail "list grey --from/--to with the whole addresses: $(ggctl list grey --from alice@sender.test --to bob@example.org)"
[ "$(ggctl list grey --from sender.test | grep -c "^203")" = 0 ] || fail "a part of an address matched a hash"
out=$(ggctl release 203.0.113.10 --from Alice@Sender.test --to bob@example.org) || fail "release: $out"
[[ "$out" == "released 203.0.113.10 (key 203.0.113.0/24)"* ]] || fail "release said: $out"
grep -qE "action=pass, reason=released, key=203.0.113.0/24, sender=alice@sender.test, recipient=bob@example.org, " "$GG_LOG" ||
	fail "the release's line: $(grep released "$GG_LOG")"
echo "ok: list grey --from/--to and release --from/--to take whole addresses and find the hashed triplet"
kill "$GG_PID"
wait_for 10 eval '! kill -0 "$GG_PID" 2>/dev/null' || fail "greygated did not stop"

# --- a shared Redis: hashes only, and one key for the site ---
[ -x /usr/bin/redis-server ] || { echo "no redis-server (scripts/deps installs it): skipped"; exit 77; }
netns_host mx1
netns_host mx2
netns_host redis
netns_link mx1 198.51.100.1/28 redis 198.51.100.2/28
netns_link mx2 198.51.100.17/28 redis 198.51.100.18/28
. "$here/../lib/shared-site.sh"
redis_setup 198.51.100.2 198.51.100.18
door_only() { # NAME REDIS: a gateway of the policy door alone, with privacy
	gg_conf "$1" "$2" "privacy = yes
[policy]
listen = inet:127.0.0.1:10023"
	sed -i 's/^interface = any$/gateway = no/' "$NETNS_TMP/$1/greygate.conf"
}
door_only mx1 198.51.100.2
gg_start mx1
[[ "$(ask_door mx1 192.0.2.7)" == action=DEFER_IF_PERMIT* ]] || fail "mx1's door did not greylist"
keys=$(rcli --scan)
grep -q "h:[0-9a-f]\{32\}" <<<"$keys" || fail "no hashed triplet in Redis: $keys"
! grep -q @ <<<"$keys" || fail "Redis holds an address: $keys"
fp1=$(rcli HGET gg:config privacy)
[[ "$fp1" =~ ^[0-9a-f]{16}$ ]] || fail "gg:config's privacy: $fp1"

door_only mx2 198.51.100.18
rc=0
out=$(nsx mx2 "$GREYGATE_BUILD/daemon/greygated" --foreground --config "$NETNS_TMP/mx2/greygate.conf" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "a gateway with another key started: $out"
[[ "$out" == *"privacy is "*" here but $fp1 in the shared store (set by mx1.test)"* ]] ||
	fail "the refusal does not name privacy and both fingerprints: $out"
cp "$NETNS_TMP/mx1/store/privacy.key" "$NETNS_TMP/mx2/store/privacy.key"
gg_start mx2
# (delay = 3: the retry at mx2, past the delay, finds mx1's triplet)
sleep 3.2
[[ "$(ask_door mx2 192.0.2.7)" == action=PREPEND* || "$(ask_door mx2 192.0.2.7)" == action=DUNNO* ]] ||
	fail "the retry at mx2 did not pass: $(ask_door mx2 192.0.2.7); $(tail -3 "$(gg_log mx2)")"
logged mx2 "action=pass, reason=triplet found" || fail "mx2 did not pass it by its retry: $(grep 'action=' "$(gg_log mx2)" | tail -3)"
echo "ok: Redis holds hashes only; another key is refused (privacy named, both fingerprints); with the site's key the retry passes at the other gateway"
echo "PASS"
