"""Parquet split-block Bloom filters from Python.

- `probe`: which row groups may hold values (the objects `sbbf probe --format json` prints).
- `row_groups`: the row groups of a file that pyarrow-style `filters` may need.
- `read_table`: `pyarrow.parquet.read_table` that skips the row groups the filters rule out.
- `add`, `inspect`, `verify`: add filters to a file, report on them, check them against the data.
- `snapshot`: the data files, version and columns of a Delta Lake or Iceberg table;
  `catalog_table`: an Iceberg table's current metadata file, from its catalog.
- `Sbbf`: the raw filter, with batch `insert_many` / `contains_many` over numpy and pyarrow arrays.

Values are Python objects (`int`, `float`, `str`, `bytes`, `bool`, `datetime.date`,
`datetime.datetime` naive or aware, `datetime.time`, `decimal.Decimal`, `uuid.UUID`, numpy
scalars, pyarrow scalars); a `str` given for a column of another type is read by the column's
type as the command line reads it (`"2024-01-31"` for a DATE, `"12.34"` for a DECIMAL(9,2)).

A Delta Lake table (a folder with `_delta_log/`) or an Iceberg table (its `*.metadata.json`,
or a folder with `metadata/`) is read as its snapshot: only the data files its log or
metadata names, never files it removed. `as_of=` reads an older snapshot (a Delta version,
an Iceberg snapshot id, or a time: an aware `datetime` or RFC 3339 text);
`as_directory=True` reads the folder as plain files instead (every file in it).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import uuid
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

from . import _sbbf
from ._errors import Error, FileError, InputError

__all__ = [
    "Error",
    "FileError",
    "InputError",
    "Sbbf",
    "add",
    "catalog_table",
    "index_build",
    "index_inspect",
    "index_update",
    "inspect",
    "probe",
    "read_table",
    "row_groups",
    "snapshot",
    "verify",
]

Source = Union[str, "os.PathLike[str]"]

def _path(source: Source) -> str:
    """`source` as the native module takes it: text, a `file://` URL as the local path it
    names (so `file:///data/t/` is read exactly as `/data/t/`)."""
    p = os.fspath(source)
    return _sbbf.local_location(p.decode() if isinstance(p, bytes) else p)


AsOf = Union[int, str, datetime.datetime, None]


def _as_of(as_of: AsOf) -> Optional[str]:
    """`as_of` as the native module takes it: text (a version, a snapshot id, RFC 3339)."""
    if as_of is None:
        return None
    if isinstance(as_of, bool):
        raise InputError(f"as_of={as_of!r}: a version, a snapshot id or a time, not a bool")
    if isinstance(as_of, int):
        return str(as_of)
    if isinstance(as_of, datetime.datetime):
        if as_of.tzinfo is None:
            raise InputError(f"as_of={as_of!r}: a time needs its zone (an aware datetime)")
        return as_of.isoformat()
    if isinstance(as_of, str):
        return as_of
    raise InputError(f"as_of={as_of!r}: a version, a snapshot id or a time "
                     f"(int, str or aware datetime), not {type(as_of).__name__}")


def snapshot(source: Source, *, as_of: AsOf = None, catalog: Optional[str] = None,
             catalog_name: Optional[str] = None) -> Optional[dict]:
    """The snapshot of the Delta Lake or Iceberg table at `source` (`None` when `source` is
    no table): `{"format", "location", "version", "timestamp_ms", "metadata",
    "partition_columns", "columns": [{"name", "physical", "field_id", "earlier_names",
    "inner_renamed", "inner_names", "type"}], "files": [{"path", "size", "rows", "partition",
    "deletes"}], "notes", "log_reads"}`.

    `version` is the Delta version or the Iceberg snapshot id read; `files` are the data files
    it names (local paths, or URLs for an object store) with their partition values as text
    and whether deletes (deletion vectors, delete files) apply to them. A column's
    `inner_names` are the struct fields inside it (`{"id", "physical", "name"}`: what finds
    each in a file, and the table's name for it). `log_reads` is what finding the table and
    reading its log or metadata asked of the store (`{"gets", "lists", "listed", "bytes"}`).
    `as_of` reads an older snapshot. With `catalog` (see `add`), `source` is `"NS.TABLE"` in
    that catalog.

    >>> import sbbf
    >>> sbbf.snapshot("testdata/lake/delta_basic", as_of=0)["version"]  # doctest: +SKIP
    0
    """
    text = _sbbf.table_snapshot(_path(source), _as_of(as_of), False, catalog, catalog_name)
    return None if text is None else json.loads(text)


def catalog_table(catalog: str, table: str, *, name: Optional[str] = None) -> str:
    """The current metadata file of the Iceberg table `table` (`"NAMESPACE.TABLE"`) in
    `catalog`, the authority on it: `"sqlite:///PATH"` (a SQL catalog in SQLite, as
    pyiceberg's SqlCatalog and Java's JdbcCatalog write it; `name` picks the `catalog_name`
    among several) or `"http(s)://HOST/..."` (a REST catalog; `name` is the warehouse; a
    bearer token from the `SBBF_CATALOG_TOKEN` environment variable). Give the answer to
    any function here as the table's path.

    >>> meta = sbbf.catalog_table("sqlite:///warehouse/catalog.db", "ns.events")  # doctest: +SKIP
    >>> sbbf.read_table(meta, filters=[("id", "=", 7)])  # doctest: +SKIP
    """
    return _sbbf.catalog_table(catalog, table, name)


def _value(v: Any) -> Any:
    """A value as the native module takes it: `str`, `bool`, `int`, `float`, `bytes`, or a
    one-element pyarrow array (whose type says what the value is)."""
    if v is None or isinstance(v, (str, bool, int, float, bytes)):
        return v
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, uuid.UUID):
        return v.bytes
    if isinstance(v, pa.Scalar):
        return None if not v.is_valid else pa.repeat(v, 1)
    if isinstance(v, np.generic):
        return pa.array(np.array([v]))
    if isinstance(v, (datetime.date, datetime.time, datetime.timedelta, decimal.Decimal)):
        try:
            return pa.array([v])
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
            raise InputError(f"cannot read {v!r} as a value: {e}") from e
    raise InputError(f"cannot read a value of type {type(v).__name__}: {v!r}")


def probe(
    source: Source,
    column: str,
    values: Iterable[Any],
    *,
    exact_bits: bool = False,
    index: bool = True,
    as_of: AsOf = None,
    as_directory: bool = False,
    catalog: Optional[str] = None,
    catalog_name: Optional[str] = None,
) -> List[dict]:
    """Which row groups may hold `values` in `column`: one object per file, the objects
    `sbbf probe --format json` prints (`{"file", "column", "physical_type", "logical_type",
    "row_groups": [{"row_group", "num_rows", "filter", "reason", "values": [{"value",
    "result"}]}]}`), each `value` the input as given and each `result` `"maybe"`, `"absent"`
    (definitely not there: skip it) or `"unknown"` (no usable filter).

    `source` is a file, a directory (every `*.parquet` below it), a glob, or an object-store
    URL (`s3://bucket/prefix/`, `gs://`, `az://`, `http(s)://`; credentials from the `AWS_*`,
    `GOOGLE_*`, `AZURE_*` environment variables). With several files, a file without the
    column has no row groups and a file that cannot be probed is `{"file", "error"}`; with one
    file those raise. `exact_bits`: probe the float bits given (no `0.0`/`-0.0` merging; NaN
    probes its bit pattern).

    A table root with an index (`index_build`) is answered from the index for the files it
    rules out, with the same objects; files it cannot rule out (new, changed, not covered)
    are probed directly, and an unusable index is ignored with a warning. `index=False`
    probes every file.

    A Delta or Iceberg table is probed as its snapshot (`as_of`, `as_directory`: see the
    module's help): a column under Delta's column mapping is probed by the name its files
    hold; a column Iceberg renamed is found in each file by its field id (a file written
    before the rename answers under the old name, in its `column`). With `catalog` (see
    `add`), `source` is `"NS.TABLE"` in that catalog, probed with its index as by its folder.
    """
    if isinstance(values, (str, bytes)):
        values = [values]
    given = list(values)
    if not given:
        raise InputError("no values to probe")
    native = [_value(v) for v in given]
    if any(v is None for v in native):
        raise InputError("None is not a value a filter can hold (filters record no nulls)")
    # Placeholders for the report; each is replaced by the value given.
    shown = [v if isinstance(v, str) else "" for v in given]
    # Files, directories, globs and object-store URLs go through the library's one source.
    lines, warning = _sbbf.probe_source(_path(source), column, native, shown, exact_bits, index,
                                        _as_of(as_of), as_directory, catalog, catalog_name)
    if warning:
        warnings.warn(warning, stacklevel=2)
    out = []
    for line in lines:
        obj = json.loads(line)
        for rg in obj.get("row_groups", ()):
            for i, answer in enumerate(rg["values"]):
                answer["value"] = given[i]
        out.append(obj)
    return out


Filters = Union[Sequence[Tuple[Any, str, Any]], Sequence[Sequence[Tuple[Any, str, Any]]]]


def _dnf(filters: Any) -> Optional[List[List[Tuple[Any, str, Any]]]]:
    """pyarrow's filter forms as a list of conjunctions; `None` when the filters are not in
    that form (a `pyarrow.compute.Expression`): nothing can be skipped by them here."""
    if filters is None or not isinstance(filters, (list, tuple)) or len(filters) == 0:
        return None
    first = filters[0]
    if isinstance(first, tuple) and len(first) == 3 and isinstance(first[1], str):
        conjunctions = [filters]
    else:
        conjunctions = filters
    out = []
    for conj in conjunctions:
        leaves = []
        for leaf in conj:
            col, op, val = leaf
            op = op.lower() if isinstance(op, str) else op
            if op in ("in", "not in"):
                val = [_value(v) for v in val] if op == "in" else None
            else:
                try:
                    val = _value(val)
                except InputError:
                    val = None
            leaves.append((col, op, val))
        out.append(leaves)
    return out


def row_groups(source: Source, filters: Any, *, index: bool = True, as_of: AsOf = None,
               as_directory: bool = False, catalog: Optional[str] = None,
               catalog_name: Optional[str] = None) -> Union[List[int], Dict[str, List[int]]]:
    """The row groups that may hold rows satisfying `filters` (sorted, distinct): a list for
    one file; for a directory (every `*.parquet` below it), a glob or an object-store URL, a
    dict from each file (as `probe` names it) to its list, in path order.

    `filters` are pyarrow's: `[("col", "=", v), ("col", "in", [v, w])]` (AND), or a list of
    such lists (OR of ANDs). `=`/`==` and `in` are decided by the Bloom filters; any other
    predicate or a null keeps the row group. A column the file does not have raises
    `InputError` (naming near misses); among several files, only a column no file has does
    (a file without it keeps its row groups). A table root with an index (`index_build`)
    leaves out unread the files the index proves hold no matching row (an empty list);
    `index=False` reads every file's filters. A Delta or Iceberg table: its snapshot's files
    (`as_of`, `as_directory`: see the module's help; `catalog`: see `add`).
    """
    path = _path(source)
    dnf = _dnf(filters) or []
    if as_of is None and catalog is None and not _sbbf.is_remote_url(path) and \
            os.path.isfile(path) and not path.endswith(".metadata.json"):
        return _sbbf.row_groups(path, dnf, True)
    kept, warning = _sbbf.row_groups_source(path, dnf, True, index, _as_of(as_of), as_directory,
                                            catalog, catalog_name)
    if warning:
        warnings.warn(warning, stacklevel=2)
    return dict(kept)


_DATASET_OPTIONS = (
    "schema", "filesystem", "partitioning", "memory_map", "read_dictionary", "binary_type",
    "list_type", "buffer_size", "ignore_prefixes", "pre_buffer", "coerce_int96_timestamp_unit",
    "decryption_properties", "thrift_string_size_limit", "thrift_container_size_limit",
    "schema_depth_limit", "page_checksum_verification", "arrow_extensions_enabled",
)


def _source_keep(url: str, dnf: Any, local: bool = False, as_directory: bool = False) -> Any:
    """For the fragments of a dataset at `url` (a local directory, or an object-store URL,
    whose fragments pyarrow names `bucket/key`): the row groups the filters keep, through the
    library's source and the table's index; `None` (read whole) for a file it did not
    answer."""
    try:
        found, warning = _sbbf.row_groups_source(url, dnf, False, True, None, as_directory)
    except Error as e:
        warnings.warn(f"sbbf cannot prune {url} ({e}); its row groups are read whole",
                      stacklevel=3)
        found, warning = [], None
    if warning:
        warnings.warn(warning, stacklevel=3)
    if local:
        kept = {os.path.realpath(f): rgs for f, rgs in found}

        def keep(frag: Any) -> Optional[List[int]]:
            return kept.get(os.path.realpath(frag.path))
        return keep
    scheme = url.split("://", 1)[0]
    kept = dict(found)

    def keep(frag: Any) -> Optional[List[int]]:
        return kept.get(f"{scheme}://{frag.path}")
    return keep


def read_table(source: Any, filters: Any = None, columns: Optional[List[str]] = None, *,
               as_of: AsOf = None, as_directory: bool = False, catalog: Optional[str] = None,
               catalog_name: Optional[str] = None, **kwargs: Any) -> pa.Table:
    """`pyarrow.parquet.read_table(source, filters=filters, columns=columns, **kwargs)`,
    reading only the row groups `row_groups` keeps: the same rows, in the same order, with
    the same schema (pyarrow applies the same filter expression to what is read).

    `source` is a file or a directory of files (hive partitions as pyarrow reads them), local
    or an object-store URL (`s3://bucket/table/`, `gs://...`: pruned through the library's
    store, with credentials from the `AWS_*`/`GOOGLE_*` environment; if that store cannot
    read the files, a warning says so and they are read whole). Files given through another
    `filesystem=` are read whole.

    A Delta or Iceberg table is read as its snapshot (`as_of`, `as_directory`: see the
    module's help): its data files only, with the table's columns in the table's order (null
    where a file predates a column), Delta partition columns from the snapshot's partition
    values, rows in the snapshot's file order. Each file's columns are found as the format
    says: an Iceberg column by its field id (a renamed column is read from files written
    before the rename), a Delta column under column mapping by its physical name or id; the
    rows Delta deletion vectors and Iceberg position and equality deletes delete are left out
    (an equality delete matches by the delete file's columns, a null matching a null). A table
    with Iceberg v3 deletion vectors raises `InputError` naming them: those are not applied
    yet, and reading the files as they are would return rows the table does not have. The
    library reads the table's rows (the rules `sbbf query` reads by: each column typed as the
    table's schema types it, whatever layout a writer chose), in the row groups the Bloom
    filters and the table's index keep; the filter expression is then applied here. With
    `catalog` (see `add`), `source` is `"NS.TABLE"` in that catalog, read as by its folder
    (its index too).
    """
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    use_threads = kwargs.pop("use_threads", True)
    use_pandas_metadata = kwargs.pop("use_pandas_metadata", False)
    unknown = set(kwargs) - set(_DATASET_OPTIONS)
    if unknown:
        raise TypeError(f"read_table() got unexpected keyword arguments: {sorted(unknown)}")
    if catalog is not None:
        # A catalog's table is a table: never read as files.
        return _read_lake(str(source), filters, columns, as_of, False, kwargs,
                          (catalog, catalog_name))
    if isinstance(source, (str, os.PathLike)) and "filesystem" not in kwargs:
        source = _path(source)
        table = _read_lake(source, filters, columns, as_of, as_directory, kwargs)
        if table is not None:
            return table
    elif as_of is not None:
        raise InputError("as_of needs a table's path (a Delta or Iceberg table)")
    dataset = pq.ParquetDataset(source, filters=filters, **kwargs)
    inner = getattr(dataset, "_dataset", None)
    dnf = _dnf(filters)
    keep = None
    if dnf is not None and isinstance(inner, ds.FileSystemDataset):
        if isinstance(inner.filesystem, pa.fs.LocalFileSystem):
            if isinstance(source, (str, os.PathLike)) and os.path.isdir(_path(source)):
                # One pass over the directory, with its table index when it has one (already
                # found to be no lake table: not asked again).
                keep = _source_keep(_path(source), dnf, local=True, as_directory=True)
            else:
                def keep(frag):
                    return _sbbf.row_groups(frag.path, dnf)
        elif isinstance(source, (str, os.PathLike)) and "filesystem" not in kwargs and \
                _sbbf.is_remote_url(_path(source)):
            keep = _source_keep(_path(source), dnf, as_directory=True)
    if keep is not None:
        fragments = []
        for frag in inner.get_fragments():
            kept = keep(frag)
            if kept is not None and len(kept) < frag.num_row_groups:
                frag = frag.subset(row_group_ids=kept)
            fragments.append(frag)
        dataset._dataset = ds.FileSystemDataset(
            fragments, schema=inner.schema, format=inner.format,
            filesystem=inner.filesystem, root_partition=inner.partition_expression,
        )
    return dataset.read(columns=columns, use_threads=use_threads,
                        use_pandas_metadata=use_pandas_metadata)


def _read_lake(source: str, filters: Any, columns: Optional[List[str]], as_of: AsOf,
               as_directory: bool, kwargs: dict,
               catalog: Tuple[Optional[str], Optional[str]] = (None, None)) -> Optional[pa.Table]:
    """`source` read as the Delta or Iceberg table it is (`None`: it is no table): the
    library reads the rows (`_sbbf.read_lake`: the table's columns, partition values, deletes,
    in the row groups the Bloom filters and the table's index keep); the filter expression is
    applied here, as pyarrow applies it."""
    import pyarrow.parquet as pq

    dnf = _dnf(filters)
    read = None
    if columns is not None and (not filters or dnf is not None):
        # The filters' columns too (a nested field's by its top-level column), dropped after.
        used = {leaf[0][0] if isinstance(leaf[0], tuple) else leaf[0]
                for conj in (dnf or []) for leaf in conj}
        read = list(columns) + sorted(used - set(columns))
    if kwargs and _sbbf.table_snapshot(source, _as_of(as_of), as_directory, *catalog) is not None:
        # Refused before the table is read.
        raise TypeError(f"read_table() of a table takes none of {sorted(kwargs)}")
    got = _sbbf.read_lake(source, dnf or [], read, True, _as_of(as_of), as_directory, *catalog)
    if got is None:
        return None
    schema, batches, warning = got
    if warning:
        warnings.warn(warning, stacklevel=3)
    table = pa.Table.from_batches(batches, schema=schema)
    if filters:
        table = table.filter(pq.filters_to_expression(filters))
    return table.select(columns) if columns is not None else table


def _columns(columns: Union[str, Sequence[str], None]) -> List[str]:
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def add(
    source: Source,
    columns: Union[str, Sequence[str]],
    *,
    fpp: float = 0.01,
    ndv: Optional[int] = None,
    output: Optional[Source] = None,
    in_place: bool = False,
    replace: bool = False,
    force: bool = False,
    keys: Optional[Mapping[str, Any]] = None,
    catalog: Optional[str] = None,
    catalog_name: Optional[str] = None,
) -> dict:
    """Adds Bloom filters for `columns` to every row group of the file `source`, without
    touching its data pages, as `sbbf add` does: to `output` (an existing file only with
    `force=True`), or to `source` itself with `in_place=True` (through symbolic links, under an
    exclusive lock; written to a temporary file and renamed; refused for a data file of a
    Delta, Iceberg or Hudi table, and for read-only files and hard links unless `force=True`).
    Filters are sized to `fpp` by each chunk's distinct values, or for `ndv` values;
    `replace=True` rebuilds filters the columns already have. For an encrypted file, `keys`
    (`{"footer": KEY, "columns": {COLUMN: KEY}}`, each KEY text or `0x` hex) builds the new
    filters from the decrypted values and seals them (with `replace=True`: seals the
    plaintext filters of encrypted columns). Returns the report `sbbf add --format json`
    prints.

    A Delta table (a folder or object-store prefix with `_delta_log/`), with neither `output`
    nor `in_place`: each current data file that lacks a filter for a column gets a copy with
    it beside the original, and one new table version swaps them (`dataChange: false`; rows,
    deletion vectors, statistics and tags unchanged; the old version still reads the old
    files until the table's VACUUM). Columns by the table's names. Returns the report
    `sbbf add TABLE --format json` prints: `read_version`, `committed_version` (None when
    every file had the filters), `swapped`, `kept`, `withdrawn`. A Delta table whose protocol
    asks of writers what is not done here raises `InputError`.

    An Iceberg table (format 1 or 2) the same way, through one `replace` snapshot: `source`
    `"NS.TABLE"` with `catalog="sqlite:///PATH"` (a SQL catalog in SQLite; `catalog_name`
    picks among several) or `catalog="http(s)://HOST/..."` (a REST catalog, the snapshot
    sent to its commit endpoint; a bearer token from `SBBF_CATALOG_TOKEN`), or a table folder whose `metadata/` holds `vN.metadata.json` and
    `version-hint.text`. The copies keep their originals' data sequence numbers (equality
    deletes still apply); files that position deletes name are kept as they are.
    `committed_version` is then the new snapshot's id.

    >>> import sbbf  # doctest: +SKIP
    >>> sbbf.add("events/", "user_id")["committed_version"]  # doctest: +SKIP
    7
    >>> sbbf.add("ns.events", "user_id", catalog="sqlite:///wh/catalog.db")["format"]  # doctest: +SKIP
    'iceberg'
    """
    cols = _columns(columns)
    if not cols:
        raise InputError("no columns to add filters for")
    if catalog is not None:
        if output is not None or in_place or keys is not None:
            raise InputError("a catalog's table gets filters through a new snapshot: "
                             "output, in_place and keys do not apply")
        return json.loads(_sbbf.table_write_json(
            "add", str(source), cols, float(fpp), ndv, replace, catalog, catalog_name))
    if output is None and not in_place and keys is None:
        table = _sbbf.table_write_json("add", _path(source), cols, float(fpp), ndv, replace)
        if table is not None:
            return json.loads(table)
    if (output is None) == (not in_place):
        raise InputError("give output=PATH or in_place=True (one of them)")
    footer, column_keys = _keys(keys)
    return json.loads(_sbbf.add_json(
        _path(source), None if in_place else _path(output), cols, float(fpp), ndv, replace,
        force, footer, column_keys))


def _keys(keys: Optional[Mapping[str, Any]]) -> Tuple[Optional[str], dict]:
    """The footer key and the column keys of a `keys` mapping (as `--keys FILE` holds them)."""
    if keys is None:
        return None, {}
    unknown = set(keys) - {"footer", "columns"}
    if unknown:
        raise InputError(f"keys: unknown entries {sorted(unknown)} (footer, columns)")
    columns = dict(keys.get("columns") or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in columns.items()):
        raise InputError("keys: columns must map column paths to key text")
    footer = keys.get("footer")
    if footer is not None and not isinstance(footer, str):
        raise InputError("keys: the footer key must be text")
    return footer, columns


def _reports(path: str, many_and_lines: Tuple[bool, List[str]]) -> Union[dict, List[dict]]:
    # One file (a local file, one object) is one report; a directory or a glob is a list
    # however many files it holds, so a caller's code does not depend on the count.
    many, lines = many_and_lines
    reports = [json.loads(line) for line in lines]
    one = not many and (_sbbf.is_remote_url(path) or os.path.isfile(path))
    return reports[0] if one else reports


def inspect(source: Source, columns: Union[str, Sequence[str], None] = None, *,
            keys: Optional[Mapping[str, Any]] = None, as_of: AsOf = None,
            as_directory: bool = False) -> Union[dict, List[dict]]:
    """Every filter of `source` (of `columns` when given), as `sbbf inspect --format json`
    reports it: offset, length, bitset size, bits set, fill, implied false-positive rate and
    problems per column chunk, the problem count, the file's encryption and warnings. `keys`
    opens an encrypted file (see `add`).

    `source` is a file (one report, a dict) or, as for `probe`, a directory, a glob or an
    object-store URL (a list of reports, one per file, in path order: a file that cannot be
    read is `{"file", "error"}`, a column a file lacks is in its `columns_not_in_file`; no
    file with an asked column raises `InputError`). A Delta or Iceberg table: its snapshot's
    files (`as_of`, `as_directory`: see the module's help)."""
    footer, column_keys = _keys(keys)
    path = _path(source)
    return _reports(path, _sbbf.inspect_source(path, _columns(columns), footer, column_keys,
                                               _as_of(as_of), as_directory))


def verify(source: Source, columns: Union[str, Sequence[str], None] = None, *,
           samples: int = 10_000, keys: Optional[Mapping[str, Any]] = None,
           as_of: AsOf = None, as_directory: bool = False) -> Union[dict, List[dict]]:
    """Decodes the data of `source` and checks that every stored value tests "maybe" in its
    chunk's filter (`false_negatives` must be 0), and measures the real false-positive rate
    with `samples` random absent values per chunk; as `sbbf verify --format json`. An
    encrypted file is verified with its `keys` (see `add`); a chunk whose key is not given
    says why in `not_verified`. `source` is a file (a dict) or a directory, glob or
    object-store URL (a list, as for `inspect`; a table's snapshot, as for `inspect`)."""
    footer, column_keys = _keys(keys)
    path = _path(source)
    return _reports(path, _sbbf.verify_source(path, _columns(columns), int(samples), footer,
                                              column_keys, _as_of(as_of), as_directory))


def _raw_one(v: Any) -> pa.Array:
    """One value as a one-element array of the type whose Parquet bytes a filter hashes: an
    `int` is INT64, a `float` DOUBLE, a `str` its UTF-8 bytes, `bytes` as they are."""
    if isinstance(v, bool) or v is None:
        raise InputError(f"a filter cannot hold {v!r}")
    if isinstance(v, int):
        try:
            return pa.array([v], type=pa.int64())
        except (OverflowError, pa.ArrowInvalid) as e:
            raise InputError(f"{v} does not fit an INT64: {e}") from e
    if isinstance(v, float):
        return pa.array([v], type=pa.float64())
    if isinstance(v, str):
        return pa.array([v], type=pa.string())
    if isinstance(v, (bytes, bytearray, memoryview)):
        return pa.array([bytes(v)], type=pa.binary())
    if isinstance(v, uuid.UUID):
        return pa.array([v.bytes], type=pa.binary(16))
    a = _value(v)
    return a if isinstance(a, pa.Array) else pa.array([a])


def _raw_many(values: Any) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    if isinstance(values, np.ndarray):
        return pa.array(values)
    values = list(values)
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pa.array(values, type=pa.int64())
    if values and all(isinstance(v, uuid.UUID) for v in values):
        return pa.array([v.bytes for v in values], type=pa.binary(16))
    return pa.array(values)


class Sbbf:
    """A split-block Bloom filter: the bitset alone (no Parquet header).

    A value is hashed as the PLAIN bytes a Parquet writer stores for it: a plain `int` as an
    INT64 (8 bytes little-endian), a `float` as a DOUBLE, a `str` as its UTF-8 bytes, `bytes`
    as they are; numpy and pyarrow values by their own type (an `int32` array as INT32).
    """

    __slots__ = ("_f",)

    def __init__(self, num_bytes: int) -> None:
        """An empty filter of `num_bytes`, rounded up to a power of two in [32 B, 128 MiB]."""
        self._f = _sbbf.Sbbf(num_bytes)

    @classmethod
    def with_ndv_fpp(cls, ndv: int, fpp: float) -> "Sbbf":
        """An empty filter sized for `ndv` distinct values at false-positive rate `fpp`."""
        f = cls.__new__(cls)
        f._f = _sbbf.Sbbf.with_ndv_fpp(ndv, fpp)
        return f

    @classmethod
    def from_bytes(cls, bitset: bytes) -> "Sbbf":
        """A filter holding a copy of `bitset` (a non-empty multiple of 32 bytes)."""
        f = cls.__new__(cls)
        f._f = _sbbf.Sbbf.from_bytes(bytes(bitset))
        return f

    def to_bytes(self) -> bytes:
        """The bitset."""
        return self._f.to_bytes()

    @property
    def num_bytes(self) -> int:
        """Bytes of the bitset."""
        return self._f.num_bytes

    @property
    def fill_ratio(self) -> float:
        """Share of bits set."""
        return self._f.fill_ratio

    @property
    def estimated_fpp(self) -> float:
        """False-positive rate the fill implies for a random absent value."""
        return self._f.estimated_fpp

    def insert(self, value: Any) -> None:
        """Adds one value."""
        self._f.insert_array(_raw_one(value))

    def contains(self, value: Any) -> bool:
        """Whether the value may have been added (False: it definitely was not)."""
        return self._f.contains_array(_raw_one(value))[0] == 1

    def insert_many(self, values: Any) -> None:
        """Adds every non-null element of a pyarrow array, a numpy array or a sequence."""
        self._f.insert_array(_raw_many(values))

    def contains_many(self, values: Any) -> np.ndarray:
        """`contains` for every element, as a numpy bool array (a null is never contained)."""
        return np.frombuffer(self._f.contains_array(_raw_many(values)), dtype=np.bool_)

    def union(self, other: "Sbbf") -> None:
        """Adds the bits of `other`, a filter of the same size."""
        self._f.union(other._f)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sbbf) and self.to_bytes() == other.to_bytes()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sbbf(num_bytes={self.num_bytes}, fill_ratio={self.fill_ratio:.4f})"


def index_build(table: Source, columns: Union[str, Sequence[str], None] = None, *,
                fpp: Optional[float] = None, build_missing: bool = False,
                tighten: bool = False) -> dict:
    """Builds the table index of `table` (a directory or an object-store prefix ending in
    `/`) from the filters its files already have, as `sbbf index build` does: written under
    `TABLE/_sbbf_index/` (atomically; one PUT on object stores), read by `probe` on the table
    root. `columns` (default: every column with filters); `fpp` folds filters while their
    false-positive rate stays at or below it (default: each keeps its size, and the index
    answers exactly as the files do); `build_missing` builds the filters row groups lack from
    their data; `tighten` (with `columns` and `fpp`) builds again from their data, at `fpp`,
    the entries whose file's filter is looser, so a lookup reads almost no file it does not
    need. Returns the report `sbbf index build --format json` prints."""
    return json.loads(_sbbf.index_build(_path(table), _columns(columns),
                                        None if fpp is None else float(fpp), build_missing,
                                        tighten))


def index_update(table: Source, *, build_missing: bool = False, tighten: bool = False) -> dict:
    """Brings the table index of `table` up to date, reading only new and changed files (an
    unusable index is rebuilt, with a warning), as `sbbf index update`; `build_missing` and
    `tighten` as `index_build`'s, for the files it reads. Returns its report."""
    report, rebuilt = _sbbf.index_update(_path(table), build_missing, tighten)
    if rebuilt:
        warnings.warn(f"the old index was unusable ({rebuilt}); rebuilt it from every file",
                      stacklevel=2)
    return json.loads(report)


def index_inspect(table: Source) -> dict:
    """What the table index of `table` covers: files covered, stale, missing, sizes and FPP
    per column and group (`sbbf index inspect --format json`)."""
    return json.loads(_sbbf.index_inspect(_path(table)))
