//! The index follows a Delta table's log: a probe of a version later than the index's reads
//! only the commits since (not the checkpoint or snapshot), answers exactly as a probe without
//! the index does, and falls back to the snapshot (saying why) where the commits cannot be
//! followed; likewise an Iceberg table's later snapshot from the manifests added since. The
//! tables are changed by the formats' own writers (deltalake, pyiceberg).

use crate::common::{sbbf, text};
use crate::lake::{copy_dir, lake_dir, venv_json};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Changes the Delta table at argv[1] with deltalake: `append IDS` (rows of partition `a`),
/// `delete PREDICATE`, `property` (a `metaData` commit), `recreate N` (the log deleted and
/// the table written anew in N commits). Prints the version it leaves.
const CHANGE: &str = r#"
import json, os, shutil, sys
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
table, op = sys.argv[1], sys.argv[2]
def rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"s{i}" for i in ids],
                     "p": ["a"] * len(ids)})
if op == "append":
    write_deltalake(table, rows([int(x) for x in sys.argv[3].split(",")]), mode="append",
                    partition_by=["p"])
elif op == "delete":
    DeltaTable(table).delete(sys.argv[3])
elif op == "property":
    DeltaTable(table).alter.set_table_properties({"delta.logRetentionDuration": "interval 31 days"})
elif op == "recreate":
    shutil.rmtree(os.path.join(table, "_delta_log"))
    for n in range(int(sys.argv[3])):
        write_deltalake(table, rows([5000 + n]), mode="append", partition_by=["p"])
print(json.dumps({"version": DeltaTable(table).version()}))
sys.stdout.flush()
# (deltalake's runtime may abort while the interpreter exits.)
os._exit(0)
"#;

fn change(table: &str, args: &[&str]) -> i64 {
    let mut all = vec![table];
    all.extend_from_slice(args);
    venv_json(CHANGE, &all)["version"].as_i64().unwrap()
}

fn table_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(Path::new(name).file_name().unwrap());
    copy_dir(&lake_dir().join(name), &to);
    // Files changed less than 2 s before a build are not covered (the index could not tell
    // a second change in the same clock tick); these are to be covered.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    (dir, to)
}

/// What a probe says: the table line, the index stats line (when `--stats`), each file's
/// answers by file name, and the exit status.
struct Probe {
    table: Value,
    index: Option<Value>,
    files: BTreeMap<String, Value>,
    /// The files in the order printed.
    order: Vec<String>,
    status: Option<i32>,
}

fn probe(table: &str, values: &[&str], extra: &[&str]) -> Probe {
    probe_column(table, "id", values, extra)
}

fn probe_column(table: &str, column: &str, values: &[&str], extra: &[&str]) -> Probe {
    let mut args = vec!["probe", table, column];
    args.extend_from_slice(values);
    args.extend_from_slice(&["--format", "json"]);
    args.extend_from_slice(extra);
    let out = sbbf(&args);
    let mut p = Probe {
        table: Value::Null,
        index: None,
        files: BTreeMap::new(),
        order: Vec::new(),
        status: out.status.code(),
    };
    for line in text(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(t) = v.get("table") {
            p.table = t.clone();
        } else if let Some(f) = v.get("file").and_then(Value::as_str) {
            let mut v = v.clone();
            // Where the answer came from and what reading took are not the answer.
            for k in ["stats", "io", "from_index"] {
                v.as_object_mut().unwrap().remove(k);
            }
            p.files.insert(f.to_string(), v);
            p.order.push(f.to_string());
        }
    }
    p.index = text(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("index").cloned());
    p
}

/// Probes `values` with and without the index: the same files, answers and status.
fn same_answers(table: &str, values: &[&str]) -> Probe {
    let with = probe(table, values, &["--stats"]);
    let without = probe(table, values, &["--no-index"]);
    assert_eq!(with.status, without.status, "{table} {values:?}");
    assert_eq!(
        with.files.keys().collect::<Vec<_>>(),
        without.files.keys().collect::<Vec<_>>(),
        "{table} {values:?}"
    );
    assert_eq!(with.files, without.files, "{table} {values:?}");
    // One order, the files' names', with the index as without it.
    assert_eq!(with.order, without.order, "{table} {values:?}");
    let mut sorted = with.order.clone();
    sorted.sort();
    assert_eq!(with.order, sorted, "{table} {values:?}");
    assert_eq!(with.table["version"], without.table["version"]);
    with
}

#[test]
fn a_later_version_is_read_from_the_index_and_the_commits_since() {
    let (_dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let out = sbbf(&["index", "build", arg, "-c", "id"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The index's own version: nothing since, every file from the index.
    let p = same_answers(arg, &["600", "601", "9999"]);
    assert_eq!(p.table["log_since"], 2, "{}", p.table);
    let st = p.index.unwrap();
    assert_eq!(
        (st["commits_since"].as_u64(), st["direct"].as_u64()),
        (Some(0), Some(0)),
        "{st}"
    );
    assert_eq!(st["from_index"], 4, "{st}");

    // Rows added (a new file) and rows deleted (a file removed, its rewrite added).
    assert_eq!(change(arg, &["append", "7001,7002"]), 3);
    assert_eq!(change(arg, &["delete", "id = 600"]), 4);
    for values in [&["7001"][..], &["600"], &["603", "606"], &["601", "9999"]] {
        let p = same_answers(arg, values);
        assert_eq!(p.table["version"], 4);
        assert_eq!(p.table["log_since"], 2, "{}", p.table);
        let st = p.index.unwrap();
        assert_eq!(st["commits_since"], 2, "{st}");
        assert_eq!(st["index_version"], 2, "{st}");
        // The three files the delete left are answered from the index; the appended file
        // and the rewrite are read.
        assert_eq!(
            (st["from_index"].as_u64(), st["new"].as_u64()),
            (Some(3), Some(2)),
            "{st}"
        );
        // Only the two commits were read from the log: no checkpoint, no earlier commit.
        let reads = &p.table["log_reads"];
        let sizes: u64 = ["00000000000000000003.json", "00000000000000000004.json"]
            .iter()
            .map(|n| {
                std::fs::metadata(table.join("_delta_log").join(n))
                    .unwrap()
                    .len()
            })
            .sum();
        assert_eq!(reads["bytes"].as_u64(), Some(sizes), "{}", p.table);
    }
    // The file that held id 600 is gone: 4 - 1 + 2 files, none of them it.
    let before = probe(arg, &["600"], &["--as-of", "2", "--no-index"]);
    let now = probe(arg, &["600"], &[]);
    assert_eq!(now.files.len(), 5);
    let held: Vec<&String> = before
        .files
        .iter()
        .filter(|(_, v)| v.to_string().contains("maybe"))
        .map(|(f, _)| f)
        .collect();
    assert_eq!(held.len(), 1);
    assert!(!now.files.contains_key(held[0]));

    // Time travel to a version before the index's: the snapshot.
    let p = same_answers(arg, &["600"]);
    assert_eq!(p.table["version"], 4);
    for v in ["1", "3"] {
        let with = probe(arg, &["600", "7001"], &["--as-of", v, "--stats"]);
        let without = probe(arg, &["600", "7001"], &["--as-of", v, "--no-index"]);
        assert_eq!(with.files, without.files, "as of {v}");
        assert_eq!(with.status, without.status, "as of {v}");
        let since = with.table.get("log_since").cloned();
        match v {
            "1" => assert_eq!(since, None, "{}", with.table),
            _ => assert_eq!(since, Some(Value::from(2)), "{}", with.table),
        }
    }
}

#[test]
fn commits_the_log_cannot_follow_send_the_probe_to_the_snapshot() {
    let (_dir, table) = table_copy("delta_partitioned");
    let arg = table.to_str().unwrap();
    let out = sbbf(&["index", "build", arg, "-c", "id"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A commit that changes the table's metadata: the snapshot, and the reason.
    assert_eq!(change(arg, &["property"]), 3);
    let p = same_answers(arg, &["600", "9999"]);
    assert!(p.table.get("log_since").is_none(), "{}", p.table);
    let out = sbbf(&["probe", arg, "id", "600", "--stats"]);
    assert!(
        text(&out.stderr).contains("commit 3 changes the table's metadata or protocol"),
        "{}",
        text(&out.stderr)
    );
    // The table deleted and written anew at the same path: its commit 2 is another one, so
    // none of the index's files may stand for the new table's.
    assert_eq!(change(arg, &["recreate", "4"]), 3);
    let p = same_answers(arg, &["600", "5000", "5003"]);
    assert!(p.table.get("log_since").is_none(), "{}", p.table);
    assert_eq!(p.files.len(), 4);
    assert_eq!(p.status, Some(0));
    let out = sbbf(&["probe", arg, "id", "5000", "--stats"]);
    assert!(
        text(&out.stderr).contains("is not the one the index was built from"),
        "{}",
        text(&out.stderr)
    );
}

/// Changes an Iceberg table `ns.t` of a pyiceberg SQL catalog under argv[1]: `create` (three
/// appends of 100 ids), `append IDS`, `delete KEY` (after `rename`: a file rewritten, manifests rewritten),
/// `rename` (`id` becomes `key`: metadata only, no new snapshot). Prints the table's folder and
/// current snapshot.
pub(crate) const ICEBERG_CHANGE: &str = r#"
import json, os, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
root, op = sys.argv[1], sys.argv[2]
cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
def rows(ids):
    return pa.table({"id": ids, "s": [f"s{i}" for i in ids]}, schema=schema)
if op == "create":
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=schema)
    for k in range(3):
        t.append(rows(list(range(k * 100, (k + 1) * 100))))
elif op == "append":
    cat.load_table("ns.t").append(rows([int(x) for x in sys.argv[3].split(",")]))
elif op == "delete":
    cat.load_table("ns.t").delete(f"key == {int(sys.argv[3])}")
elif op == "rename":
    with cat.load_table("ns.t").update_schema() as u:
        u.rename_column("id", "key")
t = cat.load_table("ns.t")
print(json.dumps({"folder": t.location().removeprefix("file://"),
                  "snapshot": t.current_snapshot().snapshot_id}))
sys.stdout.flush()
os._exit(0)
"#;

/// Probes `values` with and without the index: the same files (the index, built from the
/// pages of files without filters, may answer more exactly than they do), and a present
/// value (the first) not ruled out in some file.
fn same_files(table: &str, values: &[&str]) -> Probe {
    let with = probe(table, values, &["--stats"]);
    let without = probe(table, values, &["--no-index"]);
    assert_eq!(
        with.files.keys().collect::<Vec<_>>(),
        without.files.keys().collect::<Vec<_>>(),
        "{table} {values:?}"
    );
    assert_eq!(with.order, without.order, "{table} {values:?}");
    assert_eq!(with.table["version"], without.table["version"]);
    let may = |r: &str| format!(r#"{{"result":"{r}","value":"{}"}}"#, values[0]);
    assert!(
        with.files.values().any(|f| {
            let f = f.to_string();
            f.contains(&may("maybe")) || f.contains(&may("unknown"))
        }),
        "{table} {values:?}"
    );
    with
}

#[test]
fn a_later_iceberg_snapshot_is_read_from_the_manifests_added_since() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let change = |args: &[&str]| -> Value {
        let mut all = vec![root];
        all.extend_from_slice(args);
        venv_json(ICEBERG_CHANGE, &all)
    };
    let made = change(&["create"]);
    let folder = made["folder"].as_str().unwrap().to_string();
    let first = made["snapshot"].as_i64().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    // pyiceberg writes no Bloom filters: the index builds them from the pages.
    let out = sbbf(&["index", "build", &folder, "-c", "id", "--build-missing"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let p = same_files(&folder, &["150", "9999"]);
    assert_eq!(p.table["log_since"], first, "{}", p.table);
    let st = p.index.unwrap();
    assert_eq!(
        (st["commits_since"].as_u64(), st["from_index"].as_u64()),
        (Some(0), Some(3)),
        "{st}"
    );

    // An append: one manifest more, its file read directly, the others from the index.
    let appended = change(&["append", "7001,7002"])["snapshot"]
        .as_i64()
        .unwrap();
    for values in [&["7001"][..], &["150", "9999"]] {
        let p = same_files(&folder, values);
        assert_eq!(p.table["version"], appended);
        assert_eq!(p.table["log_since"], first, "{}", p.table);
        let st = p.index.unwrap();
        assert_eq!(st["commits_since"], 1, "{st}");
        assert_eq!(
            (st["from_index"].as_u64(), st["new"].as_u64()),
            (Some(3), Some(1)),
            "{st}"
        );
    }
    // A rename (no new snapshot): the new name is the table's, found by field id.
    change(&["rename"]);
    let with = probe_column(&folder, "key", &["150"], &["--stats"]);
    let without = probe_column(&folder, "key", &["150"], &["--no-index"]);
    assert_eq!(
        with.files.keys().collect::<Vec<_>>(),
        without.files.keys().collect::<Vec<_>>()
    );
    assert_eq!(with.status, Some(0));
    assert_eq!(with.table["log_since"], first, "{}", with.table);
    // A delete rewrites a file and its manifest: the index's manifests are not all listed
    // any more, so the snapshot is read (and says why).
    change(&["delete", "150"]);
    let with = probe_column(&folder, "key", &["150", "151"], &["--stats"]);
    let without = probe_column(&folder, "key", &["150", "151"], &["--no-index"]);
    assert_eq!(
        with.files.keys().collect::<Vec<_>>(),
        without.files.keys().collect::<Vec<_>>()
    );
    assert!(with.table.get("log_since").is_none(), "{}", with.table);
    let out = sbbf(&["probe", &folder, "key", "150", "--stats"]);
    assert!(
        text(&out.stderr).contains("no longer lists manifest"),
        "{}",
        text(&out.stderr)
    );
}

/// `sbbf add TABLE` swaps files for copies with the same data pages: the table's index follows
/// in the same run, every file it covered still covered at the version committed. A copy whose
/// new filters are of a column the index does not cover takes its original's entries unread;
/// one whose new filters the index covers is read. Probes answer as without the index (no
/// false negative for a value in a swapped file), every file from the index.
#[test]
fn the_index_follows_sbbf_add_to_the_copies() {
    let (_dir, table) = table_copy("delta_checkpoint");
    let arg = table.to_str().unwrap();
    let out = sbbf(&["index", "build", arg, "-c", "id"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let files = probe(arg, &["650"], &["--no-index"]).files.len();
    assert_eq!(files, 14);
    // `s` is not indexed: the copies take their originals' entries, none is read.
    let out = sbbf(&["add", arg, "-c", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!(
            "follows the commit: {files} of {files} file(s) kept from it"
        )) && said.contains(", 0 read"),
        "{said}"
    );
    for values in [&["650"][..], &["7"], &["650", "651", "99999"]] {
        let p = same_answers(arg, values);
        let st = p.index.unwrap();
        assert_eq!(st["from_index"].as_u64(), Some(files as u64), "{st}");
        assert_eq!(st["direct"], 0, "{st}");
        assert_eq!(p.table["version"], 14, "{}", p.table);
    }

    // An index of `s` too (built from the data where files have no filter of it): the copies
    // `add -c s` gives new `s` filters are read, and covered although just written.
    let (_dir2, table) = table_copy("delta_checkpoint");
    let arg = table.to_str().unwrap();
    let out = sbbf(&[
        "index",
        "build",
        arg,
        "-c",
        "id",
        "-c",
        "s",
        "--build-missing",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = sbbf(&["add", arg, "-c", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains(&format!(", {files} read")), "{said}");
    for values in [&["s650"][..], &["s7", "nothing"]] {
        let with = probe_column(arg, "s", values, &["--stats"]);
        let without = probe_column(arg, "s", values, &["--no-index"]);
        assert_eq!(with.files, without.files, "{values:?}");
        assert_eq!(with.status, without.status, "{values:?}");
        let st = with.index.unwrap();
        assert_eq!(st["from_index"].as_u64(), Some(files as u64), "{st}");
    }
}
