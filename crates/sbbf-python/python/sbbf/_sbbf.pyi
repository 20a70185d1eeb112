"""Type stubs of the native module `sbbf._sbbf` (crates/sbbf-python/src/lib.rs). Use the
package `sbbf`: it turns Python values into what these functions take."""
from typing import Any, List, Optional, Sequence, Tuple

KERNEL: str
"""The filter kernel in use (`avx2` or `portable`)."""

def probe_source(
    source: str,
    column: str,
    values: Sequence[Any],
    shown_values: Sequence[str],
    exact_bits: bool,
) -> List[str]:
    """Probe report lines (JSON) for the files a path, directory, glob or URL names."""

def is_remote_url(arg: str) -> bool:
    """Whether the command reads `arg` as an object-store URL."""

def row_groups(path: str, filters: Sequence[Sequence[Tuple[Any, str, Any]]]) -> List[int]:
    """The row groups that may satisfy a filter in disjunctive normal form."""

def add_filters(
    input: str,
    output: Optional[str],
    columns: Sequence[str],
    fpp: float,
    ndv: Optional[int],
    replace: bool,
    force: bool,
) -> Tuple[List[Tuple[int, str, int, int, Optional[int]]], int, int, int, bool, str]:
    """Filters written, input size, output size, bytes written, compacted, the file written
    (output=None: in place, with the library's rules and lock)."""

def inspect_file(
    path: str, columns: Sequence[str], many: bool
) -> Tuple[Optional[str], int, int, List[Tuple[Any, ...]], List[str], List[str],
           List[Optional[str]]]:
    """Writer, file size, row groups, one tuple per chunk, columns not in the file, warnings,
    each chunk's encryption."""

def verify_file(
    path: str, columns: Sequence[str], samples: int, many: bool
) -> Tuple[List[Tuple[Any, ...]], List[str]]:
    """One tuple per chunk, columns not in the file."""

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
