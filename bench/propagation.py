#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The driver of bench/shared-propagation.sh: passes made one at a time at
# gateway A through its policy door (two requests per client network, the
# second past the delay by postgrey's policy_test_time), and the moment
# each passed network appears in the kernel sets of the other gateways,
# seen by `nft monitor` in their namespaces. Prints the time from A's
# answer to each gateway's set: median, p99, max.
#   propagation.py DOOR_SOCKET N DELAY NS_B NS_C ...
import ipaddress
import re
import socket
import subprocess
import sys
import threading
import time

door, n, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
others = sys.argv[4:]
ELEMENT = re.compile(r"add element inet greygate pass6 \{ ([0-9a-f:]+)")

seen = {ns: {} for ns in others}
ready = threading.Semaphore(0)


def watch(ns):
    mon = subprocess.Popen(["ip", "netns", "exec", ns, "nft", "monitor", "elements"],
                           stdout=subprocess.PIPE, text=True, bufsize=1)
    ready.release()
    for line in mon.stdout:
        now = time.monotonic()
        m = ELEMENT.search(line)
        if m and m.group(1) not in seen[ns]:
            seen[ns][m.group(1)] = now


for ns in others:
    threading.Thread(target=watch, args=(ns,), daemon=True).start()
    ready.acquire()
time.sleep(0.5)  # (the monitors listening)

s = socket.socket(socket.AF_UNIX)
s.connect(door)
buf = b""


def ask(client, at):
    global buf
    s.sendall(("request=smtpd_access_policy\nprotocol_state=RCPT\n"
               "client_address=%s\nsender=alice@sender.test\n"
               "recipient=bob@example.org\npolicy_test_time=%d\n\n"
               % (client, at)).encode())
    while b"\n\n" not in buf:
        buf += s.recv(4096)
    answer, buf = buf.split(b"\n\n", 1)
    return answer.decode()


t0 = int(time.time())
passed = {}
for i in range(n):
    net = "2001:db8:%x:%x::" % (1 + i // 65536, i % 65536)
    first = ask(net + "1", t0)
    if "DEFER" not in first:
        sys.exit("not greylisted first: " + first)
    second = ask(net + "1", t0 + delay + 1)
    if "DEFER" in second:
        sys.exit("the retry did not pass: " + second)
    passed[str(ipaddress.IPv6Address(net))] = time.monotonic()  # as nft prints it
time.sleep(2)  # the last ones' way

for ns in others:
    lat = sorted((seen[ns][k] - t) * 1000 for k, t in passed.items() if k in seen[ns])
    missing = len(passed) - len(lat)
    if not lat:
        print("%s: none of %d passes arrived" % (ns, len(passed)))
        continue
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print("%-24s %6d passes  median %6.2f ms  p99 %6.2f ms  max %7.2f ms  missing %d"
          % (ns.split("-")[1] if "-" in ns else ns, len(lat), p(0.5), p(0.99), lat[-1], missing))
