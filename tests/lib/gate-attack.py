#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# An unpassed client that names an exempt recipient first, then tries to
# get other recipients past the tarpit's gate in every form the MTA
# behind it could read as a RCPT (issue 55), for test-gate.sh.
#   gate-attack.py forms SRC HOST SUBJECT
#       EHLO, MAIL, RCPT postmaster@ (must be 250: handed over gated),
#       each form, DATA and a message with SUBJECT; prints "FORM n: CODE"
#       for each form's reply and "DATA: CODE" for the message's
#   gate-attack.py first SRC HOST
#       the nested path as the first RCPT: prints "FIRST: CODE"
#   gate-attack.py gone SRC HOST half|reset
#       postmaster@ handed over, DATA, part of a body, then the client
#       half-closes (and with reset, resets); prints "GONE: DATA 354"
import socket
import struct
import sys
import time

DOMAIN = "example.org"


def connect(src, host):
    s = socket.create_connection((host, 25), timeout=20,
                                 source_address=(src, 0))
    s.settimeout(20)
    return s


class Conn:
    def __init__(self, sock):
        self.s = sock
        self.buf = b""

    def reply(self):
        """One whole reply: its code, or 0 when the connection ended."""
        lines = []
        while True:
            while b"\n" not in self.buf:
                chunk = self.s.recv(4096)
                if not chunk:
                    return 0
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            lines.append(line)
            if len(line) < 4 or line[3:4] != b"-":
                return int(line[:3]) if line[:3].isdigit() else -1

    def say(self, data):
        self.s.sendall(data)
        return self.reply()


def handed(c, sender):
    assert c.reply() == 220
    assert c.say(b"EHLO attacker.test\r\n") == 250
    assert c.say(b"MAIL FROM:<%s>\r\n" % sender) == 250
    code = c.say(b"RCPT TO:<postmaster@%s>\r\n" % DOMAIN.encode())
    if code != 250:
        sys.exit("postmaster@ was answered %d, not handed over" % code)


def forms(src, host, subject):
    d = DOMAIN.encode()
    lines = [
        b"RCPT\tTO:<victim1@%s>" % d,
        b" RCPT TO:<victim2@%s>" % d,
        b"\tRCPT TO:<victim3@%s>" % d,
        b"RCPT TO:<postmaster@%s<victim4@%s>>" % (d, d),
        b"RCPT TO:<postmaster@%s>victim5@%s" % (d, d),
        b"\rRCPT TO:<victim6@%s>" % d,
        b"\x0bRCPT TO:<victim7@%s>" % d,
        b"\x0cRCPT\x0cTO:<victim8@%s>" % d,
        b"RCPT TO:<victim9@%s>\x00junk" % d,
        b"RCPT TO:<postmaster@%s,victim12@%s>" % (d, d),
        b"rcpt to: <\"victim13\"@%s>" % d,
        b"VRFY victim14@%s" % d,
        b"XCLIENT ADDR=127.0.0.1",
        b"XFORWARD ADDR=127.0.0.1",
        b"AUTH PLAIN AHVzZXIAcGFzcw==",
        b"RCPT TO:<@relay.test:victim15@%s>" % d,
    ]
    c = Conn(connect(src, host))
    handed(c, b"a@attacker.test")
    for n, line in enumerate(lines):
        print("FORM %d: %d" % (n, c.say(line + b"\r\n")), flush=True)
    # a verb split across reads
    c.s.sendall(b"RC")
    time.sleep(0.3)
    print("FORM split: %d" % c.say(b"PT\tTO:<victim10@%s>\r\n" % d))
    # a line longer than the gate's buffer, a RCPT inside and after it
    long = b"x" * 70000 + b" RCPT TO:<victim16@%s>" % d
    print("FORM long: %d" % c.say(long + b"\r\n"))
    # pipelined: three forms in one write, each answered
    c.s.sendall(b"RCPT\tTO:<victim17@%s>\r\n RCPT TO:<victim18@%s>\r\n"
                b"NOOP\r\n" % (d, d))
    for n in (17, 18):
        print("FORM pipelined %d: %d" % (n, c.reply()), flush=True)
    print("NOOP: %d" % c.reply(), flush=True)
    code = c.say(b"DATA\r\n")
    if code != 354:
        sys.exit("DATA was answered %d" % code)
    body = ("Subject: %s\r\n\r\nhello postmaster\r\n.\r\n" % subject).encode()
    print("DATA: %d" % c.say(body), flush=True)
    # a second transaction, its MAIL with a TAB: the MTA hears the gate's
    # line; its recipient is greylisted
    print("MAIL tab: %d" % c.say(b"MAIL\tFROM:<b@attacker.test>\r\n"))
    print("FORM again: %d" % c.say(b"RCPT\tTO:<victim19@%s>\r\n" % d))
    c.say(b"QUIT\r\n")


def first(src, host):
    c = Conn(connect(src, host))
    assert c.reply() == 220
    assert c.say(b"EHLO attacker.test\r\n") == 250
    assert c.say(b"MAIL FROM:<c@attacker.test>\r\n") == 250
    print("FIRST: %d" % c.say(b"RCPT TO:<postmaster@%s<victim11@%s>>\r\n"
                              % (DOMAIN.encode(), DOMAIN.encode())))


def gone(src, host, how):
    c = Conn(connect(src, host))
    handed(c, b"d@attacker.test")
    print("GONE: DATA %d" % c.say(b"DATA\r\n"), flush=True)
    c.s.sendall(b"Subject: never\r\n\r\npart of a body\r\n")
    time.sleep(0.3)
    c.s.shutdown(socket.SHUT_WR)
    time.sleep(0.3)
    if how == "reset":
        c.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                       struct.pack("ii", 1, 0))
    c.s.close()


def main():
    mode, src, host = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "forms":
        forms(src, host, sys.argv[4])
    elif mode == "first":
        first(src, host)
    elif mode == "gone":
        gone(src, host, sys.argv[4])
    else:
        sys.exit("unknown mode " + mode)


main()
