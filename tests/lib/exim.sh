# SPDX-License-Identifier: GPL-2.0-or-later
# Private Exim instances for tests: Debian 12's exim4-daemon-light as
# scripts/deps unpacks it (under /var/cache/greygate-tests/exim4, never
# installed: Exim and Postfix are both a mail-transport-agent, which
# conflict), each with its own config, spool, log and mailbox under the
# test's temp dir, run inside a test namespace in the foreground and
# stopped by its PID. Needs netns.sh.
#   exim_new NAME HOST ADDR   instance NAME on test host HOST, listening
#                             on ADDR:25, delivering every address in
#                             example.org to one mailbox (with an
#                             Envelope-to: header), refusing the rest
#   exim_start NAME           started; waits until it answers
#   exim_mailbox NAME / exim_log NAME
EXIM_BIN=/var/cache/greygate-tests/exim4/usr/sbin/exim4
declare -A EXIM_PID=() EXIM_HOST=() EXIM_ADDR=()

exim_dir() { printf '%s/exim-%s' "$NETNS_TMP" "$1"; }
exim_mailbox() { printf '%s/mail/mailbox' "$(exim_dir "$1")"; }
exim_log() { printf '%s/log/mainlog' "$(exim_dir "$1")"; }

exim_new() {
	local name=$1 dir
	dir=$(exim_dir "$name")
	[ -x "$EXIM_BIN" ] || fail "no Exim at $EXIM_BIN (scripts/deps unpacks it)"
	install -d -m 755 "$dir"
	install -d -m 750 -o Debian-exim -g Debian-exim "$dir/spool" "$dir/log" "$dir/mail"
	cat >"$dir/exim.conf" <<CONF
primary_hostname = mx.example.org
domainlist local_domains = example.org
exim_path = $EXIM_BIN
spool_directory = $dir/spool
log_file_path = $dir/log/%slog
pid_file_path = $dir/exim.pid
exim_user = Debian-exim
exim_group = Debian-exim
daemon_smtp_ports = 25
local_interfaces = $3
acl_smtp_rcpt = acl_rcpt
host_lookup =
rfc1413_hosts =
begin acl
acl_rcpt:
  accept domains = +local_domains
  deny message = relay not permitted
begin routers
local:
  driver = accept
  domains = +local_domains
  transport = mbox
begin transports
mbox:
  driver = appendfile
  file = $dir/mail/mailbox
  user = Debian-exim
  envelope_to_add
CONF
	EXIM_HOST[$name]=$2
	EXIM_ADDR[$name]=$3
}

exim_start() {
	local name=$1
	netns_spawn "${EXIM_HOST[$name]}" "$EXIM_BIN" -C "$(exim_dir "$name")/exim.conf" -bdf
	EXIM_PID[$name]=$SPAWNED
	netns_on_exit "kill ${EXIM_PID[$name]}"
	wait_for 10 nsx "${EXIM_HOST[$name]}" bash -c "exec 3<>/dev/tcp/${EXIM_ADDR[$name]}/25" 2>/dev/null ||
		fail "exim $name does not answer on ${EXIM_ADDR[$name]}:25"
}
