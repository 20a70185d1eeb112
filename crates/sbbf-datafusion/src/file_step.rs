//! The per-file step of a scan: a file's footer (from the metadata cache), DataFusion's
//! min/max pruning against the file's own schema, then our Bloom filters, row group by row
//! group. The table's planning and the join path (`join`) both run it.

use crate::index::{Known, KnownFiles};
use crate::lake::{Columns, FileBounds};
use crate::metric;
use crate::tail::Tails;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::{
    apply_file_schema_type_coercions, ParquetAccessPlan, ParquetFileMetrics,
    RowGroupAccessPlanFilter,
};
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::logical_expr::Expr;
use datafusion::parquet::arrow::parquet_to_arrow_schema;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_expr::simplifier::PhysicalExprSimplifier;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapterFactory,
};
use datafusion::physical_optimizer::pruning::{PruningPredicate, PruningPredicateBuilder};
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};
use object_store::ObjectStore;
use sbbf_parquet::prune::{predicate_columns, Predicate, PreparedPredicate};
use sbbf_parquet::read::async_driver::REMOTE_POLICY;
use sbbf_parquet::source::object::ObjectReader;
use sbbf_parquet::IoPolicy;
use sbbf_parquet::ParquetFile;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What planning did with one file.
pub(crate) enum Planned {
    /// Scan it as DataFusion planned.
    Keep,
    /// Nothing in it can match: leave it out of the scan.
    Drop,
    /// A lake table's snapshot statistics rule it out: leave it out, its footer unread.
    Unread,
    /// Scan the row groups this plan keeps.
    Narrowed(ParquetAccessPlan),
}

/// DataFusion's min/max pruning of row groups, run before our filters so that the row groups
/// it rules out cost no filter read (DataFusion's scan would run it after ours).
///
/// The files of a table need not share its schema (columns added, dropped, reordered, a
/// struct's fields changed, other types): the predicate is written against the table's
/// schema, and each file is pruned with it rewritten to that file's own schema, as
/// DataFusion's scan rewrites it when it opens the file (a column the file lacks is null,
/// a type that differs is cast). A pruning predicate built for one schema and used with
/// another looks its columns up by the other's positions: a panic, or another column's
/// statistics.
pub(crate) struct StatsStep {
    /// The scan's filters on the files' own columns, over the table's file schema.
    expr: Arc<dyn PhysicalExpr>,
    schema: SchemaRef,
    max_in: usize,
    /// How the predicate is rewritten to each file's schema: DataFusion's default adapter,
    /// or a lake table's (columns matched by field id or physical name).
    adapter: Arc<dyn PhysicalExprAdapterFactory>,
    /// The pruning predicate of each file schema met so far (`None`: nothing to prune with
    /// in files of that schema). Most tables have one or a few schemas.
    by_schema: Mutex<HashMap<Schema, Option<Arc<PruningPredicate>>>>,
}

impl StatsStep {
    /// The pruning predicate of the scan's filters that name only the files' own columns
    /// (`None`: nothing statistics can rule out).
    pub(crate) fn new(
        state: &dyn Session,
        filters: &[Expr],
        schema: &SchemaRef,
        adapter: Option<Arc<dyn PhysicalExprAdapterFactory>>,
    ) -> Option<StatsStep> {
        // As DataFusion's scan builds it (its `IN` size cap included).
        let max_in = state.config_options().execution.parquet.max_in_list_size;
        let own: Vec<Expr> = filters
            .iter()
            .filter(|f| {
                f.column_refs()
                    .iter()
                    .all(|c| schema.field_with_name(c.name()).is_ok())
            })
            .map(|f| without_long_lists(f, max_in))
            .filter(|f| !matches!(f, Expr::Literal(ScalarValue::Boolean(Some(true)), _)))
            .collect();
        let expr = datafusion::logical_expr::utils::conjunction(own)?;
        let df_schema = DFSchema::try_from(Arc::clone(schema)).ok()?;
        let expr = state.create_physical_expr(expr, &df_schema).ok()?;
        let step = StatsStep {
            expr,
            schema: Arc::clone(schema),
            max_in,
            adapter: adapter.unwrap_or_else(|| Arc::new(DefaultPhysicalExprAdapterFactory)),
            by_schema: Mutex::default(),
        };
        // Nothing to prune with in the table's own schema: none in any file's either.
        step.predicate_for(schema)?;
        Some(step)
    }

    /// The pruning predicate for files whose schema (as the scan reads them) is `file`.
    fn predicate_for(&self, file: &Schema) -> Option<Arc<PruningPredicate>> {
        let mut cache = self.by_schema.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(file) {
            return p.clone();
        }
        let file_ref = Arc::new(file.clone());
        let built = (|| {
            // DataFusion's own steps at file open: adapt to the file's schema, simplify
            // (casts moved to the literals where they can be), build.
            let adapter = self
                .adapter
                .create(Arc::clone(&self.schema), Arc::clone(&file_ref))
                .ok()?;
            let expr = adapter.rewrite(Arc::clone(&self.expr)).ok()?;
            let expr = PhysicalExprSimplifier::new(file).simplify(expr).ok()?;
            PruningPredicateBuilder::new()
                .with_file_schema(Arc::clone(&file_ref))
                .with_max_in_list_size(self.max_in)
                .build(expr)
        })();
        cache.insert(file.clone(), built.clone());
        built
    }

    /// Narrows `plan` to the row groups whose statistics may match; returns how many it
    /// skipped. A file whose schema cannot be read or whose predicate cannot be built is left
    /// alone (its row groups stay "maybe").
    fn narrow(&self, metadata: &ParquetMetaData, plan: &mut ParquetAccessPlan) -> usize {
        let file_meta = metadata.file_metadata();
        let Ok(file_schema) =
            parquet_to_arrow_schema(file_meta.schema_descr(), file_meta.key_value_metadata())
        else {
            return 0;
        };
        // As DataFusion's scan reads the file: strings and binaries as the table's view types.
        let file_schema =
            apply_file_schema_type_coercions(&self.schema, &file_schema).unwrap_or(file_schema);
        // Metadata plays no part in pruning: files differing only there share a predicate.
        let file_schema = Schema::new(file_schema.fields().clone());
        let Some(predicate) = self.predicate_for(&file_schema) else {
            return 0;
        };
        let before = plan.row_group_index_iter().count();
        let mut filter = RowGroupAccessPlanFilter::new(plan.clone());
        // DataFusion's per-file counters want a metrics set; ours counts what matters.
        let scratch = ExecutionPlanMetricsSet::new();
        let file_metrics = ParquetFileMetrics::new(0, "", &scratch);
        filter.prune_by_statistics(
            &file_schema,
            file_meta.schema_descr(),
            metadata.row_groups(),
            &predicate,
            &file_metrics,
        );
        let narrowed = filter.build();
        let after = narrowed.row_group_index_iter().count();
        *plan = narrowed;
        before.saturating_sub(after)
    }
}

/// `e` with every `IN` list longer than `max` replaced by `true`. Min/max statistics cannot
/// use such a list (DataFusion's pruning predicate treats it as `true` too), but each file's
/// statistics step would still rewrite all its literals (the inverted predicate DataFusion
/// builds to find fully matched row groups): for 5,000 keys, more than the scan itself costs.
fn without_long_lists(e: &Expr, max: usize) -> Expr {
    use datafusion::common::tree_node::{Transformed, TreeNode};
    e.clone()
        .transform_up(|x| {
            Ok(match &x {
                Expr::InList(l) if l.list.len() > max => {
                    Transformed::yes(Expr::Literal(ScalarValue::Boolean(Some(true)), None))
                }
                _ => Transformed::no(x),
            })
        })
        .map(|t| t.data)
        .unwrap_or_else(|_| e.clone())
}

/// What planning one file needs.
pub(crate) struct Step<'a> {
    pub(crate) store: &'a Arc<dyn ObjectStore>,
    pub(crate) policy: IoPolicy,
    pub(crate) cache: &'a Arc<FileMetadataCache>,
    pub(crate) bloom: Option<&'a PreparedPredicate>,
    pub(crate) stats: Option<&'a StatsStep>,
    pub(crate) metrics: &'a Metrics,
    /// How a lake table's files name its columns, when not as the table does.
    pub(crate) columns: Option<&'a Columns>,
    /// A lake table's per-file bounds, from its snapshot, and the scan's filters over the
    /// table's columns to test them with.
    pub(crate) bounds: Option<(&'a FileBounds, &'a Predicate)>,
    /// What the table's index knows of the files as they are now (their row groups, and
    /// those it rules out for the scan's filters): such a file is planned without its
    /// footer.
    pub(crate) known: Option<&'a KnownFiles>,
    /// The row groups of each file whose footer this step read (object path -> size, row
    /// groups): `--stats` counts them from here instead of reading the footers again (ours
    /// are not in DataFusion's cache).
    pub(crate) counted: &'a std::sync::Mutex<crate::index::Dropped>,
    /// The scan's file tails (on an object store): the tail a file kept for the scan was
    /// opened with is kept there, so the scan reads nothing of it again.
    pub(crate) tails: Option<&'a Mutex<Tails>>,
}

impl Step<'_> {
    /// Statistics, then our filters for the row groups statistics leave; every row group of
    /// the file is counted once ([`metric::ROW_GROUPS`]). Never skips on doubt.
    pub(crate) async fn plan(&self, file: PartitionedFile) -> Planned {
        let file = &file;
        // The snapshot's bounds first: a file they rule out costs no read at all.
        if let Some((bounds, pred)) = self.bounds {
            if bounds.rule_out(file, pred) {
                self.metrics.files_pruned_table_stats.add(1);
                return Planned::Unread;
            }
        }
        // A file the index knows as it is now, where its answers are what the file's own
        // filters would say: planned from the index, its footer left for the scan to read
        // if any row group is left (DataFusion's own statistics pruning then runs there).
        if let Some(k) = self
            .known
            .and_then(|known| Known::of(known, &file.object_meta))
            .filter(|k| k.plans_alone())
        {
            return self.plan_known(file, k);
        }
        let (metadata, opened) = match self.footer_in_tail(file).await {
            Some(pq) => (Arc::clone(pq.metadata()), Some(pq)),
            None => match footer(self.store, self.cache, file).await {
                Ok(metadata) => (metadata, None),
                Err(_) => {
                    self.metrics.file_errors.add(1);
                    return Planned::Keep;
                }
            },
        };
        let tail = opened
            .as_ref()
            .and_then(|pq| pq.tail())
            .map(|(at, b)| (at, b.clone()));
        let n = metadata.num_row_groups();
        self.metrics.row_groups.add(n);
        self.counted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                file.object_meta.location.to_string(),
                (file.object_meta.size, n),
            );
        if n == 0 {
            return Planned::Keep;
        }
        let mut plan = attached_plan(file, n);
        let scanned_before = plan.row_group_index_iter().count();
        if let Some(stats) = self.stats {
            let skipped = stats.narrow(&metadata, &mut plan);
            self.metrics.pruned_statistics.add(skipped);
        }
        if let Some(pred) = self.bloom {
            let probed = plan.row_group_index_iter().next().is_some()
                && names_match(self.columns, &metadata, pred);
            if probed {
                let pq = opened.unwrap_or_else(|| {
                    let size = file.object_meta.size;
                    ParquetFile::from_metadata(object_reader(self.store, file), metadata, size)
                });
                bloom_narrow((pq, self.policy), file, pred, self.metrics, &mut plan).await;
            }
        }
        if plan.row_group_index_iter().next().is_none() {
            self.metrics.files_pruned.add(1);
            return Planned::Drop;
        }
        // The file is scanned: its tail serves the scan's reads.
        if let (Some(tails), Some((at, bytes))) = (self.tails, &tail) {
            Tails::keep(tails, &file.object_meta.location, *at, bytes);
        }
        if plan.row_group_index_iter().count() == scanned_before {
            return Planned::Keep;
        }
        Planned::Narrowed(plan)
    }
}

impl Step<'_> {
    /// On an object store: the file opened as the library opens it, its last 64 KiB in one
    /// request (a longer footer costs one more read), whose bytes then answer the filter
    /// reads within them: most writers put the filters just before the footer (pyarrow,
    /// DuckDB, parquet-java, `sbbf add`), so a file they rule out costs one request. `None`
    /// (the footer is read as DataFusion reads it, into its cache): a local file, an
    /// encrypted footer, any error.
    async fn footer_in_tail(&self, file: &PartitionedFile) -> Option<ParquetFile<ObjectReader>> {
        if self.policy != REMOTE_POLICY {
            return None;
        }
        let size = file.object_meta.size;
        ParquetFile::open_async(object_reader(self.store, file), size)
            .await
            .ok()
    }

    /// [`Step::plan`] of a file from what the index knows of it (`k`), no read made: its
    /// row groups counted, those it rules out skipped (counted as ours: the index's entries
    /// are the file's filters).
    fn plan_known(&self, file: &PartitionedFile, k: &Known) -> Planned {
        let n = k.row_counts.len();
        self.metrics.row_groups.add(n);
        if n == 0 {
            return Planned::Keep;
        }
        let mut plan = attached_plan(file, n);
        let mut skipped = 0;
        for (rg, out) in k.ruled_out.iter().enumerate() {
            if *out && plan.should_scan(rg) {
                plan.skip(rg);
                skipped += 1;
            }
        }
        self.metrics.pruned.add(skipped);
        if plan.row_group_index_iter().next().is_none() {
            self.metrics.files_pruned.add(1);
            return Planned::Drop;
        }
        if skipped == 0 {
            return Planned::Keep;
        }
        Planned::Narrowed(plan)
    }
}

/// The file's footer, through DataFusion's metadata cache (the scan reuses it).
pub(crate) async fn footer(
    store: &Arc<dyn ObjectStore>,
    cache: &Arc<FileMetadataCache>,
    file: &PartitionedFile,
) -> Result<Arc<ParquetMetaData>> {
    DFParquetMetadata::new(store.as_ref(), &file.object_meta)
        .with_file_metadata_cache(Some(Arc::clone(cache)))
        .with_metadata_size_hint(file.metadata_size_hint)
        .fetch_metadata()
        .await
}

/// The access plan someone attached before us (we only ever skip more), or all `n` row
/// groups.
fn attached_plan(file: &PartitionedFile, n: usize) -> ParquetAccessPlan {
    file.extensions
        .get::<ParquetAccessPlan>()
        .filter(|p| p.len() == n)
        .cloned()
        .unwrap_or_else(|| ParquetAccessPlan::new_all(n))
}

/// Whether the file names the columns of `pred` as the table does. Our filters are found by
/// column name: where a lake table's file names one otherwise (a renamed Iceberg column,
/// Delta column mapping), the name would find another column's filter or none, and the file
/// is left to the scan.
fn names_match(
    columns: Option<&Columns>,
    metadata: &ParquetMetaData,
    pred: &PreparedPredicate,
) -> bool {
    let Some(cols) = columns else {
        return true;
    };
    let file_meta = metadata.file_metadata();
    parquet_to_arrow_schema(file_meta.schema_descr(), file_meta.key_value_metadata())
        .is_ok_and(|s| cols.same_names(&s, predicate_columns(pred.predicate()).into_iter()))
}

/// Skips in `plan` the row groups still scanned that our filters rule out for `pred`; the
/// filters of row groups already skipped are not read.
async fn bloom_narrow(
    (mut pq, policy): (ParquetFile<ObjectReader>, IoPolicy),
    file: &PartitionedFile,
    pred: &PreparedPredicate,
    metrics: &Metrics,
    plan: &mut ParquetAccessPlan,
) {
    let metadata = Arc::clone(pq.metadata());
    let n = metadata.num_row_groups();
    // A file DataFusion split into byte ranges is opened once per range, and reads in each
    // only the row groups whose first page lies in it (its own rule): each range probes and
    // counts only those, so no filter is read twice and no row group counted twice.
    let wanted: Vec<bool> = (0..n)
        .map(|rg| plan.should_scan(rg) && in_range(file, &metadata, rg))
        .collect();
    // The filters' reads (not the footer's, when the file was opened here).
    let before = pq.io_stats();
    let pruned = pq.prune_prepared_among(pred, policy, &wanted).await;
    let io = pq.io_stats();
    metrics
        .requests
        .add(io.requests.saturating_sub(before.requests) as usize);
    metrics
        .bytes
        .add(io.bytes.saturating_sub(before.bytes) as usize);
    let Ok(pruned) = pruned else {
        metrics.file_errors.add(1);
        return;
    };
    metrics.tested.add(wanted.iter().filter(|w| **w).count());
    for rg in pruned.skipped() {
        if plan.should_scan(rg) {
            metrics.pruned.add(1);
            plan.skip(rg);
        }
    }
}

/// A reader of `file` through `store`, pinned to the version its listing saw.
fn object_reader(store: &Arc<dyn ObjectStore>, file: &PartitionedFile) -> ObjectReader {
    let meta = &file.object_meta;
    ObjectReader::new(Arc::clone(store), meta.location.clone(), meta.size)
        .with_e_tag(meta.e_tag.clone())
}

/// How filter bytes are read from the store at `url`: an object store's coalesced, whole
/// filters once a few blocks are wanted (a request costs as much as 256 KiB); a local file's
/// blocks where few are wanted ([`LOCAL_STORE_POLICY`]).
pub(crate) fn policy_for(url: &datafusion::execution::object_store::ObjectStoreUrl) -> IoPolicy {
    // A local table listed without its hidden files has a scheme of its own (`visible`).
    if url.as_str().starts_with("file://")
        || url
            .as_str()
            .starts_with(crate::filtered::LOCAL_SCHEME_PREFIX)
    {
        LOCAL_STORE_POLICY
    } else {
        REMOTE_POLICY
    }
}

/// A local file through DataFusion's object store: each read is a task of its own (measured
/// on the 64-row-group file: 100 join keys read block by block, 6,400 reads, took 0.2 s more
/// than whole filters), so a request is worth 64 KiB here, not the 4 KiB of a direct read.
const LOCAL_STORE_POLICY: IoPolicy = IoPolicy {
    request_cost: 64 * 1024,
    max_gap: 4 * 1024,
};

/// Whether row group `rg` is read by the scan of `file`'s byte range (all of them without
/// one): DataFusion's rule, the first column's first page (dictionary or data) in the range.
fn in_range(file: &PartitionedFile, metadata: &ParquetMetaData, rg: usize) -> bool {
    let Some(range) = &file.range else {
        return true;
    };
    let Some(col) = metadata
        .row_groups()
        .get(rg)
        .and_then(|g| g.columns().first())
    else {
        // Nothing to place: probed, as without a range (never skips on doubt).
        return true;
    };
    let offset = col
        .dictionary_page_offset()
        .unwrap_or_else(|| col.data_page_offset());
    range.contains(offset)
}

/// Our counters, registered in the scan's own metrics set so `EXPLAIN ANALYZE` shows them on
/// its `DataSourceExec` line.
pub(crate) struct Metrics {
    pub(crate) pruned: Count,
    tested: Count,
    requests: Count,
    bytes: Count,
    pub(crate) file_errors: Count,
    pub(crate) row_groups: Count,
    pruned_statistics: Count,
    files_pruned: Count,
    files_pruned_table_stats: Count,
}

impl Metrics {
    pub(crate) fn new(config: &FileScanConfig) -> Metrics {
        Metrics::new_in(config.file_source().metrics())
    }

    pub(crate) fn new_in(set: &ExecutionPlanMetricsSet) -> Metrics {
        let counter = |name: &'static str| MetricBuilder::new(set).global_counter(name);
        Metrics {
            pruned: counter(metric::PRUNED),
            tested: counter(metric::TESTED),
            requests: counter(metric::REQUESTS),
            bytes: counter(metric::BYTES),
            file_errors: counter(metric::FILE_ERRORS),
            row_groups: counter(metric::ROW_GROUPS),
            pruned_statistics: counter(metric::PRUNED_STATISTICS),
            files_pruned: counter(metric::FILES_PRUNED),
            files_pruned_table_stats: counter(metric::FILES_PRUNED_TABLE_STATS),
        }
    }
}

/// The access plan for one file at open time (the join filters), or `None` to leave it as
/// it is (nothing to skip, or the filters could not be used: never skip on doubt). Its row
/// groups were counted when the scan was planned.
pub(crate) async fn file_plan(
    store: &Arc<dyn ObjectStore>,
    policy: IoPolicy,
    metadata: Arc<ParquetMetaData>,
    file: &PartitionedFile,
    pred: &PreparedPredicate,
    metrics: &Metrics,
    columns: Option<&Columns>,
) -> Option<ParquetAccessPlan> {
    let n = metadata.num_row_groups();
    let mut plan = attached_plan(file, n);
    let before = plan.row_group_index_iter().count();
    if !names_match(columns, &metadata, pred) {
        return None;
    }
    let pq =
        ParquetFile::from_metadata(object_reader(store, file), metadata, file.object_meta.size);
    bloom_narrow((pq, policy), file, pred, metrics, &mut plan).await;
    (plan.row_group_index_iter().count() < before).then_some(plan)
}
