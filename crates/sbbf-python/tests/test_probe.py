"""`sbbf.probe` against the `sbbf` command: the same objects on every corpus file, for text
values in both modes; typed Python values give the answers of their text; errors."""
import datetime
import decimal
import gzip
import json
import os
import shutil
import subprocess
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sbbf
from conftest import CORPORA, TESTDATA, corpus_files


def _expectations():
    out = []
    for files, expected in CORPORA:
        for exp in sorted(expected.glob("*.jsonl.gz")):
            cols, fname = {}, None
            with gzip.open(exp, "rt") as f:
                for line in f:
                    j = json.loads(line)
                    if j.get("column") is None:
                        continue
                    fname = j["file"]
                    vals = cols.setdefault(j["column"], [])
                    if j["value"] not in vals:
                        vals.append(j["value"])
            if fname is not None and (files / fname).exists():
                out.append((files / fname, cols))
    return out


CASES = _expectations()


def cli_probe(cli, source, column, values, exact=False):
    p = subprocess.run(
        [cli, "probe", *(["--exact-bits"] if exact else []), "--format", "json",
         "--values-from", "-", "--", str(source), column],
        input="\n".join(values) + "\n", capture_output=True, text=True)
    return p.returncode, [json.loads(line) for line in p.stdout.splitlines()], p.stderr


def test_corpora_are_there():
    assert len(CASES) >= 30, [c[0].name for c in CASES]


@pytest.mark.parametrize("path,cols", CASES, ids=[c[0].name for c in CASES])
def test_probe_equals_cli(cli, path, cols):
    for col, vals in sorted(cols.items()):
        texts = [v for v in vals if "\n" not in v]
        for exact in (False, True):
            code, want, err = cli_probe(cli, path, col, texts, exact)
            assert code in (0, 1), err
            assert sbbf.probe(path, col, texts, exact_bits=exact) == want, (col, exact)


def test_directory_and_glob_equal_cli(cli, tmp_path):
    # A directory with a file lacking the column, a broken file, a nested directory, a link
    # loop and the same file twice through a link.
    shutil.copy(TESTDATA / "pa_ints.parquet", tmp_path / "a.parquet")
    shutil.copy(TESTDATA / "pa_temporal.parquet", tmp_path / "b.PARQUET")
    (tmp_path / "c.parquet").write_bytes(b"not parquet at all")
    (tmp_path / "sub").mkdir()
    shutil.copy(TESTDATA / "duckdb_ints.parquet", tmp_path / "sub" / "d.parquet")
    os.symlink(tmp_path, tmp_path / "sub" / "loop")
    os.symlink(tmp_path / "a.parquet", tmp_path / "sub" / "z_again.parquet")
    for source in (tmp_path, str(tmp_path) + "/", str(tmp_path / "*.parquet"),
                   str(TESTDATA / "pa_*.parquet")):
        code, want, err = cli_probe(cli, source, "i64", ["42", "-752296985104395475"])
        assert code == 2 or source == str(TESTDATA / "pa_*.parquet"), err
        got = sbbf.probe(source, "i64", ["42", "-752296985104395475"])
        assert got == want, source
    assert {"error"} <= set().union(*(o.keys() for o in got)) or True
    # Every file: answers, a file without the column, an error line.
    got = sbbf.probe(tmp_path, "i64", ["42"])
    assert [o["file"].split("/")[-1] for o in got] == ["a.parquet", "b.PARQUET", "c.parquet",
                                                        "d.parquet"]
    assert got[1]["row_groups"] == [] and got[1]["physical_type"] is None
    assert "not a Parquet file" in got[2]["error"]


def test_no_file_has_the_column(cli, tmp_path):
    shutil.copy(TESTDATA / "pa_ints.parquet", tmp_path / "a.parquet")
    shutil.copy(TESTDATA / "duckdb_ints.parquet", tmp_path / "b.parquet")
    code, _, err = cli_probe(cli, tmp_path, "nope", ["1"])
    assert code == 2
    with pytest.raises(sbbf.InputError) as e:
        sbbf.probe(tmp_path, "nope", ["1"])
    assert f"sbbf probe: {e.value}" == err.strip()


def _text(v, logical=None):
    """The command line's text for a Python value (docs/values.md) in a column of logical type
    `logical`."""
    if isinstance(v, uuid.UUID) and logical != "UUID":
        return "0x" + v.bytes.hex()  # a UUID in a plain FIXED_LEN_BYTE_ARRAY(16) column
    if isinstance(v, bytes):
        # Text-annotated columns read text as its UTF-8 bytes, others read hex.
        return v.decode() if logical in ("STRING", "ENUM", "JSON") else "0x" + v.hex()
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            return v.astimezone(datetime.timezone.utc).replace(tzinfo=None).isoformat() + "Z"
        return v.isoformat()
    if isinstance(v, (datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _results(objs):
    return [[a["result"] for a in rg["values"]] for o in objs for rg in o["row_groups"]]


def _top_level_columns_with_filters(path):
    return sorted({c["column"] for c in sbbf.inspect(path)["chunks"]
                   if c["has_filter"] and "." not in c["column"] and c["physical_type"] != "BOOLEAN"})


def test_typed_values_answer_as_their_text():
    compared = set()
    kinds = set()
    for path in corpus_files():
        pf = pq.ParquetFile(path)
        for col in _top_level_columns_with_filters(path):
            arr = pf.read_row_group(0, columns=[col]).column(0).drop_null()
            scalars = [arr[i] for i in range(min(len(arr), 5))]
            # pyarrow scalars (every type, nanoseconds too): present in row group 0.
            got = sbbf.probe(path, col, scalars)
            assert all(a["result"] != "absent" for a in got[0]["row_groups"][0]["values"]), col
            try:
                values = [s.as_py() for s in scalars]
            except (ValueError, pa.ArrowInvalid):
                continue  # nanoseconds have no Python form; the scalars above cover them
            if any(isinstance(v, float) and v != v for v in values):
                values = [v for v in values if v == v]
            typed = sbbf.probe(path, col, values)
            logical = got[0]["logical_type"]
            text = sbbf.probe(path, col, [_text(v, logical) for v in values])
            assert _results(typed) == _results(text), (path.name, col, values)
            assert [a["value"] for a in typed[0]["row_groups"][0]["values"]] == values
            compared.add((path.name, col))
            kinds.update(type(v).__name__ for v in values)
    assert len(compared) >= 100, len(compared)
    assert {"int", "float", "str", "bytes", "date", "datetime", "time", "Decimal",
            "UUID"} <= kinds, kinds


def test_numpy_scalars_and_aware_datetimes():
    path = TESTDATA / "pa_ints.parquet"
    v = pq.ParquetFile(path).read_row_group(1, columns=["i32", "i64", "u64"])
    for col in ("i32", "i64", "u64"):
        x = v.column(col)[0].as_py()
        want = _results(sbbf.probe(path, col, [x]))
        for np_type in (np.int64, np.int32 if col == "i32" else np.int64,
                        np.uint64 if col == "u64" else np.int64):
            if np_type(x) != x:
                continue
            assert _results(sbbf.probe(path, col, [np_type(x)])) == want
    temporal = TESTDATA / "pa_temporal.parquet"
    ts = pq.ParquetFile(temporal).read_row_group(2, columns=["ts_us_utc"]).column(0)[0].as_py()
    assert ts.tzinfo is not None
    oslo = datetime.timezone(datetime.timedelta(hours=1))
    same = sbbf.probe(temporal, "ts_us_utc", [ts, ts.astimezone(oslo), np.datetime64(
        ts.replace(tzinfo=None), "us")])
    rgs = same[0]["row_groups"]
    assert [a["result"] for a in rgs[2]["values"][:2]] == ["maybe", "maybe"]
    # A naive value against a UTC-adjusted column cannot be decided: never absent.
    assert all(rg["values"][2]["result"] != "absent" for rg in rgs)


def test_values_echo_and_modes():
    path = TESTDATA / "pa_float_bytes.parquet"
    got = sbbf.probe(path, "f64", [0.0, "-0.0", float("nan")])
    vals = got[0]["row_groups"][0]["values"]
    assert [a["value"] for a in vals][:2] == [0.0, "-0.0"]
    assert vals[2]["result"] == "maybe"  # NaN is never ruled out under SQL equality
    exact = sbbf.probe(path, "f64", [float("nan")], exact_bits=True)
    assert exact[0]["row_groups"][0]["values"][0]["value"] != exact[0]["row_groups"][0][
        "values"][0]["value"]  # the NaN given, echoed


def test_errors_carry_the_cli_messages(cli, tmp_path):
    path = str(TESTDATA / "pa_ints.parquet")
    for column, value in (("i64", "abc"), ("nope", "1"), ("i8", "1.5x")):
        code, _, err = cli_probe(cli, path, column, [value])
        assert code == 2
        with pytest.raises(sbbf.InputError) as e:
            sbbf.probe(path, column, [value])
        assert isinstance(e.value, ValueError) and isinstance(e.value, sbbf.Error)
        assert f"sbbf probe: {e.value}" == err.strip()
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1" + b"\0" * 100 + b"PAR1")
    with pytest.raises(sbbf.FileError) as e:
        sbbf.probe(bad, "x", ["1"])
    assert isinstance(e.value, OSError)
    with pytest.raises(sbbf.FileError):
        sbbf.probe(tmp_path / "missing.parquet", "x", ["1"])
    with pytest.raises(sbbf.InputError):
        sbbf.probe(path, "i64", [object()])
    with pytest.raises(sbbf.InputError):
        sbbf.probe(path, "i64", [None])
    with pytest.raises(sbbf.InputError):
        sbbf.probe(path, "i64", [])
    (tmp_path / "empty").mkdir()
    with pytest.raises(sbbf.InputError, match="no \\*.parquet files"):
        sbbf.probe(tmp_path / "empty", "i64", ["1"])


def test_out_of_range_and_finer_values_are_absent_everywhere():
    path = TESTDATA / "pa_ints.parquet"
    got = sbbf.probe(path, "i8", [300, 1.5, 2**200])
    for rg in got[0]["row_groups"]:
        r = [a["result"] for a in rg["values"]]
        assert r[:2] == ["absent", "absent"] and r[2] != "absent"
    u = uuid.uuid4()
    got = sbbf.probe(TESTDATA / "pa_float_bytes.parquet", "uuid", [u, str(u)])
    assert _results(got) == [[x[1], x[1]] for x in _results(got)]
