"""Add Bloom filters to every file of a directory table with Spark, then check them.

    python examples/spark_add_filters.py [TABLE_DIR] [--columns id,key] [--fpp 0.01]

Without TABLE_DIR, a small table is made first (Spark writes it: a few dozen files, several
row groups each, no Bloom filters). Spark then runs one task per group of files; each task
calls `sbbf.add(file, columns, in_place=True)` on its files (data pages untouched: the
filters and a new footer are appended, through a temporary file and a rename). A second
pass of tasks runs `sbbf.verify` on every file: every stored value must test "maybe".
Finally Spark reads the table again: the same rows, and key lookups still find their row.

Hadoop's local filesystem keeps a checksum file beside each file it writes (`.NAME.crc`) and
rejects a file that no longer matches it, so the tasks remove it for the files they rewrite
(object stores and HDFS keep no such files). Spark runs in local mode here; on a cluster, install the package on the executors
(`pip install ./crates/sbbf-python`) and point TABLE_DIR at a filesystem they all see.
"""
import argparse
import glob
import os
import sys
import tempfile
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def add_filters(files, columns, fpp):
    """One Spark task: filters for `columns` in each of its files, in place."""
    import sbbf

    for path in files:
        report = sbbf.add(path, columns, fpp=fpp, in_place=True)
        # Hadoop's local filesystem keeps a checksum beside each file it wrote (`.NAME.crc`)
        # and refuses a file that no longer matches it; the rewritten file has none.
        crc = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".crc")
        if os.path.exists(crc):
            os.remove(crc)
        yield path, len(report["filters"]), report["file_bytes_before"], report["file_bytes_after"]


def verify(files, columns):
    """One Spark task: the filters of each of its files against the data."""
    import sbbf

    for path in files:
        report = sbbf.verify(path, columns, samples=1000)
        yield path, report["false_negatives"], len(report["chunks"])


def make_table(spark, path, files=24, rows=120_000):
    """A table without Bloom filters: `id` (int64), `key` (string), `amount` (double), spread
    over `files` files of several row groups each, in random key order."""
    (spark.range(rows)
     .select(F.col("id"),
             F.concat(F.lit("key-"), F.col("id").cast("string")).alias("key"),
             (F.col("id") * 0.25).alias("amount"))
     .orderBy(F.rand(seed=7))
     .repartition(files)
     .write.option("parquet.block.size", 64 * 1024)
     .mode("overwrite").parquet(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", nargs="?", help="a directory of Parquet files (default: make one)")
    ap.add_argument("--columns", default="id,key")
    ap.add_argument("--fpp", type=float, default=0.01)
    args = ap.parse_args()
    columns = args.columns.split(",")

    # Executors run this interpreter (the one with sbbf installed) unless told otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("sbbf-add-filters")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "1g")
             .config("spark.sql.shuffle.partitions", "4")
             # Spark's reader (parquet-java) skips row groups by Bloom filter when enabled.
             .config("spark.hadoop.parquet.filter.bloom.enabled", "true")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    tmp = None
    table = args.table
    if table is None:
        tmp = tempfile.TemporaryDirectory(prefix="sbbf-spark-")
        table = os.path.join(tmp.name, "events")
        make_table(spark, table)
    files = sorted(glob.glob(os.path.join(table, "**", "*.parquet"), recursive=True))
    if not files:
        sys.exit(f"{table}: no *.parquet files")
    rows_before = spark.read.parquet(table).count()

    started = time.time()
    groups = spark.sparkContext.parallelize(files, numSlices=min(len(files), 8))
    added = groups.mapPartitions(lambda part: add_filters(list(part), columns, args.fpp)).collect()
    took = time.time() - started
    filters = sum(n for _, n, _, _ in added)
    grown = sum(after - before for _, _, before, after in added)
    print(f"added {filters} filter(s) for {', '.join(columns)} to {len(added)} file(s) "
          f"in {took:.1f} s ({grown} bytes appended)")

    checked = groups.mapPartitions(lambda part: verify(list(part), columns)).collect()
    false_negatives = sum(fn for _, fn, _ in checked)
    chunks = sum(n for _, _, n in checked)
    print(f"verified {chunks} column chunk(s) in {len(checked)} file(s): "
          f"{false_negatives} false negative(s)")
    assert len(added) == len(files) and filters == chunks > 0, (len(added), filters, chunks)
    assert false_negatives == 0

    df = spark.read.parquet(table)
    assert df.count() == rows_before
    for key in ("key-0", "key-4242", f"key-{rows_before - 1}"):
        assert df.filter(F.col("key") == key).count() == 1, key
    assert df.filter(F.col("key") == "key-missing").count() == 0
    print(f"Spark reads the table as before: {rows_before} rows; key lookups find their row")
    spark.stop()
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
