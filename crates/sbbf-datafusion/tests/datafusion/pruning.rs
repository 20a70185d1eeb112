//! Every testdata file, every leaf column with filters (struct fields included): equality, IN
//! lists of 1 to 1,000 values, AND and OR of ANDs. For each query the rows must equal those
//! of the same query over the file loaded in memory (no pruning at all), and our scan must read
//! no more row groups than DataFusion's own pruning (statistics and its Bloom-filter reads).

use crate::rows;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::TableProvider;
use datafusion::common::ScalarValue;
use datafusion::datasource::MemTable;
use datafusion::functions::core::expr_fn::get_field;
use datafusion::logical_expr::Expr;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::physical_plan::collect;
use datafusion::prelude::{col, lit, SessionContext};
use sbbf_datafusion::{SbbfTable, ScanStats};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A leaf column with filters: how to name it in an expression and how to find its values.
struct Leaf {
    path: Vec<String>,
    data_type: DataType,
}

impl Leaf {
    fn expr(&self) -> Expr {
        let mut e = col(format!("\"{}\"", self.path[0]));
        for name in &self.path[1..] {
            e = get_field(e, name.as_str());
        }
        e
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

/// Leaves reachable through structs only, with a filter in some row group.
fn leaves(file: &Path) -> Vec<Leaf> {
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap()).unwrap();
    let meta = b.metadata().clone();
    let schema = b.schema().clone();
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
        let mut dt = match schema.field_with_name(&parts[0]) {
            Ok(f) => f.data_type().clone(),
            Err(_) => continue,
        };
        let mut ok = true;
        for p in &parts[1..] {
            match &dt {
                DataType::Struct(fields) => match fields.find(p) {
                    Some((_, f)) => dt = f.data_type().clone(),
                    None => ok = false,
                },
                _ => ok = false,
            }
            if !ok {
                break;
            }
        }
        if ok && !dt.is_nested() && dt != DataType::Boolean {
            out.push(Leaf {
                path: parts,
                data_type: dt,
            });
        }
    }
    out
}

/// Up to `n` distinct non-null values of the leaf in row group `rg`, as DataFusion reads them.
fn values_of(
    ctx_batches: &[Vec<RecordBatch>],
    leaf: &Leaf,
    rg: usize,
    n: usize,
) -> Vec<ScalarValue> {
    let mut seen = Vec::new();
    for b in &ctx_batches[rg] {
        let a = leaf.values(b);
        for i in 0..a.len() {
            if a.is_null(i) {
                continue;
            }
            let v = ScalarValue::try_from_array(&a, i).unwrap();
            if !seen.contains(&v) {
                seen.push(v);
                if seen.len() == n {
                    return seen;
                }
            }
        }
    }
    seen
}

struct Contexts {
    ours: SessionContext,
    theirs: SessionContext,
    memory: SessionContext,
    /// The file's batches per row group, as DataFusion reads them.
    by_rg: Vec<Vec<RecordBatch>>,
}

async fn contexts(file: &Path) -> Option<Contexts> {
    let path = file.to_str().unwrap();
    let ours = SessionContext::new();
    let theirs = SessionContext::new();
    let memory = SessionContext::new();
    let t = SbbfTable::try_new(&ours.state(), path).await.ok()?;
    let schema = t.schema();
    ours.register_table("t", Arc::new(t)).unwrap();
    let d = SbbfTable::with_pruning(&theirs.state(), path, false)
        .await
        .unwrap();
    theirs.register_table("t", Arc::new(d)).unwrap();
    // The whole file in memory, by row group, in the schema DataFusion gives the file.
    let all = theirs.table("t").await.unwrap().collect().await.ok()?;
    let mem = MemTable::try_new(schema.clone(), vec![all]).unwrap();
    memory.register_table("t", Arc::new(mem)).unwrap();
    let n = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap())
        .unwrap()
        .metadata()
        .num_row_groups();
    let mut by_rg = Vec::new();
    for rg in 0..n {
        // Row group `rg` alone, read by DataFusion (so values have its types).
        let ctx = SessionContext::new();
        let t = SbbfTable::with_pruning(&ctx.state(), path, false)
            .await
            .unwrap();
        let plan = ctx
            .read_table(Arc::new(t))
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let plan = only_row_group(plan, rg, n);
        by_rg.push(collect(plan, ctx.task_ctx()).await.unwrap());
    }
    Some(Contexts {
        ours,
        theirs,
        memory,
        by_rg,
    })
}

/// The same scan restricted to one row group (an access plan on its single file).
fn only_row_group(
    plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    rg: usize,
    n: usize,
) -> Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    use datafusion::common::tree_node::{Transformed, TreeNode};
    use datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
    use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileScanConfigBuilder};
    use datafusion::datasource::source::DataSourceExec;
    plan.transform_up(|node| {
        let Some(exec) = node.downcast_ref::<DataSourceExec>() else {
            return Ok(Transformed::no(node));
        };
        let Some(config) = exec.data_source().downcast_ref::<FileScanConfig>() else {
            return Ok(Transformed::no(node));
        };
        let mut access = ParquetAccessPlan::new_none(n);
        access.scan(rg);
        // The file once, whole (the optimizer may have split it into byte ranges).
        let mut file = config.file_groups[0].files()[0].clone();
        file.range = None;
        file.extensions.insert(access);
        let config = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(vec![FileGroup::new(vec![file])])
            .build();
        Ok(Transformed::yes(DataSourceExec::from_data_source(config)))
    })
    .unwrap()
    .data
}

/// Runs `filter` in the three contexts. Our rows must equal the in-memory rows; DataFusion's
/// own pruning may lose rows (its Bloom filters probe only the literal's float bits, so
/// `f64 = 0.0` misses `-0.0`): such queries are returned as `Err` with what it lost, and
/// their row-group counts are not compared (a wrong answer may read less).
async fn check(
    c: &Contexts,
    filter: Expr,
    what: &str,
    compare_reads: bool,
) -> Result<(ScanStats, ScanStats), String> {
    let mut results = Vec::new();
    let mut stats = Vec::new();
    for ctx in [&c.ours, &c.theirs, &c.memory] {
        let plan = ctx
            .table("t")
            .await
            .unwrap()
            .filter(filter.clone())
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let batches = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
        results.push(rows(&batches));
        stats.push(ScanStats::of(&plan));
    }
    assert_eq!(
        results[0], results[2],
        "{what}: our pruned scan and the in-memory table disagree"
    );
    if results[1] != results[2] {
        let lost = results[2]
            .iter()
            .filter(|r| !results[1].contains(r))
            .count();
        assert!(
            results[1].iter().all(|r| results[2].contains(r)),
            "{what}: DataFusion's scan returned rows the table does not have"
        );
        return Err(format!(
            "{what}: DataFusion's own pruning lost {lost} row(s)"
        ));
    }
    assert!(
        !compare_reads || stats[0].read <= stats[1].read,
        "{what}: we read {} row groups, DataFusion {}",
        stats[0].read,
        stats[1].read
    );
    Ok((stats[0], stats[1]))
}

/// DataFusion probes a float literal's own bits: for `0.0`/`-0.0` (the other zero is equal)
/// and NaN its Bloom pruning may skip row groups that hold matching rows. Where a query holds
/// such a literal, its row-group count may be lower than a sound one, so it is not compared.
fn float_zero_or_nan(v: &ScalarValue) -> bool {
    match v {
        ScalarValue::Float16(Some(x)) => x.to_f32() == 0.0 || x.is_nan(),
        ScalarValue::Float32(Some(x)) => *x == 0.0 || x.is_nan(),
        ScalarValue::Float64(Some(x)) => *x == 0.0 || x.is_nan(),
        _ => false,
    }
}

fn float_zero_or_nan_in(e: &Expr) -> bool {
    use datafusion::common::tree_node::TreeNode;
    let mut found = false;
    e.apply(|e| {
        if let Expr::Literal(v, _) = e {
            found |= float_zero_or_nan(v);
        }
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    })
    .unwrap();
    found
}

#[derive(Default, Debug)]
struct Tally {
    queries: usize,
    row_groups_ours: usize,
    row_groups_theirs: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_a_lost_row_and_never_more_reads_than_datafusion() {
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let mut files = 0;
    let mut unreadable = Vec::new();
    let mut datafusion_wrong = Vec::new();
    for file in sbbf_testkit::corpus_files() {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let Some(c) = contexts(&file).await else {
            unreadable.push(name);
            continue;
        };
        files += 1;
        let leaves = leaves(&file);
        let n = c.by_rg.len();
        // (expression, whether DataFusion's own Bloom pruning is sound for it)
        let mut eqs: Vec<(Expr, bool)> = Vec::new();
        for leaf in &leaves {
            let first = values_of(&c.by_rg, leaf, 0, 1000);
            let last = values_of(&c.by_rg, leaf, n - 1, 3);
            let mut queries: Vec<(Expr, String)> = Vec::new();
            for v in first.iter().take(2).chain(last.iter().take(1)) {
                queries.push((leaf.expr().eq(lit(v.clone())), format!("= {v}")));
            }
            for k in [1, 3, 1000] {
                let list: Vec<Expr> = first.iter().take(k).map(|v| lit(v.clone())).collect();
                if list.len() == k.min(first.len()) && !list.is_empty() {
                    queries.push((
                        leaf.expr().in_list(list, false),
                        format!("IN ({} values)", k.min(first.len())),
                    ));
                }
            }
            if let (Some(a), Some(b)) = (first.first(), last.first()) {
                eqs.push((leaf.expr().eq(lit(a.clone())), !float_zero_or_nan(a)));
                queries.push((
                    leaf.expr()
                        .eq(lit(a.clone()))
                        .or(leaf.expr().eq(lit(b.clone()))),
                    "a = x OR a = y".into(),
                ));
            }
            for (q, what) in queries {
                let what = format!("{name}: {} {what}", leaf.path.join("."));
                let sound = !float_zero_or_nan_in(&q);
                let (ours, theirs) = match check(&c, q, &what, sound).await {
                    Ok(x) => x,
                    Err(e) => {
                        datafusion_wrong.push(e);
                        continue;
                    }
                };
                let t = tally.entry(leaf.kind()).or_default();
                t.queries += 1;
                t.row_groups_ours += ours.pruned_sbbf + ours.pruned_statistics;
                t.row_groups_theirs += theirs.pruned_datafusion_bloom + theirs.pruned_statistics;
            }
        }
        // AND across columns, and OR of ANDs.
        for pair in eqs.windows(2) {
            let sound = pair[0].1 && pair[1].1;
            let (a, b) = (pair[0].0.clone(), pair[1].0.clone());
            let and = a.clone().and(b.clone());
            if let Err(e) = check(&c, and.clone(), &format!("{name}: AND"), sound).await {
                datafusion_wrong.push(e);
            }
            let or = and.or(b.and(a));
            if let Err(e) = check(&c, or, &format!("{name}: OR of ANDs"), sound).await {
                datafusion_wrong.push(e);
            }
        }
    }
    println!("| type | queries | row groups pruned (sbbf + statistics) | DataFusion (bloom + statistics) |");
    println!("|---|---:|---:|---:|");
    for (k, t) in &tally {
        println!(
            "| {k} | {} | {} | {} |",
            t.queries, t.row_groups_ours, t.row_groups_theirs
        );
    }
    println!("files DataFusion cannot read: {unreadable:?}");
    println!(
        "queries DataFusion's own pruning answers wrongly ({}):",
        datafusion_wrong.len()
    );
    for w in &datafusion_wrong {
        println!("  {w}");
    }
    assert!(files >= 30, "only {files} files were read");
    // The types DataFusion 55 does not prune through Bloom filters: ours must prune more.
    let not_theirs = [
        "Date",
        "Time",
        "Float16",
        "Int8",
        "Int16",
        "UInt8",
        "UInt16",
        "struct field",
        "FixedSizeBinary(16)",
    ];
    let mut seen = 0;
    for (k, t) in &tally {
        if not_theirs.iter().any(|p| k.starts_with(p)) {
            seen += 1;
            assert!(
                t.row_groups_ours > t.row_groups_theirs,
                "{k}: we pruned {} row groups, DataFusion {}",
                t.row_groups_ours,
                t.row_groups_theirs
            );
        }
    }
    assert!(
        seen >= 10,
        "only {seen} of the types DataFusion does not prune were tested"
    );
    // Its known unsoundness: `f64 = 0.0` (and IN lists with 0.0) where -0.0 is stored.
    assert!(
        datafusion_wrong
            .iter()
            .all(|w| w.contains("f64") || w.contains("f32")),
        "{datafusion_wrong:?}"
    );
    let total: usize = tally.values().map(|t| t.queries).sum();
    assert!(total >= 500, "only {total} queries");
}

/// An object-store prefix is read as a local directory: names starting with `_` or `.` below
/// it are not the table (a Spark job's `_temporary/` output), its own name may start so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_leaves_out_hidden_names_below_it() {
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use object_store::{memory::InMemory, path::Path as ObjectPath, ObjectStoreExt, PutPayload};
    let store = Arc::new(InMemory::new());
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let file = |ids: std::ops::Range<i64>| -> Vec<u8> {
        let mut out = Vec::new();
        let mut w =
            datafusion::parquet::arrow::ArrowWriter::try_new(&mut out, schema.clone(), None)
                .unwrap();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(ids))],
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        out
    };
    for (name, ids) in [
        ("_t/a.parquet", 0..10),
        ("_t/year=2024/b.parquet", 10..20),
        ("_t/_temporary/0/part-0.parquet", 0..10),
        ("_t/.hidden.parquet", 0..10),
        ("_t/year=2024/.staging/c.parquet", 0..10),
    ] {
        store
            .put(&ObjectPath::from(name), PutPayload::from(file(ids)))
            .await
            .unwrap();
    }
    let ctx = SessionContext::new();
    ctx.register_object_store(&url::Url::parse("s3://bucket").unwrap(), store);
    for enabled in [true, false] {
        let table = SbbfTable::with_pruning(&ctx.state(), "s3://bucket/_t/", enabled)
            .await
            .unwrap();
        let name = format!("t{enabled}");
        ctx.register_table(name.as_str(), Arc::new(table)).unwrap();
        for (sql, n) in [
            (format!("SELECT count(*) AS n FROM {name}"), 20),
            (format!("SELECT count(*) AS n FROM {name} WHERE id = 5"), 1),
        ] {
            let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
            let got = batches[0]
                .column(0)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .value(0);
            assert_eq!(got, n, "{sql}");
        }
    }
}
