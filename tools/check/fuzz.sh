#!/bin/sh
# Runs every cargo-fuzz target for a set time (default 60 s each) and prints the executions
# reached. Needs cargo-fuzz (`cargo install cargo-fuzz`); on a stable toolchain the nightly
# flags cargo-fuzz uses are unlocked with RUSTC_BOOTSTRAP=1.
#
# usage: tools/check/fuzz.sh [seconds] [target...]
#   targets: header bitset value_text parquet_file (default: all)
#
# New inputs go to fuzz/work/corpus/<target>/ (not committed); the committed seeds in
# fuzz/corpus/<target>/ are read, never written. A crash leaves its input in
# fuzz/artifacts/<target>/ and makes this script exit non-zero; reproduce it with
#   cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run <target> artifacts/<target>/<file>
set -eu
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-header bitset value_text parquet_file}
cd "$(dirname "$0")/../../fuzz"
export RUSTC_BOOTSTRAP=1
cargo fuzz build
# Run the built binaries directly: `cargo fuzz run` would rebuild whenever a source changed.
triple=$(rustc -vV | sed -n 's/^host: //p')
# cargo-fuzz builds into fuzz/target unless CARGO_TARGET_DIR says otherwise.
bin="${CARGO_TARGET_DIR:-target}/$triple/release"
status=0
summary=""
for t in $targets; do
    mkdir -p "work/corpus/$t" "work/logs" "artifacts/$t"
    log="work/logs/$t.log"
    echo "== $t: ${secs}s"
    if "$bin/$t" "work/corpus/$t" "corpus/$t" -artifact_prefix="artifacts/$t/" \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        >"$log" 2>&1; then
        result=ok
    else
        result="FAILED (see fuzz/$log and fuzz/artifacts/$t/)"
        status=1
    fi
    runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1 | grep -o '[0-9]*' || true)
    [ -n "$runs" ] || runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
    line="$t: ${runs:-?} execs in ${secs}s, ${cov:-cov: ?}, $result"
    echo "$line"
    summary="$summary$line
"
done
echo
printf '%s' "$summary"
exit $status
