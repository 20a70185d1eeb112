#!/usr/bin/env bash
# Benchmark: `sbbf add` (filters appended, data untouched) vs. rewriting the file with pyarrow
# and bloom_filter_options, on a pyarrow file written WITHOUT filters.
#
# usage: tools/bench/bench_add.sh [SIZE_MB]    (default 1024: a ~1 GiB file)
#   env: BENCH_DIR=/tmp/...  work directory (default: a new mktemp dir under /tmp, removed at the end)
#        KEEP=1              keep the work directory
# Prints a Markdown table (wall time, peak RSS, bytes written). Not part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
size_mb="${1:-1024}"
fpp=0.01

die() { echo "bench_add.sh: ERROR: $*" >&2; exit 3; }
[ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install time)"
py="$root/tools/.venv/bin/python"
"$py" -c 'import pyarrow, numpy' 2>/dev/null || bash tools/setup/setup-venv.sh || die "tools/setup/setup-venv.sh failed"
cargo build --release -q -p sbbf-cli || die "cargo build failed"
sbbf="$(bash tools/target-dir.sh)/release/sbbf"

dir="${BENCH_DIR:-$(mktemp -d /tmp/sbbf-bench-add.XXXXXX)}"
mkdir -p "$dir"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$dir"' EXIT
in="$dir/in.parquet"

echo "== generating ~${size_mb} MiB without filters: $in" >&2
"$py" tools/bench/bench_add.py gen "$in" "$size_mb"
in_size=$(stat -c %s "$in")
fs=$("$py" tools/bench/bench_add.py footer-start "$in")
desc=$("$py" tools/bench/bench_add.py info "$in")

# peak RSS (KiB) and wall seconds from GNU time -v
measure() { # name logfile cmd...
    local name=$1 log=$2; shift 2
    cat "$in" >/dev/null # same (warm) page cache for both contenders
    sync
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -v -o "$log" "$@" >"$log.out" 2>"$log.err" || { cat "$log.err" >&2; die "$name failed"; }
    t1=$(date +%s.%N)
    wall=$(echo "$t1 - $t0" | bc -l)
    rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$log")
    cpu=$(awk -F: '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u+s}' "$log")
}

echo "== sbbf add -c str -c i64 (fpp $fpp)" >&2
measure sbbf "$dir/sbbf.time" "$sbbf" add "$in" -c str -c i64 --fpp "$fpp" -o "$dir/sbbf.parquet" --format json
sbbf_wall=$wall sbbf_rss=$rss sbbf_cpu=$cpu
sbbf_size=$(stat -c %s "$dir/sbbf.parquet")
sbbf_written=$((sbbf_size - fs))
sbbf_filter_bytes=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["filter_bytes_after"])' "$dir/sbbf.time.out")
cmp -n "$fs" "$in" "$dir/sbbf.parquet" || die "sbbf output differs before the input's footer"

echo "== pyarrow rewrite with bloom_filter_options (str, i64; fpp $fpp)" >&2
measure pyarrow "$dir/pa.time" "$py" tools/bench/bench_add.py rewrite "$in" "$dir/pa.parquet" "$fpp"
pa_wall=$wall pa_rss=$rss pa_cpu=$cpu
pa_size=$(stat -c %s "$dir/pa.parquet")

# both outputs answer a present value with "maybe" everywhere it is stored
val=$("$py" -c 'import pyarrow.parquet as pq,sys; print(pq.ParquetFile(sys.argv[1]).read_row_group(0, columns=["str"])["str"][7])' "$in")
"$sbbf" probe "$dir/sbbf.parquet" str "$val" >/dev/null || die "sbbf output: present value not found"
"$sbbf" probe "$dir/pa.parquet" str "$val" >/dev/null || die "pyarrow output: present value not found"

mib() { echo "scale=1; $1 / 1048576" | bc -l; }
speedup=$(echo "scale=1; $pa_wall / $sbbf_wall" | bc -l)
cat <<MD
Input: $desc; $(mib "$in_size") MiB ($in_size bytes), footer at byte $fs; columns str (BYTE_ARRAY/STRING, random 12..32 chars, all distinct) and i64 (INT64, random).

| tool | wall time (s) | CPU user+sys (s) | peak RSS (MiB) | bytes written | output size (bytes) |
|---|---:|---:|---:|---:|---:|
| \`sbbf add -c str -c i64 --fpp $fpp -o OUT\` | $(printf %.2f "$sbbf_wall") | $sbbf_cpu | $(mib $((sbbf_rss * 1024))) | $sbbf_written (filters $sbbf_filter_bytes + footer) | $sbbf_size |
| pyarrow rewrite, \`bloom_filter_options\` str+i64 (ndv = rows per row group, fpp $fpp) | $(printf %.2f "$pa_wall") | $pa_cpu | $(mib $((pa_rss * 1024))) | $pa_size | $pa_size |

wall-time ratio pyarrow/sbbf: ${speedup}x; it wrote $(mib "$sbbf_written") MiB, the rewrite $(mib "$pa_size") MiB.
MD
