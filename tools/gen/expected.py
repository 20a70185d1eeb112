"""Compute fixtures/expected/<stem>.jsonl.gz for testdata/*.parquet with OTHER implementations.

usage: expected.py [FILE.parquet ...]   (default: every testdata/*.parquet)
       expected.py --check              (sanity-check every fixtures/expected/*.jsonl.gz)

Ground truth (`present_in_data`) comes from decoding the column chunks with the arrow-rs
low-level column reader (`arrowrs-oracle dump`); answers come from arrow-rs
(`arrowrs-oracle probe`, `Sbbf::check`), parquet-java (java/PjOracle.java, compiled against
pyspark's jars) and DuckDB (`parquet_bloom_probe`). Our own code is never used.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from common import (BUILD, EXPECTED, ORACLE_BIN, ROOT, TESTDATA, describe, edge_values, encode_text,
                    parse_logical, random_value, rng_for)

N_PRESENT = 50
N_ABSENT = 200
N_OTHER = 50

FIELDS = ["file", "column", "physical_type", "logical_type", "type_length", "row_group", "value",
          "value_json_typed", "physical_json", "plain_hex", "present_in_data", "has_bloom_filter",
          "arrowrs_says_maybe", "parquetjava_says_maybe", "duckdb_says_maybe"]


def dump(path: Path):
    outp = subprocess.run([str(ORACLE_BIN), "dump", str(path)], check=True, capture_output=True, text=True).stdout
    lines = [json.loads(x) for x in outp.splitlines()]
    return lines[0], lines[1:]


# ------------------------------------------------------------------------------------------ probes

def plan_rows(fname: str, chunks: list[dict]) -> list[dict]:
    by_col: dict[str, list[dict]] = {}
    for c in chunks:
        by_col.setdefault(c["column"], []).append(c)
    rows = []
    for col, cs in by_col.items():
        c0 = cs[0]
        ptype, ltype, tlen = c0["physical_type"], c0["logical_type"], c0["type_length"]
        if ptype == "BOOLEAN":
            continue
        universe = set().union(*(set(c["distinct_hex"]) for c in cs))
        rng = rng_for(fname, col)
        nowhere: list[str] = []
        for b in edge_values(ptype, ltype, tlen):
            h = b.hex()
            if h not in universe and h not in nowhere:
                nowhere.append(h)
        tries = 0
        while len(nowhere) < N_ABSENT + 20 and tries < 20000:
            tries += 1
            h = random_value(rng, ptype, ltype, tlen).hex()
            if h not in universe and h not in nowhere:
                nowhere.append(h)
        for c in sorted(cs, key=lambda c: c["row_group"]):
            here = set(c["distinct_hex"])
            present = sorted(here)
            if len(present) > N_PRESENT:
                present = sorted(rng.sample(present, N_PRESENT))
            other = sorted(universe - here)
            if len(other) > N_OTHER:
                other = sorted(rng.sample(other, N_OTHER))
            absent = other + nowhere[: N_ABSENT - len(other)]
            for h, is_present in [(h, True) for h in present] + [(h, False) for h in absent]:
                rows.append(dict(column=col, physical_type=ptype, logical_type=ltype, type_length=tlen,
                                 row_group=c["row_group"], plain_hex=h, present_in_data=is_present,
                                 has_bloom_filter=c["has_bloom_filter"]))
    return rows


def finish_rows(fname: str, rows: list[dict]) -> tuple[list[dict], int]:
    """Fill value/value_json_typed/physical_json; drop rows whose text cannot denote the bytes."""
    done, dropped = [], 0
    for r in rows:
        b = bytes.fromhex(r["plain_hex"])
        text, typed, phys = describe(r["physical_type"], r["logical_type"], r["type_length"], b)
        name, _ = parse_logical(r["logical_type"])
        back = encode_text(r["physical_type"], r["logical_type"], r["type_length"], text)
        if back != b:
            # a non-canonical NaN, or a BYTE_ARRAY decimal that is not minimal two's complement
            if not (name == "DECIMAL" and r["physical_type"] == "BYTE_ARRAY"):
                dropped += 1
                continue
        r.update(file=fname, value=text, value_json_typed=typed, physical_json=phys)
        done.append(r)
    return done, dropped


# ------------------------------------------------------------------------------------------ oracles

def oracle_arrowrs(path: Path, rows):
    inp = "".join(json.dumps({"column": r["column"], "row_group": r["row_group"], "plain_hex": r["plain_hex"]}) + "\n" for r in rows)
    outp = subprocess.run([str(ORACLE_BIN), "probe", str(path)], input=inp, check=True, capture_output=True, text=True).stdout
    res = [json.loads(x) for x in outp.splitlines()]
    assert len(res) == len(rows)
    for r, a in zip(rows, res):
        assert a["has_bloom_filter"] == r["has_bloom_filter"]
        r["arrowrs_says_maybe"] = a["maybe"]


def pj_classpath():
    global _PJ_CP
    if _PJ_CP is None:
        from writers import java_classpath
        _PJ_CP = java_classpath()
    return _PJ_CP


_PJ_CP = None


def oracle_parquet_java(path: Path, rows):
    inp = "".join(f"{r['column']}\t{r['row_group']}\t{r['plain_hex']}\n" for r in rows)
    outp = subprocess.run(["java", "-cp", pj_classpath(), "PjOracle", str(path)], input=inp, check=True,
                          capture_output=True, text=True).stdout.split()
    assert len(outp) == len(rows), (len(outp), len(rows))
    for r, a in zip(rows, outp):
        r["parquetjava_says_maybe"] = {"1": True, "0": False, "null": None}[a]


def oracle_duckdb(path: Path, rows, con):
    cache: dict[tuple[str, str], dict[int, bool] | None] = {}
    for r in rows:
        r["duckdb_says_maybe"] = None
        name, _ = parse_logical(r["logical_type"])
        if "." in r["column"] or name == "FLOAT16" or not r["has_bloom_filter"]:
            continue  # nested: not addressable; FLOAT16: DuckDB hashes a 4-byte float (README)
        key = (r["column"], r["plain_hex"])
        if key not in cache:
            if r["physical_type"] in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY") and name in ("NONE", "BSON"):
                lit = f"from_hex('{r['plain_hex']}')"
            else:
                lit = "'" + r["value"].replace("'", "''") + "'"
            q = f"SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('{path}', '{r['column']}', {lit})"
            try:
                cache[key] = {int(g): bool(x) for g, x in con.execute(q).fetchall()}
            except Exception as e:  # e.g. a value DuckDB cannot cast to the column type
                cache[key] = None
        ans = cache[key]
        if ans is not None and r["row_group"] in ans:
            r["duckdb_says_maybe"] = not ans[r["row_group"]]


# ------------------------------------------------------------------------------------------ main

def write_jsonl_gz(path: Path, rows):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        for r in rows:
            gz.write((json.dumps({k: r[k] for k in FIELDS}) + "\n").encode())
    path.write_bytes(buf.getvalue())


def summarize(rows):
    s = {"rows": len(rows), "present": sum(r["present_in_data"] for r in rows),
         "no_filter": sum(not r["has_bloom_filter"] for r in rows)}
    s["false_negatives_arrowrs"] = sum(r["present_in_data"] and r["arrowrs_says_maybe"] is False for r in rows)
    s["false_negatives_parquetjava"] = sum(r["present_in_data"] and r["parquetjava_says_maybe"] is False for r in rows)
    s["false_negatives_duckdb"] = sum(r["present_in_data"] and r["duckdb_says_maybe"] is False for r in rows)
    s["false_positives_arrowrs"] = sum((not r["present_in_data"]) and r["arrowrs_says_maybe"] is True for r in rows)
    s["arrowrs_vs_parquetjava_disagree"] = sum(r["arrowrs_says_maybe"] != r["parquetjava_says_maybe"] for r in rows)
    s["duckdb_probed"] = sum(r["duckdb_says_maybe"] is not None for r in rows)
    s["duckdb_vs_arrowrs_disagree"] = sum(r["duckdb_says_maybe"] is not None and r["duckdb_says_maybe"] != r["arrowrs_says_maybe"] for r in rows)
    return s


def columns_meta(chunks):
    cols: dict[str, dict] = {}
    for c in chunks:
        m = cols.setdefault(c["column"], {
            "path": c["column"], "physical_type": c["physical_type"], "logical_type": c["logical_type"],
            "type_length": c["type_length"], "max_def": c["max_def"], "max_rep": c["max_rep"],
            "bloom_filter_in_row_groups": [], "chunks": []})
        if c["has_bloom_filter"]:
            m["bloom_filter_in_row_groups"].append(c["row_group"])
        m["chunks"].append({k: c[k] for k in ("bloom_filter_offset", "bloom_filter_length", "encodings", "num_values")}
                           | {"distinct_values": len(c["distinct_hex"])})
    for m in cols.values():
        m["bloom_filter_length_present"] = any(ch["bloom_filter_length"] is not None for ch in m["chunks"])
    return list(cols.values())


def main(files):
    import duckdb
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    EXPECTED.mkdir(parents=True, exist_ok=True)
    mpath = EXPECTED / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() else {"files": {}}
    desc = json.loads((TESTDATA / "files.json").read_text()) if (TESTDATA / "files.json").exists() else {}
    for path in files:
        path = Path(path).resolve()
        fname = path.name
        info, chunks = dump(path)
        rows, dropped = finish_rows(fname, plan_rows(fname, chunks))
        oracle_arrowrs(path, rows)
        oracle_parquet_java(path, rows)
        oracle_duckdb(path, rows, con)
        write_jsonl_gz(EXPECTED / (path.stem + ".jsonl.gz"), rows)
        s = summarize(rows)
        s["dropped_rows"] = dropped
        disagreements = [{k: r[k] for k in ("column", "row_group", "value", "plain_hex", "present_in_data", "arrowrs_says_maybe", "duckdb_says_maybe")}
                         for r in rows if r["duckdb_says_maybe"] is not None and r["duckdb_says_maybe"] != r["arrowrs_says_maybe"]][:20]
        manifest["files"][fname] = {
            "writer": desc.get(fname, {}).get("writer"), "description": desc.get(fname, {}).get("description"),
            "created_by": info["created_by"], "num_rows": info["num_rows"], "row_group_rows": info["row_group_rows"],
            "size_bytes": path.stat().st_size, "counts": s, "duckdb_disagreements_first_20": disagreements,
            "columns": columns_meta(chunks)}
        print(f"{fname}: {json.dumps(s)}", flush=True)
    manifest["versions"] = versions()
    manifest["files"] = dict(sorted(manifest["files"].items()))
    mpath.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")


def versions():
    import duckdb
    import numpy
    import pyarrow
    import pyspark
    return {"pyarrow": pyarrow.__version__, "duckdb": duckdb.__version__, "pyspark": pyspark.__version__,
            "parquet_java": "1.17.0 (pyspark jars)", "numpy": numpy.__version__,
            "arrow_rs_parquet": "60.1.0 (tools/interop/arrowrs-oracle)"}


def check():
    """Every present value must be 'maybe' for every oracle that answered; print per-file counts."""
    bad = 0
    print(f"{'file':40s} {'rows':>6s} {'present':>7s} {'nofilt':>6s} {'FN-ar':>5s} {'FN-pj':>5s} {'FN-dk':>5s} {'ar!=pj':>6s} {'dk!=ar':>6s}")
    for p in sorted(EXPECTED.glob("*.jsonl.gz")):
        with gzip.open(p, "rt") as f:
            rows = [json.loads(x) for x in f]
        for r in rows:
            assert list(r) == FIELDS, p
            if r["present_in_data"] and r["has_bloom_filter"] and r["arrowrs_says_maybe"] is not True:
                bad += 1
                print("VIOLATION", p.name, r)
            if not r["has_bloom_filter"] and r["arrowrs_says_maybe"] is not None:
                bad += 1
                print("VIOLATION (answer without filter)", p.name, r)
        s = summarize(rows)
        print(f"{p.name:40s} {s['rows']:6d} {s['present']:7d} {s['no_filter']:6d} {s['false_negatives_arrowrs']:5d} "
              f"{s['false_negatives_parquetjava']:5d} {s['false_negatives_duckdb']:5d} {s['arrowrs_vs_parquetjava_disagree']:6d} {s['duckdb_vs_arrowrs_disagree']:6d}")
        missing = (TESTDATA / p.name.replace(".jsonl.gz", ".parquet"))
        if not missing.exists():
            bad += 1
            print("VIOLATION: no testdata file for", p.name)
    if bad:
        sys.exit(f"{bad} violations")
    print("check: ok (every present value is 'maybe' for arrow-rs where a filter exists)")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--check"]:
        check()
    else:
        main(args or sorted(str(p) for p in TESTDATA.glob("*.parquet")))
