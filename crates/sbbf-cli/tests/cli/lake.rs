//! Delta and Iceberg tables read as their snapshots, checked against the formats' own
//! readers: `testdata/lake/*.expected.json` holds what deltalake 1.6.6 and pyiceberg 0.12
//! answered for every version of each table (`tools/gen/lake_tables.py`; kernel tables from
//! delta-kernel-rs answered by deltalake's SQL engine). Nothing here compares with our own
//! output.

use crate::common::{sbbf, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub(crate) fn lake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/lake")
}

pub(crate) fn oracle(name: &str) -> Value {
    let p = lake_dir().join(format!("{name}.expected.json"));
    serde_json::from_slice(&std::fs::read(&p).expect("oracle")).expect("oracle JSON")
}

/// Iceberg metadata names files by absolute URI: the fixtures were written under this root,
/// and are put back there (once per test run) to be read.
const ICEBERG_ROOT: &str = "/tmp/sbbf-lake-fixtures/iceberg";

pub(crate) fn iceberg_table(name: &str) -> String {
    static PLACED: std::sync::Once = std::sync::Once::new();
    PLACED.call_once(|| {
        let to = Path::new(ICEBERG_ROOT);
        let _ = std::fs::remove_dir_all(to);
        copy_dir(&lake_dir().join("iceberg"), to);
    });
    format!("{ICEBERG_ROOT}/ns/{name}")
}

/// Makes the copied test catalog `db` name its tables' metadata below a root that does not
/// exist, as the committed catalog does in a clone on a machine without [`ICEBERG_ROOT`]
/// (which other tests of this binary fill at any moment): a catalog read through it then
/// finds its tables where the catalog file was copied, never in [`ICEBERG_ROOT`].
pub(crate) fn retarget_catalog(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let changed = conn
        .execute(
            "UPDATE iceberg_tables SET \
             metadata_location = replace(metadata_location, ?1, ?2), \
             previous_metadata_location = replace(previous_metadata_location, ?1, ?2)",
            [
                "/tmp/sbbf-lake-fixtures/",
                "/nonexistent/sbbf-lake-fixtures/",
            ],
        )
        .unwrap();
    assert!(changed > 0, "no table in {}", db.display());
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// The files `sbbf probe TABLE COLUMN VALUE` answers for (every file line of its JSON),
/// relative to the table, and the table line.
fn probe_files(
    table: &str,
    column: &str,
    value: &str,
    extra: &[&str],
) -> (BTreeSet<String>, Value) {
    let mut args = vec!["probe", table, column, value, "--format", "json"];
    args.extend_from_slice(extra);
    let out = sbbf(&args);
    let stdout = text(&out.stdout);
    assert!(
        out.status.code() != Some(2),
        "{args:?}: {}\n{stdout}",
        text(&out.stderr)
    );
    let mut files = BTreeSet::new();
    let mut version = Value::Null;
    let prefix = format!("{}/", table.trim_end_matches('/'));
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(t) = v.get("table") {
            version = t.clone();
        }
        if let Some(f) = v.get("file").and_then(Value::as_str) {
            let rel = f.strip_prefix(&prefix).unwrap_or(f);
            files.insert(rel.to_string());
        }
    }
    (files, version)
}

pub(crate) fn expected_files(version: &Value) -> BTreeSet<String> {
    version["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

/// Every version's files, by `--as-of`, are the snapshot's, and the current one is the
/// default; a removed file is never answered for.
fn every_version_reads_its_snapshot(table: &str, name: &str, column: &str) {
    let o = oracle(name);
    for v in o["versions"].as_array().unwrap() {
        let version = v["version"].as_i64().unwrap().to_string();
        let (files, table_line) =
            probe_files(table, column, "7", &["--as-of", &version, "--no-index"]);
        assert_eq!(files, expected_files(v), "{name} version {version}");
        assert_eq!(
            table_line["version"].as_i64(),
            v["version"].as_i64(),
            "{name}"
        );
    }
    let last = o["versions"].as_array().unwrap().last().unwrap().clone();
    let (files, table_line) = probe_files(table, column, "7", &[]);
    assert_eq!(files, expected_files(&last), "{name} current");
    assert_eq!(table_line["version"], o["current_version"], "{name}");
}

/// No value the format's reader finds is called absent in every file (a false negative).
fn no_false_negative(table: &str, name: &str, column: &str) {
    let o = oracle(name);
    let last = o["versions"].as_array().unwrap().last().unwrap().clone();
    for (value, count) in last["count_by_id"].as_object().unwrap() {
        if count.as_i64() == Some(0) {
            continue;
        }
        let out = sbbf(&["probe", table, column, value, "-l"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name} {value}: {}",
            text(&out.stderr)
        );
        assert!(
            !text(&out.stdout).trim().is_empty(),
            "{name}: {value} called absent everywhere"
        );
    }
}

#[test]
fn delta_tables_read_as_their_snapshots() {
    for name in [
        "delta_basic",
        "delta_partitioned",
        "delta_evolved",
        "delta_checkpoint",
    ] {
        let table = lake_dir().join(name).display().to_string();
        every_version_reads_its_snapshot(&table, name, "id");
        no_false_negative(&table, name, "id");
    }
}

#[test]
fn iceberg_tables_read_as_their_snapshots() {
    for name in ["ice_basic", "ice_partitioned"] {
        let table = iceberg_table(name);
        every_version_reads_its_snapshot(&table, name, "id");
        no_false_negative(&table, name, "id");
    }
}

#[test]
fn an_iceberg_table_given_by_its_metadata_file_reads_the_same() {
    let table = iceberg_table("ice_basic");
    let o = oracle("ice_basic");
    let meta = format!("{table}/{}", o["current_metadata_file"].as_str().unwrap());
    let out = sbbf(&["probe", &meta, "id", "600", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let files = text(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"file\""))
        .count();
    let last = o["versions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(files, expected_files(&last).len());
}

/// A column Iceberg renamed after files were written is found in each file by its field id:
/// the file written before the rename answers under its old name `s`.
#[test]
fn a_renamed_iceberg_column_is_probed_by_field_id_in_every_file() {
    let table = iceberg_table("ice_renamed");
    let o = oracle("ice_renamed");
    let last = expected_files(o["versions"].as_array().unwrap().last().unwrap());
    let out = sbbf(&["probe", &table, "name", "s7", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Each file by the table's name; the older one's own name beside it.
    let mut columns: Vec<(String, String)> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("file").is_some())
        .map(|v| (v["column"].to_string(), v["column_in_file"].to_string()))
        .collect();
    columns.sort();
    columns.dedup();
    let named = |c: &str, f: &str| (c.to_string(), f.to_string());
    assert_eq!(
        columns,
        [named(r#""name""#, r#""s""#), named(r#""name""#, "null")]
    );
    let (files, _) = probe_files(&table, "name", "s7", &[]);
    assert_eq!(files, last);
    let (files, _) = probe_files(&table, "id", "7", &[]);
    assert_eq!(files, last);
}

#[test]
fn the_folder_is_read_as_plain_files_only_when_asked() {
    let table = lake_dir().join("delta_basic").display().to_string();
    let o = oracle("delta_basic");
    let folder: BTreeSet<String> = o["folder_parquet_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let (files, table_line) = probe_files(&table, "id", "7", &["--as-directory", "--no-index"]);
    assert_eq!(files, folder);
    assert!(table_line.is_null());
    // A version of a folder that is no table is an error, not an answer.
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/conformance");
    let out = sbbf(&[
        "probe",
        &plain.display().to_string(),
        "id",
        "7",
        "--as-of",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not a Delta or Iceberg table"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_version_the_table_does_not_have_is_an_error() {
    let table = lake_dir().join("delta_basic").display().to_string();
    let out = sbbf(&["probe", &table, "id", "7", "--as-of", "99"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no snapshot version 99"),
        "{}",
        text(&out.stderr)
    );
    let out = sbbf(&["probe", &table, "id", "7", "--as-of", "next tuesday"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn delta_kernel_tables_with_deletion_vectors_column_mapping_and_v2_checkpoints() {
    for (name, column) in [
        ("table-with-dv-small", "value"),
        ("table-with-columnmapping-mode-name", "LongType"),
        ("table-with-columnmapping-mode-id", "LongType"),
        ("v2-checkpoints-parquet-without-sidecars", "id"),
        ("v2-json-sidecars-struct-stats-only", "id"),
    ] {
        let o = oracle(&format!("kernel/{name}"));
        let last = o["versions"].as_array().unwrap().last().unwrap().clone();
        let table = lake_dir().join("kernel").join(name).display().to_string();
        // Column names in the oracle are the table's; under column mapping files hold
        // physical names, which the probe finds.
        let (files, _) = probe_files(&table, column, "1", &[]);
        assert_eq!(files, expected_files(&last), "{name}");
        for (value, count) in last["count_by_id"].as_object().unwrap() {
            if count.as_i64().unwrap_or(0) == 0 {
                continue;
            }
            let out = sbbf(&["probe", &table, column, value, "-l"]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} {value}: {}",
                text(&out.stderr)
            );
        }
    }
}

/// `sbbf query TABLE` counts what the format's reader counts, at every version.
#[cfg(feature = "query")]
/// `SELECT count(*)` of `table` at every version the oracle `name` knows is the count the
/// format's reader gave; `run` runs the sbbf command (with a store's settings, for S3).
pub(crate) fn counts_at_every_version(
    table: &str,
    name: &str,
    run: &dyn Fn(&[&str]) -> std::process::Output,
) {
    for v in oracle(name)["versions"].as_array().unwrap() {
        let version = v["version"].as_i64().unwrap().to_string();
        let out = run(&[
            "query",
            table,
            "SELECT count(*) AS n FROM t",
            "--format",
            "json",
            "--as-of",
            &version,
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name} {version}: {}",
            text(&out.stderr)
        );
        let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        assert_eq!(row["n"], v["row_count"], "{name} version {version}");
    }
}

fn counts_match(table: &str, name: &str) {
    counts_at_every_version(table, name, &|args| sbbf(args));
    let o = oracle(name);
    let last = o["versions"].as_array().unwrap().last().unwrap().clone();
    for (value, count) in last["count_by_id"].as_object().unwrap() {
        let sql = format!("SELECT count(*) AS n FROM t WHERE id = {value}");
        let out = sbbf(&["query", table, &sql, "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        assert_eq!(&row["n"], count, "{name} id = {value}");
    }
}

#[cfg(feature = "query")]
#[test]
fn queries_count_what_the_formats_readers_count() {
    for name in [
        "delta_basic",
        "delta_partitioned",
        "delta_evolved",
        "delta_checkpoint",
    ] {
        counts_match(&lake_dir().join(name).display().to_string(), name);
    }
    for name in ["ice_basic", "ice_partitioned", "ice_posdeletes"] {
        counts_match(&iceberg_table(name), name);
    }
}

#[cfg(feature = "query")]
#[test]
fn delta_partition_columns_come_from_the_snapshot() {
    let table = lake_dir().join("delta_partitioned").display().to_string();
    let o = oracle("delta_partitioned");
    let out = sbbf(&[
        "query",
        &table,
        "SELECT count(*) AS n FROM t WHERE p = 'b'",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The partition `b` was deleted in the last version: its files are still in the folder.
    let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    let last = o["versions"].as_array().unwrap().last().unwrap().clone();
    let b_files = expected_files(&last)
        .iter()
        .filter(|f| f.starts_with("p=b/"))
        .count();
    assert_eq!(b_files, 0);
    assert_eq!(row["n"], 0);
}

/// The one row of `sbbf query TABLE SQL --format json` (with `extra` arguments).
#[cfg(feature = "query")]
fn query_row(table: &str, sql: &str, extra: &[&str]) -> Value {
    let mut args = vec!["query", table, sql, "--format", "json"];
    args.extend_from_slice(extra);
    let out = sbbf(&args);
    assert_eq!(out.status.code(), Some(0), "{sql}: {}", text(&out.stderr));
    serde_json::from_str(text(&out.stdout).trim()).unwrap()
}

/// Columns are matched to each file's fields as the format says: an Iceberg column renamed
/// after files were written by its field id, Delta column mapping by physical name (`name`
/// mode) and by field id (`id` mode). Every count is the format's reader's, with our pruning
/// and without.
#[cfg(feature = "query")]
#[test]
fn renamed_and_mapped_columns_are_read_from_every_file() {
    let table = iceberg_table("ice_renamed");
    let o = oracle("ice_renamed");
    let last = o["versions"].as_array().unwrap().last().unwrap().clone();
    for extra in [&[][..], &["--no-sbbf"][..]] {
        let row = query_row(
            &table,
            "SELECT count(*) AS n, count(name) AS names, count(id) AS ids FROM t",
            extra,
        );
        assert_eq!(row["n"], last["row_count"], "{extra:?}");
        assert_eq!(row["names"], last["non_null_counts"]["name"], "{extra:?}");
        assert_eq!(row["ids"], last["non_null_counts"]["id"], "{extra:?}");
        // `s` is "s<id>": id 7 lies in the file written before the rename (column `s`
        // there), id 1500 in the one after; no row has id 2500.
        for (value, want) in [("s7", 1), ("s1500", 1), ("s2500", 0)] {
            let sql = format!("SELECT count(*) AS n FROM t WHERE name = '{value}'");
            assert_eq!(
                query_row(&table, &sql, extra)["n"],
                want,
                "{value} {extra:?}"
            );
        }
    }
    counts_match(&table, "ice_renamed");
    // The first snapshot, read as of it, has the columns it was written with (pyiceberg's
    // scan of it: `id, s`), in query and probe; `name` is not one of them yet.
    let first = o["versions"].as_array().unwrap()[0].clone();
    let v = first["version"].as_i64().unwrap().to_string();
    let as_of = ["--as-of", v.as_str()];
    let row = query_row(
        &table,
        "SELECT count(*) AS n, count(s) AS s, count(id) AS ids FROM t",
        &as_of,
    );
    assert_eq!(row["n"], first["row_count"]);
    assert_eq!(row["s"], first["non_null_counts"]["s"]);
    let row = query_row(&table, "SELECT * FROM t WHERE s = 's7'", &as_of);
    let columns: Vec<&String> = row.as_object().unwrap().keys().collect();
    assert_eq!(columns, ["id", "s"]);
    let out = sbbf(&["query", &table, "SELECT name FROM t", "--as-of", &v]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let out = sbbf(&["probe", &table, "s", "s7", "--as-of", &v, "-l"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().count(),
        1,
        "{}",
        text(&out.stdout)
    );

    for name in [
        "table-with-columnmapping-mode-name",
        "table-with-columnmapping-mode-id",
    ] {
        let table = lake_dir().join("kernel").join(name).display().to_string();
        let o = oracle(&format!("kernel/{name}"));
        let last = o["versions"].as_array().unwrap().last().unwrap().clone();
        for extra in [&[][..], &["--no-sbbf"][..]] {
            let row = query_row(&table, "SELECT count(*) AS n FROM t", extra);
            assert_eq!(row["n"], last["row_count"], "{name} {extra:?}");
            for (column, count) in last["non_null_counts"].as_object().unwrap() {
                let sql = format!("SELECT count(\"{column}\") AS n FROM t");
                assert_eq!(
                    &query_row(&table, &sql, extra)["n"],
                    count,
                    "{name} {column}"
                );
            }
            for (value, count) in last["count_by_id"].as_object().unwrap() {
                let sql = format!("SELECT count(*) AS n FROM t WHERE \"LongType\" = {value}");
                assert_eq!(
                    &query_row(&table, &sql, extra)["n"],
                    count,
                    "{name} = {value}"
                );
            }
            // The fields inside nested columns have physical names too: each leaf (struct
            // fields, list elements, map values) read under the table's names, as
            // deltalake's SQL engine reads it, not as nulls.
            let leaves = last["leaf_aggregates"].as_object().unwrap();
            assert!(leaves.len() >= 10, "{name}: {leaves:?}");
            for (agg, want) in leaves {
                let sql = format!("SELECT {agg} AS n FROM t");
                assert_eq!(&query_row(&table, &sql, extra)["n"], want, "{name} {agg}");
            }
        }
    }
}

/// Writes, into the folder argv[1], an Iceberg table whose nested columns changed between
/// two appends: `st.a` renamed `b`, `st.c` dropped and a new `st.c` (of the same type) and `st.d`
/// added, a list's `x` renamed `y`, a map value's `v` renamed `w`. Prints the metadata file
/// and, for each SQL aggregate of a leaf, what pyiceberg's reader makes of it.
const NESTED_RENAMES: &str = r#"
import json, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import NestedField, LongType, StringType, StructType, ListType, MapType
root = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
cat.create_namespace("ns")
schema = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "st", StructType(NestedField(3, "a", LongType(), required=False),
                                    NestedField(4, "c", LongType(), required=False)),
                required=False),
    NestedField(5, "lst", ListType(6, StructType(NestedField(7, "x", LongType(),
                                                             required=False)),
                                   element_required=False), required=False),
    NestedField(8, "mp", MapType(9, StringType(), 10,
                                 StructType(NestedField(11, "v", LongType(), required=False)),
                                 value_required=False), required=False))
t = cat.create_table("ns.nested", schema)
def rows(lo, hi, t, old):
    return pa.Table.from_pylist([
        {"id": i,
         "st": {"a": i, "c": -i} if old else {"b": i, "c": i * 3, "d": i * 2},
         "lst": [{"x": i * 10} if old else {"y": i * 10}],
         "mp": [(f"k{i}", {"v": i * 100} if old else {"w": i * 100})]}
        for i in range(lo, hi)], schema=t.schema().as_arrow())
t.append(rows(0, 10, t, True))
with t.update_schema() as u:
    u.rename_column("st.a", "b")
    u.delete_column("st.c")
    u.rename_column("lst.element.x", "y")
    u.rename_column("mp.value.v", "w")
with t.update_schema() as u:
    u.add_column(("st", "c"), LongType())
    u.add_column(("st", "d"), LongType())
t = cat.load_table("ns.nested")
t.append(rows(10, 25, t, False))
got = t.scan().to_arrow().to_pylist()
def agg(values, with_sum):
    present = [v for v in values if v is not None]
    out = {"count": len(present)}
    if with_sum:
        out["sum"] = sum(present) if present else None
    return out
leaves = {
    '"st"[\'b\']': ([r["st"]["b"] for r in got], True),
    '"st"[\'c\']': ([r["st"]["c"] for r in got], True),
    '"st"[\'d\']': ([r["st"]["d"] for r in got], True),
    '"lst"[1][\'y\']': ([r["lst"][0]["y"] for r in got], True),
    'map_values("mp")[1][\'w\']': ([r["mp"][0][1]["w"] for r in got], True),
}
aggs = {}
for expr, (values, with_sum) in leaves.items():
    for k, v in agg(values, with_sum).items():
        aggs[f"{k}({expr})"] = v
print(json.dumps({"metadata": t.metadata_location.removeprefix("file://"), "aggregates": aggs}))
"#;

/// An Iceberg table whose nested columns' inner fields were renamed, dropped and added again
/// under an old name: every leaf is read by field id, as pyiceberg reads it (old files'
/// fields under their new names; the dropped `st.c` never read as the new one).
#[cfg(feature = "query")]
#[test]
fn nested_columns_renamed_inside_are_read_by_field_id() {
    let dir = tempfile::tempdir().unwrap();
    let made = venv_json(NESTED_RENAMES, &[dir.path().to_str().unwrap()]);
    let table = made["metadata"].as_str().unwrap();
    let aggs = made["aggregates"].as_object().unwrap();
    assert_eq!(aggs.len(), 10, "{aggs:?}");
    // The old files hold `st.b` as `a`, and an old `st.c` that the new one is not.
    assert_eq!(aggs["count(\"st\"['b'])"], 25);
    assert_eq!(aggs["count(\"st\"['c'])"], 15);
    for extra in [&[][..], &["--no-sbbf"][..]] {
        for (agg, want) in aggs {
            let sql = format!("SELECT {agg} AS n FROM t");
            assert_eq!(&query_row(table, &sql, extra)["n"], want, "{agg} {extra:?}");
        }
        let row = query_row(table, "SELECT count(*) AS n FROM t WHERE st.b = 3", extra);
        assert_eq!(row["n"], 1, "{extra:?}");
        // The old file's `st.c` (-3) is another field than the new one of that name.
        let row = query_row(table, "SELECT count(*) AS n FROM t WHERE st.c = -3", extra);
        assert_eq!(row["n"], 0, "{extra:?}");
    }
    // The whole struct, as pyiceberg reads it (the JSON output leaves nulls out).
    let row = query_row(table, "SELECT st FROM t WHERE id = 3", &[]);
    assert_eq!(row["st"]["b"], 3, "{row}");
    assert!(
        row["st"]["c"].is_null() && row["st"]["d"].is_null(),
        "{row}"
    );
    let row = query_row(table, "SELECT st FROM t WHERE id = 13", &[]);
    assert_eq!(
        row["st"],
        serde_json::json!({"b": 13, "c": 39, "d": 26}),
        "{row}"
    );
    // With DataFusion's row filters on, a filter inside such a column stays above the scan
    // (the row filter cannot read through the relabelling, and would drop the condition).
    for (sql, want) in [
        ("SELECT count(*) AS n FROM t WHERE st.b = 3", 1),
        ("SELECT count(*) AS n FROM t WHERE st.c = -3", 0),
        ("SELECT count(*) AS n FROM t WHERE id = 3 AND st.b = 3", 1),
    ] {
        let out = crate::common::sbbf_env(
            &["query", table, sql, "--format", "json"],
            &[("DATAFUSION_EXECUTION_PARQUET_PUSHDOWN_FILTERS", "true")],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let got: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        assert_eq!(got["n"], want, "{sql}");
    }
}

/// Writes, into the folder argv[1], an Iceberg table `ns.e` whose struct `st` held only `a`
/// when its first file was written, then gained `c` and lost `a`: that file holds none of the
/// struct's current fields. Prints the metadata file and pyiceberg's rows.
const STRUCT_OF_DROPPED_FIELDS: &str = r#"
import json, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import NestedField, LongType, StructType
root = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
cat.create_namespace("ns")
t = cat.create_table("ns.e", Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "st", StructType(NestedField(3, "a", LongType(), required=False)),
                required=False)))
t.append(pa.Table.from_pylist([{"id": 1, "st": {"a": 1}}, {"id": 2, "st": None}],
                              schema=t.schema().as_arrow()))
with t.update_schema() as u:
    u.add_column(("st", "c"), LongType())
with t.update_schema() as u:
    u.delete_column("st.a")
t = cat.load_table("ns.e")
t.append(pa.Table.from_pylist([{"id": 3, "st": {"c": 5}}], schema=t.schema().as_arrow()))
rows = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
print(json.dumps({"metadata": t.metadata_location.removeprefix("file://"), "rows": rows}))
"#;

/// A file whose struct holds none of the table's current fields of it reads as pyiceberg
/// reads it: the struct where it was not null, every field of it null (DataFusion's cast
/// refused it, sharing no field name).
#[cfg(feature = "query")]
#[test]
fn a_struct_whose_fields_were_all_dropped_reads_as_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let made = venv_json(STRUCT_OF_DROPPED_FIELDS, &[dir.path().to_str().unwrap()]);
    let table = made["metadata"].as_str().unwrap();
    let rows = made["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{made}");
    assert_eq!(rows[0]["st"], serde_json::json!({"c": null}), "{made}");
    assert!(rows[1]["st"].is_null(), "{made}");
    for extra in [&[][..], &["--no-sbbf"][..]] {
        let row = query_row(
            table,
            "SELECT count(st) AS s, count(st.c) AS c, sum(st.c) AS total FROM t",
            extra,
        );
        assert_eq!(
            row,
            serde_json::json!({"s": 2, "c": 1, "total": 5}),
            "{extra:?}"
        );
        let row = query_row(table, "SELECT count(*) AS n FROM t WHERE st IS NULL", extra);
        assert_eq!(row["n"], 1, "{extra:?}");
    }
}

/// A lake table's per-file statistics (Delta `stats` in commits and checkpoints, Iceberg
/// manifest bounds) rule files out before their footers are read; the counts stay the
/// format's reader's (`queries_count_what_the_formats_readers_count` probes every value).
#[cfg(feature = "query")]
#[test]
fn snapshot_statistics_rule_files_out_before_their_footers_are_read() {
    let stats_of = |table: &str, sql: &str| -> (Value, Value) {
        let out = sbbf(&["query", table, sql, "--format", "json", "--stats"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let mut lines = stdout.lines();
        let row: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
        let stderr = text(&out.stderr);
        let stats = stderr
            .lines()
            .chain(lines)
            .find_map(|l| {
                serde_json::from_str::<Value>(l)
                    .ok()
                    .filter(|v| v.get("bloom").is_some())
            })
            .unwrap_or_else(|| panic!("no stats line: {stdout}\n{stderr}"));
        (row, stats)
    };
    // delta_checkpoint: 14 files of 100 ids each; id 150 is in one.
    let table = lake_dir().join("delta_checkpoint").display().to_string();
    let (row, stats) = stats_of(&table, "SELECT count(*) AS n FROM t WHERE id = 150");
    assert_eq!(row["n"], 1);
    assert_eq!(stats["files_pruned_table_stats"], 13, "{stats}");
    let (row, stats) = stats_of(
        &table,
        "SELECT count(*) AS n FROM t WHERE id IN (150, 1350)",
    );
    assert_eq!(row["n"], 2);
    assert_eq!(stats["files_pruned_table_stats"], 12, "{stats}");
    // ice_basic: files of ids 500..999, 1000..1999 and 2000..2999.
    let table = iceberg_table("ice_basic");
    let (row, stats) = stats_of(&table, "SELECT count(*) AS n FROM t WHERE id = 1500");
    assert_eq!(row["n"], 1);
    assert_eq!(stats["files_pruned_table_stats"], 2, "{stats}");
}

/// Delta deletion vectors leave their rows out of a query: at every version, the counts of
/// deltalake's SQL engine (deleted values 0 and 9 are not found), with our pruning and
/// without, and whether DataFusion would answer `count(*)` from the footers' row counts.
#[cfg(feature = "query")]
#[test]
fn deletion_vectors_leave_their_rows_out() {
    let name = "table-with-dv-small";
    let table = lake_dir().join("kernel").join(name).display().to_string();
    let o = oracle(&format!("kernel/{name}"));
    counts_at_every_version(&table, &format!("kernel/{name}"), &|args| sbbf(args));
    let last = o["versions"].as_array().unwrap().last().unwrap().clone();
    for extra in [&[][..], &["--no-sbbf"][..]] {
        let row = query_row(
            &table,
            "SELECT count(*) AS n, count(value) AS v FROM t",
            extra,
        );
        assert_eq!(row["n"], last["row_count"], "{extra:?}");
        assert_eq!(row["v"], last["non_null_counts"]["value"], "{extra:?}");
        for (value, count) in last["count_by_id"].as_object().unwrap() {
            let sql = format!("SELECT count(*) AS n FROM t WHERE value = {value}");
            assert_eq!(
                &query_row(&table, &sql, extra)["n"],
                count,
                "value = {value}"
            );
        }
    }
    // The rows themselves: every value but the deleted ones.
    let sql = "SELECT value FROM t ORDER BY value";
    let out = sbbf(&["query", &table, sql, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let values: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["value"].clone())
        .collect();
    assert_eq!(values, (1..=8).map(Value::from).collect::<Vec<_>>());
}

/// `sbbf probe NS.TABLE --catalog URI ...`: the files answered for, below the table's folder,
/// and the table line.
fn probe_through_catalog(
    ident: &str,
    folder: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Option<i32>, BTreeSet<String>, Value, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sbbf"));
    // 600 is in every snapshot of ice_basic: exit 0.
    cmd.args([
        "probe",
        ident,
        "id",
        "600",
        "--format",
        "json",
        "--no-index",
    ])
    .args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let mut files = BTreeSet::new();
    let mut table = Value::Null;
    for line in text(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(t) = v.get("table") {
            table = t.clone();
        }
        if let Some(f) = v.get("file").and_then(Value::as_str) {
            let rel = f.strip_prefix(&format!("{folder}/")).unwrap_or(f);
            files.insert(rel.to_string());
        }
    }
    (out.status.code(), files, table, text(&out.stderr))
}

/// pyiceberg's SqlCatalog (`catalog.db`, written with the tables) names each table's current
/// metadata file; through it the table reads as the oracle's current snapshot, and older
/// ones by `--as-of`.
#[test]
fn an_iceberg_table_is_read_through_its_sql_catalog() {
    let folder = iceberg_table("ice_basic");
    let catalog = format!("sqlite://{ICEBERG_ROOT}/catalog.db");
    let o = oracle("ice_basic");
    let versions = o["versions"].as_array().unwrap();
    let last = versions.last().unwrap();
    for extra in [
        vec!["--catalog", &catalog],
        vec!["--catalog", &catalog, "--catalog-name", "default"],
    ] {
        let (code, files, table, err) = probe_through_catalog("ns.ice_basic", &folder, &extra, &[]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(files, expected_files(last));
        assert_eq!(table["version"], o["current_version"]);
    }
    let first = &versions[0];
    let v = first["version"].as_i64().unwrap().to_string();
    let (code, files, _, err) = probe_through_catalog(
        "ns.ice_basic",
        &folder,
        &["--catalog", &catalog, "--as-of", &v],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(files, expected_files(first));
    // A table or a catalog name the catalog lacks, and no catalog at all, are errors.
    for (ident, extra, says) in [
        (
            "ns.nope",
            vec!["--catalog", &catalog],
            "has no table ns.nope",
        ),
        (
            "ns.ice_basic",
            vec!["--catalog", &catalog, "--catalog-name", "other"],
            "has no table ns.ice_basic",
        ),
        ("ice_basic", vec!["--catalog", &catalog], "NAMESPACE.TABLE"),
        (
            "ns.ice_basic",
            vec!["--catalog", "sqlite:///nonexistent/catalog.db"],
            "no SQLite file",
        ),
        (
            "ns.ice_basic",
            vec!["--catalog", "ftp://x"],
            "not a catalog",
        ),
    ] {
        let (code, files, _, err) = probe_through_catalog(ident, &folder, &extra, &[]);
        assert_eq!(code, Some(2), "{ident} {extra:?}: {err}");
        assert!(files.is_empty());
        assert!(err.contains(says), "{ident} {extra:?}: {err}");
    }
    let out = sbbf(&[
        "inspect",
        "ns.ice_basic",
        "--catalog",
        &catalog,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// A REST catalog as the spec has it: `v1/config` gives a prefix, the table's answer its
/// `metadata-location`; the bearer token from SBBF_CATALOG_TOKEN is sent.
#[test]
fn an_iceberg_table_is_read_through_a_rest_catalog() {
    use std::io::{BufRead, BufReader, Write};
    let folder = iceberg_table("ice_basic");
    let o = oracle("ice_basic");
    let metadata = format!(
        "file://{folder}/{}",
        o["current_metadata_file"].as_str().unwrap()
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut authorized = false;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                    break;
                }
                authorized |= h.to_ascii_lowercase().trim() == "authorization: bearer s3cret";
            }
            let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
            let (status, body) = if !authorized {
                (
                    "401 Unauthorized",
                    r#"{"error":{"message":"no token","code":401}}"#.to_string(),
                )
            } else if path.starts_with("/api/v1/config") {
                (
                    "200 OK",
                    r#"{"defaults":{},"overrides":{"prefix":"wh/main"}}"#.to_string(),
                )
            } else if path == "/api/v1/wh/main/namespaces/ns/tables/ice_basic" {
                (
                    "200 OK",
                    format!(r#"{{"metadata-location":"{metadata}","metadata":{{}}}}"#),
                )
            } else {
                (
                    "404 Not Found",
                    r#"{"error":{"message":"Table does not exist","code":404}}"#.to_string(),
                )
            };
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let catalog = format!("http://127.0.0.1:{port}/api");
    let token = [("SBBF_CATALOG_TOKEN", "s3cret")];
    let (code, files, table, err) =
        probe_through_catalog("ns.ice_basic", &folder, &["--catalog", &catalog], &token);
    assert_eq!(code, Some(0), "{err}");
    let last = o["versions"].as_array().unwrap().last().unwrap();
    assert_eq!(files, expected_files(last));
    assert_eq!(table["version"], o["current_version"]);
    let (code, _, _, err) =
        probe_through_catalog("ns.nope", &folder, &["--catalog", &catalog], &token);
    assert_eq!(code, Some(2));
    assert!(err.contains("has no table ns.nope"), "{err}");
    let (code, _, _, err) =
        probe_through_catalog("ns.ice_basic", &folder, &["--catalog", &catalog], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("401") && err.contains("no token"), "{err}");
}

#[cfg(feature = "query")]
#[test]
fn a_query_reads_an_iceberg_table_through_its_catalog() {
    iceberg_table("ice_basic");
    let catalog = format!("sqlite://{ICEBERG_ROOT}/catalog.db");
    let o = oracle("ice_basic");
    let last = o["versions"].as_array().unwrap().last().unwrap();
    let out = sbbf(&[
        "query",
        "ns.ice_basic",
        "SELECT count(*) AS n FROM t",
        "--format",
        "json",
        "--catalog",
        &catalog,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(row["n"], last["row_count"]);
}

/// Runs `script` with the Python of `tools/.venv` (deltalake, pyiceberg), the rest of `args`
/// after it; its standard output as JSON. Fails without the venv.
pub(crate) fn venv_json(script: &str, args: &[&str]) -> Value {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/.venv/bin/python");
    assert!(
        python.exists(),
        "deltalake and pyiceberg are needed: run bash tools/setup/setup-venv.sh"
    );
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Partition values whose folder names encode them lossily or awkwardly: a null and an empty
/// string (both null to Delta, in the sentinel folder `__HIVE_DEFAULT_PARTITION__`, which is
/// also a string a row may hold), `=`, `/`, `%`, `?`, `#`, a space, non-ASCII.
const AWKWARD_VALUES: &str =
    r#"["a b", "x/y", "c=d", "50%", "ü", None, "", "q?r#s", "__HIVE_DEFAULT_PARTITION__"]"#;

/// The filters asked of tables partitioned by `p` holding [`AWKWARD_VALUES`].
const AWKWARD_FILTERS: &[&str] = &[
    "true",
    "p = 'c=d'",
    "p = 'x/y'",
    "p = '50%'",
    "p = 'q?r#s'",
    "p = 'ü'",
    "p IS NULL",
    "p = ''",
    "p = '__HIVE_DEFAULT_PARTITION__'",
    "p IN ('a b', 'c=d')",
    "p <> 'ü'",
    "p = 'c=d' AND id > 10",
];

/// A Delta table's partition values are its log's, not its folder names' (the values a
/// query sees, and the files `=` and `IN` leave out): every count is deltalake's SQL engine's,
/// with our pruning and without, on a table without nulls and on one with null partition
/// values (DataFusion's listing takes partition columns as never null, and would fold
/// `p IS NULL` to false). delta-rs writes a row holding the text `__HIVE_DEFAULT_PARTITION__`
/// as a null partition value: both readers then read a null.
#[cfg(feature = "query")]
#[test]
fn delta_partition_values_are_the_logs_not_the_folders() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("t");
    let with_nulls = dir.path().join("n");
    let (plain, with_nulls) = (plain.to_str().unwrap(), with_nulls.to_str().unwrap());
    let script = format!(
        r#"
import json, sys
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder, write_deltalake
ids = list(range(90))
out = {{}}
# The empty string is left out: deltalake's SQL engine reads it as "" where the kernel (and
# deltalake's to_pyarrow_table, and Spark) read it as null.
for path, vals in ((sys.argv[1], [v for v in {AWKWARD_VALUES} if v]),
                   (sys.argv[2], [v for v in {AWKWARD_VALUES} if v != ""])):
    t = pa.table({{"id": pa.array(ids, pa.int64()),
                   "p": pa.array([vals[i % len(vals)] for i in ids], pa.string())}})
    write_deltalake(path, t.slice(0, 45), partition_by=["p"])
    write_deltalake(path, t.slice(45), partition_by=["p"], mode="append")
    dt = DeltaTable(path)
    sql = lambda q: pa.table(QueryBuilder().register("t", dt).execute(q).read_all())
    counts = {{f: sql(f"SELECT count(*) AS n FROM t WHERE {{f}}").column("n")[0].as_py()
              for f in sys.argv[3:]}}
    groups = sql("SELECT p, count(*) AS n, count(p) AS c FROM t GROUP BY p ORDER BY p")
    out[path] = {{"counts": counts, "groups": groups.to_pylist()}}
print(json.dumps(out))
"#
    );
    let mut args = vec![plain, with_nulls];
    args.extend_from_slice(AWKWARD_FILTERS);
    let theirs = venv_json(&script, &args);
    for table in [plain, with_nulls] {
        for f in AWKWARD_FILTERS {
            let sql = format!("SELECT count(*) AS n FROM t WHERE {f}");
            for extra in [&[][..], &["--no-sbbf"][..]] {
                let ours = query_row(table, &sql, extra);
                assert_eq!(
                    ours["n"], theirs[table]["counts"][f],
                    "{table}: {f} {extra:?}"
                );
            }
        }
        // By value: each file's own (a folder shared by a null and a string holding the
        // sentinel name included).
        let out = sbbf(&[
            "query",
            table,
            "SELECT p, count(*) AS n, count(p) AS c FROM t GROUP BY p ORDER BY p",
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        // (p, n, c) of each group; a null may be written as no field at all.
        let rows = |groups: Vec<Value>| -> Vec<(Value, Value, Value)> {
            groups
                .into_iter()
                .map(|g| (g["p"].clone(), g["n"].clone(), g["c"].clone()))
                .collect()
        };
        let ours: Vec<Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let want = theirs[table]["groups"].as_array().unwrap().clone();
        assert_eq!(rows(ours), rows(want), "{table}");
    }
}

/// Iceberg data file locations are used as written: pyiceberg writes the partition folder of
/// `x/y` as `p=x%2Fy` on disk, and so names it in the manifest. Every count is pyiceberg's.
#[cfg(feature = "query")]
#[test]
fn iceberg_locations_with_escapes_are_read_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let script = format!(
        r#"
import json, sys
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog.sql import SqlCatalog
root = sys.argv[1]
vals = {AWKWARD_VALUES}
ids = list(range(90))
t = pa.table({{"id": pa.array(ids, pa.int64()),
               "p": pa.array([vals[i % len(vals)] for i in ids], pa.string())}})
cat = SqlCatalog("default", uri=f"sqlite:///{{root}}/catalog.db", warehouse=f"file://{{root}}")
cat.create_namespace("ns")
tbl = cat.create_table("ns.t", schema=t.schema)
with tbl.update_spec() as u:
    u.add_identity("p")
tbl.append(t.slice(0, 45))
tbl.append(t.slice(45))
rows = tbl.scan().to_arrow().to_pylist()
print(json.dumps({{"metadata": tbl.metadata_location.removeprefix("file://"), "rows": rows}}))
"#
    );
    let theirs = venv_json(&script, &[root]);
    let metadata = theirs["metadata"].as_str().unwrap();
    let rows = theirs["rows"].as_array().unwrap();
    let count = |want: &dyn Fn(&Value) -> bool| rows.iter().filter(|r| want(&r["p"])).count();
    let is = |s: &'static str| move |v: &Value| v.as_str() == Some(s);
    let cases: Vec<(&str, usize)> = vec![
        ("true", rows.len()),
        ("p = 'c=d'", count(&is("c=d"))),
        ("p = 'x/y'", count(&is("x/y"))),
        ("p = '50%'", count(&is("50%"))),
        ("p = 'q?r#s'", count(&is("q?r#s"))),
        ("p = 'ü'", count(&is("ü"))),
        ("p IS NULL", count(&|v: &Value| v.is_null())),
        ("p = ''", count(&is(""))),
    ];
    assert_eq!(rows.len(), 90);
    for (f, n) in cases {
        let sql = format!("SELECT count(*) AS n FROM t WHERE {f}");
        for extra in [&[][..], &["--no-sbbf"][..]] {
            let ours = query_row(metadata, &sql, extra);
            assert_eq!(ours["n"], n, "{f} {extra:?}");
        }
    }
}

/// An Iceberg table with equality deletes (`make_iceberg_eqdeletes` in tools/gen/lake_tables.py):
/// by one column for every partition, by a column with a null for one partition, by two
/// columns; then an append newer than the deletes. pyiceberg 0.12 writes no equality deletes
/// and refuses to read them: the oracle is its scan of the snapshot before the deletes, less
/// the rows the spec's rules delete (same partition or an unpartitioned spec, a newer sequence
/// number, null equal to null), plus the newer append as written.
#[cfg(feature = "query")]
#[test]
fn iceberg_equality_deletes_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/gen");
    let theirs = venv_json(EQUALITY_DELETES_TABLE, &[root, gen.to_str().unwrap()]);
    let metadata = theirs["metadata"].as_str().unwrap();
    let before = theirs["before"].to_string();
    type Want<'a> = &'a dyn Fn(&Value) -> bool;
    let filters: &[(&str, Want)] = &[
        ("true", &|_| true),
        ("id = 3", &|r| r["id"] == 3),
        ("id = 70", &|r| r["id"] == 70),
        ("s IS NULL", &|r| r["s"].is_null()),
        ("p = 'a'", &|r| r["p"] == "a"),
        ("id = 12", &|r| r["id"] == 12),
        ("id = 11", &|r| r["id"] == 11),
        ("id IN (20, 21, 22, 25)", &|r| {
            [20, 21, 22, 25].iter().any(|&k| r["id"] == k)
        }),
    ];
    let sums = |rows: &Value, want: &dyn Fn(&Value) -> bool| {
        let kept: Vec<&Value> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| want(r))
            .collect();
        let sum: i64 = kept.iter().map(|r| r["id"].as_i64().unwrap()).sum();
        (kept.len(), sum)
    };
    assert_eq!(sums(&theirs["rows"], &|_| true).0, 114);
    for (f, want) in filters {
        let sql = format!("SELECT count(*) AS n, coalesce(sum(id), 0) AS s FROM t WHERE {f}");
        for (rows, extra) in [
            (&theirs["rows"], vec![]),
            (&theirs["rows"], vec!["--no-sbbf"]),
            (&theirs["rows_before"], vec!["--as-of", before.as_str()]),
        ] {
            let (n, sum) = sums(rows, want);
            let ours = query_row(metadata, &sql, &extra);
            assert_eq!(
                (ours["n"].as_u64(), ours["s"].as_i64()),
                (Some(n as u64), Some(sum)),
                "{f} {extra:?}"
            );
        }
    }
}

/// Writes the table of [`iceberg_equality_deletes_are_applied`] under `argv[1]` (the
/// generator's helpers from `argv[2]`) and prints its metadata file, the snapshot before the
/// deletes, and the rows before and after them.
const EQUALITY_DELETES_TABLE: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[2])
from lake_tables import make_iceberg_eqdeletes
from pyiceberg.catalog.sql import SqlCatalog
root = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
cat.create_namespace("ns")
made = make_iceberg_eqdeletes(cat)
print(json.dumps({"metadata": made["table"].metadata_location.removeprefix("file://"),
                  "before": made["before"], "rows_before": made["rows_before"], "rows": made["rows"]}))
"#;

/// A Delta table's partition columns are typed as its schema types them, not as their folder
/// names look: a string column holding `01` and `1` keeps them apart, a date compares as a
/// date, a number adds. Every count is deltalake's SQL engine's.
#[cfg(feature = "query")]
#[test]
fn delta_partition_columns_are_typed_as_the_schema_types_them() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    let table = table.to_str().unwrap();
    let filters = [
        "s = '01'",
        "s = '1'",
        "s IN ('1', '10')",
        "d = DATE '2024-01-02'",
        "d > DATE '2024-01-01'",
        "n = 3",
        "n + 1 = 4",
        "ts = TIMESTAMP '2024-01-01T05:00:00Z'",
        "ts > TIMESTAMP '2024-01-01T20:00:00Z'",
    ];
    let script = r#"
import datetime, json, sys
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder, write_deltalake
ids = list(range(60))
utc = datetime.timezone.utc
t = pa.table({
    "id": pa.array(ids, pa.int64()),
    "s": pa.array([["01", "1", "10"][i % 3] for i in ids], pa.string()),
    "d": pa.array([datetime.date(2024, 1, 1 + i % 3) for i in ids], pa.date32()),
    "n": pa.array([i % 4 for i in ids], pa.int32()),
    "ts": pa.array([datetime.datetime(2024, 1, 1, (i * 5) % 24, tzinfo=utc) for i in ids],
                   pa.timestamp("us", tz="UTC")),
})
write_deltalake(sys.argv[1], t, partition_by=["s", "d", "n", "ts"])
dt = DeltaTable(sys.argv[1])
sql = lambda q: pa.table(QueryBuilder().register("t", dt).execute(q).read_all())
print(json.dumps({f: sql(f"SELECT count(*) AS n FROM t WHERE {f}").column("n")[0].as_py()
                  for f in sys.argv[2:]}))
"#;
    let mut args = vec![table];
    args.extend_from_slice(&filters);
    let theirs = venv_json(script, &args);
    for f in filters {
        let sql = format!("SELECT count(*) AS n FROM t WHERE {f}");
        for extra in [&[][..], &["--no-sbbf"][..]] {
            let ours = query_row(table, &sql, extra);
            assert_eq!(ours["n"], theirs[f], "{f} {extra:?}");
        }
    }
    assert_eq!(theirs["s = '01'"], 20);
    // The types are the schema's (folder names would give Int64 for `n`, text for `d`).
    let sql = "SELECT arrow_typeof(s) AS s, arrow_typeof(d) AS d, arrow_typeof(n) AS n, \
               arrow_typeof(ts) AS ts FROM t LIMIT 1";
    let types = query_row(table, sql, &[]);
    assert_eq!(types["s"], "Utf8");
    assert_eq!(types["d"], "Date32");
    assert_eq!(types["n"], "Int32");
    assert!(
        types["ts"].as_str().unwrap().starts_with("Timestamp(µs"),
        "{types}"
    );
}

/// Under Delta column mapping the fields inside a nested column have physical names too: a
/// probe of `nested_struct.ac.aca` reads the leaf the log's schema maps it to (struct fields by
/// physical name, a list's and a map's own levels as written), in `name` and `id` mode, and
/// reports it by the table's path (`inspect` too). The physical names are read here from the
/// log's own schema string.
#[test]
fn nested_fields_under_column_mapping_are_probed_by_physical_names() {
    for mode in ["name", "id"] {
        let table = lake_dir().join(format!("kernel/table-with-columnmapping-mode-{mode}"));
        let log =
            std::fs::read_to_string(table.join("_delta_log/00000000000000000000.json")).unwrap();
        let schema: Value = log
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find_map(|a| a["metaData"]["schemaString"].as_str().map(str::to_string))
            .map(|s| serde_json::from_str(&s).unwrap())
            .unwrap();
        // The physical name of the field `name` among `fields`, and that field's type.
        let field = |fields: &Value, name: &str| -> (String, Value) {
            let f = fields["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == name)
                .unwrap()
                .clone();
            let p = f["metadata"]["delta.columnMapping.physicalName"]
                .as_str()
                .unwrap()
                .to_string();
            (p, f["type"].clone())
        };
        let (ns, ns_t) = field(&schema, "nested_struct");
        let (aa, _) = field(&ns_t, "aa");
        let (ac, ac_t) = field(&ns_t, "ac");
        let (aca, _) = field(&ac_t, "aca");
        let (arr, arr_t) = field(&schema, "array_of_structs");
        let (ab, _) = field(&arr_t["elementType"], "ab");
        let (map, map_t) = field(&schema, "map_of_rows");
        let (mab, _) = field(&map_t["valueType"], "ab");
        let (mp, _) = field(&schema, "map_of_prims");
        let cases = [
            ("nested_struct.aa", format!("{ns}.{aa}")),
            ("nested_struct.ac.aca", format!("{ns}.{ac}.{aca}")),
            (
                "array_of_structs.list.element.ab",
                format!("{arr}.list.element.{ab}"),
            ),
            (
                "map_of_rows.key_value.value.ab",
                format!("{map}.key_value.value.{mab}"),
            ),
            ("map_of_prims.key_value.key", format!("{mp}.key_value.key")),
        ];
        let t = table.to_str().unwrap();
        for (path, want) in cases {
            let out = sbbf(&["probe", t, path, "1", "--format", "json"]);
            assert!(
                out.status.code().is_some_and(|c| c <= 1),
                "{path}: {}",
                text(&out.stderr)
            );
            // Reported by the table's name, with the files' path beside it.
            let lines: Vec<Value> = text(&out.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|v| v.get("file").is_some())
                .collect();
            let pairs: BTreeSet<(String, String)> = lines
                .iter()
                .map(|v| (v["column"].to_string(), v["column_in_file"].to_string()))
                .collect();
            let named = BTreeSet::from([(
                Value::from(path).to_string(),
                Value::from(want.as_str()).to_string(),
            )]);
            assert_eq!(pairs, named, "{mode} {path}");
            // `inspect` names the same leaf by the table's path only.
            let out = sbbf(&["inspect", t, "--format", "json"]);
            let shown = text(&out.stdout);
            assert!(
                shown.contains(&format!("\"column\":\"{path}\"")),
                "{mode} {path}: {shown}"
            );
            assert!(!shown.contains(&want), "{mode} {path}: {shown}");
        }
        let out = sbbf(&["probe", t, "nested_struct.zz", "1"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("no leaf"),
            "{}",
            text(&out.stderr)
        );
        // A list's level misnamed: the files' near miss, by the table's names.
        let out = sbbf(&["probe", t, "array_of_structs.list.item.ab", "1"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.contains("`array_of_structs.list.element.ab`") && !err.contains("col-"),
            "{mode}: {err}"
        );
    }
}

/// What reading a table's snapshot took is reported with the version read: in JSON the
/// table line's `log_reads`, with `--stats` beside the version. A checkpointed Delta table
/// reads its checkpoint hint, the checkpoint and the commits after it (4 objects, whole); an
/// Iceberg table at least its metadata file, manifest list and a manifest.
#[test]
fn a_snapshot_says_what_reading_its_log_took() {
    let delta = lake_dir().join("delta_checkpoint").display().to_string();
    let table = |path: &str| -> Value {
        let out = sbbf(&["probe", path, "id", "150", "--no-index", "--format", "json"]);
        // 1: absent everywhere (ice_basic has no 150).
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}",
            text(&out.stderr)
        );
        let first = text(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        serde_json::from_str::<Value>(&first).unwrap()["table"].clone()
    };
    let sizes = checkpoint_log_bytes();
    let t = table(&delta);
    assert_eq!(t["log_reads"]["bytes"], sizes, "{t}");
    assert!(t["log_reads"]["lists"].as_u64().unwrap() >= 1, "{t}");
    let t = table(&iceberg_table("ice_basic"));
    assert!(t["log_reads"]["gets"].as_u64().unwrap() >= 3, "{t}");
    assert!(t["log_reads"]["bytes"].as_u64().unwrap() > 0, "{t}");

    let out = sbbf(&["probe", &delta, "id", "150", "--no-index", "--stats"]);
    let err = text(&out.stderr);
    assert!(
        err.contains("log read: ") && err.contains(&format!("{sizes} bytes")),
        "{err}"
    );
}

/// The bytes of what opening `testdata/lake/delta_checkpoint` reads of its log: the
/// checkpoint hint, the newest checkpoint and the commits after it.
fn checkpoint_log_bytes() -> u64 {
    checkpoint_snapshot_bytes()
        + std::fs::metadata(lake_dir().join("delta_checkpoint/_delta_log/_last_checkpoint"))
            .unwrap()
            .len()
}

/// The bytes of what delta_checkpoint's snapshot is: its checkpoint and the commits after it
/// (what a store's read takes when one listing page names them all: no hint).
pub(crate) fn checkpoint_snapshot_bytes() -> u64 {
    let log = lake_dir().join("delta_checkpoint/_delta_log");
    [
        "00000000000000000011.checkpoint.parquet",
        "00000000000000000012.json",
        "00000000000000000013.json",
    ]
    .iter()
    .map(|f| std::fs::metadata(log.join(f)).unwrap().len())
    .sum()
}

/// An Iceberg table (pyiceberg's SQL catalog in the folder `argv[1]`) partitioned by
/// identity(p), with one data file that leaves `p` to its partition tuple (p = 5), as the spec
/// lets a writer do (`tools/gen/lake_tables.py`); prints its metadata file and what
/// pyiceberg's scan reads of it.
const ICEBERG_OMITTED_IDENTITY: &str = r#"
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import lake_tables
metadata, t = lake_tables.make_iceberg_omitting_identity(Path(sys.argv[1]).resolve())
print(json.dumps({
    "metadata": metadata,
    "p5": len(t.scan(row_filter="p = 5").to_arrow()),
    "id2": len(t.scan(row_filter="id = 2").to_arrow()),
}))
"#;

/// A data file that leaves an identity partition's source column to its partition tuple (the
/// Iceberg spec allows it; pyiceberg reads the tuple's value): a probe of the column answers
/// "unknown" in that file, with the index or without, never "not in this file" (which reads as
/// absent: a false negative); a query that reads the column is refused (null would be wrong),
/// and one that does not reads what pyiceberg reads.
#[test]
fn a_file_leaving_an_identity_column_to_its_partition_tuple_is_never_absent() {
    let dir = tempfile::tempdir().unwrap();
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/gen");
    let args = [dir.path().to_str().unwrap(), gen.to_str().unwrap()];
    let theirs = venv_json(ICEBERG_OMITTED_IDENTITY, &args);
    assert_eq!(
        (theirs["p5"].as_u64(), theirs["id2"].as_u64()),
        (Some(3), Some(1))
    );
    let table = dir.path().join("ns/t");
    let t = table.to_str().unwrap();
    // Without the index first, then with one of the table's files (built for `id`), which
    // must not be asked of `p`.
    for extra in [&["--no-index"][..], &[][..]] {
        let out = sbbf(&[&["probe", t, "p", "5", "--format", "json"][..], extra].concat());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let line: Value = text(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v.get("file").is_some())
            .unwrap();
        let rg = &line["row_groups"][0];
        assert_eq!(rg["filter"], "not_in_file", "{line}");
        assert_eq!(rg["values"][0]["result"], "unknown", "{line}");
        let out = sbbf(&["index", "build", t, "-c", "id", "--build-missing"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let out = sbbf(&[
        "query",
        t,
        "SELECT count(*) AS n FROM t WHERE p = 5",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("does not hold column `p`"),
        "{}",
        text(&out.stderr)
    );
    let out = sbbf(&[
        "query",
        t,
        "SELECT count(*) AS n FROM t WHERE id = 2",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let n: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(n["n"], theirs["id2"], "{n}");
}
