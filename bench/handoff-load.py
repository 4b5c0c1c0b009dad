#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# The hand-off's client side for bench/handoff-bench.sh, from source
# addresses of its own (each its own key: client_prefix6 = 128, delay 0):
#   latency HOST SRC...   per address: a session handed over gated for
#                         postmaster@ (not passed), whose later RCPT to
#                         abuse@ (exempt too) the gate asks about and
#                         passes on; a first attempt (451); the attempt
#                         that passes and is handed (the time from sending
#                         RCPT to the MTA's 250 reaching us), its later
#                         RCPT on the plain join; then the next attempt,
#                         on the fast path straight to the MTA (the same
#                         time); prints one line per address: "handed_ms
#                         direct_ms gated_later_ms joined_later_ms"
#   handed HOST MIB SRC...  per address: a first attempt, then a message of
#                         MIB MiB through the hand-off's join; prints the
#                         seconds from DATA to the MTA's 250 after the body
#   direct HOST MIB SRC...  per address (passed by now): a message of MIB
#                         MiB on the fast path; prints the same
#   gated HOST MIB SRC...  per address (never seen): a message of MIB MiB
#                         to postmaster@, through the gate; the same
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "lib"))
from smtpclient import Connection  # noqa: E402


class Session(Connection):
    def __init__(self, src, host):
        super().__init__(src, host, timeout=60)
        self.expect("220")
        self.cmd(b"EHLO bench.test", "250")
        self.cmd(b"MAIL FROM:<bench@bench.test>", "250")

    @staticmethod
    def check(reply, code):
        if not reply.startswith(code):
            sys.exit("FAIL: %r, not %s" % (reply, code))
        return reply

    def expect(self, code):
        return self.check(self.reply(), code)

    def cmd(self, line, code=""):
        return self.check(super().cmd(line), code)

    def rcpt_ms(self, code, rcpt=b"bob@example.org"):
        t0 = time.perf_counter()
        self.cmd(b"RCPT TO:<" + rcpt + b">", code)
        return (time.perf_counter() - t0) * 1000

    def body_s(self, mib):
        line = b"x" * 998 + b"\r\n"
        chunk = line * 1024
        t0 = time.perf_counter()
        self.cmd(b"DATA", "354")
        self.s.sendall(b"Subject: bulk\r\n\r\n")
        for _ in range(mib * 1024 * 1024 // len(chunk)):
            self.s.sendall(chunk)
        self.s.sendall(b".\r\n")
        self.expect("250")
        return time.perf_counter() - t0

    def quit(self):
        try:
            self.s.sendall(b"QUIT\r\n")
            self.reply()
        except OSError:
            pass
        self.s.close()


def main():
    mode, host = sys.argv[1], sys.argv[2]
    if mode == "latency":
        for src in sys.argv[3:]:
            s = Session(src, host)
            s.rcpt_ms("250", b"postmaster@example.org")
            gated = s.rcpt_ms("250", b"abuse@example.org")
            s.quit()
            s = Session(src, host)
            s.rcpt_ms("451")
            s.quit()
            s = Session(src, host)
            handed = s.rcpt_ms("250")
            joined = s.rcpt_ms("250", b"carol@example.org")
            s.quit()
            s = Session(src, host)
            direct = s.rcpt_ms("250")
            s.quit()
            print("%.3f %.3f %.3f %.3f" % (handed, direct, gated, joined),
                  flush=True)
    else:
        mib = int(sys.argv[3])
        for src in sys.argv[4:]:
            if mode == "handed":
                s = Session(src, host)
                s.rcpt_ms("451")
                s.quit()
            s = Session(src, host)
            if mode == "gated":
                s.rcpt_ms("250", b"postmaster@example.org")
            else:
                s.rcpt_ms("250")
            print("%.3f" % s.body_s(mib), flush=True)
            s.quit()

main()
