#!/usr/bin/env python3
"""Writes the OSMPBF target's seeds: small PBF files (raw and zlib blobs) and bare PrimitiveBlocks, encoded by hand
from the protobuf schema (osmformat.proto, fileformat.proto) so that every field the reader knows appears once."""
import os
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def key(field, wire):
    return varint(field << 3 | wire)


def vint(field, n):
    return key(field, 0) + varint(n)


def sint(field, n):
    return key(field, 0) + varint(zigzag(n))


def ld(field, payload):
    payload = payload.encode() if isinstance(payload, str) else payload
    return key(field, 2) + varint(len(payload)) + payload


def packed(field, values, encode=varint):
    return ld(field, b"".join(encode(v) for v in values))


def deltas(values):
    return [b - a for a, b in zip([0] + values, values)]


def frame(kind, blob):
    header = ld(1, kind) + vint(3, len(blob))
    return len(header).to_bytes(4, "big") + header + blob


def raw_blob(contents):
    return ld(1, contents) + vint(2, len(contents))


def zlib_blob(contents):
    return vint(2, len(contents)) + ld(3, zlib.compress(contents))


HEADER = (ld(1, sint(1, 24_930_000_000) + sint(2, 24_960_000_000) + sint(3, 60_180_000_000) + sint(4, 60_160_000_000))
          + ld(4, "OsmSchema-V0.6") + ld(4, "DenseNodes") + ld(5, "Sort.Type_then_ID") + ld(16, "make-seeds.py"))

STRINGS = ["", "highway", "residential", "name", "Kotkankatu", "oneway", "yes", "type", "restriction", "from", "to",
           "via", "only_straight_on"]
ids, lats, lons = [101, 102, 103, 104], [604_660_000, 604_661_000, 604_662_500, 604_659_000], [269_450_000, 269_452_000,
                                                                                              269_455_000, 269_449_000]
DENSE = ld(2, packed(1, deltas(ids), lambda v: varint(zigzag(v))) + packed(8, deltas(lats), lambda v: varint(zigzag(v)))
           + packed(9, deltas(lons), lambda v: varint(zigzag(v))) + packed(10, [3, 4, 0, 0, 1, 2, 0, 0]))
NODE = ld(1, sint(1, 105) + packed(2, [1]) + packed(3, [2]) + sint(8, 604_663_000) + sint(9, 269_456_000))
WAY = ld(3, vint(1, 201) + packed(2, [1, 5]) + packed(3, [2, 6]) + packed(8, deltas([101, 102, 103, 101]),
                                                                           lambda v: varint(zigzag(v))))
RELATION = ld(4, vint(1, 301) + packed(2, [7, 8]) + packed(3, [8, 12]) + packed(8, [9, 11, 10])
              + packed(9, deltas([201, 102, 202]), lambda v: varint(zigzag(v))) + packed(10, [1, 0, 1]))


def block(*groups, granularity=None):
    out = ld(1, b"".join(ld(1, s) for s in STRINGS)) + b"".join(ld(2, g) for g in groups)
    if granularity:
        out += vint(17, granularity) + vint(19, 1000) + vint(20, 2000 & ((1 << 64) - 1))
    return out


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


everything = block(DENSE + NODE, WAY, RELATION)
# The target reads a first byte of 0 as "a whole file follows" and 1 as "a PrimitiveBlock follows".
write("file-raw", b"\0" + frame("OSMHeader", raw_blob(HEADER)) + frame("OSMData", raw_blob(everything)))
write("file-zlib", b"\0" + frame("OSMHeader", zlib_blob(HEADER)) + frame("OSMData", zlib_blob(everything)))
write("file-two-blocks", b"\0" + frame("OSMHeader", raw_blob(HEADER)) + frame("OSMData", raw_blob(block(DENSE)))
      + frame("Unknown", b"skipped") + frame("OSMData", raw_blob(block(WAY, RELATION))))
write("block-everything", b"\1" + everything)
write("block-granularity", b"\1" + block(DENSE, granularity=1000))
