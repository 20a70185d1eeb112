"""Delta Lake and Iceberg tables read as their snapshots from Python: tables are written afresh
by the formats' own writers (deltalake, pyiceberg, through tools/gen/lake_tables.py) and every
answer is compared with what the formats' own readers return for the same version. Nothing here
compares with sbbf's own output."""
import datetime
import decimal
import json
import os
import shutil
import subprocess
import sys
import uuid

import pyarrow as pa
import pytest

import sbbf
from sbbf import _sbbf
from conftest import REPO, TESTDATA

sys.path.insert(0, str(REPO / "tools" / "gen"))
import lake_tables  # noqa: E402  (the fixtures' generator: deltalake and pyiceberg writers)


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    out = tmp_path_factory.mktemp("lake")
    lake_tables.make_delta(out)
    lake_tables.make_iceberg(out / "iceberg")
    return out


def _rows(t: pa.Table):
    """A table's rows, sorted, as plain Python values (string and string-view alike)."""
    names = sorted(t.column_names)
    return sorted(zip(*(t.column(n).to_pylist() for n in names)), key=repr), names


def _same_rows(ours: pa.Table, theirs: pa.Table):
    assert sorted(ours.column_names) == sorted(theirs.column_names)
    assert ours.num_rows == theirs.num_rows
    assert _rows(ours) == _rows(theirs)


def _delta_versions(path):
    from deltalake import DeltaTable
    return range(DeltaTable(str(path)).version() + 1)


@pytest.mark.parametrize("name", lake_tables.DELTA_TABLES)
def test_delta_read_table_equals_deltalake_at_every_version(lake, name):
    from deltalake import DeltaTable
    path = lake / name
    for v in _delta_versions(path):
        theirs = DeltaTable(str(path), version=v).to_pyarrow_table()
        ours = sbbf.read_table(str(path), as_of=v)
        _same_rows(ours, theirs)
        # The table's own columns, in the table's order.
        assert ours.column_names == theirs.column_names, v
    # The current version is the default.
    _same_rows(sbbf.read_table(str(path)), DeltaTable(str(path)).to_pyarrow_table())


@pytest.mark.parametrize("name", lake_tables.DELTA_TABLES)
def test_delta_snapshot_files_are_deltalakes(lake, name):
    from deltalake import DeltaTable
    path = lake / name
    for v in _delta_versions(path):
        dt = DeltaTable(str(path), version=v)
        snap = sbbf.snapshot(path, as_of=v)
        assert snap["format"] == "delta" and snap["version"] == v
        want = {os.path.realpath(u.removeprefix("file://")) for u in dt.file_uris()}
        assert {os.path.realpath(f["path"]) for f in snap["files"]} == want, v


def test_delta_filters_prune_and_equal_deltalake(lake):
    from deltalake import DeltaTable
    path = str(lake / "delta_basic")
    for v in _delta_versions(path):
        for probe in [7, 600, 1500, 2999, 4000]:
            theirs = DeltaTable(path, version=v).to_pyarrow_table(
                filters=[("id", "=", probe)])
            ours = sbbf.read_table(path, filters=[("id", "=", probe)], as_of=v)
            _same_rows(ours, theirs)
            # No false "absent": a value the table holds is kept by row_groups.
            kept = sbbf.row_groups(path, [("id", "=", probe)], as_of=v)
            if theirs.num_rows:
                assert any(kept.values()), (v, probe, kept)


def test_delta_partition_columns_come_from_the_log(lake):
    from deltalake import DeltaTable
    path = str(lake / "delta_partitioned")
    theirs = DeltaTable(path).to_pyarrow_table(filters=[("p", "=", "a")])
    ours = sbbf.read_table(path, filters=[("p", "=", "a")])
    _same_rows(ours, theirs)
    assert ours.num_rows > 0
    assert sbbf.read_table(path, filters=[("p", "=", "b")]).num_rows == 0


def test_a_file_url_is_read_as_the_path_it_names(lake):
    """`file:///...` reads the table, not its folder: deltalake's rows, and the same probe."""
    from deltalake import DeltaTable
    path = lake / "delta_basic"
    url = path.resolve().as_uri() + "/"
    _same_rows(sbbf.read_table(url), DeltaTable(str(path)).to_pyarrow_table())
    assert sbbf.probe(url, "id", [600]) == sbbf.probe(str(path) + "/", "id", [600])
    assert sbbf.snapshot(url)["version"] == DeltaTable(str(path)).version()
    with pytest.raises(sbbf.InputError, match="file:///PATH"):
        sbbf.probe("file://elsewhere/t/", "id", [1])


def test_a_partition_column_probe_answers_from_the_logs_values(lake):
    """The files deltalake reads for `p = 'a'` may hold `a` (every row group); every other
    current file holds it in none."""
    from deltalake import DeltaTable
    path = str(lake / "delta_partitioned")
    holding = {os.path.realpath(u.removeprefix("file://")) for u in
               DeltaTable(path).file_uris(partition_filters=[("p", "=", "a")])}
    answers = sbbf.probe(path, "p", ["a"])
    assert holding and len(answers) > len(holding)
    for a in answers:
        results = {v["result"] for rg in a["row_groups"] for v in rg["values"]}
        assert a["row_groups"], a
        assert all(rg["filter"] == "partition" for rg in a["row_groups"])
        want = {"maybe"} if os.path.realpath(a["file"]) in holding else {"absent"}
        assert results == want, a


def test_delta_probe_answers_only_current_files(lake):
    from deltalake import DeltaTable
    path = str(lake / "delta_basic")
    current = {os.path.realpath(u.removeprefix("file://"))
               for u in DeltaTable(path).file_uris()}
    answers = sbbf.probe(path, "id", [600])
    assert {os.path.realpath(a["file"]) for a in answers} == current
    # 600 is in the table: some row group of a current file says "maybe".
    assert any(v["result"] == "maybe" for a in answers for rg in a["row_groups"]
               for v in rg["values"])
    # The folder read as files holds the removed ones too.
    folder = sbbf.probe(path, "id", [600], as_directory=True)
    assert len(folder) > len(answers)


def test_a_probe_after_deltalake_commits_equals_deltalakes_files(lake, tmp_path):
    """An index built at one version, then deltalake appends and deletes: a probe with the
    index (which reads only the commits since) names exactly deltalake's current files and
    answers as a probe without the index."""
    import deltalake
    path = tmp_path / "t"
    shutil.copytree(lake / "delta_partitioned", path)
    assert sbbf.index_build(path, "id")["table_version"] == 2
    rows = pa.table({"id": pa.array([7001, 7002], pa.int64()), "s": ["x", "y"], "p": ["a", "a"]})
    deltalake.write_deltalake(str(path), rows, mode="append", partition_by=["p"])
    deltalake.DeltaTable(str(path)).delete("id = 600")
    current = {os.path.realpath(u.removeprefix("file://"))
               for u in deltalake.DeltaTable(str(path)).file_uris()}
    for values in ([600], [7001], [603, 9999]):
        ours = sbbf.probe(path, "id", values)
        assert {os.path.realpath(a["file"]) for a in ours} == current
        direct = sbbf.probe(path, "id", values, index=False)
        key = lambda a: a["file"]  # noqa: E731
        assert [a["row_groups"] for a in sorted(ours, key=key)] == \
            [a["row_groups"] for a in sorted(direct, key=key)]


def test_read_table_with_the_index_reads_deltalakes_rows(lake, tmp_path):
    """`read_table` of a Delta table with its index (built, then deltalake appends): the
    rows deltalake's own reader returns for the same filters, on a data column, on the
    partition column (which the index is never asked), and ORs of both."""
    import deltalake
    path = tmp_path / "t"
    shutil.copytree(lake / "delta_partitioned", path)
    sbbf.index_build(path, "id")
    rows = pa.table({"id": pa.array([7001, 7002], pa.int64()), "s": ["x", "y"], "p": ["a", "a"]})
    deltalake.write_deltalake(str(path), rows, mode="append", partition_by=["p"])
    theirs = deltalake.DeltaTable(str(path))
    for filters in ([("id", "=", 600)], [("id", "in", [600, 7001, 9999])],
                    [("p", "=", "a"), ("id", "=", 600)], [("p", "=", "b"), ("id", "=", 7001)],
                    [[("p", "=", "a")], [("id", "=", 603)]], [("id", "=", 123456)]):
        _same_rows(sbbf.read_table(str(path), filters=filters),
                   theirs.to_pyarrow_table(filters=filters))


def test_as_of_by_time_reads_the_version_current_then(lake):
    from deltalake import DeltaTable
    path = str(lake / "delta_basic")
    history = {h["version"]: h["timestamp"] for h in DeltaTable(path).history()}
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    at = epoch + datetime.timedelta(milliseconds=history[1])
    assert sbbf.snapshot(path, as_of=at)["version"] == 1
    _same_rows(sbbf.read_table(path, as_of=at.isoformat()),
               DeltaTable(path, version=1).to_pyarrow_table())


def _iceberg(lake, ident):
    from pyiceberg.catalog.sql import SqlCatalog
    root = lake / "iceberg"
    cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    return cat.load_table(ident)


@pytest.mark.parametrize("ident", ["ns.ice_basic", "ns.ice_partitioned", "ns.ice_posdeletes"])
def test_iceberg_read_table_equals_pyiceberg_at_every_snapshot(lake, ident):
    t = _iceberg(lake, ident)
    metadata = t.metadata_location.removeprefix("file://")
    folder = os.path.dirname(os.path.dirname(metadata))
    for s in t.metadata.snapshots:
        theirs = t.scan(snapshot_id=s.snapshot_id).to_arrow()
        for source in (metadata, folder):
            ours = sbbf.read_table(source, as_of=s.snapshot_id)
            _same_rows(ours, theirs)
            snap = sbbf.snapshot(source, as_of=s.snapshot_id)
            want = {task.file.file_path.removeprefix("file://")
                    for task in t.scan(snapshot_id=s.snapshot_id).plan_files()}
            assert {f["path"] for f in snap["files"]} == want
    theirs = t.scan(row_filter="id == 1500").to_arrow()
    _same_rows(sbbf.read_table(metadata, filters=[("id", "=", 1500)]), theirs)


def test_iceberg_equality_deletes_are_left_out(tmp_path):
    """pyiceberg 0.12 refuses to read equality deletes: the answer is its scan before the
    deletes less the rows the spec's rules delete (see `make_iceberg_eqdeletes`)."""
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    made = lake_tables.make_iceberg_eqdeletes(cat)
    metadata = made["table"].metadata_location.removeprefix("file://")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("p", pa.string())])
    _same_rows(sbbf.read_table(metadata), pa.Table.from_pylist(made["rows"], schema))
    _same_rows(sbbf.read_table(metadata, as_of=made["before"]),
               pa.Table.from_pylist(made["rows_before"], schema))
    want = [r for r in made["rows"] if r["id"] in (3, 12, 21)]
    _same_rows(sbbf.read_table(metadata, filters=[("id", "in", [3, 12, 21])]),
               pa.Table.from_pylist(want, schema))


def test_iceberg_rename_is_read_by_field_id(lake):
    t = _iceberg(lake, "ns.ice_renamed")
    metadata = t.metadata_location.removeprefix("file://")
    # pyiceberg's answer: the renamed column holds every row's value, from both files.
    _same_rows(sbbf.read_table(metadata), t.scan().to_arrow())
    theirs = t.scan(row_filter="name == 's7' or name == 's1500'").to_arrow()
    assert theirs.num_rows == 2
    ours = sbbf.read_table(metadata, filters=[("name", "in", ["s7", "s1500"])])
    _same_rows(ours, theirs)
    ours = sbbf.read_table(metadata, filters=[("id", "=", 7)], columns=["name"])
    assert ours.column_names == ["name"] and ours.column("name").to_pylist() == ["s7"]
    # The probe finds the column in each file under the name it was written with.
    answers = sbbf.probe(metadata, "name", ["s7"])
    # Reported by the table's name, the file's beside it where the two differ.
    assert sorted((a["column"], a.get("column_in_file", "")) for a in answers if "column" in a) \
        == [("name", ""), ("name", "s")]
    # The first snapshot, read as of it, with the schema it was written with (pyiceberg
    # projects the snapshot's schema: `id, s`).
    first = t.history()[0].snapshot_id
    theirs = t.scan(snapshot_id=first).to_arrow()
    assert theirs.column_names == ["id", "s"]
    ours = sbbf.read_table(metadata, as_of=first)
    assert ours.column_names == ["id", "s"]
    _same_rows(ours, theirs)


@pytest.mark.parametrize("mode", ["name", "id"])
def test_delta_column_mapping_reads_physical_columns(mode):
    from deltalake import DeltaTable, QueryBuilder
    table = TESTDATA / "lake" / "kernel" / f"table-with-columnmapping-mode-{mode}"
    cols = ["ByteType", "IntegerType", "LongType", "StringType", "DateType", "decimal"]
    sql = "SELECT " + ", ".join(f'"{c}"' for c in cols) + " FROM t"
    theirs = QueryBuilder().register("t", DeltaTable(str(table))).execute(sql).read_all()
    ours = sbbf.read_table(str(table), columns=cols)
    assert ours.num_rows == theirs.num_rows == 6
    for c in cols:
        assert ours.column(c).to_pylist() == theirs.column(c).to_pylist() or \
            sorted(map(str, ours.column(c).to_pylist())) == \
            sorted(map(str, theirs.column(c).to_pylist())), c
    got = sbbf.read_table(str(table), filters=[("LongType", "=", 3)], columns=["LongType"])
    assert got.column("LongType").to_pylist() == [3]
    # Inside nested columns too, fields have physical names: read under the table's names.
    nested = ["LongType", "nested_struct", "array_of_structs", "map_of_rows", "array_of_arrays"]
    sql = "SELECT " + ", ".join(f'"{c}"' for c in nested) + " FROM t"
    theirs = QueryBuilder().register("t", DeltaTable(str(table))).execute(sql).read_all()
    ours = sbbf.read_table(str(table), columns=nested)
    assert ours.schema.field("nested_struct").type.names == ["aa", "ac"]
    _same_rows(ours, theirs)


def test_deletion_vectors_leave_their_rows_out():
    from deltalake import DeltaTable, QueryBuilder
    table = TESTDATA / "lake" / "kernel" / "table-with-dv-small"
    snap = sbbf.snapshot(table)
    assert any(f["deletes"] for f in snap["files"])
    # What reading the log took: at least its listing and one commit.
    assert snap["log_reads"]["lists"] >= 1 and snap["log_reads"]["gets"] >= 1, snap
    assert snap["log_reads"]["bytes"] > 0, snap
    for v in range(DeltaTable(str(table)).version() + 1):
        sql = "SELECT value FROM t ORDER BY value"
        theirs = QueryBuilder().register("t", DeltaTable(str(table), version=v)).execute(sql)
        want = theirs.read_all().column("value").to_pylist()
        ours = sbbf.read_table(str(table), as_of=v)
        assert sorted(ours.column("value").to_pylist()) == want, v
    # Deleted values 0 and 9 are gone whatever else is filtered.
    got = sbbf.read_table(str(table), filters=[("value", "in", [0, 1, 9])])
    assert got.column("value").to_pylist() == [1]


def test_as_of_needs_a_table_and_a_real_version(lake, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(lake / "delta_basic" / sbbf.snapshot(lake / "delta_basic")["files"][0]["path"],
                plain / "a.parquet")
    assert sbbf.snapshot(plain) is None
    with pytest.raises(sbbf.InputError):
        sbbf.probe(plain, "id", [1], as_of=0)
    with pytest.raises(sbbf.InputError):
        sbbf.read_table(str(lake / "delta_basic"), as_of=0, as_directory=True)
    with pytest.raises(sbbf.InputError, match="zone"):
        sbbf.snapshot(lake / "delta_basic", as_of=datetime.datetime(2026, 1, 1))
    with pytest.raises(sbbf.Error):
        sbbf.snapshot(lake / "delta_basic", as_of=99)


def test_catalog_table_names_the_catalogs_current_metadata(lake):
    t = _iceberg(lake, "ns.ice_basic")
    catalog = f"sqlite:///{lake / 'iceberg' / 'catalog.db'}"
    meta = sbbf.catalog_table(catalog, "ns.ice_basic")
    assert meta == t.metadata_location.removeprefix("file://")
    assert sbbf.catalog_table(catalog, "ns.ice_basic", name="default") == meta
    _same_rows(sbbf.read_table(meta), t.scan().to_arrow())
    with pytest.raises(sbbf.InputError, match="no table ns.nope"):
        sbbf.catalog_table(catalog, "ns.nope")


def test_iceberg_struct_whose_inner_field_was_renamed_is_probed_by_field_ids(tmp_path):
    # pyiceberg writes `st.a` and `lst.element.x`, renames them `st.b` and `lst.element.y`, and
    # writes again: the first file holds them under their old names. Matched by name, the
    # first file's values were "absent" (a false negative); probes find each leaf by the field
    # ids from the column down. Reads find them the same way (relabelled to the table's
    # names as each file is read).
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import ListType, LongType, NestedField, StructType

    lake_tables.install_iceberg_bloom_shim()
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db",
                     warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "st", StructType(NestedField(3, "a", LongType(),
                                                                required=False)),
                                required=False),
                    NestedField(4, "lst", ListType(5, StructType(NestedField(6, "x", LongType(),
                                                                             required=False)),
                                                   element_required=False),
                                required=False))
    blooms = ["st.a", "st.b", "lst.list.element.x", "lst.list.element.y"]
    t = cat.create_table("ns.nested", schema=schema, properties={
        f"write.parquet.bloom-filter-enabled.column.{c}": "true" for c in blooms})

    def batch(lo, hi, inner, linner):
        st = pa.array([{inner: i} for i in range(lo, hi)], pa.struct([(inner, pa.int64())]))
        lst = pa.array([[{linner: i * 10}] for i in range(lo, hi)],
                       pa.list_(pa.struct([(linner, pa.int64())])))
        return pa.table({"id": pa.array(range(lo, hi), pa.int64()), "st": st, "lst": lst})

    t.append(batch(0, 10, "a", "x"))
    first = {e.data_file.file_path.removeprefix("file://")
             for m in t.current_snapshot().manifests(t.io) for e in m.fetch_manifest_entry(t.io)}
    with t.update_schema() as u:
        u.rename_column("st.a", "b")
        u.rename_column("lst.element.x", "y")
    t.append(batch(10, 20, "b", "y"))
    metadata = t.metadata_location.removeprefix("file://")
    flags = {c["name"]: c["inner_renamed"] for c in sbbf.snapshot(metadata)["columns"]}
    assert flags == {"id": False, "st": True, "lst": True}

    def maybe_in(column, value):
        return {a["file"] for a in sbbf.probe(metadata, column, [value])
                if any(v["result"] != "absent" for rg in a["row_groups"] for v in rg["values"])}

    # 3 and 30 are in the first file only, written under the old names; 13 and 130 in the
    # second only (a Bloom filter may add the other file, never leave out the right one).
    assert first <= maybe_in("st.b", 3)
    assert first <= maybe_in("lst.list.element.y", 30)
    assert maybe_in("st.b", 13) - first
    assert maybe_in("lst.list.element.y", 130) - first
    # Read by field id inside the nested columns too, as pyiceberg reads them.
    _same_rows(sbbf.read_table(metadata), t.scan().to_arrow())
    _same_rows(sbbf.read_table(metadata, columns=["id"]),
               t.scan(selected_fields=("id",)).to_arrow())


def test_add_gives_a_delta_table_filters_through_one_commit(lake, tmp_path):
    """`sbbf.add(TABLE, COLUMN)`: one new version, read by deltalake as the same rows; then
    every current file answers for the column from its own filter."""
    from deltalake import DeltaTable
    path = tmp_path / "t"
    shutil.copytree(lake / "delta_partitioned", path)
    before = DeltaTable(str(path)).version()
    report = sbbf.add(path, "s")
    assert report["read_version"] == before
    assert report["committed_version"] == before + 1
    assert len(report["swapped"]) == len(DeltaTable(str(path)).file_uris())
    _same_rows(DeltaTable(str(path)).to_pyarrow_table(),
               DeltaTable(str(path), version=before).to_pyarrow_table())
    assert DeltaTable(str(path)).history(1)[0]["operation"] == "ADD BLOOM FILTERS"
    for f in sbbf.inspect(path, "s"):
        assert f["chunks"] and all(c["has_filter"] for c in f["chunks"]), f
    # Nothing left to do: nothing committed.
    assert sbbf.add(path, "s")["committed_version"] is None
    assert DeltaTable(str(path)).version() == before + 1


def test_add_gives_an_iceberg_table_filters_through_one_replace_snapshot(tmp_path):
    """`sbbf.add("NS.TABLE", COLUMN, catalog=...)`: one `replace` snapshot through the SQL
    catalog, read by pyiceberg as the same rows; pyiceberg commits after it."""
    from pyiceberg.catalog.sql import SqlCatalog
    root = tmp_path / "wh"
    uri = f"sqlite:///{root}/catalog.db"
    root.mkdir()
    cat = SqlCatalog("default", uri=uri, warehouse=f"file://{root}")
    cat.create_namespace("ns")
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    t = cat.create_table("ns.t", schema=schema)
    for k in range(3):
        ids = list(range(k * 100, (k + 1) * 100))
        t.append(pa.table({"id": ids, "s": [f"s{i}" for i in ids]}, schema=schema))
    before = cat.load_table("ns.t").current_snapshot().snapshot_id
    report = sbbf.add("ns.t", "s", catalog=uri)
    t = cat.load_table("ns.t")
    assert report["format"] == "iceberg"
    assert report["read_version"] == before
    assert report["committed_version"] == t.current_snapshot().snapshot_id
    assert t.current_snapshot().summary.operation.value == "replace"
    assert len(report["swapped"]) == 3
    _same_rows(t.scan().to_arrow(), t.scan(snapshot_id=before).to_arrow())
    assert all("-sbbf-" in f["file_path"] for f in t.inspect.files().to_pylist())
    assert sbbf.add("ns.t", "s", catalog=uri)["committed_version"] is None
    t.append(pa.table({"id": [1000], "s": ["x"]}, schema=schema))
    assert cat.load_table("ns.t").scan().to_arrow().num_rows == 301
    with pytest.raises(sbbf.InputError):
        sbbf.add("ns.t", "s", catalog=uri, in_place=True)


# Every primitive type of both formats, as the Python package types the columns no file holds
# (Delta partition columns, columns added since every file was written): the library's one
# rule, which the DataFusion scan uses too; instants in pyarrow's zone spelling.
_TYPES = [
    ("delta", "boolean", pa.bool_()), ("delta", "byte", pa.int8()),
    ("delta", "short", pa.int16()), ("delta", "integer", pa.int32()),
    ("iceberg", "int", pa.int32()), ("delta", "long", pa.int64()),
    ("iceberg", "float", pa.float32()), ("iceberg", "double", pa.float64()),
    ("delta", "date", pa.date32()), ("delta", "string", pa.string()),
    ("iceberg", "binary", pa.binary()), ("iceberg", "uuid", pa.binary(16)),
    ("iceberg", "time", pa.time64("us")),
    ("delta", "timestamp", pa.timestamp("us", tz="UTC")),
    ("delta", "timestamp_ntz", pa.timestamp("us")),
    ("iceberg", "timestamp", pa.timestamp("us")),
    ("iceberg", "timestamptz", pa.timestamp("us", tz="UTC")),
    ("iceberg", "timestamp_ns", pa.timestamp("ns")),
    ("iceberg", "timestamptz_ns", pa.timestamp("ns", tz="UTC")),
    ("delta", "decimal(10,2)", pa.decimal128(10, 2)),
    ("iceberg", "decimal(38, 0)", pa.decimal128(38, 0)),
    ("iceberg", "fixed[7]", pa.binary(7)),
]


@pytest.mark.parametrize("fmt,name,want", _TYPES)
def test_a_tables_types_are_the_librarys(fmt, name, want):
    assert _sbbf.lake_type(fmt, name) == want


@pytest.mark.parametrize("name", ["struct<a:long>", "decimal(39,2)", "fixed[x]", "nosuch"])
def test_a_type_no_rule_gives_is_none(name):
    assert _sbbf.lake_type("delta", name) is None


def test_a_file_leaving_an_identity_column_to_its_tuple_is_never_read_as_null(tmp_path):
    metadata, theirs = lake_tables.make_iceberg_omitting_identity(tmp_path)
    assert len(theirs.scan(row_filter="p = 5").to_arrow()) == 3
    # Reading `p` would need the partition tuple: refused, never nulls.
    with pytest.raises(sbbf.InputError, match="does not hold column 'p'"):
        sbbf.read_table(metadata)
    with pytest.raises(sbbf.InputError, match="does not hold column 'p'"):
        sbbf.read_table(metadata, filters=[("p", "=", 5)], columns=["id"])
    # What does not read it is read as pyiceberg reads it.
    ours = sbbf.read_table(metadata, filters=[("id", "=", 2)], columns=["id"])
    assert _rows(ours) == _rows(theirs.scan(row_filter="id = 2", selected_fields=("id",))
                                .to_arrow())
    # The probe answers "unknown" in that file, never "no such column" (absent).
    answers = [a for a in sbbf.probe(metadata, "p", [5]) if "row_groups" in a]
    assert [rg["filter"] for a in answers for rg in a["row_groups"]] == ["not_in_file"]


# A table holding every primitive type its format has: Python's `read_table` types each
# column as `sbbf query` (DataFusion) does, both by the library's one rule, whatever layout
# the writer chose for the files (pyiceberg writes large strings, deltalake plain ones), and
# reads the rows the format's own reader reads. DataFusion holds strings and binaries as view
# types, and arrow-rs spells the UTC zone `+00:00`: the same types.
_UTC = datetime.timezone.utc
_DELTA_TYPES = {
    "b": (pa.array([True, False]), pa.bool_()),
    "i8": (pa.array([1, 2], pa.int8()), pa.int8()),
    "i16": (pa.array([1, 2], pa.int16()), pa.int16()),
    "i32": (pa.array([1, 2], pa.int32()), pa.int32()),
    "i64": (pa.array([1, 2], pa.int64()), pa.int64()),
    "f32": (pa.array([1.5, 2.5], pa.float32()), pa.float32()),
    "f64": (pa.array([1.5, 2.5], pa.float64()), pa.float64()),
    "d": (pa.array([datetime.date(2024, 1, 1), datetime.date(2024, 2, 29)]), pa.date32()),
    "s": (pa.array(["x", "y"]), pa.string()),
    "bin": (pa.array([b"x", b"y"]), pa.binary()),
    "ts": (pa.array([datetime.datetime(2024, 1, 1, 10, tzinfo=_UTC), None],
                    pa.timestamp("us", tz="UTC")), pa.timestamp("us", tz="UTC")),
    "ntz": (pa.array([datetime.datetime(2024, 1, 1, 10), None], pa.timestamp("us")),
            pa.timestamp("us")),
    "dec": (pa.array([decimal.Decimal("1.25"), None], pa.decimal128(10, 2)),
            pa.decimal128(10, 2)),
}


def _arrow_rs_name(t: pa.DataType) -> str:
    """How arrow-rs (DataFusion's `arrow_typeof`) names a pyarrow type of the tables below."""
    if pa.types.is_timestamp(t):
        return "Timestamp(µs)" if t.tz is None else f'Timestamp(µs, "{t.tz}")'
    if pa.types.is_decimal(t):
        return f"Decimal128({t.precision}, {t.scale})"
    if pa.types.is_fixed_size_binary(t):
        return f"FixedSizeBinary({t.byte_width})"
    return {pa.bool_(): "Boolean", pa.int8(): "Int8", pa.int16(): "Int16", pa.int32(): "Int32",
            pa.int64(): "Int64", pa.float32(): "Float32", pa.float64(): "Float64",
            pa.date32(): "Date32", pa.string(): "Utf8", pa.binary(): "Binary",
            pa.time64("us"): "Time64(µs)"}[t]


def _query_types(cli, table: str, names) -> dict:
    sql = "SELECT " + ", ".join(f'arrow_typeof("{n}") AS "{n}"' for n in names) + \
        " FROM t LIMIT 1"
    out = subprocess.run([cli, "query", table, sql, "--format", "json"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[0])
    return {n: t.replace("View", "").replace('"+00:00"', '"UTC"') for n, t in got.items()}


def _plain(v):
    return v.bytes if isinstance(v, uuid.UUID) else v


def test_every_delta_type_reads_as_datafusion_types_it(cli, tmp_path):
    from deltalake import DeltaTable, write_deltalake
    # Every type as a column of the files and as a partition column (values in the log).
    data = {n: a for n, (a, _) in _DELTA_TYPES.items()}
    data.update({f"p_{n}": a for n, (a, _) in _DELTA_TYPES.items()})
    write_deltalake(str(tmp_path), pa.table(data), partition_by=[f"p_{n}" for n in _DELTA_TYPES])
    ours = sbbf.read_table(str(tmp_path))
    want = {n: t for n, (_, t) in _DELTA_TYPES.items()}
    want.update({f"p_{n}": t for n, t in list(want.items())})
    assert {f.name: f.type for f in ours.schema} == want
    assert _query_types(cli, str(tmp_path), want) == \
        {n: _arrow_rs_name(t) for n, t in want.items()}
    _same_rows(ours, DeltaTable(str(tmp_path)).to_pyarrow_table())


def test_every_iceberg_type_reads_as_datafusion_types_it(cli, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg import types as it
    cat = SqlCatalog("c", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    columns = [
        ("b", it.BooleanType(), [True, False], pa.bool_()),
        ("i", it.IntegerType(), [1, 2], pa.int32()),
        ("l", it.LongType(), [1, 2], pa.int64()),
        ("f", it.FloatType(), [1.5, 2.5], pa.float32()),
        ("db", it.DoubleType(), [1.5, 2.5], pa.float64()),
        ("dec", it.DecimalType(10, 2), [decimal.Decimal("1.25"), None], pa.decimal128(10, 2)),
        ("d", it.DateType(), [datetime.date(2024, 1, 1), None], pa.date32()),
        ("t", it.TimeType(), [datetime.time(10, 0), None], pa.time64("us")),
        ("ts", it.TimestampType(), [datetime.datetime(2024, 1, 1, 10), None],
         pa.timestamp("us")),
        ("tstz", it.TimestamptzType(), [datetime.datetime(2024, 1, 1, 10, tzinfo=_UTC), None],
         pa.timestamp("us", tz="UTC")),
        ("s", it.StringType(), ["x", None], pa.string()),
        ("u", it.UUIDType(), [uuid.UUID(int=1).bytes, None], pa.binary(16)),
        ("fx", it.FixedType(7), [b"abcdefg", None], pa.binary(7)),
        ("bin", it.BinaryType(), [b"x", None], pa.binary()),
    ]
    schema = Schema(*[it.NestedField(i + 1, n, t, required=False)
                      for i, (n, t, _, _) in enumerate(columns)])
    t = cat.create_table("ns.t", schema=schema)
    arrow_schema = t.schema().as_arrow()
    t.append(pa.table({n: v for n, _, v, _ in columns}, schema=arrow_schema))
    ours = sbbf.read_table(t.metadata_location)
    want = {n: ty for n, _, _, ty in columns}
    assert {f.name: f.type for f in ours.schema} == want
    assert _query_types(cli, t.metadata_location, want) == \
        {n: _arrow_rs_name(ty) for n, ty in want.items()}
    theirs = t.scan().to_arrow()
    for n in want:
        assert ours.column(n).to_pylist() == [_plain(v) for v in theirs.column(n).to_pylist()], n


def test_a_catalogs_table_is_read_probed_and_pruned_with_its_index(tmp_path):
    """A table named through its catalog reads as by its folder, index and all: the same
    snapshot, probe answers, kept row groups and rows (pyiceberg's), and the index is asked
    on every one of those paths (a damaged index is ignored with a warning there)."""
    from pyiceberg.expressions import EqualTo
    root = tmp_path / "iceberg"
    lake_tables.make_iceberg(root)
    uri = f"sqlite:///{root}/catalog.db"
    t = _iceberg(tmp_path, "ns.ice_basic")
    folder = t.location().removeprefix("file://")
    sbbf.index_build(folder, "id")
    assert sbbf.snapshot("ns.ice_basic", catalog=uri)["files"] == sbbf.snapshot(folder)["files"]
    filters = [("id", "=", 1500)]
    theirs = t.scan(row_filter=EqualTo("id", 1500)).to_arrow()
    assert theirs.num_rows == 1
    by_folder = sbbf.probe(folder, "id", [1500])
    assert sbbf.probe("ns.ice_basic", "id", [1500], catalog=uri) == by_folder
    kept = sbbf.row_groups("ns.ice_basic", filters, catalog=uri)
    assert kept == sbbf.row_groups(folder, filters)
    assert sum(1 for rgs in kept.values() if not rgs) >= 1, kept
    _same_rows(sbbf.read_table("ns.ice_basic", filters=filters, catalog=uri), theirs)
    index = os.path.join(folder, "_sbbf_index")
    # The index torn (a write cut short).
    torn = os.path.join(index, "index.sbbfi")
    os.truncate(torn, os.path.getsize(torn) - 10)
    with pytest.warns(UserWarning, match="ignoring the index"):
        assert sbbf.probe(folder, "id", [1500]) == by_folder
    with pytest.warns(UserWarning, match="ignoring the index"):
        assert sbbf.probe("ns.ice_basic", "id", [1500], catalog=uri) == by_folder
    with pytest.warns(UserWarning, match="ignoring the index"):
        assert sbbf.row_groups("ns.ice_basic", filters, catalog=uri) == kept
    with pytest.warns(UserWarning, match="ignoring the index"):
        _same_rows(sbbf.read_table("ns.ice_basic", filters=filters, catalog=uri), theirs)


def test_a_filter_no_file_matches_reads_as_an_empty_table_of_the_tables_types(tmp_path):
    """Every file ruled out by its filters: the empty table keeps the table's columns and
    types, nested ones included (typed by a footer, as no file is read for rows)."""
    from deltalake import DeltaTable, write_deltalake
    rows = pa.table({
        "id": pa.array(range(100), pa.int64()),
        "s": pa.array([{"a": i, "b": str(i)} for i in range(100)],
                      pa.struct([("a", pa.int64()), ("b", pa.string())])),
    })
    write_deltalake(str(tmp_path), rows.slice(0, 50))
    write_deltalake(str(tmp_path), rows.slice(50), mode="append")
    sbbf.add(str(tmp_path), "id")
    kept = sbbf.row_groups(str(tmp_path), [("id", "=", 12345)])
    assert kept and all(rgs == [] for rgs in kept.values()), kept
    none = sbbf.read_table(str(tmp_path), filters=[("id", "=", 12345)])
    whole = sbbf.read_table(str(tmp_path))
    assert none.num_rows == 0
    assert none.schema == whole.schema
    one = sbbf.read_table(str(tmp_path), filters=[("id", "=", 7)], columns=["s"])
    assert one.column("s").to_pylist() == [{"a": 7, "b": "7"}]
    _same_rows(whole, DeltaTable(str(tmp_path)).to_pyarrow_table())
