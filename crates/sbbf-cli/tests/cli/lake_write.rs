//! `sbbf add TABLE` and `sbbf resize TABLE`: filters into a Delta table through one commit,
//! read back by the format's own reader (deltalake 1.6.6 in `tools/.venv`): the same rows at
//! the new version as at the one before, the old version still readable, every current file
//! with the filter. Nothing here compares with our own reading of the table.

use crate::common::{sbbf, text};
use crate::lake::{copy_dir, iceberg_table, lake_dir, oracle, venv_json};
use serde_json::Value;
use std::collections::BTreeSet;
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
    let lake = sbbf_lake::LakeOptions::default();
    let table = sbbf_lake::Table::open(arg, &lake);
    let table = sbbf_parquet::source::block_on(table).unwrap().unwrap();
    let snap = table.snapshot().unwrap();
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
    // The commit says it resized, and which columns' filters it folded (none were named).
    let log = std::fs::read_to_string(table.join("_delta_log/00000000000000000005.json")).unwrap();
    let info: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    let info = &info["commitInfo"];
    assert_eq!(info["operation"], "RESIZE BLOOM FILTERS", "{info}");
    assert_eq!(
        info["operationParameters"]["columns"], r#"["id"]"#,
        "{info}"
    );
    assert_eq!(info["operationParameters"]["resizeFpp"], "0.1", "{info}");
    // The text report words it as a resize.
    let (_other, other) = table_copy("delta_basic");
    let out = sbbf(&["resize", other.to_str().unwrap(), "--fpp", "0.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("1 filter(s) resized")
            && said.contains("swapped for copies with resized filters"),
        "{said}"
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
    // An Iceberg folder whose metadata files its catalog names: committed through the
    // catalog only, and said so.
    let ice = iceberg_table("ice_basic");
    let out = sbbf(&["add", &ice, "-c", "s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--catalog"),
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

/// Columns are checked against the table's schema before any file is read: a column it does
/// not have is refused with the one meant (another case, a typo) or the columns to choose
/// from, and a Delta partition column (its files do not hold it) is refused saying so. Nothing
/// is written, and the exit status is 2, as for one file.
#[test]
fn columns_a_table_does_not_have_are_refused_before_anything_is_written() {
    let (_dir, table) = table_copy("delta_partitioned");
    let t = table.to_str().unwrap();
    let before = std::fs::read_dir(table.join("_delta_log")).unwrap().count();
    for (column, said) in [
        ("nosuch", "its columns: `id`, `s`"),
        ("ID", "did you mean `id`?"),
        ("nosuch.leaf", "no column `nosuch`"),
        ("p", "partition column"),
    ] {
        let out = sbbf(&["add", t, "-c", column]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{column}: {}",
            text(&out.stdout)
        );
        let err = text(&out.stderr);
        assert!(err.contains(said), "{column}: {err}");
        // Beside a column it has: nothing is written either.
        let out = sbbf(&["add", t, "-c", "id", "-c", column]);
        assert_eq!(out.status.code(), Some(2), "id + {column}");
    }
    assert_eq!(
        std::fs::read_dir(table.join("_delta_log")).unwrap().count(),
        before
    );
    // A group (a struct, a list, a map) is no leaf: refused before anything is written.
    let (_dir, table) = table_copy("kernel/table-with-columnmapping-mode-name");
    let t = table.to_str().unwrap();
    let before = std::fs::read_dir(table.join("_delta_log")).unwrap().count();
    for (column, said) in [
        ("nested_struct", "is a struct<"),
        ("array_of_prims", "is a array<"),
        ("map_of_prims", "is a map<"),
    ] {
        let out = sbbf(&["add", t, "-c", column]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{column}: {}",
            text(&out.stdout)
        );
        let err = text(&out.stderr);
        assert!(err.contains(said), "{column}: {err}");
    }
    assert_eq!(
        std::fs::read_dir(table.join("_delta_log")).unwrap().count(),
        before
    );
}

/// A Delta table at `dir/t` of one file per batch, written by arrow-rs, whose log's first
/// version has `schema` (Delta's schema: a list of fields) and adds every file.
fn write_delta(dir: &Path, schema: Value, batches: Vec<arrow::array::RecordBatch>) -> PathBuf {
    let table = dir.join("t");
    std::fs::create_dir_all(table.join("_delta_log")).unwrap();
    let mut log = vec![
        r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#.to_string(),
        serde_json::json!({"metaData": {
            "id": "5a2d6c1e-0000-4000-8000-000000000001",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": serde_json::json!({"type": "struct", "fields": schema}).to_string(),
            "partitionColumns": [], "configuration": {}, "createdTime": 0,
        }})
        .to_string(),
    ];
    for (f, batch) in batches.iter().enumerate() {
        let name = format!("part-{f}.parquet");
        let file = std::fs::File::create(table.join(&name)).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        let size = std::fs::metadata(table.join(&name)).unwrap().len();
        log.push(
            serde_json::json!({"add": {"path": name, "partitionValues": {}, "size": size,
                "modificationTime": 0, "dataChange": true}})
            .to_string(),
        );
    }
    std::fs::write(
        table.join("_delta_log/00000000000000000000.json"),
        log.join("\n") + "\n",
    )
    .unwrap();
    table
}

/// A Delta table of two files with a column `id` and a list `l`, as arrow-rs writes it (its
/// leaf is `l.list.item`); the log says only "array of long", not how files name the leaf.
fn delta_with_a_list(dir: &Path) -> PathBuf {
    use arrow::array::{Int64Array, Int64Builder, ListBuilder, RecordBatch};
    use std::sync::Arc;
    let batches = (0..2i64)
        .map(|f| {
            let mut l = ListBuilder::new(Int64Builder::new());
            for i in 0..100 {
                l.values().append_value(f * 1000 + i);
                l.append(true);
            }
            let ids = Int64Array::from_iter_values(f * 100..f * 100 + 100);
            RecordBatch::try_from_iter([
                ("id", Arc::new(ids) as _),
                ("l", Arc::new(l.finish()) as _),
            ])
            .unwrap()
        })
        .collect();
    let schema = serde_json::json!([
        {"name": "id", "type": "long", "nullable": true, "metadata": {}},
        {"name": "l", "type": {"type": "array", "elementType": "long", "containsNull": true},
            "nullable": true, "metadata": {}},
    ]);
    write_delta(dir, schema, batches)
}

/// A leaf below a list that no data file has (`l.list.element` where the files say
/// `l.list.item`) is refused once the files' footers are read, with the leaf meant, and
/// nothing is left behind: no commit, no copy (also when another column asked was copied).
/// The leaf the files have is added.
#[test]
fn a_leaf_no_file_has_is_refused_with_the_one_meant() {
    let dir = tempfile::tempdir().unwrap();
    let table = delta_with_a_list(dir.path());
    let t = table.to_str().unwrap();
    let names = |p: &Path| -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let (files, log) = (names(&table), names(&table.join("_delta_log")));
    for args in [
        vec!["add", t, "-c", "l.list.element"],
        vec!["add", t, "-c", "id", "-c", "l.list.element"],
    ] {
        let out = sbbf(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stdout)
        );
        let err = text(&out.stderr);
        assert!(
            err.contains("`l.list.element`") && err.contains("did you mean `l.list.item`?"),
            "{err}"
        );
        assert_eq!(names(&table), files, "{args:?}");
        assert_eq!(names(&table.join("_delta_log")), log, "{args:?}");
    }
    let out = sbbf(&["add", t, "-c", "l.list.item"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(names(&table.join("_delta_log")).len(), log.len() + 1);
    let oracle = venv_json(DELTALAKE_READS, &[t, "0"]);
    assert_eq!(
        (oracle["same_rows"].as_bool(), oracle["rows"].as_u64()),
        (Some(true), Some(200))
    );
}

/// Under Delta column mapping the index is built, reported and refused by the table's names:
/// `-c` takes them (top-level and nested), `index build` and `index inspect` show them with
/// the files' physical paths as `column_in_file`, and a leaf the column lacks is refused with
/// its leaves by the table's names.
#[test]
fn the_index_of_a_column_mapped_table_speaks_the_tables_names() {
    let (_dir, table) = table_copy("kernel/table-with-columnmapping-mode-name");
    let t = table.to_str().unwrap();
    let out = sbbf(&["index", "build", t, "-c", "StringType"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("for column `StringType`") && !err.contains("col-"),
        "{err}"
    );
    let out = sbbf(&["add", t, "-c", "StringType", "-c", "nested_struct.aa"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Files changed less than 2 s before a build are not covered (a second change in the
    // same clock tick would not show); these are to be.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let columns = |v: &Value| -> Vec<(String, bool)> {
        v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let in_file = c["column_in_file"].as_str().unwrap_or_default();
                (
                    c["column"].as_str().unwrap().to_string(),
                    in_file.starts_with("col-"),
                )
            })
            .collect()
    };
    let want = vec![
        ("StringType".to_string(), true),
        ("nested_struct.aa".to_string(), true),
    ];
    let out = sbbf(&[
        "index",
        "build",
        t,
        "-c",
        "StringType",
        "-c",
        "nested_struct.aa",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let built: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut got = columns(&built);
    got.sort();
    let mut sorted = want.clone();
    sorted.sort();
    assert_eq!(got, sorted, "{built}");
    let out = sbbf(&["index", "inspect", t, "--format", "json"]);
    let inspected: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut got = columns(&inspected);
    got.sort();
    assert_eq!(got, sorted, "{inspected}");
    assert_eq!(inspected["covered"], 2, "{inspected}");
    let out = sbbf(&["index", "build", t, "-c", "nested_struct.zz"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("`nested_struct.ac.aca`") && !err.contains("col-"),
        "{err}"
    );
}

/// The `.parquet` and `.tmp` files below `dir` (not its log), by path below it.
fn data_files_below(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() && name != "_delta_log" {
                todo.push(path);
            } else if name.ends_with(".parquet") || name.ends_with(".tmp") {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                found.insert(rel);
            }
        }
    }
    found
}

/// The file names (last segments) of a JSON list of URLs.
fn last_segments(urls: &Value) -> BTreeSet<String> {
    let urls = urls.as_array().unwrap().iter();
    urls.map(|f| f.as_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect()
}

/// A worker's part (`sbbf add TABLE -c s --part PART`) of every current file of `table`: the
/// copies written beside their originals, nothing committed (the file list in `dir`).
fn part_of_every_file(dir: &Path, table: &str, part: &Path) {
    let list = dir.join("all.txt");
    std::fs::write(&list, current_files(table).join("\n")).unwrap();
    let list = list.to_str().unwrap();
    let part = part.to_str().unwrap();
    let args = [
        "add",
        table,
        "-c",
        "s",
        "--files-from",
        list,
        "--part",
        part,
    ];
    let out = sbbf(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// What a killed `sbbf add TABLE` leaves is taken up by the next run: copies written and not
/// committed (as a kill between the copies and the commit leaves them; written here as a
/// worker's part, which is the same state) are written again under the same names, not beside
/// them, and a temporary file of an unfinished copy is removed once it has gone unchanged for
/// 15 minutes (a fresher one may be another run's, and is left). deltalake reads the same rows.
#[test]
fn a_killed_adds_leftovers_are_taken_up_by_the_next_run() {
    let (dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    part_of_every_file(dir.path(), arg, &dir.path().join("killed.sbbfcopies"));
    let left = data_files_below(&table);
    let copies: BTreeSet<&String> = left.iter().filter(|f| f.contains("-sbbf-")).collect();
    assert_eq!(copies.len(), 4, "{left:?}");
    // Temporary files of two unfinished copies: one a killed run's (unchanged for an hour),
    // one maybe another run's (just written).
    let folder = table.join(Path::new(copies.iter().next().unwrap()).parent().unwrap());
    let (stale, fresh) = (
        folder.join(".sbbf-killed.tmp"),
        folder.join(".sbbf-fresh.tmp"),
    );
    for t in [&stale, &fresh] {
        std::fs::write(t, b"PAR1 part of a copy").unwrap();
    }
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let out = sbbf(&["add", arg, "-c", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains(".sbbf-killed.tmp removed"), "{said}");
    assert!(!stale.exists() && fresh.exists());
    std::fs::remove_file(&fresh).unwrap();
    // The same copies, committed: no copy beside them.
    let after = data_files_below(&table);
    let copies_after: BTreeSet<&String> = after.iter().filter(|f| f.contains("-sbbf-")).collect();
    assert_eq!(copies_after, copies, "{after:?}");
    let theirs = venv_json(DELTALAKE_READS, &[arg, "2"]);
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    let current = last_segments(&theirs["files"]);
    let named: BTreeSet<String> = copies
        .iter()
        .map(|c| c.rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(current, named, "{theirs}");
}

/// What deltalake reads of the table at `path` now and at version `before`, for large
/// tables: whether the row count and the keys' sum, least and greatest agree, and the current
/// files.
const DELTALAKE_COUNTS: &str = r#"
import json, sys
import pyarrow.compute as pc
from deltalake import DeltaTable
path, before = sys.argv[1], int(sys.argv[2])
def summary(t):
    k = t.to_pyarrow_table().column("k")
    return [len(k), pc.sum(k).as_py(), pc.min(k).as_py(), pc.max(k).as_py()]
new = DeltaTable(path)
print(json.dumps({
    "same_rows": summary(DeltaTable(path, version=before)) == summary(new),
    "files": sorted(new.file_uris()),
}), flush=True)
# deltalake 1.6.6 with pyarrow's reads on a busy machine sometimes aborts while the
# interpreter shuts down ("terminate called without an active exception"), after the answer:
# leave without the shutdown.
import os
os._exit(0)
"#;

/// `sbbf add TABLE` killed (SIGKILL) at several moments, then run again: whatever the moment,
/// the rerun leaves every finished copy named by the table (none beside them: the rerun wrote
/// the killed run's copies again under their names) and deltalake reads the same rows. Only
/// temporary files of the copies the kill cut short may stay (fresh: see above).
#[test]
fn add_killed_at_any_moment_then_rerun_leaves_only_named_copies() {
    use std::time::Duration;
    let made = tempfile::tempdir().unwrap();
    let original = delta_of_ints(made.path(), 6, 250_000);
    for delay_ms in [0u64, 50, 150, 1000] {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t");
        copy_dir(&original, &table);
        let arg = table.to_str().unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sbbf"))
            .args(["add", arg, "-c", "k"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let out = sbbf(&["add", arg, "-c", "k"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{delay_ms} ms: {}",
            text(&out.stderr)
        );
        let theirs = venv_json(DELTALAKE_COUNTS, &[arg, "0"]);
        assert_eq!(theirs["same_rows"], true, "{delay_ms} ms: {theirs}");
        let current = last_segments(&theirs["files"]);
        let copies: BTreeSet<String> = data_files_below(&table)
            .into_iter()
            .filter(|f| f.contains("-sbbf-") && !f.ends_with(".tmp"))
            .collect();
        assert!(
            copies.is_subset(&current),
            "{delay_ms} ms: {copies:?} beside {current:?}"
        );
        assert_eq!(current.len(), 6, "{delay_ms} ms: {current:?}");
        assert!(current.iter().all(|f| f.contains("-sbbf-")), "{current:?}");
    }
}

/// A Delta table of `files` files of `rows` rows each: `k`, random-looking 64-bit keys.
fn delta_of_ints(dir: &Path, files: i64, rows: i64) -> PathBuf {
    use arrow::array::{Int64Array, RecordBatch};
    use std::sync::Arc;
    let batches = (0..files)
        .map(|f| {
            let keys =
                (0..rows).map(|i| (f * rows + i).wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64));
            let keys = Int64Array::from_iter_values(keys);
            RecordBatch::try_from_iter([("k", Arc::new(keys) as _)]).unwrap()
        })
        .collect();
    let schema =
        serde_json::json!([{"name": "k", "type": "long", "nullable": true, "metadata": {}}]);
    write_delta(dir, schema, batches)
}

/// The data files `sbbf inspect TABLE` names, as a worker's list takes them.
fn current_files(table: &str) -> Vec<String> {
    let out = sbbf(&["inspect", table, "--format", "json"]);
    text(&out.stdout)
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            Some(v.get("file")?.as_str()?.to_string())
        })
        .collect()
}

#[test]
fn workers_write_parts_and_one_commit_swaps_them_all() {
    let (dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let files = current_files(arg);
    assert_eq!(files.len(), 4);
    let parts = dir.path().join("parts");
    for (i, share) in files.chunks(2).enumerate() {
        let list = dir.path().join(format!("share{i}.txt"));
        std::fs::write(&list, share.join("\n")).unwrap();
        let part = parts.join(format!("{i}.sbbfcopies"));
        let out = sbbf(&[
            "add",
            arg,
            "-c",
            "s",
            "--files-from",
            list.to_str().unwrap(),
            "--part",
            part.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    // Nothing is committed until the parts are.
    assert!(!table.join("_delta_log/00000000000000000003.json").exists());
    let parts_arg = parts.to_str().unwrap();
    let out = sbbf(&["commit", arg, parts_arg, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let done: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(done["committed_version"], 3, "{done}");
    assert_eq!(done["swapped"].as_array().unwrap().len(), 4);
    let theirs = venv_json(DELTALAKE_READS, &[arg, "2"]);
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    for f in theirs["files"].as_array().unwrap() {
        assert!(has_filter(f.as_str().unwrap(), "s"), "{f}");
    }
    // The same parts again: committed already, and the table's files are left alone.
    let out = sbbf(&["commit", arg, parts_arg, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let again: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(again["committed_version"], Value::Null, "{again}");
    assert_eq!(again["withdrawn"].as_array().unwrap().len(), 0, "{again}");
    let after = venv_json(DELTALAKE_READS, &[arg, "2"]);
    assert_eq!(after["files"], theirs["files"]);
    assert_eq!(after["same_rows"], true, "{after}");
}

/// The copies under `table` (named `...-sbbf-...`), relative to it.
fn copies_on_disk(table: &Path) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            match p.is_dir() {
                true => walk(&p, out),
                false => out.push(p),
            }
        }
    }
    let mut all = Vec::new();
    walk(table, &mut all);
    let mut out: Vec<String> = all
        .iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.contains("-sbbf-") && name.ends_with(".parquet")
        })
        .map(|p| p.strip_prefix(table).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

/// Parts written, then deltalake deletes a partition's files before they are committed: the
/// commit swaps the others, leaves those out (exit status 1, saying to run the workers again)
/// and deletes their copies, which no version names. The same parts committed again after a
/// later delete removed committed copies: those copies are named by the log (an older version
/// reads them) and are kept.
#[test]
fn a_commit_deletes_the_copies_of_files_removed_meanwhile_that_no_version_names() {
    let (dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let part = dir.path().join("parts/0.sbbfcopies");
    part_of_every_file(dir.path(), arg, &part);
    assert_eq!(copies_on_disk(&table).len(), 4);
    let delete = r#"
import sys
from deltalake import DeltaTable
DeltaTable(sys.argv[1]).delete(sys.argv[2])
print("{}")
"#;
    venv_json(delete, &[arg, "p = 'a'"]);
    let out = sbbf(&["commit", arg, part.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("run the workers'"),
        "{}",
        text(&out.stderr)
    );
    let done: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(done["withdrawn"].as_array().unwrap().len(), 2, "{done}");
    assert_eq!(done["swapped"].as_array().unwrap().len(), 2, "{done}");
    // Only the committed copies are left: deltalake's current files.
    let theirs = venv_json(DELTALAKE_READS, &[arg, "3"]);
    let current: Vec<String> = theirs["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let p = Path::new(f.as_str().unwrap());
            let p = std::fs::canonicalize(p).unwrap();
            let root = std::fs::canonicalize(&table).unwrap();
            p.strip_prefix(root).unwrap().display().to_string()
        })
        .collect();
    assert_eq!(copies_on_disk(&table), current, "{done}");
    // Parts committed, a later delete removes some of the committed copies, and the same
    // parts are committed again: those copies are named by the log (version 3 reads them)
    // and are kept.
    let (dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let part = dir.path().join("parts/0.sbbfcopies");
    part_of_every_file(dir.path(), arg, &part);
    let out = sbbf(&["commit", arg, part.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let committed = copies_on_disk(&table);
    assert_eq!(committed.len(), 4);
    venv_json(delete, &[arg, "p = 'c'"]);
    let out = sbbf(&["commit", arg, part.to_str().unwrap(), "--format", "json"]);
    assert_ne!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(copies_on_disk(&table), committed);
}

#[test]
fn parts_that_do_not_belong_together_are_refused() {
    let (dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let files = current_files(arg);
    let list = dir.path().join("share.txt");
    std::fs::write(&list, &files[0]).unwrap();
    let part = |name: &str, column: &str| {
        let out_path = dir.path().join(name);
        let out = sbbf(&[
            "add",
            arg,
            "-c",
            column,
            "--files-from",
            list.to_str().unwrap(),
            "--part",
            out_path.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        out_path
    };
    let a = part("a.sbbfcopies", "s");
    let b = part("b.sbbfcopies", "s");
    let refused = |parts: &[&Path], why: &str| {
        let mut args = vec!["commit", arg];
        args.extend(parts.iter().map(|p| p.to_str().unwrap()));
        let out = sbbf(&args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
        assert!(text(&out.stderr).contains(why), "{}", text(&out.stderr));
        assert!(!table.join("_delta_log/00000000000000000003.json").exists());
    };
    // One file in two parts.
    refused(&[&a, &b], "another part too");
    // A copy that does not lie beside its original (a part is input like any file).
    let hostile = dir.path().join("hostile.sbbfcopies");
    let text_a = std::fs::read_to_string(&a).unwrap();
    let v: Value = serde_json::from_str(&text_a).unwrap();
    let new_path = v["copies"][0]["new_path"].as_str().unwrap().to_string();
    std::fs::write(
        &hostile,
        text_a.replace(&format!("\"{new_path}\""), "\"../elsewhere.parquet\""),
    )
    .unwrap();
    refused(&[&hostile], "does not lie beside it");
    // Damaged.
    std::fs::write(&hostile, &text_a[..text_a.len() / 2]).unwrap();
    refused(&[&hostile], "not JSON");
    // Another operation.
    let c = part("c.sbbfcopies", "id");
    std::fs::remove_file(&b).unwrap();
    let d = dir.path().join("d.sbbfcopies");
    std::fs::copy(&c, &d).unwrap();
    refused(&[&a, &d], "differ from the first part's");
}

#[test]
fn a_file_that_cannot_be_copied_stops_the_write_and_leaves_nothing() {
    let (_dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let files = current_files(arg);
    // The last file in the log's order is damaged (its size kept): the copies of the others,
    // written meanwhile, are removed again.
    let victim = Path::new(files.last().unwrap());
    let len = std::fs::metadata(victim).unwrap().len() as usize;
    std::fs::write(victim, vec![0u8; len]).unwrap();
    let out = sbbf(&["add", arg, "-c", "s"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(!text(&out.stderr).is_empty());
    assert!(!table.join("_delta_log/00000000000000000003.json").exists());
    fn copies(p: &Path) -> usize {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| match p.is_dir() {
                true => copies(&p),
                false => usize::from(p.to_string_lossy().contains("-sbbf-")),
            })
            .sum()
    }
    assert_eq!(copies(&table), 0);
}

/// The index of a Delta table records the version it was built from; `sbbf add TABLE` swaps
/// every file and the index follows in the same run (the copies take their originals'
/// entries: `s` is not indexed), so a probe of the new version answers every file from it,
/// finds the copy holding the value and names no removed file; `index update` then has
/// nothing to read.
#[test]
fn the_index_records_the_table_version_and_later_versions_probe_what_it_does_not_know() {
    let (_dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let json = |args: &[&str]| -> Value {
        let out = sbbf(args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_str(text(&out.stdout).trim()).unwrap()
    };
    let built = json(&["index", "build", arg, "-c", "id", "--format", "json"]);
    assert_eq!(built["table_version"], 2, "{built}");
    assert_eq!(
        json(&["index", "inspect", arg, "--format", "json"])["table_version"],
        2
    );
    let added = json(&["add", arg, "-c", "s", "--format", "json"]);
    assert_eq!(added["committed_version"], 3);
    // id 6 is in one current file (p=a; the p=b files, ids 1, 4, 7, ..., were deleted): its
    // copy, found though the index knows only the originals.
    let listed = |arg: &str| -> Vec<String> {
        let out = sbbf(&["probe", arg, "id", "6", "-l"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout).lines().map(str::to_string).collect()
    };
    let stats = |arg: &str| -> Value {
        let out = sbbf(&["probe", arg, "id", "6", "--stats", "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stderr)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v.get("index").cloned())
            .expect("an index stats line")
    };
    let files = listed(arg);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].contains("-sbbf-"), "{files:?}");
    let st = stats(arg);
    assert_eq!(st["index_version"], 3, "{st}");
    assert_eq!(st["from_index"], 4, "{st}");
    assert_eq!(st["direct"], 0, "{st}");
    let updated = json(&["index", "update", arg, "--format", "json"]);
    assert_eq!(updated["table_version"], 3, "{updated}");
    assert_eq!(
        (
            updated["files_read"].as_u64(),
            updated["files_kept"].as_u64(),
            updated["files_gone"].as_u64()
        ),
        (Some(0), Some(4), Some(0)),
        "{updated}"
    );
    let st = stats(arg);
    assert_eq!(st["index_version"], 3, "{st}");
    assert_eq!(st["from_index"], 4, "{st}");
    assert_eq!(listed(arg), files);
}
