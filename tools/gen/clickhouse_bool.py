"""Writes testdata/clickhouse/bool_filters.parquet with ClickHouse's own Parquet writer (chdb,
from the Python package registry: `tools/.venv/bin/pip install chdb`), which writes a Bloom
filter on BOOLEAN columns too (each value hashed as one byte, 0x00 or 0x01).

    tools/.venv/bin/python tools/gen/clickhouse_bool.py

40 rows in 4 row groups of 10: `id` UInt64 0..39; `odd` (both values in every row group);
`small` (id < 3: both values in row group 0, only false after); `nb` Nullable(Bool) (NULL
where id % 5 = 0, else id % 3 = 0); `always` (only true).
"""
import os
import sys

try:
    import chdb
except ImportError:
    sys.exit("clickhouse_bool.py: ERROR: chdb is not installed (tools/.venv/bin/pip install chdb)")

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata",
                   "clickhouse", "bool_filters.parquet")
out = os.path.abspath(out)
os.makedirs(os.path.dirname(out), exist_ok=True)
if os.path.exists(out):
    os.remove(out)
chdb.query(f"""
SELECT number AS id, toBool(number % 2) AS odd, toBool(number < 3) AS small,
       CAST(if(number % 5 = 0, NULL, number % 3 = 0) AS Nullable(Bool)) AS nb,
       toBool(1) AS always
FROM numbers(40)
INTO OUTFILE '{out}' FORMAT Parquet
SETTINGS output_format_parquet_row_group_size = 10, output_format_parquet_write_bloom_filter = 1
""")
version = chdb.query("SELECT version()", "CSV").data().strip().strip('"')
print(f"wrote {out} with ClickHouse {version} (chdb {chdb.__version__})")
