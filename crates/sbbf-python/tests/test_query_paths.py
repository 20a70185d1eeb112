"""`sbbf query` over nested folders and globs counts the rows DuckDB counts over the same files
(DuckDB is the reference here: `read_parquet('DIR/**/*.parquet')`)."""

import json
import subprocess

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq


def _table(tmp_path):
    root = tmp_path / "tiny"
    for rel, lo, hi in [("a.parquet", 0, 100), ("sub/b.parquet", 100, 200),
                        ("sub/x=1/c.parquet", 200, 250)]:
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": pa.array(range(lo, hi), pa.int64())}), f)
    return root


def _ours(cli, path, where=""):
    sql = f"SELECT count(*) AS n FROM t {where}"
    out = subprocess.run([cli, "query", path, sql, "--format", "json"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[0])["n"]


def _duckdb(pattern, where=""):
    # hive_partitioning off: the x=1 folder is a folder, as it is to `sbbf query`'s `id` here.
    sql = (f"SELECT count(*) FROM read_parquet('{pattern}', hive_partitioning=false) {where}")
    return duckdb.sql(sql).fetchall()[0][0]


def test_nested_folders_count_as_duckdb(cli, tmp_path):
    root = _table(tmp_path)
    for where in ["", "WHERE id = 150", "WHERE id = 220", "WHERE id = 999"]:
        want = _duckdb(f"{root}/**/*.parquet", where)
        assert _ours(cli, str(root), where) == want, where
        assert _ours(cli, f"{root}/**/*.parquet", where) == want, where
        assert _ours(cli, f"{root}/*/*.parquet", where) == _duckdb(f"{root}/*/*.parquet", where)
