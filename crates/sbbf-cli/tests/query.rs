//! `sbbf query PATH SQL`: rows as DataFusion computes them, with our pruning or without
//! (`--no-sbbf`), the `--stats` line, paths (file, directory, glob, S3), and errors.

#![cfg(feature = "query")]

mod common;

use common::{repo, sbbf, text};
use serde_json::Value as Json;

fn stats(stderr: &[u8]) -> Json {
    let line = text(stderr)
        .lines()
        .last()
        .expect("a stats line on stderr")
        .to_string();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

fn json_rows(stdout: &[u8]) -> Vec<Json> {
    text(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn pruning_changes_what_is_read_not_the_rows() {
    let file = repo().join("testdata/pa_ints.parquet");
    let file = file.to_str().unwrap();
    let sql = "SELECT i64, i32 FROM t WHERE i64 = -752296985104395475 ORDER BY i32";
    let ours = sbbf(&["query", file, sql, "--format", "json", "--stats"]);
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    let theirs = sbbf(&[
        "query",
        file,
        sql,
        "--format",
        "json",
        "--stats",
        "--no-sbbf",
    ]);
    assert_eq!(theirs.status.code(), Some(0), "{}", text(&theirs.stderr));
    let rows = json_rows(&ours.stdout);
    assert!(!rows.is_empty());
    assert!(rows
        .iter()
        .all(|r| r["i64"] == serde_json::json!(-752296985104395475i64)));
    assert_eq!(rows, json_rows(&theirs.stdout));

    let s = stats(&ours.stderr);
    let rg = s["row_groups"].as_u64().unwrap();
    assert!(rg >= 2, "{s}");
    assert!(s["row_groups_pruned_bloom"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(s["bloom"], "sbbf");
    assert!(s["sbbf_requests"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(
        s["row_groups_read"].as_u64().unwrap()
            + s["row_groups_pruned_bloom"].as_u64().unwrap()
            + s["row_groups_pruned_statistics"].as_u64().unwrap(),
        rg,
        "{s}"
    );
    let t = stats(&theirs.stderr);
    assert_eq!(t["bloom"], "datafusion");
    assert_eq!(t["sbbf_requests"], 0, "{t}");
    assert!(s["row_groups_read"].as_u64() <= t["row_groups_read"].as_u64());
}

#[test]
fn types_datafusion_does_not_prune_are_pruned() {
    // Dates: DataFusion 55 reads no Bloom filter for them.
    let file = repo().join("testdata/conformance/pyarrow_v2_zstd.parquet");
    let file = file.to_str().unwrap();
    let first = sbbf(&[
        "query",
        file,
        // A rare date, inside the row groups' min/max ranges (statistics cannot skip).
        "SELECT date AS d FROM t WHERE date > DATE '2010-01-01' GROUP BY date \
         ORDER BY count(*), date LIMIT 1",
        "--format",
        "json",
    ]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let d = json_rows(&first.stdout)[0]["d"]
        .as_str()
        .unwrap()
        .to_string();
    let sql = format!("SELECT count(*) AS n FROM t WHERE date = DATE '{d}'");
    let ours = sbbf(&["query", file, &sql, "--format", "json", "--stats"]);
    let theirs = sbbf(&[
        "query",
        file,
        &sql,
        "--format",
        "json",
        "--stats",
        "--no-sbbf",
    ]);
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    assert_eq!(json_rows(&ours.stdout), json_rows(&theirs.stdout));
    let (s, t) = (stats(&ours.stderr), stats(&theirs.stderr));
    assert!(
        s["row_groups_read"].as_u64() < t["row_groups_read"].as_u64(),
        "ours {s}, DataFusion {t}"
    );
}

#[test]
fn directories_and_globs_are_tables() {
    let dir = repo().join("testdata");
    let glob = format!("{}/pa_*.parquet", dir.display());
    let one = sbbf(&[
        "query",
        dir.join("pa_ints.parquet").to_str().unwrap(),
        "SELECT count(*) AS n FROM t",
        "--format",
        "json",
    ]);
    let many = sbbf(&[
        "query",
        &glob,
        "SELECT count(*) AS n FROM t WHERE i64 = 42",
        "--format",
        "json",
    ]);
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    // The pa_* files do not share a schema: DataFusion says so, as an error with status 2,
    // or merges them; either way no panic and a clear outcome.
    assert!(
        matches!(many.status.code(), Some(0) | Some(2)),
        "{}",
        text(&many.stderr)
    );
    let n = json_rows(&one.stdout)[0]["n"].as_u64().unwrap();
    assert!(n > 0);
}

#[test]
fn errors_are_messages_with_status_2() {
    let file = repo().join("testdata/pa_ints.parquet");
    let file = file.to_str().unwrap();
    for (path, sql, says) in [
        (file, "SELEC nothing", "sbbf query:"),
        (file, "SELECT no_such_column FROM t", "no_such_column"),
        ("/nonexistent/dir/x.parquet", "SELECT 1", "sbbf query:"),
        (
            repo().join("README.md").to_str().unwrap(),
            "SELECT * FROM t",
            "sbbf query:",
        ),
    ] {
        let o = sbbf(&["query", path, sql]);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{path} {sql}: {}",
            text(&o.stderr)
        );
        assert!(text(&o.stderr).contains(says), "{}", text(&o.stderr));
        assert!(!text(&o.stderr).contains("panicked"), "{}", text(&o.stderr));
    }
}

#[test]
fn s3_prefix_answers_as_local() {
    use sbbf_testkit::moto::Moto;
    let moto = Moto::start();
    moto.create_bucket("sbbf-query");
    let td = repo().join("testdata");
    let names = moto.upload_dir("sbbf-query", "q", &td);
    assert!(names.iter().any(|n| n == "pa_ints.parquet"));
    let sql = "SELECT i32 FROM t WHERE i64 IN (42, -752296985104395475) ORDER BY i32";
    let run = |path: &str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_sbbf"));
        c.args(["query", path, sql, "--format", "json", "--stats"]);
        for (k, v) in moto.env() {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let remote = run("s3://sbbf-query/q/pa_ints.parquet");
    let local = run(td.join("pa_ints.parquet").to_str().unwrap());
    assert_eq!(remote.status.code(), Some(0), "{}", text(&remote.stderr));
    assert_eq!(remote.stdout, local.stdout);
    let (r, l) = (stats(&remote.stderr), stats(&local.stderr));
    assert_eq!(r["row_groups_pruned_bloom"], l["row_groups_pruned_bloom"]);
    assert!(r["row_groups_pruned_bloom"].as_u64().unwrap() >= 1, "{r}");
}

/// A file of ids `from..to` (one int64 column `id`, with Bloom filters).
fn ids_file(path: &std::path::Path, from: i64, to: i64) {
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(from..to));
    let batch = arrow::record_batch::RecordBatch::try_new(schema.clone(), vec![ids]).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_bloom_filter_enabled(true)
        .build();
    let f = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn count(path: &str, sql: &str) -> u64 {
    let o = sbbf(&["query", path, sql, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{path}: {}", text(&o.stderr));
    json_rows(&o.stdout)[0]["n"].as_u64().unwrap()
}

#[test]
fn a_directory_means_every_file_below_it_as_for_probe() {
    // tiny/a.parquet holds 0..100, tiny/sub/b.parquet 100..200, tiny/sub/deeper/c 200..300:
    // the counts follow from how the files were made.
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny");
    ids_file(&tiny.join("a.parquet"), 0, 100);
    ids_file(&tiny.join("sub/b.parquet"), 100, 200);
    ids_file(&tiny.join("sub/deeper/c.parquet"), 200, 300);
    let root = tiny.to_str().unwrap();
    let all = "SELECT count(*) AS n FROM t";
    let one = "SELECT count(*) AS n FROM t WHERE id = 150";
    assert_eq!(count(root, all), 300);
    assert_eq!(count(&format!("{root}/"), all), 300);
    assert_eq!(count(root, one), 1);
    assert_eq!(count(&format!("{root}/**/*.parquet"), all), 300);
    assert_eq!(count(&format!("{root}/**/*.parquet"), one), 1);
    assert_eq!(count(&format!("{root}/*/*.parquet"), all), 100);
    assert_eq!(count(&format!("{root}/*/*.parquet"), one), 1);
    // probe names the same files.
    let o = sbbf(&["probe", root, "id", "150", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).lines().count(), 3, "{}", text(&o.stdout));
}

#[test]
fn a_lake_table_root_is_read_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    ids_file(&dir.path().join("part-0.parquet"), 0, 10);
    std::fs::create_dir_all(dir.path().join("_delta_log")).unwrap();
    let o = sbbf(&[
        "query",
        dir.path().to_str().unwrap(),
        "SELECT count(*) AS n FROM t",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("Delta table"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(json_rows(&o.stdout)[0]["n"], 10);
}
