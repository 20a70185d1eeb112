"""The table index (`sbbf index`) against probing every file.

    python3 tools/bench/bench_index.py [--files 1000,10000] [--latency-ms 20] [--debug]

Two parts, each printed as a Markdown table:

1. Throttled in-memory store (`crates/sbbf-index/examples/index_bench.rs`): every request held
   for the latency, so requests and waves are what costs. Build (wall, requests, index size),
   then 1, 100 and 1,000 values with and without the index: requests, waves, bytes, wall.
2. Local disk: the same tables written to target/bench-index/, then `sbbf index build` (wall,
   peak memory) and `sbbf probe --stats` with and without the index (wall, requests).
3. The S3 test server (moto) behind the latency proxy of bench_query.py (`--s3-files`, default
   1000; each request held for the latency): the table uploaded, `sbbf index build s3://...`
   (wall, requests the proxy saw, index size), then 1, 100 and 1,000 values with and without
   the index: requests the proxy saw, waves, wall.
4. `sbbf query` (built with `--features query`) on a selective key, `SELECT count(*) FROM t
   WHERE k = K` for a K one file holds, with and without the index: on the local tables of part
   2 and on the objects of part 3 (wall, row groups the index pruned, requests the proxy saw).

Files: one row group of 1,000 rows, an int64 key `k` and a string `s`, both with filters at 1 %
FPP. Values: half present (each in one file), half absent.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "bench-index"


def cargo(args, debug):
    profile = [] if debug else ["--release"]
    subprocess.run(["cargo", *args, *profile], cwd=ROOT, check=True)


def exe(name, debug, example=False):
    d = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / ("debug" if debug else "release")
    return d / ("examples" if example else "") / name


def keys(n, files):
    # The example's generator: xorshift, half present, half beyond the table's end.
    total, x, out = files * 1000, 0x9E3779B97F4A7C15, []
    mask = (1 << 64) - 1
    for i in range(n):
        x ^= (x << 13) & mask
        x ^= x >> 7
        x ^= (x << 17) & mask
        v = x % total
        out.append(str(v if i % 2 == 0 else total + v))
    return out


def timed(cmd):
    """Wall seconds, peak RSS (MiB) of the command (GNU time), stdout."""
    rss = OUT / "rss.txt"
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", str(rss), *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"{cmd}: {p.stderr}")
    return wall, int(rss.read_text().split()[-1]) / 1024, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="1000,10000")
    ap.add_argument("--latency-ms", default="20")
    ap.add_argument("--s3-files", default="1000", help="table sizes for part 3 ('' to skip)")
    ap.add_argument("--debug", action="store_true", help="debug builds (quicker to build)")
    ap.add_argument("--query-debug", action="store_true",
                    help="part 4 with a debug `sbbf query` (DataFusion's release build is long)")
    a = ap.parse_args()
    files = [int(f) for f in a.files.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    cargo(["build", "-p", "sbbf-index", "--example", "index_bench"], a.debug)
    # The query build first (a `sbbf` with DataFusion), copied aside: the probe build below
    # writes the same path.
    qdebug = a.debug or a.query_debug
    cargo(["build", "-p", "sbbf-cli", "--features", "query"], qdebug)
    query_sbbf = OUT / "sbbf-query"
    shutil.copy2(exe("sbbf", qdebug), query_sbbf)
    cargo(["build", "-p", "sbbf-cli", "--no-default-features", "--features", "object_store"], a.debug)
    bench = exe("index_bench", a.debug, example=True)
    sbbf = exe("sbbf", a.debug)

    print(f"## Throttled in-memory store, {a.latency_ms} ms per request\n", flush=True)
    subprocess.run([str(bench), a.latency_ms, *map(str, files)], check=True)

    print("\n## Local disk\n")
    print("| files | build wall | build peak RSS | index bytes |")
    print("| ---: | ---: | ---: | ---: |")
    rows = []
    for n in files:
        d = OUT / f"t{n}"
        if not d.exists():
            subprocess.run([str(bench), "--write-dir", str(d), str(n)], check=True)
            time.sleep(2.1)  # files modified in the last 2 s are not covered by a build
        wall, peak, _ = timed([str(sbbf), "index", "build", str(d)])
        size = (d / "_sbbf_index" / "index.sbbfi").stat().st_size
        print(f"| {n} | {wall:.2f} s | {peak:.0f} MiB | {size} |", flush=True)
        for nv in (1, 100, 1000):
            vf = OUT / f"values-{n}-{nv}.txt"
            vf.write_text("\n".join(keys(nv, n)) + "\n")
            r = []
            for extra in ([], ["--no-index"]):
                w, _, out = timed(
                    [str(sbbf), "probe", str(d), "k", "--values-from", str(vf), "--stats", *extra]
                )
                m = re.search(r"reads: (\d+) request", out)
                idx = re.search(r"index: (\d+) of", out)
                r.append((w, int(m.group(1)) if m else 0, int(idx.group(1)) if idx else 0))
            rows.append((n, nv, r))
    print()
    print("| files | values | with index: wall / direct requests / files answered by the index | without: wall / requests |")
    print("| ---: | ---: | ---: | ---: |")
    for n, nv, ((w1, q1, f1), (w0, q0, _)) in rows:
        print(f"| {n} | {nv} | {w1:.2f} s / {q1} / {f1} | {w0:.2f} s / {q0} |")
    print("\n## `sbbf query` on a selective key, local disk\n")
    query_table([(f"{n} files", str(OUT / f"t{n}"), n) for n in files], query_sbbf, None, None)
    if a.s3_files:
        s3_part(sbbf, query_sbbf, bench, [int(f) for f in a.s3_files.split(",")],
                int(a.latency_ms))


def query_table(tables, query_sbbf, env, proxy):
    """Part 4: `SELECT count(*) FROM t WHERE k = K` (K in one file) with and without the index."""
    print("| table | with index: wall / row groups pruned by the index / requests | "
          "without: wall / requests | count |")
    print("| --- | ---: | ---: | ---: |")
    for label, loc, n in tables:
        k = (n // 2) * 1000 + 7  # a key of the file in the middle
        sql = f"SELECT count(*) AS n FROM t WHERE k = {k}"
        r = []
        for extra in ([], ["--no-index"]):
            before = proxy.requests if proxy else 0
            t = time.perf_counter()
            p = subprocess.run([str(query_sbbf), "query", loc, sql, "--stats", "--format", "json",
                                *extra], env=env, capture_output=True, text=True)
            w = time.perf_counter() - t
            if p.returncode != 0:
                sys.exit(f"query {loc}: {p.stderr}")
            stats = json.loads(p.stderr.strip().splitlines()[-1]) if p.stderr.strip() else {}
            count = json.loads(p.stdout.strip().splitlines()[0])["n"]
            r.append((w, stats.get("row_groups_pruned_index", 0),
                      (proxy.requests - before) if proxy else "-", count))
        (w1, i1, q1, c1), (w0, _, q0, c0) = r
        assert c1 == c0 == 1, (c1, c0)
        print(f"| {label} | {w1:.2f} s / {i1} / {q1} | {w0:.2f} s / {q0} | {c1} |", flush=True)


def s3_part(sbbf, query_sbbf, bench, files, latency_ms):
    """Part 3: the index on the S3 test server, every request through the latency proxy."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_query import Proxy, s3_env, start_moto  # noqa: E402

    moto, mport, s3 = start_moto()
    proxy = Proxy(mport)
    env = dict(os.environ, **s3_env(proxy))
    print(f"\n## S3 test server behind the latency proxy, {latency_ms} ms per request\n")
    print("| files | build wall | build requests | index bytes |")
    print("| ---: | ---: | ---: | ---: |")
    rows = []
    try:
        for n in files:
            d = OUT / f"t{n}"
            if not d.exists():
                subprocess.run([str(bench), "--write-dir", str(d), str(n)], check=True)
            for f in sorted(d.glob("*.parquet")):
                s3.upload_file(str(f), "bench", f"t{n}/{f.name}")
            time.sleep(2.1)  # objects modified in the last 2 s are not covered by a build
            url = f"s3://bench/t{n}/"
            proxy.latency = latency_ms / 1000
            before = proxy.requests
            t = time.perf_counter()
            p = subprocess.run([str(sbbf), "index", "build", url, "--format", "json"], env=env,
                               capture_output=True, text=True)
            wall = time.perf_counter() - t
            if p.returncode != 0:
                sys.exit(f"index build {url}: {p.stderr}")
            built = json.loads(p.stdout)
            print(f"| {n} | {wall:.2f} s | {proxy.requests - before} | "
                  f"{built.get('index_bytes', '?')} |", flush=True)
            for nv in (1, 100, 1000):
                vf = OUT / f"values-{n}-{nv}.txt"
                vf.write_text("\n".join(keys(nv, n)) + "\n")
                r = []
                for extra in ([], ["--no-index"]):
                    before = proxy.requests
                    t = time.perf_counter()
                    p = subprocess.run([str(sbbf), "probe", url, "k", "--values-from", str(vf),
                                        "--stats", *extra], env=env, capture_output=True,
                                       text=True)
                    w = time.perf_counter() - t
                    if p.returncode not in (0, 1):
                        sys.exit(f"probe {url}: {p.stderr}")
                    waves = re.search(r"(\d+) wave\(s\) in all", p.stdout)
                    if waves is None:
                        waves = re.search(r"(\d+) wave\(s\)", p.stdout)
                    r.append((w, proxy.requests - before, int(waves.group(1)) if waves else -1))
                rows.append((n, nv, r))
        print()
        print("| files | values | with index: wall / requests / waves | without: wall / requests / waves (summed over files) |")
        print("| ---: | ---: | ---: | ---: |")
        for n, nv, ((w1, q1, v1), (w0, q0, v0)) in rows:
            print(f"| {n} | {nv} | {w1:.2f} s / {q1} / {v1} | {w0:.2f} s / {q0} / {v0} |")
        print("\n## `sbbf query` on a selective key, S3 test server behind the latency proxy\n")
        query_table([(f"{n} objects", f"s3://bench/t{n}/", n) for n in files], query_sbbf, env,
                    proxy)
    finally:
        moto.terminate()


if __name__ == "__main__":
    main()
