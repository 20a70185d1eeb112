#!/usr/bin/env bash
# The Python package sbbf (crates/sbbf-python), as .ci/run checks it: builds the wheel (dev
# profile, sharing target/ with cargo test), installs it into tools/.venv, runs its pytest
# tests (against the debug sbbf in cargo's target directory) and the Spark examples in local mode. Loud on anything
# missing; nothing is skipped.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
py=tools/.venv/bin/python
die() { echo "tools/python/test.sh: ERROR: $*" >&2; exit 3; }

if ! "$py" -c 'import pyarrow, numpy, pyspark, pytest' 2>/dev/null || [ ! -x tools/.venv/bin/maturin ]; then
    bash tools/setup/setup-venv.sh || die "tools/setup/setup-venv.sh failed"
fi
command -v java >/dev/null || die "java not found: the Spark examples need a Java 17+ JDK"

t0=$SECONDS
echo "== python: the sbbf command the tests compare with (cargo test --no-run: after .ci/run's cargo test, nothing to build; \`cargo build -p sbbf-cli\` would unify features differently and build DataFusion again)"
cargo test --no-run --features sbbf-cli/query
# Where cargo put it: CARGO_TARGET_DIR when set, else ./target.
sbbf="$(bash tools/target-dir.sh)/debug/sbbf" || die "cargo metadata failed"
[ -x "$sbbf" ] || die "$sbbf is missing (the cargo test --no-run above builds it)"
echo "== python: wheel (maturin, dev profile) into tools/.venv"
PROFILE=dev bash tools/python/install.sh
t1=$SECONDS
echo "== python: pytest crates/sbbf-python/tests"
# Run from the tests' folder against the installed wheel (not the source tree).
(cd crates/sbbf-python/tests && SBBF_CLI="$sbbf" "$root/$py" -m pytest -q -p no:cacheprovider .)
t2=$SECONDS
echo "== python: examples/spark_add_filters.py (Spark local mode)"
"$py" examples/spark_add_filters.py
echo "== python: examples/spark_prune_files.py (Spark local mode)"
"$py" examples/spark_prune_files.py
echo "== python: examples/spark_add_filters_table.py (Spark local mode: a Delta table's files given filters by workers, committed once)"
SBBF_BIN="$sbbf" "$py" examples/spark_add_filters_table.py
echo "== python: examples/spark_build_index.py (Spark local mode: the index built in parts, merged, probed)"
[ -x "$sbbf" ] || die "$sbbf is missing (the cargo test --no-run above builds it)"
SBBF_BIN="$sbbf" "$py" examples/spark_build_index.py
t3=$SECONDS
echo "python: build+install $((t1 - t0)) s, pytest $((t2 - t1)) s, Spark examples $((t3 - t2)) s, total $((t3 - t0)) s"
