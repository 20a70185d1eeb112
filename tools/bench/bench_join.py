"""Joins through `sbbf query`: a fact table joined with a dimension of K keys (3 of them stored).

    tools/.venv/bin/python tools/bench/bench_join.py [--rows-per-rg N] [--files N]
                                                     [--keys 3,30,300,3000] [--profile release|debug]
                                                     [--kernel 100000,1000000]

Tables (generated once into target/bench-join/):

  one file   the 64-row-group class of bench_query.py (pyarrow, Bloom filters on `key` at
             FPP 1 %, a heavy `payload` column), made by bench_query.big_file
  directory  N files of one row group each, the same columns, filters on `key`

and for each K a dimension file `d` with column `k`: 3 keys stored in the fact table (one
row group each) and K - 3 random keys it does not hold. The query is

  SELECT count(*) FROM t JOIN d ON t.key = d.k

run four ways: `sbbf query F --table d=D` (our filters, join key sets raised), `--no-sbbf`
(DataFusion 55's defaults: statistics and its own Bloom reads of the pushed keys, up to 150),
`--no-sbbf` with DATAFUSION_EXECUTION_PARQUET_PRUNING=false and ..._BLOOM_FILTER_ON_READ=false
(no pruning at all), and DuckDB over the same files (counts must all agree). Reports the fact
table's row groups read, the bytes DataFusion scanned, wall time (median of 3, the three sbbf
runs taking turns so a busy moment falls on all alike), our wall over DataFusion's defaults
(the issue's target: at most 1.10 at every K), the files whose filters we left unread (too
loose for K keys, judged from their sizes) and, for our
table, the expected survivors `1 - (1 - p)^K` of a row group holding none of the keys at the
filters' FPP p = 1 %; for our table the filter bytes it read are shown beside DataFusion's
`bytes_scanned` (which holds DataFusion's own filter reads, not ours). Prints Markdown tables (the ones in docs/performance.md).

The default class is the issue's: 64 row groups of 320,000 rows (2.7 GB, made once).

Last, the key-set kernel (`--kernel`, "" to skip): the release example
`sbbf-parquet/examples/prune_in_list` prunes the one file with `key IN (N random absent
keys)` twice and reports the second run (filter bytes in memory: each key hashed once, each row
group's filter tested with the batch kernel): CPU, wall, and memory above the key set, against
the issue's targets (100,000 keys in 60 ms of CPU; 1,000,000 in 600 ms and 64 MiB).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_query  # noqa: E402  (the 64-row-group file, made once)

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "bench-join"
FPP = 0.01


def random_keys(rng, n, length=16):
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    raw = alphabet[rng.integers(0, len(alphabet), n * length, dtype=np.uint8)]
    return [raw[i * length:(i + 1) * length].tobytes().decode() for i in range(n)]


def gen_dir(path, files, rows):
    """`files` files of one row group: key, i64, payload; returns one stored key per file."""
    if (path / "keys.json").exists():
        return json.loads((path / "keys.json").read_text())
    path.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(11)
    picks = []
    for f in range(files):
        key = random_keys(rng, rows)
        payload = random_keys(rng, rows, 96)
        i64 = rng.integers(-(2**62), 2**62, rows, dtype=np.int64)
        table = pa.table({"key": key, "i64": i64, "payload": payload})
        pq.write_table(table, path / f"part-{f:04d}.parquet", row_group_size=rows,
                       bloom_filter_options={"key": {"ndv": rows, "fpp": FPP}})
        picks.append(key[rows // 2])
    (path / "keys.json").write_text(json.dumps(picks))
    return picks


def gen_dim(path, present, k, seed):
    rng = np.random.default_rng(seed)
    keys = present[:3] + [f"absent-{x}" for x in random_keys(rng, max(k - 3, 0), 12)]
    pq.write_table(pa.table({"k": keys[:k]}), path)


def sbbf_cmd(sbbf, fact, dim, mode):
    sql = "SELECT count(*) AS n FROM t JOIN d ON t.key = d.k"
    cmd = [str(sbbf), "query", str(fact), "--table", f"d={dim}", sql, "--format", "json", "--stats"]
    env = dict(os.environ)
    if mode != "sbbf":
        cmd.append("--no-sbbf")
    if mode == "none":
        env["DATAFUSION_EXECUTION_PARQUET_PRUNING"] = "false"
        env["DATAFUSION_EXECUTION_PARQUET_BLOOM_FILTER_ON_READ"] = "false"
    return cmd, env


def run_interleaved(sbbf, fact, dim, modes, reps=3):
    """Each mode `reps` times, the modes taking turns (a busy moment of the machine falls on
    all of them alike); per mode: the count, the median wall and the last run's `--stats`."""
    times = {m: [] for m in modes}
    last = {}
    for _ in range(reps):
        for mode in modes:
            cmd, env = sbbf_cmd(sbbf, fact, dim, mode)
            t0 = time.perf_counter()
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            times[mode].append(time.perf_counter() - t0)
            if out.returncode != 0:
                sys.exit(f"{' '.join(map(str, cmd))} failed:\n{out.stderr}")
            last[mode] = out
    runs = {}
    for mode in modes:
        out = last[mode]
        n = json.loads(out.stdout.strip().splitlines()[0])["n"]
        stats = json.loads(out.stderr.strip().splitlines()[-1])
        runs[mode] = (n, statistics.median(times[mode]), stats.get("tables", {}).get("t", stats))
    return runs


def duckdb_run(fact, dim):
    import duckdb

    src = f"{fact}/*.parquet" if Path(fact).is_dir() else str(fact)
    t0 = time.perf_counter()
    con = duckdb.connect()
    n = con.execute(
        f"SELECT count(*) FROM read_parquet('{src}') t JOIN read_parquet('{dim}') d ON t.key = d.k"
    ).fetchall()[0][0]
    return n, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows-per-rg", type=int, default=320000)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--keys", default="3,30,300,3000")
    ap.add_argument("--profile", default="release", choices=["release", "debug"])
    ap.add_argument("--kernel", default="100000,1000000")
    a = ap.parse_args()
    sbbf = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / a.profile / "sbbf"
    if not sbbf.exists():
        sys.exit(f"{sbbf} is missing: cargo build --{a.profile} -p sbbf-cli" if a.profile == "release"
                 else f"{sbbf} is missing: cargo build -p sbbf-cli")
    OUT.mkdir(parents=True, exist_ok=True)
    big, picks = bench_query.big_file(a.rows_per_rg)
    tables = [
        (f"one file, 64 row groups x {a.rows_per_rg}", big, picks),
        (f"{a.files} files x 1 row group x 2000", OUT / f"dir{a.files}",
         gen_dir(OUT / f"dir{a.files}", a.files, 2000)),
    ]
    print(f"`sbbf` {a.profile} build; filters at FPP {FPP:.0%}; K keys, 3 of them stored.\n")
    print("| table | K | run | count | row groups read | bytes scanned | files unprobed "
          "| wall (median of 3) | / defaults | expected survivors at 1 % |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for label, fact, present in tables:
        for k in [int(x) for x in a.keys.split(",")]:
            dim = OUT / f"dim_{k}_{abs(hash(label)) % 1000}.parquet"
            gen_dim(dim, present, k, seed=k)
            runs = run_interleaved(sbbf, fact, dim, ["sbbf", "datafusion", "none"])
            counts = [n for n, _, _ in runs.values()]
            for mode, (n, wall, t) in runs.items():
                survive = f"{1 - (1 - FPP) ** k:.0%}" if mode == "sbbf" else ""
                # Our filter reads are not in DataFusion's `bytes_scanned` (its own are).
                filters = f" + {t['sbbf_bytes'] / 1e6:.2f} MB filters" if mode == "sbbf" else ""
                unprobed = t.get("files_unprobed_join", 0) if mode == "sbbf" else ""
                ratio = f"{wall / runs['datafusion'][1]:.2f}" if mode == "sbbf" else ""
                print(f"| {label} | {k} | {mode} | {n} | {t['row_groups_read']} of {t['row_groups']} "
                      f"| {t['bytes_scanned'] / 1e6:.1f} MB{filters} | {unprobed} | {wall:.2f} s "
                      f"| {ratio} | {survive} |")
            ratios.append((label, k, runs["sbbf"][1] / runs["datafusion"][1]))
            try:
                n, wall = duckdb_run(fact, dim)
                counts.append(n)
                print(f"| {label} | {k} | duckdb | {n} | | | | {wall:.2f} s | | |")
            except ImportError:
                pass
            if len(set(counts)) != 1:
                sys.exit(f"counts differ for {label}, K={k}: {counts}")
    # The target: ours at most 1.10x DataFusion's defaults at every K.
    print("\n| table | K | sbbf / DataFusion defaults (median wall) | target <= 1.10 |")
    print("|---|---:|---:|---|")
    for label, k, r in ratios:
        print(f"| {label} | {k:,} | {r:.2f} | {'met' if r <= 1.10 else 'MISSED'} |")
    if a.kernel:
        kernel(big, [int(x) for x in a.kernel.split(",")])


# The targets for the key-set kernel: CPU ms, and MiB above the key set (None: no bound).
TARGETS = {100_000: (60, None), 1_000_000: (600, 64)}


def kernel(big, sizes):
    """The key-set kernel on the one file (release example, second of two prunes)."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sbbf-parquet", "--example",
                    "prune_in_list"], cwd=ROOT, check=True)
    exe = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "examples" / "prune_in_list"
    print("\nKey-set kernel: `key IN (N random absent keys)` on the one file, second of two prunes "
          "(filter bytes in memory), release.\n")
    print("| keys | row groups | CPU | wall | above the key set | target |")
    print("|---:|---:|---:|---:|---:|---|")
    for n in sizes:
        out = subprocess.run([str(exe), str(big), "key", str(n)], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"prune_in_list failed:\n{out.stderr}")
        line = next(x for x in out.stdout.splitlines() if x.startswith("kernel:"))
        m = re.match(r"kernel: \d+ keys x (\d+) row groups: ([\d.]+) ms wall, ([\d.]+) ms CPU"
                     r".*?, ([-\d.]+) MiB above", line)
        if not m:
            sys.exit(f"prune_in_list printed an unexpected line: {line}")
        rgs, wall, cpu, mib = int(m[1]), float(m[2]), float(m[3]), float(m[4])
        cpu_max, mib_max = TARGETS.get(n, (None, None))
        target = ", ".join(x for x in [f"<= {cpu_max} ms CPU" if cpu_max else "",
                                       f"<= {mib_max} MiB" if mib_max else ""] if x)
        met = (cpu_max is None or cpu <= cpu_max) and (mib_max is None or mib <= mib_max)
        print(f"| {n:,} | {rgs} | {cpu:.0f} ms | {wall:.1f} ms | {mib:.1f} MiB | "
              f"{target or '-'}{' (met)' if target and met else ' (MISSED)' if target else ''} |")


if __name__ == "__main__":
    main()
