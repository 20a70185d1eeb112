"""Listing an object-store prefix of many files: page after page, or folder by folder.

    nice -n 10 tools/.venv/bin/python tools/bench/bench_listing.py [--files 10000] [--folders 10]
                                    [--latency-ms 20] [--sbbf PATH] [--vs PATH]

Puts N small Parquet files (one row group, a Bloom filter on `id`) on the S3 test server (moto)
twice: under `parts/p=0/ .. p=F-1/` (F partition folders) and flat under `flat/`. Builds the
table index of each prefix (so that a probe reads only the listing and the index: the index
answers every file it knows as listed), then, behind the latency proxy of bench_query.py, runs
`sbbf probe s3://bench/PREFIX/ id -1 --format json` with the `sbbf` under test (--sbbf, default
$CARGO_TARGET_DIR/release/sbbf) and, with --vs, an older build, one after the other, and reports
for each: LIST requests below the prefix (the index folder's own excluded), the round trips
they took (a LIST arriving a latency or more after the first of the current wave opens the
next), all requests and the round trips of all of them (the index's reads too), and wall
time. A store lists 1,000 keys a page: a flat listing of N keys
takes ceil(N / 1000) round trips one after another. Any failed command stops the script
(status 1).
"""

import argparse
import concurrent.futures
import io
import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lake import PathProxy, count_waves  # noqa: E402
from bench_query import ROOT, s3_env, start_moto  # noqa: E402

BUCKET = "bench"
INDEX_DIR = "_sbbf_index/"


def fail(msg):
    print(f"bench_listing.py: {msg}", file=sys.stderr)
    sys.exit(1)


def small_file():
    t = pa.table({"id": pa.array(range(100), pa.int64())})
    buf = io.BytesIO()
    pq.write_table(t, buf, bloom_filter_options={"id": {"ndv": 100, "fpp": 0.01}})
    return buf.getvalue()


def lists(proxy, prefix):
    """(times of the LISTs below `prefix` outside the index folder, times of all requests)."""
    times = []
    log = list(proxy.log)
    for t, method, target in log:
        u = urllib.parse.urlsplit(target)
        q = urllib.parse.parse_qs(u.query)
        if method == "GET" and "list-type" in q:
            p = q.get("prefix", [""])[0]
            if p.startswith(prefix) and not p[len(prefix):].startswith(INDEX_DIR):
                times.append(t)
    return times, [t for t, _, _ in log]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--folders", type=int, default=10)
    ap.add_argument("--latency-ms", type=int, default=20)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    ap.add_argument("--sbbf", type=Path, default=target / "release" / "sbbf")
    ap.add_argument("--vs", type=Path, help="an older sbbf to compare with")
    a = ap.parse_args()
    for b in [a.sbbf] + ([a.vs] if a.vs else []):
        if not b.exists():
            fail(f"{b} missing: cargo build --release -p sbbf-cli (or --sbbf PATH)")

    moto, mport, s3 = start_moto()
    try:
        proxy = PathProxy(mport)
        env = {**os.environ, **s3_env(proxy)}
        body = small_file()
        keys = [f"parts/p={i % a.folders}/f-{i:05}.parquet" for i in range(a.files)]
        keys += [f"flat/f-{i:05}.parquet" for i in range(a.files)]
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(16) as ex:
            list(ex.map(lambda k: s3.put_object(Bucket=BUCKET, Key=k, Body=body), keys))
        print(f"uploaded {len(keys)} objects in {time.perf_counter() - t0:.0f} s", flush=True)
        rows = []
        for prefix in ("parts/", "flat/"):
            url = f"s3://{BUCKET}/{prefix}"
            t0 = time.perf_counter()
            p = subprocess.run([str(a.sbbf), "index", "build", url], env=env, capture_output=True, text=True)
            if p.returncode != 0:
                fail(f"index build {url}: {p.stderr.strip()[-2000:]}")
            print(f"index of {url} built in {time.perf_counter() - t0:.0f} s", flush=True)
            proxy.latency = a.latency_ms / 1000
            for name, b in [("this", a.sbbf)] + ([("vs", a.vs)] if a.vs else []):
                proxy.log.clear()
                t0 = time.perf_counter()
                p = subprocess.run([str(b), "probe", url, "id", "-1", "--format", "json"], env=env,
                                   capture_output=True, text=True)
                wall = time.perf_counter() - t0
                if p.returncode not in (0, 1):
                    fail(f"probe {url} ({b}): exit {p.returncode}: {p.stderr.strip()[-2000:]}")
                times, every = lists(proxy, prefix)
                rows.append((prefix, name, len(times), count_waves(times, proxy.latency),
                             len(every), count_waves(every, proxy.latency), wall))
            proxy.latency = 0
    finally:
        moto.terminate()

    print()
    print(f"{a.files} objects; `parts/` in {a.folders} partition folders, `flat/` in none; S3 test server "
          f"behind a proxy holding each request {a.latency_ms} ms; probe with the index built "
          f"(the listing and the index only). this: {a.sbbf}" + (f"; vs: {a.vs}" if a.vs else ""))
    print()
    print("| prefix | build | LIST requests | LIST round trips | requests | round trips | wall |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for prefix, name, n, waves, total, all_waves, wall in rows:
        print(f"| {prefix} | {name} | {n} | {waves} | {total} | {all_waves} | {wall:.2f} s |")


if __name__ == "__main__":
    main()
