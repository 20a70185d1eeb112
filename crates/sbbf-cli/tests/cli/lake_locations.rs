//! Lake tables however they are named and laid out: a `file://` URL reads exactly as the path
//! it names (a table found as a table, never listed as a folder of Parquet files, whose removed
//! files would be counted), a Delta partition column is answered from the log's values (its
//! files do not hold it), and a query reads a partitioned table whatever folders its files lie
//! in. Counts and file lists are the formats' own readers' (the oracle files of `testdata/lake`,
//! deltalake's SQL engine); where a URL is checked against its path, the path's answer was
//! checked against those readers elsewhere and the two must agree byte for byte.

use crate::common::{sbbf, text};
use crate::lake::{copy_dir, iceberg_table, lake_dir, oracle, venv_json};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// `file://` + the absolute path of `p` (with a trailing `/` when `slash`).
fn file_url(p: &Path, slash: bool) -> String {
    let abs = std::fs::canonicalize(p).unwrap();
    let url = url_of(abs.to_str().unwrap());
    match slash {
        true => format!("{url}/"),
        false => url,
    }
}

/// `file://` + an absolute path, percent-escaping what a URL path cannot hold as it is.
fn url_of(abs: &str) -> String {
    let mut out = String::from("file://");
    for c in abs.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '%' => out.push_str("%25"),
            '#' => out.push_str("%23"),
            '?' => out.push_str("%3F"),
            c => out.push(c),
        }
    }
    out
}

/// The current row count of a test table, as its format's reader counted it.
fn oracle_rows(name: &str) -> i64 {
    let o = oracle(name);
    o["versions"].as_array().unwrap().last().unwrap()["row_count"]
        .as_i64()
        .unwrap()
}

#[cfg(feature = "query")]
fn count(table: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "query",
        table,
        "SELECT count(*) AS n FROM t",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = sbbf(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    row["n"].clone()
}

/// The `*.metadata.json` files of an Iceberg `metadata/` folder, in name order (oldest first).
fn metadata_files(meta: &Path) -> Vec<std::path::PathBuf> {
    let mut numbered: Vec<_> = std::fs::read_dir(meta)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .collect();
    numbered.sort();
    numbered
}

/// A `file://` URL of a Delta table, with and without its trailing slash, counts what the
/// table holds (deltalake's count), not every Parquet file of its folder; so does an Iceberg
/// table's folder (pyiceberg's count) and `--table NAME=file://...`.
#[cfg(feature = "query")]
#[test]
fn a_file_url_queries_the_table_not_its_folder() {
    let delta = lake_dir().join("delta_basic");
    let iceberg = iceberg_table("ice_basic");
    for (path, name) in [
        (delta.clone(), "delta_basic"),
        (Path::new(&iceberg).to_path_buf(), "ice_basic"),
    ] {
        let want = oracle_rows(name);
        for slash in [true, false] {
            let url = file_url(&path, slash);
            assert_eq!(count(&url, &[]), want, "{url}");
            assert_eq!(count(&url, &["--no-sbbf"]), want, "{url}");
        }
    }
    // Beside t, a table named by URL.
    let plain = lake_dir().join("../pa_ints.parquet");
    let spec = format!("o={}", file_url(&delta, true));
    let out = sbbf(&[
        "query",
        plain.to_str().unwrap(),
        "SELECT count(*) AS n FROM o",
        "--table",
        &spec,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(row["n"], oracle_rows("delta_basic"));
    // A URL naming another host is refused, saying what a file URL must be.
    let out = sbbf(&["query", "file://elsewhere/t/", "SELECT 1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("file:///PATH"),
        "{}",
        text(&out.stderr)
    );
}

/// `probe`, `inspect`, `verify` and `index inspect` of a `file://` URL print what they print
/// for the path it names (a Delta table, an Iceberg table, a plain folder, one file).
#[test]
fn every_reading_command_reads_a_file_url_as_its_path() {
    let delta = lake_dir().join("delta_basic");
    let iceberg = iceberg_table("ice_basic");
    let folder = lake_dir().join("delta_basic");
    let one = lake_dir().join("../pa_ints.parquet");
    let cases: Vec<(std::path::PathBuf, Vec<&str>)> = vec![
        (
            delta.clone(),
            vec!["probe", "@", "id", "7", "--format", "json"],
        ),
        (delta.clone(), vec!["probe", "@", "id", "7", "-l"]),
        (
            Path::new(&iceberg).into(),
            vec!["probe", "@", "id", "7", "--format", "json"],
        ),
        (
            folder.clone(),
            vec!["probe", "@", "id", "7", "--as-directory", "-l"],
        ),
        (one.clone(), vec!["inspect", "@", "--format", "json"]),
        (delta.clone(), vec!["inspect", "@", "--format", "json"]),
        (delta.clone(), vec!["verify", "@", "--format", "json"]),
    ];
    for (path, args) in cases {
        let abs = std::fs::canonicalize(&path).unwrap();
        let abs = abs.to_str().unwrap();
        let run = |loc: &str| {
            let a: Vec<&str> = args
                .iter()
                .map(|x| if *x == "@" { loc } else { x })
                .collect();
            let out = sbbf(&a);
            (out.status.code(), text(&out.stdout), text(&out.stderr))
        };
        let slash = if path.is_dir() { "/" } else { "" };
        let by_path = run(&format!("{abs}{slash}"));
        assert_ne!(by_path.0, Some(2), "{args:?} {abs}: {}", by_path.2);
        let by_url = run(&format!("{}{slash}", url_of(abs)));
        assert_eq!(by_url.0, by_path.0, "{args:?}: {}", by_url.2);
        assert_eq!(by_url.1, by_path.1, "{args:?} {abs}");
    }
}

/// An index is built and read through a `file://` URL as through the table's path.
#[test]
fn an_index_is_built_through_a_file_url() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    copy_dir(&lake_dir().join("delta_basic"), &table);
    // Files changed less than 2 s before a build are not covered.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let url = file_url(&table, true);
    let out = sbbf(&["index", "build", &url, "-c", "id"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(table.join("_sbbf_index").exists());
    let out = sbbf(&["index", "inspect", &url, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = sbbf(&["probe", &url, "id", "7", "--stats"]);
    assert_ne!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("1 of 1 file(s) answered by the index"),
        "{}",
        text(&out.stdout)
    );
}

/// The files of `probe TABLE COLUMN VALUE --format json` that may hold the value, and those
/// it rules out, relative to the table.
fn maybe_and_absent(
    table: &str,
    column: &str,
    value: &str,
    extra: &[&str],
) -> (Vec<String>, Vec<String>) {
    let mut args = vec!["probe", table, column, value, "--format", "json"];
    args.extend_from_slice(extra);
    let out = sbbf(&args);
    assert_ne!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        text(&out.stderr)
    );
    let prefix = format!("{}/", table.trim_end_matches('/'));
    let (mut maybe, mut absent) = (Vec::new(), Vec::new());
    for line in text(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(f) = v.get("file").and_then(Value::as_str) else {
            continue;
        };
        assert!(v.get("error").is_none(), "{line}");
        let rel = f.strip_prefix(&prefix).unwrap_or(f).to_string();
        let rgs = v["row_groups"].as_array().unwrap();
        assert!(
            !rgs.is_empty(),
            "{line}: a file's every row group is answered"
        );
        let results: BTreeSet<&str> = rgs
            .iter()
            .flat_map(|rg| rg["values"].as_array().unwrap())
            .map(|x| x["result"].as_str().unwrap())
            .collect();
        for rg in rgs {
            assert_eq!(rg["filter"], "partition", "{line}");
        }
        match results.contains("maybe") {
            true => maybe.push(rel),
            false => absent.push(rel),
        }
    }
    maybe.sort();
    absent.sort();
    (maybe, absent)
}

/// A Delta partition column probed: the files whose partition value (in the log) is the value
/// may hold it in every row group, every other current file holds it in none; `-l` names the
/// former, with the index as without it. The files are deltalake's current ones.
#[test]
fn a_partition_column_is_answered_from_the_logs_values() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    copy_dir(&lake_dir().join("delta_partitioned"), &table);
    let t = table.to_str().unwrap();
    let o = oracle("delta_partitioned");
    let current: Vec<String> = o["versions"].as_array().unwrap().last().unwrap()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let under = |p: &str| -> Vec<String> {
        current
            .iter()
            .filter(|f| f.starts_with(&format!("p={p}/")))
            .cloned()
            .collect()
    };
    let others = |p: &str| -> Vec<String> {
        current
            .iter()
            .filter(|f| !f.starts_with(&format!("p={p}/")))
            .cloned()
            .collect()
    };
    assert!(!under("a").is_empty() && !under("c").is_empty());
    for round in ["no index", "index"] {
        if round == "index" {
            let out = sbbf(&["index", "build", t, "-c", "id"]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        }
        for value in ["a", "c", "b", "zz"] {
            let (maybe, absent) = maybe_and_absent(t, "p", value, &[]);
            assert_eq!(maybe, under(value), "{round}: p = {value}");
            assert_eq!(absent, others(value), "{round}: p = {value}");
        }
        let out = sbbf(&["probe", t, "p", "a", "-l"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let listed: Vec<String> = text(&out.stdout)
            .lines()
            .map(|l| l.strip_prefix(&format!("{t}/")).unwrap_or(l).to_string())
            .collect();
        assert_eq!(listed, under("a"), "{round}");
        // Text says where the answer came from, never "not in this file".
        let out = sbbf(&["probe", t, "p", "c"]);
        let said = text(&out.stdout);
        assert!(!said.contains("not in this file"), "{said}");
        assert!(said.contains("partition value"), "{said}");
    }
}

/// What deltalake writes under column mapping (files in folders like `52/`) and what Spark
/// writes (`col-<uuid>=7/`, laid out here by moving deltalake's files and naming them so in
/// the log): partition values are the log's whatever the folders say. Every count is
/// deltalake's SQL engine's; a version with no data file yet counts 0.
#[cfg(feature = "query")]
#[test]
fn a_partitioned_table_is_queried_whatever_its_folders_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let script = r#"
import json, os, sys
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder, write_deltalake
root = sys.argv[1]
ids = list(range(60))
t = pa.table({"id": pa.array(ids, pa.int64()),
              "p": pa.array([i % 4 if i % 7 else None for i in ids], pa.int32()),
              "User Name": pa.array([f"u{i % 5}" for i in ids], pa.string())})
mapped, spark, empty = (os.path.join(root, n) for n in ("mapped", "spark", "empty"))
for path in (mapped, spark):
    write_deltalake(path, t.slice(0, 30), partition_by=["p"],
                    configuration={"delta.columnMapping.mode": "name"})
    write_deltalake(path, t.slice(30), partition_by=["p"], mode="append")
# Spark's layout: each file in a folder named by the column's physical name and its value.
schema = json.loads(DeltaTable(spark).schema().to_json())
phys = [f["metadata"]["delta.columnMapping.physicalName"] for f in schema["fields"]
        if f["name"] == "p"][0]
log = os.path.join(spark, "_delta_log")
for name in sorted(os.listdir(log)):
    if not name.endswith(".json"):
        continue
    lines = []
    for line in open(os.path.join(log, name)):
        a = json.loads(line)
        if "add" in a:
            v = a["add"]["partitionValues"].get(phys)
            folder = f"{phys}={'__HIVE_DEFAULT_PARTITION__' if v is None else v}"
            new = f"{folder}/{os.path.basename(a['add']['path'])}"
            os.makedirs(os.path.join(spark, folder), exist_ok=True)
            os.rename(os.path.join(spark, a["add"]["path"]), os.path.join(spark, new))
            a["add"]["path"] = new
        lines.append(json.dumps(a))
    open(os.path.join(log, name), "w").write("\n".join(lines) + "\n")
# A table created partitioned, with no file at version 0.
write_deltalake(empty, t.slice(0, 0), partition_by=["p"])
write_deltalake(empty, t.slice(0, 10), partition_by=["p"], mode="append")
out = {}
for path in (mapped, spark):
    dt = DeltaTable(path)
    sql = lambda q: pa.table(QueryBuilder().register("t", dt).execute(q).read_all()).to_pylist()
    out[path] = {
        "all": sql("SELECT count(*) AS n FROM t")[0]["n"],
        "p2": sql("SELECT count(*) AS n FROM t WHERE p = 2")[0]["n"],
        "null": sql("SELECT count(*) AS n FROM t WHERE p IS NULL")[0]["n"],
        "groups": sql('SELECT p, count(*) AS n, count("User Name") AS u FROM t GROUP BY p ORDER BY p'),
        "folders": sorted({os.path.dirname(os.path.relpath(u, path)) for u in dt.file_uris()}),
    }
out["empty0"] = len(DeltaTable(empty, version=0).file_uris())
print(json.dumps({"tables": out, "empty": empty}))
"#;
    let theirs = venv_json(script, &[root]);
    let tables = theirs["tables"].as_object().unwrap();
    for (path, want) in tables.iter().filter(|(k, _)| *k != "empty0") {
        // The layouts are the ones meant: no folder names the column as `p=`.
        let folders = want["folders"].as_array().unwrap();
        assert!(
            folders
                .iter()
                .all(|f| !f.as_str().unwrap().starts_with("p=")),
            "{folders:?}"
        );
        for extra in [&[][..], &["--no-sbbf"][..]] {
            let q = |sql: &str| -> Vec<Value> {
                let mut args = vec!["query", path.as_str(), sql, "--format", "json"];
                args.extend_from_slice(extra);
                let out = sbbf(&args);
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{path} {sql}: {}",
                    text(&out.stderr)
                );
                text(&out.stdout)
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect()
            };
            assert_eq!(
                q("SELECT count(*) AS n FROM t")[0]["n"],
                want["all"],
                "{path}"
            );
            assert_eq!(
                q("SELECT count(*) AS n FROM t WHERE p = 2")[0]["n"],
                want["p2"],
                "{path}"
            );
            assert_eq!(
                q("SELECT count(*) AS n FROM t WHERE p IS NULL")[0]["n"],
                want["null"],
                "{path}"
            );
            let groups = q(
                r#"SELECT p, count(*) AS n, count("User Name") AS u FROM t GROUP BY p ORDER BY p"#,
            );
            let key = |g: &Value| (g["p"].clone(), g["n"].clone(), g["u"].clone());
            let ours: Vec<_> = groups.iter().map(key).collect();
            let want: Vec<_> = want["groups"].as_array().unwrap().iter().map(key).collect();
            assert_eq!(ours, want, "{path} {extra:?}");
        }
        // The probe answers from the log's values there too.
        let (maybe, _) = maybe_and_absent(path, "p", "2", &[]);
        assert!(!maybe.is_empty(), "{path}");
    }
    // Version 0 of a table created partitioned has no data file: 0 rows.
    assert_eq!(theirs["tables"]["empty0"], 0);
    let empty = theirs["empty"].as_str().unwrap();
    let out = sbbf(&[
        "query",
        empty,
        "SELECT count(*) AS n, count(p) AS c FROM t",
        "--as-of",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(row["n"], 0);
    let out = sbbf(&[
        "query",
        empty,
        "SELECT p FROM t WHERE p = 1",
        "--as-of",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// Under Delta column mapping, columns are named by the table's names, a dot inside a name
/// escaped (`a\.b`), in `probe`, `add` and `index build`: each finds the column deltalake
/// wrote (the files name it `col-<uuid>`), and a value the table holds is never ruled out.
#[test]
fn column_mapped_names_with_dots_and_spaces_are_found_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("cm");
    let t = table.to_str().unwrap();
    let script = r#"
import json, sys
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
t = pa.table({"a.b": pa.array(range(40), pa.int64()),
              "User Name": pa.array([f"u{i}" for i in range(40)], pa.string())})
write_deltalake(sys.argv[1], t, configuration={"delta.columnMapping.mode": "name"})
print(json.dumps({"files": len(DeltaTable(sys.argv[1]).file_uris())}))
"#;
    let theirs = venv_json(script, &[t]);
    assert_eq!(theirs["files"], 1);
    let holds = |column: &str, value: &str| {
        let out = sbbf(&["probe", t, column, value, "-l"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{column}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout).lines().count(), 1, "{column}");
    };
    holds(r"a\.b", "14");
    holds("User Name", "u7");
    // Text names the table's column, and the file's name for it beside.
    let out = sbbf(&["probe", t, "User Name", "u7"]);
    assert!(
        text(&out.stdout).contains("column `User Name` (`col-"),
        "{}",
        text(&out.stdout)
    );
    let out = sbbf(&["add", t, "-c", r"a\.b", "-c", "User Name"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("2 filter(s)"),
        "{}",
        text(&out.stdout)
    );
    // inspect and verify name the table's columns, and take them with -c.
    for cmd in ["inspect", "verify"] {
        let out = sbbf(&[cmd, t, "-c", "User Name", "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(
            said.contains(r#""column":"User Name""#) && !said.contains("col-"),
            "{cmd}: {said}"
        );
    }
    let out = sbbf(&["inspect", t]);
    let said = text(&out.stdout);
    assert!(
        said.contains("User Name") && said.contains(r"a\.b") && !said.contains("col-"),
        "{said}"
    );
    // The table's history names the table's columns, not the files' `col-<uuid>`.
    let entry =
        std::fs::read_to_string(table.join("_delta_log/00000000000000000001.json")).unwrap();
    let info: Value = entry
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("commitInfo").cloned())
        .unwrap();
    assert_eq!(
        info["operationParameters"]["columns"], r#"["a.b","User Name"]"#,
        "{info}"
    );
    // Files changed less than 2 s before a build are not covered (the index could not tell
    // a second change in the same clock tick).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let out = sbbf(&["index", "build", t, "-c", r"a\.b", "-c", "User Name"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for (column, value) in [(r"a\.b", "14"), ("User Name", "u7")] {
        holds(column, value);
        let out = sbbf(&["probe", t, column, value, "--stats"]);
        assert!(
            text(&out.stdout).contains("1 of 1 file(s) answered by the index"),
            "{column}: {}",
            text(&out.stdout)
        );
    }
}

/// An Iceberg table copied to another folder (its metadata still names the folder it was
/// written in) is read where it is found: its metadata, manifests, data and position delete
/// files below that folder, with pyiceberg's row counts (the oracle files); the committed
/// fixtures read in place from a clone. A commit to such a copy is refused: it would name
/// files below the folder the metadata names.
#[cfg(feature = "query")]
#[test]
fn a_copied_iceberg_table_is_read_where_it_is_found() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["ice_basic", "ice_posdeletes"] {
        let copy = dir.path().join("copied").join(name);
        copy_dir(&lake_dir().join("iceberg/ns").join(name), &copy);
        let in_clone = lake_dir().join("iceberg/ns").join(name);
        for table in [copy.to_str().unwrap(), in_clone.to_str().unwrap()] {
            assert_eq!(count(table, &[]), oracle_rows(name), "{table}");
            assert_eq!(count(table, &["--no-sbbf"]), oracle_rows(name), "{table}");
            let out = sbbf(&["probe", table, "id", "7", "--format", "json"]);
            assert_ne!(out.status.code(), Some(2), "{}", text(&out.stderr));
            let files: Vec<String> = text(&out.stdout)
                .lines()
                .filter_map(|l| {
                    let v: Value = serde_json::from_str(l).ok()?;
                    Some(v.get("file")?.as_str()?.to_string())
                })
                .collect();
            assert!(!files.is_empty());
            let real = std::fs::canonicalize(table).unwrap();
            for f in &files {
                let f = std::fs::canonicalize(f).unwrap();
                assert!(f.starts_with(&real), "{} read for {table}", f.display());
            }
        }
    }
    // A folder table as file-system catalogs keep one (vN.metadata.json): the copy is read,
    // and a commit to it refused before anything is written.
    let copy = dir.path().join("copied").join("ice_basic");
    let meta = copy.join("metadata");
    let mut numbered = metadata_files(&meta);
    let newest = numbered.pop().unwrap();
    std::fs::rename(&newest, meta.join("v1.metadata.json")).unwrap();
    for p in numbered {
        std::fs::remove_file(p).unwrap();
    }
    let t = copy.to_str().unwrap();
    assert_eq!(count(t, &[]), oracle_rows("ice_basic"));
    let before = std::fs::read_dir(&meta).unwrap().count();
    let out = sbbf(&["add", t, "-c", "id"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("lives at"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_dir(&meta).unwrap().count(), before);
}

/// A warehouse copied whole with its SQL catalog (the committed `testdata/lake/iceberg`, whose
/// `catalog.db` names the `/tmp` folder the tables were written in, in a clone) is read
/// through that catalog where it is found: the catalog's metadata file taken below the
/// catalog file's folder, the table's files below the table folder found (pyiceberg's counts);
/// a metadata file of a copy given as the path reads the same way. A commit through such a
/// catalog is refused before anything is written: the catalog names another place.
#[cfg(feature = "query")]
#[test]
fn a_copied_warehouse_is_read_through_its_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("warehouse copy");
    copy_dir(&lake_dir().join("iceberg"), &warehouse);
    crate::lake::retarget_catalog(&warehouse.join("catalog.db"));
    let catalog = format!("sqlite://{}", warehouse.join("catalog.db").display());
    let real = std::fs::canonicalize(&warehouse).unwrap();
    for name in ["ice_basic", "ice_posdeletes"] {
        let ident = format!("ns.{name}");
        assert_eq!(
            count(&ident, &["--catalog", &catalog]),
            oracle_rows(name),
            "{name}"
        );
        let out = sbbf(&[
            "probe",
            &ident,
            "id",
            "7",
            "--catalog",
            &catalog,
            "--format",
            "json",
        ]);
        assert_ne!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let mut files = 0;
        for line in text(&out.stdout).lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let Some(f) = v.get("file").and_then(Value::as_str) else {
                continue;
            };
            let f = std::fs::canonicalize(f).unwrap();
            assert!(f.starts_with(&real), "{} read for {name}", f.display());
            files += 1;
        }
        assert!(files > 0);
    }
    // The newest metadata file of a copy, given as the path.
    let meta = warehouse.join("ns/ice_basic/metadata");
    let numbered = metadata_files(&meta);
    let newest = numbered.last().unwrap().to_str().unwrap().to_string();
    assert_eq!(count(&newest, &[]), oracle_rows("ice_basic"));
    // No commit through a catalog that names another place.
    let listed = |p: &Path| std::fs::read_dir(p).unwrap().count();
    let (before, db) = (
        listed(&meta),
        std::fs::read(warehouse.join("catalog.db")).unwrap(),
    );
    let out = sbbf(&["add", "--catalog", &catalog, "ns.ice_basic", "-c", "v"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("committed to only where it lives"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(listed(&meta), before);
    assert_eq!(std::fs::read(warehouse.join("catalog.db")).unwrap(), db);
}
