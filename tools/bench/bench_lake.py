"""Delta and Iceberg tables of many files: what opening the snapshot costs, then one value.

    nice -n 10 tools/.venv/bin/python tools/bench/bench_lake.py [--files 10000] [--latency-ms 20]
                                    [--runs 3] [--regen] [--sbbf PATH] [--query-sbbf PATH]

Generates (once per --files N, into target/bench-lake/N/; --regen rewrites it):

  delta/       a Delta table of N Parquet files written by pyarrow (one row group of 100 rows,
               `id int64` and `s string`, a Bloom filter on `id` at 1 % FPP; file i holds the ids
               i*100 .. i*100+99), committed with deltalake's write transactions (no rewrite of
               the data): 10 commits, a checkpoint, then 2 commits of one file each, every add
               with `stats` (numRecords, minValues, maxValues, nullCount)
  iceberg/     a pyiceberg SqlCatalog warehouse (file://) with table ns.t (id long, s string):
               the same data in files that carry the schema's field ids, added in 10 batches
  iceberg-s3/  the same Iceberg table made for the S3 test server: its metadata written by
               pyiceberg with the warehouse s3://bench/iceberg (absolute s3:// paths), kept here
               (keys below the bucket) so that later runs only upload it with the data files

Every table is checked after it is written (deltalake's file list and row count, pyiceberg's
plan_files). The value asked for, K = (N/2)*100 + 7, lies in the file in the middle of the table.

Then, for each table, on local disk and on the S3 test server (moto behind the latency proxy of
bench_query.py, which here also records each request's method and path), runs --runs times each
(median wall) the steps below, with the `sbbf` under test (--sbbf, default
$CARGO_TARGET_DIR/release/sbbf; `query` from --query-sbbf, default the same binary, which must
be built with the `query` feature):

  open+footers     sbbf probe T id -1 --no-index --format json --stats (the snapshot, then every
                   file's footer and filter: no file holds -1)
  open (query)     sbbf query T "SELECT count(*) ... WHERE id = -1" --no-index --stats: the
                   snapshot's statistics rule every file out, so no data page is needed (any
                   footer the query still reads shows in `requests` less `log/meta`)
  probe K          sbbf probe T id K --no-index --format json --stats
  query K          sbbf query T "SELECT count(*) ... WHERE id = K" --no-index --stats
  index build      sbbf index build T --format json (once; a lake table it refuses is reported
                   as "refused: ..." and the steps that need the index are left out, saying so)
  open+index       sbbf probe T id -1 --format json --stats (the snapshot and the index only)
  probe K +index   sbbf probe T id K --format json --stats
  query K +index   sbbf query T "SELECT count(*) ... WHERE id = K" --stats
  as-directory     (Delta) sbbf probe T id K --as-directory --no-index: the folder as plain files

Reading the table: `requests` are the HTTP requests the proxy saw ("-" on local disk, where
none are made); `log/meta` those under `_delta_log/` or `metadata/` (the snapshot); `LIST
log/meta` and `LIST data` the LIST requests of the snapshot's folders and of anything else below
the table (the data prefix, the table root included; the index folder's own LISTs are in neither);
`waves` are round trips: `snap` counted by the proxy over the snapshot's requests (a request
that arrives one latency or more after the first request of the current wave starts the next
wave: it could only have been sent after some answer), `all` the same over every request, and
`sbbf` the figure `--stats` reports (probe only). `answer` is checked on every run: the snapshot's
file count and version, the files that may hold the value (for K the file holding it, plus the
filters' false positives: at 1 % FPP about N/100 of the other files; the same set in every run,
place and mode), the query's count (0 for -1, 1 for K). Any wrong answer, failed command or
missing tool stops the script (status 1).
The last lines compare with the targets: a 10,000-file Delta snapshot with a checkpoint opened in
at most 3 waves, and no LIST of the data prefix when reading Delta or Iceberg as a table.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_query import ROOT, Proxy, s3_env, start_moto  # noqa: E402

OUT = ROOT / "target" / "bench-lake"
ROWS = 100  # rows (and ids) per file
BATCHES = 10  # commits / add_files batches before the Delta checkpoint
BUCKET = "bench"  # start_moto's bucket
DELTA_KEY = "delta/"
ICE_KEY = "iceberg/ns/t/"  # the table's location below the bucket (given to create_table)
SNAPSHOT_DIRS = ("_delta_log/", "metadata/")
INDEX_DIR = "_sbbf_index/"


def fail(msg):
    sys.exit(f"bench_lake.py: {msg}")


# ----------------------------------------------------------------------------------------------
# the tables


def file_rows(i, field_ids):
    """File i: ids i*ROWS .. i*ROWS+ROWS-1 and s = 's<id>' (Arrow fields with Parquet field ids
    when `field_ids`)."""
    ids = np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64)
    meta = (lambda n: {b"PARQUET:field_id": str(n).encode()}) if field_ids else (lambda n: None)
    schema = pa.schema([pa.field("id", pa.int64(), metadata=meta(1)),
                        pa.field("s", pa.string(), metadata=meta(2))])
    return pa.table([pa.array(ids), pa.array([f"s{v}" for v in ids.tolist()])], schema=schema)


def write_file(path, i, field_ids):
    t = file_rows(i, field_ids)
    pq.write_table(t, path, compression="zstd", row_group_size=ROWS,
                   bloom_filter_options={"id": {"ndv": ROWS, "fpp": 0.01}})
    return t


def delta_name(i):
    return f"part-{i:05d}-c000.zstd.parquet"


def iceberg_name(i):
    return f"{i:05d}-bench.parquet"


def delta_commits(d, n, write):
    """A Delta table at `d` of N files: file i written by `write(i)` (its name and its rows, a
    pyarrow table), added with `stats` in BATCHES commits, a checkpoint, then 2 commits of one
    file each; checked with deltalake (files, rows, version, checkpoint). Gives the version."""
    from deltalake import DeltaTable, QueryBuilder
    from deltalake.transaction import AddAction

    d.mkdir(parents=True)
    now = int(time.time() * 1000)
    schema = None

    def add(i):
        nonlocal schema
        name, t = write(i)
        schema = t.schema
        cols = {c: t.column(c).to_pylist() for c in t.column_names}
        stats = {"numRecords": t.num_rows, "minValues": {c: min(v) for c, v in cols.items()},
                 "maxValues": {c: max(v) for c, v in cols.items()},
                 "nullCount": {c: 0 for c in cols}}
        return AddAction(name, (d / name).stat().st_size, {}, now, True, json.dumps(stats))

    head = np.array_split(np.arange(n - 2), BATCHES)
    for k, batch in enumerate([*head, None, [n - 2], [n - 1]]):
        if batch is None:
            DeltaTable(str(d)).create_checkpoint()
            continue
        adds = [add(int(i)) for i in batch]
        if k == 0:
            DeltaTable.create(str(d), schema=schema, mode="error")
        DeltaTable(str(d)).create_write_transaction(adds, mode="append", schema=schema)
    dt = DeltaTable(str(d))
    rows = QueryBuilder().register("t", dt).execute("SELECT count(*) AS n FROM t").read_all()
    got = (len(dt.file_uris()), rows.column(0)[0].as_py(), dt.version())
    if got != (n, n * ROWS, BATCHES + 2):
        fail(f"Delta table {d}: (files, rows, version) {got}, expected {(n, n * ROWS, BATCHES + 2)}")
    if not (d / "_delta_log" / "_last_checkpoint").exists():
        fail(f"Delta table {d}: no checkpoint written")
    return dt.version()


def make_delta(d, n):
    """N files, BATCHES commits, a checkpoint, then 2 commits of one file each."""
    return delta_commits(d, n, lambda i: (delta_name(i), write_file(d / delta_name(i), i, False)))


def iceberg_catalog(warehouse, db, **props):
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog("bench", uri=f"sqlite:///{db}", warehouse=warehouse, **props)


def iceberg_table(cat, location, paths, names=("id", "s")):
    """ns.t (`names`: a long and a string) with `paths` added in BATCHES add_files commits;
    checked through plan_files."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    cat.create_namespace("ns")
    schema = Schema(NestedField(1, names[0], LongType(), required=False),
                    NestedField(2, names[1], StringType(), required=False))
    t = cat.create_table("ns.t", schema=schema, location=location)
    for batch in np.array_split(np.array(paths, dtype=object), BATCHES):
        t.add_files([str(p) for p in batch], check_duplicate_files=False)
    t = cat.load_table("ns.t")
    planned = len(list(t.scan().plan_files()))
    if planned != len(paths):
        fail(f"Iceberg table {t.location()}: plan_files names {planned} files, expected {len(paths)}")
    return t


def make_iceberg(wh, n):
    wh.mkdir(parents=True)
    data = wh / "ns" / "t" / "data"
    data.mkdir(parents=True)
    for i in range(n):
        write_file(data / iceberg_name(i), i, True)
    t = iceberg_table(iceberg_catalog(f"file://{wh}", wh / "catalog.db"), f"file://{wh}/ns/t",
                      [f"file://{data / iceberg_name(i)}" for i in range(n)])
    return t.metadata.current_snapshot_id


def make_iceberg_s3(cache, local_wh, n, s3, moto_port):
    """The Iceberg table written by pyiceberg straight to moto (no proxy) with the local data
    files uploaded first; its metadata objects are then kept in `cache` (keys below the bucket)."""
    upload(s3, local_wh / "ns" / "t" / "data", ICE_KEY + "data/")
    props = {"s3.endpoint": f"http://127.0.0.1:{moto_port}", "s3.access-key-id": "x",
             "s3.secret-access-key": "x", "s3.region": "us-east-1"}
    cache.mkdir(parents=True)
    t = iceberg_table(iceberg_catalog(f"s3://{BUCKET}/iceberg", cache / "catalog.db", **props),
                      f"s3://{BUCKET}/{ICE_KEY}".rstrip("/"),
                      [f"s3://{BUCKET}/{ICE_KEY}data/{iceberg_name(i)}" for i in range(n)])
    if t.location().rstrip("/") != f"s3://{BUCKET}/{ICE_KEY}".rstrip("/"):
        fail(f"pyiceberg put ns.t at {t.location()}, not s3://{BUCKET}/{ICE_KEY}")
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=ICE_KEY + "metadata/")
    for page in pages:
        for o in page.get("Contents", []):
            dest = cache / "bucket" / o["Key"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(BUCKET, o["Key"], str(dest))


def upload(s3, folder, prefix, skip=(INDEX_DIR,)):
    """Every file below `folder` to s3://BUCKET/<prefix><relative path> (16 at a time)."""
    files = [p for p in sorted(folder.rglob("*")) if p.is_file()
             and not any(p.relative_to(folder).as_posix().startswith(s) for s in skip)]
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda p: s3.upload_file(str(p), BUCKET, prefix + p.relative_to(folder).as_posix()),
                    files))
    return len(files)


# ----------------------------------------------------------------------------------------------
# the proxy: bench_query's, also recording each request


class PathProxy(Proxy):
    """bench_query.Proxy that also keeps (arrival time, method, target) of every request."""

    def __init__(self, upstream_port):
        self.log = []
        super().__init__(upstream_port)

    def seen(self, data):
        line = data.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        self.log.append((time.perf_counter(), line[0], line[1] if len(line) > 1 else ""))


def classify(method, target, table_key):
    """(is_list, where) of one request: where is 'meta' (the snapshot's folders), 'index',
    'data' (anything else below the table, its root included) or 'other'."""
    u = urllib.parse.urlsplit(target)
    q = urllib.parse.parse_qs(u.query)
    path = urllib.parse.unquote(u.path).lstrip("/")
    is_list = method == "GET" and ("list-type" in q or path.rstrip("/") == BUCKET)
    key = q.get("prefix", [""])[0] if is_list else path.split("/", 1)[1] if "/" in path else ""
    if not key.startswith(table_key) and not table_key.startswith(key):
        return is_list, "other"
    rel = key[len(table_key):] if key.startswith(table_key) else ""
    if rel.startswith(SNAPSHOT_DIRS):
        return is_list, "meta"
    if rel.startswith(INDEX_DIR):
        return is_list, "index"
    return is_list, "data"


def count_waves(times, latency):
    """Round trips among requests that arrived at `times`: a request arriving a latency or more
    after the first request of the current wave opens the next one."""
    waves, start = 0, None
    for t in sorted(times):
        if start is None or t >= start + 0.9 * latency:
            waves, start = waves + 1, t
    return waves


# ----------------------------------------------------------------------------------------------
# running sbbf


def figures(proxy, table_key):
    """What the proxy saw since its log was cleared, by kind (see the module's docstring)."""
    kinds = [(t,) + classify(m, tg, table_key) for t, m, tg in list(proxy.log)]
    return {"requests": len(kinds),
            "meta": sum(1 for _, _, w in kinds if w == "meta"),
            "list_meta": sum(1 for _, lst, w in kinds if lst and w == "meta"),
            "list_data": sum(1 for _, lst, w in kinds if lst and w == "data"),
            # with no latency added, the arrival times tell no round trips apart
            "waves_snap": count_waves([t for t, _, w in kinds if w == "meta"], proxy.latency)
            if proxy.latency else None,
            "waves_all": count_waves([t for t, _, _ in kinds], proxy.latency) if proxy.latency else None}


def run(cmd, env, ok=(0,)):
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode not in ok:
        fail(f"{' '.join(map(str, cmd))}: exit {p.returncode}\n{p.stderr.strip()[-2000:]}")
    return wall, p


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def probe_answer(p):
    """(snapshot line, basenames of the files that may hold a value, sbbf's waves or None)."""
    lines = json_lines(p.stdout)
    table = next((x["table"] for x in lines if "table" in x), None)
    maybe = set()
    for x in lines:
        if "error" in x:
            fail(f"probe could not read {x.get('file')}: {x['error']}")
        for rg in x.get("row_groups") or []:
            if any(v["result"] != "absent" for v in rg["values"]):
                maybe.add(x["file"].rsplit("/", 1)[-1])
    idx = next((x["index"] for x in json_lines(p.stderr) if "index" in x), None)
    return table, maybe, (idx or {}).get("waves")


class Bench:
    def __init__(self, a, sbbf, qsbbf):
        self.a, self.sbbf, self.qsbbf = a, sbbf, qsbbf
        self.rows = []
        self.maybe = {}  # (table, value) -> the files the first probe said may hold it

    def measure(self, label, place, step, cmd, env, check, proxy=None, table_key="", ok=(0,),
                runs=None):
        """Runs `cmd` (runs times), checks each answer, records one row of medians."""
        walls, figs, answer = [], [], None
        for _ in range(runs or self.a.runs):
            if proxy:
                proxy.log = []
            wall, p = run(cmd, env, ok)
            answer, sbbf_waves = check(p)
            walls.append(wall)
            f = {"sbbf_waves": sbbf_waves, **(figures(proxy, table_key) if proxy else {})}
            figs.append(f)

        def med(k):
            vals = [f[k] for f in figs if f.get(k) is not None]
            return statistics.median_low(vals) if vals else None

        row = {"table": label, "place": place, "step": step, "wall": statistics.median(walls),
               "answer": answer, **{k: med(k) for k in
                                    ("requests", "meta", "list_meta", "list_data", "waves_snap",
                                     "waves_all", "sbbf_waves")}}
        self.rows.append(row)
        print(f"  {label} {place} {step}: {row['wall']:.2f} s, {answer}", file=sys.stderr, flush=True)
        return row

    def note(self, label, place, step, text):
        self.rows.append({"table": label, "place": place, "step": step, "wall": None,
                          "answer": text})
        print(f"  {label} {place} {step}: {text}", file=sys.stderr, flush=True)

    def table(self, label, place, path, env, n, version, k, name, proxy=None, table_key="",
              delta=False):
        sb, qs = str(self.sbbf), str(self.qsbbf)
        want = name(n // 2)

        def same_files(value, maybe):
            """The files that may hold `value`: the holding file (for K) and the same set in every
            run, place and mode (the rest are the filters' false positives)."""
            ref = self.maybe.setdefault((label, value), maybe)
            if value == k and want not in maybe:
                fail(f"{label} {place}: {want}, which holds {k}, is not among the files that may")
            if maybe != ref:
                fail(f"{label} {place} probe {value}: {len(maybe)} files may hold it, other than "
                     f"the {len(ref)} of the first probe: {sorted(maybe ^ ref)[:10]}")
            fp = len(maybe) - (value == k)
            return f"{int(value == k)} + {fp} false positive(s) of {n} files"

        def probe_check(value):
            def check(p):
                table, maybe, waves = probe_answer(p)
                if table is None or table.get("files") != n or str(table.get("version")) != str(version):
                    fail(f"{label} {place}: snapshot {table}, expected {n} files at version {version}")
                return same_files(value, maybe), waves
            return check

        def dir_check(p):
            _, maybe, waves = probe_answer(p)
            return same_files(k, maybe), waves

        def query_check(expect):
            def check(p):
                rows = json_lines(p.stdout)
                stats = json_lines(p.stderr)
                if len(rows) != 1 or rows[0].get("n") != expect:
                    fail(f"{label} {place} query: {p.stdout.strip()[:300]}, expected n = {expect}")
                st = stats[-1] if stats else {}
                ver = (st.get("versions") or {}).get("t") or {}
                if ver.get("files") != n or str(ver.get("version")) != str(version):
                    fail(f"{label} {place} query: snapshot {ver}, expected {n} files at version {version}")
                return (f"count {expect}; files pruned by table stats "
                        f"{st.get('files_pruned_table_stats', 0)}, row groups read "
                        f"{st.get('row_groups_read')}, pruned by the index "
                        f"{st.get('row_groups_pruned_index', 0)}"), None
            return check

        kw = dict(proxy=proxy, table_key=table_key)
        probe = [sb, "probe", path, "id"]
        js = ["--format", "json", "--stats"]
        q = lambda v: [qs, "query", path, f"SELECT count(*) AS n FROM t WHERE id = {v}",  # noqa: E731
                       "--format", "json", "--stats"]
        self.measure(label, place, "open+footers: probe -1", [*probe, "-1", "--no-index", *js], env,
                     probe_check(-1), ok=(0, 1), **kw)
        self.measure(label, place, "open (query): query -1", [*q(-1), "--no-index"], env,
                     query_check(0), **kw)
        self.measure(label, place, "probe K", [*probe, str(k), "--no-index", *js], env,
                     probe_check(k), **kw)
        self.measure(label, place, "query K", [*q(k), "--no-index"], env, query_check(1), **kw)
        if delta:
            self.measure(label, place, "as-directory: probe K", [*probe, str(k), "--as-directory",
                                                                 "--no-index", *js], env, dir_check, **kw)
        if proxy is None:
            time.sleep(2.1)  # files changed in the last 2 s are not covered by a build
        refused = []

        def build_check(p):
            if p.returncode != 0:
                refused.append((p.stderr.strip().splitlines() or ["(no message)"])[-1])
                return f"refused: {refused[-1]}", None
            built = json.loads(p.stdout)
            if built.get("files") != n:
                fail(f"{label} {place} index build: {built.get('files')} files indexed, expected {n}")
            return f"{built['files']} files, {built.get('index_bytes')} index bytes", None

        self.measure(label, place, "index build (1 run)", [sb, "index", "build", path, "--format",
                                                           "json"], env, build_check,
                     ok=range(256), runs=1, **kw)
        if refused:
            for step in ("open+index: probe -1", "probe K +index", "query K +index"):
                self.note(label, place, step, "no index (the build was refused)")
            return
        self.measure(label, place, "open+index: probe -1", [*probe, "-1", *js], env, probe_check(-1),
                     ok=(0, 1), **kw)
        self.measure(label, place, "probe K +index", [*probe, str(k), *js], env, probe_check(k), **kw)
        self.measure(label, place, "query K +index", q(k), env, query_check(1), **kw)


def cell(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)


def print_table(rows, runs):
    print(f"| table | where | step | wall (median of {runs}) | requests | log/meta | LIST log/meta | LIST data "
          "| waves snap / all (proxy) | waves (sbbf) | answer |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        waves = "-" if r.get("waves_all") is None else f"{r['waves_snap']} / {r['waves_all']}"
        print(f"| {r['table']} | {r['place']} | {r['step']} | {cell(r['wall'], '{:.2f} s')} | "
              f"{cell(r.get('requests'))} | {cell(r.get('meta'))} | {cell(r.get('list_meta'))} | "
              f"{cell(r.get('list_data'))} | {waves} | {cell(r.get('sbbf_waves'))} | {r['answer']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--latency-ms", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--regen", action="store_true", help="rewrite the tables of this --files")
    default = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "sbbf"
    ap.add_argument("--sbbf", type=Path, default=default, help=f"the binary (default {default})")
    ap.add_argument("--query-sbbf", type=Path,
                    help="the binary for `sbbf query` (default --sbbf; needs the `query` feature)")
    a = ap.parse_args()
    n = a.files
    if n < 10 or n % 2:
        fail("--files must be an even number >= 10")
    sbbf = a.sbbf.resolve()
    qsbbf = (a.query_sbbf or a.sbbf).resolve()
    for b in {sbbf, qsbbf}:
        if not b.exists():
            fail(f"{b} missing: cargo build --release -p sbbf-cli --features query (or --sbbf PATH)")
    h = subprocess.run([str(qsbbf), "query", "--help"], capture_output=True, text=True)
    if h.returncode != 0 or "not in this build" in h.stdout + h.stderr:
        fail(f"{qsbbf} has no `query` (built without the `query` feature): cargo build --release "
             f"-p sbbf-cli --features query, or --query-sbbf PATH")
    moto_bin = ROOT / "tools" / ".venv" / "bin" / "moto_server"
    if not moto_bin.exists():
        fail("moto_server missing: run bash tools/setup/setup-s3-test.sh")

    base = OUT / str(n)
    meta_file = base / "tables.json"
    t0 = time.perf_counter()
    if a.regen and base.exists():
        shutil.rmtree(base)
    if not meta_file.exists():
        shutil.rmtree(base, ignore_errors=True)
        print(f"generating {n}-file Delta and Iceberg tables in {base} ...", file=sys.stderr, flush=True)
        meta = {"delta_version": make_delta(base / "delta", n)}
        print(f"  Delta: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        meta["iceberg_snapshot"] = make_iceberg(base / "iceberg", n)
        meta_file.write_text(json.dumps(meta) + "\n")
    meta = json.loads(meta_file.read_text())
    delta_dir, ice_dir = base / "delta", base / "iceberg" / "ns" / "t"
    for d in (delta_dir, ice_dir):  # an index from an earlier run would answer the no-index steps
        shutil.rmtree(d / INDEX_DIR.rstrip("/"), ignore_errors=True)
    gen_s = time.perf_counter() - t0
    env_local = dict(os.environ)
    k = (n // 2) * ROWS + 7  # an id of the file in the middle

    bench = Bench(a, sbbf, qsbbf)
    t1 = time.perf_counter()
    print("local disk ...", file=sys.stderr, flush=True)
    bench.table("Delta", "local", str(delta_dir), env_local, n, meta["delta_version"], k,
                delta_name, delta=True)
    bench.table("Iceberg", "local", str(ice_dir), env_local, n, meta["iceberg_snapshot"],
                k, iceberg_name)
    local_s = time.perf_counter() - t1

    moto, mport, s3 = start_moto()
    try:
        t2 = time.perf_counter()
        upload(s3, delta_dir, DELTA_KEY)
        ice_cache = base / "iceberg-s3"
        if (ice_cache / "done").exists():
            upload(s3, ice_dir / "data", ICE_KEY + "data/")
            upload(s3, ice_cache / "bucket", "")
        else:
            shutil.rmtree(ice_cache, ignore_errors=True)
            print("writing the Iceberg table for S3 through pyiceberg ...", file=sys.stderr, flush=True)
            make_iceberg_s3(ice_cache, base / "iceberg", n, s3, mport)
            (ice_cache / "done").write_text("")
        time.sleep(2.1)  # objects written in the last 2 s are not covered by an index build
        upload_s = time.perf_counter() - t2
        proxy = PathProxy(mport)
        proxy.latency = a.latency_ms / 1000
        env = dict(os.environ, **s3_env(proxy))
        ice_s3_version = json.loads((ice_cache / "bucket" / newest_metadata(ice_cache)).read_text())[
            "current-snapshot-id"]
        t3 = time.perf_counter()
        print(f"S3 test server, {a.latency_ms} ms per request ...", file=sys.stderr, flush=True)
        bench.table("Delta", "S3", f"s3://{BUCKET}/{DELTA_KEY}", env, n, meta["delta_version"],
                    k, delta_name, proxy=proxy, table_key=DELTA_KEY, delta=True)
        bench.table("Iceberg", "S3", f"s3://{BUCKET}/{ICE_KEY}", env, n, ice_s3_version,
                    k, iceberg_name, proxy=proxy, table_key=ICE_KEY)
        s3_s = time.perf_counter() - t3
    finally:
        moto.terminate()
        moto.wait()

    print(f"\n{n} files of {ROWS} rows (one row group, Bloom filter on `id` at 1 % FPP, pyarrow "
          f"{pa.__version__}); Delta version {meta['delta_version']} (checkpoint at {BATCHES}, 2 "
          f"commits after it); Iceberg: {BATCHES} add_files snapshots. K = {k}. S3: moto behind a "
          f"proxy holding each request {a.latency_ms} ms. probe: {sbbf}; query: {qsbbf}. Wall: median of {a.runs}.\n")
    print_table(bench.rows, a.runs)
    print()
    targets(bench.rows, n)
    print(f"\nTimes: tables {gen_s:.0f} s (generated or found), local runs {local_s:.0f} s, "
          f"S3 upload (with the S3 Iceberg table's metadata when first written) {upload_s:.0f} s, S3 runs {s3_s:.0f} s.")


def newest_metadata(cache):
    files = sorted((cache / "bucket" / ICE_KEY / "metadata").glob("*.metadata.json"))
    if not files:
        fail(f"{cache}: no Iceberg metadata file kept")
    return files[-1].relative_to(cache / "bucket")


def targets(rows, n):
    """The issue's targets against the S3 rows: a Delta snapshot in <= 3 waves, and no LIST of
    the data prefix when a table is read as a table (as-directory lists it by design)."""
    as_table = [r for r in rows if r["place"] == "S3" and r.get("waves_all") is not None
                and not r["step"].startswith("as-directory")]
    delta = [r for r in as_table if r["table"] == "Delta"]
    if delta:
        worst = max(delta, key=lambda r: r["waves_snap"])
        ok = worst["waves_snap"] <= 3
        print(f"- Delta snapshot, {n} files with a checkpoint, on S3: {worst['waves_snap']} wave(s), "
              f"{worst['meta']} request(s) under _delta_log/ (most of any step: {worst['step']}); "
              f"target <= 3 waves: {'met' if ok else 'MISSED'}")
    for name in ("Delta", "Iceberg"):
        bad = [f"{r['step']} ({r['list_data']})" for r in as_table
               if r["table"] == name and r["list_data"]]
        print(f"- {name} read as a table on S3: LIST of the data prefix in "
              f"{', '.join(bad) if bad else 'no step'}; target 0: {'MISSED' if bad else 'met'}")


if __name__ == "__main__":
    main()
