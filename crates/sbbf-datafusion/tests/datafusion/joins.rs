//! Joins prune: the keys a hash join collects from its build side reach our filters when the
//! probe side's files are opened. Over the pyarrow files of `testdata/` (every leaf column
//! with filters but floats: ints of each width, dates, times, timestamps, decimals, strings,
//! binary, FLBA, struct fields), joined with dimension tables of keys present in the first
//! row group and keys absent from the file: `JOIN`, `IN (SELECT ..)`, `EXISTS` and joins on
//! two columns. Every query's rows must equal those of the same query over the file loaded in
//! memory (no pruning at all) and those of DataFusion's defaults; our scan must read no more
//! row groups than DataFusion's defaults, and strictly fewer, summed, for the kinds its own
//! Bloom pruning skips.

use crate::rows;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use datafusion::common::ScalarValue;
use datafusion::datasource::MemTable;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionConfig, SessionContext};
use sbbf_datafusion::{with_join_key_sets, SbbfTable, ScanStats};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(name)
}

/// A leaf column with filters, by its path from the top-level column.
#[derive(Clone)]
struct Leaf {
    path: Vec<String>,
    data_type: DataType,
}

impl Leaf {
    /// The column in SQL, on table `t`.
    fn sql(&self) -> String {
        let mut s = format!("t.\"{}\"", self.path[0]);
        for p in &self.path[1..] {
            s.push_str(&format!("['{p}']"));
        }
        s
    }

    fn values(&self, batch: &RecordBatch) -> ArrayRef {
        let mut a: ArrayRef = batch.column_by_name(&self.path[0]).unwrap().clone();
        for name in &self.path[1..] {
            a = a.as_struct().column_by_name(name).unwrap().clone();
        }
        a
    }

    fn kind(&self) -> String {
        let nested = if self.path.len() > 1 {
            "struct field "
        } else {
            ""
        };
        format!("{nested}{}", self.data_type)
    }
}

/// Leaves with a filter in some row group, reachable through structs only; floats left out
/// (joins on floats compare bits in DataFusion's hash table, a matter apart).
fn leaves(file: &Path, schema: &Schema) -> Vec<Leaf> {
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap()).unwrap();
    let meta = b.metadata().clone();
    let mut out = Vec::new();
    for (i, c) in meta
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .enumerate()
    {
        if !meta
            .row_groups()
            .iter()
            .any(|rg| rg.column(i).bloom_filter_offset().is_some())
        {
            continue;
        }
        let parts = c.path().parts().to_vec();
        let Ok(f) = schema.field_with_name(&parts[0]) else {
            continue;
        };
        let mut dt = f.data_type().clone();
        let mut ok = true;
        for p in &parts[1..] {
            match &dt {
                DataType::Struct(fields) => match fields.find(p) {
                    Some((_, f)) => dt = f.data_type().clone(),
                    None => ok = false,
                },
                _ => ok = false,
            }
        }
        let float = matches!(
            dt,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        );
        if ok && !dt.is_nested() && dt != DataType::Boolean && !float {
            out.push(Leaf {
                path: parts,
                data_type: dt,
            });
        }
    }
    out
}

/// Values near `v` of its type (to find ones the file does not hold).
fn neighbours(v: &ScalarValue) -> Vec<ScalarValue> {
    use ScalarValue as S;
    (1..=24i64)
        .filter_map(|d| {
            let step = d * 7919;
            Some(match v {
                S::Int8(Some(x)) => S::Int8(Some(x.wrapping_add(d as i8))),
                S::Int16(Some(x)) => S::Int16(Some(x.wrapping_add(step as i16))),
                S::Int32(Some(x)) => S::Int32(Some(x.wrapping_add(step as i32))),
                S::Int64(Some(x)) => S::Int64(Some(x.wrapping_add(step))),
                S::UInt8(Some(x)) => S::UInt8(Some(x.wrapping_add(d as u8))),
                S::UInt16(Some(x)) => S::UInt16(Some(x.wrapping_add(step as u16))),
                S::UInt32(Some(x)) => S::UInt32(Some(x.wrapping_add(step as u32))),
                S::UInt64(Some(x)) => S::UInt64(Some(x.wrapping_add(step as u64))),
                S::Date32(Some(x)) => S::Date32(Some(x.checked_add(d as i32)?)),
                S::Time32Millisecond(Some(x)) => {
                    S::Time32Millisecond(Some((x + step as i32) % 86_400_000))
                }
                S::Time64Microsecond(Some(x)) => {
                    S::Time64Microsecond(Some((x + step) % 86_400_000_000))
                }
                S::Time64Nanosecond(Some(x)) => {
                    S::Time64Nanosecond(Some((x + step) % 86_400_000_000_000))
                }
                S::TimestampMillisecond(Some(x), tz) => {
                    S::TimestampMillisecond(Some(x.checked_add(step)?), tz.clone())
                }
                S::TimestampMicrosecond(Some(x), tz) => {
                    S::TimestampMicrosecond(Some(x.checked_add(step)?), tz.clone())
                }
                S::TimestampNanosecond(Some(x), tz) => {
                    S::TimestampNanosecond(Some(x.checked_add(step)?), tz.clone())
                }
                S::Decimal128(Some(x), p, s) => {
                    let y = if *x > 0 { x - d as i128 } else { x + d as i128 };
                    S::Decimal128(Some(y), *p, *s)
                }
                S::Utf8(Some(s)) => S::Utf8(Some(format!("{s}~{d}"))),
                S::Utf8View(Some(s)) => S::Utf8View(Some(format!("{s}~{d}"))),
                S::LargeUtf8(Some(s)) => S::LargeUtf8(Some(format!("{s}~{d}"))),
                S::Binary(Some(b)) => S::Binary(Some([b.as_slice(), &[0xa5, d as u8]].concat())),
                S::BinaryView(Some(b)) => {
                    S::BinaryView(Some([b.as_slice(), &[0xa5, d as u8]].concat()))
                }
                S::LargeBinary(Some(b)) => {
                    S::LargeBinary(Some([b.as_slice(), &[0xa5, d as u8]].concat()))
                }
                S::FixedSizeBinary(n, Some(b)) => {
                    let mut b = b.clone();
                    let last = b.len().checked_sub(1)?;
                    b[last] = b[last].wrapping_add(d as u8);
                    b[0] ^= 0x5a;
                    S::FixedSizeBinary(*n, Some(b))
                }
                _ => return None,
            })
        })
        .collect()
}

struct Fixture {
    file: PathBuf,
    /// The whole file, as DataFusion reads it.
    all: Vec<RecordBatch>,
    /// Row group 0 alone.
    first: Vec<RecordBatch>,
    schema: Arc<Schema>,
}

async fn fixture(name: &str) -> Fixture {
    let file = testdata(name);
    let path = file.to_str().unwrap();
    let ctx = SessionContext::new();
    let t = SbbfTable::with_pruning(&ctx.state(), path, false)
        .await
        .unwrap();
    let schema = t.schema();
    ctx.register_table("t", Arc::new(t)).unwrap();
    let all = ctx.table("t").await.unwrap().collect().await.unwrap();
    // Row group 0: its first `num_rows` rows in file order, read with one partition.
    let n0 = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap())
        .unwrap()
        .metadata()
        .row_group(0)
        .num_rows() as usize;
    let one = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    let t = SbbfTable::with_pruning(&one.state(), path, false)
        .await
        .unwrap();
    one.register_table("t", Arc::new(t)).unwrap();
    let ordered = one.table("t").await.unwrap().collect().await.unwrap();
    let mut first = Vec::new();
    let mut left = n0;
    for b in ordered {
        if left == 0 {
            break;
        }
        let take = left.min(b.num_rows());
        first.push(b.slice(0, take));
        left -= take;
    }
    Fixture {
        file,
        all,
        first,
        schema,
    }
}

/// Up to `n` values of row group 0 that no other row group holds.
fn only_in_first(f: &Fixture, leaf: &Leaf, n: usize) -> Vec<ScalarValue> {
    let count = |batches: &[RecordBatch]| {
        let mut c: std::collections::HashMap<ScalarValue, usize> = Default::default();
        for b in batches {
            let a = leaf.values(b);
            for i in 0..a.len() {
                if !a.is_null(i) {
                    *c.entry(ScalarValue::try_from_array(&a, i).unwrap())
                        .or_default() += 1;
                }
            }
        }
        c
    };
    let (all, first) = (count(&f.all), count(&f.first));
    distinct(&f.first, leaf)
        .into_iter()
        .filter(|v| all.get(v) == first.get(v))
        .take(n)
        .collect()
}

fn distinct(batches: &[RecordBatch], leaf: &Leaf) -> Vec<ScalarValue> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for b in batches {
        let a = leaf.values(b);
        for i in 0..a.len() {
            if a.is_null(i) {
                continue;
            }
            let v = ScalarValue::try_from_array(&a, i).unwrap();
            if seen.insert(v.clone()) {
                out.push(v);
            }
        }
    }
    out
}

/// A dimension table with columns `k0, k1, ..` of the given types and rows.
fn dimension(types: &[DataType], rows: &[Vec<ScalarValue>]) -> Arc<MemTable> {
    let fields: Vec<Field> = types
        .iter()
        .enumerate()
        .map(|(i, t)| Field::new(format!("k{i}"), t.clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let columns: Vec<ArrayRef> = (0..types.len())
        .map(|c| {
            if rows.is_empty() {
                datafusion::arrow::array::new_empty_array(&types[c])
            } else {
                ScalarValue::iter_to_array(rows.iter().map(|r| r[c].clone())).unwrap()
            }
        })
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap())
}

/// The three sessions a query runs in: our table, DataFusion's defaults, the file in memory.
struct Sessions {
    ours: SessionContext,
    theirs: SessionContext,
    memory: SessionContext,
}

async fn sessions(f: &Fixture, d: Arc<MemTable>) -> Sessions {
    let path = f.file.to_str().unwrap();
    let ours = SessionContext::new_with_config(with_join_key_sets(SessionConfig::new()));
    let t = SbbfTable::try_new(&ours.state(), path)
        .await
        .unwrap()
        .with_name("t");
    ours.register_table("t", Arc::new(t)).unwrap();
    let theirs = SessionContext::new();
    let t = SbbfTable::with_pruning(&theirs.state(), path, false)
        .await
        .unwrap()
        .with_name("t");
    theirs.register_table("t", Arc::new(t)).unwrap();
    let memory = SessionContext::new();
    let mem = MemTable::try_new(f.schema.clone(), vec![f.all.clone()]).unwrap();
    memory.register_table("t", Arc::new(mem)).unwrap();
    for ctx in [&ours, &theirs, &memory] {
        ctx.register_table("d", d.clone()).unwrap();
    }
    Sessions {
        ours,
        theirs,
        memory,
    }
}

/// Runs `sql` in the three sessions (each under a time limit: a scan must never wait for
/// ever); returns our scan's and DataFusion's stats of table `t`.
async fn check(s: &Sessions, sql: &str) -> (ScanStats, ScanStats, usize) {
    let mut results = Vec::new();
    let mut stats = Vec::new();
    for ctx in [&s.ours, &s.theirs, &s.memory] {
        let run = async {
            let plan = ctx.sql(sql).await?.create_physical_plan().await?;
            let batches = collect(plan.clone(), ctx.task_ctx()).await?;
            Ok::<_, datafusion::error::DataFusionError>((batches, plan))
        };
        let (batches, plan) = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .unwrap_or_else(|_| panic!("{sql}: no answer within 60 s"))
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        results.push(rows(&batches));
        stats.push(ScanStats::of_table(&plan, "t"));
    }
    assert_eq!(
        results[0], results[2],
        "{sql}: our pruned scan and the in-memory table disagree"
    );
    assert_eq!(
        results[1], results[2],
        "{sql}: DataFusion's scan and the in-memory table disagree"
    );
    assert!(
        stats[0].read <= stats[1].read,
        "{sql}: we read {} row groups, DataFusion {} ({:?} / {:?})",
        stats[0].read,
        stats[1].read,
        stats[0],
        stats[1]
    );
    (stats[0], stats[1], results[0].len())
}

#[derive(Default, Debug)]
struct Tally {
    queries: usize,
    read_ours: usize,
    read_theirs: usize,
    pruned_join: usize,
}

const FILES: [&str; 4] = [
    "pa_ints.parquet",
    "pa_temporal.parquet",
    "pa_float_bytes.parquet",
    "pa_nested.parquet",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joins_prune_and_never_lose_a_row() {
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let mut nonempty = 0;
    for name in FILES {
        let f = fixture(name).await;
        let leaves = leaves(&f.file, &f.schema);
        assert!(!leaves.is_empty(), "{name}: no leaf with filters");
        for leaf in &leaves {
            let everywhere: HashSet<ScalarValue> = distinct(&f.all, leaf).into_iter().collect();
            let present = only_in_first(&f, leaf, 3);
            let mut absent: Vec<ScalarValue> = Vec::new();
            for v in &present {
                for n in neighbours(v) {
                    if !everywhere.contains(&n) && !absent.contains(&n) && absent.len() < 12 {
                        absent.push(n);
                    }
                }
            }
            let col = leaf.sql();
            for (what, keys) in [
                ("present", present.clone()),
                ("absent", absent.clone()),
                ("present+absent", [present.clone(), absent.clone()].concat()),
            ] {
                if keys.is_empty() {
                    continue;
                }
                let rows: Vec<Vec<ScalarValue>> = keys.iter().map(|k| vec![k.clone()]).collect();
                let d = dimension(std::slice::from_ref(&leaf.data_type), &rows);
                let s = sessions(&f, d).await;
                for sql in [
                    format!("SELECT count(*), min({col}) FROM t JOIN d ON {col} = d.k0"),
                    format!("SELECT {col} FROM t WHERE {col} IN (SELECT k0 FROM d)"),
                    format!(
                        "SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM d WHERE d.k0 = {col})"
                    ),
                ] {
                    let (ours, theirs, n) = check(&s, &sql).await;
                    nonempty += usize::from(n > 1);
                    let t = tally
                        .entry(format!("{} ({what})", leaf.kind()))
                        .or_default();
                    t.queries += 1;
                    t.read_ours += ours.read;
                    t.read_theirs += theirs.read;
                    t.pruned_join += ours.pruned_sbbf_join;
                }
            }
        }
        // Two-column joins: pairs of neighbouring leaves, keys from rows of row group 0.
        for pair in leaves.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let (va, vb) = (a.values(&f.first[0]), b.values(&f.first[0]));
            let rows: Vec<Vec<ScalarValue>> = (0..va.len().min(5))
                .filter(|i| !va.is_null(*i) && !vb.is_null(*i))
                .map(|i| {
                    vec![
                        ScalarValue::try_from_array(&va, i).unwrap(),
                        ScalarValue::try_from_array(&vb, i).unwrap(),
                    ]
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            let d = dimension(&[a.data_type.clone(), b.data_type.clone()], &rows);
            let s = sessions(&f, d).await;
            let sql = format!(
                "SELECT count(*) FROM t JOIN d ON {} = d.k0 AND {} = d.k1",
                a.sql(),
                b.sql()
            );
            let (ours, theirs, _) = check(&s, &sql).await;
            let t = tally.entry("two columns".into()).or_default();
            t.queries += 1;
            t.read_ours += ours.read;
            t.read_theirs += theirs.read;
            t.pruned_join += ours.pruned_sbbf_join;
        }
    }
    println!(
        "| kind (keys) | queries | row groups read, ours | DataFusion | pruned by join keys |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (k, t) in &tally {
        println!(
            "| {k} | {} | {} | {} | {} |",
            t.queries, t.read_ours, t.read_theirs, t.pruned_join
        );
    }
    assert!(nonempty > 20, "only {nonempty} queries returned rows");
    // The kinds DataFusion's own Bloom pruning skips: ours must read strictly fewer.
    let not_theirs = [
        "Date",
        "Time",
        "Int8",
        "Int16",
        "UInt8",
        "UInt16",
        "struct field",
        "FixedSizeBinary(16)",
    ];
    let mut seen = 0;
    for (k, t) in &tally {
        if k.ends_with("(absent)") && not_theirs.iter().any(|p| k.starts_with(p)) {
            seen += 1;
            assert!(
                t.read_ours < t.read_theirs,
                "{k}: we read {} row groups, DataFusion {}",
                t.read_ours,
                t.read_theirs
            );
        }
    }
    assert!(
        seen >= 8,
        "only {seen} kinds DataFusion does not prune were tested"
    );
    let pruned: usize = tally.values().map(|t| t.pruned_join).sum();
    assert!(
        pruned > 100,
        "the join keys pruned only {pruned} row groups"
    );
}

/// The shapes where a scan must not wait for a join filter: a TopK's filter (it completes
/// only when this scan is done), a scan that is itself a build side, an empty build side,
/// joins that are no hash joins, a query dropped half way. Each answers (within the time
/// limit) with the in-memory table's rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_shape_makes_a_scan_wait() {
    let f = fixture("pa_ints.parquet").await;
    let leaf = leaves(&f.file, &f.schema)
        .into_iter()
        .find(|l| l.path == ["i64"])
        .unwrap();
    let present: Vec<ScalarValue> = distinct(&f.first, &leaf).into_iter().take(3).collect();
    let small: Vec<Vec<ScalarValue>> = present.iter().map(|k| vec![k.clone()]).collect();
    // Far more rows than the file: the optimizer makes the file the build side.
    let big: Vec<Vec<ScalarValue>> = (0..50_000i64)
        .map(|i| vec![ScalarValue::Int64(Some(i - 25_000))])
        .chain(small.iter().cloned())
        .collect();
    let cases: Vec<(Vec<Vec<ScalarValue>>, &str)> = vec![
        (small.clone(), "SELECT i64 FROM t ORDER BY i64 DESC LIMIT 3"),
        (
            small.clone(),
            "SELECT i32 FROM t WHERE i64 IN (SELECT k0 FROM d) ORDER BY i32 LIMIT 2",
        ),
        (big.clone(), "SELECT count(*) FROM d JOIN t ON t.i64 = d.k0"),
        (big, "SELECT count(*) FROM t RIGHT JOIN d ON t.i64 = d.k0"),
        (Vec::new(), "SELECT count(*) FROM t JOIN d ON t.i64 = d.k0"),
        (
            Vec::new(),
            "SELECT count(*) FROM t WHERE i64 IN (SELECT k0 FROM d)",
        ),
        (
            small.clone(),
            "SELECT count(*) FROM t JOIN d ON t.i64 < d.k0",
        ),
        (
            small.clone(),
            "SELECT count(*) FROM t LEFT JOIN d ON t.i64 = d.k0",
        ),
        (
            small.clone(),
            "SELECT count(*) FROM t WHERE i64 NOT IN (SELECT k0 FROM d)",
        ),
    ];
    for (rows, sql) in cases {
        let d = dimension(&[DataType::Int64], &rows);
        let s = sessions(&f, d).await;
        check(&s, sql).await;
    }
    // A sort-merge join instead of a hash join.
    let d = dimension(&[DataType::Int64], &small);
    let s = sessions(&f, d).await;
    for ctx in [&s.ours, &s.theirs, &s.memory] {
        ctx.sql("SET datafusion.optimizer.prefer_hash_join = false")
            .await
            .unwrap();
    }
    check(&s, "SELECT count(*) FROM t JOIN d ON t.i64 = d.k0").await;
    // Dropped after its first batch: nothing keeps running or waiting.
    let df = s
        .ours
        .sql("SELECT t.* FROM t JOIN d ON t.i64 = d.k0")
        .await
        .unwrap();
    let mut stream = df.execute_stream().await.unwrap();
    use futures::StreamExt;
    let first = tokio::time::timeout(Duration::from_secs(60), stream.next()).await;
    assert!(first.is_ok(), "no first batch within 60 s");
    drop(stream);
}

/// A join's keys reach our filters as a set beyond DataFusion's 150: 2,000 keys, 3 of them
/// in row group 0, the rest absent from the file, still prune the row groups that hold none.
/// With K keys a row group survives filters of FPP p with probability about 1 - (1 - p)^K, so
/// the file gets filters of FPP 1e-6 first (`add_filters`): 2,000 keys then leave a row group
/// without them a 0.2 % chance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_keys_reach_the_filters() {
    let dir = tempfile::tempdir().unwrap();
    let tight = dir.path().join("tight.parquet");
    let opts = sbbf_parquet::write::AddOptions {
        columns: vec!["date".into()],
        fpp: 1e-6,
        ndv: None,
        replace: true,
    };
    let report = sbbf_parquet::write::add_filters(
        &testdata("pa_temporal.parquet"),
        &tight,
        &opts,
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(report.filters.len(), 4, "{report:?}");
    let f = fixture(tight.to_str().unwrap()).await;
    let leaf = leaves(&f.file, &f.schema)
        .into_iter()
        .find(|l| l.path == ["date"])
        .unwrap();
    let everywhere: HashSet<ScalarValue> = distinct(&f.all, &leaf).into_iter().collect();
    let present = only_in_first(&f, &leaf, 3);
    assert_eq!(present.len(), 3);
    let mut keys = present.clone();
    let mut d = 1_000_000;
    while keys.len() < 2_000 {
        let v = ScalarValue::Date32(Some(d));
        if !everywhere.contains(&v) {
            keys.push(v);
        }
        d += 1;
    }
    let rows: Vec<Vec<ScalarValue>> = keys.iter().map(|k| vec![k.clone()]).collect();
    let s = sessions(&f, dimension(&[DataType::Date32], &rows)).await;
    let (ours, theirs, _) = check(&s, "SELECT count(*) FROM t JOIN d ON t.date = d.k0").await;
    assert!(ours.pruned_sbbf_join >= 1, "{ours:?} {report:?}");
    assert!(
        ours.read < theirs.read,
        "ours {ours:?}, DataFusion {theirs:?}"
    );
    // With the join filter evaluated row by row inside the scan (DataFusion's planner sees
    // the big set left out of its snapshot, the rows are still decided by the whole filter).
    for ctx in [&s.ours, &s.theirs] {
        ctx.sql("SET datafusion.execution.parquet.pushdown_filters = true")
            .await
            .unwrap();
    }
    check(&s, "SELECT t.date, t.ts_ms FROM t JOIN d ON t.date = d.k0").await;
}

/// A copy of `testdata/NAME` in `dir` with filters of FPP 1e-6 on `column` (replacing the
/// file's own), so that thousands of absent keys still prune.
fn tight_copy(dir: &Path, name: &str, column: &str) -> PathBuf {
    let tight = dir.join(format!("tight-{name}"));
    let opts = sbbf_parquet::write::AddOptions {
        columns: vec![column.into()],
        fpp: 1e-6,
        ndv: None,
        replace: true,
    };
    sbbf_parquet::write::add_filters(&testdata(name), &tight, &opts, &mut |_, _| {}).unwrap();
    tight
}

/// `sql` over the table at `path` as `t` (our pruning on or off) and `d`: its rows and `t`'s
/// figures.
async fn joined(
    config: SessionConfig,
    path: &str,
    pruning: bool,
    d: &Arc<MemTable>,
    sql: &str,
) -> (Vec<String>, ScanStats) {
    let ctx = SessionContext::new_with_config(config);
    let t = SbbfTable::with_pruning(&ctx.state(), path, pruning)
        .await
        .unwrap()
        .with_name("t");
    ctx.register_table("t", Arc::new(t)).unwrap();
    ctx.register_table("d", d.clone()).unwrap();
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let batches = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    (rows(&batches), ScanStats::of_table(&plan, "t"))
}

/// A directory of eight copies of `file` under `dir` (its path, ending in `/`) and a
/// dimension of `n` keys on its `i64` column: 3 held only by the file's first row group, the
/// rest held by no row group.
async fn eight_copies_and_keys(
    dir: &std::path::Path,
    file: &std::path::Path,
    n: usize,
) -> (String, Arc<MemTable>) {
    let table = dir.join("table");
    std::fs::create_dir(&table).unwrap();
    for i in 0..8 {
        std::fs::copy(file, table.join(format!("part-{i}.parquet"))).unwrap();
    }
    let f = fixture(file.to_str().unwrap()).await;
    let leaf = leaves(&f.file, &f.schema)
        .into_iter()
        .find(|l| l.path == ["i64"])
        .unwrap();
    let everywhere: HashSet<ScalarValue> = distinct(&f.all, &leaf).into_iter().collect();
    let mut keys = only_in_first(&f, &leaf, 3);
    assert_eq!(keys.len(), 3);
    let mut k = 7_000_000_000_i64;
    while keys.len() < n {
        let v = ScalarValue::Int64(Some(k));
        if !everywhere.contains(&v) {
            keys.push(v);
        }
        k += 7;
    }
    let dim_rows: Vec<Vec<ScalarValue>> = keys.iter().map(|k| vec![k.clone()]).collect();
    (
        format!("{}/", table.display()),
        dimension(&[DataType::Int64], &dim_rows),
    )
}

/// A join's key set is coerced and hashed once for the whole scan: a directory of eight files
/// read by four partitions, 5,000 keys, one hashing (`sbbf_key_sets_hashed`). The files get
/// filters of FPP 1e-6 first, so 5,000 absent keys still prune (a row group without them
/// survives with probability 0.5 %); DataFusion's defaults read every row group (above 150
/// keys its join pushes a hash-table lookup).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_set_is_hashed_once_per_scan() {
    let dir = tempfile::tempdir().unwrap();
    let tight = tight_copy(dir.path(), "pa_ints.parquet", "i64");
    let (path, d) = eight_copies_and_keys(dir.path(), &tight, 5_000).await;
    let sql = "SELECT count(*) FROM t JOIN d ON t.i64 = d.k0";
    let mut counts = Vec::new();
    let mut stats = Vec::new();
    for pruning in [true, false] {
        let config = SessionConfig::new().with_target_partitions(4);
        let config = if pruning {
            with_join_key_sets(config)
        } else {
            config
        };
        let (rows, stats_t) = joined(config, &path, pruning, &d, sql).await;
        counts.push(rows);
        stats.push(stats_t);
    }
    assert_eq!(counts[0], counts[1], "{stats:?}");
    let (ours, theirs) = (stats[0], stats[1]);
    assert_eq!(ours.join_keys, 5_000, "{ours:?}");
    assert_eq!(ours.key_sets_hashed, 1, "{ours:?}");
    assert!(ours.pruned_sbbf_join > 0, "{ours:?}");
    assert_eq!(ours.join_files_unprobed, 0, "{ours:?}");
    assert!(
        ours.read < theirs.read,
        "ours {ours:?}, DataFusion {theirs:?}"
    );
}

/// Filters too loose for the keys are not read: pa_ints.parquet's own filters (sized for
/// their values at about 1 % FPP) against 5,000 keys would let every row group through, which
/// their sizes and row counts tell before a byte of them is read: reading them cannot pay. The
/// same keys against filters of FPP 1e-6 are probed (`a_key_set_is_hashed_once_per_scan`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_too_loose_for_the_keys_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let (path, d) = eight_copies_and_keys(dir.path(), &testdata("pa_ints.parquet"), 5_000).await;
    let sql = "SELECT count(*) FROM t JOIN d ON t.i64 = d.k0";
    let config = || SessionConfig::new().with_target_partitions(4);
    let (ours_rows, ours) = joined(with_join_key_sets(config()), &path, true, &d, sql).await;
    let (their_rows, theirs) = joined(config(), &path, false, &d, sql).await;
    assert_eq!(ours_rows, their_rows);
    assert_eq!(ours.join_keys, 5_000, "{ours:?}");
    assert!(ours.join_files_unprobed >= 1, "{ours:?}");
    assert_eq!(ours.pruned_sbbf_join, 0, "{ours:?}");
    assert_eq!(ours.sbbf_bytes, 0, "{ours:?}");
    assert!(
        ours.read <= theirs.read,
        "ours {ours:?}, DataFusion {theirs:?}"
    );
}

/// A file DataFusion splits into byte ranges (one per partition) is opened once per range:
/// each range probes only the row groups it reads, so the filters are read once and every
/// row group is counted once (pruned + read = the file's row groups).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_split_into_ranges_is_probed_and_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let tight = tight_copy(dir.path(), "pa_ints.parquet", "i64");
    let f = fixture(tight.to_str().unwrap()).await;
    let leaf = leaves(&f.file, &f.schema)
        .into_iter()
        .find(|l| l.path == ["i64"])
        .unwrap();
    let mut keys = only_in_first(&f, &leaf, 3);
    keys.extend((0..200).map(|i| ScalarValue::Int64(Some(9_000_000_000 + i))));
    let dim_rows: Vec<Vec<ScalarValue>> = keys.iter().map(|k| vec![k.clone()]).collect();
    let d = dimension(&[DataType::Int64], &dim_rows);
    let sql = "SELECT count(*) FROM t JOIN d ON t.i64 = d.k0";
    let mut counts = Vec::new();
    let mut stats = Vec::new();
    for (pruning, split) in [(true, true), (true, false), (false, false)] {
        let mut config = with_join_key_sets(
            SessionConfig::new()
                .with_target_partitions(4)
                .with_batch_size(64),
        );
        // Every file split into ranges, however small (small batches: DataFusion splits a
        // scan only when it has more rows than a batch).
        config.options_mut().optimizer.repartition_file_min_size = if split { 0 } else { 1 << 40 };
        let (rows, stats_t) = joined(config, tight.to_str().unwrap(), pruning, &d, sql).await;
        counts.push(rows);
        stats.push(stats_t);
    }
    assert_eq!(counts[0], counts[2], "{stats:?}");
    assert_eq!(counts[1], counts[2], "{stats:?}");
    let (split, whole) = (stats[0], stats[1]);
    let n = whole.in_scan;
    assert_eq!(split.in_scan, n, "{split:?}");
    assert!(split.pruned_sbbf_join > 0, "{split:?}");
    assert_eq!(split.pruned_sbbf_join + split.read, n, "{split:?}");
    // The same filters read, in the same requests, as when the file is read whole.
    assert_eq!(
        split.pruned_sbbf_join, whole.pruned_sbbf_join,
        "{split:?} {whole:?}"
    );
    assert_eq!(split.sbbf_bytes, whole.sbbf_bytes, "{split:?} {whole:?}");
}
