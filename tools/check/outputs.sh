#!/usr/bin/env bash
# Snapshot of what the front ends print, to compare a refactor's outputs before and after:
# runs ~130 commands of `sbbf` (probe, inspect, verify, index build/update/inspect/merge and
# probes answered by an index, query, add, resize, encrypted files with keys) and calls of the
# Python package (probe, row_groups, read_table, inspect, verify, index_*, add) over a copy
# of testdata/, and writes each one's stdout, stderr and exit status to
# OUTDIR/NNN-name.{out,err,rc}.
#
# usage: tools/check/outputs.sh SBBF_BIN OUTDIR [PYTHON_PKG_DIR]
#   PYTHON_PKG_DIR: a directory holding the package `sbbf` (its __init__.py and _sbbf.abi3.so)
#   imported instead of the installed one (e.g. a copy of the package taken before the
#   change). The interpreter is $PYTHON, default tools/.venv/bin/python.
#
#   tools/check/outputs.sh target/debug/sbbf /tmp/before /tmp/sbbf_py_before  # before
#   ... change the code, rebuild, reinstall the package ...
#   tools/check/outputs.sh target/debug/sbbf /tmp/after                       # after
#   diff -r /tmp/before /tmp/after && echo identical
#
# OUTDIR is emptied first. The commands run in OUTDIR/scratch (removed at the end unless
# KEEP_SCRATCH=1, so that `diff -r` compares outputs only), whose path is printed as `$DIR`.
# Normalised, as they differ between two runs of the same binary: the scratch path, timings
# (`"elapsed_ms"` in JSON, `in N ms` of --stats text) and the index's `"created_ms"`. Files
# are left older than 2 s (the index's racy window on change times) before every index
# build or update, so that the index answers for them. The binary needs the `query` feature.
set -u

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
fi
BIN=$(realpath "$1")
mkdir -p "$2"
OUT=$(realpath "$2")
PYPKG=${3:-}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TD=$REPO/testdata
PY=${PYTHON:-$REPO/tools/.venv/bin/python}
[ -x "$BIN" ] || { echo "no sbbf binary at $BIN" >&2; exit 2; }

find "$OUT" -mindepth 1 -delete
DIR=$OUT/scratch
mkdir -p "$DIR"

PYPATH_DIR=""
if [ -n "$PYPKG" ]; then
    PYPATH_DIR=$(mktemp -d)
    ln -s "$(realpath "$PYPKG")" "$PYPATH_DIR/sbbf"
    export PYTHONPATH=$PYPATH_DIR
fi
export PYTHONDONTWRITEBYTECODE=1
cleanup() {
    [ -n "$PYPATH_DIR" ] && rm -rf "$PYPATH_DIR"
    [ "${KEEP_SCRATCH:-0}" = 1 ] || rm -rf "$DIR"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------
# The scratch copy of the corpus.
mkdir -p "$DIR"/{top,conf,ch,enc,ints/_temporary,table/sub,table2,tpy,parts,new}
cp "$TD"/*.parquet "$DIR/top/"
cp "$TD"/conformance/*.parquet "$TD"/conformance/bloom_filter.bin "$DIR/conf/"
cp "$TD"/clickhouse/*.parquet "$DIR/ch/"
cp "$TD"/encrypted/*.encrypted "$DIR/enc/"
# A directory whose files differ in schema: pjava_types has no i32/i64, spark_types no u8.
for f in pa_ints arrowrs_ints duckdb_ints spark_types pjava_types; do
    cp "$TD/$f.parquet" "$DIR/ints/$f.parquet"
done
cp "$TD/pa_nested.parquet" "$DIR/ints/_temporary/skipped.parquet"
cp "$TD/pa_nested.parquet" "$DIR/ints/.hidden.parquet"
# Tables for the index (one for the CLI, one with -c/--fpp and parts, one for Python).
for t in table table2 tpy; do
    cp "$TD/pa_ints.parquet" "$DIR/$t/a.parquet"
    cp "$TD/arrowrs_ints.parquet" "$DIR/$t/b.parquet"
    cp "$TD/duckdb_ints.parquet" "$DIR/$t/c.parquet"
    cp "$TD/pjava_types.parquet" "$DIR/$t/e.parquet"
done
cp "$TD/spark_types.parquet" "$DIR/table/sub/d.parquet"
cp "$TD/spark_types.parquet" "$DIR/table2/d.parquet"
cp "$TD/spark_types.parquet" "$DIR/tpy/d.parquet"
printf 'a.parquet\nb.parquet\n' >"$DIR/parts/one.txt"
printf 'c.parquet\nd.parquet\ne.parquet\n' >"$DIR/parts/two.txt"
printf 'Hello\nnot there\n\n' >"$DIR/vals.txt"
cat >"$DIR/enc/pjava.json" <<'EOF'
{"footer": "0123456789012345", "columns": {"secret": "1234567890123450", "name": "1234567890123451"}}
EOF
cat >"$DIR/enc/pt.json" <<'EOF'
{"footer": "0123456789012345", "columns": {"double_field": "1234567890123450", "float_field": "1234567890123451"}}
EOF
cat >"$DIR/enc/arrowrs.json" <<'EOF'
{"footer": "0123456789012345", "columns": {"secret": "1234567890123450"}}
EOF
# Leave every file outside the index's racy window.
sleep 2.2

# ---------------------------------------------------------------------------------------
n=0
norm() {
    # The scratch path, then timings and the index's creation time.
    sed -i -E \
        -e "s#$DIR#\$DIR#g" \
        -e 's/"elapsed_ms":( ?)[-+0-9.eE]+/"elapsed_ms":\1T/g' \
        -e 's/"created_ms":( ?)[0-9]+/"created_ms":\1T/g' \
        -e 's/ in [0-9.]+ ?(ns|µs|us|ms|s)\b/ in T/g' \
        "$@"
}
run() { # NAME COMMAND... (in $DIR, stdin empty)
    n=$((n + 1))
    local id
    id=$(printf '%03d-%s' "$n" "$1")
    shift
    (cd "$DIR" && "$@") >"$OUT/$id.out" 2>"$OUT/$id.err" </dev/null
    echo $? >"$OUT/$id.rc"
    norm "$OUT/$id.out" "$OUT/$id.err"
}
s() { # NAME ARGS... : the sbbf binary
    local name=$1
    shift
    run "$name" "$BIN" "$@"
}
PRELUDE='
import datetime, decimal, json, math, sys, uuid, warnings
import sbbf

def _showwarning(message, category, filename, lineno, file=None, line=None):
    # Without the package file and line (they differ between the two packages).
    print(f"warning: {category.__name__}: {message}", file=sys.stderr)

warnings.showwarning = _showwarning

def show(x):
    print(json.dumps(x, default=repr, ensure_ascii=False))

try:
    exec(sys.argv[1])
except sbbf.Error as e:
    print(f"{type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(3)
except Exception as e:
    print(f"{type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(4)
'
py() { # NAME CODE : a Python call, results printed by show()
    run "py-$1" "$PY" -c "$PRELUDE" "$2"
}

echo "python package: $(cd "$DIR" && "$PY" -c 'import sbbf; print(sbbf.__file__)')"

# --- probe: one file ---------------------------------------------------------------------
s probe-file-present    probe top/pa_ints.parquet i32 272
s probe-file-absent     probe top/pa_ints.parquet i32 12345
s probe-file-several    probe top/pa_ints.parquet i64 -752296985104395475 279 42 -165
s probe-file-json       probe --format json top/pa_ints.parquet i64 -752296985104395475 279 42
s probe-file-rowgroups  probe conf/duckdb_five_rowgroups.parquet i32 1 -489 999999999 --row-groups
s probe-file-str        probe conf/duckdb_five_rowgroups.parquet str 'ü' 'filter-5562' 'nope'
s probe-file-escaped    probe conf/pt_data_index_bloom_encoding_with_length.parquet String '' ' Hello' $'a\tb' $'x\n' Hello
s probe-values-from     probe conf/pt_data_index_bloom_encoding_with_length.parquet String --values-from vals.txt --format json
s probe-date            probe top/pa_temporal.parquet date 1921-04-18 2024-01-31
s probe-ts-utc          probe top/pa_temporal.parquet ts_us_utc 2006-12-07T22:26:33.268461Z 2006-12-07T22:26:33.268461
s probe-decimal         probe top/pa_ints.parquet dec9_2 -6.41 12.34 --format json
s probe-uuid            probe top/pa_float_bytes.parquet uuid bd23c485-b1ca-444c-aae3-1cee27c66124 f81d4fae-7dec-11d0-a765-00a0c91e6bf6
s probe-float-sql       probe top/pa_float_bytes.parquet f64 84.125 0.0 -0.0 NaN
s probe-float-exact     probe --exact-bits --format json -- top/pa_float_bytes.parquet f64 -0.0 -inf NaN 84.125
s probe-neg-needs-dash  probe top/pa_float_bytes.parquet f64 -inf
s probe-raw-int         probe --raw-int top/pa_temporal.parquet date 0 -17788
s probe-hex             probe --hex top/pa_ints.parquet i32 10010000 00000000
s probe-string          probe --string top/pa_float_bytes.parquet str 0x00 '🦀56536'
s probe-nested          probe top/pa_nested.parquet s.b 'naïve+1458' 'zzz'
s probe-nested-json     probe top/spark_nested.parquet id 78 -8631809304159166928 5 --format json
s probe-clickhouse-bool probe ch/bool_filters.parquet odd true false
s probe-int96           probe top/spark_int96_legacy.parquet i32 1 2 3
s probe-nolength        probe top/arrowrs_temporal_nolength.parquet date 2000-01-01 --format json
s probe-stats-text      probe --stats top/pa_ints.parquet i32 272 12345
s probe-stats-json      probe --stats --format json top/pa_ints.parquet i32 272
s probe-bad-column      probe top/pa_nested.parquet b x
s probe-bad-value       probe top/pa_ints.parquet i32 abc
s probe-out-of-range    probe top/pa_ints.parquet i8 300 -7
s probe-not-parquet     probe conf/bloom_filter.bin x 1
s probe-no-file         probe no/such/file.parquet x 1
s probe-no-values       probe top/pa_ints.parquet i32
# --- probe: several files -----------------------------------------------------------------
s probe-dir             probe ints i32 272 -8 1576016277
s probe-dir-json        probe ints i32 272 12345 --format json
s probe-dir-absent      probe ints i64 99999999999
s probe-dir-u8          probe ints u8 255 --format json
s probe-dir-no-column   probe ints nope 1
s probe-dir-bad-value   probe ints i32 abc
s probe-dir-l           probe -l ints i32 272
s probe-dir-stats       probe --stats ints i32 272
s probe-dir-stats-json  probe --stats --format json ints i32 272
s probe-dir-conc1       probe --concurrency 1 --format json ints i64 279
s probe-glob            probe 'ints/*_ints.parquet' i32 272 --format json
s probe-glob-text       probe 'top/pa_*.parquet' i64 279
s probe-glob-none       probe 'ints/nothing*.parquet' i32 1
s probe-conf-dir        probe conf i64 -752296985104395475 42
s probe-top-dir-json    probe top str x --format json

# --- inspect ------------------------------------------------------------------------------
s inspect-file          inspect top/pa_ints.parquet
s inspect-file-json     inspect top/pa_ints.parquet --format json
s inspect-file-column   inspect conf/pyarrow_v2_zstd.parquet -c i64 -c str
s inspect-pjava         inspect top/pjava_types.parquet
s inspect-dir           inspect ints
s inspect-dir-json      inspect ints --format json
s inspect-dir-column    inspect ints -c i32
s inspect-conf          inspect conf
s inspect-top-json      inspect top --format json
s inspect-glob          inspect 'top/spark_*.parquet'
s inspect-ch            inspect ch/bool_filters.parquet --format json
s inspect-not-parquet   inspect conf/bloom_filter.bin
s inspect-no-file       inspect probe

# --- verify -------------------------------------------------------------------------------
s verify-file           verify conf/pyarrow_int_types.parquet -c i32 -c i64 --samples 200
s verify-file-json      verify conf/pyarrow_int_types.parquet --samples 100 --format json
s verify-ch-default     verify ch/bool_filters.parquet
s verify-nested         verify top/pa_nested.parquet -c s.b -c id --samples 100
s verify-dir-column     verify ints -c i32 --samples 50
s verify-dir-json       verify ints -c i64 --samples 50 --format json
s verify-glob           verify 'top/spark_*.parquet' --samples 20
s verify-bad-column     verify top/pa_ints.parquet -c nope

# --- encrypted files ----------------------------------------------------------------------
s enc-probe-id          probe enc/pjava_footer_gcm.parquet.encrypted id 5 1999 5000 --footer-key 0123456789012345
s enc-probe-secret      probe --hex enc/pjava_plain_ctr.parquet.encrypted secret 0600a3fbffffffff 0000000000000000 --keys enc/pjava.json --format json
s enc-probe-colkey      probe enc/pjava_footer_gcm.parquet.encrypted secret -3967 --footer-key 0123456789012345 --column-key secret=1234567890123450
s enc-probe-nokey       probe enc/pjava_footer_gcm.parquet.encrypted id 5
s enc-probe-double      probe enc/encrypt_columns_and_footer_bloom_filter.parquet.encrypted double_field 0.5 1.5 1234.5 --keys enc/pt.json
s enc-probe-glob        probe 'enc/pjava_*.encrypted' id 7 --keys enc/pjava.json --format json
s enc-inspect           inspect enc/pjava_footer_gcm.parquet.encrypted --keys enc/pjava.json
s enc-inspect-json      inspect enc/pjava_plain_gcm.parquet.encrypted --keys enc/pjava.json --format json
s enc-inspect-nokey     inspect enc/pjava_plain_ctr.parquet.encrypted
s enc-inspect-leak      inspect enc/arrowrs_footer_leak.parquet.encrypted --keys enc/arrowrs.json
s enc-inspect-leak-nokey inspect enc/arrowrs_plain_leak.parquet.encrypted --format json
s enc-inspect-aad       inspect enc/encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted --footer-key 0123456789012345 --aad-prefix tester
s enc-inspect-glob      inspect 'enc/*.encrypted' --keys enc/pjava.json --format json
s enc-verify            verify enc/pjava_plain_ctr.parquet.encrypted --keys enc/pjava.json --samples 100
s enc-verify-json       verify enc/encrypt_columns_and_footer_bloom_filter.parquet.encrypted --keys enc/pt.json --samples 100 --format json
s enc-verify-partial    verify enc/pjava_footer_gcm.parquet.encrypted --footer-key 0123456789012345 --samples 50

# --- add, resize --------------------------------------------------------------------------
s add-file              add top/pa_ints.parquet -c u8 -o new/added.parquet --format json
s add-refused           add top/pa_ints.parquet -c i8 -o new/refused.parquet
s add-probe             probe new/added.parquet u8 255 3
s resize-file           resize conf/spark_int_types.parquet -c i64 -c date --fpp 0.05 -o new/resized.parquet
s resize-refused        resize top/pjava_types.parquet --fpp 0.05 -o new/refused.parquet
s resize-inspect        inspect new/resized.parquet --format json

# --- index --------------------------------------------------------------------------------
s idx-probe-before      probe --stats table i64 -752296985104395475 99999999
s idx-build             index build table
s idx-inspect           index inspect table
s idx-inspect-json      index inspect table --format json
s idx-probe             probe table i64 -752296985104395475 274 99999999
s idx-probe-json        probe table i64 -752296985104395475 99999999 --format json
s idx-probe-stats       probe --stats table i64 99999999
s idx-probe-stats-json  probe --stats --format json table i64 -752296985104395475
s idx-probe-l           probe -l table i64 274
s idx-probe-noindex     probe --no-index --format json table i64 99999999
s idx-probe-u8          probe table u8 255 7
s idx-probe-file        probe table/a.parquet i64 99999999
cp "$TD/conformance/duckdb_float_strings.parquet" "$DIR/table/new.parquet"
s idx-probe-stale       probe --stats --format json table i64 -752296985104395475 99999999
s idx-inspect-stale     index inspect table
sleep 2.2
s idx-update            index update table --format json
s idx-inspect-updated   index inspect table --format json
s idx-probe-updated     probe --stats table i64 -752296985104395475 99999999
rm "$DIR/table/b.parquet"
s idx-probe-removed     probe --format json table i64 99999999
s idx-update-removed    index update table
s idx-build-c-fpp       index build table2 -c i64 -c i32 --fpp 0.05 --format json
s idx-probe-fpp         probe --stats table2 i64 -752296985104395475 99999999 12
s idx-build-bad-col     index build table2 -c nope
s idx-part-one          index build table2 --files-from parts/one.txt --part parts/one.sbbfpart --format json
s idx-part-two          index build table2 --files-from parts/two.txt --part parts/two.sbbfpart
s idx-merge             index merge table2 parts/one.sbbfpart parts/two.sbbfpart --format json
s idx-inspect-merged    index inspect table2
s idx-probe-merged      probe table2 i32 272 -8 123456 --format json
s idx-build-no-dir      index build no/such/dir
s idx-inspect-none      index inspect ints

# --- query --------------------------------------------------------------------------------
s query-eq              query top/pa_ints.parquet "SELECT i64, i32 FROM t WHERE i64 = -752296985104395475 ORDER BY i32"
s query-eq-stats        query top/pa_ints.parquet "SELECT i64, i32 FROM t WHERE i64 = -752296985104395475 ORDER BY i32" --format json --stats
s query-in-stats        query top/pa_ints.parquet "SELECT i32 FROM t WHERE i64 IN (42, -752296985104395475, 279) ORDER BY i32" --stats
s query-absent-stats    query conf/duckdb_five_rowgroups.parquet "SELECT count(*) AS n FROM t WHERE str = 'nope'" --stats
s query-no-sbbf         query conf/duckdb_five_rowgroups.parquet "SELECT count(*) AS n FROM t WHERE str = 'ü'" --stats --no-sbbf
s query-struct          query top/pa_nested.parquet "SELECT id FROM t WHERE t.s['b'] = 'naïve+1458' ORDER BY id" --stats
s query-date            query top/pa_temporal.parquet "SELECT count(*) AS n FROM t WHERE date = DATE '1921-04-18'" --format json --stats
s query-or              query top/pa_ints.parquet "SELECT count(*) AS n FROM t WHERE i32 = 272 OR i64 = 279" --stats
s query-dir             query ints "SELECT count(*) AS n FROM t WHERE i32 = 272" --stats
s query-glob            query 'ints/*_ints.parquet' "SELECT i32 FROM t WHERE i32 IN (272, -8) ORDER BY i32" --format json --stats
s query-join            query top/pa_ints.parquet --table d=top/arrowrs_ints.parquet "SELECT count(*) AS n FROM t JOIN d ON t.i64 = d.i64 WHERE d.i32 = 1576016277" --stats
s query-index           query table "SELECT i64 FROM t WHERE i64 = -752296985104395475" --stats
s query-index-in        query table "SELECT i64 FROM t WHERE i64 IN (99999999, 274, -165) ORDER BY i64" --format json --stats
s query-noindex         query table "SELECT i64 FROM t WHERE i64 = -752296985104395475" --stats --no-index
s query-bad-column      query top/pa_ints.parquet "SELECT no_such_column FROM t"
s query-no-file         query /nonexistent/dir/x.parquet "SELECT 1"

# --- Python -------------------------------------------------------------------------------
py probe-file           'show(sbbf.probe("top/pa_ints.parquet", "i32", [272, "12345", -8]))'
py probe-one-value      'show(sbbf.probe("top/pa_ints.parquet", "i64", "-752296985104395475"))'
py probe-dir            'show(sbbf.probe("ints", "i32", [272, 1576016277]))'
py probe-glob           'show(sbbf.probe("ints/*_ints.parquet", "i64", [279]))'
py probe-float          'show(sbbf.probe("top/pa_float_bytes.parquet", "f64", [0.0, "-0.0", float("nan"), 84.125]))'
py probe-float-exact    'show(sbbf.probe("top/pa_float_bytes.parquet", "f64", [float("nan"), -0.0], exact_bits=True))'
py probe-typed          'show(sbbf.probe("top/pa_temporal.parquet", "date", [datetime.date(1921, 4, 18), "2024-01-31"])); show(sbbf.probe("top/pa_ints.parquet", "dec9_2", [decimal.Decimal("-6.41")])); show(sbbf.probe("top/pa_float_bytes.parquet", "uuid", [uuid.UUID("bd23c485-b1ca-444c-aae3-1cee27c66124")]))'
py probe-out-of-range   'show(sbbf.probe("top/pa_ints.parquet", "i8", [300, 1.5, 2**200]))'
py probe-encrypted      'show(sbbf.probe("enc/pjava_footer_gcm.parquet.encrypted", "id", [5]))'
py probe-bad-column     'show(sbbf.probe("top/pa_nested.parquet", "b", ["x"]))'
py probe-dir-no-column  'show(sbbf.probe("ints", "nope", ["1"]))'
py probe-no-file        'show(sbbf.probe("missing.parquet", "x", ["1"]))'
py probe-none           'show(sbbf.probe("top/pa_ints.parquet", "i64", [None]))'
py probe-index          'show(sbbf.probe("table", "i64", [-752296985104395475, 99999999])); show(sbbf.probe("table", "i64", [99999999], index=False))'
py row-groups-file      'show(sbbf.row_groups("top/pa_ints.parquet", [("i64", "=", -752296985104395475)])); show(sbbf.row_groups("top/pa_ints.parquet", [[("i32", "=", 272)], [("i64", "in", [279, 42])]])); show(sbbf.row_groups("top/pa_ints.parquet", [("i64", "=", 279), ("i32", ">", 0)]))'
py row-groups-dir       'show(sbbf.row_groups("ints", [("i32", "=", 272)])); show(sbbf.row_groups("ints/*_ints.parquet", [("i64", "in", [279, -8])]))'
py row-groups-index     'show(sbbf.row_groups("table", [("i64", "=", -752296985104395475)])); show(sbbf.row_groups("table", [("i64", "=", 99999999)], index=False))'
py row-groups-bad       'show(sbbf.row_groups("top/pa_ints.parquet", [("I64", "=", 1)]))'
py read-table-file      't = sbbf.read_table("top/pa_ints.parquet", filters=[("i64", "=", -752296985104395475)], columns=["i32", "i64"]); print(t.schema); show(t.to_pylist())'
py read-table-dir       't = sbbf.read_table("table", filters=[("i64", "in", [-752296985104395475, 274])], columns=["i64"]); show(sorted(t.column("i64").to_pylist()))'
py inspect-file         'show(sbbf.inspect("top/pa_ints.parquet"))'
py inspect-columns      'show(sbbf.inspect("conf/pyarrow_v2_zstd.parquet", ["i64", "str"]))'
py inspect-dir          'show(sbbf.inspect("ints", "i32"))'
py inspect-encrypted    'show(sbbf.inspect("enc/pjava_footer_gcm.parquet.encrypted", keys={"footer": "0123456789012345", "columns": {"secret": "1234567890123450", "name": "1234567890123451"}}))'
py verify-file          'show(sbbf.verify("conf/pyarrow_int_types.parquet", ["i32"], samples=100))'
py verify-dir           'show(sbbf.verify("ints", "i64", samples=30))'
py verify-encrypted     'show(sbbf.verify("enc/pjava_plain_ctr.parquet.encrypted", samples=50, keys={"footer": "0123456789012345", "columns": {"secret": "1234567890123450"}}))'
py index-build          'show(sbbf.index_build("tpy")); show(sbbf.index_inspect("tpy"))'
py index-probe          'show(sbbf.probe("tpy", "i64", [-752296985104395475, 99999999])); show(sbbf.row_groups("tpy", [("i64", "=", 99999999)]))'
cp "$TD/conformance/duckdb_float_strings.parquet" "$DIR/tpy/new.parquet"
sleep 2.2
py index-update         'show(sbbf.index_update("tpy")); show(sbbf.index_inspect("tpy")); show(sbbf.probe("tpy", "i64", [-752296985104395475, 99999999]))'
py add                  'show(sbbf.add("top/pa_ints.parquet", ["u8"], output="new/py_added.parquet")); show(sbbf.probe("new/py_added.parquet", "u8", [255, 3]))'
py sbbf-filter          'f = sbbf.Sbbf.with_ndv_fpp(100, 0.01); f.insert_many(list(range(50))); print(repr(f), f.num_bytes, f.contains(3), f.contains(1000), f.contains_many([1, 2, 500]).tolist())'

echo "$n commands; outputs in $OUT"
