# SPDX-License-Identifier: GPL-2.0-or-later
# A scripted SMTP client's connection, for the hand-off's test
# (tests/lib/smtp-session.py) and benchmark (bench/handoff-load.py): from
# a chosen source address to HOST:25 (or $SMTP_PORT), replies read whole
# (multi-line ones too, several in one segment).
import os
import socket


class Connection:
    def __init__(self, src, host, timeout=20):
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.s = socket.socket(fam, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.bind((src, 0))
        self.s.connect((host, int(os.environ.get("SMTP_PORT", "25"))))
        self.buf = b""

    def reply(self):
        """One whole reply: its last line, as text ("EOF" if closed)."""
        while True:
            while b"\r\n" in self.buf:
                line, self.buf = self.buf.split(b"\r\n", 1)
                if len(line) == 3 or line[3:4] == b" ":
                    return line.decode(errors="replace")
            chunk = self.s.recv(65536)
            if not chunk:
                return "EOF"
            self.buf += chunk

    def cmd(self, line):
        """Sends one command line; returns its reply."""
        self.s.sendall(line + b"\r\n")
        return self.reply()
