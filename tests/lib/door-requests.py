#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# door-requests.py SOCKET FIRST LAST NET: one Postfix policy request for
# each sender sN@example.com, N from FIRST to LAST, from client NET.(N %
# 250 + 1) (NET: three octets, "203.0.113"), on one connection to the
# policy door's unix SOCKET; each must be answered with an action, or
# the exit status says it was not (a load that makes the store write).
import socket
import sys

sock, first, last, net = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.settimeout(5)
for i in range(first, last + 1):
    s.sendall(("request=smtpd_access_policy\nprotocol_state=RCPT\n"
               "client_address=%s.%d\nsender=s%d@example.com\n"
               "recipient=r@example.org\n\n" % (net, i % 250 + 1, i)).encode())
    buf = b""
    while not buf.endswith(b"\n\n"):
        chunk = s.recv(1000)
        if not chunk:
            sys.exit("the door closed the connection at request %d" % i)
        buf += chunk
    if not buf.startswith(b"action="):
        sys.exit("request %d: %r" % (i, buf))
