#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Scripted SMTP sessions for the hand-off's test, each from a chosen
# source address to HOST:25. Every mode prints the replies that matter,
# one per line ("RCPT 250 2.1.5 Ok"), and exits 0 if the session went as
# the mode expects, else prints "FAIL: ..." and exits 1. The envelope
# sender is alice@client.test, or $SMTP_SENDER; the EHLO name
# client.test, or $SMTP_HELO.
#   try SRC HOST                   EHLO, MAIL, RCPT; prints the RCPT reply
#                                  and quits (whatever it was)
#   deliver SRC HOST SUBJECT       a whole delivery; RCPT must get 250
#   rset SRC HOST WAIT SUBJECT     RCPT (451, greylisted), then in the same
#                                  session after WAIT s: RSET, MAIL, RCPT
#                                  (250 now) and the message
#   pipelined SRC HOST SUBJECT     EHLO, then MAIL, two RCPTs (bob, carol)
#                                  and DATA in one write: 250 250 250 354,
#                                  then the message
#   vanish SRC HOST                EHLO, MAIL, RCPT and close at once,
#                                  before any answer
#   hold SRC HOST SECONDS SUBJECT  a delivery that stays open: after RCPT
#                                  (250), a NOOP every half second for
#                                  SECONDS (each 250), then the message
#   xclient SRC HOST               after RCPT (250): RSET, then XCLIENT
#                                  ADDR=127.0.0.1, which must be refused
#                                  (5xx); prints its reply
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smtpclient import Connection  # noqa: E402

SENDER = os.environ.get("SMTP_SENDER", "alice@client.test").encode()
HELO = os.environ.get("SMTP_HELO", "client.test").encode()


class Session(Connection):
    def expect(self, what, reply, code):
        print(what, reply)
        if not reply.startswith(code):
            print("FAIL: %s answered %r, not %s" % (what, reply, code))
            sys.exit(1)

    def message(self, subject):
        self.s.sendall(b"Subject: " + subject.encode() + b"\r\n\r\nhello\r\n.\r\n")
        self.expect("DATA-END", self.reply(), "250")

    def start(self):
        self.expect("BANNER", self.reply(), "220")
        self.expect("EHLO", self.cmd(b"EHLO " + HELO), "250")


def main():
    mode, src, host = sys.argv[1], sys.argv[2], sys.argv[3]
    s = Session(src, host)
    if mode == "vanish":
        s.start()
        s.s.sendall(b"MAIL FROM:<" + SENDER + b">\r\nRCPT TO:<bob@example.org>\r\n")
        s.s.close()
        print("closed")
        return
    s.start()
    if mode == "pipelined":
        s.s.sendall(b"MAIL FROM:<" + SENDER + b">\r\nRCPT TO:<bob@example.org>\r\n"
                    b"RCPT TO:<carol@example.org>\r\nDATA\r\n")
        s.expect("MAIL", s.reply(), "250")
        s.expect("RCPT", s.reply(), "250")
        s.expect("RCPT", s.reply(), "250")
        s.expect("DATA", s.reply(), "354")
        s.message(sys.argv[4])
        s.expect("QUIT", s.cmd(b"QUIT"), "221")
        return
    s.expect("MAIL", s.cmd(b"MAIL FROM:<" + SENDER + b">"), "250")
    rcpt = s.cmd(b"RCPT TO:<bob@example.org>")
    if mode == "try":
        print("RCPT", rcpt)
        try:
            s.cmd(b"QUIT")
        except OSError:
            pass  # closed after its answer (a failed hand-off's 451)
        return
    if mode == "xclient":
        s.expect("RCPT", rcpt, "250")
        s.expect("RSET", s.cmd(b"RSET"), "250")
        s.expect("XCLIENT", s.cmd(b"XCLIENT ADDR=127.0.0.1"), "5")
        return
    if mode == "hold":
        s.expect("RCPT", rcpt, "250")
        sys.stdout.flush()
        end = time.monotonic() + float(sys.argv[4])
        while time.monotonic() < end:
            time.sleep(0.5)
            s.expect("NOOP", s.cmd(b"NOOP"), "250")
            sys.stdout.flush()
        subject = sys.argv[5]
    elif mode == "rset":
        s.expect("RCPT", rcpt, "451")
        time.sleep(float(sys.argv[4]))
        s.expect("RSET", s.cmd(b"RSET"), "250")
        s.expect("MAIL", s.cmd(b"MAIL FROM:<" + SENDER + b">"), "250")
        rcpt = s.cmd(b"RCPT TO:<bob@example.org>")
        subject = sys.argv[5]
    else:
        subject = sys.argv[4]
    s.expect("RCPT", rcpt, "250")
    s.expect("DATA", s.cmd(b"DATA"), "354")
    s.message(subject)
    s.expect("QUIT", s.cmd(b"QUIT"), "221")


main()
