"""`sbbf probe` on object stores: requests, waves and wall time against the round-trip floor.

    tools/.venv/bin/python tools/bench/bench_probe.py [--rows-per-rg 100000] [--latency-ms 0,20,50]
                                                      [--files 10,100,1000] [--no-build]

Generates (once, into target/bench-query/) the file class issue 13 measures: pyarrow, 64 row
groups, Bloom filters on `key` (random 16-character strings, `bloom_filter_length` present) and a
heavy `payload` column (936 MB at the default 100,000 rows per row group), and prefixes of many
small files (one row group of 1,000 keys each). Then runs the release `sbbf probe --stats`:

  1 file x {1, 64, 1000} values  over plain HTTP (a range server here) and S3 (moto)
  {10, 100, 1000} files x 1 value  over an S3 prefix (moto)

each behind a proxy that holds every request for the added latency and counts requests, and
reports requests, waves (sequential round trips per file, from `--stats`), bytes, wall time
(median of 3) and the floor: waves x latency for one file; for a prefix, (1 listing +
ceil(files x requests per file / concurrency)) x latency. Also 100,000 keys from a file on the
local 64-row-group file (time and peak memory). Prints the Markdown tables of docs/performance.md.
"""

import argparse
import http.server
import json
import math
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_query import OUT, ROOT, Proxy, big_file, s3_env, start_moto  # noqa: E402

SBBF = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "sbbf"
CONCURRENCY = 64


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """GET/HEAD with `Range: bytes=a-b | a- | -n` over one directory, after `latency` seconds."""

    protocol_version = "HTTP/1.1"
    root = Path(".")
    latency = 0.0
    requests = 0
    lock = threading.Lock()

    def log_message(self, *a):
        pass

    def do_HEAD(self):
        self._serve(head=True)

    def do_GET(self):
        self._serve(head=False)

    def _serve(self, head):
        with RangeHandler.lock:
            RangeHandler.requests += 1
        if RangeHandler.latency:
            time.sleep(RangeHandler.latency)
        path = RangeHandler.root / self.path.lstrip("/").split("?")[0]
        if ".." in self.path or not path.is_file():
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = path.stat().st_size
        start, end = 0, size
        rng = self.headers.get("Range")
        if rng:
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            a, b = m.group(1), m.group(2)
            if a == "":
                start, end = max(0, size - int(b)), size
            else:
                start, end = int(a), size if b == "" else min(size, int(b) + 1)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if not head:
            with open(path, "rb") as f:
                f.seek(start)
                self.wfile.write(f.read(end - start))


class Server(http.server.ThreadingHTTPServer):
    # The default backlog (5) drops the SYNs of 64 connections opened at once: the client then
    # waits for a TCP retransmission (1 s, 3 s, ...), which is no cost of the probe.
    request_queue_size = 1024


def start_http(root):
    RangeHandler.root = Path(root)
    srv = Server(("127.0.0.1", 0), RangeHandler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def probe(target, values, env, extra=()):
    """Runs `sbbf probe --stats --format json`; returns (wall, per-file stats lines)."""
    args = [str(SBBF), "probe", "--stats", "--format", "json", *extra, target, "key"]
    if isinstance(values, Path):
        args += ["--values-from", str(values)]
    else:
        args += values
    t0 = time.perf_counter()
    p = subprocess.run(args, capture_output=True, env=dict(os.environ, **env))
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(args[:8])} ...: {p.stderr.decode()}")
    lines = [json.loads(l) for l in p.stdout.decode().splitlines()]
    return wall, lines


def gen_small(dirpath, n, rng):
    """`n` files of one row group of 1,000 random keys, a filter on `key`; returns a stored key
    of the first file."""
    dirpath.mkdir(parents=True, exist_ok=True)
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    first = None
    for i in range(n):
        keys = alphabet[rng.integers(0, len(alphabet), 1000 * 16, dtype=np.uint8)]
        key = pa.StringArray.from_buffers(
            1000, pa.py_buffer(np.arange(0, 16 * 1001, 16, dtype=np.int32)), pa.py_buffer(keys)
        )
        pq.write_table(pa.table({"key": key}), dirpath / f"part-{i:05}.parquet",
                       bloom_filter_options={"key": {"ndv": 1000, "fpp": 0.01}})
        first = first or key[0].as_py()
    return first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows-per-rg", type=int, default=100_000)
    ap.add_argument("--latency-ms", default="0,20,50")
    ap.add_argument("--files", default="10,100,1000")
    ap.add_argument("--no-build", action="store_true", help="use target/release/sbbf as it is")
    ap.add_argument("--stores", default="http,s3",
                    help="single-file runs on: http, s3 (moto copies the whole object for each "
                         "ranged GET, about 0.5 s per request on the 805 MiB file)")
    args = ap.parse_args()
    path, picks = big_file(args.rows_per_rg)
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-p", "sbbf-cli", "--no-default-features",
                        "--features", "object_store"], cwd=ROOT, check=True)
    counts = [int(x) for x in args.files.split(",") if x]
    stores = set(args.stores.split(","))
    rng = np.random.default_rng(11)
    small = {}
    for n in counts:
        d = OUT / f"many{n}"
        marker = d / "first.key"
        if not marker.exists():
            print(f"generating {n} small files ...", file=sys.stderr)
            marker.write_text(gen_small(d, n, rng))
        small[n] = (d, marker.read_text())
    # One stored key; one stored key per row group; those 64 and 936 keys stored nowhere.
    value_sets = {
        1: [picks[17]],
        64: list(picks),
        1000: list(picks) + [f"absent-{i:09}" for i in range(1000 - len(picks))],
    }

    rows, many_rows = [], []
    latencies = [int(x) for x in args.latency_ms.split(",")]

    # Plain HTTP: a range server behind the latency proxy.
    srv = start_http(OUT)
    hproxy = Proxy(srv.server_address[1])
    # S3: moto behind the latency proxy.
    moto, mport, s3 = start_moto()
    try:
        from boto3.s3.transfer import TransferConfig

        if "s3" in stores:
            s3.upload_file(str(path), "bench", "rg64.parquet",
                           Config=TransferConfig(multipart_threshold=2**40))
        for n, (d, _) in small.items():
            for f in sorted(d.glob("*.parquet")):
                s3.upload_file(str(f), "bench", f"many{n}/{f.name}")
        sproxy = Proxy(mport)
        s3env = s3_env(sproxy)
        for ms in latencies:
            hproxy.latency = sproxy.latency = ms / 1000
            for where, target, env, proxy in [
                ("HTTP", f"http://127.0.0.1:{hproxy.port}/{path.name}", {}, hproxy),
                ("S3", "s3://bench/rg64.parquet", s3env, sproxy),
            ]:
                if where.lower() not in stores:
                    continue
                for nv, values in value_sets.items():
                    walls = []
                    for _ in range(3):
                        before = proxy.requests
                        wall, lines = probe(target, values, env)
                        seen = proxy.requests - before
                        walls.append(wall)
                    st = lines[0]["stats"]
                    rows.append((where, ms, nv, seen, st["requests"], st["waves"], st["bytes"],
                                 statistics.median(walls), st["waves"] * ms / 1000))
            for n, (d, key) in small.items():
                walls = []
                for _ in range(3):
                    before = sproxy.requests
                    wall, lines = probe(f"s3://bench/many{n}/", [key], s3env)
                    seen = sproxy.requests - before
                    walls.append(wall)
                per_file = max(l["stats"]["requests"] for l in lines)
                waves = max(l["stats"]["waves"] for l in lines)
                floor_trips = 1 + math.ceil(n * per_file / CONCURRENCY)
                many_rows.append((n, ms, seen, per_file, waves, statistics.median(walls),
                                  floor_trips, floor_trips * ms / 1000))
    finally:
        moto.terminate()
        srv.shutdown()

    # The planner alone: an in-memory store that holds each request (no server CPU).
    floor_tables = []
    for ms in latencies:
        if ms:
            p = subprocess.run(["cargo", "run", "--release", "-q", "-p", "sbbf-parquet", "--features",
                                "object_store", "--example", "latency_floor", "--", str(ms)],
                               cwd=ROOT, capture_output=True, check=True)
            floor_tables.append(p.stdout.decode())

    # Many values, locally: 100,000 keys (64 stored ones repeated among absent ones).
    vals = OUT / "values_100k.txt"
    vals.write_text("\n".join((picks[i % len(picks)] if i % 100 == 0 else f"nokey-{i:010}")
                              for i in range(100_000)) + "\n")
    local = []
    for fmt in ("text", "json"):
        t = subprocess.run(["/usr/bin/time", "-f", "%e %M", str(SBBF), "probe", "--format", fmt,
                            str(path), "key", "--values-from", str(vals)],
                           capture_output=True)
        secs, kib = t.stderr.decode().strip().splitlines()[-1].split()
        local.append((fmt, float(secs), int(kib) / 1024))

    size = path.stat().st_size
    print(f"\nOne file: {path.name}, {size / 2**20:.0f} MiB, 64 row groups x {args.rows_per_rg} rows, "
          f"filters on `key` with bloom_filter_length (pyarrow {pa.__version__}); release `sbbf`; "
          f"every request held for the added latency by a proxy.\n")
    print("| store | added latency | values | requests (proxy) | requests (stats) | waves | bytes | wall (median of 3) | floor (waves x latency) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for where, ms, nv, seen, req, waves, b, wall, floor in rows:
        print(f"| {where} | {ms} ms | {nv} | {seen} | {req} | {waves} | {b / 2**10:.0f} KiB | "
              f"{wall:.2f} s | {floor:.2f} s |")
    print(f"\nA prefix of small files (one row group of 1,000 keys each), 1 value, S3 (moto), "
          f"--concurrency {CONCURRENCY} (the default).\n")
    print("| files | added latency | requests (proxy) | requests per file | waves per file | wall (median of 3) | floor round trips | floor | wall / floor |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, ms, seen, per_file, waves, wall, trips, floor in many_rows:
        ratio = f"{wall / floor:.2f}" if floor else "-"
        print(f"| {n} | {ms} ms | {seen} | {per_file} | {waves} | {wall:.2f} s | {trips} | "
              f"{floor:.2f} s | {ratio} |")
    for t in floor_tables:
        print(t)
    print("\n100,000 values (`--values-from`, 1 in 100 stored) on the local file:\n")
    print("| format | wall | peak memory |")
    print("|---|---:|---:|")
    for fmt, secs, mib in local:
        print(f"| {fmt} | {secs:.2f} s | {mib:.0f} MiB |")


if __name__ == "__main__":
    main()
