#!/usr/bin/env bash
# Regenerate the project's own conformance corpus:
#   testdata/*.parquet            (pyarrow, arrow-rs, DuckDB, Spark/parquet-java writers)
#   fixtures/expected/*.jsonl.gz  (answers of arrow-rs, parquet-java and DuckDB; never our code)
#   fixtures/expected/manifest.json, testdata/files.json
# Deterministic (fixed seeds); needs python3, Java 17+, cargo, and access to the Python and Rust package registries once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

"$root/tools/setup/setup-venv.sh"
cargo build --release --manifest-path tools/interop/arrowrs-oracle/Cargo.toml --target-dir target
py="$root/tools/.venv/bin/python"

rm -f testdata/*.parquet testdata/files.json fixtures/expected/*.jsonl.gz fixtures/expected/manifest.json
cd "$here"
"$py" writers.py pyarrow arrowrs duckdb spark pjava strip
"$py" expected.py
"$py" expected.py --check
"$py" verify_bits.py
du -ch "$root"/testdata/*.parquet | tail -1
