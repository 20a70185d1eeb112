//! `sbbf query` of a Delta or Iceberg table with its index (`sbbf index build TABLE`): the
//! files the index rules out are never opened, and every count is the format's own reader's
//! (deltalake's SQL engine, pyiceberg's scan), with the index as without it: under column
//! mapping, with a predicate on a partition column, after a rename, after commits since the
//! index was built, and through the table's catalog.

use crate::common::{sbbf, text};
use crate::lake::venv_json;
use serde_json::Value;
use std::path::Path;

/// Writes two Delta tables with deltalake into argv[1]: `plain` and `mapped` (column mapping
/// by name, partitioned by `p`, its key column named `User Id`), six appends each, every
/// file's ids interleaved with the others' (so no file's minimum and maximum rule a value
/// out: only Bloom filters can).
pub(crate) const DELTA_TABLES: &str = r#"
import json, os, sys
import pyarrow as pa
from deltalake import write_deltalake
root = sys.argv[1]
def rows(k, key):
    ids = [k + 6 * i for i in range(50)]
    return pa.table({key: pa.array(ids, pa.int64()),
                     "p": pa.array(["a" if k % 2 else "b"] * 50, pa.string()),
                     "s": [f"s{i}" for i in ids]})
for k in range(6):
    write_deltalake(os.path.join(root, "plain"), rows(k, "id"), mode="append")
    write_deltalake(os.path.join(root, "mapped"), rows(k, "User Id"), mode="append",
                    partition_by=["p"],
                    configuration={"delta.columnMapping.mode": "name"} if k == 0 else None)
print(json.dumps({}))
os._exit(0)
"#;

/// Appends ids 10000..10009 (partition `a`) to the Delta table argv[1], whose key column is
/// argv[2].
const DELTA_APPEND: &str = r#"
import json, os, sys
import pyarrow as pa
from deltalake import write_deltalake
ids = list(range(10000, 10010))
t = pa.table({sys.argv[2]: pa.array(ids, pa.int64()), "p": pa.array(["a"] * 10, pa.string()),
              "s": [f"s{i}" for i in ids]})
write_deltalake(sys.argv[1], t, mode="append")
print(json.dumps({}))
os._exit(0)
"#;

/// What deltalake's SQL engine counts for each (table, SQL) pair of the JSON list argv[1].
const DELTA_COUNTS: &str = r#"
import json, os, sys
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder
out = []
for path, sql in json.loads(sys.argv[1]):
    got = pa.table(QueryBuilder().register("t", DeltaTable(path)).execute(sql).read_all())
    out.append(got.to_pylist()[0]["n"])
print(json.dumps(out))
os._exit(0)
"#;

/// `sbbf query TABLE SQL --format json --stats` and more: the count (column `n`) and the
/// stats line of table `t`.
fn query(table: &str, sql: &str, extra: &[&str]) -> (Value, Value) {
    let mut args = vec!["query", table, sql, "--format", "json", "--stats"];
    args.extend_from_slice(extra);
    let out = sbbf(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{table} {sql}: {}",
        text(&out.stderr)
    );
    let n = serde_json::from_str::<Value>(text(&out.stdout).trim()).unwrap()["n"].clone();
    let stats = text(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("row_groups_pruned_index").is_some())
        .unwrap_or_else(|| panic!("no stats line: {}", text(&out.stderr)));
    (n, stats)
}

fn ok(args: &[&str]) {
    let out = sbbf(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
}

/// Each case's count, with the index, without it (`--no-index`) and without our pruning,
/// against `want`; the row groups the index ruled out in each case, with it.
fn counts_agree(table: &str, cases: &[(String, Value)]) -> Vec<u64> {
    let mut by_index = Vec::new();
    for (sql, want) in cases {
        let (with, stats) = query(table, sql, &[]);
        assert_eq!(&with, want, "{table}: {sql}");
        let (without, plain) = query(table, sql, &["--no-index"]);
        assert_eq!(&without, want, "{table}: {sql} --no-index");
        assert_eq!(plain["row_groups_pruned_index"], 0, "{sql}");
        let (unpruned, _) = query(table, sql, &["--no-sbbf"]);
        assert_eq!(&unpruned, want, "{table}: {sql} --no-sbbf");
        by_index.push(stats["row_groups_pruned_index"].as_u64().unwrap());
    }
    by_index
}

/// Files changed less than 2 s before a build are not covered (the index could not tell a
/// second change in the same clock tick); these are to be covered.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

#[test]
fn delta_queries_use_the_index_and_count_as_deltalake_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    venv_json(DELTA_TABLES, &[root.to_str().unwrap()]);
    let plain = root.join("plain");
    let mapped = root.join("mapped");
    let (plain, mapped) = (plain.to_str().unwrap(), mapped.to_str().unwrap());
    // Filters through the table's own commit, then the index of them.
    ok(&["add", plain, "-c", "id"]);
    ok(&["add", mapped, "-c", "User Id"]);
    settle();
    ok(&["index", "build", plain, "-c", "id"]);
    ok(&["index", "build", mapped, "-c", "User Id"]);
    let sqls = |key: &str| -> Vec<String> {
        [
            format!("SELECT count(*) AS n FROM t WHERE {key} = 7"),
            format!("SELECT count(*) AS n FROM t WHERE {key} IN (7, 8, 299)"),
            format!("SELECT count(*) AS n FROM t WHERE {key} = 100001"),
            // A partition column's leaf is the log's to answer: the index is asked the rest,
            // and an OR holding it is not asked at all.
            format!("SELECT count(*) AS n FROM t WHERE p = 'b' AND {key} = 7"),
            format!("SELECT count(*) AS n FROM t WHERE p = 'a' AND {key} = 7"),
            format!("SELECT count(*) AS n FROM t WHERE p = 'a' OR {key} = 8"),
            format!("SELECT count(*) AS n FROM t WHERE s = 's7' AND {key} = 7"),
        ]
        .to_vec()
    };
    let oracle = |tables: &[(&str, &str)]| -> Vec<(String, Value)> {
        let mut pairs = Vec::new();
        for (table, key) in tables {
            for sql in sqls(key) {
                pairs.push((table.to_string(), sql));
            }
        }
        let json = serde_json::to_string(&pairs).unwrap();
        let counts = venv_json(DELTA_COUNTS, &[&json]);
        pairs
            .into_iter()
            .map(|(_, sql)| sql)
            .zip(counts.as_array().unwrap().iter().cloned())
            .collect()
    };
    let tables = [(plain, "id"), (mapped, r#""User Id""#)];
    let want = oracle(&tables);
    assert_eq!(want[0].1, 1, "{want:?}");
    for (k, (table, _)) in tables.iter().enumerate() {
        let cases = &want[k * 7..(k + 1) * 7];
        let by_index = counts_agree(table, cases);
        // Six files of one row group each: `= 7` is in one of them, the other five are the
        // index's to rule out; a value in none, all six.
        assert_eq!(by_index[0], 5, "{table}: {by_index:?}");
        assert_eq!(by_index[2], 6, "{table}: {by_index:?}");
        assert!(by_index[3] > 0, "{table}: {by_index:?}");
        assert_eq!(by_index[5], 0, "{table}: {by_index:?}");
    }
    // Commits since the index: the file added is read as without it, the others still
    // ruled out by it.
    venv_json(DELTA_APPEND, &[plain, "id"]);
    venv_json(DELTA_APPEND, &[mapped, "User Id"]);
    let want = oracle(&tables);
    for (k, (table, key)) in tables.iter().enumerate() {
        let cases = &want[k * 7..(k + 1) * 7];
        let by_index = counts_agree(table, cases);
        assert_eq!(by_index[0], 5, "{table}: {by_index:?}");
        let sql = format!("SELECT count(*) AS n FROM t WHERE {key} = 10003");
        let (n, stats) = query(table, &sql, &[]);
        assert_eq!(n, 1, "{table}");
        assert_eq!(stats["row_groups_pruned_index"], 6, "{table}: {stats}");
        assert_eq!(stats["files_pruned_index"], 6, "{table}: {stats}");
        // What asking the index read is counted; without it, nothing is.
        let read = |k: &str| stats[k].as_u64().unwrap_or(0);
        assert!(
            read("index_requests") >= 1 && read("index_bytes") > 0,
            "{table}: {stats}"
        );
        let (n, without) = query(table, &sql, &["--no-index"]);
        assert_eq!(n, 1, "{table}");
        assert!(
            without.get("index_requests").is_none(),
            "{table}: {without}"
        );
        // Named as a URL, the same table and the same index.
        let url = format!("file://{table}/");
        let (n, stats) = query(&url, &sql, &[]);
        assert_eq!(n, 1, "{url}");
        assert_eq!(stats["row_groups_pruned_index"], 6, "{url}: {stats}");
    }
}

/// Writes an Iceberg table with pyiceberg into the SQL catalog in argv[1]: `ns.ice`,
/// partitioned by identity(`p`), six appends with interleaved ids, then `s` renamed `login`
/// and one more append. Prints pyiceberg's counts for the row filters of the JSON list
/// argv[2] (`None`: every row), after it all.
const ICEBERG_TABLE: &str = r#"
import json, sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import NestedField, LongType, StringType
from pyiceberg.partitioning import PartitionSpec, PartitionField
from pyiceberg.transforms import IdentityTransform
root = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=f"file://{root}")
cat.create_namespace("ns")
schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "s", StringType()),
                NestedField(3, "p", StringType()))
spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=IdentityTransform(),
                                    name="p"))
t = cat.create_table("ns.ice", schema=schema, partition_spec=spec)
def rows(ids, p, names=("id", "s", "p")):
    return pa.table({names[0]: pa.array(ids, pa.int64()),
                     names[1]: pa.array([f"s{i}" for i in ids], pa.string()),
                     names[2]: pa.array([p] * len(ids), pa.string())})
for k in range(6):
    t.append(rows([k + 6 * i for i in range(50)], "a" if k % 2 else "b"))
with t.update_schema() as u:
    u.rename_column("s", "login")
t = cat.load_table("ns.ice")
t.append(rows(list(range(10000, 10010)), "a", ("id", "login", "p")))
t = cat.load_table("ns.ice")
counts = [t.scan(row_filter=f).to_arrow().num_rows if f else t.scan().to_arrow().num_rows
          for f in json.loads(sys.argv[2])]
print(json.dumps({"location": t.metadata.location, "counts": counts}))
"#;

#[test]
fn iceberg_queries_use_the_index_by_folder_and_through_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // (SQL, pyiceberg's row filter for the same rows)
    let cases = [
        ("id = 7", "id == 7"),
        ("id IN (7, 8, 10003)", "id in (7, 8, 10003)"),
        ("id = 100001", "id == 100001"),
        ("p = 'b' AND id = 7", "p == 'b' and id == 7"),
        ("p = 'a' OR id = 8", "p == 'a' or id == 8"),
        ("login = 's7'", "login == 's7'"),
        ("login = 's7' AND id = 7", "login == 's7' and id == 7"),
        ("login = 's10003' OR id = 9", "login == 's10003' or id == 9"),
    ];
    let filters: Vec<&str> = cases.iter().map(|(_, f)| *f).collect();
    let made = venv_json(
        ICEBERG_TABLE,
        &[
            root.to_str().unwrap(),
            &serde_json::to_string(&filters).unwrap(),
        ],
    );
    let table = made["location"]
        .as_str()
        .unwrap()
        .trim_start_matches("file://")
        .to_string();
    let cat = format!("sqlite://{}/catalog.db", root.display());
    ok(&[
        "add",
        "--catalog",
        &cat,
        "ns.ice",
        "-c",
        "id",
        "-c",
        "login",
    ]);
    settle();
    ok(&["index", "build", &table, "-c", "id", "-c", "login"]);
    let want: Vec<(String, Value)> = cases
        .iter()
        .zip(made["counts"].as_array().unwrap())
        .map(|((sql, _), n)| {
            (
                format!("SELECT count(*) AS n FROM t WHERE {sql}"),
                n.clone(),
            )
        })
        .collect();
    assert_eq!(want[0].1, 1, "{want:?}");
    let by_index = counts_agree(&table, &want);
    // Seven files (one row group each): `id = 7` in one; the renamed column is never asked
    // of the index (older files hold it as `s`), alone or in an OR.
    assert_eq!(by_index[0], 6, "{by_index:?}");
    assert_eq!(by_index[2], 7, "{by_index:?}");
    assert_eq!(by_index[5], 0, "{by_index:?}");
    assert_eq!(by_index[6], 6, "{by_index:?}");
    assert_eq!(by_index[7], 0, "{by_index:?}");
    // Through the catalog: the same table, the same index.
    let sql = &want[0].0;
    let (n, stats) = query("ns.ice", sql, &["--catalog", &cat]);
    assert_eq!(n, 1);
    assert_eq!(stats["row_groups_pruned_index"], 6, "{stats}");
    assert!(Path::new(&table).join("_sbbf_index").is_dir());
    // The index built through the catalog: the same folder, and the same answers.
    let out = sbbf(&[
        "index",
        "build",
        "--catalog",
        &cat,
        "ns.ice",
        "-c",
        "id",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let built: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(built["files"], 7, "{built}");
    let out = sbbf(&["index", "update", "--catalog", &cat, "ns.ice"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A probe through the catalog answers from the same index.
    let args = [
        "probe",
        "--catalog",
        &cat,
        "ns.ice",
        "id",
        "7",
        "--stats",
        "--format",
        "json",
    ];
    let out = sbbf(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let index = text(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("index").cloned())
        .unwrap_or_else(|| panic!("no index stats: {}", text(&out.stderr)));
    assert_eq!(index["from_index"], 7, "{index}");
}
