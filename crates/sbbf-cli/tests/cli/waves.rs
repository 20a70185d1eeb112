//! Round trips on an object store and a web server: `sbbf probe --stats` counts requests and
//! waves (sequential round trips). On a 64-row-group file of several MB (filters far apart)
//! with `bloom_filter_length`, 1, 64 and 1,000 values take at most 3 waves (footer; headers
//! and blocks together; a retry only where a guess was wrong) over S3 (moto) and plain HTTP
//! (a range server); without the length, at most 4. A prefix of many files costs two requests
//! per file and one listing. Counts, never times.
//!
//! Needs `tools/.venv/bin/moto_server` (`bash tools/setup/setup-s3-test.sh`); fails without it.

use arrow::array::{BinaryArray, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use sbbf_testkit::http::RangeServer;
use sbbf_testkit::moto::Moto;
use serde_json::Value as Json;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::Arc;

const ROW_GROUPS: i64 = 64;
const ROWS: i64 = 5000;

/// 64 row groups of 5,000 distinct int64 values each (`v = rg * 1_000_000 + i`) beside a
/// 24-byte column that does not compress, filters on `v` only: about 11 MB, a filter every
/// 170 KB, so that no read reaches from one filter to the next.
fn file_64_row_groups() -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("v", DataType::Int64, false),
        Field::new("pad", DataType::Binary, false),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(ROWS as usize))
        .set_dictionary_enabled(false)
        .set_bloom_filter_enabled(false)
        .set_column_bloom_filter_enabled("v".into(), true)
        .set_column_bloom_filter_max_ndv("v".into(), ROWS as u64)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for rg in 0..ROW_GROUPS {
        let v = Int64Array::from_iter_values((0..ROWS).map(|i| rg * 1_000_000 + i));
        let pad: Vec<Vec<u8>> = (0..ROWS)
            .map(|_| {
                (0..3)
                    .flat_map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x.to_le_bytes()
                    })
                    .collect()
            })
            .collect();
        let pad = BinaryArray::from_iter_values(pad.iter());
        w.write(&RecordBatch::try_new(schema.clone(), vec![Arc::new(v), Arc::new(pad)]).unwrap())
            .unwrap();
    }
    w.close().unwrap();
    assert!(out.len() > 8 << 20, "{} bytes", out.len());
    out
}

/// `n` values spread over the row groups, every one stored.
fn values(n: i64) -> Vec<String> {
    (0..n)
        .map(|i| ((i % ROW_GROUPS) * 1_000_000 + i * 7 % ROWS).to_string())
        .collect()
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
    let lines = probe_lines(moto, url, column, values, &[]);
    assert_eq!(lines.len(), 1);
    lines.into_iter().next().unwrap()
}

/// The JSON lines of `sbbf probe --stats --format json URL COLUMN VALUES... EXTRA...`.
fn probe_lines(
    moto: &Moto,
    url: &str,
    column: &str,
    values: &[String],
    extra: &[&str],
) -> Vec<Json> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sbbf"));
    c.args(["probe", "--stats", "--format", "json"]);
    c.args(extra);
    c.args([url, column]);
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
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// 1, 64 and 1,000 values: the footer in one suffix read, then one read per row group
/// (header and the blocks, or the whole bitset, in one range) all in one wave.
fn check_waves(what: &str, stats: &Json, n: usize) {
    eprintln!("{what}, {n} value(s): {stats}");
    assert!(
        stats["waves"].as_u64().unwrap() <= 3,
        "{what}, {n} values: {stats}"
    );
    assert!(
        stats["requests"].as_u64().unwrap() <= 1 + ROW_GROUPS as u64,
        "{what}, {n} values: {stats}"
    );
}

#[test]
fn s3_one_value_or_a_thousand_in_three_waves() {
    let moto = Moto::start();
    moto.create_bucket("waves");
    moto.put("waves", "f.parquet", &file_64_row_groups());
    for n in [1, 64, 1000] {
        let stats = probe_stats(&moto, "s3://waves/f.parquet", &values(n));
        check_waves("S3", &stats, n as usize);
    }
}

#[test]
fn http_one_value_or_a_thousand_in_three_waves() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.parquet"), file_64_row_groups()).unwrap();
    let server = RangeServer::serve(dir.path());
    let moto_less = NoEnv;
    for n in [1, 64, 1000] {
        server.counts.reset();
        let line = moto_less.probe(&server.url("f.parquet"), &values(n as i64));
        let stats = &line["stats"];
        check_waves("HTTP", stats, n);
        // What the server saw is what the library counted: no HEAD, one GET per request.
        assert_eq!(
            server.counts.heads.load(Ordering::SeqCst),
            0,
            "{}",
            server.counts.report()
        );
        assert_eq!(
            server.counts.gets.load(Ordering::SeqCst),
            stats["requests"].as_u64().unwrap(),
            "{}",
            server.counts.report()
        );
        assert_eq!(
            server.counts.bytes.load(Ordering::SeqCst),
            stats["bytes"].as_u64().unwrap()
        );
    }
}

/// The CLI with no store settings (a plain web server needs none).
struct NoEnv;

impl NoEnv {
    fn probe(&self, url: &str, values: &[String]) -> Json {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sbbf"));
        c.args(["probe", "--stats", "--format", "json", url, "v"]);
        c.args(values);
        let o = c.output().unwrap();
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    }
}

/// A prefix of many small files: one listing, then one request per file (its last bytes:
/// the footer and the filters before it), one wave each; results in path order whatever the
/// concurrency.
#[test]
fn s3_prefix_one_request_per_file_in_order() {
    let moto = Moto::start();
    moto.create_bucket("many");
    let files = 120;
    for i in 0..files {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let props = WriterProperties::builder()
            .set_bloom_filter_enabled(true)
            .build();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).unwrap();
        let v = Int64Array::from_iter_values((0..10).map(|j| i * 100 + j));
        w.write(&RecordBatch::try_new(schema, vec![Arc::new(v)]).unwrap())
            .unwrap();
        w.close().unwrap();
        moto.put("many", &format!("p/f{i:04}.parquet"), &out);
    }
    let mut previous: Option<Vec<String>> = None;
    for concurrency in ["1", "7", "64"] {
        let lines = probe_lines(
            &moto,
            "s3://many/p/",
            "v",
            &["4205".to_string()],
            &["--concurrency", concurrency],
        );
        assert_eq!(lines.len(), files as usize);
        let names: Vec<String> = lines
            .iter()
            .map(|l| l["file"].as_str().unwrap().to_string())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "results in path order");
        for (i, l) in lines.iter().enumerate() {
            assert_eq!(l["stats"]["requests"], 1, "{l}");
            assert_eq!(l["stats"]["waves"], 1, "{l}");
            let hit = l["row_groups"][0]["values"][0]["result"].as_str().unwrap();
            // File 42 holds 4205; every other file's filter says absent or (rarely) maybe.
            if i == 42 {
                assert_eq!(hit, "maybe");
            }
        }
        if let Some(p) = &previous {
            assert_eq!(p, &names);
        }
        previous = Some(names);
    }
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
