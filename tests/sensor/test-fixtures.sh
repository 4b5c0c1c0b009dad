#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# greygate-sniff on the captures in tests/data (made with real Postfix,
# swaks and tcpdump by tests/data/make-fixtures.sh): the exact triplets
# and replies, over IPv4, IPv6, PIPELINING, STARTTLS, 802.1Q and QinQ,
# Linux cooked ("any") captures, NFLOG (nflog:GROUP) captures, and a
# capture of one direction only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../data
sniff=$GREYGATE_BUILD/tools/greygate-sniff
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

rcpts() { # FILE: "client helo from to reply" per RCPT, in order
	"$sniff" -r "$1" | jq -r 'select(.event == "rcpt") |
		[.client, .helo, .from, .to, (.reply | tostring)] | join(" ")'
}

expect() { # FILE WANT
	local got
	got=$(rcpts "$1")
	[ "$got" = "$2" ] || fail "$(basename "$1"):
got:
$got
want:
$2"
	echo "ok: $(basename "$1")"
}

expect "$data/smtp-plain.pcap" "\
203.0.113.10 sender.test alice@sender.test bob@example.org 250
203.0.113.10 sender.test Carol@Sender.Test x@example.org 250
203.0.113.10 sender.test Carol@Sender.Test y@example.org 250
203.0.113.10 sender.test Carol@Sender.Test z@example.org 250"

expect "$data/smtp-pipe.pcap" "\
2001:db8:1::10 v6.sender.test dave@sender.test erin@example.org 250
2001:db8:1::10 v6.sender.test dave@sender.test frank@example.org 250"

expect "$data/smtp-refused.pcap" "\
203.0.113.10 sender.test  refused@example.org 554
203.0.113.10 sender.test  ok@example.org 250"

expect "$data/smtp-any.pcap" "\
203.0.113.10 any.sender.test a4@sender.test cooked@example.org 250
2001:db8:1::10 any6.sender.test a6@sender.test cooked6@example.org 250"

# The same sessions through an nft "log group" rule (NFLOG headers),
# as greygated's sensor hears the fast path.
expect "$data/smtp-nflog.pcap" "$(rcpts "$data/smtp-any.pcap")"

expect "$data/smtp-vlan.pcap" "$(rcpts "$data/smtp-plain.pcap")
$(rcpts "$data/smtp-pipe.pcap")"

# STARTTLS: the 220 is seen, the envelope after it is not.
expect "$data/smtp-tls.pcap" ""
[ "$("$sniff" -r "$data/smtp-tls.pcap" | jq -r 'select(.event == "starttls") | .reply')" = 220 ] ||
	fail "smtp-tls: no starttls event with 220"
echo "ok: smtp-tls STARTTLS seen, nothing after it"

# One direction only (the client's): triplets without replies.
tcpdump -r "$data/smtp-plain.pcap" -w "$tmp/client-only.pcap" 'tcp dst port 25' 2>/dev/null
expect "$tmp/client-only.pcap" "\
203.0.113.10 sender.test alice@sender.test bob@example.org 0
203.0.113.10 sender.test Carol@Sender.Test x@example.org 0
203.0.113.10 sender.test Carol@Sender.Test y@example.org 0
203.0.113.10 sender.test Carol@Sender.Test z@example.org 0"

# Every event line is valid JSON with the documented keys.
"$sniff" -r "$data/smtp-plain.pcap" | jq -e -s 'length > 0 and all(.[];
	has("ts") and has("event") and has("client") and has("server") and
	has("helo") and has("from") and has("to") and has("reply"))' >/dev/null ||
	fail "events lack keys"
echo "ok: JSON keys"

# -r - from a pipe: the same events as from the file, written as they come.
cat "$data/smtp-pipe.pcap" | "$sniff" -r - >"$tmp/from-pipe.json"
"$sniff" -r "$data/smtp-pipe.pcap" >"$tmp/from-file.json"
[ -s "$tmp/from-file.json" ] && cmp -s "$tmp/from-pipe.json" "$tmp/from-file.json" ||
	fail "-r - from a pipe differs from -r FILE"
echo "ok: -r - from a pipe"

# Errors name the file: a missing one, and one that is no capture.
err=$("$sniff" -r "$tmp/none.pcap" 2>&1) && fail "a missing file was accepted"
[ "$err" = "greygate-sniff: $tmp/none.pcap: No such file or directory" ] ||
	fail "missing file: got '$err'"
err=$("$sniff" -r "$0" 2>&1) && fail "a script was read as a capture"
case $err in "greygate-sniff: $0: unknown file format"*) ;;
*) fail "not a capture: got '$err'" ;; esac
echo "ok: errors name the file"

# Bad numbers are refused, not read as something else (atoi would take
# "25x" as 25 and 70000 as 4464).
for bad in "-p 25x" "-p 70000" "-p 0" "-B 10" "-B 4k"; do
	# shellcheck disable=SC2086 # an option and its value
	if "$sniff" $bad -r "$data/smtp-plain.pcap" >/dev/null 2>"$tmp/err"; then
		fail "greygate-sniff $bad was accepted"
	fi
	grep -q "^greygate-sniff: bad " "$tmp/err" || fail "$bad: $(cat "$tmp/err")"
done
"$sniff" -p 25 -B 1024 -r "$data/smtp-plain.pcap" >/dev/null || fail "-p 25 -B 1024 refused"
echo "ok: bad -p and -B values refused"
