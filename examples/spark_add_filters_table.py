"""Give a Delta table's files Bloom filters on Spark, committed as one table version: each task
writes copies with filters for its share of the files (a part), the driver commits the parts in
one new version, and the table's own reader reads the same rows.

    python examples/spark_add_filters_table.py [--sbbf PATH] [--files N] [--tasks T] [TABLE_DIR]

The tasks run the `sbbf` command (`--sbbf`, else $SBBF_BIN, else target/debug/sbbf of this
checkout); nothing else of sbbf is needed on the executors. Without TABLE_DIR a Delta table of
a few hundred small files without Bloom filters is written first (deltalake, partitioned by
`day`).

Each task gets a list of data files (as `sbbf inspect TABLE` names them), runs

    sbbf add TABLE -c id --files-from LIST --part OUT

which writes, beside each file, a copy with the filter (data pages copied byte for byte) and
records the copies in the part; the part's bytes go back to the driver, so the parts need no
shared file system (on a cluster, TABLE is an object-store prefix every executor can write).
The driver writes them into a folder and runs `sbbf commit TABLE PARTS/`: one new version
that swaps every original for its copy (`dataChange: false`). Finally deltalake reads the same
rows at the new version as at the one before, the history shows one `ADD BLOOM FILTERS`
commit, a value in no file is ruled out by every file's filter, and Spark reads the new
version's files to the same row count.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder, write_deltalake
from pyspark.sql import SparkSession

HERE = os.path.dirname(os.path.abspath(__file__))


def find_sbbf(arg):
    target = os.path.join(HERE, "..", os.environ.get("CARGO_TARGET_DIR", "target"))
    path = arg or os.environ.get("SBBF_BIN") or os.path.join(target, "debug", "sbbf")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        sys.exit(f"spark_add_filters_table.py: ERROR: no sbbf command at {path} "
                 "(give --sbbf PATH or set SBBF_BIN; `cargo build -p sbbf-cli` makes one)")
    return path


def make_table(root, files, rows=100):
    """A Delta table of `files` files (10 days, one file per day per append), no filters."""
    days = 10
    for k in range(files // days):
        ids = list(range(k * days * rows, (k + 1) * days * rows))
        t = pa.table({"id": pa.array(ids, pa.int64()),
                      "name": [f"name-{i}" for i in ids],
                      "day": [f"d{i % days}" for i in ids]})
        write_deltalake(root, t, partition_by=["day"], mode="append")
    return (files // days) * days * rows


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write_share(task, names, sbbf, table, column):
    """One Spark task: copies for `names` and the part recording them, as (task, bytes,
    report)."""
    with tempfile.TemporaryDirectory(prefix="sbbf-copies-") as tmp:
        listing = os.path.join(tmp, "files.txt")
        with open(listing, "w") as f:
            f.write("".join(n + "\n" for n in names))
        out = os.path.join(tmp, f"part-{task:05}.sbbfcopies")
        cmd = [sbbf, "add", table, "-c", column, "--files-from", listing, "--part", out,
               "--format", "json"]
        code, stdout, stderr = run(cmd)
        if code != 0:
            raise RuntimeError(f"task {task}: {' '.join(cmd)}: exit {code}: {stderr}")
        with open(out, "rb") as f:
            return task, f.read(), json.loads(stdout)


def rows_of(dt):
    got = pa.table(QueryBuilder().register("t", dt).execute(
        "SELECT count(*) AS n, sum(id) AS s FROM t").read_all())
    return got.column("n")[0].as_py(), got.column("s")[0].as_py()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", nargs="?")
    ap.add_argument("--sbbf", help="the sbbf command (default: $SBBF_BIN, target/debug/sbbf)")
    ap.add_argument("--files", type=int, default=300, help="files of the generated table")
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("-c", "--column", default="id", help="the column to give filters")
    args = ap.parse_args()
    sbbf = find_sbbf(args.sbbf)
    tmp = tempfile.TemporaryDirectory(prefix="sbbf-spark-add-")
    table = args.table or os.path.join(tmp.name, "events")
    if args.table is None:
        written = make_table(table, args.files)
        print(f"wrote a Delta table of {args.files} files, {written} rows")
    table = os.path.abspath(table)
    before = DeltaTable(table)
    version = before.version()
    code, out, err = run([sbbf, "inspect", table, "--format", "json"])
    names = sorted(json.loads(line)["file"] for line in out.splitlines()
                   if '"file"' in line and "table" not in json.loads(line))
    if not names:
        sys.exit(f"spark_add_filters_table.py: ERROR: sbbf inspect found no files: {err}")

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("sbbf-add-filters-table")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "1g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t0 = time.time()
    parts = (spark.sparkContext.parallelize(names, numSlices=min(args.tasks, len(names)))
             .mapPartitionsWithIndex(
                 lambda i, it: [write_share(i, list(it), sbbf, table, args.column)])
             .collect())
    t1 = time.time()
    parts_dir = os.path.join(tmp.name, "parts")
    os.makedirs(parts_dir)
    for task, data, _ in parts:
        with open(os.path.join(parts_dir, f"part-{task:05}.sbbfcopies"), "wb") as f:
            f.write(data)
    code, out, err = run([sbbf, "commit", table, parts_dir, "--format", "json"])
    t2 = time.time()
    if code != 0:
        sys.exit(f"spark_add_filters_table.py: ERROR: commit failed (exit {code}): {err}")
    done = json.loads(out)
    print(f"{len(names)} files, {len(parts)} tasks: copies written in {t1 - t0:.1f} s, "
          f"committed in {t2 - t1:.2f} s as version {done['committed_version']} "
          f"({len(done['swapped'])} swapped, {done['bytes_read']} bytes read, "
          f"{done['bytes_written']} written)")

    problems = []
    after = DeltaTable(table)
    if after.version() != version + 1 or done["committed_version"] != version + 1:
        problems.append(f"expected one new version {version + 1}, the table is at "
                        f"{after.version()}: {done}")
    if len(done["swapped"]) != len(names):
        problems.append(f"{len(names)} files, {len(done['swapped'])} swapped: {done['kept']}")
    if after.history(1)[0].get("operation") != "ADD BLOOM FILTERS":
        problems.append(f"the last commit is {after.history(1)[0]}")
    if rows_of(after) != rows_of(DeltaTable(table, version=version)):
        problems.append(f"rows differ: {rows_of(after)} now, "
                        f"{rows_of(DeltaTable(table, version=version))} before")
    # A value in no file: every file's filter rules it out (a file without one would be
    # listed), so `probe -l` lists nothing and exits 1.
    code, out, err = run([sbbf, "probe", table, args.column, str(-10**15), "-l", "--no-index"])
    if code != 1 or out.strip():
        problems.append(f"a value in no file: probe -l exit {code}, listed {out!r} {err}")
    # Spark reads the new version's files to the same count.
    files = [u.removeprefix("file://") for u in after.file_uris()]
    n = spark.read.parquet(*files).count()
    if n != rows_of(after)[0]:
        problems.append(f"Spark reads {n} rows from the new version's files, "
                        f"deltalake {rows_of(after)[0]}")
    spark.stop()
    if problems:
        for p in problems:
            print("spark_add_filters_table.py: ERROR:", p, file=sys.stderr)
        sys.exit(1)
    print("spark_add_filters_table.py: ok: one commit, the same rows, every file with its filter")


if __name__ == "__main__":
    main()
