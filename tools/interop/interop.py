"""Interop check for `sbbf add`: files whose filters were written by our code, read by other
implementations' readers. Run through tools/interop/interop.sh (sets up tools/.venv, builds the binaries).

For every input (each testdata/ file from pyarrow, arrow-rs, DuckDB and parquet-java/Spark with
its filters stripped from the footer -- data pages byte for byte the writer's own --, plus fresh
pyarrow files written without any filter, plus a few `--replace` runs on files that keep their
writer's filters), run `sbbf add` on several columns and check:

 (a) pyarrow reads the output with data identical to the input (`Table.equals`); the output's
     bytes before the input's footer are the input's bytes; `bytes_written` == output size minus
     the input's footer start; arrow-rs sees a filter on every chunk of every added column;
     `sbbf verify OUT` passes.
 (b) DuckDB: `parquet_bloom_probe` never excludes a present value and agrees with
     `sbbf probe --exact-bits` on sampled absent values wherever DuckDB's answer is decisive
     (known-conservative cases and known DuckDB bugs -- FLOAT16, columns after a nested column --
     are left out; see fixtures/conformance/README.md); `count(*) WHERE col = v` is the same on
     input and output.
 (c) parquet-java: through Spark (local mode, filterPushdown + parquet.filter.bloom.enabled) the
     output has the input's row count and the same `filter(col == v).count()`; and parquet-java's
     own reader (ParquetFileReader.getBloomFilterDataReader().readBloomFilter() +
     BloomFilter.findHash(hash(v)), tools/gen/java/PjOracle.java on pyspark's jars) finds every
     present value and answers exactly as `sbbf probe --exact-bits` on every probed value.
 (d) arrow-rs: `Sbbf::check` (arrowrs-oracle probe) == `sbbf probe --exact-bits` on every probed
     value, present and absent.

Probe values come from decoding the chunks (arrowrs-oracle dump): per chunk up to 50 present
values and 200 absent ones (values of other row groups, edge values, random values), canonical
text from tools/gen/common.py -- the same scheme as fixtures/expected.

Exit status: 0 all agree; 1 any disagreement (listed); 3 a reader/tool is missing (never skipped).
"""

from __future__ import annotations

import argparse
import decimal
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "gen"))


def die_missing(what: str):
    bar = "!" * 78
    print(f"\n{bar}\ninterop.py: MISSING READER/TOOL: {what}\n"
          f"Every reader is required; nothing is skipped. Run tools/interop/interop.sh (it sets up tools/.venv).\n{bar}",
          file=sys.stderr, flush=True)
    sys.exit(3)


try:
    import pyarrow as pa
    import pyarrow.compute as pc  # noqa: F401
    import pyarrow.parquet as pq
except Exception as e:  # pragma: no cover
    die_missing(f"pyarrow ({e})")
try:
    import duckdb
except Exception as e:  # pragma: no cover
    die_missing(f"duckdb ({e})")
try:
    import pyspark
except Exception as e:  # pragma: no cover
    die_missing(f"pyspark ({e})")
try:
    from common import parse_logical, target_dir
    from expected import finish_rows, plan_rows
except Exception as e:  # pragma: no cover
    die_missing(f"tools/gen helpers ({e})")

SBBF = target_dir() / "release" / "sbbf"
ORACLE = target_dir() / "release" / "arrowrs-oracle"
TESTDATA = ROOT / "testdata"

# DuckDB probe samples per chunk (the other readers get every row)
DUCK_PRESENT = 12
DUCK_ABSENT = 25
# Spark count checks per column
SPARK_COLUMNS = 3
SPARK_PRESENT = 2
SPARK_ABSENT = 2
DUCK_COUNT_VALUES = 6


# ------------------------------------------------------------------------------------------------
# Thrift compact protocol: copy a Parquet footer, dropping bloom_filter_offset/length (14, 15)
# from every ColumnMetaData. Everything else is copied byte for byte (re-encoding only the field
# header that follows a dropped field).

def _varint(b: bytes, i: int):
    shift = v = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        if not x & 0x80:
            return v, i
        shift += 7


def _put_varint(out: bytearray, v: int):
    while True:
        x = v & 0x7F
        v >>= 7
        if v:
            out.append(x | 0x80)
        else:
            out.append(x)
            return


def _skip(b: bytes, i: int, t: int) -> int:
    if t in (1, 2):
        return i
    if t == 3:
        return i + 1
    if t in (4, 5, 6):
        return _varint(b, i)[1]
    if t == 7:
        return i + 8
    if t == 8:
        n, i = _varint(b, i)
        return i + n
    if t in (9, 10):
        h = b[i]
        i += 1
        n, et = h >> 4, h & 0x0F
        if n == 15:
            n, i = _varint(b, i)
        if et in (1, 2):
            return i + n
        for _ in range(n):
            i = _skip(b, i, et)
        return i
    if t == 11:
        n, i = _varint(b, i)
        if n == 0:
            return i
        kv = b[i]
        i += 1
        kt, vt = kv >> 4, kv & 0x0F
        for _ in range(n):
            i = i + 1 if kt in (1, 2) else _skip(b, i, kt)
            i = i + 1 if vt in (1, 2) else _skip(b, i, vt)
        return i
    if t == 12:
        last = 0
        while True:
            h = b[i]
            i += 1
            if h == 0:
                return i
            ft = h & 0x0F
            if h >> 4 == 0:
                _, i = _varint(b, i)
            i = _skip(b, i, ft)
    raise ValueError(f"unknown thrift compact type {t}")


DROP = object()


def _copy_struct(b: bytes, i: int, out: bytearray, handlers: dict) -> int:
    last = written = 0
    while True:
        h = b[i]
        i += 1
        if h == 0:
            out.append(0)
            return i
        t, d = h & 0x0F, h >> 4
        if d:
            fid = last + d
        else:
            z, i = _varint(b, i)
            fid = (z >> 1) ^ -(z & 1)
        last = fid
        act = handlers.get(fid)
        if act is DROP:
            i = _skip(b, i, t)
            continue
        delta = fid - written
        if 0 < delta <= 15:
            out.append((delta << 4) | t)
        else:
            out.append(t)
            _put_varint(out, (fid << 1) ^ (fid >> 63))
        written = fid
        if act is None:
            j = _skip(b, i, t)
            out += b[i:j]
            i = j
        else:
            i = act(b, i, t, out)


def _struct_list(handlers):
    def copy(b, i, t, out):
        assert t == 9
        start = i
        h = b[i]
        i += 1
        n, et = h >> 4, h & 0x0F
        if n == 15:
            n, i = _varint(b, i)
        out += b[start:i]
        assert et == 12
        for _ in range(n):
            i = _copy_struct(b, i, out, handlers)
        return i
    return copy


def _struct(handlers):
    def copy(b, i, t, out):
        assert t == 12
        return _copy_struct(b, i, out, handlers)
    return copy


COLUMN_META = {14: DROP, 15: DROP}
COLUMN_CHUNK = {3: _struct(COLUMN_META)}
ROW_GROUP = {1: _struct_list(COLUMN_CHUNK)}
FILE_META = {4: _struct_list(ROW_GROUP)}


def footer_start(data: bytes) -> int:
    assert data[-4:] == b"PAR1", "not a Parquet file"
    n = struct.unpack("<I", data[-8:-4])[0]
    return len(data) - 8 - n


def strip_filters(src: Path, dst: Path):
    """Copy SRC with every bloom_filter_offset/length removed from the footer (data unchanged)."""
    data = src.read_bytes()
    fs = footer_start(data)
    out = bytearray()
    end = _copy_struct(data, fs, out, FILE_META)
    assert end == len(data) - 8, "footer not fully parsed"
    dst.write_bytes(data[:fs] + bytes(out) + struct.pack("<I", len(out)) + b"PAR1")


# ------------------------------------------------------------------------------------------------
# Fresh pyarrow files without filters

def fresh_tables():
    import datetime as dt
    import random
    import uuid as uuidlib
    rng = random.Random(20240917)
    n = 9000

    def maybe_null(v):
        return None if rng.random() < 0.08 else v

    i64 = [maybe_null(rng.randrange(-(2**62), 2**62) if rng.random() < 0.7 else rng.randrange(-50, 50)) for _ in range(n)]
    strs = [maybe_null(rng.choice(["", "a", "日本語", "🦀", f"user-{rng.randrange(10**9)}", f"k{rng.randrange(300)}"])) for _ in range(n)]
    dates = [maybe_null(dt.date(1960, 1, 1) + dt.timedelta(days=rng.randrange(40000))) for _ in range(n)]
    decs = [maybe_null(decimal.Decimal(rng.randrange(-10**15, 10**15)).scaleb(-3)) for _ in range(n)]
    dbls = [maybe_null(rng.choice([rng.uniform(-1e6, 1e6), float(rng.randrange(-100, 100)), 0.0, -0.0, float("inf")])) for _ in range(n)]
    uuids = [maybe_null(uuidlib.UUID(int=rng.getrandbits(128)).bytes) for _ in range(n)]
    fixed = [maybe_null(rng.getrandbits(64).to_bytes(8, "little")) for _ in range(n)]
    i32 = [maybe_null(rng.randrange(-(2**31), 2**31)) for _ in range(n)]
    ts = [maybe_null(rng.randrange(-(2**50), 2**50)) for _ in range(n)]
    t = pa.table({
        "i64": pa.array(i64, pa.int64()),
        "str": pa.array(strs, pa.string()),
        "date": pa.array(dates, pa.date32()),
        "dec": pa.array(decs, pa.decimal128(18, 3)),
        "dbl": pa.array(dbls, pa.float64()),
        "uuid": pa.array(uuids, pa.uuid()) if hasattr(pa, "uuid") else pa.array(uuids, pa.binary(16)),
        "fixed8": pa.array(fixed, pa.binary(8)),
        "i32": pa.array(i32, pa.int32()),
        "ts_us": pa.array(ts, pa.timestamp("us", tz="UTC")),
    })
    return t


def write_fresh(tmp: Path) -> list[tuple[str, Path]]:
    t = fresh_tables()
    a = tmp / "fresh_pa_default.parquet"
    pq.write_table(t, a, row_group_size=2500)
    b = tmp / "fresh_pa_v2_zstd_nodict.parquet"
    pq.write_table(t, b, row_group_size=4000, use_dictionary=False, compression="zstd", data_page_version="2.0",
                   store_decimal_as_integer=True, write_page_index=True)
    return [("pyarrow (no filters)", a), ("pyarrow (no filters)", b)]


# ------------------------------------------------------------------------------------------------
# helpers

def tables_equal(a, b) -> bool:
    """Table.equals, except that NaN equals NaN (same bits): compare the Arrow IPC bytes."""
    if a.equals(b) and a.schema.equals(b.schema, check_metadata=True):
        return True
    import io

    def ipc(t):
        buf = io.BytesIO()
        with pa.ipc.new_stream(buf, t.schema) as w:
            w.write_table(t)
        return buf.getvalue()
    return a.schema.equals(b.schema, check_metadata=True) and ipc(a) == ipc(b)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


class Results:
    def __init__(self):
        self.failures: list[str] = []
        # per case: reader -> [checked, disagreements]
        self.table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        self.notes: list[str] = []

    def ok(self, case, reader, n=1):
        self.table[case][reader][0] += n

    def bad(self, case, reader, msg):
        self.table[case][reader][0] += 1
        self.table[case][reader][1] += 1
        self.failures.append(f"[{case}] {reader}: {msg}")


def sbbf_probe(path: Path, column: str, values: list[str], flags=()) -> dict[tuple[int, str], str]:
    """{(row_group, value): maybe|absent|unknown} from sbbf probe --exact-bits (chunks of values)."""
    res = {}
    for k in range(0, len(values), 400):
        chunk = values[k:k + 400]
        p = run([SBBF, "probe", "--exact-bits", *flags, "--format", "json", "--", path, column, *chunk])
        if p.returncode not in (0, 1):
            raise RuntimeError(f"sbbf probe {path} {column} failed ({p.returncode}): {p.stderr.strip()}")
        for line in p.stdout.splitlines():
            if not line.strip():
                continue
            j = json.loads(line)
            for rg in j["row_groups"]:
                for v in rg["values"]:
                    res[(rg["row_group"], v["value"])] = v["result"]
    return res


def dump_chunks(path: Path):
    p = run([ORACLE, "dump", path])
    if p.returncode:
        raise RuntimeError(f"arrowrs-oracle dump {path}: {p.stderr}")
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    return lines[0], lines[1:]


def arrowrs_probe(path: Path, rows):
    inp = "".join(json.dumps({"column": r["column"], "row_group": r["row_group"], "plain_hex": r["plain_hex"]}) + "\n"
                  for r in rows)
    p = run([ORACLE, "probe", path], input=inp)
    if p.returncode:
        raise RuntimeError(f"arrowrs-oracle probe {path}: {p.stderr}")
    return [json.loads(x) for x in p.stdout.splitlines()]


def compile_pjprobe(build: Path) -> Path:
    jars = Path(pyspark.__file__).parent / "jars"
    if not any(jars.glob("parquet-hadoop-*.jar")):
        die_missing(f"parquet-java jars in {jars}")
    out = build / "pjprobe"
    out.mkdir(parents=True, exist_ok=True)
    p = run(["javac", "-d", out, "-cp", f"{jars}/*", ROOT / "tools" / "interop" / "java" / "PjProbe.java"])
    if p.returncode:
        die_missing(f"javac PjProbe.java failed: {p.stderr}")
    return out


def pj_probe(path: Path, rows, spark):
    """parquet-java's answers through py4j (PjProbe in the Spark driver JVM)."""
    inp = "".join(f"{r['column']}\t{r['row_group']}\t{r['plain_hex']}\n" for r in rows)
    out = spark.spark.sparkContext._jvm.PjProbe.probe(str(path), inp).split()
    assert len(out) == len(rows), (len(out), len(rows))
    return [{"1": True, "0": False, "null": None}[a] for a in out]


def top_level_order(path: Path):
    """Top-level fields in order, and for each whether it is nested."""
    s = pq.read_schema(path)
    return [(f.name, pa.types.is_nested(f.type)) for f in s]


# DuckDB answers "not excluded" (conservatively) for these; a decisive answer is required elsewhere.
def duck_conservative(r) -> bool:
    name, _ = parse_logical(r["logical_type"])
    pt = r["physical_type"]
    if pt in ("FLOAT", "DOUBLE") and r["value"] in ("NaN", "0.0", "-0.0"):
        return True
    if name == "DECIMAL" and pt in ("FIXED_LEN_BYTE_ARRAY", "BYTE_ARRAY"):
        return True
    if pt == "INT96":
        return True
    if name == "TIME":
        return True  # read at another precision by DuckDB
    if name == "TIMESTAMP" and "NANOS" in r["logical_type"]:
        return True
    return False


def duck_literal(r) -> str:
    name, _ = parse_logical(r["logical_type"])
    if r["physical_type"] in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY") and name in ("NONE", "BSON"):
        return f"from_hex('{r['plain_hex']}')"
    return "'" + r["value"].replace("'", "''") + "'"


def sql_ident_path(col: str) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in col.split("."))


# ------------------------------------------------------------------------------------------------
# checks of one case

class Spark:
    def __init__(self, classpath: Path):
        from pyspark.sql import SparkSession
        self.spark = (SparkSession.builder.master("local[2]").appName("sbbf-interop")
                      .config("spark.driver.extraClassPath", str(classpath))
                      .config("spark.sql.parquet.filterPushdown", "true")
                      .config("spark.hadoop.parquet.filter.bloom.enabled", "true")
                      .config("spark.sql.session.timeZone", "UTC")
                      .config("spark.ui.enabled", "false")
                      .config("spark.driver.memory", "1g")
                      .config("spark.sql.shuffle.partitions", "2")
                      .getOrCreate())
        self.spark.sparkContext.setLogLevel("OFF")  # expected failures (types Spark cannot read) are handled in Python
        self.spark.sparkContext._jsc.hadoopConfiguration().set("parquet.filter.bloom.enabled", "true")
        assert self.spark.conf.get("spark.sql.parquet.filterPushdown") == "true"

    def stop(self):
        self.spark.stop()


def spark_lit(F, T, dtype, r):
    name, _ = parse_logical(r["logical_type"])
    if isinstance(dtype, T.BinaryType):
        return F.unhex(F.lit(r["plain_hex"]))
    return F.lit(r["value"]).cast(dtype)


def check_case(case: str, writer: str, src: Path, inp: Path, columns: list[str], add_args: list[str],
               res: Results, spark: Spark, tmp: Path, expect_added: set[str] | None = None):
    out = tmp / (inp.stem + "." + case.replace(" ", "_").replace("/", "_") + ".out.parquet")
    t0 = time.time()
    args = [SBBF, "add", inp] + sum((["-c", c] for c in columns), []) + add_args + ["-o", out, "--format", "json"]
    p = run(args)
    cmdline = " ".join(str(a) for a in args)
    if p.returncode != 0:
        res.bad(case, "sbbf add", f"exit {p.returncode}: {p.stderr.strip()} ({cmdline})")
        return
    rep = json.loads(p.stdout)
    res.ok(case, "sbbf add")

    # (a) bytes and pyarrow ------------------------------------------------------------------
    ib, ob = inp.read_bytes(), out.read_bytes()
    fs = footer_start(ib)
    if ob[:fs] != ib[:fs]:
        first = next(k for k in range(fs) if ob[k] != ib[k]) if len(ob) >= fs else len(ob)
        res.bad(case, "bytes", f"output differs from input before the input's footer start {fs} (first at {first})")
    else:
        res.ok(case, "bytes")
    if rep.get("bytes_written") != len(ob) - fs:
        res.bad(case, "bytes", f"bytes_written {rep.get('bytes_written')} != output size - footer start {len(ob) - fs}")
    else:
        res.ok(case, "bytes")
    try:
        ti, to = pq.read_table(inp), pq.read_table(out)
        if tables_equal(ti, to):
            res.ok(case, "pyarrow read")
        else:
            res.bad(case, "pyarrow read", f"table differs: {out}")
    except Exception as e:
        res.bad(case, "pyarrow read", f"{type(e).__name__}: {e}")
        ti = None
    v = run([SBBF, "verify", out, "--samples", "200"])
    if v.returncode != 0:
        res.bad(case, "sbbf verify", f"exit {v.returncode}: {v.stdout[-500:]} {v.stderr[-500:]}")
    else:
        res.ok(case, "sbbf verify")

    # probe rows --------------------------------------------------------------------------------
    _, chunks = dump_chunks(out)
    chunks = [c for c in chunks if c["column"] in columns]
    for c in chunks:
        if not c["has_bloom_filter"] and (expect_added is None or c["column"] in expect_added):
            res.bad(case, "arrow-rs", f"no filter on {c['column']} row group {c['row_group']} after sbbf add")
    rows, _ = finish_rows(out.name, plan_rows(out.name, chunks))
    by_col = defaultdict(list)
    for r in rows:
        by_col[r["column"]].append(r)
    ours = {}
    for col, rs in by_col.items():
        ans = sbbf_probe(out, col, sorted({r["value"] for r in rs}))
        for r in rs:
            a = ans.get((r["row_group"], r["value"]))
            r["sbbf"] = a
            if r["present_in_data"] and a != "maybe":
                res.bad(case, "sbbf probe", f"present value answered {a}: sbbf probe --exact-bits {out} {col} "
                        f"{r['value']!r} (row group {r['row_group']})")
        ours[col] = ans
        name, _ = parse_logical(rs[0]["logical_type"])
        if rs[0]["physical_type"] == "BYTE_ARRAY" and name == "DECIMAL":
            # a typed BYTE_ARRAY decimal is probed in every width a writer may use (2..16 bytes,
            # by design): compare bits with --hex (the exact bytes), and typed must cover hex
            hx = sbbf_probe(out, col, sorted({r["plain_hex"] for r in rs}), ["--hex"])
            for r in rs:
                r["sbbf_typed"] = r["sbbf"]
                r["sbbf"] = hx.get((r["row_group"], r["plain_hex"]))
                if r["sbbf"] == "maybe" and r["sbbf_typed"] != "maybe":
                    res.bad(case, "sbbf probe", f"--hex maybe but typed {r['sbbf_typed']}: {out} {col} {r['value']!r}")
            res.notes.append(f"{case}: {col} (BYTE_ARRAY DECIMAL) compared bit for bit through `sbbf probe --hex`; "
                             f"typed probes try 15 widths: {sum(r['sbbf_typed'] == 'maybe' and r['sbbf'] == 'absent' for r in rs)} "
                             f"extra maybe of {len(rs)}")

    def sbbf_bool(r):
        return {"maybe": True, "absent": False}.get(r["sbbf"])

    # (d) arrow-rs -------------------------------------------------------------------------------
    for r, a in zip(rows, arrowrs_probe(out, rows)):
        if a["maybe"] is None or a["maybe"] != sbbf_bool(r):
            res.bad(case, "arrow-rs Sbbf::check", f"arrow-rs {a['maybe']} vs sbbf {r['sbbf']}: {out} {r['column']} "
                    f"rg {r['row_group']} value {r['value']!r} (plain {r['plain_hex']}, present {r['present_in_data']})")
        else:
            res.ok(case, "arrow-rs Sbbf::check")

    # (c1) parquet-java's own filter reader ---------------------------------------------------------
    for r, a in zip(rows, pj_probe(out, rows, spark)):
        if a is None or a != sbbf_bool(r) or (r["present_in_data"] and not a):
            res.bad(case, "parquet-java findHash", f"parquet-java {a} vs sbbf {r['sbbf']}: {out} {r['column']} "
                    f"rg {r['row_group']} value {r['value']!r} (plain {r['plain_hex']}, present {r['present_in_data']})")
        else:
            res.ok(case, "parquet-java findHash")

    # (b) DuckDB --------------------------------------------------------------------------------------
    con = duckdb.connect()
    order = top_level_order(out)
    nested_seen, probe_ok = False, set()
    for name, nested in order:
        if nested:
            nested_seen = True
        elif not nested_seen:
            probe_ok.add(name)
    desc = {row[0]: row[1] for row in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{inp}')").fetchall()}
    for col, rs in by_col.items():
        name, _ = parse_logical(rs[0]["logical_type"])
        if name == "FLOAT16":
            res.notes.append(f"{case}: DuckDB not used for FLOAT16 column {col} (known DuckDB bug 1)")
            continue
        if col in probe_ok:
            seen_rg = defaultdict(lambda: [0, 0])
            cache = {}
            for r in rs:
                k = seen_rg[r["row_group"]]
                idx = 0 if r["present_in_data"] else 1
                if k[idx] >= (DUCK_PRESENT if idx == 0 else DUCK_ABSENT):
                    continue
                k[idx] += 1
                key = r["plain_hex"]
                if key not in cache:
                    q = f"SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('{out}', '{col}', {duck_literal(r)})"
                    try:
                        cache[key] = {int(g): bool(x) for g, x in con.execute(q).fetchall()}
                    except Exception:
                        cache[key] = None  # a value DuckDB cannot cast
                d = cache[key]
                if d is None or r["row_group"] not in d:
                    continue
                excl = d[r["row_group"]]
                s = sbbf_bool(r)
                if r["present_in_data"] and excl:
                    res.bad(case, "DuckDB parquet_bloom_probe", f"DuckDB excludes a present value: {out} {col} rg {r['row_group']} {r['value']!r}")
                elif excl and s:
                    res.bad(case, "DuckDB parquet_bloom_probe", f"DuckDB excludes, sbbf says maybe: {out} {col} rg {r['row_group']} {r['value']!r}")
                elif not excl and s is False and not duck_conservative(r):
                    res.bad(case, "DuckDB parquet_bloom_probe", f"DuckDB says not excluded, sbbf says absent: {out} {col} rg {r['row_group']} {r['value']!r} (plain {r['plain_hex']})")
                else:
                    res.ok(case, "DuckDB parquet_bloom_probe")
        # counts on input vs output (query-time pruning uses the right chunk, nested too)
        top = col.split(".")[0]
        if ".list." in col or ".key_value." in col or ".bag." in col or top not in desc:
            continue
        sample = [r for r in rs if r["present_in_data"]][:DUCK_COUNT_VALUES // 2] + \
                 [r for r in rs if not r["present_in_data"] and r["sbbf"] == "absent"][:DUCK_COUNT_VALUES // 2]
        for r in sample:
            lit = duck_literal(r)
            if not lit.startswith("from_hex"):
                lit = f"TRY_CAST({lit} AS {duck_leaf_type(con, inp, col)})"
            q = "SELECT count(*) FROM read_parquet('{}') WHERE " + sql_ident_path(col) + f" = {lit}"
            try:
                ci = con.execute(q.format(inp)).fetchone()[0]
            except Exception:
                continue
            co = con.execute(q.format(out)).fetchone()[0]
            if ci != co:
                res.bad(case, "DuckDB count", f"count(*) WHERE {col} = {lit}: input {ci}, output {co} ({out})")
            else:
                res.ok(case, "DuckDB count")
    con.close()

    # (c2) Spark / parquet-java reading with pushdown --------------------------------------------------
    spark_check(case, inp, out, by_col, res, spark)


_DUCK_TYPES = {}


def duck_leaf_type(con, path, col):
    key = (str(path), col)
    if key not in _DUCK_TYPES:
        _DUCK_TYPES[key] = con.execute(f"SELECT typeof({sql_ident_path(col)}) FROM read_parquet('{path}') LIMIT 1").fetchone()[0]
    return _DUCK_TYPES[key]


def spark_check(case, inp, out, by_col, res, spark: Spark):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    s = spark.spark
    schema = None
    try:
        di = s.read.parquet(str(inp))
        ni = di.count()
    except Exception as e:
        # Spark refuses some types (TIME, TIMESTAMP(NANOS), UUID): read the columns it supports
        why = str(e).splitlines()[0][:120]
        fields = []
        for f in pq.read_schema(inp):
            tiny = Path(tempfile.mkdtemp(prefix="sbbf-interop-schema-")) / "t.parquet"
            pq.write_table(pa.table({f.name: pa.array([], f.type)}), tiny)
            try:
                fields.append(s.read.parquet(str(tiny)).schema.fields[0])
            except Exception:
                pass
            shutil.rmtree(tiny.parent, ignore_errors=True)
        if not fields:
            res.bad(case, "Spark", f"Spark reads no column of the input ({why})")
            return
        schema = T.StructType(fields)
        res.notes.append(f"{case}: Spark refuses part of the schema ({why}); read with the {len(fields)} columns it supports")
        di = s.read.schema(schema).parquet(str(inp))
        ni = di.count()
    do = (s.read.schema(schema) if schema is not None else s.read).parquet(str(out))
    no = do.count()
    if ni != no:
        res.bad(case, "Spark", f"row count input {ni} output {no}")
    else:
        res.ok(case, "Spark")
    # pick columns of different physical types first
    picked, seen_types = [], set()
    for pass_ in (0, 1):
        for col, rs in by_col.items():
            if len(picked) >= SPARK_COLUMNS or col in picked:
                continue
            if ".list." in col or ".key_value." in col or ".bag." in col:
                continue
            if pass_ == 0 and rs[0]["physical_type"] in seen_types:
                continue
            if col.split(".")[0] not in di.columns:
                continue  # a column Spark cannot read (asking would log a Java stack trace)
            try:
                dtype = di.select(F.col(col)).schema.fields[0].dataType
            except Exception:
                continue
            if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
                continue
            picked.append(col)
            seen_types.add(rs[0]["physical_type"])
    probes = []
    for col in picked:
        rs = by_col[col]
        dtype = di.select(F.col(col)).schema.fields[0].dataType
        sample = [r for r in rs if r["present_in_data"]][:SPARK_PRESENT] + \
                 [r for r in rs if not r["present_in_data"] and r["sbbf"] == "absent"][:SPARK_ABSENT]
        for r in sample:
            if r["physical_type"] in ("FLOAT", "DOUBLE") and r["value"] in ("NaN", "0.0", "-0.0"):
                # parquet-java's Bloom filter pushdown probes only the literal's bits although SQL
                # has 0.0 = -0.0 (and Spark NaN = NaN): it drops row groups holding only the other
                # zero, with its own writer's filters too (testdata/spark_float_bytes.parquet,
                # f32 = 0.0: 1 row instead of 2). Not a property of our filters.
                continue
            try:
                lit = spark_lit(F, T, dtype, r)
                di.select(F.col(col) == lit)  # analysis only: can Spark compare it?
            except Exception:
                continue
            probes.append((col, r, lit))
    if not probes:
        return
    # the same query on input (no filters) and output (pushdown + the new filters)
    for col, r, lit in probes:
        try:
            ci = di.filter(F.col(col) == lit).count()
        except Exception:
            continue
        try:
            co = do.filter(F.col(col) == lit).count()
        except Exception as e:
            res.bad(case, "Spark", f"filter {col} == {r['value']!r} fails on output: {str(e)[:200]}")
            continue
        if ci != co:
            res.bad(case, "Spark", f"filter({col} == {r['value']!r}).count(): input {ci}, output {co} ({out})")
        else:
            res.ok(case, "Spark")


# ------------------------------------------------------------------------------------------------

def leaf_columns(path: Path):
    md = pq.ParquetFile(path).metadata
    sch = md.schema
    return [(sch.column(i).path, sch.column(i).physical_type) for i in range(md.num_columns)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("files", nargs="*", help="testdata files to use (default: all)")
    a = ap.parse_args()
    for tool in (SBBF, ORACLE):
        if not tool.exists():
            die_missing(f"{tool} (build it: tools/interop/interop.sh builds both)")
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            die_missing(f"{tool} (Java 17+ JDK, needed by Spark and parquet-java)")

    t_start = time.time()
    tmp = Path(tempfile.mkdtemp(prefix="sbbf-interop-"))
    res = Results()
    meta = json.loads((TESTDATA / "files.json").read_text())
    files = a.files or sorted(p.name for p in TESTDATA.glob("*.parquet"))
    print(f"interop: pyarrow {pa.__version__}, duckdb {duckdb.__version__}, pyspark {pyspark.__version__}; tmp {tmp}", flush=True)
    spark = Spark(compile_pjprobe(tmp))
    print(f"interop: Spark {spark.spark.version} up after {time.time() - t_start:.0f}s", flush=True)
    cases = []
    try:
        # 1. every testdata file, filters stripped (data pages are the writer's), filters on every leaf
        for name in files:
            src = TESTDATA / name
            writer = meta.get(name, {}).get("writer", "?")
            stripped = tmp / name.replace(".parquet", ".stripped.parquet")
            strip_filters(src, stripped)
            if not tables_equal(pq.read_table(src), pq.read_table(stripped)):
                res.bad(name, "strip", "stripped copy reads differently (harness bug)")
                continue
            _, ch = dump_chunks(stripped)
            if any(c["has_bloom_filter"] for c in ch):
                res.bad(name, "strip", "stripped copy still has filters (harness bug)")
                continue
            cols = [p for p, t in leaf_columns(stripped) if t != "BOOLEAN"]
            cases.append((f"{name} stripped, all", writer, src, stripped, cols, []))
            # a few with other sizes: a subset with a low fpp / fixed ndv
            if name in ("pa_ints.parquet", "duckdb_float_bytes.parquet", "spark_types.parquet", "arrowrs_nested.parquet"):
                cases.append((f"{name} stripped, 2 cols fpp 0.001 ndv 5000", writer, src, stripped, cols[:2],
                              ["--fpp", "0.001", "--ndv", "5000"]))
        # 2. --replace on files that keep their writer's filters
        for name, cols in (("spark_int96_legacy_nolength.parquet", ["i32", "dec9_2"]),
                           ("duckdb_ints.parquet", ["i64", "u32"]),
                           ("arrowrs_temporal_nolength.parquet", ["date", "ts_us_utc"]),
                           ("pa_nested.parquet", ["s.b", "tail"])):
            if a.files and name not in a.files:
                continue
            writer = meta.get(name, {}).get("writer", "?")
            cases.append((f"{name} --replace {','.join(cols)}", writer, TESTDATA / name, TESTDATA / name, cols,
                          ["--replace", "--fpp", "0.05"]))
        # 3. fresh pyarrow files written without filters
        if not a.files:
            for writer, path in write_fresh(tmp):
                cols = [p for p, _ in leaf_columns(path)]
                cases.append((f"{path.name}, all", writer, path, path, cols, []))
                cases.append((f"{path.name}, str+i64 fpp 0.1", writer, path, path, ["str", "i64"], ["--fpp", "0.1"]))

        for case, writer, src, inp, cols, extra in cases:
            t0 = time.time()
            try:
                check_case(case, writer, src, inp, cols, extra, res, spark, tmp)
            except Exception as e:
                res.bad(case, "harness", f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            res.table[case]["_writer"] = writer
            print(f"  {case:<62} {time.time() - t0:5.1f}s", flush=True)
    finally:
        spark.stop()

    # summary --------------------------------------------------------------------------------------
    readers = ["sbbf add", "bytes", "pyarrow read", "sbbf verify", "arrow-rs Sbbf::check", "parquet-java findHash",
               "DuckDB parquet_bloom_probe", "DuckDB count", "Spark"]
    short = ["add", "bytes", "pyarrow", "verify", "arrow-rs", "pj findHash", "duck probe", "duck count", "spark"]
    print()
    print(f"{'case':<60} {'writer':<22} " + " ".join(f"{s:>12}" for s in short))
    tot = defaultdict(lambda: [0, 0])
    for case, d in res.table.items():
        cells = []
        for rd in readers:
            n, bad = d.get(rd, [0, 0]) if rd in d else (0, 0)
            tot[rd][0] += n
            tot[rd][1] += bad
            cells.append(f"{n - bad}/{n}" if n else "-")
        print(f"{case[:60]:<60} {str(d.get('_writer', ''))[:22]:<22} " + " ".join(f"{c:>12}" for c in cells))
    print(f"{'TOTAL (agreeing/checked)':<60} {'':<22} " + " ".join(f"{f'{tot[r][0] - tot[r][1]}/{tot[r][0]}':>12}" for r in readers))
    for n in sorted(set(res.notes)):
        print(f"note: {n}")
    print(f"\ninterop: {len(cases)} cases in {time.time() - t_start:.0f}s")
    if res.failures:
        print(f"\ninterop: FAILED: {len(res.failures)} disagreement(s):", file=sys.stderr)
        for f in res.failures[:200]:
            print("  " + f, file=sys.stderr)
        print(f"(temporary files kept in {tmp})", file=sys.stderr)
        sys.exit(1)
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print("interop: OK: every reader agrees")


if __name__ == "__main__":
    main()
