//! Column paths: a dot inside a field name (`a\.b`) against a struct field (`a.b`), ambiguous
//! paths, and near misses.

use arrow::array::{ArrayRef, Int64Array, ListArray, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Int64Type, Schema};
use arrow::record_batch::RecordBatch;
use serde_json::Value as Json;
use std::path::Path;
use std::sync::Arc;

use crate::common::{sbbf, text};

fn ints(start: i64) -> ArrayRef {
    Arc::new(Int64Array::from((start..start + 10).collect::<Vec<_>>()))
}

fn strukt(name: &str, start: i64) -> ArrayRef {
    Arc::new(StructArray::from(vec![(
        Arc::new(Field::new(name, DataType::Int64, false)),
        ints(start),
    )]))
}

/// Columns (paths as sbbf names them): `a\.b` (0..10), `a.b` (100..110), `p.q\.r` (200..210),
/// `p\.q.r` (300..310), `lst.list.item` (400..410).
fn write_file(path: &Path, filters: bool) {
    let list =
        ListArray::from_iter_primitive::<Int64Type, _, _>((400..410).map(|v| Some(vec![Some(v)])));
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("a.b", ints(0)),
        ("a", strukt("b", 100)),
        ("p", strukt("q.r", 200)),
        ("p.q", strukt("r", 300)),
        ("lst", Arc::new(list)),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(Fields::from(fields)));
    let batch = RecordBatch::try_new(
        schema.clone(),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_bloom_filter_enabled(filters)
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        schema,
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn json(o: &std::process::Output) -> Json {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)))
}

fn filtered_columns(file: &str) -> Vec<(String, bool)> {
    let o = sbbf(&["inspect", file, "--format", "json"]);
    json(&o)["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["column"].as_str().unwrap().to_string(),
                c["has_filter"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_leaf_has_its_own_path() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dots.parquet");
    write_file(&f, true);
    let f = f.to_str().unwrap();
    let names: Vec<String> = filtered_columns(f).into_iter().map(|(c, _)| c).collect();
    assert_eq!(
        names,
        ["a\\.b", "a.b", "p.q\\.r", "p\\.q.r", "lst.list.item"]
    );

    // `a.b` is field b of struct a (it holds 105), `a\.b` the top-level column "a.b".
    let o = sbbf(&["probe", f, "a.b", "105", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(json(&o)["column"], "a.b");
    assert_eq!(json(&o)["row_groups"][0]["values"][0]["result"], "maybe");
    // ... and says that another column reads the same without escapes.
    assert!(text(&o.stderr).contains("`a\\.b`"), "{}", text(&o.stderr));
    let o = sbbf(&["probe", f, "a\\.b", "105", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(json(&o)["column"], "a\\.b");
    assert_eq!(sbbf(&["probe", f, "a\\.b", "5"]).status.code(), Some(0));
    assert_eq!(sbbf(&["probe", f, "p\\.q.r", "305"]).status.code(), Some(0));

    // Fits two leaves when the dots are read either way: refused, with both.
    let o = sbbf(&["probe", f, "p.q.r", "205"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains("ambiguous") && e.contains("`p.q\\.r`") && e.contains("`p\\.q.r`"),
        "{e}"
    );

    // Near misses.
    let o = sbbf(&["probe", f, "lst.item", "405"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("did you mean `lst.list.item`?"),
        "{}",
        text(&o.stderr)
    );
    let o = sbbf(&["probe", f, "LST.LIST.ITEM", "405"]);
    assert!(text(&o.stderr).contains("`lst.list.item`"));
}

#[test]
fn add_reaches_the_leaf_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.parquet");
    write_file(&plain, false);
    for (column, want) in [("a\\.b", "a\\.b"), ("a.b", "a.b"), ("p.q\\.r", "p.q\\.r")] {
        let out = dir
            .path()
            .join(format!("{}.parquet", want.replace('\\', "_")));
        let o = sbbf(&[
            "add",
            plain.to_str().unwrap(),
            "-c",
            column,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let with: Vec<String> = filtered_columns(out.to_str().unwrap())
            .into_iter()
            .filter(|(_, f)| *f)
            .map(|(c, _)| c)
            .collect();
        assert_eq!(with, [want], "add -c {column}");
    }
}

#[cfg(unix)]
#[test]
fn a_dangling_link_in_a_directory_is_one_error_among_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        crate::common::repo().join("testdata/pa_ints.parquet"),
        dir.path().join("a.parquet"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("gone.parquet"),
        dir.path().join("b.parquet"),
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    for format in ["text", "json"] {
        let o = sbbf(&["probe", root, "i64", "42", "--format", format]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert!(
            out.contains("a.parquet"),
            "{format}: the good file is answered: {out}"
        );
        assert!(
            format!("{out}{err}").contains("b.parquet"),
            "{format}: the dangling link is named: {out} {err}"
        );
    }
    let o = sbbf(&["inspect", root, "--format", "json"]);
    assert!(text(&o.stdout).contains("a.parquet"), "{}", text(&o.stderr));
    assert_ne!(o.status.code(), Some(0));
}
