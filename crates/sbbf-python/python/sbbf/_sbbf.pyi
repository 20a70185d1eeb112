"""Type stubs of the native module `sbbf._sbbf` (crates/sbbf-python/src/lib.rs). Use the
package `sbbf`: it turns Python values into what these functions take."""
from typing import Any, List, Mapping, Optional, Sequence, Tuple
import pyarrow as pa

KERNEL: str
"""The filter kernel in use (`avx2` or `portable`)."""

def probe_source(
    source: str,
    column: str,
    values: Sequence[Any],
    shown_values: Sequence[str],
    exact_bits: bool,
    use_index: bool = True,
    as_of: Optional[str] = None,
    as_directory: bool = False,
    catalog: Optional[str] = None,
    catalog_name: Optional[str] = None,
) -> Tuple[List[str], Optional[str]]:
    """`sbbf probe --format json` lines for every file, and a warning about an unusable
    index."""

def lake_type(format: str, name: str) -> Optional[pa.DataType]:
    """The Arrow type of a table's primitive type as `format` (`delta`, `iceberg`) names it;
    `None` for nested types and names the format lacks."""

def is_remote_url(arg: str) -> bool:
    """Whether the command reads `arg` as an object-store URL."""

def row_groups(
    path: str, filters: Sequence[Sequence[Tuple[Any, str, Any]]], strict: bool = False
) -> List[int]:
    """The row groups of one file that may satisfy a filter in disjunctive normal form
    (`strict`: a column the file lacks raises)."""

def row_groups_source(
    source: str,
    filters: Sequence[Sequence[Tuple[Any, str, Any]]],
    strict: bool = True,
    use_index: bool = True,
    as_of: Optional[str] = None,
    as_directory: bool = False,
    catalog: Optional[str] = None,
    catalog_name: Optional[str] = None,
) -> Tuple[List[Tuple[str, List[int]]], Optional[str]]:
    """`(file, row groups)` for every file a directory, glob or URL names, and a warning
    about an unusable index."""

def add_json(
    input: str,
    output: Optional[str],
    columns: Sequence[str],
    fpp: float,
    ndv: Optional[int],
    replace: bool,
    force: bool,
    footer_key: Optional[str],
    column_keys: Mapping[str, str],
) -> str:
    """The `sbbf add --format json` report (output=None: in place, with the library's rules
    and lock)."""

def inspect_source(
    source: str,
    columns: Sequence[str],
    footer_key: Optional[str],
    column_keys: Mapping[str, str],
    as_of: Optional[str] = None,
    as_directory: bool = False,
) -> Tuple[bool, List[str]]:
    """Whether `source` names several files, and the `sbbf inspect --format json` line of
    each."""

def verify_source(
    source: str,
    columns: Sequence[str],
    samples: int,
    footer_key: Optional[str],
    column_keys: Mapping[str, str],
    as_of: Optional[str] = None,
    as_directory: bool = False,
) -> Tuple[bool, List[str]]:
    """Whether `source` names several files, and the `sbbf verify --format json` line of
    each."""

def table_snapshot(
    source: str, as_of: Optional[str] = None, as_directory: bool = False,
    catalog: Optional[str] = None, catalog_name: Optional[str] = None,
) -> Optional[str]:
    """The snapshot of the Delta or Iceberg table `source` names (`NS.TABLE` with
    `catalog`), as JSON; `None` for no table (or with `as_directory`)."""

def read_lake(
    source: str,
    filters: Sequence[Sequence[Tuple[Any, str, Any]]],
    columns: Optional[Sequence[str]] = None,
    use_index: bool = True,
    as_of: Optional[str] = None,
    as_directory: bool = False,
    catalog: Optional[str] = None,
    catalog_name: Optional[str] = None,
) -> Optional[Tuple[pa.Schema, List[pa.RecordBatch], Optional[str]]]:
    """The rows of the Delta or Iceberg table `source` as the table gives them (the
    library's reader: columns matched by field id or physical name, partition values from
    the log, deletes applied), in the row groups `filters` may match (Bloom filters and the
    table's index), not filtered further; with a warning. `None` for no table."""

def catalog_table(uri: str, table: str, name: Optional[str] = None) -> str:
    """The current metadata file of the Iceberg table `table` (`NS.TABLE`) in a catalog."""

class Sbbf:
    """A split-block Bloom filter (the bitset alone)."""

    def __init__(self, num_bytes: int) -> None: ...
    @staticmethod
    def with_ndv_fpp(ndv: int, fpp: float) -> "Sbbf": ...
    @staticmethod
    def from_bytes(bitset: bytes) -> "Sbbf": ...
    def to_bytes(self) -> bytes: ...
    @property
    def num_bytes(self) -> int: ...
    @property
    def fill_ratio(self) -> float: ...
    @property
    def estimated_fpp(self) -> float: ...
    def union(self, other: "Sbbf") -> None: ...
    def insert_array(self, array: Any) -> None: ...
    def contains_array(self, array: Any) -> bytes: ...

def index_build(
    path: str,
    columns: Sequence[str],
    fpp: Optional[float],
    build_missing: bool,
    tighten: bool = False,
) -> str:
    """The `sbbf index build --format json` report."""

def index_update(
    path: str, build_missing: bool, tighten: bool = False
) -> Tuple[str, Optional[str]]:
    """The `sbbf index update --format json` report, and why the old index was rebuilt."""

def index_inspect(path: str) -> str:
    """The `sbbf index inspect --format json` coverage."""
