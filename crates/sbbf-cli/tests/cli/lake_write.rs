//! `sbbf add TABLE` and `sbbf resize TABLE`: filters into a Delta table through one commit,
//! read back by the format's own reader (deltalake 1.6.6 in `tools/.venv`): the same rows at
//! the new version as at the one before, the old version still readable, every current file
//! with the filter. Nothing here compares with our own reading of the table.

use crate::common::{sbbf, text};
use crate::lake::{copy_dir, iceberg_table, lake_dir, oracle, venv_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What deltalake reads of the table at `path` at version `before` and now: whether the rows
/// (sorted, whole) are the same, the files of each, the newest commit's operation and the
/// `dataChange` flag of each of its file actions.
const DELTALAKE_READS: &str = r#"
import json, sys
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder
path, before = sys.argv[1], int(sys.argv[2])
old, new = DeltaTable(path, version=before), DeltaTable(path)
# deltalake's SQL engine: its pyarrow reader does not apply deletion vectors.
def rows(t):
    got = pa.table(QueryBuilder().register("t", t).execute("SELECT * FROM t").read_all())
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in got.to_pylist())
log = "%s/_delta_log/%020d.json" % (path, new.version())
actions = [json.loads(l) for l in open(log)] if new.version() != before else []
print(json.dumps({
    "version": new.version(),
    "same_rows": rows(old) == rows(new),
    "rows": len(rows(new)),
    "old_files": sorted(old.file_uris()),
    "files": sorted(new.file_uris()),
    "operation": new.history(1)[0].get("operation"),
    "data_change": [a[k]["dataChange"] for a in actions for k in ("add", "remove") if k in a],
    "partitions": sorted(json.dumps(a["add"]["partitionValues"], sort_keys=True) for a in actions if "add" in a),
}))
"#;

/// A copy of the test table `name` (below `testdata/lake`) in a fresh folder.
fn table_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(Path::new(name).file_name().unwrap());
    copy_dir(&lake_dir().join(name), &to);
    (dir, to)
}

/// Whether every row group of the file at `uri` (a path or `file://` URL) has a filter for
/// the column files name `column`.
fn has_filter(uri: &str, column: &str) -> bool {
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let pq = sbbf_parquet::ParquetFile::open(std::fs::File::open(path).unwrap()).unwrap();
    let c = pq.column_index(column).unwrap();
    pq.filter_locations(c).iter().all(|l| l.offset.is_some())
}

/// The name files have for the table's column `column` (Delta column mapping).
fn file_column(table: &Path, column: &str) -> String {
    let arg = table.to_str().unwrap();
    let snap =
        sbbf_parquet::source::block_on(sbbf_parquet::lake::snapshot(arg, &Default::default()))
            .unwrap()
            .unwrap()
            .unwrap();
    snap.file_column(column).unwrap()
}

/// Runs `sbbf add TABLE -c column --format json` on a copy of `name` and checks what deltalake
/// reads afterwards; the deltalake answer.
fn add_and_read_back(name: &str, column: &str, before: i64) -> Value {
    let (_dir, table) = table_copy(name);
    let arg = table.to_str().unwrap();
    let out = sbbf(&["add", arg, "-c", column, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ours: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(ours["read_version"], before);
    assert_eq!(ours["committed_version"], before + 1);
    let theirs = venv_json(DELTALAKE_READS, &[arg, &before.to_string()]);
    assert_eq!(theirs["version"], before + 1, "{theirs}");
    assert_eq!(theirs["same_rows"], true, "{name}: {theirs}");
    assert_eq!(theirs["operation"], "ADD BLOOM FILTERS");
    let flags = theirs["data_change"].as_array().unwrap();
    assert!(
        !flags.is_empty() && flags.iter().all(|f| f == false),
        "{theirs}"
    );
    // The old version still reads its own files, which are all still there.
    for f in theirs["old_files"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        assert!(
            Path::new(f.strip_prefix("file://").unwrap_or(f)).exists(),
            "{f}"
        );
    }
    let physical = file_column(&table, column);
    for f in theirs["files"].as_array().unwrap() {
        assert!(
            has_filter(f.as_str().unwrap(), &physical),
            "{f} lacks {physical}"
        );
    }
    // A second run finds nothing to do and commits nothing.
    let again = sbbf(&["add", arg, "-c", column, "--format", "json"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    let again: Value = serde_json::from_str(text(&again.stdout).trim()).unwrap();
    assert_eq!(again["committed_version"], Value::Null);
    assert!(!table
        .join(format!("_delta_log/{:020}.json", before + 2))
        .exists());
    theirs
}

#[test]
fn a_delta_table_gets_filters_through_one_commit() {
    // delta_basic: one current file of 2,500 rows and four removed ones in the folder.
    let theirs = add_and_read_back("delta_basic", "s", 4);
    let last = &oracle("delta_basic")["versions"][4];
    assert_eq!(theirs["rows"], last["row_count"]);
    assert_eq!(theirs["files"].as_array().unwrap().len(), 1);
    let file = theirs["files"][0].as_str().unwrap();
    assert!(file.contains("-sbbf-"), "{file}");
}

#[test]
fn partition_values_deletion_vectors_and_mapped_columns_are_carried_over() {
    // Partitioned by `p`: each copy in its original's partition folder, with its values.
    let theirs = add_and_read_back("delta_partitioned", "s", 2);
    let partitions = theirs["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 4);
    assert!(partitions.iter().all(|p| p != r#"{"p": null}"#), "{theirs}");
    for f in theirs["files"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        assert!(f.contains("/p=a/") || f.contains("/p=c/"), "{f}");
    }
    // A deletion vector stays with its rows: deltalake reads 8 of the 10.
    let theirs = add_and_read_back("kernel/table-with-dv-small", "value", 1);
    assert_eq!(theirs["rows"], 8);
    // Column mapping: the table's name, the files' physical name.
    add_and_read_back("kernel/table-with-columnmapping-mode-name", "LongType", 0);
    // Version 2 checkpoints.
    add_and_read_back("kernel/v2-checkpoints-parquet-without-sidecars", "id", 2);
}

#[test]
fn a_resize_of_a_table_commits_only_files_whose_filters_shrink() {
    let (_dir, table) = table_copy("delta_basic");
    let arg = table.to_str().unwrap();
    // deltalake sized the `id` filters for 1,000 or 3,000 values at 1 %: folding to 10 %
    // shrinks the current file's.
    let out = sbbf(&["resize", arg, "--fpp", "0.1", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ours: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(ours["committed_version"], 5, "{ours}");
    let theirs = venv_json(DELTALAKE_READS, &[arg, "4"]);
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    let swapped = &ours["swapped"][0];
    assert!(
        swapped["file_bytes_after"].as_u64() < swapped["file_bytes_before"].as_u64(),
        "{ours}"
    );
    // At 10 % already: nothing shrinks, nothing is committed.
    let out = sbbf(&["resize", arg, "--fpp", "0.1", "--format", "json"]);
    let again: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(again["committed_version"], Value::Null, "{again}");
}

#[test]
fn tables_that_cannot_be_written_are_refused_before_anything_is_written() {
    // A writer feature whose rules we do not know.
    let (_dir, table) = table_copy("delta_basic");
    std::fs::write(
        table.join("_delta_log/00000000000000000005.json"),
        concat!(
            r#"{"commitInfo":{"timestamp":1796458700000,"operation":"SET TBLPROPERTIES"}}"#,
            "\n",
            r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","futureWriterRule"]}}"#,
            "\n"
        ),
    )
    .unwrap();
    fn listing(p: &Path) -> Vec<PathBuf> {
        let mut names = Vec::new();
        for e in std::fs::read_dir(p).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                names.extend(listing(&path));
            }
            names.push(path);
        }
        names.sort();
        names
    }
    let before = listing(&table);
    let out = sbbf(&["add", table.to_str().unwrap(), "-c", "s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("futureWriterRule"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(listing(&table), before);
    // -o or --in-place name a file's output; a table's goes in through a commit.
    let out = sbbf(&["add", table.to_str().unwrap(), "-c", "s", "--in-place"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("Delta table"),
        "{}",
        text(&out.stderr)
    );
    // An Iceberg table: not written yet, and said so.
    let ice = iceberg_table("ice_basic");
    let out = sbbf(&["add", &ice, "-c", "s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("Iceberg"),
        "{}",
        text(&out.stderr)
    );
    // A file still needs -o or --in-place.
    let file = lake_dir().join("../pa_ints.parquet");
    let out = sbbf(&["add", file.to_str().unwrap(), "-c", "i32"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("-o NEW_FILE"),
        "{}",
        text(&out.stderr)
    );
}
