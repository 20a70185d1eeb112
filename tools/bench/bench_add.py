"""Helper for tools/bench/bench_add.sh.

  bench_add.py gen OUT.parquet SIZE_MB      pyarrow file WITHOUT Bloom filters: `str` (high-cardinality
                                            random strings, 12..32 bytes) and `i64` (random int64),
                                            several row groups, ~SIZE_MB MiB
  bench_add.py rewrite IN OUT [FPP]         the pyarrow way to get filters: read IN row group by row
                                            group and write OUT with bloom_filter_options for str, i64
                                            (ndv = rows of the largest row group, i.e. every value distinct)
  bench_add.py footer-start FILE            offset of FILE's footer (bytes before it = data pages etc.)
  bench_add.py info FILE                    rows, row groups, filter presence per column
"""

import struct
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 4_000_000
BYTES_PER_ROW = 22 + 4 + 8 + 1  # mean string length + offset + int64 + levels, roughly


def gen(out, size_mb):
    target = int(size_mb) * 1024 * 1024
    rows_total = max(ROW_GROUP_ROWS // 8, target // BYTES_PER_ROW)
    rg_rows = min(ROW_GROUP_ROWS, max(1, rows_total // 4))
    rng = np.random.default_rng(42)
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", dtype=np.uint8)
    schema = pa.schema([("str", pa.string()), ("i64", pa.int64())])
    t0 = time.time()
    written = 0
    with pq.ParquetWriter(out, schema) as w:  # pyarrow defaults: snappy, dictionary tried, no filters
        while written < rows_total:
            n = min(rg_rows, rows_total - written)
            lens = rng.integers(12, 33, n, dtype=np.int32)
            offsets = np.zeros(n + 1, dtype=np.int32)
            np.cumsum(lens, out=offsets[1:])
            data = alphabet[rng.integers(0, 64, int(offsets[-1]), dtype=np.uint8)]
            s = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
            i = pa.array(rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True))
            w.write_table(pa.table([s, i], schema=schema), row_group_size=n)
            written += n
    md = pq.ParquetFile(out).metadata
    print(f"gen: {out}: {md.num_rows} rows, {md.num_row_groups} row groups in {time.time() - t0:.0f}s", file=sys.stderr)


def rewrite(inp, out, fpp=0.01):
    pf = pq.ParquetFile(inp)
    ndv = max(pf.metadata.row_group(i).num_rows for i in range(pf.metadata.num_row_groups))
    opts = {"str": {"ndv": ndv, "fpp": float(fpp)}, "i64": {"ndv": ndv, "fpp": float(fpp)}}
    with pq.ParquetWriter(out, pf.schema_arrow, bloom_filter_options=opts) as w:
        for i in range(pf.metadata.num_row_groups):
            t = pf.read_row_group(i)
            w.write_table(t, row_group_size=t.num_rows)


def footer_start(path):
    with open(path, "rb") as f:
        f.seek(-8, 2)
        n, magic = struct.unpack("<I4s", f.read(8))
        assert magic == b"PAR1"
        return f.tell() - 8 - n


def info(path):
    md = pq.ParquetFile(path).metadata
    print(f"{md.num_rows} rows, {md.num_row_groups} row groups, created_by {md.created_by}")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "gen":
        gen(*args)
    elif cmd == "rewrite":
        rewrite(*args)
    elif cmd == "footer-start":
        print(footer_start(args[0]))
    elif cmd == "info":
        info(args[0])
    else:
        sys.exit(__doc__)
