#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# A stand-in server for traffic tests: listens on ADDR PORT (v4 or v6),
# sends BANNER to each client and closes. Prints "listening" when ready.
import socket
import sys

addr, port, banner = sys.argv[1], int(sys.argv[2]), sys.argv[3]
family = socket.AF_INET6 if ":" in addr else socket.AF_INET
s = socket.socket(family, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if family == socket.AF_INET6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind((addr, port))
s.listen(64)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    try:
        c.sendall((banner + "\r\n").encode())
    finally:
        c.close()
