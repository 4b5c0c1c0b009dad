# SPDX-License-Identifier: GPL-2.0-or-later
# Private Postfix instances for tests, each with its own config, queue and
# mailbox under the test's temp dir, run inside a test namespace; never
# /etc/postfix. Needs netns.sh. Settings follow
# shared/notes/postfix-in-a-namespace.md (log to a file, no chroot).
#   postfix_new NAME HOST LISTEN [MAIN_CF_LINES]
#       makes instance NAME on test host HOST listening on LISTEN (an
#       inet_interfaces value), delivering every address in example.org
#       to one mailbox file; extra main.cf lines come from the 4th arg.
#   postfix_relay NAME HOST RELAY [MAIN_CF_LINES]
#       a sending instance relaying everything to RELAY, fast retries,
#       started
#   postfix_proxy_listener NAME [ADDR:PORT]
#       adds to instance NAME (before its start) an smtpd listening on
#       ADDR:PORT (127.0.0.1:10025) that takes a PROXY header: the
#       hand-off's (smtpd_upstream_proxy_protocol = haproxy)
#   postfix_start NAME / postfix_stop NAME
#   postfix_dir NAME         the instance's config directory
#   postfix_mailbox NAME     its mailbox file
#   postfix_log NAME         its log file
#   postfix_tls_cert         a self-signed certificate for mx.test.example
#                            in $tls/cert.pem, its key in $tls/key.pem
#                            (tls=$NETNS_TMP/tls), and in
#                            $POSTFIX_TLS_SMTPD the main.cf lines that
#                            offer STARTTLS with it (for postfix_new)

postfix_dir() { printf '%s/postfix-%s' "$NETNS_TMP" "$1"; }
postfix_mailbox() { printf '%s/mail/mailbox' "$(postfix_dir "$1")"; }
postfix_log() { printf '%s/maillog' "$(postfix_dir "$1")"; }

postfix_tls_cert() {
	tls=$NETNS_TMP/tls
	mkdir -m 700 "$tls"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tls/key.pem" -out "$tls/cert.pem" \
		-days 2 -subj "/CN=mx.test.example" >/dev/null 2>&1 ||
		netns_die "no certificate"
	POSTFIX_TLS_SMTPD="smtpd_tls_security_level = may
smtpd_tls_cert_file = $tls/cert.pem
smtpd_tls_key_file = $tls/key.pem
smtpd_tls_loglevel = 1"
}

postfix_new() {
	local name=$1 host=$2 listen=$3 extra=${4:-} dir
	dir=$(postfix_dir "$name")
	mkdir -p "$dir"
	mkdir -m 755 "$dir/queue" "$dir/data"
	mkdir -m 700 "$dir/mail"
	chown postfix "$dir/data"
	chown 65534:65534 "$dir/mail"
	cat >"$dir/main.cf" <<CF
compatibility_level = 3.6
queue_directory = $dir/queue
data_directory = $dir/data
mail_owner = postfix
setgid_group = postdrop
myhostname = $name.test.example
mydomain = test.example
myorigin = \$myhostname
inet_interfaces = $listen
inet_protocols = all
mydestination =
mynetworks = 127.0.0.0/8 [::1]/128 198.51.100.0/24 203.0.113.0/24 [2001:db8::]/32
smtpd_banner = \$myhostname ESMTP
smtpd_peername_lookup = no
virtual_mailbox_domains = example.org
virtual_mailbox_base = $dir/mail
virtual_mailbox_maps = static:mailbox
virtual_uid_maps = static:65534
virtual_gid_maps = static:65534
local_transport = error:local delivery is disabled in tests
alias_maps =
alias_database =
biff = no
maillog_file = $dir/maillog
maillog_file_prefixes = $dir
smtp_dns_support_level = disabled
CF
	# Extra settings replace the template's (no duplicate-key warnings).
	while IFS= read -r line; do
		case "$line" in *=*) postconf -c "$dir" -e "$line" ;; esac
	done <<<"$extra"
	cat >"$dir/master.cf" <<'CF'
smtp      inet  n       -       n       -       -       smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
local     unix  -       n       n       -       -       local
virtual   unix  -       n       n       -       -       virtual
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
CF
	eval "POSTFIX_HOST_$name=$host"
	# Inside the host: check resolves inet_interfaces, which exist there only.
	nsx "$host" postfix -c "$dir" check ||
		netns_die "postfix check failed for $name"
}

# postfix_relay NAME HOST RELAY [MAIN_CF_LINES]: a sending instance on
# HOST, listening on loopback only, relaying all mail to RELAY (an IP
# address) with fast retries (queue run and backoff 2-4 s), extra main.cf
# lines after, then started.
postfix_relay() {
	postfix_new "$1" "$2" "127.0.0.1" "
virtual_mailbox_domains =
relayhost = [$3]:25
queue_run_delay = 2s
minimal_backoff_time = 2s
maximal_backoff_time = 4s
${4:-}"
	postfix_start "$1"
}

postfix_proxy_listener() {
	echo "${2:-127.0.0.1:10025} inet n - n - - smtpd -o smtpd_upstream_proxy_protocol=haproxy" \
		>>"$(postfix_dir "$1")/master.cf"
}

postfix_start() {
	local name=$1 dir host
	dir=$(postfix_dir "$name")
	eval "host=\$POSTFIX_HOST_$name"
	nsx "$host" postfix -c "$dir" start ||
		{ cat "$dir/maillog" >&2 2>/dev/null; netns_die "postfix $name did not start"; }
	netns_on_exit "postfix_stop $name"
}

postfix_stop() {
	local dir pid
	dir=$(postfix_dir "$1")
	pid=$(cat "$dir/queue/pid/master.pid" 2>/dev/null | tr -d ' ')
	[ -n "$pid" ] || return 0
	postfix -c "$dir" stop >/dev/null 2>&1 || kill "$pid" 2>/dev/null
}

# postfix_wait_listening NAME ADDR: wait until the instance accepts on ADDR:25.
postfix_wait_listening() {
	local host
	eval "host=\$POSTFIX_HOST_$1"
	wait_for 10 nsx "$host" bash -c "exec 3<>/dev/tcp/$2/25" 2>/dev/null
}
