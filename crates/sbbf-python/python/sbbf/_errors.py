"""The exceptions of `sbbf`: one base class, and a `ValueError` and an `OSError` kind."""


class Error(Exception):
    """Base class of every error `sbbf` raises."""


class InputError(Error, ValueError):
    """Bad input: a value the column's type cannot read, a column the file does not have (or
    that fits several), an option out of range, a filter that cannot be built."""


class FileError(Error, OSError):
    """A file that cannot be read or written: missing, not Parquet, a broken footer, encrypted,
    an I/O failure."""
