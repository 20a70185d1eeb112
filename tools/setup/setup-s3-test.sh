#!/usr/bin/env bash
# Install moto's S3-compatible server into tools/.venv for the object-store tests
# (crates/sbbf-parquet/tests/parquet/s3.rs, crates/sbbf-cli/tests/cli/s3.rs start
# tools/.venv/bin/moto_server on a loopback port themselves).
# Idempotent and fast when the pinned version is already there; only moto is installed
# (tools/setup/setup-venv.sh installs the heavier writers/oracles into the same venv).
set -euo pipefail

MOTO_VERSION=5.2.5

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$(dirname "$here")/.venv"
python="${PYTHON:-python3}"

die() { echo "setup-s3-test.sh: ERROR: $*" >&2; exit 1; }

installed() {
    [ -x "$venv/bin/moto_server" ] && "$venv/bin/python" - <<PY 2>/dev/null
import importlib.metadata as m, sys
sys.exit(0 if m.version("moto") == "$MOTO_VERSION" else 1)
PY
}

if installed; then
    echo "setup-s3-test.sh: ok: moto $MOTO_VERSION already in $venv"
    exit 0
fi

command -v "$python" >/dev/null || die "$python not found"
if [ ! -x "$venv/bin/python" ]; then
    echo "setup-s3-test.sh: creating $venv"
    "$python" -m venv "$venv" || die "python -m venv failed (apt-get install python3-venv?)"
fi
"$venv/bin/python" -m pip install --disable-pip-version-check -q "moto[server]==$MOTO_VERSION" \
    || die "pip install moto[server]==$MOTO_VERSION failed"
installed || die "moto_server missing or wrong version after install"
echo "setup-s3-test.sh: ok: installed moto $MOTO_VERSION into $venv"
