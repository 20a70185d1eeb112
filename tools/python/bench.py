#!/usr/bin/env python3
"""Speed of the Python package sbbf, as the tables in crates/sbbf-python/README.md show it.

    PROFILE=release bash tools/python/install.sh      # a release wheel into tools/.venv
    tools/.venv/bin/python tools/python/bench.py [--keys 20]

1. `sbbf.read_table` against `pyarrow.parquet.read_table` with the same equality filter on a
   file of the 64-row-group class (64 row groups of 20,000 rows: `id` int64 in random order,
   so min/max statistics cannot skip anything, with a Bloom filter written by pyarrow;
   `payload` text): wall time per lookup (median over the keys, page cache warm) and bytes
   read (the process's read calls, from /proc/self/io).
2. `Sbbf.contains_many` on 1,000,000 int64 keys against a Python loop of `Sbbf.contains`,
   and `Sbbf.insert_many` for the same keys.

Wall-clock numbers: benchmarks, not tests; nothing here asserts a time.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import sbbf

ROW_GROUPS, ROWS = 64, 20_000


def read_bytes():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


def measure(fn):
    b0, t0 = read_bytes(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, read_bytes() - b0, out


def make_file(path):
    rng = np.random.default_rng(42)
    ids = rng.permutation(ROW_GROUPS * ROWS).astype(np.int64) * 7
    payload = pa.array([f"row {i} of some text" for i in ids])
    pq.write_table(pa.table({"id": ids, "payload": payload}), path, row_group_size=ROWS,
                   bloom_filter_options={"id": {"ndv": ROWS, "fpp": 0.01}})
    return ids


def bench_read(keys_n):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rg64.parquet")
        ids = make_file(path)
        size = os.path.getsize(path)
        keys = [int(k) for k in ids[:: len(ids) // keys_n][:keys_n]]
        rows = {"pyarrow.parquet.read_table": [], "sbbf.read_table": [], "sbbf.row_groups": []}
        kept = []
        for k in [keys[0]] + keys:  # the first lookup warms the page cache, not counted
            f = [("id", "=", k)]
            a = measure(lambda: pq.read_table(path, filters=f))
            b = measure(lambda: sbbf.read_table(path, filters=f))
            c = measure(lambda: sbbf.row_groups(path, f))
            assert a[2].equals(b[2]) and a[2].num_rows == 1
            rows["pyarrow.parquet.read_table"].append(a[:2])
            rows["sbbf.read_table"].append(b[:2])
            rows["sbbf.row_groups"].append(c[:2])
            kept.append(len(c[2]))
        print(f"\nfile: {ROW_GROUPS} row groups x {ROWS} rows, {size / 2**20:.1f} MiB; "
              f"{keys_n} keys, one lookup each; row groups kept: median "
              f"{statistics.median(kept[1:])}, max {max(kept[1:])}\n")
        print("| call | wall time per lookup (median) | bytes read per lookup (median) |")
        print("|---|---|---|")
        for name, m in rows.items():
            m = m[1:]
            t = statistics.median(x[0] for x in m)
            b = statistics.median(x[1] for x in m)
            print(f"| `{name}` | {t * 1000:.1f} ms | {b / 2**20:.2f} MiB ({b:,.0f} B) |")


def bench_filter():
    n = 1_000_000
    keys = np.random.default_rng(1).integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    f = sbbf.Sbbf.with_ndv_fpp(n, 0.01)
    t_insert = min(measure(lambda: f.insert_many(keys))[0] for _ in range(3))
    t_many = min(measure(lambda: f.contains_many(keys))[0] for _ in range(5))
    assert f.contains_many(keys).all()
    loop_keys = keys.tolist()
    t_loop = measure(lambda: [f.contains(k) for k in loop_keys])[0]
    print(f"\n{n:,} int64 keys, filter {f.num_bytes / 2**20:.0f} MiB "
          f"(kernel {sbbf._sbbf.KERNEL})\n")
    print("| what | time | per key |")
    print("|---|---|---|")
    for name, t in (("`Sbbf.insert_many(keys)` (numpy int64)", t_insert),
                    ("`Sbbf.contains_many(keys)` (numpy int64)", t_many),
                    ("Python loop: `[f.contains(k) for k in keys]`", t_loop)):
        print(f"| {name} | {t * 1000:,.0f} ms | {t / n * 1e9:,.0f} ns |")
    print(f"\ncontains_many is {t_loop / t_many:,.0f}x the Python loop")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keys", type=int, default=20)
    args = ap.parse_args()
    print(f"Python {sys.version.split()[0]}, pyarrow {pa.__version__}, numpy {np.__version__}, "
          f"{os.cpu_count()} cores")
    bench_read(args.keys)
    bench_filter()


if __name__ == "__main__":
    main()
