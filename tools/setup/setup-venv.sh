#!/usr/bin/env bash
# Create tools/.venv with the pinned Python writers/oracles used by tools/gen, and maturin and
# pytest for the Python package (tools/python/test.sh).
# Idempotent: re-running only installs what is missing or at the wrong version.
set -euo pipefail

PYARROW_VERSION=26.0.1
DUCKDB_VERSION=2.0.1
PYSPARK_VERSION=4.3.0
NUMPY_VERSION=2.4.6
# Delta Lake and Apache Iceberg writers/readers for the lake-table fixtures (tools/gen/lake_tables.py).
DELTALAKE_VERSION=1.6.6
PYICEBERG_VERSION=0.12.0
# The Python package sbbf (crates/sbbf-python): its build tool and test runner.
MATURIN_VERSION=1.16.0
PYTEST_VERSION=9.2.0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$(dirname "$here")/.venv"
python="${PYTHON:-python3}"

die() { echo "setup-venv.sh: ERROR: $*" >&2; exit 1; }

command -v "$python" >/dev/null || die "$python not found"
if [ ! -x "$venv/bin/python" ]; then
    echo "setup-venv.sh: creating $venv"
    "$python" -m venv "$venv" || die "python -m venv failed (apt-get install python3-venv?)"
fi

"$venv/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip \
    || die "pip upgrade failed"
"$venv/bin/python" -m pip install --disable-pip-version-check -q \
    "pyarrow==$PYARROW_VERSION" "duckdb==$DUCKDB_VERSION" "pyspark==$PYSPARK_VERSION" "numpy==$NUMPY_VERSION" \
    "deltalake==$DELTALAKE_VERSION" "pyiceberg[sql-sqlite,pyarrow]==$PYICEBERG_VERSION" \
    "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION" \
    || die "pip install failed"

"$venv/bin/python" - <<PY || die "version check failed"
import pyarrow, duckdb, pyspark, numpy, pytest, deltalake, pyiceberg, sqlalchemy
import importlib.metadata as m
assert m.version("maturin") == "$MATURIN_VERSION", m.version("maturin")
assert pytest.__version__ == "$PYTEST_VERSION", pytest.__version__
assert pyarrow.__version__ == "$PYARROW_VERSION", pyarrow.__version__
assert duckdb.__version__ == "$DUCKDB_VERSION", duckdb.__version__
assert pyspark.__version__ == "$PYSPARK_VERSION", pyspark.__version__
assert numpy.__version__ == "$NUMPY_VERSION", numpy.__version__
assert m.version("deltalake") == "$DELTALAKE_VERSION", m.version("deltalake")
assert m.version("pyiceberg") == "$PYICEBERG_VERSION", m.version("pyiceberg")
print("setup-venv.sh: ok: pyarrow", pyarrow.__version__, "duckdb", duckdb.__version__, "pyspark", pyspark.__version__,
      "deltalake", m.version("deltalake"), "pyiceberg", m.version("pyiceberg"))
PY

if ! command -v java >/dev/null; then
    echo "setup-venv.sh: WARNING: java not found; the Spark/parquet-java generator and oracle need Java 17+" >&2
fi
