#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# What a sender's SMTP said in the clear, from a capture of the wire
# (tcpdump -w on an Ethernet-like interface): each TCP flow to port 25,
# its client's bytes put in order, is searched for STARTTLS and for the
# envelope (MAIL FROM, RCPT TO). Prints a line a flow, then one summing
# up:
#   flows=N starttls=N envelopes_in_clear=N after_starttls=N
# and exits 1 if any flow said its envelope in the clear after a
# STARTTLS it asked for (what greygate must never let happen).
#   clear-envelope.py FILE.pcap
import struct
import sys

ENVELOPE = (b"MAIL FROM", b"RCPT TO")


def packets(path):
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        linktype = struct.unpack(endian + "I", head[20:24])[0]
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(endian + "IIII", rec)[2]
            yield linktype, f.read(incl)


def tcp_of(linktype, frame):
    """(src, sport, dst, dport, seq, payload) of a TCP segment, or None."""
    if linktype == 1:  # Ethernet
        ethertype, off = struct.unpack("!H", frame[12:14])[0], 14
    elif linktype == 113:  # Linux cooked
        ethertype, off = struct.unpack("!H", frame[14:16])[0], 16
    else:
        return None
    if ethertype == 0x0800:
        ihl = (frame[off] & 15) * 4
        if frame[off + 9] != 6:
            return None
        total = struct.unpack("!H", frame[off + 2:off + 4])[0]
        src, dst = frame[off + 12:off + 16], frame[off + 16:off + 20]
        seg = frame[off + ihl:off + total]
    elif ethertype == 0x86DD:
        if frame[off + 6] != 6:
            return None
        plen = struct.unpack("!H", frame[off + 4:off + 6])[0]
        src, dst = frame[off + 8:off + 24], frame[off + 24:off + 40]
        seg = frame[off + 40:off + 40 + plen]
    else:
        return None
    sport, dport, seq = struct.unpack("!HHI", seg[:8])
    doff = (seg[12] >> 4) * 4
    return src, sport, dst, dport, seq, seg[doff:]


def main():
    flows = {}
    for linktype, frame in packets(sys.argv[1]):
        t = tcp_of(linktype, frame)
        if not t or t[3] != 25 or not t[5]:
            continue
        key = (t[0], t[1], t[2], t[3])
        flows.setdefault(key, {})[t[4]] = t[5]
    starttls = clear = after = 0
    for key, segs in flows.items():
        data = b""
        end = None
        for seq in sorted(segs):  # (no wrap within a short test flow)
            seg = segs[seq]
            if end is not None and seq < end:
                seg = seg[end - seq:]  # a retransmission's old bytes
            data += seg
            end = max(end or 0, seq + len(segs[seq]))
        upper = data.upper()
        tls_at = upper.find(b"STARTTLS\r\n")
        said = [upper.find(e) for e in ENVELOPE if upper.find(e) >= 0]
        bad = tls_at >= 0 and any(
            upper.find(e, tls_at) >= 0 for e in ENVELOPE)
        starttls += tls_at >= 0
        clear += bool(said) and (tls_at < 0 or min(said) < tls_at)
        after += bad
        print("flow port %d: starttls=%s envelope_in_clear=%s after_starttls=%s"
              % (key[1], tls_at >= 0, bool(said), bad))
    print("flows=%d starttls=%d envelopes_in_clear=%d after_starttls=%d"
          % (len(flows), starttls, clear, after))
    sys.exit(1 if after else 0)


main()
