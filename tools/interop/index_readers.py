"""The table index is not data: pyarrow datasets, pyarrow.parquet, DuckDB and Spark read the same
rows from a table with `_sbbf_index/` beside its files as without it.

    tools/.venv/bin/python tools/interop/index_readers.py [SBBF_BINARY]

Writes a small table with pyarrow (a hive-style subfolder included), adds filters with
`sbbf add`, builds the index with `sbbf index build`, then counts rows with each reader and
compares with the rows written. Exits non-zero on any difference or a missing reader; nothing is
skipped. Run by tools/interop/interop.sh.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]


def main():
    # interop.sh passes the binary from cargo's target directory.
    target = ROOT / os.environ.get("CARGO_TARGET_DIR", "target")
    sbbf = sys.argv[1] if len(sys.argv) > 1 else str(target / "release" / "sbbf")
    with tempfile.TemporaryDirectory() as td:
        t = Path(td) / "t"
        # Hive-style folders (Spark reads a table either flat or partitioned, not both).
        for part in (0, 1):
            (t / f"part={part}").mkdir(parents=True)
        written = 0
        for k in range(6):
            n = 50 + 10 * k
            rows = pa.table({"id": pa.array(range(k * 1000, k * 1000 + n), pa.int64())})
            sub = t / f"part={k % 2}"
            path = sub / f"f{k}.parquet"
            pq.write_table(rows, path)
            subprocess.run([sbbf, "add", str(path), "-c", "id", "--in-place"], check=True,
                           capture_output=True)
            written += n
        # Files modified in the last 2 s are not covered by a build: wait them out.
        time.sleep(2.1)
        subprocess.run([sbbf, "index", "build", str(t)], check=True, capture_output=True)
        index = t / "_sbbf_index" / "index.sbbfi"
        assert index.exists(), "no index was written"
        insp = subprocess.run([sbbf, "index", "inspect", str(t), "--format", "json"],
                              check=True, capture_output=True, text=True).stdout
        assert '"covered":6' in insp, insp

        with_index = count_rows(t)
        hidden = Path(td) / "moved_index"
        (t / "_sbbf_index").rename(hidden)
        without = count_rows(t)
        hidden.rename(t / "_sbbf_index")
        bad = {k: v for k, v in with_index.items() if v != written or without[k] != written}
        for k, v in with_index.items():
            print(f"index_readers: {k}: {v} rows beside the index, {without[k]} without (written: {written})")
        if bad:
            sys.exit(f"index_readers: FAILED: {bad} read other row counts beside the index")
        print("index_readers: ok: every reader ignores _sbbf_index/")


def count_rows(t):
    """Rows each reader counts in the table at `t`."""
    counts = {
        "pyarrow.dataset": ds.dataset(str(t), format="parquet").count_rows(),
        "pyarrow.parquet.read_table": pq.read_table(str(t)).num_rows,
        "duckdb read_parquet('**/*.parquet')": duckdb.sql(
            f"select count(*) from read_parquet('{t}/**/*.parquet')").fetchall()[0][0],
    }
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").appName("sbbf-index-readers")
             .config("spark.ui.enabled", "false").getOrCreate())
    try:
        counts["spark.read.parquet"] = spark.read.parquet(str(t)).count()
    finally:
        spark.stop()
    return counts


if __name__ == "__main__":
    main()
