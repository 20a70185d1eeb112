//! `sbbf add TABLE` on Iceberg tables: one `replace` snapshot through the table's catalog
//! (pyiceberg's SqlCatalog in SQLite) or its folder (`vN.metadata.json`), read back with
//! pyiceberg 0.12 (`tools/.venv`): the same rows as the snapshot before, every current data
//! file a copy with the filter, the old snapshot still readable, pyiceberg able to commit after
//! us. The tables are written fresh by pyiceberg for each test (`tools/gen/lake_tables.py`).

use crate::common::{sbbf, text};
use crate::lake::venv_json;
use serde_json::Value;
use std::path::Path;

/// Writes the Iceberg test tables of `tools/gen/lake_tables.py` (ice_basic, ice_partitioned,
/// ice_renamed, ice_posdeletes, ice_eqdeletes) into the folder argv[1], their catalog
/// `catalog.db` beside them; prints the rows the equality-delete table reads as (by the
/// spec's rule, computed by the generator).
const WRITE_TABLES: &str = r#"
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import lake_tables
from pyiceberg.catalog.sql import SqlCatalog
root = Path(sys.argv[1])
lake_tables.make_iceberg(root)
cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
eq = lake_tables.make_iceberg_eqdeletes(cat)
print(json.dumps({"eq_rows": len(eq["rows"])}))
"#;

/// What pyiceberg reads of table argv[2] of the catalog in argv[1] (or, with argv[3], of the
/// metadata file it names): the current snapshot against its parent.
const PYICEBERG_READS: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import StaticTable
root, ident = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    t = StaticTable.from_metadata(sys.argv[3])
else:
    t = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}").load_table(ident)
s = t.current_snapshot()
def rows(snapshot_id):
    got = t.scan(snapshot_id=snapshot_id).to_arrow()
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in got.to_pylist())
scan = "eqdeletes" not in ident
print(json.dumps({
    "snapshot": s.snapshot_id,
    "parent": s.parent_snapshot_id,
    "operation": s.summary.operation.value,
    "same_rows": rows(s.snapshot_id) == rows(s.parent_snapshot_id) if scan else None,
    "rows": len(rows(s.snapshot_id)) if scan else None,
    "files": sorted(r["file_path"] for r in t.inspect.files().to_pylist() if r["content"] == 0),
    "added_sequence_numbers": sorted(r["sequence_number"] for r in t.inspect.entries().to_pylist() if r["status"] == 1),
}))
"#;

/// Appends ids 5000..5009 to table argv[2] with pyiceberg; the rows it then reads.
const PYICEBERG_APPENDS: &str = r#"
import json, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
root, ident = sys.argv[1], sys.argv[2]
t = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}").load_table(ident)
ids = list(range(5000, 5010))
t.append(pa.table({"id": pa.array(ids, pa.int64()), "s": [f"s{i}" for i in ids]}))
print(json.dumps({"rows": t.scan().to_arrow().num_rows, "operation": t.current_snapshot().summary.operation.value}))
"#;

/// The tables, written by pyiceberg into a fresh folder; the rows ice_eqdeletes reads as.
fn tables() -> (tempfile::TempDir, i64) {
    let dir = tempfile::tempdir().unwrap();
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/gen");
    let made = venv_json(
        WRITE_TABLES,
        &[dir.path().to_str().unwrap(), gen.to_str().unwrap()],
    );
    (dir, made["eq_rows"].as_i64().unwrap())
}

fn catalog(root: &Path) -> String {
    format!("sqlite://{}/catalog.db", root.display())
}

/// Whether every row group of the file at `uri` has a filter for the column with Iceberg
/// field id `id`.
fn has_filter(uri: &str, id: i64) -> bool {
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let pq = sbbf_parquet::ParquetFile::open(std::fs::File::open(path).unwrap()).unwrap();
    let column = sbbf_parquet::read::file::by_field_id(id, None);
    let c = pq.column_index(&column).unwrap();
    pq.filter_locations(c).iter().all(|l| l.offset.is_some())
}

/// `sbbf add --catalog .. ns.NAME -c COLUMN --format json`: its report.
fn add(root: &Path, name: &str, column: &str) -> Value {
    let ident = format!("ns.{name}");
    let cat = catalog(root);
    let out = sbbf(&[
        "add",
        "--catalog",
        &cat,
        &ident,
        "-c",
        column,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_str(text(&out.stdout).trim()).unwrap()
}

#[test]
fn iceberg_tables_get_filters_through_one_replace_snapshot() {
    let (dir, eq_rows) = tables();
    let root = dir.path();
    let r = root.to_str().unwrap();
    // (table, column by its current name, its field id)
    for (name, column, id) in [
        ("ice_basic", "s", 2),
        ("ice_partitioned", "s", 2),
        // `s` was renamed `name` after the first file was written: found by field id.
        ("ice_renamed", "name", 2),
    ] {
        let ours = add(root, name, column);
        assert_eq!(ours["format"], "iceberg", "{ours}");
        let theirs = venv_json(PYICEBERG_READS, &[r, &format!("ns.{name}")]);
        assert_eq!(
            ours["committed_version"], theirs["snapshot"],
            "{name}: {ours}"
        );
        assert_eq!(ours["read_version"], theirs["parent"], "{name}: {ours}");
        assert_eq!(theirs["operation"], "replace", "{name}: {theirs}");
        assert_eq!(theirs["same_rows"], true, "{name}: {theirs}");
        let files = theirs["files"].as_array().unwrap();
        assert_eq!(
            files.len(),
            ours["swapped"].as_array().unwrap().len(),
            "{name}"
        );
        for f in files {
            let f = f.as_str().unwrap();
            assert!(f.contains("-sbbf-"), "{name}: {f}");
            assert!(has_filter(f, id), "{name}: {f} lacks field {id}");
        }
        // A second run finds nothing to do.
        let again = add(root, name, column);
        assert_eq!(again["committed_version"], Value::Null, "{name}: {again}");
    }
    // ice_basic's sequence numbers: three appends and a delete (4), the swap is 5; the
    // copies carry 2, 3 and 4.
    let basic = venv_json(PYICEBERG_READS, &[r, "ns.ice_basic"]);
    assert!(
        basic["added_sequence_numbers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.as_i64().unwrap() <= 4),
        "{basic}"
    );
    // pyiceberg commits after our snapshot, and reads every row.
    let appended = venv_json(PYICEBERG_APPENDS, &[r, "ns.ice_basic"]);
    assert_eq!(appended["rows"], 2510, "{appended}");

    // Position deletes name their data files by path: those files are kept, and said why.
    let ours = add(root, "ice_posdeletes", "s");
    assert_eq!(ours["committed_version"], Value::Null, "{ours}");
    let kept = ours["kept"].as_array().unwrap();
    assert_eq!(kept.len(), 2, "{ours}");
    assert!(kept
        .iter()
        .all(|k| k["why"].as_str().unwrap().contains("position deletes")));

    // Equality deletes apply by sequence number: the copies keep their originals', so the
    // deletes still apply to them (pyiceberg reads no equality deletes; the count is the
    // generator's, by the spec's rule).
    let ours = add(root, "ice_eqdeletes", "s");
    assert!(ours["committed_version"].is_i64(), "{ours}");
    let theirs = venv_json(PYICEBERG_READS, &[r, "ns.ice_eqdeletes"]);
    assert_eq!(theirs["operation"], "replace");
    let cat = catalog(root);
    let out = sbbf(&[
        "query",
        "--catalog",
        &cat,
        "ns.ice_eqdeletes",
        "SELECT count(*) AS n FROM t",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(row["n"], eq_rows, "{row}");
}

#[test]
fn a_folder_table_commits_its_next_metadata_file_and_hint() {
    let (dir, _) = tables();
    let table = dir.path().join("ns/ice_partitioned");
    let meta = table.join("metadata");
    // A file-system table: the current metadata as v1.metadata.json and a hint naming it.
    let newest = std::fs::read_dir(&meta)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .max()
        .unwrap();
    std::fs::copy(&newest, meta.join("v1.metadata.json")).unwrap();
    std::fs::write(meta.join("version-hint.text"), "1").unwrap();
    let arg = table.to_str().unwrap();
    let out = sbbf(&["add", arg, "-c", "s", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ours: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(
        std::fs::read_to_string(meta.join("version-hint.text")).unwrap(),
        "2"
    );
    let v2 = meta.join("v2.metadata.json");
    let r = dir.path().to_str().unwrap();
    let theirs = venv_json(
        PYICEBERG_READS,
        &[r, "ns.ice_partitioned", v2.to_str().unwrap()],
    );
    assert_eq!(ours["committed_version"], theirs["snapshot"], "{ours}");
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    assert_eq!(theirs["files"].as_array().unwrap().len(), 6, "{theirs}");
    // We read it back as pyiceberg does: every file a copy, every row there.
    let out = sbbf(&[
        "query",
        arg,
        "SELECT count(*) AS n FROM t",
        "--format",
        "json",
    ]);
    let row: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(row["n"], theirs["rows"], "{row}");
}

#[test]
fn iceberg_tables_that_cannot_be_committed_to_are_refused() {
    let (dir, _) = tables();
    let root = dir.path();
    // A folder whose metadata files a catalog names: its catalog is the authority.
    let folder = root.join("ns/ice_basic");
    let out = sbbf(&["add", folder.to_str().unwrap(), "-c", "s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--catalog"),
        "{}",
        text(&out.stderr)
    );
    // Nothing was written to the table's folders.
    let copies = walk(root)
        .into_iter()
        .filter(|p| p.contains("-sbbf-"))
        .count();
    assert_eq!(copies, 0);
}

fn walk(p: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path.display().to_string());
        }
    }
    out
}

/// Another writer commits while the copies are written (pyiceberg deletes the rows of one
/// file, which removes it): our first commit finds the catalog moved, is made again on the new
/// snapshot without that file, and its copy is deleted.
#[test]
fn a_commit_lost_to_another_iceberg_writer_is_made_again() {
    const DELETES: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
root = sys.argv[1]
t = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}").load_table("ns.ice_basic")
t.delete("id >= 2000")
print(json.dumps({"rows": t.scan().to_arrow().num_rows}))
"#;
    let (dir, _) = tables();
    let root = dir.path().to_path_buf();
    let r = root.to_str().unwrap().to_string();
    let at = sbbf_lake::TableRef::Catalog {
        catalog: sbbf_lake::catalog::Catalog::new(&catalog(&root), None),
        table: "ns.ice_basic".into(),
    };
    let add = sbbf_lake::backfill::Rewrite::Add(sbbf_parquet::write::AddOptions {
        columns: vec!["s".into()],
        fpp: 0.01,
        ndv: None,
        replace: false,
    });
    let mut once = false;
    let mut progress = |done: usize, total: usize| {
        if done == total && !once {
            once = true;
            let after = venv_json(DELETES, &[&r]);
            assert_eq!(after["rows"], 1500, "{after}");
        }
    };
    let lake = sbbf_lake::LakeOptions::default();
    let located = sbbf_lake::Table::locate(at, &lake);
    let located = sbbf_parquet::source::block_on(located).unwrap().unwrap();
    let done = sbbf_parquet::source::block_on(sbbf_lake::backfill::write_table(
        &located,
        &add,
        &mut progress,
    ))
    .unwrap()
    .unwrap();
    assert_eq!(done.tries, 2, "{done:?}");
    assert_eq!(done.swapped.len(), 2, "{done:?}");
    assert_eq!(done.withdrawn.len(), 1, "{done:?}");
    let theirs = venv_json(PYICEBERG_READS, &[&r, "ns.ice_basic"]);
    assert_eq!(theirs["operation"], "replace");
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    assert_eq!(theirs["rows"], 1500);
    // The withdrawn copy is gone; the two committed ones are the table's.
    let copies: Vec<String> = walk(&root.join("ns/ice_basic/data"))
        .into_iter()
        .filter(|p| p.contains("-sbbf-"))
        .collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
}

/// Workers write the copies of their shares of an Iceberg table and one `sbbf commit`
/// commits them all through the catalog; the same parts again commit nothing.
#[test]
fn workers_parts_commit_to_an_iceberg_table_once() {
    let (dir, _) = tables();
    let root = dir.path();
    let cat = catalog(root);
    let out = sbbf(&[
        "inspect",
        "--catalog",
        &cat,
        "ns.ice_partitioned",
        "--format",
        "json",
    ]);
    let files: Vec<String> = text(&out.stdout)
        .lines()
        .filter_map(|l| {
            Some(
                serde_json::from_str::<Value>(l)
                    .ok()?
                    .get("file")?
                    .as_str()?
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(files.len(), 6);
    let parts = root.join("parts");
    for (i, share) in files.chunks(3).enumerate() {
        let list = root.join(format!("share{i}.txt"));
        std::fs::write(&list, share.join("\n")).unwrap();
        let part = parts.join(format!("{i}.sbbfcopies"));
        let out = sbbf(&[
            "add",
            "--catalog",
            &cat,
            "ns.ice_partitioned",
            "-c",
            "s",
            "--files-from",
            list.to_str().unwrap(),
            "--part",
            part.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let parts_arg = parts.to_str().unwrap();
    let commit = || {
        let out = sbbf(&[
            "commit",
            "--catalog",
            &cat,
            "ns.ice_partitioned",
            parts_arg,
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_str::<Value>(text(&out.stdout).trim()).unwrap()
    };
    let done = commit();
    assert_eq!(done["swapped"].as_array().unwrap().len(), 6, "{done}");
    let r = root.to_str().unwrap();
    let theirs = venv_json(PYICEBERG_READS, &[r, "ns.ice_partitioned"]);
    assert_eq!(done["committed_version"], theirs["snapshot"]);
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    let again = commit();
    assert_eq!(again["committed_version"], Value::Null, "{again}");
    assert_eq!(again["withdrawn"].as_array().unwrap().len(), 0, "{again}");
    assert_eq!(
        venv_json(PYICEBERG_READS, &[r, "ns.ice_partitioned"])["files"],
        theirs["files"]
    );
}

/// A REST catalog for the tests: `tools/test/rest_catalog.py`, pyiceberg's SqlCatalog behind
/// the REST spec's endpoints (pyiceberg parses and checks each commit's requirements and
/// updates, and writes the metadata file). Killed when dropped.
struct RestCatalog {
    child: std::process::Child,
    uri: String,
}

impl RestCatalog {
    fn start(root: &Path, flags: &[&str]) -> RestCatalog {
        use std::io::BufRead;
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let python = base.join("tools/.venv/bin/python");
        assert!(
            python.exists(),
            "pyiceberg is needed: run bash tools/setup/setup-venv.sh"
        );
        let mut child = std::process::Command::new(python)
            .arg(base.join("tools/test/rest_catalog.py"))
            .arg("--catalog-db")
            .arg(root.join("catalog.db"))
            .arg("--warehouse")
            .arg(format!("file://{}", root.display()))
            .args(["--prefix", "wh/main", "--token", "s3cret"])
            // The server stops when this end of its stdin closes, so a test that panics
            // leaves no server behind.
            .arg("--exit-on-stdin-eof")
            .args(flags)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("the REST catalog said `{line}`"));
        RestCatalog {
            child,
            uri: format!("http://127.0.0.1:{port}"),
        }
    }

    /// `sbbf add --catalog URI ns.NAME -c COLUMN --format json`: its status and report.
    fn add(&self, name: &str, column: &str) -> (Option<i32>, Value, String) {
        let out = crate::common::sbbf_env(
            &[
                "add",
                "--catalog",
                &self.uri,
                &format!("ns.{name}"),
                "-c",
                column,
                "--format",
                "json",
            ],
            &[("SBBF_CATALOG_TOKEN", "s3cret")],
        );
        let report = serde_json::from_str(text(&out.stdout).trim()).unwrap_or(Value::Null);
        (out.status.code(), report, text(&out.stderr).to_string())
    }
}

impl Drop for RestCatalog {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Through a REST catalog: the snapshot goes to the table's commit endpoint with the table's
/// UUID and `main` at the base as requirements; pyiceberg, as the server, checks and applies
/// it and reads the same rows. A commit refused with 409 (another writer appended first) is
/// made again on the new snapshot; one answered 504 after it was applied is found in the table
/// read again, and counted made; so is one answered 409 after it was applied.
#[test]
fn iceberg_tables_get_filters_through_a_rest_catalog() {
    let (dir, _) = tables();
    let root = dir.path();
    let r = root.to_str().unwrap();

    let rest = RestCatalog::start(root, &[]);
    let (code, ours, err) = rest.add("ice_basic", "s");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(ours["tries"], 1, "{ours}");
    let theirs = venv_json(PYICEBERG_READS, &[r, "ns.ice_basic"]);
    assert_eq!(ours["committed_version"], theirs["snapshot"], "{ours}");
    assert_eq!(ours["read_version"], theirs["parent"], "{ours}");
    assert_eq!(theirs["operation"], "replace", "{theirs}");
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    for f in theirs["files"].as_array().unwrap() {
        assert!(has_filter(f.as_str().unwrap(), 2), "{f}");
    }
    // A second run finds nothing to do; pyiceberg commits after us.
    let (code, again, err) = rest.add("ice_basic", "s");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(again["committed_version"], Value::Null, "{again}");
    let appended = venv_json(PYICEBERG_APPENDS, &[r, "ns.ice_basic"]);
    assert_eq!(appended["rows"], 2510, "{appended}");
    drop(rest);

    // Another writer first: the server appends a row before it takes our first commit.
    let before = venv_json(PYICEBERG_READS, &[r, "ns.ice_partitioned"]);
    let rest = RestCatalog::start(root, &["--conflict-once"]);
    let (code, ours, err) = rest.add("ice_partitioned", "s");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(ours["tries"], 2, "{ours}");
    let theirs = venv_json(PYICEBERG_READS, &[r, "ns.ice_partitioned"]);
    assert_eq!(ours["committed_version"], theirs["snapshot"], "{ours}");
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    assert_eq!(
        theirs["rows"].as_i64().unwrap(),
        before["rows"].as_i64().unwrap() + 1,
        "{theirs}"
    );
    // Every file of ours swapped; the appended one (no filter) is not ours to swap.
    let files = theirs["files"].as_array().unwrap();
    assert_eq!(files.len(), 7, "{theirs}");
    assert_eq!(
        files
            .iter()
            .filter(|f| f.as_str().unwrap().contains("-sbbf-"))
            .count(),
        6,
        "{theirs}"
    );
    drop(rest);

    // Applied, then answered 504: the table read again shows our snapshot.
    let rest = RestCatalog::start(root, &["--unknown-once"]);
    let (code, ours, err) = rest.add("ice_renamed", "name");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(ours["tries"], 1, "{ours}");
    let theirs = venv_json(PYICEBERG_READS, &[r, "ns.ice_renamed"]);
    assert_eq!(ours["committed_version"], theirs["snapshot"], "{ours}");
    assert_eq!(theirs["same_rows"], true, "{theirs}");
    drop(rest);

    // Applied, then answered 409 (as a request sent again by a proxy would be): the table
    // read again shows our snapshot, so it is a commit made and nothing it names is removed.
    let rest = RestCatalog::start(root, &["--applied-conflict-once"]);
    let (code, ours, err) = rest.add("ice_eqdeletes", "s");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(ours["tries"], 1, "{ours}");
    let theirs = venv_json(PYICEBERG_READS, &[r, "ns.ice_eqdeletes"]);
    assert_eq!(ours["committed_version"], theirs["snapshot"], "{ours}");
    let files = theirs["files"].as_array().unwrap();
    assert!(!files.is_empty(), "{theirs}");
    for f in files {
        let f = f.as_str().unwrap();
        assert!(f.contains("-sbbf-") && has_filter(f, 2), "{f}");
    }

    // Without the token the server refuses, and nothing is left behind.
    let before = walk(root).len();
    let out = sbbf(&["add", "--catalog", &rest.uri, "ns.ice_eqdeletes", "-c", "s"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("401"), "{}", text(&out.stderr));
    assert_eq!(walk(root).len(), before);
}

/// Writes, into the folder argv[1], three tables the main set lacks: `ns.v1` (format 1: three
/// appends, then a delete that rewrites a file), `ns.v1p` (format 1, partitioned by `g`) and
/// `ns.evo` (format 2: a file of each of three partition specs, the spec changed between
/// appends, then a delete).
const WRITE_EVOLVED: &str = r#"
import json, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import NestedField, LongType, StringType
from pyiceberg.transforms import IdentityTransform
from pyiceberg.partitioning import PartitionSpec, PartitionField
root = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
cat.create_namespace("ns")
schema = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "s", StringType(), required=False),
                NestedField(3, "g", LongType(), required=False))
def rows(lo, hi):
    ids = list(range(lo, hi))
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"v{i}" for i in ids],
                     "g": pa.array([i % 3 for i in ids], pa.int64())})
t = cat.create_table("ns.v1", schema, properties={"format-version": "1"})
for k in range(3):
    t.append(rows(k * 100, (k + 1) * 100))
t.delete("id < 50")
t = cat.create_table("ns.v1p", schema, properties={"format-version": "1"},
                     partition_spec=PartitionSpec(PartitionField(3, 1000, IdentityTransform(), "g")))
t.append(rows(0, 100))
t.append(rows(100, 200))
t = cat.create_table("ns.evo", schema)
t.append(rows(0, 100))
with t.update_spec() as u:
    u.add_field("g", IdentityTransform(), "g_part")
t = cat.load_table("ns.evo")
t.append(rows(100, 200))
with t.update_spec() as u:
    u.remove_field("g_part")
t = cat.load_table("ns.evo")
t.append(rows(200, 300))
t.delete("id >= 250 and id < 260")
print(json.dumps({}))
"#;

/// Row counts pyiceberg reads of table argv[2], at its current snapshot and at its parent,
/// under filters on a partition column and on the data, and the format version; then the
/// rows it reads after appending ten of its own.
const PYICEBERG_FILTERED: &str = r#"
import json, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
root, ident = sys.argv[1], sys.argv[2]
t = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}").load_table(ident)
s = t.current_snapshot()
def counts(snapshot_id):
    return [t.scan(row_filter=f, snapshot_id=snapshot_id).to_arrow().num_rows
            for f in ["g == 1", "id < 120", "id >= 150", "s == 'v77'"]]
now, before = counts(s.snapshot_id), counts(s.parent_snapshot_id)
ids = list(range(5000, 5010))
t.append(pa.Table.from_pydict({"id": pa.array(ids, pa.int64()), "s": [f"v{i}" for i in ids],
                               "g": pa.array([i % 3 for i in ids], pa.int64())},
                              schema=t.schema().as_arrow()))
print(json.dumps({"now": now, "before": before, "format_version": t.metadata.format_version,
                  "rows_after_append": t.scan().to_arrow().num_rows}))
"#;

/// Tables of format 1, and of several partition specs: the rewritten manifests keep each
/// one's spec and format (v1 entries have no sequence numbers), and pyiceberg reads the same
/// rows under partition and data filters before and after.
#[test]
fn iceberg_tables_of_format_1_and_of_several_specs_get_filters() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let r = root.to_str().unwrap();
    venv_json(WRITE_EVOLVED, &[r]);
    for (name, format, files) in [("v1", 1, 3), ("v1p", 1, 6), ("evo", 2, 5)] {
        let ours = add(root, name, "id");
        let ident = format!("ns.{name}");
        let theirs = venv_json(PYICEBERG_READS, &[r, &ident]);
        assert_eq!(
            ours["committed_version"], theirs["snapshot"],
            "{name}: {ours}"
        );
        assert_eq!(theirs["operation"], "replace", "{name}: {theirs}");
        assert_eq!(theirs["same_rows"], true, "{name}: {theirs}");
        let listed = theirs["files"].as_array().unwrap();
        assert_eq!(listed.len(), files, "{name}: {theirs}");
        for f in listed {
            assert!(has_filter(f.as_str().unwrap(), 1), "{name}: {f}");
        }
        let filtered = venv_json(PYICEBERG_FILTERED, &[r, &ident]);
        assert_eq!(filtered["format_version"], format, "{name}: {filtered}");
        assert_eq!(filtered["now"], filtered["before"], "{name}: {filtered}");
        // pyiceberg appends after us.
        let before: i64 = theirs["rows"].as_i64().unwrap();
        assert_eq!(
            filtered["rows_after_append"],
            before + 10,
            "{name}: {filtered}"
        );
    }
}
