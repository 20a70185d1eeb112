//! The index follows a Delta table's log: a probe of a version later than the index's reads
//! only the commits since (not the checkpoint or snapshot), answers exactly as a probe without
//! the index does, and falls back to the snapshot (saying why) where the commits cannot be
//! followed. The tables are changed by deltalake, the format's own writer.

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
    status: Option<i32>,
}

fn probe(table: &str, values: &[&str], extra: &[&str]) -> Probe {
    let mut args = vec!["probe", table, "id"];
    args.extend_from_slice(values);
    args.extend_from_slice(&["--format", "json"]);
    args.extend_from_slice(extra);
    let out = sbbf(&args);
    let mut p = Probe {
        table: Value::Null,
        index: None,
        files: BTreeMap::new(),
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
