#!/usr/bin/env bash
# Builds the Python package sbbf (crates/sbbf-python) as one abi3 wheel with maturin and
# installs it into tools/.venv (tools/setup/setup-venv.sh makes the venv, maturin included).
#   PROFILE=dev (default; shares target/debug with cargo test) or PROFILE=release (benchmarks)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/tools/.venv"
profile="${PROFILE:-dev}"
die() { echo "install.sh: ERROR: $*" >&2; exit 1; }
[ -x "$venv/bin/maturin" ] || die "maturin is not in $venv (run tools/setup/setup-venv.sh)"
out="$root/target/wheels-$profile"
rm -rf "$out"
"$venv/bin/maturin" build --profile "$profile" -m "$root/crates/sbbf-python/Cargo.toml" \
    --interpreter "$venv/bin/python" -o "$out" --quiet || die "maturin build failed"
wheel=$(ls "$out"/sbbf-*.whl) || die "no wheel in $out"
"$venv/bin/python" -m pip install --disable-pip-version-check -q --force-reinstall --no-deps "$wheel" \
    || die "pip install $wheel failed"
echo "install.sh: installed $(basename "$wheel") ($profile)"
