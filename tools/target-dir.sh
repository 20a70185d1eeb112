#!/usr/bin/env bash
# Prints cargo's target directory for this workspace, as cargo resolves it (CARGO_TARGET_DIR,
# a config's build.target-dir, else ./target): scripts find the binaries cargo built there
# instead of assuming ./target.
#   target=$(bash tools/target-dir.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
