"""Which files (and row groups) of a table may hold a set of keys: Spark tasks read only
footers and Bloom filters, then Spark reads only the files that may hold a key.

    python examples/spark_prune_files.py [TABLE_DIR --column key --keys k1,k2,...]

Without arguments, a table of a few dozen files with Bloom filters on `key` is written first
(by pyarrow, keys in random order so min/max statistics cannot skip anything), and a handful
of present and absent keys are looked up.

Each task calls `sbbf.row_groups(file, [(column, "in", keys)])`: the row groups whose filters
do not rule every key out. A file with none is skipped whole. The rows Spark then finds in
the kept files are checked against a scan of every file.
"""
import argparse
import glob
import os
import random
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def kept_row_groups(files, column, keys):
    """One Spark task: for each of its files, the row groups that may hold one of `keys`."""
    import sbbf

    for path in files:
        yield path, sbbf.row_groups(path, [(column, "in", keys)]), pq.ParquetFile(
            path).num_row_groups


def make_table(path, files=32, rows_per_file=4000):
    """`files` files of 4 row groups each, `key` strings in random order, Bloom filters on it."""
    os.makedirs(path)
    rng = random.Random(7)
    ids = list(range(files * rows_per_file))
    rng.shuffle(ids)
    for i in range(files):
        part = ids[i * rows_per_file:(i + 1) * rows_per_file]
        t = pa.table({"key": [f"key-{x}" for x in part], "value": pa.array(part, pa.int64())})
        pq.write_table(t, os.path.join(path, f"part-{i:03}.parquet"),
                       row_group_size=rows_per_file // 4,
                       bloom_filter_options={"key": {"ndv": rows_per_file // 4, "fpp": 0.01}})
    present = [f"key-{x}" for x in rng.sample(ids, 5)]
    return present + ["key-absent-1", "key-absent-2"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", nargs="?")
    ap.add_argument("--column", default="key")
    ap.add_argument("--keys", help="comma-separated keys (text)")
    args = ap.parse_args()
    tmp = None
    table, keys = args.table, args.keys.split(",") if args.keys else None
    if table is None:
        tmp = tempfile.TemporaryDirectory(prefix="sbbf-spark-")
        table = os.path.join(tmp.name, "events")
        keys = make_table(table)
    elif keys is None:
        sys.exit("--keys is needed with a TABLE_DIR")
    files = sorted(glob.glob(os.path.join(table, "**", "*.parquet"), recursive=True))

    # Executors run this interpreter (the one with sbbf installed) unless told otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("sbbf-prune-files")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "1g")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    tasks = spark.sparkContext.parallelize(files, numSlices=min(len(files), 8))
    answers = tasks.mapPartitions(lambda part: kept_row_groups(list(part), args.column,
                                                               keys)).collect()
    kept = [path for path, rgs, _ in answers if rgs]
    rgs_kept = sum(len(rgs) for _, rgs, _ in answers)
    rgs_all = sum(n for _, _, n in answers)
    print(f"{len(keys)} key(s): {len(kept)} of {len(files)} file(s) and {rgs_kept} of {rgs_all} "
          f"row group(s) may hold one")

    def rows(paths):
        if not paths:
            return []
        df = spark.read.parquet(*paths).filter(F.col(args.column).isin(keys))
        return sorted(tuple(r) for r in df.collect())

    found, everything = rows(kept), rows(files)
    assert found == everything, (len(found), len(everything))
    print(f"Spark read {len(kept)} file(s) and found the {len(found)} matching row(s) a scan of "
          f"all {len(files)} finds")
    if tmp is not None:
        assert len(kept) < len(files) and len(found) >= 5
    spark.stop()
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
