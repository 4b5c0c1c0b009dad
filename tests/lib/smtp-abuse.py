#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad SMTP clients for the tarpit tests. Each mode prints "ok: ..." and
# exits 0, or prints what went wrong and exits 1.
#   garbage HOST        NUL bytes, binary, unknown commands until 421
#   longline HOST       a 100 KB line: 500, then the session goes on
#   dsnlines HOST       MAIL and RCPT lines as long as DSN lets them be
#                       (RFC 3461: 100 and 500 past RFC 5321's 512), and
#                       one past SMTP_LINE_MAX: greylisted, then 500
#   percap HOST N       N connections from one address: the ones past the
#                       per-client cap get 421 Too busy
#   slowloris HOST S    one byte every 0.2 s: closed by the deadline (S s)
#   halfclose HOST      EHLO then shutdown(SHUT_WR): replies still come
#   good HOST           a plain session; prints the RCPT reply and timing
#   flood HOST N SRC... N connections at once, from the source addresses
#                       in turn; waits for every banner; holds them until
#                       stdin closes; prints "banners=K"
#   idle HOST N WAIT    N idle connections; prints "closed=K slowest=T"
#                       after WAIT s: how many the server closed, and when
#   stutter HOST MS     the banner and EHLO reply must come a byte at a
#                       time, MS apart
#   rcptflood HOST N SRC EVERY  from SRC, N recipients pipelined in one
#                       write, a new transaction (RSET, MAIL) every EVERY;
#                       prints the replies read, counted by code: "451=K
#                       452=K ..." (a server closing on unread input resets
#                       the connection: the last replies may not be read)
#   goodmany HOST N     N good sessions in a row, each its own sender
#                       (good-aaa@a.test, good-aab@...: letters, as digits
#                       standing alone are folded as VERP tags); prints
#                       "sessions=N 451=K slowest=T"
#   pipeflood HOST BYTES  RSET lines pipelined (BYTES of them) to a
#                       stuttering server, then a reset: prints "ok"
#   dribble HOST EVERY  one byte of a command every EVERY s, never a whole
#                       line; prints "closed after T s"
#   burst HOST N SRC... N sessions at once (from the sources in turn), each
#                       EHLO, MAIL and RCPT in one write, all written before
#                       any reply is read: their questions reach greygated
#                       together; prints the RCPT replies by code ("451=N")
#                       and the slowest, "slowest=T"
import socket
import os
import sys
import threading
import time

# The server's port: 25 unless SMTP_PORT says otherwise (the benchmark's
# tarpit-alone listens elsewhere).
PORT = int(os.environ.get("SMTP_PORT", "25"))


def connect(host):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect((host, PORT))
    return s


def read_reply(s):
    """One whole reply (multi-line ones too); returns its last line."""
    buf = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            return buf.decode(errors="replace") or "EOF"
        buf += chunk
        lines = buf.split(b"\r\n")
        for line in lines[:-1]:
            if len(line) >= 4 and line[3:4] == b" " or len(line) == 3:
                return line.decode(errors="replace")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def garbage(host):
    s = connect(host)
    read_reply(s)
    s.sendall(b"\x00\x01\x02 binary\r\n")
    r = read_reply(s)
    if not r.startswith("502"):
        fail("binary line: " + r)
    replies = []
    for i in range(20):
        try:
            s.sendall(b"XYZZY %d\r\n" % i)
            replies.append(read_reply(s))
        except OSError:
            break
        if replies[-1].startswith("421") or replies[-1] == "EOF":
            break
    if not any(r.startswith("421") for r in replies):
        fail("no 421 after bad commands: %r" % replies[-3:])
    print("ok: garbage answered 502, then 421 after %d bad commands" % (len(replies) + 1))


def longline(host):
    s = connect(host)
    read_reply(s)
    s.sendall(b"EHLO " + b"a" * 100000)
    time.sleep(0.2)
    s.sendall(b"\r\n")
    r = read_reply(s)
    if not r.startswith("500"):
        fail("long line: " + r)
    s.sendall(b"QUIT\r\n")
    r = read_reply(s)
    if not r.startswith("221"):
        fail("after the long line: " + r)
    print("ok: 100 KB line answered 500, session went on")


def dsnlines(host):
    # What Postfix sends a DSN-capable server, at RFC 3461's lengths:
    # ENVID up to 100 characters, ORCPT up to 500.
    envid = b"E" * 100
    orcpt = b"rfc822;" + b"o" * 60 + b"+2Bx" * 100 + b"@example.org"
    mail = b"MAIL FROM:<dsn@a.test> RET=HDRS ENVID=" + envid
    rcpt = (b"RCPT TO:<bob@example.org> NOTIFY=SUCCESS,FAILURE,DELAY "
            b"ORCPT=" + orcpt)
    if len(rcpt) <= 512 or len(rcpt) > 1012:
        fail("the RCPT line is %d bytes, not between 512 and 1012"
             % len(rcpt))
    s = connect(host)
    read_reply(s)
    for cmd, want in ((b"EHLO dsn.example.org", "250"), (mail, "250"),
                      (rcpt, "451 4.7.1")):
        s.sendall(cmd + b"\r\n")
        r = read_reply(s)
        if not r.startswith(want):
            fail("%d-byte %s line: %s" % (len(cmd), cmd[:4].decode(), r))
    # The longest line any reader keeps (SMTP_LINE_MAX in
    # common/smtp_line.h) is taken with CRLF or a bare LF; a byte more is
    # refused, also with a bare LF (which leaves the CR's room free), and
    # the session goes on.
    longest = 2048
    for size, end, want in ((longest, b"\r\n", "451 4.7.1"),
                            (longest, b"\n", "451 4.7.1"),
                            (longest + 1, b"\n", "500"),
                            (longest + 1, b"\r\n", "500")):
        line = b"RCPT TO:<bob@example.org> X="
        s.sendall(line + b"x" * (size - len(line)) + end)
        r = read_reply(s)
        if not r.startswith(want):
            fail("a %d-byte line ending %r: %s" % (size, end, r))
    s.sendall(b"QUIT\r\n")
    r = read_reply(s)
    if not r.startswith("221"):
        fail("after the long lines: " + r)
    print("ok: a %d-byte RCPT line greylisted, 2,048 bytes taken, "
          "2,049 refused" % len(rcpt))


def percap(host, n):
    socks, refused, served = [], 0, 0
    for _ in range(n):
        s = connect(host)
        r = read_reply(s)
        if r.startswith("421") and "Too busy" in r:
            refused += 1
        elif r.startswith("220"):
            served += 1
        socks.append(s)
    for s in socks:
        s.close()
    if refused == 0 or served == 0:
        fail("served %d, refused %d" % (served, refused))
    print("ok: %d served, %d refused with 421 Too busy" % (served, refused))
    print("served=%d" % served)


def slowloris(host, deadline):
    s = connect(host)
    read_reply(s)
    start = time.time()
    payload = b"EHLO slow.example.org" * 100
    s.settimeout(deadline + 10)
    for b in payload:
        try:
            s.sendall(bytes([b]))
        except OSError:
            break
        time.sleep(0.2)
        if time.time() - start > deadline + 5:
            fail("not closed by the deadline")
        s.setblocking(False)
        try:
            data = s.recv(4096)
        except BlockingIOError:
            data = None
        s.setblocking(True)
        if data is not None:
            if b"421 4.4.2" in data or data == b"":
                took = time.time() - start
                print("ok: slowloris closed after %.1f s" % took)
                return
            fail("unexpected reply: %r" % data)
    fail("connection never closed")


def halfclose(host):
    s = connect(host)
    read_reply(s)
    s.sendall(b"EHLO half.example.org\r\nMAIL FROM:<a@a.test>\r\n")
    s.shutdown(socket.SHUT_WR)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    if b"250 2.1.0" not in data:
        fail("no reply after half-close: %r" % data)
    print("ok: half-closed client got its replies, then EOF")


def good(host):
    start = time.time()
    s = connect(host)
    read_reply(s)
    for cmd in (b"EHLO good.example.org", b"MAIL FROM:<good@a.test>",
                b"RCPT TO:<bob@example.org>"):
        s.sendall(cmd + b"\r\n")
        r = read_reply(s)
    s.sendall(b"QUIT\r\n")
    read_reply(s)
    took = time.time() - start
    if not r.startswith("451 4.7.1"):
        fail("good client: " + r)
    print("ok: good client got 451 in %.3f s" % took)


def flood(host, n, sources):
    import resource
    import selectors
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 100), hard))
    sel = selectors.DefaultSelector()
    socks = []
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((sources[i % len(sources)], 0))
        s.setblocking(False)
        try:
            s.connect((host, PORT))
        except BlockingIOError:
            pass
        socks.append(s)
        sel.register(s, selectors.EVENT_READ)
    banners, deadline = 0, time.time() + 60
    while banners < n and time.time() < deadline:
        for key, _ in sel.select(timeout=1):
            try:
                data = key.fileobj.recv(512)
            except OSError:
                data = b""
            if data.startswith(b"220 "):
                banners += 1
            sel.unregister(key.fileobj)
    print("banners=%d" % banners, flush=True)
    sys.stdin.read()
    for s in socks:
        s.close()


def idle(host, n, wait):
    import selectors
    sel = selectors.DefaultSelector()
    start = time.time()
    for _ in range(n):
        s = connect(host)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, b"")
    closed, slowest = 0, 0.0
    while closed < n and time.time() - start < wait:
        for key, _ in sel.select(timeout=0.1):
            try:
                data = key.fileobj.recv(512)
            except OSError:
                data = b""
            if data:
                sel.modify(key.fileobj, selectors.EVENT_READ, key.data + data)
                continue
            if b"421 " not in key.data:
                fail("closed without 421: %r" % key.data)
            closed += 1
            slowest = time.time() - start
            sel.unregister(key.fileobj)
            key.fileobj.close()
    print("closed=%d slowest=%.1f" % (closed, slowest))


def stutter(host, ms):
    s = connect(host)
    start, reads, got = time.time(), 0, b""
    while not got.endswith(b"\r\n"):
        chunk = s.recv(512)
        if not chunk:
            fail("closed during the banner: %r" % got)
        reads += 1
        got += chunk
    took = time.time() - start
    if not got.startswith(b"220 ") or reads < len(got) // 2 or \
            took < (len(got) - 1) * ms / 1000 * 0.8:
        fail("banner %r in %d reads, %.2f s: no stutter" % (got, reads, took))
    s.sendall(b"EHLO bot.test\r\n")
    t0, reply = time.time(), b""
    while b"\r\n250 " not in reply and not reply.startswith(b"250 "):
        chunk = s.recv(512)
        if not chunk:
            fail("closed during the EHLO reply: %r" % reply)
        reply += chunk
        if len(reply) >= 20:
            break
    if time.time() - t0 < 19 * ms / 1000 * 0.8:
        fail("EHLO reply came too fast: %r" % reply)
    print("ok: stutter: banner of %d bytes in %d reads over %.1f s, EHLO "
          "reply stuttered too" % (len(got), reads, took))


def rcptflood(host, n, source, every):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(60)
    s.bind((source, 0))
    s.connect((host, PORT))
    read_reply(s)
    lines = [b"EHLO flood.example.org", b"MAIL FROM:<flood@a.test>"]
    for i in range(n):
        if i and i % every == 0:
            lines += [b"RSET", b"MAIL FROM:<flood@a.test>"]
        lines.append(b"RCPT TO:<r%d@example.org>" % i)
    lines.append(b"QUIT")
    flood = b"\r\n".join(lines) + b"\r\n"

    # Sent while the replies are read: the tarpit may answer 421 and
    # close before the flood is all sent (then the rest of the send
    # meets a reset, which is the point, not a failure of the client).
    def send():
        try:
            s.sendall(flood)
        except (ConnectionResetError, BrokenPipeError):
            pass

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        data += chunk
    codes = {}
    for line in data.split(b"\r\n"):
        if len(line) >= 4 and line[3:4] == b" ":
            codes[line[:3].decode()] = codes.get(line[:3].decode(), 0) + 1
    print(" ".join("%s=%d" % kv for kv in sorted(codes.items())))


def goodmany(host, n):
    greylisted, slowest = 0, 0.0
    for i in range(n):
        start = time.time()
        s = connect(host)
        read_reply(s)
        tag = "".join(chr(97 + i // 26 ** k % 26) for k in (2, 1, 0))
        for cmd in (b"EHLO good.example.org",
                    b"MAIL FROM:<good-%s@a.test>" % tag.encode(),
                    b"RCPT TO:<bob@example.org>"):
            s.sendall(cmd + b"\r\n")
            r = read_reply(s)
        s.sendall(b"QUIT\r\n")
        read_reply(s)
        s.close()
        greylisted += r.startswith("451 4.7.1")
        slowest = max(slowest, time.time() - start)
    print("sessions=%d 451=%d slowest=%.2f" % (n, greylisted, slowest))


def pipeflood(host, nbytes):
    s = connect(host)
    s.settimeout(5)
    s.recv(1)  # the stutter's first byte
    s.sendall(b"RSET\r\n" * (nbytes // 6 + 1))
    # a reset: SO_LINGER 0 makes close() send RST
    import struct
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print("ok")


def dribble(host, every):
    s = connect(host)
    read_reply(s)
    start = time.time()
    s.settimeout(every)
    while time.time() - start < 60:
        try:
            s.sendall(b"N")
            if s.recv(512) == b"":
                break
        except socket.timeout:
            continue
        except OSError:
            break
    print("closed after %.1f s" % (time.time() - start))


def burst(host, n, sources):
    import selectors
    sel = selectors.DefaultSelector()
    conns = []
    for i in range(n):
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.bind((sources[i % len(sources)], 0))
        s.connect((host, PORT))
        conns.append(s)
    t0 = time.monotonic()
    for i, s in enumerate(conns):
        s.sendall(b"EHLO burst.test\r\nMAIL FROM:<burst%d@a.test>\r\n"
                  b"RCPT TO:<bob@example.org>\r\n" % i)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, [b"", 0])
    codes, slowest, left = {}, 0.0, n
    while left and time.monotonic() - t0 < 30:
        for key, _ in sel.select(timeout=1):
            st = key.data
            try:
                chunk = key.fileobj.recv(65536)
            except OSError:
                chunk = b""
            st[0] += chunk
            lines = st[0].split(b"\r\n")
            finals = [l for l in lines[:-1] if l[3:4] == b" "]
            # banner, EHLO, MAIL, then the RCPT's
            if len(finals) >= 4 or not chunk:
                code = finals[3][:3].decode() if len(finals) >= 4 else "none"
                codes[code] = codes.get(code, 0) + 1
                slowest = max(slowest, time.monotonic() - t0)
                sel.unregister(key.fileobj)
                key.fileobj.close()
                left -= 1
    codes["none"] = codes.get("none", 0) + left
    print(" ".join("%s=%d" % kv for kv in sorted(codes.items()) if kv[1]),
          "slowest=%.2f" % slowest)


mode, host = sys.argv[1], sys.argv[2]
if mode == "garbage":
    garbage(host)
elif mode == "longline":
    longline(host)
elif mode == "dsnlines":
    dsnlines(host)
elif mode == "percap":
    percap(host, int(sys.argv[3]))
elif mode == "slowloris":
    slowloris(host, float(sys.argv[3]))
elif mode == "halfclose":
    halfclose(host)
elif mode == "good":
    good(host)
elif mode == "idle":
    idle(host, int(sys.argv[3]), float(sys.argv[4]))
elif mode == "stutter":
    stutter(host, int(sys.argv[3]))
elif mode == "flood":
    flood(host, int(sys.argv[3]), sys.argv[4:])
elif mode == "rcptflood":
    rcptflood(host, int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
elif mode == "goodmany":
    goodmany(host, int(sys.argv[3]))
elif mode == "dribble":
    dribble(host, float(sys.argv[3]))
elif mode == "burst":
    burst(host, int(sys.argv[3]), sys.argv[4:])
elif mode == "pipeflood":
    pipeflood(host, int(sys.argv[3]))
else:
    fail("unknown mode " + mode)
