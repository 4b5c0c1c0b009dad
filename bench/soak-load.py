#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The mixed load of bench/soak.sh, from host 'sender' for SECONDS:
#   - bots: a session from one of 198.51.100.64-127 at a time, EHLO, MAIL
#     (a sender of random letters each time: never the same triplet
#     twice),
#     RCPT (the tarpit's 451), QUIT, never a retry;
#   - senders: each message from a /64 of its own in 2001:db8:100::/48
#     (a local route there lets any address be bound): a first attempt
#     (451), a retry after the delay that passes and is handed to the
#     MTA with a message (Subject soak-N), then, later, a message on the
#     fast path from the same address (Subject soak-N-fast);
#   - the policy door asked over TCP from the gateway's host is the
#     soak script's (it times it); this writes the Subjects it had
#     accepted (250 after DATA), one per line, to SENT, and counts what
#     went otherwise to stderr at the end.
# Usage: soak-load.py HOST SECONDS DELAY SENT
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "lib"))
from smtpclient import Connection  # noqa: E402

host, seconds, delay, sent_path = (sys.argv[1], float(sys.argv[2]),
                                   float(sys.argv[3]), sys.argv[4])
host6 = sys.argv[5] if len(sys.argv) > 5 else "2001:db8:1::1"
end = time.time() + seconds
lock = threading.Lock()
counts = {"bot": 0, "bot_bad": 0, "first": 0, "first_bad": 0,
          "handed": 0, "handed_bad": 0, "fast": 0, "fast_bad": 0,
          "errors": 0}
sent = open(sent_path, "a", buffering=1)
said = set()


def odd(what, src, reply):
    """The first unexpected reply of each kind, said (to stderr)."""
    with lock:
        if what not in said:
            said.add(what)
            print("soak-load: %s from %s: %s" % (what, src, reply),
                  file=sys.stderr)


def count(what):
    with lock:
        counts[what] += 1


def session(src, dst, rcpt_code, subject=None, sender=b"alice@soak.test"):
    """One session; True if RCPT got rcpt_code (and the message went)."""
    c = Connection(src, dst, timeout=30)
    try:
        r = c.reply()
        if not r.startswith("220"):
            odd("banner", src, r)
            return False
        c.cmd(b"EHLO soak.test")
        r = c.cmd(b"MAIL FROM:<" + sender + b">")
        if not r.startswith("250"):
            odd("MAIL", src, r)
            return False
        r = c.cmd(b"RCPT TO:<bob@example.org>")
        if not r.startswith(rcpt_code):
            odd("RCPT (not %s)" % rcpt_code, src, r)
            return False
        if subject:
            if not c.cmd(b"DATA").startswith("354"):
                return False
            c.s.sendall(b"Subject: " + subject.encode() +
                        b"\r\n\r\nsoak\r\n.\r\n")
            if not c.reply().startswith("250"):
                return False
            with lock:
                sent.write(subject + "\n")
        c.cmd(b"QUIT")
        return True
    finally:
        c.s.close()


def bots():
    i = 0
    while time.time() < end:
        src = "198.51.100.%d" % (64 + i % 64)
        i += 1
        try:
            # (letters: greylisting folds digits, VERP-like, into one)
            name = "".join(random.choice("abcdefghijklmnopqrstuvwxyz")
                           for _ in range(12))
            count("bot" if session(src, host, "451",
                                   sender=("%s@bots.test" % name).encode())
                  else "bot_bad")
        except OSError:
            count("errors")
            time.sleep(0.5)
        time.sleep(0.05)


def senders(worker):
    n = 0
    while time.time() < end - 3 * delay - 5:
        n += 1
        tag = "%d-%d" % (worker, n)
        src = "2001:db8:100:%x::%x" % (worker * 4096 + n, random.randint(1, 65535))
        try:
            if not session(src, host6, "451"):
                count("first_bad")
                continue
            count("first")
            time.sleep(delay + 0.5)
            if not session(src, host6, "250", "soak-" + tag):
                count("handed_bad")
                continue
            count("handed")
            time.sleep(delay)
            count("fast" if session(src, host6, "250", "soak-" + tag + "-fast")
                  else "fast_bad")
        except OSError:
            count("errors")
            time.sleep(0.5)


threads = [threading.Thread(target=bots)]
threads += [threading.Thread(target=senders, args=(w,)) for w in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(" ".join("%s=%d" % kv for kv in sorted(counts.items())),
      file=sys.stderr)
