"""Independent re-check of fixtures/expected against the filter bits, in pure Python.

For every row with a filter: read the BloomFilterHeader (Thrift compact) at the chunk's
`bloom_filter_offset` (from `arrowrs-oracle dump`), hash `plain_hex` with a from-scratch XXH64
and test the 8 bits of the split-block filter. The answer must equal `arrowrs_says_maybe`.
This shares no code with arrow-rs, parquet-java or our crates.

usage: verify_bits.py [EXPECTED.jsonl.gz ...]   (default: all of fixtures/expected)
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys

from common import EXPECTED, ORACLE_BIN, TESTDATA

M = (1 << 64) - 1
P1, P2, P3, P4, P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                      9650029242287828579, 2870177450012600261)
SALT = [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31]


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, inp):
    return (_rotl((acc + inp * P2) & M, 31) * P1) & M


def xxh64(b: bytes, seed: int = 0) -> int:
    n, i = len(b), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed, (seed - P1) & M]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], struct.unpack_from("<Q", b, i + 8 * k)[0])
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for x in v:
            h = ((h ^ _round(0, x)) * P1 + P4) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", b, i)[0]), 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((struct.unpack_from("<I", b, i)[0] * P1) & M), 23) * P2 + P3) & M
        i += 4
    while i < n:
        h = (_rotl(h ^ ((b[i] * P5) & M), 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    return h ^ (h >> 32)


assert xxh64(b"") == 0xEF46DB3751D8E999


def _uvarint(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if not x & 0x80:
            return r, i


def _skip_struct(b, i, out=None, depth=0):
    """Skip a compact-protocol struct starting at i; record top-level i32 fields and the ids
    of union members (the single field of each nested struct) in `out`."""
    last = 0
    while True:
        h = b[i]
        i += 1
        if h == 0:
            return i
        t, d = h & 0x0F, h >> 4
        if d:
            fid = last + d
        else:
            z, i = _uvarint(b, i)
            fid = (z >> 1) ^ -(z & 1)
        last = fid
        if t in (1, 2):
            continue
        if t == 3:
            i += 1
        elif t in (4, 5, 6):
            z, i = _uvarint(b, i)
            if out is not None and depth == 0:
                out[fid] = (z >> 1) ^ -(z & 1)
        elif t == 7:
            i += 8
        elif t == 8:
            n, i = _uvarint(b, i)
            i += n
        elif t == 12:
            sub = {}
            j = i
            i = _skip_struct(b, i, sub, depth + 1)
            if out is not None and depth == 0:
                # union member id = id of the first field inside
                hh = b[j]
                out[("union", fid)] = (hh >> 4) if hh else None
        else:
            raise ValueError(f"unsupported thrift type {t}")


def read_filter(data: bytes, off: int) -> bytes:
    hdr = {}
    end = _skip_struct(data, off, hdr)
    nbytes = hdr[1]
    assert hdr.get(("union", 2)) == 1 and hdr.get(("union", 3)) == 1 and hdr.get(("union", 4)) == 1, hdr
    assert nbytes % 32 == 0 and 32 <= nbytes <= 128 << 20
    return data[end:end + nbytes]


def maybe(bits: bytes, h: int) -> bool:
    z = len(bits) // 32
    blk = ((h >> 32) * z) >> 32
    lo = h & 0xFFFFFFFF
    for k in range(8):
        w = struct.unpack_from("<I", bits, blk * 32 + 4 * k)[0]
        if not (w >> (((lo * SALT[k]) & 0xFFFFFFFF) >> 27)) & 1:
            return False
    return True


def verify(path) -> tuple[int, int]:
    rows = [json.loads(x) for x in gzip.open(path, "rt")]
    if not rows:
        return 0, 0
    pq = TESTDATA / rows[0]["file"]
    data = pq.read_bytes()
    dump = subprocess.run([str(ORACLE_BIN), "dump", str(pq)], check=True, capture_output=True, text=True).stdout
    offs = {}
    for line in dump.splitlines()[1:]:
        c = json.loads(line)
        offs[(c["column"], c["row_group"])] = c["bloom_filter_offset"]
    filters, n, bad = {}, 0, 0
    for r in rows:
        if not r["has_bloom_filter"]:
            continue
        key = (r["column"], r["row_group"])
        if key not in filters:
            filters[key] = read_filter(data, offs[key])
        n += 1
        if maybe(filters[key], xxh64(bytes.fromhex(r["plain_hex"]))) != r["arrowrs_says_maybe"]:
            bad += 1
            if bad <= 5:
                print("MISMATCH", r)
    return n, bad


if __name__ == "__main__":
    paths = sys.argv[1:] or sorted(EXPECTED.glob("*.jsonl.gz"))
    total_bad = 0
    for p in paths:
        n, bad = verify(p)
        total_bad += bad
        print(f"{str(p).split('/')[-1]:40s} rows with a filter {n:6d}  mismatches {bad}")
    if total_bad:
        sys.exit(f"{total_bad} mismatches between the filter bits and arrowrs_says_maybe")
    print("verify_bits: ok (pure-Python XXH64 + SBBF agrees with arrowrs_says_maybe on every row)")
