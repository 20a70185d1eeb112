"""`sbbf query` with our pruning, with DataFusion's own, and with none, side by side.

    tools/.venv/bin/python tools/bench/bench_query.py [--rows-per-rg N] [--latency-ms 0,20,50]
                                                      [--profile release|debug]

Generates (once, into target/bench-query/) a file of the class the issues measure: pyarrow, 64
row groups, Bloom filters on `key` (random 16-character strings) and `i64`, and a `payload`
column that makes the data pages heavy. Then runs, with the release `sbbf`:

  sbbf       sbbf query (our filters; DataFusion's own Bloom reads off)
  datafusion sbbf query --no-sbbf (DataFusion 55's defaults: statistics + its Bloom reads)
  none       --no-sbbf with DATAFUSION_EXECUTION_PARQUET_PRUNING=false and
             ..._BLOOM_FILTER_ON_READ=false (every row group read)

for one key and for an IN list of 10 keys, locally and on an S3 test server (moto) behind a
proxy that holds every request for the given latency. Reports wall time (median of 3),
row groups read, bytes DataFusion scanned, our filter bytes, and requests (S3: counted by the
proxy). Prints a Markdown table (the one in docs/performance.md).
"""

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "bench-query"
SBBF = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "sbbf"  # --profile debug: target/debug/sbbf
RGS = 64


def gen(path, rows_per_rg):
    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    schema = pa.schema([("key", pa.string()), ("i64", pa.int64()), ("payload", pa.string())])
    opts = {"key": {"ndv": rows_per_rg, "fpp": 0.01}, "i64": {"ndv": rows_per_rg, "fpp": 0.01}}
    picks = []
    with pq.ParquetWriter(path, schema, bloom_filter_options=opts) as w:
        for rg in range(RGS):
            n = rows_per_rg
            keys = alphabet[rng.integers(0, len(alphabet), n * 16, dtype=np.uint8)]
            key = pa.StringArray.from_buffers(
                n, pa.py_buffer(np.arange(0, 16 * (n + 1), 16, dtype=np.int32)), pa.py_buffer(keys)
            )
            pl = alphabet[rng.integers(0, len(alphabet), n * 96, dtype=np.uint8)]
            payload = pa.StringArray.from_buffers(
                n, pa.py_buffer(np.arange(0, 96 * (n + 1), 96, dtype=np.int32)), pa.py_buffer(pl)
            )
            i64 = pa.array(rng.integers(-(2**62), 2**62, n, dtype=np.int64))
            w.write_table(pa.table([key, i64, payload], schema=schema), row_group_size=n)
            picks.append(key[n // 2].as_py())
    return picks


def big_file(rows_per_rg):
    """The 64-row-group file (made once into target/bench-query/) and one stored key per row
    group."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"rg64_{rows_per_rg}.parquet"
    picks_file = path.with_suffix(".keys.json")
    if not path.exists():
        print(f"generating {path} ...", file=sys.stderr)
        picks_file.write_text(json.dumps(gen(path, rows_per_rg)))
    return path, json.loads(picks_file.read_text())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proxy:
    """A TCP proxy that holds each HTTP request for `latency` seconds and counts them."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.latency = 0.0
        self.requests = 0
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self._run, daemon=True).start()
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(asyncio.start_server(self._conn, "127.0.0.1", self.port))
        self.loop.run_forever()

    def seen(self, data):
        """Called with the first bytes of each request (subclasses record them)."""

    def received(self, data):
        """Called with each piece of the answers passed back (subclasses count them)."""

    async def _conn(self, cr, cw):
        ur, uw = await asyncio.open_connection("127.0.0.1", self.upstream)

        async def up():
            while data := await cr.read(65536):
                if data[:4] in (b"GET ", b"HEAD", b"PUT ", b"POST", b"DELE"):
                    self.requests += 1
                    self.seen(data)
                    if self.latency:
                        await asyncio.sleep(self.latency)
                uw.write(data)
                await uw.drain()
            uw.close()

        async def down():
            while data := await ur.read(65536):
                self.received(data)
                cw.write(data)
                await cw.drain()
            cw.close()

        await asyncio.gather(up(), down(), return_exceptions=True)


def start_moto():
    """Starts moto's S3 server on a free port with a bucket `bench`; returns (process, port,
    boto3 client, environment for `sbbf` through a latency proxy in front of it)."""
    moto_bin = ROOT / "tools" / ".venv" / "bin" / "moto_server"
    if not moto_bin.exists():
        sys.exit("moto_server missing: run bash tools/setup/setup-s3-test.sh")
    mport = free_port()
    moto = subprocess.Popen([str(moto_bin), "-p", str(mport)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", mport), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    import boto3

    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{mport}", aws_access_key_id="x",
                      aws_secret_access_key="x", region_name="us-east-1")
    s3.create_bucket(Bucket="bench")
    return moto, mport, s3


def s3_env(proxy):
    """The environment `sbbf` reads its S3 settings from, pointed at `proxy`."""
    return {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{proxy.port}",
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_REGION": "us-east-1",
    }


def run(path, sql, mode, env):
    args = [str(SBBF), "query", path, sql, "--stats", "--format", "json"]
    env = dict(os.environ, **env)
    if mode != "sbbf":
        args.append("--no-sbbf")
    if mode == "none":
        env["DATAFUSION_EXECUTION_PARQUET_PRUNING"] = "false"
        env["DATAFUSION_EXECUTION_PARQUET_BLOOM_FILTER_ON_READ"] = "false"
    t0 = time.perf_counter()
    p = subprocess.run(args, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)}: {p.stderr.decode()}")
    stats = json.loads(p.stderr.decode().strip().splitlines()[-1])
    return wall, stats, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows-per-rg", type=int, default=100_000)
    ap.add_argument("--latency-ms", default="0,20,50")
    ap.add_argument("--profile", default="release", choices=["release", "debug"])
    ap.add_argument("--no-build", action="store_true", help="use the sbbf binary as it is")
    args = ap.parse_args()
    global SBBF
    SBBF = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / args.profile / "sbbf"
    path, picks = big_file(args.rows_per_rg)
    size = path.stat().st_size
    build = ["cargo", "build", "-p", "sbbf-cli"] + (["--release"] if args.profile == "release" else [])
    if not args.no_build:
        subprocess.run(build, cwd=ROOT, check=True)

    queries = {
        "1 key": f"SELECT count(*) FROM t WHERE key = '{picks[17]}'",
        "IN 10 keys": "SELECT count(*) FROM t WHERE key IN ({})".format(
            ", ".join(f"'{k}'" for k in picks[:10])
        ),
    }
    rows = []

    def measure(where, target, env, proxy=None, latency=0):
        for qname, sql in queries.items():
            answers = set()
            for mode in ("sbbf", "datafusion", "none"):
                walls, stats, reqs = [], None, 0
                for _ in range(3):
                    before = proxy.requests if proxy else 0
                    wall, stats, out = run(target, sql, mode, env)
                    reqs = (proxy.requests - before) if proxy else stats["sbbf_requests"]
                    walls.append(wall)
                    answers.add(out)
                rows.append(
                    (where, latency, qname, mode, statistics.median(walls), stats["row_groups_read"],
                     stats["bytes_scanned"], stats["sbbf_bytes"], reqs if proxy else "")
                )
            if len(answers) != 1:
                sys.exit(f"{where} {qname}: the three modes disagree: {answers}")

    measure("local", str(path), {})

    moto, mport, s3 = start_moto()
    try:
        s3.upload_file(str(path), "bench", "rg64.parquet")
        proxy = Proxy(mport)
        env = s3_env(proxy)
        for ms in [int(x) for x in args.latency_ms.split(",")]:
            proxy.latency = ms / 1000
            measure("S3", "s3://bench/rg64.parquet", env, proxy, ms)
    finally:
        moto.terminate()

    print(f"\nFile: {path.name}, {size / 2**20:.0f} MiB, {RGS} row groups x {args.rows_per_rg} rows, "
          f"filters on key and i64 (pyarrow {pa.__version__}); `sbbf` {args.profile} build.\n")
    print("| where | added latency | query | pruning | wall (median of 3) | row groups read | bytes scanned | filter bytes (ours) | requests |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|")
    for where, lat, q, mode, wall, rg, scanned, fb, reqs in rows:
        print(f"| {where} | {lat} ms | {q} | {mode} | {wall:.2f} s | {rg} | {scanned / 2**20:.1f} MiB | "
              f"{fb / 2**10:.1f} KiB | {reqs} |")


if __name__ == "__main__":
    main()
