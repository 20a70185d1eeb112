#!/usr/bin/env python3
"""Writes the committed seed corpora in fuzz/corpus/<target>/ (standard library only).

Seeds: headers and filters cut from fixtures/corrupt (made by tools/gen/gen_corrupt.py) and the
golden files, value strings in every syntax `encode_text` reads, and small Parquet files.
"""

import hashlib
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "gen"))
import gen_corrupt as g  # noqa: E402

CORPUS = os.path.join(ROOT, "fuzz", "corpus")
CORRUPT = os.path.join(ROOT, "fixtures", "corrupt")


def write(target, data: bytes):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def filters_of(path):
    """Every filter region (header + bitset, as far as the footer's data area allows)."""
    data = open(path, "rb").read()
    try:
        _, meta, footer = g.split_file(data)
    except Exception:
        return []
    out = []
    for rg in meta.get(4)[1]:
        for c in rg.get(1)[1]:
            md = c.get(3)
            off = md.get(14)
            if off is not None and 0 <= off < footer:
                out.append(data[off : min(footer, off + (md.get(15) or 1100), off + 1100)])
    return out


def main():
    # header: the standard encodings, every corrupt file's broken filter header, legacy blob
    for n in (32, 64, 1024, 1 << 20, 128 << 20, 0, -32, 48, 2147483616):
        write("header", g.header(n))
    seen = set()
    for name in sorted(os.listdir(CORRUPT)):
        if name.endswith(".parquet"):
            for f in filters_of(os.path.join(CORRUPT, name)):
                head = f[:64]
                if head not in seen:
                    seen.add(head)
                    write("header", head)
    write("header", open(os.path.join(ROOT, "fixtures", "golden", "bloom_filter.bin"), "rb").read()[:64])

    # bitset: 8 bytes of hash, then a bitset
    h = struct.pack("<Q", g.xxh64(b"hello"))
    for bits in (bytes(32), b"\xff" * 32, b"\xff" * 96, bytes(33), b""):
        write("bitset", h + bits)
    for f in filters_of(os.path.join(CORRUPT, "base_pa_ints.parquet"))[:2]:
        _, used = g.read_struct(f, 0)
        write("bitset", h + f[used:])
    write("bitset", h + open(os.path.join(ROOT, "fixtures", "golden", "bloom_filter.xxhash.bin"), "rb").read()[16:])

    # value_text: every syntax the typed reader knows, and edge values
    for t in ["0", "1", "-1", "127", "-128", "255", "4294967295", "-2147483648", "18446744073709551615",
              "-9223372036854775808", "2024-01-31", "0001-01-01", "9999-12-31", "-2024-01-01",
              "23:59:59.999", "00:00:00", "12:00:00.123456789",
              "2024-01-31T12:00:00Z", "2024-01-31T12:00:00.123456Z", "2024-01-31T12:00:00.123456789",
              "2024-01-31 12:00:00+05:30", "12.34", "-0.01", "1e10", "99999999.99", ".5",
              "0.0", "-0.0", "nan", "NaN", "-inf", "inf", "1e-45", "3.4028235e38", "1.7976931348623157e308",
              "65504", "6.1e-5", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "F81D4FAE7DEC11D0A76500A0C91E6BF6",
              "0x", "0x00ff", "00ff", "0xabc", "hello", "", " ", "é", "\u0000", "1_000", "+5", "0x1p3"]:
        write("value_text", t.encode())

    # parquet_file: the two small bases and a spread of corrupt files
    for name in ["base_pa_ints.parquet", "base_arrowrs_temporal_nolength.parquet",
                 "num_bytes_128mib_nolength.parquet", "length_112.parquet", "unknown_field_long_header.parquet",
                 "offset_shared_by_two_columns.parquet", "bitset_truncated.parquet", "legacy_murmur3.parquet",
                 "every_row_group_bad.parquet", "bitset_96_bytes_all_ones.parquet", "encrypted.parquet",
                 "footer_huge_list.parquet", "truncated_header_nolength.parquet"]:
        write("parquet_file", open(os.path.join(CORRUPT, name), "rb").read())


if __name__ == "__main__":
    main()
