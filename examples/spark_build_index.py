"""Build a table's index on Spark: each task indexes some of the files (a part), the driver
merges the parts into TABLE/_sbbf_index/, then `sbbf probe` answers from it.

    python examples/spark_build_index.py [--sbbf PATH] [--files N] [--tasks T] [TABLE_DIR]

The tasks run the `sbbf` command (`--sbbf`, else $SBBF_BIN, else target/debug/sbbf of this
checkout); nothing else of sbbf is needed on the executors. Without TABLE_DIR a table of a few
hundred single-row-group files (pyarrow, Bloom filters on `id` and `name`) is written first.

Each task gets a list of files (paths relative to the table root), runs

    sbbf index build TABLE --files-from LIST --part OUT

and hands the part's bytes back to the driver, so the parts need no shared file system (on a
cluster, TABLE is then an object-store prefix every executor can read). The driver writes them
into a folder and runs `sbbf index merge TABLE PARTS/`, which checks every part and refuses
parts that do not belong together. Finally, probes with the index are compared with
`sbbf probe --no-index` (every file read): the outputs must be equal, and every value written
to a file must be "maybe" in it. Spark reads the same rows with the index beside the data.
"""
import argparse
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

HERE = os.path.dirname(os.path.abspath(__file__))


def find_sbbf(arg):
    target = os.path.join(HERE, "..", os.environ.get("CARGO_TARGET_DIR", "target"))
    path = arg or os.environ.get("SBBF_BIN") or os.path.join(target, "debug", "sbbf")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        sys.exit(f"spark_build_index.py: ERROR: no sbbf command at {path} "
                 "(give --sbbf PATH or set SBBF_BIN; `cargo build -p sbbf-cli` makes one)")
    return path


def make_table(root, files, rows=200):
    """`files` files of one row group: ids k*rows.. in random order, names `name-<id>`."""
    rng = random.Random(11)
    for k in range(files):
        sub = os.path.join(root, f"day={k % 7}")
        os.makedirs(sub, exist_ok=True)
        ids = list(range(k * rows, (k + 1) * rows))
        rng.shuffle(ids)
        t = pa.table({"id": pa.array(ids, pa.int64()), "name": [f"name-{i}" for i in ids]})
        pq.write_table(t, os.path.join(sub, f"part-{k:04}.parquet"), row_group_size=rows,
                       bloom_filter_options={"id": {"ndv": rows, "fpp": 0.01},
                                             "name": {"ndv": rows, "fpp": 0.01}})
    return rows


def build_part(task, rels, sbbf, table, columns):
    """One Spark task: the part of the index for `rels`, as (task, bytes, report)."""
    with tempfile.TemporaryDirectory(prefix="sbbf-part-") as tmp:
        listing = os.path.join(tmp, "files.txt")
        with open(listing, "w") as f:
            f.write("".join(r + "\n" for r in rels))
        out = os.path.join(tmp, f"part-{task:05}.sbbfpart")
        cmd = [sbbf, "index", "build", table, "--files-from", listing, "--part", out,
               "--format", "json"]
        for c in columns:
            cmd += ["-c", c]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"task {task}: {' '.join(cmd)}: exit {p.returncode}: {p.stderr}")
        with open(out, "rb") as f:
            return task, f.read(), json.loads(p.stdout)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", nargs="?")
    ap.add_argument("--sbbf", help="the sbbf command (default: $SBBF_BIN, target/debug/sbbf)")
    ap.add_argument("--files", type=int, default=300, help="files of the generated table")
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("-c", "--column", action="append", default=[],
                    help="columns to index (default: every column with filters)")
    args = ap.parse_args()
    sbbf = find_sbbf(args.sbbf)
    tmp = tempfile.TemporaryDirectory(prefix="sbbf-spark-index-")
    table, rows = args.table, None
    if table is None:
        table = os.path.join(tmp.name, "events")
        rows = make_table(table, args.files)
        # A file modified less than 2 s before a build is not covered (a change within the
        # file system's clock tick would not show): let the clock move on.
        time.sleep(2.1)
    table = os.path.abspath(table)
    rels = sorted(os.path.relpath(p, table).replace(os.sep, "/")
                  for p in glob.glob(os.path.join(table, "**", "*.parquet"), recursive=True)
                  if "/_" not in "/" + os.path.relpath(p, table).replace(os.sep, "/"))
    if not rels:
        sys.exit(f"spark_build_index.py: ERROR: no *.parquet under {table}")

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("sbbf-build-index")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "1g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    columns = args.column
    t0 = time.time()
    parts = (spark.sparkContext.parallelize(rels, numSlices=min(args.tasks, len(rels)))
             .mapPartitionsWithIndex(
                 lambda i, it: [build_part(i, list(it), sbbf, table, columns)])
             .collect())
    t1 = time.time()
    parts_dir = os.path.join(tmp.name, "parts")
    os.makedirs(parts_dir)
    for task, data, _ in parts:
        with open(os.path.join(parts_dir, f"part-{task:05}.sbbfpart"), "wb") as f:
            f.write(data)
    racy = sum(r["racy"] for _, _, r in parts)
    failed = [f for _, _, r in parts for f in r["failed"]]
    code, out, err = run([sbbf, "index", "merge", table, parts_dir, "--format", "json"])
    t2 = time.time()
    if code != 0:
        sys.exit(f"spark_build_index.py: ERROR: merge failed (exit {code}): {err}")
    merged = json.loads(out)
    print(f"{len(rels)} files, {len(parts)} tasks: parts built in {t1 - t0:.1f} s "
          f"({sum(len(d) for _, d, _ in parts)} bytes), merged in {t2 - t1:.2f} s "
          f"({merged['elapsed_ms']:.0f} ms in sbbf): {merged['files_covered']} covered, "
          f"{merged['index_bytes']} bytes of index")
    problems = []
    if racy or failed or merged["files_covered"] != len(rels):
        problems.append(f"not every file is covered: {racy} racy, failed {failed}, "
                        f"merge report {merged}")

    # Probes: the index's answers must be the files' own (`--no-index` reads every file).
    rng = random.Random(3)
    probes = []
    if rows:
        present = rng.sample(range(len(rels) * rows), 6)
        probes += [("id", [str(v)]) for v in present]
        probes += [("name", [f"name-{v}"]) for v in present[:3]]
        probes.append(("id", [str(v) for v in present] + ["-1", "999999999"]))
    probes += [("id", [str(10**12 + k)]) for k in range(4)]
    for column, values in probes:
        base = [sbbf, "probe", table, column] + values + ["--format", "json"]
        c1, with_index, e1 = run(base)
        c2, without, e2 = run(base + ["--no-index"])
        if c1 != c2 or with_index != without:
            problems.append(f"probe {column} {values}: differs with the index "
                            f"(exit {c1} vs {c2}) {e1} {e2}")
            continue
        _, _, e3 = run(base + ["--stats"])
        stats = next(json.loads(line) for line in e3.splitlines() if '"index"' in line)
        idx = stats["index"]
        print(f"probe {column} {' '.join(values[:3])}{' ...' if len(values) > 3 else ''}: "
              f"{idx['from_index']} of {idx['files']} files answered by the index, "
              f"{idx['direct']} read; {idx['index_reads']['requests']} index request(s), "
              f"{idx['index_reads']['bytes']} bytes")
        if not idx["used"]:
            problems.append(f"probe {column} {values}: the index was not used: {e1}")
        # Every value written to a file is "maybe" in it (how the table was made).
        if rows:
            lines = [json.loads(line) for line in with_index.splitlines()]
            for v in values:
                n = int(v.removeprefix("name-"))
                if not 0 <= n < len(rels) * rows:
                    continue
                want = f"part-{n // rows:04}.parquet"
                hits = [line for line in lines if line.get("file", "").endswith(want)]
                if not hits or not any(val["result"] != "absent"
                                       for rg in hits[0]["row_groups"]
                                       for val in rg["values"] if val["value"] == v):
                    problems.append(f"{column} = {v}: not 'maybe' in {want}: {hits}")

    # The index is not data: Spark reads the same rows with it beside the files.
    if rows:
        n = spark.read.parquet(table).count()
        if n != len(rels) * rows:
            problems.append(f"Spark reads {n} rows, {len(rels) * rows} were written")
    spark.stop()
    if problems:
        for p in problems:
            print("spark_build_index.py: ERROR:", p, file=sys.stderr)
        sys.exit(1)
    print("spark_build_index.py: ok: merged index answers equal `sbbf probe --no-index`")


if __name__ == "__main__":
    main()
