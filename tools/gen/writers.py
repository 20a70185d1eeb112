"""Write testdata/*.parquet with four Apache writers. Usage: writers.py [pyarrow|arrowrs|duckdb|spark|strip ...]

Each function writes one file; FILES maps file name -> (writer, description).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq

import datasets as ds
from common import BUILD, ORACLE_BIN, TESTDATA

FILES: dict[str, tuple[str, str]] = {}


def out(name):
    TESTDATA.mkdir(parents=True, exist_ok=True)
    return str(TESTDATA / name)


def leaves(schema: pa.Schema) -> list[str]:
    """Parquet leaf paths of an Arrow schema (pyarrow's naming: l.list.element, m.key_value.key)."""
    res = []

    def walk(prefix, t):
        if pa.types.is_struct(t):
            for f in t:
                walk(prefix + [f.name], f.type)
        elif pa.types.is_map(t):
            walk(prefix + ["key_value", "key"], t.key_type)
            walk(prefix + ["key_value", "value"], t.item_type)
        elif pa.types.is_list(t):
            walk(prefix + ["list", "element"], t.value_type)
        else:
            res.append(".".join(prefix))
    for f in schema:
        walk([f.name], f.type)
    return res


# ------------------------------------------------------------------------------------------ pyarrow

def pyarrow_files():
    t = ds.ints_table("pa_ints")
    bloom = {c: {"ndv": 1000, "fpp": 0.05} for c in leaves(t.schema) if c != "u8"}
    pq.write_table(t, out("pa_ints.parquet"), row_group_size=1000, store_decimal_as_integer=True,
                   bloom_filter_options=bloom)
    FILES["pa_ints.parquet"] = ("pyarrow", "signed and unsigned INT(8..64), DECIMAL in INT32/INT64 (store_decimal_as_integer); u8 without filter")

    t = ds.temporal_table("pa_temporal")
    pq.write_table(t, out("pa_temporal.parquet"), row_group_size=1000,
                   bloom_filter_options={c: {"ndv": 1000, "fpp": 0.05} for c in leaves(t.schema)})
    FILES["pa_temporal.parquet"] = ("pyarrow", "DATE (0001-01-01..9999-12-31 edges), TIME(MILLIS/MICROS/NANOS), TIMESTAMP(MILLIS/MICROS/NANOS) UTC and local")

    t = ds.float_bytes_table("pa_float_bytes")
    pq.write_table(t, out("pa_float_bytes.parquet"), row_group_size=1000,
                   bloom_filter_options={c: {"ndv": 1000, "fpp": 0.05} for c in leaves(t.schema)})
    FILES["pa_float_bytes.parquet"] = ("pyarrow", "FLOAT/DOUBLE/FLOAT16 edge values, STRING, binary, fixed(16), UUID, DECIMAL(38,10) and DECIMAL(12,2) in FLBA")

    t = ds.nested_table("pa_nested")
    pq.write_table(t, out("pa_nested.parquet"), row_group_size=1200, data_page_version="2.0",
                   compression="zstd", write_page_index=True,
                   bloom_filter_options={c: {"ndv": 1000, "fpp": 0.02} for c in leaves(t.schema)})
    FILES["pa_nested.parquet"] = ("pyarrow", "struct s.a/s.b, lists l.list.element/ls.list.element, map m.key_value.key/value, top-level after nested; data page v2, zstd, page index")


# ------------------------------------------------------------------------------------------ arrow-rs

def arrowrs(src_table: pa.Table, name: str, rg_rows: int, args: list[str], desc: str):
    BUILD.mkdir(parents=True, exist_ok=True)
    src = str(BUILD / ("src_" + name))
    pq.write_table(src_table, src, row_group_size=rg_rows)
    cmd = [str(ORACLE_BIN), "write", src, out(name), "--rg-rows", str(rg_rows)] + args
    subprocess.run(cmd, check=True)
    FILES[name] = ("arrowrs", desc)


def arrowrs_files():
    t = ds.ints_table("ar_ints")
    arrowrs(t, "arrowrs_ints.parquet", 1000, ["--position", "end"] + sum((["--bloom", f"{c}:1000:0.05"] for c in leaves(t.schema)), []),
            "signed and unsigned INT(8..64), DECIMAL(9,2) INT32 and DECIMAL(18,4) INT64; BloomFilterPosition::End")
    t = ds.temporal_table("ar_temporal")
    arrowrs(t, "arrowrs_temporal.parquet", 1000, ["--position", "after-row-group", "--bloom-all"],
            "DATE, TIME(MILLIS/MICROS/NANOS), TIMESTAMP(MILLIS/MICROS/NANOS) UTC and local; BloomFilterPosition::AfterRowGroup")
    t = ds.float_bytes_table("ar_float_bytes")
    arrowrs(t, "arrowrs_float_bytes.parquet", 1000, ["--position", "after-row-group", "--bloom-all", "--v2", "--compression", "zstd"],
            "FLOAT/DOUBLE/FLOAT16 edges, STRING, binary, fixed(16), uuid (written as plain FLBA(16)), DECIMAL FLBA; AfterRowGroup, data page v2, zstd")
    t = ds.nested_table("ar_nested")
    arrowrs(t, "arrowrs_nested.parquet", 1200,
            ["--position", "end", "--bloom-all"],
            "struct s.a/s.b, lists, map, top-level after nested; BloomFilterPosition::End")
    t = ds.dict_fallback_table("ar_mix")
    arrowrs(t, "arrowrs_dict_fallback.parquet", 600,
            ["--position", "end", "--bloom-all", "--dictionary", "on", "--dict-page-limit", "2048", "--dict-chunk-filters", "off"],
            "set_bloom_filter_for_dictionary_encoded_chunks(false), dictionary page limit 2 KiB: filters only in row groups whose dictionary overflowed (row groups 2, 3)")


# ------------------------------------------------------------------------------------------ DuckDB

def duckdb_files():
    import duckdb
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")

    def copy(table, name, desc, extra_sql="*", fpp=0.05):
        con.register("src", table)
        path = out(name)
        if os.path.exists(path):
            os.remove(path)
        con.execute(f"COPY (SELECT {extra_sql} FROM src) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 2048, "
                    f"DICTIONARY_SIZE_LIMIT 100000, BLOOM_FILTER_FALSE_POSITIVE_RATIO {fpp})")
        con.unregister("src")
        FILES[name] = ("duckdb", desc)

    rg = (2048,) * 3
    copy(ds.ints_table("dk_ints", rg), "duckdb_ints.parquet",
         "TINYINT..BIGINT, UTINYINT..UBIGINT, DECIMAL(9,2)/(18,4); filters only on dictionary-encoded chunks")
    copy(ds.temporal_table("dk_temporal", rg), "duckdb_temporal.parquet",
         "DATE, TIME, TIME_NS, TIMESTAMP_MS/TIMESTAMP/TIMESTAMP_NS, TIMESTAMPTZ")
    copy(ds.float_bytes_table("dk_float_bytes", rg, f16=False), "duckdb_float_bytes.parquet",
         "FLOAT/DOUBLE edges, VARCHAR, BLOB, fixed16 (as BLOB), UUID, DECIMAL(38,10)/(12,2)", fpp=0.01)
    copy(ds.nested_table("dk_nested", (2048,) * 3), "duckdb_nested.parquet",
         "struct, list, map, top-level column after nested ones (parquet_bloom_probe picks the wrong chunk there)")


# ------------------------------------------------------------------------------------------ Spark / parquet-java

def spark_files():
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").appName("sbbf-gen")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.parquet.datetimeRebaseModeInWrite", "CORRECTED")
             .config("spark.sql.parquet.int96RebaseModeInWrite", "CORRECTED")
             .config("spark.sql.parquet.compression.codec", "snappy")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")

    def write(table, name, desc, bloom_cols, block_size, dictionary=False, extra=None, conf=None, ndv=300, select=None):
        BUILD.mkdir(parents=True, exist_ok=True)
        src = str(BUILD / ("src_" + name))
        pq.write_table(table, src, row_group_size=len(table))
        df = spark.read.parquet(src)
        if select:
            df = df.selectExpr(*select)
        for k, v in (conf or {}).items():
            spark.conf.set(k, v)
        w = df.coalesce(1).write.mode("overwrite")
        w = w.option("parquet.block.size", str(block_size)).option("parquet.enable.dictionary", str(dictionary).lower())
        w = w.option("parquet.page.size", "8192").option("parquet.block.size.row.check.min", "50").option("parquet.block.size.row.check.max", "200")
        for c in bloom_cols:
            w = w.option(f"parquet.bloom.filter.enabled#{c}", "true")
            w = w.option(f"parquet.bloom.filter.expected.ndv#{c}", str(ndv))
            w = w.option(f"parquet.bloom.filter.fpp#{c}", "0.05")
        for k, v in (extra or {}).items():
            w = w.option(k, v)
        d = str(BUILD / ("spark_" + name))
        w.parquet(d)
        parts = glob.glob(d + "/part-*.parquet")
        assert len(parts) == 1, parts
        shutil.copyfile(parts[0], out(name))
        for k in (conf or {}):
            spark.conf.unset(k)
        FILES[name] = ("spark", desc)

    def cat(*tables):
        cols, names = [], []
        for t in tables:
            cols += t.columns
            names += t.column_names
        return pa.table(cols, names=names)

    rg = (500,) * 4
    micros = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}
    t = cat(ds.ints_table("sp_ints", rg, unsigned=False),
            ds.temporal_table("sp_temporal", rg, nanos=False, time_cols=False))
    write(t, "spark_types.parquet",
          "ByteType/ShortType/Int/Long, DECIMAL(9,2) INT32 / (18,4) INT64, DATE, TIMESTAMP(MICROS,true) and TimestampNTZ (MICROS,false)",
          leaves(t.schema), 20000, conf=micros)

    t = ds.float_bytes_table("sp_float_bytes", rg, f16=False, uuid=False)
    write(t, "spark_float_bytes.parquet",
          "FLOAT/DOUBLE edges, STRING, BINARY (fixed16 read as binary), DECIMAL(38,10) FLBA(16), DECIMAL(12,2) INT64",
          leaves(t.schema), 30000)

    t = ds.nested_table("sp_nested", (400,) * 3)
    sch = ["id", "s.a", "s.b", "l.list.element", "ls.list.element", "m.key_value.key", "m.key_value.value", "tail", "ts_millis"]
    write(t, "spark_nested.parquet", "struct, array (l.list.element), map, top-level after nested; ts_millis TIMESTAMP(MILLIS,true) (outputTimestampType=TIMESTAMP_MILLIS)",
          sch, 25000, conf={"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"},
          select=["*", "timestamp_micros(abs(id) % 4000000000000000) AS ts_millis"])

    t = cat(ds.temporal_table("sp_int96", rg, nanos=False, time_cols=False, utc_and_local=False),
            ds.ints_table("sp_legacy", rg, unsigned=False))
    t = t.select(["ts_us_utc", "ts_ms", "dec9_2", "dec18_4", "i32"])
    legacy = {"spark.sql.parquet.outputTimestampType": "INT96", "spark.sql.parquet.writeLegacyFormat": "true"}
    write(t, "spark_int96_legacy.parquet",
          "INT96 timestamps (outputTimestampType=INT96), writeLegacyFormat: DECIMAL(9,2)/(18,4) as FLBA(4)/FLBA(8), legacy list l.bag.array",
          ["ts_us_utc", "dec9_2", "dec18_4", "i32", "l.bag.array"], 20000, conf=legacy,
          select=["ts_us_utc", "ts_ms", "dec9_2", "dec18_4", "i32", "array(i32, i32 div 2) AS l"])

    t = ds.dict_fallback_table("sp_mix", pad=True)
    write(t, "spark_dict_fallback.parquet",
          "dictionary enabled (2 KiB dictionary pages): parquet-java writes filters only for chunks that fell back to plain (second half of the rows)",
          ["mix", "smix"], 12000, dictionary=True, extra={"parquet.dictionary.page.size": "2048", "parquet.enable.dictionary#pad": "false"})
    spark.stop()


# ------------------------------------------------------------------------------------------ parquet-java direct

def java_classpath():
    """pyspark's jars (parquet-java 1.17.0, Hadoop) + tools/gen/java compiled into BUILD."""
    import pyspark
    from pathlib import Path
    jars = Path(pyspark.__file__).parent / "jars"
    build = BUILD / "java"
    build.mkdir(parents=True, exist_ok=True)
    srcs = sorted((Path(__file__).parent / "java").glob("*.java"))
    subprocess.run(["javac", "-d", str(build), "-cp", f"{jars}/*"] + [str(s) for s in srcs], check=True)
    return f"{jars}/*:{build}"


def pjava_files():
    subprocess.run(["java", "-cp", java_classpath(), "PjWriter", out("pjava_types.parquet")], check=True)
    FILES["pjava_types.parquet"] = ("parquet-java", "ExampleParquetWriter: UINT8..64, DECIMAL(20,2) in BYTE_ARRAY (minimal two's complement), TIME(NANOS/MILLIS,true), TIMESTAMP(NANOS,false), UUID, FLOAT16, FLBA(3), INT96, ENUM, REQUIRED INT32, BOOLEAN with a filter")


# ------------------------------------------------------------------------------------------ strip-length

def strip_files():
    import json
    meta = TESTDATA / "files.json"
    known = json.loads(meta.read_text()) if meta.exists() else {}
    for src, dst in (("arrowrs_temporal.parquet", "arrowrs_temporal_nolength.parquet"),
                     ("spark_int96_legacy.parquet", "spark_int96_legacy_nolength.parquet")):
        subprocess.run([str(ORACLE_BIN), "strip-length", out(src), out(dst)], check=True)
        # verify: pyarrow reads it and gets identical data
        a, b = pq.read_table(out(src)), pq.read_table(out(dst))
        assert a.equals(b), dst
        writer = FILES[src][0] if src in FILES else known[src]["writer"]
        FILES[dst] = (writer, f"{src} with bloom_filter_length removed from the footer (data bytes unchanged)")


WRITERS = {"pyarrow": pyarrow_files, "arrowrs": arrowrs_files, "duckdb": duckdb_files, "spark": spark_files,
           "pjava": pjava_files, "strip": strip_files}

if __name__ == "__main__":
    import json
    which = sys.argv[1:] or list(WRITERS)
    for w in which:
        print(f"== writing {w} files", flush=True)
        WRITERS[w]()
    for k, (w, d) in FILES.items():
        print(f"{k}\t{w}\t{os.path.getsize(out(k))}\t{d}")
    # descriptions, merged with earlier runs
    meta = TESTDATA / "files.json"
    old = json.loads(meta.read_text()) if meta.exists() else {}
    old.update({k: {"writer": w, "description": d} for k, (w, d) in FILES.items()})
    meta.write_text(json.dumps(dict(sorted(old.items())), indent=1, ensure_ascii=False) + "\n")
