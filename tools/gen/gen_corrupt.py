#!/usr/bin/env python3
"""Generates the corrupt-file suite in fixtures/corrupt/ from valid files in testdata/.

Python 3 standard library only. The footer is rewritten with the small Thrift compact-protocol
codec below (a generic decoder to (field id, type, value) lists and an encoder that reproduces
the original bytes exactly), so every corruption is a precise edit of one value.

To keep the files small, each corrupt file starts from a "mini" copy of a testdata file: the
first two leaf columns with filters in the first three row groups are kept (their real data
pages and filters), everything else is dropped from the footer and the file, and the page index
pointers are removed. The mini copies are valid Parquet (pyarrow reads them) and are written
too, as `base_*.parquet`, so a reader can be checked against the uncorrupted bytes.

usage: tools/gen/gen_corrupt.py [--check | --dump FILE.parquet]
  (no option)  regenerate fixtures/corrupt/*.parquet, expected.json and README.md
  --check      regenerate in memory and fail if anything differs from what is committed
  --dump F     print the decoded footer of F
"""

from __future__ import annotations

import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTDATA = os.path.join(ROOT, "testdata")
OUT = os.path.join(ROOT, "fixtures", "corrupt")
LEGACY_BLOB = os.path.join(ROOT, "fixtures", "golden", "bloom_filter.bin")

# --------------------------------------------------------------------------------------------
# Thrift compact protocol
# --------------------------------------------------------------------------------------------

STOP, TRUE, FALSE, I8, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)


def uvarint(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if not x & 0x80:
            return r, i


def enc_uvarint(n: int) -> bytes:
    assert n >= 0
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def zigzag(n: int, bits: int) -> int:
    return ((n << 1) ^ (n >> (bits - 1))) & ((1 << bits) - 1)


def unzigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


class Struct:
    """A decoded struct: fields as [fid, ttype, value] in file order."""

    def __init__(self, fields=None):
        self.fields = fields if fields is not None else []

    def get(self, fid, default=None):
        for f in self.fields:
            if f[0] == fid:
                return f[2]
        return default

    def has(self, fid):
        return any(f[0] == fid for f in self.fields)

    def set(self, fid, ttype, value):
        for f in self.fields:
            if f[0] == fid:
                f[1], f[2] = ttype, value
                return
        self.fields.append([fid, ttype, value])
        self.fields.sort(key=lambda f: f[0])

    def remove(self, fid):
        self.fields = [f for f in self.fields if f[0] != fid]


def read_value(b: bytes, i: int, t: int):
    if t in (TRUE, FALSE):  # only inside containers: one byte
        return b[i] == 1, i + 1
    if t == I8:
        return struct.unpack_from("<b", b, i)[0], i + 1
    if t in (I16, I32, I64):
        n, i = uvarint(b, i)
        return unzigzag(n), i
    if t == DOUBLE:
        return struct.unpack_from("<d", b, i)[0], i + 8
    if t == BINARY:
        n, i = uvarint(b, i)
        return bytes(b[i : i + n]), i + n
    if t in (LIST, SET):
        h = b[i]
        i += 1
        n, et = h >> 4, h & 0x0F
        if n == 15:
            n, i = uvarint(b, i)
        items = []
        for _ in range(n):
            v, i = read_value(b, i, et)
            items.append(v)
        return (et, items), i
    if t == MAP:
        n, i = uvarint(b, i)
        if n == 0:
            return (0, 0, []), i
        kt, vt = b[i] >> 4, b[i] & 0x0F
        i += 1
        items = []
        for _ in range(n):
            k, i = read_value(b, i, kt)
            v, i = read_value(b, i, vt)
            items.append((k, v))
        return (kt, vt, items), i
    if t == STRUCT:
        return read_struct(b, i)
    raise ValueError(f"unknown compact type {t} at {i}")


def read_struct(b: bytes, i: int) -> tuple[Struct, int]:
    s = Struct()
    last = 0
    while True:
        h = b[i]
        i += 1
        t = h & 0x0F
        if t == STOP:
            return s, i
        delta = h >> 4
        if delta:
            fid = last + delta
        else:
            n, i = uvarint(b, i)
            fid = unzigzag(n)
        last = fid
        if t in (TRUE, FALSE):
            s.fields.append([fid, t, t == TRUE])
        else:
            v, i = read_value(b, i, t)
            s.fields.append([fid, t, v])


def write_value(t: int, v) -> bytes:
    if t in (TRUE, FALSE):
        return bytes([1 if v else 2])
    if t == I8:
        return struct.pack("<b", v)
    if t == I16:
        return enc_uvarint(zigzag(v, 16))
    if t == I32:
        return enc_uvarint(zigzag(v, 32))
    if t == I64:
        return enc_uvarint(zigzag(v, 64))
    if t == DOUBLE:
        return struct.pack("<d", v)
    if t == BINARY:
        return enc_uvarint(len(v)) + v
    if t in (LIST, SET):
        et, items = v
        head = bytes([(len(items) << 4) | et]) if len(items) < 15 else bytes([0xF0 | et]) + enc_uvarint(len(items))
        return head + b"".join(write_value(et, x) for x in items)
    if t == MAP:
        kt, vt, items = v
        if not items:
            return b"\x00"
        return enc_uvarint(len(items)) + bytes([(kt << 4) | vt]) + b"".join(
            write_value(kt, k) + write_value(vt, x) for k, x in items
        )
    if t == STRUCT:
        return write_struct(v)
    raise ValueError(f"unknown compact type {t}")


def field_header(fid: int, t: int, last: int) -> bytes:
    if 0 < fid - last <= 15:
        return bytes([((fid - last) << 4) | t])
    return bytes([t]) + enc_uvarint(zigzag(fid, 16))


def write_struct(s: Struct) -> bytes:
    out = bytearray()
    last = 0
    for fid, t, v in s.fields:
        if t in (TRUE, FALSE):
            out += field_header(fid, TRUE if v else FALSE, last)
        else:
            out += field_header(fid, t, last)
            out += write_value(t, v)
        last = fid
    out.append(STOP)
    return bytes(out)


def dump(v, indent=0):
    pad = "  " * indent
    if isinstance(v, Struct):
        for fid, t, x in v.fields:
            if isinstance(x, Struct) or (isinstance(x, tuple) and t in (LIST, SET)):
                print(f"{pad}{fid} ({t}):")
                dump(x, indent + 1)
            else:
                print(f"{pad}{fid} ({t}): {x!r}"[:160])
    elif isinstance(v, tuple) and len(v) == 2:
        for k, x in enumerate(v[1]):
            print(f"{pad}[{k}]")
            dump(x, indent + 1)
    else:
        print(f"{pad}{v!r}"[:160])


# --------------------------------------------------------------------------------------------
# Parquet files
# --------------------------------------------------------------------------------------------


def split_file(data: bytes) -> tuple[bytes, Struct, int]:
    """(the bytes before the footer, the decoded FileMetaData, the footer start)."""
    assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"
    n = struct.unpack_from("<I", data, len(data) - 8)[0]
    start = len(data) - 8 - n
    meta, end = read_struct(data, start)
    assert end == len(data) - 8, "trailing bytes in the footer"
    assert write_struct(meta) == data[start : len(data) - 8], "codec does not round-trip"
    return data[:start], meta, start


def join_file(body: bytes, meta: Struct) -> bytes:
    m = write_struct(meta)
    return body + m + struct.pack("<I", len(m)) + b"PAR1"


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--dump":
    _, m, _ = split_file(open(sys.argv[2], "rb").read())
    dump(m)
    sys.exit(0)


def filter_len(data: bytes, offset: int, length: int | None) -> int:
    """Header plus bitset of the filter at `offset` (from the footer or from its header)."""
    if length is not None:
        return length
    h, end = read_struct(data, offset)
    return end - offset + h.get(1)


class Mini:
    """A small valid copy of a testdata file: the first `ncols` leaf columns that carry filters.

    `regions` holds, in original file order, every kept byte region: ("data", rg, col, bytes)
    and ("filter", rg, col, bytes). `build` lays them out again after "PAR1" and rewrites the
    footer to match; `filters` may replace the bytes of some filters first.
    """

    def __init__(self, name: str, ncols: int = 2, nrg: int = 3):
        self.name = name
        data = open(os.path.join(TESTDATA, name), "rb").read()
        body, meta, self.src_footer = split_file(data)
        schema = meta.get(2)[1]
        root = schema[0]
        leaves = schema[1:]
        assert root.get(5) == len(leaves), "only flat schemas"
        rg0 = meta.get(4)[1][0].get(1)[1]
        keep = [i for i, c in enumerate(rg0) if c.get(3).has(14)][:ncols]
        et, rgs = meta.get(4)
        meta.set(4, LIST, (et, rgs[:nrg]))
        meta.set(3, I64, sum(rg.get(3) for rg in rgs[:nrg]))
        self.columns = [leaves[i].get(4).decode() for i in keep]
        self.has_length = rg0[keep[0]].get(3).has(15)
        regions = []
        for r, rg in enumerate(meta.get(4)[1]):
            chunks = rg.get(1)[1]
            for k, i in enumerate(keep):
                md = chunks[i].get(3)
                start = md.get(11) if md.has(11) else md.get(9)
                regions.append((start, "data", r, k, data[start : start + md.get(7)]))
                off = md.get(14)
                regions.append((off, "filter", r, k, data[off : off + filter_len(data, off, md.get(15))]))
        regions.sort(key=lambda x: x[0])
        self.regions = [x[1:] for x in regions]
        # The footer: kept leaves and chunks only, no page index, no Arrow schema.
        root.set(5, I32, len(keep))
        meta.set(2, LIST, (STRUCT, [root] + [leaves[i] for i in keep]))
        for rg in meta.get(4)[1]:
            chunks = rg.get(1)[1]
            rg.set(1, LIST, (STRUCT, [chunks[i] for i in keep]))
            rg.remove(4)  # sorting_columns
            for c in rg.get(1)[1]:
                for fid in (4, 5, 6, 7):  # offset and column index
                    c.remove(fid)
        meta.remove(5)  # key_value_metadata (the Arrow schema names every column)
        if meta.has(7):
            et, orders = meta.get(7)
            meta.set(7, LIST, (et, [orders[i] for i in keep]))
        self.meta_bytes = write_struct(meta)

    def build(self, filters=None, footer_edit=None, layout_edit=None) -> tuple[bytes, dict]:
        """The file bytes, and where everything went: {("data"|"filter", rg, col): (offset, len),
        "footer": offset}. `filters` maps (rg, col) to replacement filter bytes (the footer's
        bloom_filter_length follows them); `footer_edit(meta, where)` edits the footer last."""
        filters = filters or {}
        regions = list(self.regions)
        if layout_edit:
            regions = layout_edit(regions)
        body = bytearray(b"PAR1")
        where = {}
        for kind, r, k, b in regions:
            if kind == "filter" and (r, k) in filters:
                b = filters[(r, k)]
            where[(kind, r, k)] = (len(body), len(b))
            body += b
        meta, _ = read_struct(self.meta_bytes, 0)
        where["footer"] = len(body)
        for r, rg in enumerate(meta.get(4)[1]):
            total = 0
            for k, c in enumerate(rg.get(1)[1]):
                md = c.get(3)
                start, n = where[("data", r, k)]
                delta = start - (md.get(11) if md.has(11) else md.get(9))
                for fid in (9, 10, 11):
                    if md.has(fid):
                        md.set(fid, I64, md.get(fid) + delta)
                if c.get(2):
                    c.set(2, I64, c.get(2) + delta)
                foff, flen = where[("filter", r, k)]
                md.set(14, I64, foff)
                if md.has(15):
                    md.set(15, I32, flen)
                total += md.get(7)
                if k == 0:
                    if rg.has(5):
                        rg.set(5, I64, start)
            if rg.has(6):
                rg.set(6, I64, total)
            rg.set(2, I64, sum(c.get(3).get(6) for c in rg.get(1)[1]))
        if footer_edit:
            footer_edit(meta, where)
        return join_file(bytes(body), meta), where


def chunk(meta: Struct, rg: int, col: int) -> Struct:
    """ColumnMetaData of a chunk."""
    return meta.get(4)[1][rg].get(1)[1][col].get(3)



# --------------------------------------------------------------------------------------------
# Filters: headers built by hand, and a from-scratch XXH64 + block test to choose probe values
# --------------------------------------------------------------------------------------------

M64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                      9650029242287828579, 2870177450012600261)
SALT = [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31]


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, inp):
    return (_rotl((acc + inp * P2) & M64, 31) * P1) & M64


def xxh64(b: bytes) -> int:
    """XXH64, seed 0, for inputs shorter than 32 bytes (all this script hashes)."""
    assert len(b) < 32
    n, i = len(b), 0
    h = (P5 + n) & M64
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", b, i)[0]), 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((struct.unpack_from("<I", b, i)[0] * P1) & M64), 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h = (_rotl(h ^ ((b[i] * P5) & M64), 11) * P1) & M64
        i += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    return h ^ (h >> 32)


assert xxh64(b"") == 0xEF46DB3751D8E999


def maybe_in(bitset: bytes, value: bytes) -> bool:
    h = xxh64(value)
    z = len(bitset) // 32
    block = ((h >> 32) * z) >> 32
    lo = h & 0xFFFFFFFF
    for i in range(8):
        word = struct.unpack_from("<I", bitset, block * 32 + 4 * i)[0]
        if not word >> (((lo * SALT[i]) & 0xFFFFFFFF) >> 27) & 1:
            return False
    return True


def union(member: int | list[int]) -> bytes:
    """A union field's struct holding empty-struct members with these ids."""
    ids = member if isinstance(member, list) else [member]
    out = bytearray()
    last = 0
    for m in ids:
        out += field_header(m, STRUCT, last) + b"\x00"
        last = m
    return bytes(out) + b"\x00"


def header(num_bytes=None, algorithm=1, hash=1, compression=1, extra=b"", nb_type=I32) -> bytes:
    """A BloomFilterHeader; None leaves a field out; `extra` (raw fields, written with long-form
    field headers) goes after the last field."""
    out = bytearray()
    if num_bytes is not None:
        out += bytes([0x10 | nb_type]) + write_value(nb_type, num_bytes)
    last = 1 if num_bytes is not None else 0
    for fid, m in ((2, algorithm), (3, hash), (4, compression)):
        if m is None:
            continue
        out += field_header(fid, STRUCT, last) + union(m)
        last = fid
    return bytes(out) + extra + b"\x00"


def long_field(fid: int, t: int) -> bytes:
    return bytes([t]) + enc_uvarint(zigzag(fid, 16))


assert header(1024) == bytes([0x15, 0x80, 0x10, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0x1C, 0x1C, 0, 0, 0])


# --------------------------------------------------------------------------------------------
# The suite
# --------------------------------------------------------------------------------------------

BASES = {
    # bloom_filter_length present; filters after all row groups (pyarrow)
    "P": ("pa_ints.parquet", "base_pa_ints.parquet"),
    # no bloom_filter_length; a filter after each row group (arrow-rs)
    "N": ("arrowrs_temporal_nolength.parquet", "base_arrowrs_temporal_nolength.parquet"),
}


def value_text(kind: str, v: int) -> str:
    if kind == "date":
        import datetime

        return (datetime.date(1970, 1, 1) + datetime.timedelta(days=v)).isoformat()
    if kind == "time_ms":
        return f"{v // 3600000:02}:{v // 60000 % 60:02}:{v // 1000 % 60:02}.{v % 1000:03}"
    return str(v)


def probe_values(mini: Mini, col: int) -> list[str]:
    """Values to probe in a column: one that may be present in each row group (by the filter
    bits), then one absent everywhere; the first found, scanning from the column's minimum."""
    bitsets = []
    for kind, r, k, b in mini.regions:
        if kind == "filter" and k == col:
            h, used = read_struct(b, 0)
            bitsets.append(b[used:])
    meta, _ = read_struct(mini.meta_bytes, 0)
    stats = chunk(meta, 0, col).get(12)
    lo = struct.unpack("<i", stats.get(6) or stats.get(2))[0]
    name = mini.columns[col]
    kind = name if name in ("date", "time_ms") else "int"
    hi = 127 if name == "i8" else lo + 100_000
    out = []
    cands = list(range(lo, hi + 1))
    for bits in bitsets:
        for v in cands:
            if maybe_in(bits, struct.pack("<i", v)) and value_text(kind, v) not in out:
                out.append(value_text(kind, v))
                break
    for v in cands:
        if not any(maybe_in(b, struct.pack("<i", v)) for b in bitsets):
            out.append(value_text(kind, v))
            break
    return out


def original(mini: Mini, rg: int, col: int) -> bytes:
    for kind, r, k, b in mini.regions:
        if kind == "filter" and (r, k) == (rg, col):
            return b
    raise KeyError((rg, col))


def bitset_of(mini: Mini, rg: int, col: int) -> bytes:
    b = original(mini, rg, col)
    _, used = read_struct(b, 0)
    return b[used:]


def set_md(rg, col, fid, ttype, value):
    def edit(meta, where):
        md = chunk(meta, rg, col)
        if value is None:
            md.remove(fid)
        else:
            md.set(fid, ttype, value(where) if callable(value) else value)

    return edit


def edits(*fs):
    def edit(meta, where):
        for f in fs:
            f(meta, where)

    return edit


def cases():
    """(name, base, description, build kwargs, expectation) for every corrupt file.

    Expectations: `invalid` maps "rg" to a text the probe reason contains (the row group answers
    "unknown" for every value); `forced` maps "rg" to the answer every value gets (valid
    filters with all bits clear or set); every other row group answers exactly as in the base
    file. `problems` lists [rg, column, text] that `inspect` must report; every other chunk
    must report no problem. `unreadable` files make probe and inspect exit 2 with the text on
    stderr."""
    P, N = "P", "N"
    out = []

    def case(name, base, desc, expect, col=0, **build):
        out.append((name, base, desc, build, dict(expect, column=col)))

    def bad(reason, problem=None, rg=1, col=0):
        return {"invalid": {str(rg): reason}, "problems": [[rg, col, problem or reason]]}

    # num_bytes ----------------------------------------------------------------------------
    for base in (P, N):
        sfx = "" if base == P else "_nolength"
        case(f"num_bytes_zero{sfx}", base, "num_bytes 0 and no bitset",
             bad("bitset size 0 is not a multiple of 32"), filters={(1, 0): header(0)})
        case(f"num_bytes_negative{sfx}", base, "num_bytes -64 in front of the 64-byte bitset",
             bad("bitset size -64 is not a multiple of 32"),
             filters={(1, 0): "neg"})
        case(f"num_bytes_2gib{sfx}", base,
             "num_bytes 2147483616 (2 GiB - 32, a multiple of 32 above 128 MiB) in a 10 KB file",
             bad("bitset size 2147483616 is not a multiple of 32"), filters={(1, 0): "2g"})
        case(f"num_bytes_128mib{sfx}", base,
             "num_bytes 134217728 (exactly 128 MiB, a legal size) but the file is 10 KB: the "
             "filter would run past the footer",
             bad("runs past the data area", "the bitset runs past the data area"),
             filters={(1, 0): "128m"})
    case("num_bytes_not_multiple_of_32", P, "num_bytes 48 with 48 bitset bytes",
         bad("bitset size 48 is not a multiple of 32"), filters={(1, 0): "48"})
    case("num_bytes_over_128mib", P, "num_bytes 128 MiB + 32",
         bad("bitset size 134217760 is not a multiple of 32"), filters={(1, 0): "128m+32"})
    case("num_bytes_128mib_length_claims_it", P,
         "num_bytes 128 MiB and bloom_filter_length 128 MiB + 19, in a 10 KB file",
         bad("runs past the data area (footer at", "runs past the data area"),
         filters={(1, 0): "128m"}, footer_edit=set_md(1, 0, 15, I32, 128 * 1024 * 1024 + 19))

    # offsets ------------------------------------------------------------------------------
    for base in (P, N):
        sfx = "" if base == P else "_nolength"
        case(f"offset_negative{sfx}", base, "bloom_filter_offset -5",
             bad("bloom_filter_offset -5 is outside the data area", "offset -5 is outside the data area"),
             footer_edit=set_md(1, 0, 14, I64, -5))
        case(f"offset_in_data_pages{sfx}", base,
             "bloom_filter_offset at the first page header of the chunk's own data",
             bad("lies inside the data pages of", "Bloom filter header"),
             footer_edit=set_md(1, 0, 14, I64, lambda w: w[("data", 1, 0)][0]))
    case("offset_zero", P, "bloom_filter_offset 0 (the PAR1 magic)",
         bad("bloom_filter_offset 0 is outside the data area", "offset 0 is outside the data area"),
         footer_edit=set_md(1, 0, 14, I64, 0))
    case("offset_past_end", P, "bloom_filter_offset 1000000 in a 10 KB file",
         bad("bloom_filter_offset 1000000 is outside the data area", "offset 1000000 is outside"),
         footer_edit=set_md(1, 0, 14, I64, 1_000_000))
    case("offset_huge", P, "bloom_filter_offset i64::MAX",
         bad("is outside the data area", "is outside the data area"),
         footer_edit=set_md(1, 0, 14, I64, (1 << 63) - 1))
    case("offset_in_footer", P, "bloom_filter_offset 2 bytes into the footer",
         bad("is outside the data area", "is outside the data area"),
         footer_edit=set_md(1, 0, 14, I64, lambda w: w["footer"] + 2))
    case("offset_shared_by_two_columns", P,
         "i16's filter in row group 1 points at i8's filter (offset and length): a valid "
         "filter, of another column. The footer names one offset for two chunks, so neither "
         "filter can be trusted",
         {"invalid": {"1": "is also given for another column chunk's filter"},
          "problems": [[1, 1, "overlaps the Bloom filter of `i8` in row group 1"],
                       [1, 0, "overlaps the Bloom filter of `i16` in row group 1"]]},
         col=1,
         footer_edit=edits(set_md(1, 1, 14, I64, lambda w: w[("filter", 1, 0)][0]),
                           set_md(1, 1, 15, I32, lambda w: w[("filter", 1, 0)][1])))
    case("filter_inside_data_pages", P,
         "a valid filter placed right after its chunk's pages, with total_compressed_size "
         "grown to cover it: the footer says these bytes are data",
         {"invalid": {"1": "lies inside the data pages of `i8` in row group 1"},
          "problems": [[1, 0, "overlaps the data pages of `i8` in row group 1"]]},
         layout_edit="filter_after_data",
         footer_edit=set_md(1, 0, 7, I64, lambda w: w[("data", 1, 0)][1] + w[("filter", 1, 0)][1]))

    case("negative_compressed_size", P,
         "total_compressed_size -5 for i8 in row group 1 (the filter is fine)", {},
         footer_edit=set_md(1, 0, 7, I64, -5))
    case("negative_dictionary_page_offset", P,
         "dictionary_page_offset -7 for i8 in row group 1 (the filter is fine)", {},
         footer_edit=set_md(1, 0, 11, I64, -7))
    case("negative_data_page_offset", P,
         "data_page_offset -1 and no dictionary_page_offset for i8 in row group 1 (the filter is fine)",
         {}, footer_edit=edits(set_md(1, 0, 11, I64, None), set_md(1, 0, 9, I64, -1)))

    # lengths ------------------------------------------------------------------------------
    for n, text in ((-80, "bloom_filter_length -80 is not positive"),
                    (0, "bloom_filter_length 0 is not positive")):
        case(f"length_{'negative' if n < 0 else 'zero'}", P, f"bloom_filter_length {n}",
             bad(text), footer_edit=set_md(1, 0, 15, I32, n))
    case("length_past_end", P, "bloom_filter_length 1000000",
         bad("bloom_filter_length 1000000 at offset", "bloom_filter_length 1000000 runs past the data area"),
         footer_edit=set_md(1, 0, 15, I32, 1_000_000))
    for n, what in ((5, "shorter than the header"), (112, "32 more than the header announces"),
                    (48, "32 less than the header announces")):
        case(f"length_{n}", P, f"bloom_filter_length {n}: {what} (16 + 64)",
             bad(f"bloom_filter_length {n} disagrees with the header"),
             footer_edit=set_md(1, 0, 15, I32, n))

    # truncated bitsets (the last filter of the file, cut short by the footer) -------------
    case("bitset_truncated", P,
         "the last filter (i16, row group 2) keeps 128 of its 256 bitset bytes; "
         "bloom_filter_length still says 272",
         bad("bloom_filter_length 272 at offset", "bloom_filter_length 272 runs past", rg=2, col=1),
         col=1, filters={(2, 1): "half"}, footer_edit=set_md(2, 1, 15, I32, 272))
    case("bitset_truncated_length_matches", P,
         "the last filter keeps 128 of its 256 bitset bytes and bloom_filter_length says 144",
         bad("runs past the data area", "the bitset runs past the data area", rg=2, col=1),
         col=1, filters={(2, 1): "half"})
    case("bitset_truncated_nolength", N,
         "the last filter (time_ms, row group 2) keeps 100 of its 256 bitset bytes",
         bad("runs past the data area", "the bitset runs past the data area", rg=2, col=1),
         col=1, filters={(2, 1): "cut100"})

    # union members ------------------------------------------------------------------------
    for field in ("algorithm", "hash", "compression"):
        case(f"unknown_{field}", P, f"{field} union member 2 (not defined by parquet.thrift)",
             bad(f"unsupported Bloom filter {field}: union member 2"),
             filters={(1, 0): ("hdr", {field: 2})})
    case("unknown_algorithm_nolength", N, "algorithm union member 2",
         bad("unsupported Bloom filter algorithm: union member 2"),
         filters={(1, 0): ("hdr", {"algorithm": 2})})
    case("hash_union_empty", P, "hash union with no member",
         bad("field `hash` must hold exactly one union member"), filters={(1, 0): ("hdr", {"hash": []})})
    case("hash_union_two_members", P, "hash union with member 1 twice",
         bad("field `hash` must hold exactly one union member"),
         filters={(1, 0): ("hdr", {"hash": [1, 1]})})

    # malformed Thrift ---------------------------------------------------------------------
    case("num_bytes_wrong_type", P, "num_bytes written as i64",
         bad("field `num_bytes` of the Bloom filter header has Thrift type"),
         filters={(1, 0): ("hdr", {"nb_type": I64})})
    case("algorithm_wrong_type", P, "algorithm written as an i32",
         bad("field `algorithm` of the Bloom filter header has Thrift type"), filters={(1, 0): "alg_i32"})
    case("missing_num_bytes", P, "no num_bytes field",
         bad("the Bloom filter header has no `num_bytes` field"), filters={(1, 0): ("hdr", {"num_bytes": None})})
    case("missing_hash", P, "no hash field",
         bad("the Bloom filter header has no `hash` field"), filters={(1, 0): ("hdr", {"hash": None})})
    case("deep_nesting", P, "an unknown field 5 holding structs nested 300 deep",
         bad("Bloom filter header"), filters={(1, 0): "deep"})
    case("deep_nesting_nolength", N, "an unknown field 5 holding structs nested 300 deep",
         bad("Bloom filter header"), filters={(1, 0): "deep"})
    case("oversized_varint", P, "num_bytes as an 11-byte varint",
         bad("Bloom filter header"), filters={(1, 0): "longvarint"})
    case("huge_binary_claim", P, "an unknown binary field 5 claiming 4 GiB",
         bad("Bloom filter header"), filters={(1, 0): "bigbinary"})
    case("garbage_header", P, "64 bytes of pseudo-random garbage then the bitset",
         bad("Bloom filter header"), filters={(1, 0): "garbage"})
    case("truncated_header_nolength", N,
         "the last filter is cut 8 bytes into its header",
         bad("the Bloom filter header is truncated", rg=2, col=1), col=1, filters={(2, 1): "cut_header"})
    for base in (P, N):
        sfx = "" if base == P else "_nolength"
        case(f"unknown_field_long_header{sfx}", base,
             "a valid header with an unknown 40-byte binary field 5 (57 bytes: longer than the "
             "32-byte first read): valid, answers as the base file",
             {}, filters={(1, 0): "extra"})
    case("legacy_murmur3", P,
         "the legacy Murmur3 filter (fixtures/golden/bloom_filter.bin, 1036 bytes) spliced in",
         bad("the Bloom filter header has no `num_bytes` field"), filters={(1, 0): "legacy"})
    case("legacy_murmur3_nolength", N, "the legacy Murmur3 filter spliced in",
         bad("the Bloom filter header has no `num_bytes` field"), filters={(1, 0): "legacy"})

    # valid extremes -----------------------------------------------------------------------
    case("bitset_all_zero", P, "row group 1's bitset all zero: every value absent there",
         {"forced": {"1": "absent"}, "problems": [[1, 0, "no bit is set"]]},
         filters={(1, 0): "zero"})
    case("bitset_all_ones", P, "row group 1's bitset all ones: every value maybe there",
         {"forced": {"1": "maybe"}}, filters={(1, 0): "ones"})
    case("bitset_all_zero_nolength", N, "all-zero bitset",
         {"forced": {"1": "absent"}, "problems": [[1, 0, "no bit is set"]]},
         filters={(1, 0): "zero"})
    case("bitset_96_bytes_all_ones", P,
         "a 3-block (96-byte) all-ones filter: legal, not a power of two",
         {"forced": {"1": "maybe"}, "problems": [[1, 0, "bitset size 96 is not a power of two"]]},
         filters={(1, 0): "ones96"})
    case("every_row_group_bad", P,
         "i8's three filters broken three ways; i16 untouched",
         {"invalid": {"0": "bitset size 0", "1": "unsupported Bloom filter hash",
                      "2": "bloom_filter_offset -1 is outside"},
          "problems": [[0, 0, "bitset size 0"], [1, 0, "unsupported Bloom filter hash"],
                       [2, 0, "offset -1 is outside"]]},
         filters={(0, 0): header(0), (1, 0): ("hdr", {"hash": 3})},
         footer_edit=set_md(2, 0, 14, I64, -1))
    return out


def filter_bytes(mini: Mini, rg: int, col: int, spec) -> bytes:
    bits = bitset_of(mini, rg, col)
    n = len(bits)
    if isinstance(spec, bytes):
        return spec
    if isinstance(spec, tuple):
        kw = {"num_bytes": n} | spec[1]
        return header(**kw) + bits
    return {
        "neg": lambda: header(-64) + bits,
        "2g": lambda: header(2147483616) + bits,
        "128m": lambda: header(128 * 1024 * 1024) + bits,
        "128m+32": lambda: header(128 * 1024 * 1024 + 32) + bits,
        "48": lambda: header(48) + bits[:48],
        "half": lambda: header(n) + bits[: n // 2],
        "cut100": lambda: header(n) + bits[:100],
        "cut_header": lambda: header(n)[:8],
        "alg_i32": lambda: bytes([0x15]) + write_value(I32, n) + bytes([0x15, 0x02])
        + field_header(3, STRUCT, 2) + union(1) + field_header(4, STRUCT, 3) + union(1) + b"\x00" + bits,
        "deep": lambda: header(n, extra=long_field(5, STRUCT) + b"\x5c" * 299 + b"\x00" * 300) + bits,
        "longvarint": lambda: b"\x15" + b"\x80" * 10 + b"\x01" + header(n)[3:] + bits,
        "bigbinary": lambda: header(n, extra=long_field(5, BINARY) + b"\xff\xff\xff\xff\x0f") + bits,
        "garbage": lambda: bytes((i * 167 + 13) % 251 for i in range(64)) + bits,
        "extra": lambda: header(n, extra=long_field(5, BINARY) + enc_uvarint(40) + b"x" * 40) + bits,
        "legacy": lambda: open(LEGACY_BLOB, "rb").read(),
        "zero": lambda: header(n) + bytes(n),
        "ones": lambda: header(n) + b"\xff" * n,
        "ones96": lambda: header(96) + b"\xff" * 96,
    }[spec]()


def unreadable(base_bytes: bytes) -> list[tuple[str, str, bytes, str]]:
    """(name, description, bytes, stderr text) of files no reader can open."""
    n = struct.unpack_from("<I", base_bytes, len(base_bytes) - 8)[0]
    fs = len(base_bytes) - 8 - n
    meta = base_bytes[fs:-8]
    tail = lambda m: m + struct.pack("<I", len(m)) + b"PAR1"
    body = base_bytes[:fs]
    # a footer whose schema list claims 2^28 elements
    huge_list = bytearray(meta)
    assert huge_list[:3] == b"\x15\x04\x19"
    huge_list = bytes(huge_list[:3]) + bytes([0xFC]) + enc_uvarint(1 << 28) + bytes(huge_list[4:])
    # the schema root claims 2^30 children (parquet 60.1 reserved memory for all of them)
    many, _ = read_struct(meta, 0)
    many.get(2)[1][0].set(5, I32, 1 << 30)
    many = write_struct(many)
    # the root's child count as an 11-byte varint: malformed Thrift that parquet 60.1 reads anyway
    # (it wraps the shift), so no reading of the claim can be trusted
    marked, _ = read_struct(meta, 0)
    marked.get(2)[1][0].set(5, I32, 0x5A5A5)
    marked = write_struct(marked)
    mark = enc_uvarint(zigzag(0x5A5A5, 32))
    assert marked.count(mark) == 1
    overlong = marked.replace(mark, bytes([0x84] + [0x80] * 9 + [0x00]))
    return [
        ("empty", "0 bytes", b"", "shorter than the smallest Parquet file"),
        ("too_short", "PAR1PAR1 (8 bytes)", b"PAR1PAR1", "shorter than the smallest Parquet file"),
        ("no_magic", "the last 4 bytes are not PAR1", base_bytes[:-4] + b"PAR0", "does not end with PAR1"),
        ("file_truncated", "the first 60% of the file", base_bytes[: len(base_bytes) * 6 // 10],
         "does not end with PAR1"),
        ("footer_length_too_big", "the footer length says 1 GiB",
         base_bytes[:-8] + struct.pack("<I", 1 << 30) + b"PAR1", "exceeds the file size"),
        ("footer_truncated", "only the first half of the footer, with a matching length",
         body + tail(meta[: len(meta) // 2]), "cannot read the Parquet footer"),
        ("footer_garbage", "the footer's bytes replaced by pseudo-random garbage",
         body + tail(bytes((i * 193 + 7) % 256 for i in range(len(meta)))), "cannot read the Parquet footer"),
        ("footer_huge_list", "the footer's schema list claims 2^28 elements",
         body + tail(huge_list), "cannot read the Parquet footer"),
        ("footer_schema_children", "the footer's schema root claims 2^30 children",
         body + tail(many), "cannot read the Parquet footer"),
        ("footer_schema_varint", "the schema root's child count is an 11-byte varint",
         body + tail(overlong), "cannot read the Parquet footer"),
        ("encrypted", "PARE magic (an encrypted footer)", base_bytes[:-4] + b"PARE", "encrypted"),
    ]


def generate() -> dict[str, bytes]:
    files = {}
    expected = {"_doc": " ".join(cases.__doc__.split("\n\n", 1)[1].split()), "bases": {}, "files": {}}
    minis = {}
    for key, (src, base_name) in BASES.items():
        m = Mini(src)
        minis[key] = m
        b, _ = m.build()
        files[base_name] = b
        expected["bases"][base_name] = {
            "from": f"testdata/{src}",
            "columns": m.columns,
            "bloom_filter_length": m.has_length,
            "values": {c: probe_values(m, i) for i, c in enumerate(m.columns)},
        }
    for name, key, desc, build, expect in cases():
        m = minis[key]
        filters = {k: filter_bytes(m, k[0], k[1], v) for k, v in build.get("filters", {}).items()}
        layout = None
        if build.get("layout_edit") == "filter_after_data":
            def layout(regions):
                f = [x for x in regions if x[:3] == ("filter", 1, 0)]
                rest = [x for x in regions if x[:3] != ("filter", 1, 0)]
                i = rest.index(next(x for x in rest if x[:3] == ("data", 1, 0)))
                return rest[: i + 1] + f + rest[i + 1 :]
        b, _ = m.build(filters=filters, footer_edit=build.get("footer_edit"), layout_edit=layout)
        fname = f"{name}.parquet"
        files[fname] = b
        col = m.columns[expect.pop("column")]
        e = {"description": desc, "base": BASES[key][1], "column": col}
        e["invalid"] = expect.get("invalid", {})
        e["forced"] = expect.get("forced", {})
        e["foreign"] = expect.get("foreign", [])
        e["problems"] = [[rg, m.columns[c], text] for rg, c, text in expect.get("problems", [])]
        expected["files"][fname] = e
    for name, desc, b, text in unreadable(files[BASES["P"][1]]):
        fname = f"{name}.parquet"
        files[fname] = b
        expected["files"][fname] = {"description": desc, "unreadable": text}
    files["expected.json"] = (json.dumps(expected, indent=1, sort_keys=True) + "\n").encode()
    files["README.md"] = readme(expected, files).encode()
    return files


README_HEAD = """# Corrupt Parquet files

Hostile input for `sbbf probe` and `sbbf inspect`: each file breaks one thing about a Bloom
filter (or the whole file), and `expected.json` says what a reader must answer. The test
`crates/sbbf-cli/tests/cli/corrupt.rs` runs the built binary on every file and checks:

- a bad filter makes its row group `"filter": "invalid"` with a reason, and every value in that
  row group answers `unknown` (never `absent`);
- every other row group answers exactly as in the uncorrupted base file;
- `inspect --format json` names each problem on the chunk it belongs to, and no problem on
  healthy chunks;
- unreadable files exit with status 2 and a clear message on stderr;
- nothing panics (no `panicked` on stderr, exit status never 101 or a signal), in JSON and in
  text output;
- under a 64 MiB address-space limit (`ulimit -v`), files whose headers or footers claim 2 GiB,
  128 MiB or 2^28 elements answer the same: a claim costs nothing.

## Regenerating

    python3 tools/gen/gen_corrupt.py          # rewrites this directory (standard library only)
    python3 tools/gen/gen_corrupt.py --check  # fails if anything here is out of date

The generator decodes each source footer with its own Thrift compact-protocol codec (checked to
re-encode every testdata footer byte for byte), and builds every file from a small copy of a
testdata file:

- `base_pa_ints.parquet`: `testdata/pa_ints.parquet` (pyarrow; `bloom_filter_length` present;
  filters after all row groups), columns `i8`, `i16`, first 3 row groups;
- `base_arrowrs_temporal_nolength.parquet`: `testdata/arrowrs_temporal_nolength.parquet`
  (arrow-rs; no `bloom_filter_length`; a filter after each row group), columns `date`,
  `time_ms`, first 3 row groups.

The copies keep their real data pages and filters (pyarrow reads them back equal to the source
rows); only the other column chunks, the page index pointers and the Arrow schema are dropped.
Corruptions replace one filter's bytes (the layout and the footer's offsets follow) or edit one
footer value. Unless noted, the broken filter is the first column's, in row group 1.
Probe values (in `expected.json` under `bases`) were chosen from the filter bits with the
generator's own XXH64: one value that may be present in each row group, then one absent
everywhere.

A filter's bytes alone cannot show that they belong to another column: a footer that points a
chunk at another chunk's valid filter (`offset_shared_by_two_columns`) or into data pages
(`filter_inside_data_pages`) is caught by checking the offset against the rest of the footer.

## Files

| file | what is wrong | probe | inspect |
| --- | --- | --- | --- |
"""


def readme(expected, files) -> str:
    rows = []
    for name, b in sorted(expected["bases"].items()):
        rows.append(f"| `{name}` | nothing: the base, from `{b['from']}` | every filter present | no problem |")
    for name, e in sorted(expected["files"].items()):
        size = len(files[name])
        if "unreadable" in e:
            rows.append(f"| `{name}` ({size} B) | {e['description']} | exit 2: {e['unreadable']} | exit 2 |")
            continue
        probe = []
        for rg, why in sorted(e["invalid"].items()):
            probe.append(f"rg {rg} unknown: {why}")
        for rg, ans in sorted(e["forced"].items()):
            probe.append(f"rg {rg} all {ans}")
        for rg in e["foreign"]:
            probe.append(f"rg {rg} present (foreign bits)")
        probe.append("others as base")
        insp = "; ".join(f"rg {r} `{c}`: {t}" for r, c, t in e["problems"]) or "no problem"
        rows.append(f"| `{name}` ({size} B) | `{e['column']}`: {e['description']} | {'; '.join(probe)} | {insp} |")
    return README_HEAD + "\n".join(r.replace("\n", " ") for r in rows) + "\n"


def main():
    files = generate()
    if sys.argv[1:] == ["--check"]:
        bad = [n for n, b in files.items() if not os.path.exists(os.path.join(OUT, n))
               or open(os.path.join(OUT, n), "rb").read() != b]
        if bad:
            sys.exit(f"out of date: {bad}")
        print(f"{len(files)} files up to date")
        return
    os.makedirs(OUT, exist_ok=True)
    for n, b in files.items():
        with open(os.path.join(OUT, n), "wb") as f:
            f.write(b)
    print(f"wrote {len(files)} files to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__" and sys.argv[1:2] != ["--dump"]:
    main()
