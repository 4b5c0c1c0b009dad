#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Regenerates the sensor's capture fixtures in this folder with real
# programs: a private Postfix on test host 'gw', swaks on 'sender', and
# tcpdump on gw's side of the link. Run as root; writes *.pcap here.
#   smtp-plain.pcap     two messages over IPv4, one with 3 recipients
#   smtp-pipe.pcap      PIPELINING (swaks --pipeline), IPv6
#   smtp-tls.pcap       STARTTLS: the envelope after it is not visible
#   smtp-refused.pcap   the null sender; a recipient refused (554), one
#                       accepted
#   smtp-vlan.pcap      smtp-plain (802.1Q tag) then smtp-pipe (QinQ)
#   smtp-any.pcap       captured on "any" (Linux cooked headers), v4 + v6
#   smtp-nflog.pcap     the same sessions as smtp-any, through an nft
#                       "log group" rule on nflog:5 (NFLOG headers): how
#                       greygated's sensor hears the fast path
# The triplets the tests expect are in test-sensor-fixtures.sh.
#   make-fixtures.sh [NAME...]   only those (smtp-nflog, ...); all by
#                                default
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/netns.sh"
. "$here/../lib/postfix.sh"

netns_init
netns_sender_gw
dev=$(netns_dev gw sender)
# This kernel has no 802.1Q module: tagged frames are made from a real
# capture by vlan-tag.py instead (smtp-vlan.pcap, below).

# TLS for the STARTTLS capture: a throw-away self-signed key.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=gw.test \
	-keyout "$NETNS_TMP/key.pem" -out "$NETNS_TMP/cert.pem" 2>/dev/null
postfix_new mx gw "203.0.113.1, [2001:db8:1::1]" "
smtpd_tls_cert_file = $NETNS_TMP/cert.pem
smtpd_tls_key_file = $NETNS_TMP/key.pem
smtpd_tls_security_level = may
smtpd_recipient_restrictions = check_recipient_access inline:{refused@example.org=REJECT}, permit_mynetworks, reject
"
postfix_start mx
postfix_wait_listening mx 203.0.113.1 || netns_die "postfix is not up"

wanted() { [ ${#only[@]} = 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
only=("$@")

capture() { # NAME [-i IFACE]: tcpdump while the rest of the args run
	local name=$1 pid iface=$dev filter='tcp port 25'
	shift
	if [ "$1" = -i ]; then iface=$2; shift 2; fi
	wanted "$name" || return 0
	# (libpcap has no filters for NFLOG: the nft rule chose)
	[[ "$iface" == nflog:* ]] && filter=''
	# Not through nsx: $! must be tcpdump itself (ip netns exec execs it).
	ip netns exec "$(netns_ns gw)" tcpdump -i "$iface" -U -s 0 \
		-w "$here/$name.pcap" $filter 2>/dev/null &
	pid=$!
	sleep 1
	"$@"
	sleep 1
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

swaks_to() { nsx sender timeout 30 swaks --silent 2 "$@" </dev/null; }

plain() {
	swaks_to --server 203.0.113.1 --ehlo sender.test \
		--from alice@sender.test --to bob@example.org
	swaks_to --server 203.0.113.1 --ehlo sender.test \
		--from Carol@Sender.Test \
		--to x@example.org,y@example.org,z@example.org
}
pipe() {
	swaks_to --server 2001:db8:1::1 --pipeline --ehlo v6.sender.test \
		--from dave@sender.test --to erin@example.org,frank@example.org
}
tls() {
	swaks_to --server 203.0.113.1 --tls --ehlo tls.sender.test \
		--from secret@sender.test --to hidden@example.org
}
refused() {
	swaks_to --server 203.0.113.1 --ehlo sender.test --from '<>' \
		--to refused@example.org,ok@example.org || true
}
any() {
	swaks_to --server 203.0.113.1 --ehlo any.sender.test \
		--from a4@sender.test --to cooked@example.org
	swaks_to --server 2001:db8:1::1 --ehlo any6.sender.test \
		--from a6@sender.test --to cooked6@example.org
}
capture smtp-plain plain
capture smtp-pipe pipe
capture smtp-tls tls
capture smtp-refused refused
capture smtp-any -i any any
# Both ways of SMTP, logged to NFLOG group 5 (after NAT, as greygate's
# fast-path rules are).
nsx gw nft -f - <<'NFT'
table inet fixture {
	chain pre {
		type filter hook prerouting priority 0
		tcp dport 25 log group 5
	}
	chain post {
		type filter hook postrouting priority 0
		tcp sport 25 log group 5
	}
}
NFT
capture smtp-nflog -i nflog:5 any
# The plain and pipelined sessions again, as 802.1Q (one tag) and QinQ
# (two tags) frames.
wanted smtp-vlan &&
	python3 "$here/vlan-tag.py" "$here/smtp-plain.pcap" \
		"$here/smtp-pipe.pcap" "$here/smtp-vlan.pcap"
ls -l "$here"/*.pcap
