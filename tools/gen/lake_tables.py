#!/usr/bin/env python3
"""Write small Delta Lake and Apache Iceberg test tables plus oracle answers.

Usage (with tools/.venv/bin/python, see tools/setup/setup-venv.sh):

    lake_tables.py OUTDIR [--iceberg-root /tmp/sbbf-lake-fixtures/iceberg]
    lake_tables.py --oracles-only DIR [DIR ...]   # oracles for existing Delta tables (testdata/lake/kernel)

Writes under OUTDIR:
    delta_basic/ delta_partitioned/ delta_evolved/ delta_checkpoint/    Delta tables (deltalake)
    iceberg/                  copy of the Iceberg warehouse (pyiceberg SqlCatalog, sqlite catalog.db)
    <table>.expected.json     per table: answers of the format's OWN reader for every version/snapshot

Every answer in the oracle files comes from deltalake's / pyiceberg's readers (DeltaTable,
QueryBuilder, Table.scan) after the tables were written; nothing is computed from what this script
intended to write. The data is deterministic; file names (UUIDs), commit timestamps, Iceberg snapshot
ids and the sqlite catalog are not.

Iceberg metadata holds absolute file URIs, so the Iceberg tables are written under a FIXED warehouse
root (--iceberg-root, default /tmp/sbbf-lake-fixtures/iceberg; the directory is deleted and
recreated) and the whole warehouse is then copied to OUTDIR/iceberg. A test that reads the copy must
place it at exactly that root again.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import urllib.parse
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

DEFAULT_ICEBERG_ROOT = "/tmp/sbbf-lake-fixtures/iceberg"

# ids probed in every version: present, deleted (by some later version), never written.
PROBE_IDS = [0, 7, 499, 500, 600, 999, 1000, 1500, 1999, 2000, 2999, 3000, 4000, -1]

DELTA_TABLES = ["delta_basic", "delta_partitioned", "delta_evolved", "delta_checkpoint"]
ICEBERG_TABLES = ["ice_basic", "ice_partitioned", "ice_renamed", "ice_posdeletes"]

# ids probed in the table with position deletes (ids 0..1999; 0, 7, 500, 999 and 1000 deleted)
DELETES_PROBE_IDS = [0, 7, 499, 500, 999, 1000, 1001, 1500, 1999, 2000, -1]
ICEBERG_PROBE_IDS = {"ice_posdeletes": DELETES_PROBE_IDS}


# ----------------------------------------------------------------------------------------------
# helpers


def rows(lo: int, hi: int, **extra) -> pa.Table:
    """ids lo..hi-1 (int64), s = 's<id>' (string), plus columns computed from the id."""
    ids = list(range(lo, hi))
    cols = {"id": pa.array(ids, pa.int64()), "s": pa.array([f"s{i}" for i in ids], pa.string())}
    for name, fn in extra.items():
        vals = [fn(i) for i in ids]
        cols[name] = pa.array(vals, pa.int64() if isinstance(vals[0], int) else pa.string())
    return pa.table(cols)


def rel_to(base: str, uri: str) -> str:
    """Path of `uri` relative to the table folder `base` (both plain paths or file:// URIs)."""

    def norm(x: str) -> str:
        if x.startswith("file://"):
            x = urllib.parse.unquote(urllib.parse.urlparse(x).path)
        return os.path.normpath(x)

    r = os.path.relpath(norm(uri), norm(base))
    assert not r.startswith(".."), (base, uri)
    return r.replace(os.sep, "/")


def folder_parquet(table_dir: Path, skip_dirs: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(*.parquet outside skip_dirs, *.parquet inside skip_dirs), relative, sorted."""
    data, meta = [], []
    for p in sorted(table_dir.rglob("*.parquet")):
        r = p.relative_to(table_dir).as_posix()
        (meta if r.split("/")[0] in skip_dirs else data).append(r)
    return data, meta


def bloom_columns(path: Path) -> list[str]:
    """Leaf columns (path_in_schema) with a Bloom filter in at least one row group (pyarrow footer)."""
    md = pq.ParquetFile(path).metadata
    out = set()
    for rg in range(md.num_row_groups):
        for c in range(md.num_columns):
            col = md.row_group(rg).column(c)
            if col.bloom_filter_offset is not None:
                out.add(col.path_in_schema)
    return sorted(out)


def count_by(table: pa.Table, column: str, values: list[int]) -> dict[str, int]:
    if column not in table.column_names:
        return {str(v): 0 for v in values}
    col = table.column(column)
    return {str(v): int(pc.sum(pc.equal(col, v)).as_py() or 0) for v in values}


def non_null(table: pa.Table) -> dict[str, int]:
    return {n: table.num_rows - table.column(n).null_count for n in table.column_names}


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=1, sort_keys=False) + "\n")


def clean_junk(d: Path) -> None:
    for p in list(d.rglob("*")):
        if p.is_dir() and p.name == "__pycache__":
            shutil.rmtree(p)
        elif p.is_file() and p.name.startswith(".") and p.name.endswith(".crc"):
            p.unlink()


# ----------------------------------------------------------------------------------------------
# Delta


def delta_writer_props(ndv: int):
    from deltalake import BloomFilterProperties, ColumnProperties, WriterProperties

    # compression must be given: with explicit WriterProperties, deltalake 1.6.6 writes UNCOMPRESSED
    # (its SNAPPY default applies only when writer_properties is None). ZSTD keeps the fixtures small.
    return WriterProperties(
        compression="ZSTD",
        column_properties={
            "id": ColumnProperties(
                bloom_filter_properties=BloomFilterProperties(set_bloom_filter_enabled=True, fpp=0.01, ndv=ndv)
            )
        }
    )


def make_delta(out: Path) -> None:
    from deltalake import DeltaTable, write_deltalake

    wp1000 = delta_writer_props(1000)
    wp3000 = delta_writer_props(3000)

    # delta_basic: 3 appends, compact, delete id < 500
    t = out / "delta_basic"
    for k in range(3):
        write_deltalake(t, rows(k * 1000, (k + 1) * 1000), mode="append", writer_properties=wp1000)
    DeltaTable(t).optimize.compact(writer_properties=wp3000)
    DeltaTable(t).delete("id < 500", writer_properties=wp3000)

    # delta_partitioned: p in a/b/c, two appends, delete p = 'b' (partition-only: remove actions only)
    t = out / "delta_partitioned"
    pfn = lambda i: "abc"[i % 3]  # noqa: E731
    write_deltalake(t, rows(0, 600, p=pfn), mode="append", partition_by=["p"], writer_properties=wp1000)
    write_deltalake(t, rows(600, 1200, p=pfn), mode="append", partition_by=["p"], writer_properties=wp1000)
    DeltaTable(t).delete("p = 'b'", writer_properties=wp1000)

    # delta_evolved: the second append adds column `extra` (schema merge); old files lack it
    t = out / "delta_evolved"
    write_deltalake(t, rows(0, 1000), mode="append", writer_properties=wp1000)
    write_deltalake(t, rows(1000, 2000, extra=lambda i: i * 10), mode="append", schema_mode="merge",
                    writer_properties=wp1000)

    # delta_checkpoint: 12 appends (v0..v11), checkpoint at v11, 2 more appends (v12, v13)
    t = out / "delta_checkpoint"
    for k in range(12):
        write_deltalake(t, rows(k * 100, (k + 1) * 100), mode="append", writer_properties=wp1000)
    DeltaTable(t).create_checkpoint()
    for k in range(12, 14):
        write_deltalake(t, rows(k * 100, (k + 1) * 100), mode="append", writer_properties=wp1000)


def delta_sql(dt, sql: str):
    from deltalake import QueryBuilder

    return pa.table(QueryBuilder().register("t", dt).execute(sql).read_all())


def nested_leaves(t, expr: str) -> list[tuple[str, bool]]:
    """(SQL expression, is an integer) for each leaf inside the Delta type t of column expr;
    nothing for a primitive column."""
    kind = type(t).__name__
    if kind == "StructType":
        return [leaf for f in t.fields for leaf in leaves_below(f.type, f"{expr}['{f.name}']")]
    if kind == "ArrayType":
        return leaves_below(t.element_type, f"{expr}[1]")
    if kind == "MapType":
        return leaves_below(t.value_type, f"map_values({expr})[1]")
    return []


def leaves_below(t, expr: str) -> list[tuple[str, bool]]:
    if type(t).__name__ == "PrimitiveType":
        return [(expr, t.type in ("long", "integer", "short", "byte"))]
    return nested_leaves(t, expr)


def delta_oracle(table_dir: Path, probe_ids: list[int] | None = None, id_column: str | None = None,
                 strict: bool = False) -> dict:
    """Answers of deltalake for every version of the Delta table at table_dir.

    Row counts come from deltalake's SQL engine (QueryBuilder, DataFusion), which handles
    deletion vectors and column mapping. DeltaTable.to_pyarrow_table() is asked too: "agrees",
    "refused: ..." or, where it silently answers differently, its answers (strict: fail instead)."""
    from deltalake import DeltaTable

    table_dir = table_dir.resolve()
    latest = DeltaTable(str(table_dir))
    history = {h["version"]: h for h in latest.history()}
    notes: list[str] = []
    versions = []
    auto_probes: dict[str, list[int]] = {}
    for v in range(0, latest.version() + 1):
        try:
            dt = DeltaTable(str(table_dir), version=v)
        except Exception as e:  # e.g. log files cleaned up before a checkpoint
            notes.append(f"version {v}: DeltaTable(version={v}) failed: {e}")
            continue
        h = history.get(v, {})
        schema = dt.schema()
        columns = [f.name for f in schema.fields]
        rank = {"long": 0, "integer": 1, "short": 2, "byte": 3}
        int_cols = sorted((rank[f.type.type], f.name) for f in schema.fields
                          if getattr(f.type, "type", None) in rank)
        col = id_column or ("id" if "id" in columns else (int_cols[0][1] if int_cols else None))
        entry: dict = {"version": v, "timestamp_ms": h.get("timestamp"), "operation": h.get("operation")}
        try:
            uris = dt.file_uris()
            entry["files"] = sorted(rel_to(dt.table_uri, u) for u in uris)
        except Exception as e:
            entry["files"] = None
            notes.append(f"version {v}: file_uris() refused: {e}")
        try:
            adds = pa.table(dt.get_add_actions(flatten=True))
            # the add actions' `path` as deltalake reports it (percent-decoded, relative)
            entry["add_paths"] = sorted(adds.column("path").to_pylist())
        except Exception as e:
            notes.append(f"version {v}: get_add_actions() refused: {e}")
        try:
            dvs = pa.table(dt.deletion_vectors()).to_pylist()
            if dvs:
                # per file with a deletion vector: the row positions deltalake's DV reader says are deleted
                entry["deleted_rows_by_file"] = {
                    rel_to(dt.table_uri, d["filepath"]): [i for i, keep in enumerate(d["selection_vector"]) if not keep]
                    for d in sorted(dvs, key=lambda d: d["filepath"])}
        except Exception as e:
            notes.append(f"version {v}: deletion_vectors() refused: {e}")
        q = lambda s: '"' + s.replace('"', '""') + '"'  # noqa: E731
        entry["row_count"] = int(delta_sql(dt, "select count(*) as n from t").column(0)[0].as_py())
        entry["columns"] = columns
        probes = probe_ids if probe_ids is not None else PROBE_IDS
        if col is not None and not strict:
            # tables made elsewhere: probe every value deltalake returns in any version (the tables
            # are tiny) plus two absent ones; the same probes in every version
            if col not in auto_probes:
                vals: set = set()
                for w in range(0, latest.version() + 1):
                    dw = DeltaTable(str(table_dir), version=w)
                    if col in [f.name for f in dw.schema().fields]:
                        got = delta_sql(dw, f"select distinct {q(col)} as k from t where {q(col)} is not null")
                        vals |= set(got.column("k").to_pylist())
                auto_probes[col] = sorted(vals)[:50] + [-1, 4000]
            probes = auto_probes[col]
        if col is not None:
            entry["count_by_column"] = col
            got = delta_sql(dt, f"select {q(col)} as k, count(*) as n from t "
                                f"where {q(col)} in ({', '.join(str(i) for i in probes)}) group by {q(col)}")
            found = dict(zip(got.column("k").to_pylist(), got.column("n").to_pylist()))
            entry["count_by_id"] = {str(i): int(found.get(i, 0)) for i in probes}
        nn = delta_sql(dt, "select " + ", ".join(f"count({q(c)}) as {q(c)}" for c in columns) + " from t")
        entry["non_null_counts"] = {c: int(nn.column(c)[0].as_py()) for c in columns}
        # every leaf inside a nested column, reached through struct fields by name, a list's
        # first element and a map's first value: count (and sum for integers) as SQL the
        # test runs again; a reader that misses inner fields (column mapping, renames) reads nulls
        aggs = {}
        for f in schema.fields:
            for expr, numeric in nested_leaves(f.type, q(f.name)):
                for agg in [f"count({expr})"] + ([f"sum({expr})"] if numeric else []):
                    aggs[agg] = delta_sql(dt, f"select {agg} as n from t").column(0)[0].as_py()
        if aggs:
            entry["leaf_aggregates"] = aggs
        try:
            tbl = dt.to_pyarrow_table()
        except Exception as e:
            entry["to_pyarrow_table"] = f"refused: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        else:
            got = {"row_count": tbl.num_rows, "non_null_counts": non_null(tbl)}
            if col is not None:
                got["count_by_id"] = count_by(tbl, col, probes)
            if all(got[k] == entry[k] for k in got):
                entry["to_pyarrow_table"] = "agrees"
            elif strict:
                raise AssertionError(f"{table_dir} v{v}: to_pyarrow_table {got} != SQL {entry}")
            else:  # e.g. column mapping: deltalake 1.6.6 returns all-null columns instead of refusing
                entry["to_pyarrow_table"] = {"status": "DISAGREES with the SQL engine (not the oracle)", **got}
        versions.append(entry)

    data_files, log_files = folder_parquet(table_dir, skip_dirs=("_delta_log",))
    current = versions[-1]
    out = {
        "format": "delta",
        "reader": "deltalake " + __import__("deltalake").__version__,
        "current_version": latest.version(),
        "protocol": {"min_reader_version": latest.protocol().min_reader_version,
                     "min_writer_version": latest.protocol().min_writer_version,
                     "reader_features": latest.protocol().reader_features,
                     "writer_features": latest.protocol().writer_features},
        "configuration": latest.metadata().configuration,
        "partition_columns": latest.metadata().partition_columns,
        "columns": current["columns"],
        "versions": versions,
        "folder_parquet_files": data_files,
        "log_parquet_files": log_files,
        "bloom_filter_columns": {f: bloom_columns(table_dir / f) for f in data_files},
    }
    lc = table_dir / "_delta_log" / "_last_checkpoint"
    if lc.exists():
        out["last_checkpoint"] = json.loads(lc.read_text())
    if notes:
        out["notes"] = notes
    return out


# ----------------------------------------------------------------------------------------------
# Iceberg


ICEBERG_BLOOM_PROPS = {
    "write.parquet.bloom-filter-enabled.column.id": "true",
    "write.parquet.bloom-filter-fpp.column.id": "0.01",
}
ICEBERG_BLOOM_NDV = 1000


def install_iceberg_bloom_shim() -> None:
    """pyiceberg 0.12.0 does not implement `write.parquet.bloom-filter-enabled.column.<col>` (it only
    warns "Parquet writer option(s) [...] not implemented"). Wrap its writer-kwargs function so that
    the property is honoured: pyarrow's ParquetWriter gets bloom_filter_options for those columns
    (fpp from write.parquet.bloom-filter-fpp.column.<col>, default 0.01; ndv ICEBERG_BLOOM_NDV).
    Everything else (field ids, stats, manifests) stays pyiceberg's own write path."""
    import pyiceberg.io.pyarrow as pio

    if getattr(pio._get_parquet_writer_kwargs, "_sbbf_shim", False):
        return
    orig = pio._get_parquet_writer_kwargs
    prefix = "write.parquet.bloom-filter-enabled.column."

    def kwargs(props):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Parquet writer option\(s\) .*bloom-filter")
            out = orig(props)
        opts = {}
        for k, v in props.items():
            if k.startswith(prefix) and str(v).lower() == "true":
                col = k[len(prefix):]
                fpp = float(props.get(f"write.parquet.bloom-filter-fpp.column.{col}", "0.01"))
                opts[col] = {"ndv": ICEBERG_BLOOM_NDV, "fpp": fpp}
        if opts:
            out["bloom_filter_options"] = opts
        return out

    kwargs._sbbf_shim = True
    pio._get_parquet_writer_kwargs = kwargs


def make_iceberg(root: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    install_iceberg_bloom_shim()
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    cat.create_namespace("ns")

    base = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "s", StringType(), required=False))

    t = cat.create_table("ns.ice_basic", schema=base, properties=ICEBERG_BLOOM_PROPS)
    for k in range(3):
        t.append(rows(k * 1000, (k + 1) * 1000))
    t.delete("id < 500")

    part_schema = Schema(NestedField(1, "id", LongType(), required=False),
                         NestedField(2, "s", StringType(), required=False),
                         NestedField(3, "p", StringType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=IdentityTransform(), name="p"))
    t = cat.create_table("ns.ice_partitioned", schema=part_schema, partition_spec=spec,
                         properties=ICEBERG_BLOOM_PROPS)
    pfn = lambda i: "abc"[i % 3]  # noqa: E731
    t.append(rows(0, 600, p=pfn))
    t.append(rows(600, 1200, p=pfn))

    t = cat.create_table("ns.ice_renamed", schema=base, properties=ICEBERG_BLOOM_PROPS)
    t.append(rows(0, 1000))
    with t.update_schema() as u:
        u.rename_column("s", "name")
    t.append(rows(1000, 2000).rename_columns(["id", "name"]))

    make_iceberg_posdeletes(cat, base)


# Iceberg's reserved field ids of the position-delete file columns (spec, "Position Delete Files")
POS_DELETE_FILE_PATH_ID = 2147483546
POS_DELETE_POS_ID = 2147483545


def added_data_files(table, snapshot) -> list:
    """The DataFile entries that `snapshot` added (read from its own manifests by pyiceberg)."""
    from pyiceberg.manifest import ManifestEntryStatus

    return [e.data_file for m in snapshot.manifests(table.io) if m.added_snapshot_id == snapshot.snapshot_id
            for e in m.fetch_manifest_entry(table.io) if e.status == ManifestEntryStatus.ADDED]


def _write_delete_file(table, tbl: pa.Table, ice_schema, content, spec_id: int, partition: tuple = (),
                       equality_ids: list[int] | None = None):
    """Write `tbl` as a delete file of `table` (columns with `ice_schema`'s field ids) and return
    its DataFile (not committed). The DataFile's metrics come from pyiceberg's own Parquet-footer
    statistics code, in `full` mode so string bounds are not truncated."""
    import uuid

    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, FileFormat
    from pyiceberg.typedef import Record

    path = table.location_provider().new_data_location(f"00000-0-{uuid.uuid4()}-deletes.parquet")
    with table.io.new_output(path).create() as f:
        pq.write_table(tbl, f, compression="zstd")
    with table.io.new_input(path).open() as f:
        footer = pq.ParquetFile(f).metadata
    stats = data_file_statistics_from_parquet_metadata(
        parquet_metadata=footer,
        stats_columns=compute_statistics_plan(ice_schema, {"write.metadata.metrics.default": "full"}),
        parquet_column_mapping=parquet_path_to_id_mapping(ice_schema),
    )
    df = DataFile.from_args(
        content=content,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(*partition),
        file_size_in_bytes=len(table.io.new_input(path)),
        sort_order_id=None,
        spec_id=spec_id,
        equality_ids=equality_ids,
        key_metadata=None,
        **stats.to_serialized_dict(),
    )
    df.spec_id = spec_id  # not a field of the file's record: from_args leaves it unset
    return df


def _field_id(i: int) -> dict:
    return {b"PARQUET:field_id": str(i).encode()}


def write_position_delete_file(table, deletes: dict[str, list[int]]):
    """Write one position-delete Parquet file for `table` and return its DataFile (not committed).

    `deletes` maps a data file's path, exactly as the manifests spell it, to row positions in it.
    Columns: file_path (string, field id 2147483546) and pos (long, field id 2147483545), both
    required, rows sorted by (file_path, pos)."""
    from pyiceberg.manifest import DataFileContent
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    arrow_schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False, metadata=_field_id(POS_DELETE_FILE_PATH_ID)),
        pa.field("pos", pa.int64(), nullable=False, metadata=_field_id(POS_DELETE_POS_ID)),
    ])
    pairs = sorted((path, pos) for path, positions in deletes.items() for pos in positions)
    tbl = pa.table({"file_path": [p for p, _ in pairs], "pos": [q for _, q in pairs]}, schema=arrow_schema)
    ice_schema = Schema(NestedField(POS_DELETE_FILE_PATH_ID, "file_path", StringType(), required=True),
                        NestedField(POS_DELETE_POS_ID, "pos", LongType(), required=True))
    return _write_delete_file(table, tbl, ice_schema, DataFileContent.POSITION_DELETES,
                              table.metadata.default_spec_id)


def write_equality_delete_file(table, rows: pa.Table, spec_id: int, partition: tuple = ()):
    """Write one equality-delete Parquet file for `table` and return its DataFile (not committed).

    `rows` holds the delete rows under the table's column names (top-level columns); its columns
    are written with the table schema's field ids and become the file's `equality_ids`, in
    order. `spec_id` and `partition` (the partition tuple, in the spec's field order) say where
    it applies: every partition for an unpartitioned spec."""
    from pyiceberg.manifest import DataFileContent
    from pyiceberg.schema import Schema

    schema = table.schema()
    fields = [schema.find_field(name) for name in rows.column_names]
    arrow_schema = pa.schema([
        pa.field(f.name, rows.schema.field(f.name).type, nullable=True, metadata=_field_id(f.field_id))
        for f in fields
    ])
    return _write_delete_file(table, rows.cast(arrow_schema), Schema(*fields), DataFileContent.EQUALITY_DELETES,
                              spec_id, partition, [f.field_id for f in fields])


def commit_delete_files(table, delete_files: list) -> None:
    """Commit a new snapshot of `table` (format v2, branch main) that adds `delete_files`.

    pyiceberg 0.12 has no API for this (its delete is copy-on-write), so the snapshot is put
    together from its pieces: one delete manifest (pyiceberg's v2 manifest writer with content
    `deletes`), a manifest list with that manifest plus every manifest of the parent snapshot
    (`write_manifest_list`), a summary from pyiceberg's SnapshotSummaryCollector and
    update_snapshot_summaries (operation `delete`, as Iceberg's RowDelta names a commit that adds
    only delete files), and AddSnapshotUpdate + SetSnapshotRefUpdate committed through a table
    transaction that asserts main still points at the parent."""
    import uuid

    from pyiceberg.manifest import (
        ManifestContent,
        ManifestEntry,
        ManifestEntryStatus,
        ManifestWriterV2,
        write_manifest_list,
    )
    from pyiceberg.table import TableProperties
    from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRefType
    from pyiceberg.table.snapshots import (
        Operation,
        Snapshot,
        SnapshotSummaryCollector,
        Summary,
        update_snapshot_summaries,
    )
    from pyiceberg.table.update import AddSnapshotUpdate, AssertRefSnapshotId, SetSnapshotRefUpdate

    class DeleteManifestWriterV2(ManifestWriterV2):
        # pyiceberg 0.12's write_manifest only makes data manifests (content() is DATA and the Avro
        # header says content=data); the entries' layout is the same for delete manifests.
        def content(self) -> ManifestContent:
            return ManifestContent.DELETES

        @property
        def _meta(self) -> dict[str, str]:
            return {**super()._meta, "content": "deletes"}

    md = table.metadata
    assert md.format_version == 2, md.format_version
    parent = md.current_snapshot()
    snapshot_id = md.new_snapshot_id()
    sequence_number = md.next_sequence_number()
    compression = md.properties.get(TableProperties.WRITE_AVRO_COMPRESSION,
                                    TableProperties.WRITE_AVRO_COMPRESSION_DEFAULT)
    locations = table.location_provider()
    commit_uuid = uuid.uuid4()

    # One delete manifest per partition spec (a manifest holds the files of one spec): an
    # equality delete file of an unpartitioned spec applies to every partition.
    by_spec: dict[int, list] = {}
    for f in delete_files:
        by_spec.setdefault(f.spec_id, []).append(f)
    delete_manifests = []
    for spec_id, files in sorted(by_spec.items()):
        manifest_path = locations.new_metadata_location(f"{commit_uuid}-m{spec_id}.avro")
        with DeleteManifestWriterV2(md.specs()[spec_id], md.schema(), table.io.new_output(manifest_path),
                                    snapshot_id, compression) as writer:
            for f in files:
                # sequence numbers unset: inherited from the manifest list entry (this commit's)
                writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id,
                                                   sequence_number=None, file_sequence_number=None,
                                                   data_file=f))
        delete_manifests.append(writer.to_manifest_file())

    list_path = locations.new_metadata_location(f"snap-{snapshot_id}-0-{commit_uuid}.avro")
    with write_manifest_list(format_version=md.format_version, output_file=table.io.new_output(list_path),
                             snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id,
                             sequence_number=sequence_number, avro_compression=compression) as lw:
        lw.add_manifests([*delete_manifests, *parent.manifests(table.io)])

    collector = SnapshotSummaryCollector()
    for f in delete_files:
        collector.add_file(f, schema=md.schema(), partition_spec=md.specs()[f.spec_id])
    summary = update_snapshot_summaries(Summary(operation=Operation.DELETE, **collector.build()),
                                        previous_summary=parent.summary)
    snapshot = Snapshot(snapshot_id=snapshot_id, parent_snapshot_id=parent.snapshot_id,
                        sequence_number=sequence_number, manifest_list=list_path, summary=summary,
                        schema_id=md.current_schema_id)
    with table.transaction() as tx:
        tx._apply(
            (AddSnapshotUpdate(snapshot=snapshot),
             SetSnapshotRefUpdate(ref_name=MAIN_BRANCH, type=SnapshotRefType.BRANCH, snapshot_id=snapshot_id)),
            (AssertRefSnapshotId(ref=MAIN_BRANCH, snapshot_id=parent.snapshot_id),),
        )


def make_iceberg_posdeletes(cat, schema) -> None:
    """ns.ice_posdeletes: two appends (ids 0..999, 1000..1999, one file each), then one position
    delete file removing positions 0, 7, 500, 999 of the first file and 0 of the second (ids 0, 7,
    500, 999, 1000). The delete file names no referenced_data_file (pyiceberg's v2 manifest has no
    such field), so it applies by partition (unpartitioned) and sequence number."""
    t = cat.create_table("ns.ice_posdeletes", schema=schema, properties=ICEBERG_BLOOM_PROPS)
    t.append(rows(0, 1000))
    t.append(rows(1000, 2000))
    s1, s2 = t.metadata.snapshots
    (first,), (second,) = added_data_files(t, s1), added_data_files(t, s2)
    deletes = {first.file_path: [0, 7, 500, 999], second.file_path: [0]}
    # the positions are meant to hold ids 0, 7, 500, 999 and 1000 (pyiceberg keeps the row order)
    for f, lo in ((first, 0), (second, 1000)):
        with t.io.new_input(f.file_path).open() as fh:
            ids = pq.read_table(fh, columns=["id"]).column("id").to_pylist()
        assert ids == list(range(lo, lo + 1000)), f.file_path
    commit_delete_files(t, [write_position_delete_file(t, deletes)])


def make_iceberg_eqdeletes(cat, ident: str = "ns.ice_eqdeletes") -> dict:
    """An Iceberg table with equality deletes, and what it must read as.

    Schema (id long, s string, p string); spec 0 unpartitioned, spec 1 identity(p). Two appends
    (ids 0..119; s null for multiples of 5, else "s<id>"; p "a" for even ids, "b" for odd), then
    one commit of three equality delete files: by `id` in spec 0 (every partition: ids 3, 70,
    1000), by `s` in spec 1 partition p=a (null, "s12", "s11": the nulls of p=a and id 12; s11
    is in p=b), by (`id`, `s`) in spec 0 ((21, s21) and (25, null) match; (20, s20) and
    (22, wrong) do not); then an append of ids 0..9 again, newer than the deletes.

    pyiceberg 0.12 writes no equality deletes and refuses to read them, so the answer is its
    scan of the snapshot before the deletes, less the rows the spec's rules delete (applied
    here), plus the newer append as written. Returns the table, that snapshot's id, the rows
    before and the rows after (lists of dicts)."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "s", StringType(), required=False),
                    NestedField(3, "p", StringType(), required=False))
    t = cat.create_table(ident, schema=schema)
    with t.update_spec() as u:
        u.add_identity("p")

    def batch(lo: int, hi: int) -> pa.Table:
        ids = list(range(lo, hi))
        return pa.table({"id": pa.array(ids, pa.int64()),
                         "s": pa.array([None if i % 5 == 0 else f"s{i}" for i in ids], pa.string()),
                         "p": pa.array(["ab"[i % 2] for i in ids], pa.string())})

    t.append(batch(0, 60))
    t.append(batch(60, 120))
    before = t.metadata.current_snapshot_id
    rows_before = t.scan().to_arrow().to_pylist()
    deletes = [
        (pa.table({"id": pa.array([3, 70, 1000], pa.int64())}), 0, ()),
        (pa.table({"s": pa.array([None, "s12", "s11"], pa.string())}), 1, ("a",)),
        (pa.table({"id": pa.array([20, 21, 22, 25], pa.int64()),
                   "s": pa.array(["s20", "s21", "wrong", None], pa.string())}), 0, ()),
    ]
    commit_delete_files(t, [write_equality_delete_file(t, r, spec, part) for r, spec, part in deletes])
    t = cat.load_table(ident)
    t.append(batch(0, 10))
    t = cat.load_table(ident)

    def deleted(r) -> bool:
        if r["id"] in (3, 70, 1000):
            return True
        if r["p"] == "a" and r["s"] in (None, "s12", "s11"):
            return True
        return (r["id"], r["s"]) in ((20, "s20"), (21, "s21"), (22, "wrong"), (25, None))

    rows = [r for r in rows_before if not deleted(r)] + batch(0, 10).to_pylist()
    assert len(rows) == 114, len(rows)
    return {"table": t, "before": before, "rows_before": rows_before, "rows": rows}


def iceberg_oracle(root: Path, ident: str, probe_ids: list[int] | None = None) -> dict:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.io.pyarrow import _read_deletes

    cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
    t = cat.load_table(ident)
    md = t.metadata
    loc = t.location()
    table_dir = Path(urllib.parse.unquote(urllib.parse.urlparse(loc).path)) if loc.startswith("file:") else Path(loc)
    versions = []
    for snap in md.snapshots:
        scan = t.scan(snapshot_id=snap.snapshot_id)
        tasks = list(scan.plan_files())
        tbl = scan.to_arrow()
        schema = next(s for s in md.schemas if s.schema_id == snap.schema_id)
        # per data file with position deletes: the positions pyiceberg's delete reader returns for it
        deleted_positions = {}
        for task in tasks:
            got: set[int] = set()
            for d in task.delete_files:
                positions = _read_deletes(t.io, d).get(task.file.file_path)
                if positions is not None:
                    got |= set(positions.to_pylist())
            if got:
                deleted_positions[rel_to(loc, task.file.file_path)] = sorted(got)
        entry = {
            "version": snap.snapshot_id,
            "timestamp_ms": snap.timestamp_ms,
            "sequence_number": snap.sequence_number,
            "parent_snapshot_id": snap.parent_snapshot_id,
            "schema_id": snap.schema_id,
            "operation": snap.summary.operation.value if snap.summary else None,
            "summary": {k: v for k, v in (snap.summary.additional_properties.items() if snap.summary else [])},
            "manifest_list": rel_to(loc, snap.manifest_list),
            "files": sorted(rel_to(loc, task.file.file_path) for task in tasks),
            "delete_files": sorted({rel_to(loc, d.file_path) for task in tasks for d in task.delete_files}),
            "row_count": tbl.num_rows,
            "count_by_id": count_by(tbl, "id", probe_ids or PROBE_IDS),
            "columns": tbl.column_names,
            "snapshot_schema": [[f.field_id, f.name] for f in schema.fields],
            "non_null_counts": non_null(tbl),
        }
        if deleted_positions:
            entry["deleted_positions_by_file"] = dict(sorted(deleted_positions.items()))
        versions.append(entry)
    data_files, _ = folder_parquet(table_dir)
    meta_dir = table_dir / "metadata"
    out = {
        "format": "iceberg",
        "reader": "pyiceberg " + __import__("pyiceberg").__version__,
        "identifier": ident,
        "format_version": md.format_version,
        "table_location": loc,
        "table_folder": table_dir.relative_to(root).as_posix(),
        # where the table is in OUTDIR (the copy of the warehouse), relative to OUTDIR
        "copy_folder": "iceberg/" + table_dir.relative_to(root).as_posix(),
        "current_version": md.current_snapshot_id,
        "current_metadata_file": rel_to(loc, t.metadata_location),
        "metadata_log": [rel_to(loc, e.metadata_file) for e in md.metadata_log],
        "metadata_files": sorted(p.relative_to(table_dir).as_posix() for p in meta_dir.glob("*.metadata.json")),
        "snapshot_ids": [s.snapshot_id for s in md.snapshots],
        "schemas": {str(s.schema_id): [[f.field_id, f.name, str(f.field_type)] for f in s.fields] for s in md.schemas},
        "current_schema_id": md.current_schema_id,
        "partition_spec": [[f.source_id, f.field_id, f.name, str(f.transform)] for f in md.spec().fields],
        "properties": dict(md.properties),
        "columns": versions[-1]["columns"] if versions else [],
        "versions": versions,
        "folder_parquet_files": data_files,
        "bloom_filter_columns": {f: bloom_columns(table_dir / f) for f in data_files},
    }
    return out


# ----------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?", help="output folder (created; existing tables in it are replaced)")
    ap.add_argument("--iceberg-root", default=DEFAULT_ICEBERG_ROOT,
                    help=f"fixed Iceberg warehouse root (deleted and rewritten; default {DEFAULT_ICEBERG_ROOT})")
    ap.add_argument("--oracles-only", nargs="+", metavar="DIR",
                    help="only write DIR.expected.json for existing Delta tables DIR (e.g. copied upstream tables)")
    args = ap.parse_args()

    if args.oracles_only:
        for d in args.oracles_only:
            d = Path(d).resolve()
            write_json(d.parent / f"{d.name}.expected.json", delta_oracle(d))
            print(f"lake_tables.py: wrote {d.parent / (d.name + '.expected.json')}")
        return 0
    if not args.outdir:
        ap.error("OUTDIR is required")

    out = Path(args.outdir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for name in DELTA_TABLES:
        shutil.rmtree(out / name, ignore_errors=True)
    shutil.rmtree(out / "iceberg", ignore_errors=True)

    make_delta(out)
    for name in DELTA_TABLES:
        clean_junk(out / name)
        write_json(out / f"{name}.expected.json", delta_oracle(out / name, strict=True))

    root = Path(args.iceberg_root).resolve()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_iceberg(root)
    for w in caught:
        print(f"lake_tables.py: pyiceberg warning: {w.message}", file=sys.stderr)
    for ident in ICEBERG_TABLES:
        write_json(out / f"{ident}.expected.json", iceberg_oracle(root, f"ns.{ident}", ICEBERG_PROBE_IDS.get(ident)))
    shutil.copytree(root, out / "iceberg")
    clean_junk(out / "iceberg")
    print(f"lake_tables.py: wrote {out}")
    return 0


def make_iceberg_omitting_identity(w: Path):
    """An Iceberg table partitioned by identity(p) whose one data file leaves `p` to its
    partition tuple (p = 5), as the spec lets a writer do; returns (metadata path, table)."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, NestedField

    cat = SqlCatalog("t", uri=f"sqlite:///{w}/cat.db", warehouse=f"file://{w}")
    cat.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "p", LongType(), required=False))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000,
                                        transform=IdentityTransform(), name="p"))
    t = cat.create_table("ns.t", schema, partition_spec=spec)
    path = f"{w}/ns/t/data/p=5/omitted.parquet"
    os.makedirs(os.path.dirname(path))
    fields = pa.schema([pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"})])
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64())}, schema=fields), path)
    df = DataFile.from_args(content=DataFileContent.DATA, file_path=f"file://{path}",
                            file_format=FileFormat.PARQUET, partition=Record(5), record_count=3,
                            file_size_in_bytes=os.path.getsize(path))
    with t.transaction() as tx:
        with tx.update_snapshot().fast_append() as fa:
            fa.append_data_file(df)
    t = cat.load_table("ns.t")
    return t.metadata_location.removeprefix("file://"), t


if __name__ == "__main__":
    sys.exit(main())
