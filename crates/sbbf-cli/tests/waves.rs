//! Round trips on an object store: `sbbf probe --stats` on S3 (moto) counts requests and
//! waves (sequential round trips). On a 64-row-group file with `bloom_filter_length`, one
//! value and 1,000 values take at most 3 waves (footer; headers and blocks together; a retry
//! only where a guess was wrong); without the length, at most 4. Counts, never times.
//!
//! Needs `tools/.venv/bin/moto_server` (`bash tools/setup/setup-s3-test.sh`); fails without it.

#![cfg(feature = "object_store")]

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use sbbf_testkit::moto::Moto;
use serde_json::Value as Json;
use std::process::Command;
use std::sync::Arc;

const ROW_GROUPS: i64 = 64;
const ROWS: i64 = 500;

/// 64 row groups of 500 distinct int64 values each (`v = rg * 1_000_000 + i`), filters on `v`.
fn file_64_row_groups() -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROWS as usize))
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_max_ndv(ROWS as u64)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).unwrap();
    for rg in 0..ROW_GROUPS {
        let v = Int64Array::from_iter_values((0..ROWS).map(|i| rg * 1_000_000 + i));
        w.write(&RecordBatch::try_new(schema.clone(), vec![Arc::new(v)]).unwrap())
            .unwrap();
    }
    w.close().unwrap();
    out
}

fn probe_stats(moto: &Moto, url: &str, values: &[String]) -> Json {
    let line = probe_column(moto, url, "v", values);
    // Every stored value is found where it is stored: the counts are about a right answer.
    for rg in line["row_groups"].as_array().unwrap() {
        let i = rg["row_group"].as_i64().unwrap();
        for v in rg["values"].as_array().unwrap() {
            let value: i64 = v["value"].as_str().unwrap().parse().unwrap();
            if value / 1_000_000 == i && value % 1_000_000 < ROWS {
                assert_eq!(v["result"], "maybe", "{value} in row group {i}");
            }
        }
    }
    line["stats"].clone()
}

/// The JSON line of `sbbf probe --stats` (stats under `stats`).
fn probe_column(moto: &Moto, url: &str, column: &str, values: &[String]) -> Json {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sbbf"));
    c.args(["probe", "--stats", "--format", "json", url, column]);
    c.args(values);
    for (k, v) in moto.env() {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn one_value_or_a_thousand_in_three_waves() {
    let moto = Moto::start();
    moto.create_bucket("waves");
    let file = file_64_row_groups();
    moto.put("waves", "f.parquet", &file);
    let url = "s3://waves/f.parquet";

    let one = probe_stats(&moto, url, &["17000042".to_string()]);
    assert!(one["waves"].as_u64().unwrap() <= 3, "1 value: {one}");
    eprintln!("1 value: {one}");
    // The footer, then (at most) one read per row group's header and block.
    assert!(
        one["requests"].as_u64().unwrap() <= 2 + 2 * 64,
        "1 value: {one}"
    );

    let many: Vec<String> = (0..1000)
        .map(|i| ((i % 64) * 1_000_000 + i * 7 % 900).to_string())
        .collect();
    let thousand = probe_stats(&moto, url, &many);
    assert!(
        thousand["waves"].as_u64().unwrap() <= 3,
        "1,000 values: {thousand}"
    );
    eprintln!("1,000 values: {thousand}");
}

#[test]
fn without_bloom_filter_length_four_waves() {
    // parquet-java's file with `bloom_filter_length` taken out of the footer: the header must
    // be read before the block it announces.
    let moto = Moto::start();
    moto.create_bucket("waves");
    let path = sbbf_testkit::testdata().join("spark_int96_legacy_nolength.parquet");
    moto.put("waves", "n.parquet", &std::fs::read(path).unwrap());
    let stats =
        probe_column(&moto, "s3://waves/n.parquet", "i32", &["7".to_string()])["stats"].clone();
    assert!(stats["waves"].as_u64().unwrap() <= 4, "{stats}");
    eprintln!("no length: {stats}");
}
