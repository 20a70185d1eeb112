"""`sbbf.read_table` equals `pyarrow.parquet.read_table` (rows, order, schema) for equality and
IN filters on every column with filters of every testdata file, while `row_groups` keeps
fewer row groups where the filters allow."""
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sbbf
from conftest import TESTDATA, corpus_files


def _columns_with_filters(path):
    return sorted({c["column"] for c in sbbf.inspect(path)["chunks"]
                   if c["has_filter"] and "." not in c["column"]})


_BITS = {pa.float16(): pa.int16(), pa.float32(): pa.int32(), pa.float64(): pa.int64()}


def _bits(t):
    """Floats as their bits: `Table.equals` holds NaN unequal to itself."""
    cols = []
    for col in t.columns:
        if col.type in _BITS:
            col = pa.chunked_array([c.view(_BITS[col.type]) for c in col.chunks],
                                   type=_BITS[col.type])
        cols.append(col)
    return pa.table(cols, names=t.column_names)


def _same(path, filters, columns=None):
    """Both readers give the same table, or both raise the same kind of error."""
    try:
        want = pq.read_table(path, filters=filters, columns=columns)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError,
            ValueError) as e:
        with pytest.raises(type(e)):
            sbbf.read_table(path, filters=filters, columns=columns)
        return None
    got = sbbf.read_table(path, filters=filters, columns=columns)
    assert got.schema.equals(want.schema, check_metadata=True), (path.name, filters)
    assert _bits(got).equals(_bits(want)), (path.name, filters)
    return got


def _first_values(path, col):
    """The first non-null value of each row group, as pyarrow scalars."""
    pf = pq.ParquetFile(path)
    out = []
    for rg in range(pf.num_row_groups):
        a = pf.read_row_group(rg, columns=[col]).column(0).drop_null()
        if len(a):
            out.append(a[0])
    return out


def test_read_table_equals_pyarrow_on_every_file():
    cases = pruned = 0
    for path in corpus_files():
        n = pq.ParquetFile(path).num_row_groups
        cols = _columns_with_filters(path)
        for col in cols:
            firsts = _first_values(path, col)
            if not firsts:
                continue
            v, w = firsts[0], firsts[-1]
            for filters in ([(col, "=", v)], [(col, "in", [v, w])],
                            [[(col, "==", v)], [(col, "=", w)]],
                            [(col, "=", v), (col, "!=", w)],
                            [(col, "in", [])]):
                got = _same(path, filters)
                cases += 1
                if got is not None:
                    _same(path, filters, columns=[col])
            keep = sbbf.row_groups(path, [(col, "=", v)])
            assert keep == sorted(set(keep)) and 0 in keep, (path.name, col)
            # The kept row groups are the ones probing says may hold the value.
            probed = sbbf.probe(path, col, [v])[0]["row_groups"]
            assert keep == [rg["row_group"] for rg in probed
                            if rg["values"][0]["result"] != "absent"], (path.name, col)
            pruned += len(keep) < n
            # Python values (where pyarrow has them) prune as the scalars do.
            try:
                py = v.as_py()
            except ValueError:
                continue
            if py == py:  # not NaN
                assert sbbf.row_groups(path, [(col, "=", py)]) == keep, (path.name, col, py)
    assert cases >= 500, cases
    assert pruned >= 80, pruned  # 91 of the (file, column) pairs as written


def test_undecidable_filters_keep_every_row_group():
    path = TESTDATA / "pa_ints.parquet"
    n = pq.ParquetFile(path).num_row_groups
    everything = list(range(n))
    for filters in ([("i64", ">", 5)], [("i64", "not in", [5])], [("i64", "=", None)],
                    [("i64", "in", [5, None])],
                    [[("i64", "=", 5)], [("i32", "<", 0)]], None, []):
        assert sbbf.row_groups(path, filters) == everything, filters
    # An AND with one decidable leaf prunes by it.
    v = _first_values(path, "i64")[1]
    assert sbbf.row_groups(path, [("i64", "=", v), ("i32", ">", 0)]) == sbbf.row_groups(
        path, [("i64", "=", v)])
    assert sbbf.row_groups(path, [("i64", "in", [])]) == []


def test_a_value_no_row_group_holds_reads_nothing():
    path = TESTDATA / "pa_ints.parquet"
    assert sbbf.row_groups(path, [("i8", "=", 300)]) == []  # out of INT(8) range
    got = _same(path, [("i8", "=", 300)])
    assert got is None or got.num_rows == 0


def test_hive_directory(tmp_path):
    ids = pa.array(range(4000), pa.int64())
    for year in (2023, 2024):
        d = tmp_path / f"year={year}"
        d.mkdir()
        t = pa.table({"id": pa.compute.add(ids, year * 10_000), "name": pa.array(
            [f"n{i}" for i in range(4000)])})
        pq.write_table(t, d / "part-0.parquet", row_group_size=500,
                       bloom_filter_options={"id": {"ndv": 500, "fpp": 0.01}})
    for filters in ([("id", "=", 20_230_042)], [("year", "=", 2024), ("id", "in", [20_240_001,
                                                                                  20_243_999])],
                    [[("id", "=", 20_231_000)], [("name", "=", "n7")]]):
        got = _same(tmp_path, filters)
        assert got is not None and got.num_rows >= 1
    f = tmp_path / "year=2023" / "part-0.parquet"
    assert sbbf.row_groups(f, [("id", "=", 20_230_042)]) == [0]
    # A partition column is no column of the file: a file alone refuses it, the directory
    # (whose paths name it) and read_table take it.
    with pytest.raises(sbbf.InputError, match="year"):
        sbbf.row_groups(f, [("year", "=", 2024)])
    by_file = sbbf.row_groups(tmp_path, [("year", "=", 2024), ("id", "=", 20_240_042)])
    assert by_file == {str(tmp_path / "year=2023" / "part-0.parquet"): [],
                       str(tmp_path / "year=2024" / "part-0.parquet"): [0]}


def test_read_table_options_pass_through():
    path = TESTDATA / "pa_temporal.parquet"
    v = _first_values(path, "date")[2]
    want = pq.read_table(path, filters=[("date", "=", v)], columns=["date", "ts_us"],
                         use_threads=False, read_dictionary=["date"])
    got = sbbf.read_table(path, filters=[("date", "=", v)], columns=["date", "ts_us"],
                          use_threads=False, read_dictionary=["date"])
    assert got.equals(want)
    assert sbbf.read_table(path).equals(pq.read_table(path))
    with pytest.raises(TypeError):
        sbbf.read_table(path, no_such_option=1)


def test_a_misspelt_column_raises_as_probe_does():
    path = TESTDATA / "pa_ints.parquet"
    with pytest.raises(sbbf.InputError, match="no column `I64`.*choose from: `i64`"):
        sbbf.row_groups(path, [("I64", "=", 1)])
    with pytest.raises(sbbf.InputError, match="no column `nope`"):
        sbbf.row_groups(path, [[("i64", "=", 1)], [("nope", "=", 5)]])
    with pytest.raises(sbbf.InputError, match="no file has column `I64`"):
        sbbf.row_groups(TESTDATA / "conformance", [("I64", "=", 1)])


def test_row_groups_of_a_directory_equal_each_files(tmp_path):
    # A nested folder and a file without the column (schema evolution): each file's answer is
    # the one-file answer, the file without the column keeps every row group.
    (tmp_path / "sub").mkdir()
    shutil.copy(TESTDATA / "pa_ints.parquet", tmp_path / "a.parquet")
    shutil.copy(TESTDATA / "duckdb_ints.parquet", tmp_path / "sub" / "b.parquet")
    shutil.copy(TESTDATA / "pa_temporal.parquet", tmp_path / "sub" / "c.parquet")
    v = _first_values(TESTDATA / "pa_ints.parquet", "i64")[1]
    filters = [("i64", "=", v)]
    got = sbbf.row_groups(tmp_path, filters)
    files = [tmp_path / "a.parquet", tmp_path / "sub" / "b.parquet", tmp_path / "sub" / "c.parquet"]
    assert list(got) == [str(f) for f in files]
    assert got[str(files[0])] == sbbf.row_groups(files[0], filters)
    assert got[str(files[1])] == sbbf.row_groups(files[1], filters)
    assert got[str(files[2])] == list(range(pq.ParquetFile(files[2]).num_row_groups))
    assert sbbf.row_groups(str(tmp_path / "*.parquet"), filters) == {
        str(files[0]): sbbf.row_groups(files[0], filters)}
    # Pruning never drops a row group that holds the value (pyarrow reads it).
    for f in files[:2]:
        for rg in range(pq.ParquetFile(f).num_row_groups):
            col = pq.ParquetFile(f).read_row_group(rg, columns=["i64"]).column(0).to_pylist()
            if v in col:
                assert rg in got[str(f)], (f, rg)
