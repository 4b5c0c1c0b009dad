#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes OUT: the Ethernet frames of IN1 with one 802.1Q tag (VLAN 100),
# then those of IN2 with two tags (QinQ: 802.1ad 200 outside, 802.1Q 100
# inside). Classic pcap in and out. For the sensor's VLAN fixture, where
# the kernel has no 8021q module to make tagged frames for real.
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        assert magic == 0xA1B2C3D4, "classic little-endian pcap expected"
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return head
            ts_s, ts_us, incl, orig = struct.unpack("<IIII", rec)
            yield ts_s, ts_us, f.read(incl), orig


def tag(frame, tags):
    out = frame[:12]
    for tpid, vid in tags:
        out += struct.pack(">HH", tpid, vid)
    return out + frame[12:]


in1, in2, out = sys.argv[1:4]
with open(in1, "rb") as f:
    header = f.read(24)
with open(out, "wb") as w:
    w.write(header)
    for path, tags in ((in1, [(0x8100, 100)]), (in2, [(0x88A8, 200), (0x8100, 100)])):
        for ts_s, ts_us, data, orig in frames(path):
            data = tag(data, tags)
            w.write(struct.pack("<IIII", ts_s, ts_us, len(data), orig + 4 * len(tags)))
            w.write(data)
