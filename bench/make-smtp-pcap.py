#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes a synthetic capture of SMTP sessions for the sensor benchmark:
#   make-smtp-pcap.py OUT.pcap PACKETS
# Most sessions are botnet-like (connect, EHLO, MAIL, RCPT -> 451, QUIT);
# one in ten is a delivery with a 4-20 KB body sent in 1448-byte segments.
# Ethernet + IPv4 + TCP with correct sequence numbers, both directions;
# deterministic (fixed seed).
import random
import struct
import sys

out, want = sys.argv[1], int(sys.argv[2])
rnd = random.Random(1)
MSS = 1448


def frame(src, dst, sport, dport, seq, ack, flags, payload=b""):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF,
                      ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
    total = 20 + len(tcp) + len(payload)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0,
                     src, dst)
    eth = b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00"
    return eth + ip + tcp + payload


def session(t, n):
    client = bytes([10 + n % 200, (n >> 8) & 255, (n >> 16) & 255, 1 + n % 250])
    server = bytes([203, 0, 113, 1])
    cport = 1024 + n % 60000
    cseq, sseq = rnd.getrandbits(32), rnd.getrandbits(32)
    pkts = []

    def c2s(data, flags=0x18):
        nonlocal cseq
        pkts.append(frame(client, server, cport, 25, cseq, sseq, flags, data))
        cseq += len(data) + (1 if flags & 0x03 else 0)

    def s2c(data, flags=0x18):
        nonlocal sseq
        pkts.append(frame(server, client, 25, cport, sseq, cseq, flags, data))
        sseq += len(data) + (1 if flags & 0x03 else 0)

    c2s(b"", 0x02)
    s2c(b"", 0x12)
    c2s(b"", 0x10)
    s2c(b"220 mx.example.org ESMTP\r\n")
    c2s(b"EHLO host%d.example.net\r\n" % n)
    s2c(b"250-mx.example.org\r\n250-PIPELINING\r\n250 8BITMIME\r\n")
    c2s(b"MAIL FROM:<sender%d@example.net>\r\n" % (n % 5000))
    s2c(b"250 2.1.0 Ok\r\n")
    c2s(b"RCPT TO:<user%d@example.org>\r\n" % (n % 300))
    if n % 10 == 0:
        s2c(b"250 2.1.5 Ok\r\n")
        c2s(b"DATA\r\n")
        s2c(b"354 End data with <CR><LF>.<CR><LF>\r\n")
        body = (b"X" * 76 + b"\r\n") * rnd.randint(50, 260) + b".\r\n"
        for i in range(0, len(body), MSS):
            c2s(body[i:i + MSS])
            s2c(b"", 0x10)
        s2c(b"250 2.0.0 Ok: queued\r\n")
    else:
        s2c(b"451 4.7.1 <user%d@example.org>: Greylisted\r\n" % (n % 300))
    c2s(b"QUIT\r\n")
    s2c(b"221 2.0.0 Bye\r\n")
    c2s(b"", 0x11)
    s2c(b"", 0x11)
    c2s(b"", 0x10)
    return pkts


with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    written, n, t = 0, 0, 1700000000.0
    sessions = []
    while written < want:
        # Interleave a few sessions at a time, as a gateway sees them.
        while len(sessions) < 8:
            sessions.append(session(t, n))
            n += 1
        s = sessions[rnd.randrange(len(sessions))]
        pkt = s.pop(0)
        if not s:
            sessions.remove(s)
        t += 0.0001
        sec = int(t)
        f.write(struct.pack("<IIII", sec, int((t - sec) * 1e6), len(pkt), len(pkt)))
        f.write(pkt)
        written += 1
    print("%d packets, %d sessions" % (written, n))
