#!/usr/bin/env bash
# Interop check of `sbbf add`: pyarrow, DuckDB, Spark/parquet-java and arrow-rs read the files it
# writes (see tools/interop/interop.py). Sets up tools/.venv when needed, builds the binaries, runs the
# check. Exits non-zero, loudly, when a reader is missing: nothing is ever skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

die() {
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
    echo "interop.sh: ERROR: $*" >&2
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
    exit 3
}

command -v java >/dev/null || die "java not found: Spark and parquet-java need a Java 17+ JDK"
command -v javac >/dev/null || die "javac not found: the parquet-java probe helper needs a Java 17+ JDK"

py=tools/.venv/bin/python
if ! "$py" -c 'import pyarrow, duckdb, pyspark, numpy' 2>/dev/null; then
    echo "== interop: setting up tools/.venv (tools/setup/setup-venv.sh)"
    bash tools/setup/setup-venv.sh || die "tools/setup/setup-venv.sh failed"
fi
"$py" -c 'import pyarrow, duckdb, pyspark, numpy' || die "pyarrow/duckdb/pyspark/numpy missing from tools/.venv"

echo "== interop: cargo build --release -p sbbf-cli (without \`query\`: DataFusion is not needed here and a release build of it costs CI ~10 minutes); the arrow-rs oracle (its own workspace)"
# Cargo's target directory: CARGO_TARGET_DIR when set, else ./target.
target=$(bash tools/target-dir.sh) || die "cargo metadata failed"
export SBBF_TARGET_DIR="$target"
cargo build --release -p sbbf-cli --no-default-features --features object_store
cargo build --release --manifest-path tools/interop/arrowrs-oracle/Cargo.toml --target-dir "$target"
[ -x "$target/release/sbbf" ] || die "$target/release/sbbf was not built"
[ -x "$target/release/arrowrs-oracle" ] || die "$target/release/arrowrs-oracle was not built"

echo "== interop: readers ignore the table index (tools/interop/index_readers.py)"
"$py" tools/interop/index_readers.py "$target/release/sbbf"

echo "== interop: tools/interop/interop.py"
exec "$py" tools/interop/interop.py "$@"
