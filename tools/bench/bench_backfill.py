"""Bloom filters into a Delta table: `sbbf add TABLE` against rewriting the table with deltalake.

    tools/.venv/bin/python tools/bench/bench_backfill.py [--files 1000] [--rows-per-file 10000]
                                    [--runs 3] [--dir target/bench-backfill] [--sbbf PATH]

The venv comes from tools/setup/setup-venv.sh (deltalake, pyarrow from the Python package
registry); `sbbf` must be a build that writes into tables (`sbbf add TABLE -c COL` without
-o/--in-place): `cargo build --release -p sbbf-cli`. The default binary is
$CARGO_TARGET_DIR/release/sbbf (CARGO_TARGET_DIR defaults to target/ in the repository).

The table (made once into DIR/table and reused while DIR/stamp.json records the same
parameters; anything else there is replaced): a Delta table of --files data files of
--rows-per-file rows each, written by deltalake's own writer with its default writer properties
(snappy, no Bloom filter), columns `id int64` (unique: file i holds i*R .. i*R+R-1), `s string`
(f"s{id}") and `v float64` (id / 7). It is written by one `write_deltalake(mode="append")` per
file: deltalake 1.6.6's writer has no rows-per-file option (it rolls to a new file only when
`target_file_size` is reached, checked every 1,024 rows, so one call cannot cut exactly N files
of R rows); an append costs 30-40 ms, and every 100th commit leaves a checkpoint (deltalake's
default).

Each run works on a fresh copy of the table (shutil.copytree, not timed) and times one of:

  ours    `sbbf add COPY -c id --format json`: for every data file lacking a filter on `id`, a
          copy with the filter beside it (the original's bytes before its footer kept as they
          are), then one Delta commit (remove + add, dataChange false). Bytes read and written
          are the figures of its JSON report (whole data files, read and written).
  theirs  the way without sbbf: DeltaTable(COPY).to_pyarrow_table(), then write_deltalake(COPY,
          table, mode="overwrite") with WriterProperties asking for a Bloom filter on `id`
          (fpp 0.01) and snappy compression like the original's files (a WriterProperties
          without `compression` writes UNCOMPRESSED files). File sizes are deltalake's (its
          default target_file_size, 100 MiB, so the table comes back as a few large files).
          Bytes read: the sizes of the files of the version read; bytes written: the sizes of
          the files the new version adds.

The modes take turns (ours, theirs, ours, theirs, ...; --runs each). After every run, and
outside the timing, the result is checked: same row count and sum(id) as the original
(deltalake's QueryBuilder SQL), one new version, every current data file with a filter on every
`id` column chunk (`sbbf inspect COPY -c id --format json`); for ours also: every file swapped
and none kept, the commit's log entry holding exactly one remove and one add per swapped file,
all with dataChange false, each copy starting with its original's bytes up to the original's
footer, and the reported bytes_written equal to the copies' sizes. Any failed check or command
stops the script (status 1).

Printed: a Markdown table (medians over the runs: wall seconds and bytes, theirs varying a little
from run to run; commits and files of the last run), the ratios ours/theirs of wall time and of
bytes written, and `nproc`.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import deltalake
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import (
    BloomFilterProperties,
    ColumnProperties,
    DeltaTable,
    QueryBuilder,
    WriterProperties,
    write_deltalake,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = ROOT / "target" / "bench-backfill"
DEFAULT_SBBF = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "sbbf"
COLUMN = "id"
FPP = 0.01
STAMP_LAYOUT = 1  # bump when the generated table changes for the same parameters


def fail(msg):
    print(f"FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------- the table


def file_data(i, rows):
    """The rows of data file i: ids i*rows .. i*rows+rows-1."""
    ids = pa.array(range(i * rows, (i + 1) * rows), pa.int64())
    return pa.table({
        "id": ids,
        "s": pc.binary_join_element_wise("s", pc.cast(ids, pa.string()), ""),
        "v": pc.divide(pc.cast(ids, pa.float64()), 7.0),
    })


def wanted_stamp(files, rows):
    return {"files": files, "rows_per_file": rows, "layout": STAMP_LAYOUT,
            "deltalake": deltalake.__version__}


def ensure_table(base, files, rows):
    """DIR/table, made unless DIR/stamp.json says it is already there with these parameters."""
    table, stamp = base / "table", base / "stamp.json"
    want = wanted_stamp(files, rows)
    if table.is_dir() and stamp.is_file():
        try:
            same = json.loads(stamp.read_text()) == want
            if same and len(DeltaTable(str(table)).file_uris()) == files:
                print(f"table: reusing {table} ({files} files x {rows} rows)")
                return table
        except Exception as e:  # a half-written table: made again below
            print(f"table: {table} unusable ({e}); writing it again")
    stamp.unlink(missing_ok=True)
    shutil.rmtree(table, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    print(f"table: writing {files} files x {rows} rows into {table} (one append per file)",
          flush=True)
    t0 = time.perf_counter()
    for i in range(files):
        write_deltalake(str(table), file_data(i, rows), mode="append")
        if (i + 1) % 100 == 0 or i + 1 == files:
            print(f"  {i + 1}/{files} files, {time.perf_counter() - t0:.1f} s", flush=True)
    if len(DeltaTable(str(table)).file_uris()) != files:
        fail(f"{table}: expected {files} data files after writing")
    stamp.write_text(json.dumps(want, indent=1) + "\n")
    return table


def fresh_copy(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


# ---------------------------------------------------------------------------- reading back


def add_actions(path, version=None):
    """{absolute file path: size} of the data files of the table's version (default current)."""
    dt = DeltaTable(str(path), version=version)
    adds = pa.table(dt.get_add_actions(flatten=True))
    return {
        str(Path(path) / urllib.parse.unquote(p)): s
        for p, s in zip(adds["path"].to_pylist(), adds["size_bytes"].to_pylist())
    }


def count_and_sum(path):
    got = QueryBuilder().register("t", DeltaTable(str(path))).execute(
        f"SELECT count(*) AS n, sum({COLUMN}) AS s FROM t").read_all()
    row = pa.table(got).to_pylist()[0]
    return row["n"], row["s"]


def local_path(url):
    u = urllib.parse.urlparse(url)
    return urllib.parse.unquote(u.path) if u.scheme == "file" else url


def check_filters(sbbf, path, version):
    """Every current data file (as `sbbf inspect` reads the table) has a filter on every chunk of
    COLUMN; the file set is deltalake's. Returns the number of files."""
    cmd = [str(sbbf), "inspect", str(path), "-c", COLUMN, "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"{' '.join(cmd)} exited {out.returncode}:\n{out.stderr}{out.stdout[-2000:]}")
    files, table = set(), None
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if "table" in rec:
            table = rec["table"]
            continue
        if "error" in rec:
            fail(f"inspect: {rec['file']}: {rec['error']}")
        chunks = [c for c in rec["chunks"] if c["column"] == COLUMN]
        if not chunks or not all(c["has_filter"] for c in chunks):
            fail(f"{rec['file']}: a chunk of {COLUMN} without a filter")
        files.add(local_path(rec["file"]))
    if table is None or table.get("version") != version:
        fail(f"inspect read {path} at {table and table.get('version')}, expected version {version}")
    if files != set(add_actions(path)):
        fail(f"inspect's files of {path} are not deltalake's")
    return len(files)


def check_log_entry(path, version, swapped):
    """The commit holds one remove and one add per swapped file, all with dataChange false."""
    entry = Path(path) / "_delta_log" / f"{version:020d}.json"
    removes, adds = set(), set()
    for line in entry.read_text().splitlines():
        action = json.loads(line)
        for kind, into in (("remove", removes), ("add", adds)):
            if kind in action:
                if action[kind].get("dataChange") is not False:
                    fail(f"{entry}: a {kind} with dataChange {action[kind].get('dataChange')}")
                into.add(str(Path(path) / urllib.parse.unquote(action[kind]["path"])))
    if removes != {local_path(s["input"]) for s in swapped}:
        fail(f"{entry}: its removes are not the swapped files")
    if adds != {local_path(s["output"]) for s in swapped}:
        fail(f"{entry}: its adds are not the copies")


def body_len(data):
    """Bytes of a Parquet file before its footer."""
    return len(data) - 8 - int.from_bytes(data[-8:-4], "little")


def check_copies(swapped):
    """Each copy starts with its original's bytes up to the original's footer; their sizes."""
    total = 0
    for s in swapped:
        orig = Path(local_path(s["input"])).read_bytes()
        copy = Path(local_path(s["output"])).read_bytes()
        n = body_len(orig)
        if copy[:n] != orig[:n]:
            fail(f"{s['output']}: does not start with the bytes of {s['input']} before its footer")
        total += len(copy)
    return total


# ---------------------------------------------------------------------------- the two modes


def run_ours(sbbf, copy, expect, n_files):
    cmd = [str(sbbf), "add", str(copy), "-c", COLUMN, "--format", "json"]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        fail(f"{' '.join(cmd)} exited {out.returncode} (a build from before `sbbf add TABLE` "
             f"asks for -o or --in-place):\n{out.stderr}{out.stdout[-2000:]}")
    try:
        rep = json.loads(out.stdout)
    except json.JSONDecodeError:
        fail(f"{' '.join(cmd)}: not one JSON report:\n{out.stdout[:2000]}")
    if rep["committed_version"] is None:
        fail(f"{cmd}: nothing committed: {out.stdout[:2000]}")
    commits = rep["committed_version"] - rep["read_version"]
    if commits != 1 or DeltaTable(str(copy)).version() != rep["committed_version"]:
        fail(f"ours: read {rep['read_version']}, committed {rep['committed_version']}, "
             f"table at {DeltaTable(str(copy)).version()}")
    if len(rep["swapped"]) != n_files or rep["kept"] or rep["withdrawn"]:
        fail(f"ours: swapped {len(rep['swapped'])} of {n_files}, kept {len(rep['kept'])}, "
             f"withdrawn {len(rep['withdrawn'])}")
    if count_and_sum(copy) != expect:
        fail(f"ours: {copy} reads {count_and_sum(copy)}, expected {expect}")
    check_log_entry(copy, rep["committed_version"], rep["swapped"])
    written = check_copies(rep["swapped"])
    if written != rep["bytes_written"]:
        fail(f"ours: bytes_written {rep['bytes_written']}, the copies hold {written}")
    after = check_filters(sbbf, copy, rep["committed_version"])
    return {"wall": wall, "read": rep["bytes_read"], "written": rep["bytes_written"],
            "commits": commits, "rewritten": len(rep["swapped"]), "after": after,
            "tries": rep["tries"]}


def reference_properties():
    return WriterProperties(
        compression="SNAPPY",
        column_properties={COLUMN: ColumnProperties(
            bloom_filter_properties=BloomFilterProperties(set_bloom_filter_enabled=True, fpp=FPP))},
    )


def run_theirs(sbbf, copy, expect, n_files):
    props = reference_properties()
    t0 = time.perf_counter()
    dt = DeltaTable(str(copy))
    read_version = dt.version()
    data = dt.to_pyarrow_table()
    write_deltalake(str(copy), data, mode="overwrite", writer_properties=props)
    wall = time.perf_counter() - t0
    del data, dt
    version = DeltaTable(str(copy)).version()
    read = add_actions(copy, read_version)
    written = add_actions(copy)
    if count_and_sum(copy) != expect:
        fail(f"theirs: {copy} reads {count_and_sum(copy)}, expected {expect}")
    after = check_filters(sbbf, copy, version)
    return {"wall": wall, "read": sum(read.values()), "written": sum(written.values()),
            "commits": version - read_version, "rewritten": len(read), "after": after,
            "tries": 1}


# ---------------------------------------------------------------------------- report


def nproc():
    try:
        return subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return str(os.cpu_count())


def print_report(results, n_files, rows, table_bytes, sbbf):
    ours = results["ours"]

    def med(mode, key="wall"):
        values = [r[key] for r in results[mode]]
        return statistics.median(values) if key == "wall" else statistics.median_low(values)

    print()
    print(f"{n_files} data files x {rows} rows ({n_files * rows} rows, {table_bytes} bytes), "
          f"{len(ours)} run(s) per mode; sbbf: {sbbf}; deltalake {deltalake.__version__}")
    print()
    print("| mode | wall s (median) | data bytes read | data bytes written | commits "
          "| files rewritten | files after |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for mode, label in (("ours", "ours: sbbf add TABLE"),
                        ("theirs", "theirs: deltalake read + overwrite")):
        last = results[mode][-1]
        print(f"| {label} | {med(mode):.3f} | {med(mode, 'read')} | {med(mode, 'written')} "
              f"| {last['commits']} | {last['rewritten']} | {last['after']} |")
    print()
    print(f"ours/theirs: wall {med('ours') / med('theirs'):.3f}, "
          f"bytes written {med('ours', 'written') / med('theirs', 'written'):.3f}")
    for mode in ("ours", "theirs"):
        print(f"{mode} walls: " + ", ".join(f"{r['wall']:.3f}" for r in results[mode])
              + (f"; commit tries {[r['tries'] for r in results[mode]]}" if mode == "ours" else ""))
    print(f"nproc: {nproc()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=1000, help="data files in the table")
    ap.add_argument("--rows-per-file", type=int, default=10000, help="rows in each data file")
    ap.add_argument("--runs", type=int, default=3, help="runs of each mode (median wall)")
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR,
                    help="where the table (reused), its stamp and the scratch copies go")
    ap.add_argument("--sbbf", type=Path, default=DEFAULT_SBBF, help="the sbbf binary")
    a = ap.parse_args()
    if a.files < 1 or a.rows_per_file < 1 or a.runs < 1:
        ap.error("--files, --rows-per-file and --runs must be at least 1")
    sbbf = a.sbbf.resolve()
    if not sbbf.is_file():
        fail(f"{sbbf} is missing: cargo build --release -p sbbf-cli (or --sbbf PATH)")
    base = a.dir.resolve()

    table = ensure_table(base, a.files, a.rows_per_file)
    total = a.files * a.rows_per_file
    expect = (total, total * (total - 1) // 2)
    if count_and_sum(table) != expect:
        fail(f"{table} reads {count_and_sum(table)}, expected {expect}")
    table_bytes = sum(add_actions(table).values())

    modes = {"ours": run_ours, "theirs": run_theirs}
    results = {m: [] for m in modes}
    for run in range(a.runs):
        for mode, fn in modes.items():
            copy = fresh_copy(table, base / mode)
            r = fn(sbbf, copy, expect, a.files)
            results[mode].append(r)
            print(f"run {run + 1}/{a.runs} {mode}: {r['wall']:.3f} s, read {r['read']}, "
                  f"wrote {r['written']}, {r['rewritten']} -> {r['after']} files", flush=True)
    print_report(results, a.files, a.rows_per_file, table_bytes, sbbf)


if __name__ == "__main__":
    main()
