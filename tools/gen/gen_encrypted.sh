#!/usr/bin/env bash
# testdata/encrypted: parquet-java (pyspark's jars, 1.17.0) writes encrypted files with Bloom
# filters (tools/gen/java/PjCrypto.java), and answers probes of every encrypted file's filters
# with its own decrypting reader (testdata/encrypted/answers/*.tsv). The parquet-testing files
# are copied, not generated (testdata/encrypted/README.md).
#
# usage: tools/gen/gen_encrypted.sh        (from anywhere; needs tools/.venv with pyspark, Java 17+)
#        tools/gen/gen_encrypted.sh added  (only the last section: value counts and `sbbf add`
#                                           with keys; leaves the other files as they are)
set -euo pipefail
only="${1:-all}"
root=$(cd "$(dirname "$0")/../.." && pwd)
py="$root/tools/.venv/bin/python"
# Cargo's target directory (CARGO_TARGET_DIR when set, else target/).
target=$(bash "$root/tools/target-dir.sh")
[ -x "$py" ] || { echo "no $py: run tools/setup/setup-venv.sh" >&2; exit 1; }
jars=$("$py" -c 'import pyspark, pathlib; print(pathlib.Path(pyspark.__file__).parent / "jars")')
build="${SBBF_GEN_BUILD:-/tmp/sbbf-gen-build}/crypto"
mkdir -p "$build"
javac -d "$build" -cp "$jars/*" "$root/tools/gen/java/PjCrypto.java"
run() { java -cp "$jars/*:$build" PjCrypto "$@" 2> >(grep -v -e WARN -e SLF4J -e '^\s*$' >&2 || true); }
out="$root/testdata/encrypted"
mkdir -p "$out/answers"
pjava_keys=(0123456789012345 secret=1234567890123450 name=1234567890123451)
testing_keys=(0123456789012345 double_field=1234567890123450 float_field=1234567890123451)
# The CLI without DataFusion (`query`): add and resize are all this script needs.
sbbf_build() {
  cargo build -p sbbf-cli --no-default-features --features object_store --manifest-path "$root/Cargo.toml"
}
if [ "$only" = all ]; then
for footer in footer plain; do
  for algo in gcm ctr; do
    f="$out/pjava_${footer}_${algo}.parquet.encrypted"
    run write "$f" "$footer" "$algo"
    run answers "$f" 0123456789012345 secret=1234567890123450 name=1234567890123451 \
      > "$out/answers/pjava_${footer}_${algo}.tsv"
  done
done
run answers "$out/encrypt_columns_and_footer_bloom_filter.parquet.encrypted" 0123456789012345 \
  double_field=1234567890123450 float_field=1234567890123451 \
  > "$out/answers/encrypt_columns_and_footer_bloom_filter.tsv"
wc -l "$out"/answers/*.tsv

# arrow-rs 60.1 (tools/interop/arrowrs-oracle, `encryption` feature): `secret` encrypted with a
# column key, filters on every column; arrow-rs writes the filters of encrypted columns in
# plaintext (the leak `sbbf inspect` reports). Input table made by pyarrow.
oracle="$target/release/arrowrs-oracle"
cargo build --release --manifest-path "$root/tools/interop/arrowrs-oracle/Cargo.toml" --target-dir "$target"
"$py" - "$build/arrowrs_in.parquet" <<'PY'
import sys, pyarrow as pa, pyarrow.parquet as pq
ids = list(range(4000))
pq.write_table(pa.table({
    "id": pa.array(ids, pa.int64()),
    "secret": pa.array([(i * 7919 + 13) % 1000003 for i in ids], pa.int64()),
    "name": pa.array([f"user-{(i * 31) % 5003}" for i in ids], pa.string()),
}), sys.argv[1])
PY
for footer in footer plain; do
  extra=(); [ "$footer" = plain ] && extra=(--plaintext-footer)
  "$oracle" write "$build/arrowrs_in.parquet" "$out/arrowrs_${footer}_leak.parquet.encrypted" --rg-rows 1000 \
    --bloom-all --dictionary off --position after-row-group --created-by "parquet-rs version 60.1.0" \
    --footer-key 0123456789012345 --column-key secret=1234567890123450 "${extra[@]}"
done

# Our `sbbf add --replace` with keys seals the arrow-rs files' plaintext filters; parquet-java
# decrypts the results and answers probes of the sealed filters (the interop round trip).
sbbf_build
for footer in footer plain; do
  sealed="$out/sealed_arrowrs_${footer}.parquet.encrypted"
  "$target/debug/sbbf" add "$out/arrowrs_${footer}_leak.parquet.encrypted" -c secret --replace \
    --footer-key 0123456789012345 --column-key secret=1234567890123450 -o "$sealed" --force
  run answers "$sealed" 0123456789012345 secret=1234567890123450 \
    > "$out/answers/sealed_arrowrs_${footer}.tsv"
done
wc -l "$out"/answers/*.tsv

# Our `sbbf resize` with keys folds every filter of two parquet-java files (sealed again with
# their keys); parquet-java decrypts the results and answers probes of the folded filters.
for stem in pjava_footer_gcm pjava_plain_ctr; do
  resized="$out/resized_${stem}.parquet.encrypted"
  "$target/debug/sbbf" resize "$out/${stem}.parquet.encrypted" --fpp 0.05 \
    --footer-key 0123456789012345 --column-key secret=1234567890123450 \
    --column-key name=1234567890123451 -o "$resized" --force
  run answers "$resized" 0123456789012345 secret=1234567890123450 name=1234567890123451 \
    > "$out/answers/resized_${stem}.tsv"
done
fi

# Value counts per chunk (non-null values, distinct PLAIN encodings), by parquet-java's
# decrypting record reader: what `sbbf verify` with keys must count
# (answers/<stem>.counts.tsv).
run write "$out/pjava_plain_ctr_nobloom.parquet.encrypted" plain ctr nobloom
for stem in pjava_footer_gcm pjava_footer_ctr pjava_plain_gcm pjava_plain_ctr pjava_plain_ctr_nobloom; do
  run counts "$out/$stem.parquet.encrypted" "${pjava_keys[@]}" > "$out/answers/$stem.counts.tsv"
done
for stem in encrypt_columns_and_footer_bloom_filter encrypt_columns_and_footer \
    encrypt_columns_and_footer_ctr encrypt_columns_plaintext_footer; do
  run counts "$out/$stem.parquet.encrypted" "${testing_keys[@]}" > "$out/answers/$stem.counts.tsv"
done

# Our `sbbf add` with keys builds new filters in encrypted files without any (parquet-testing's,
# written by parquet-cpp: encrypted footer with AES_GCM_V1 and AES_GCM_CTR_V1, plaintext footer
# with AES_GCM_V1; parquet-java's plaintext footer with AES_GCM_CTR_V1): encrypted columns
# (column keys, footer key) and plaintext ones. parquet-java decrypts the results, reads our
# filters and answers probes (answers/added_<stem>.tsv), and counts the values again.
sbbf_build
sbbf="$target/debug/sbbf"
for stem in encrypt_columns_and_footer encrypt_columns_and_footer_ctr encrypt_columns_plaintext_footer; do
  "$sbbf" add "$out/$stem.parquet.encrypted" -c double_field -c float_field -c int32_field -c ba_field \
    --footer-key 0123456789012345 --column-key double_field=1234567890123450 \
    --column-key float_field=1234567890123451 -o "$out/added_$stem.parquet.encrypted" --force
  run answers "$out/added_$stem.parquet.encrypted" "${testing_keys[@]}" > "$out/answers/added_$stem.tsv"
  run counts "$out/added_$stem.parquet.encrypted" "${testing_keys[@]}" > "$out/answers/added_$stem.counts.tsv"
done
"$sbbf" add "$out/pjava_plain_ctr_nobloom.parquet.encrypted" -c secret -c name -c f \
  --footer-key 0123456789012345 --column-key secret=1234567890123450 --column-key name=1234567890123451 \
  -o "$out/added_pjava_plain_ctr_nobloom.parquet.encrypted" --force
run answers "$out/added_pjava_plain_ctr_nobloom.parquet.encrypted" "${pjava_keys[@]}" \
  > "$out/answers/added_pjava_plain_ctr_nobloom.tsv"
run counts "$out/added_pjava_plain_ctr_nobloom.parquet.encrypted" "${pjava_keys[@]}" \
  > "$out/answers/added_pjava_plain_ctr_nobloom.counts.tsv"
wc -l "$out"/answers/*.tsv
