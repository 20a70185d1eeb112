//! `sbbf verify`: writers' filters hold every stored value; a broken filter is caught.

use crate::common::{conformance_files, repo, sbbf, text};
use serde_json::Value as Json;

#[test]
fn every_writers_filters_hold_every_stored_value() {
    // Every file of the project's corpus (four writers, all types) and the conformance corpus.
    let dirs = [repo().join("testdata"), conformance_files()];
    let mut chunks = 0;
    for dir in dirs {
        let o = sbbf(&[
            "verify",
            dir.to_str().unwrap(),
            "--format",
            "json",
            "--samples",
            "2000",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let j: Json = serde_json::from_str(line).unwrap();
            assert_eq!(j["false_negatives"], 0, "{}", j["file"]);
            for c in j["chunks"].as_array().unwrap() {
                if c["filter"] == "present" {
                    chunks += 1;
                    // The measured rate sits near what the fill predicts (2000 samples).
                    let real = c["measured_fpp"].as_f64().unwrap();
                    let fill = c["predicted_fpp"].as_f64().unwrap();
                    assert!(
                        (real - fill).abs() < 0.03 + fill,
                        "{}: {real} vs {fill}",
                        j["file"]
                    );
                }
            }
        }
    }
    assert!(chunks > 300, "only {chunks} chunks verified");
}

#[test]
fn a_broken_filter_is_reported_with_its_values() {
    let src = repo().join("testdata/pa_ints.parquet");
    let o = sbbf(&["inspect", src.to_str().unwrap(), "--format", "json"]);
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    let chunk = j["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["row_group"] == 1 && c["has_filter"] == true)
        .unwrap()
        .clone();
    let column = chunk["column"].as_str().unwrap().to_string();
    let start =
        (chunk["offset"].as_u64().unwrap() + chunk["header_bytes"].as_u64().unwrap()) as usize;
    let len = chunk["bitset_bytes"].as_u64().unwrap() as usize;
    let mut bytes = std::fs::read(&src).unwrap();
    bytes[start..start + len].fill(0); // a writer that forgot to insert anything
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.parquet");
    std::fs::write(&bad, &bytes).unwrap();

    let o = sbbf(&["verify", bad.to_str().unwrap(), "--column", &column]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FALSE NEGATIVE"), "{out}");
    let o = sbbf(&[
        "verify",
        bad.to_str().unwrap(),
        "--column",
        &column,
        "--format",
        "json",
    ]);
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    for c in j["chunks"].as_array().unwrap() {
        let fns = c["false_negatives"].as_u64().unwrap();
        if c["row_group"] == 1 {
            assert_eq!(fns, c["distinct_values"].as_u64().unwrap());
            assert!(!c["false_negative_examples"].as_array().unwrap().is_empty());
            assert_eq!(c["measured_fpp"], 0.0);
        } else {
            assert_eq!(fns, 0);
        }
    }
    // Unknown column: exit 2.
    assert_eq!(
        sbbf(&["verify", bad.to_str().unwrap(), "--column", "nope"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn a_column_no_file_has_fails_inspect_and_verify_as_it_fails_probe() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.parquet", "b.parquet"] {
        std::fs::copy(
            repo().join("testdata/pa_ints.parquet"),
            dir.path().join(name),
        )
        .unwrap();
    }
    let root = dir.path().to_str().unwrap();
    for cmd in ["inspect", "verify", "probe"] {
        let mut args = vec![cmd, root, "-c", "nosuch"];
        if cmd == "probe" {
            args = vec![cmd, root, "nosuch", "1"];
        }
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("no file has column"),
            "{cmd}: {}",
            text(&o.stderr)
        );
    }
}

#[test]
fn a_chunk_with_an_unusable_filter_is_not_counted_as_verified() {
    // A bitset cut short: the filter cannot be used, so no value was tested against it.
    let file = repo().join("fixtures/corrupt/bitset_truncated.parquet");
    let o = sbbf(&["verify", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("not verified"),
        "{}",
        text(&o.stdout)
    );
    assert!(
        text(&o.stderr).contains("not verified"),
        "{}",
        text(&o.stderr)
    );
}

/// ClickHouse's BOOLEAN filters (`testdata/clickhouse/bool_filters.parquet`): probed (typed
/// and `--hex`), verified, and indexed, with the answers the file was made to give (`always`
/// holds only true; `small` only false after row group 0).
#[test]
fn clickhouse_boolean_filters_are_probed_verified_and_indexed() {
    let file = repo().join("testdata/clickhouse/bool_filters.parquet");
    let f = file.to_str().unwrap();
    let rows = |args: &[&str]| -> (Option<i32>, Vec<Vec<String>>) {
        let mut a = vec!["probe", f];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--format", "json"]);
        let o = sbbf(&a);
        let j: Json = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|_| panic!("{args:?}: {}", text(&o.stderr)));
        let per_rg = j["row_groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(crate::common::results)
            .collect();
        (o.status.code(), per_rg)
    };
    let all = |r: &str| vec![vec![r.to_string()]; 4];
    assert_eq!(rows(&["always", "false"]), (Some(1), all("absent")));
    assert_eq!(rows(&["always", "--hex", "00"]), (Some(1), all("absent")));
    assert_eq!(rows(&["always", "true"]), (Some(0), all("maybe")));
    let (code, small) = rows(&["small", "true"]);
    assert_eq!(code, Some(0));
    assert_eq!(small[0], vec!["maybe"]);
    assert!(small[1..].iter().all(|v| v == &vec!["absent"]), "{small:?}");
    // A value a boolean cannot be is an input error.
    let o = sbbf(&["probe", f, "odd", "maybe"]);
    assert_eq!(o.status.code(), Some(2));

    let o = sbbf(&["verify", f, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: Json = serde_json::from_slice(&o.stdout).unwrap();
    let bools = j["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["column"] != "id")
        .inspect(|c| assert_eq!(c["false_negatives"], 0, "{c}"))
        .count();
    assert_eq!(bools, 16, "{j}");

    // Indexed: the index answers as the file does.
    let td = tempfile::tempdir().unwrap();
    let copy = td.path().join("ch.parquet");
    std::fs::copy(&file, &copy).unwrap();
    // A file changed in the last 2 s is not covered by a build: wait that out.
    sbbf_testkit::settle(td.path());
    let d = td.path().to_str().unwrap();
    let o = sbbf(&["index", "build", d, "-c", "always", "-c", "small"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for (col, v) in [("always", "false"), ("always", "true"), ("small", "true")] {
        let with = sbbf(&["probe", d, col, v]);
        let without = sbbf(&["probe", d, col, v, "--no-index"]);
        assert_eq!(text(&with.stdout), text(&without.stdout), "{col} {v}");
        assert_eq!(with.status.code(), without.status.code());
        if (col, v) == ("always", "false") {
            let shown = text(&sbbf(&["probe", d, col, v, "--stats"]).stdout);
            let stats = shown.split_once("index: ").map_or("", |(_, s)| s);
            assert!(
                stats.starts_with("1 of 1 file(s) answered by the index"),
                "{stats}"
            );
        }
    }
}
