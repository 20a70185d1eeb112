//! The table: DataFusion's listing table, with each file's row groups pruned by our filters
//! before its scan starts.

use crate::dynamic::SbbfSource;
use crate::expr::predicate;
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::catalog::{ScanArgs, ScanResult, Session};
use datafusion::common::{DFSchema, Result, ScalarValue, Statistics};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl, PartitionedFile,
};
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::{
    apply_file_schema_type_coercions, ParquetAccessPlan, ParquetFileMetrics,
    RowGroupAccessPlanFilter,
};
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileScanConfigBuilder, FileSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::TableProvider;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::parquet::arrow::parquet_to_arrow_schema;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_expr::simplifier::PhysicalExprSimplifier;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapterFactory,
};
use datafusion::physical_optimizer::pruning::{PruningPredicate, PruningPredicateBuilder};
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, Label, MetricBuilder};
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;
use object_store::ObjectStore;
use sbbf_parquet::asyncio::REMOTE_POLICY;
use sbbf_parquet::prune::PreparedPredicate;
use sbbf_parquet::remote::ObjectReader;
use sbbf_parquet::IoPolicy;
use sbbf_parquet::ParquetFile;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Files whose filters are read at once while planning a scan.
pub const DEFAULT_FILE_CONCURRENCY: usize = 32;

/// Names of the metrics the scan shows in `EXPLAIN ANALYZE` (on its `DataSourceExec`).
pub mod metric {
    /// Row groups skipped because our filters prove the predicate false for them.
    pub const PRUNED: &str = "row_groups_pruned_sbbf";
    /// Row groups whose filters were consulted (every row group of every file tested).
    pub const TESTED: &str = "row_groups_tested_sbbf";
    /// Read requests made for filter bytes.
    pub const REQUESTS: &str = "sbbf_requests";
    /// Filter bytes read.
    pub const BYTES: &str = "sbbf_bytes";
    /// Files whose filters could not be used (unreadable metadata or filters): all their row
    /// groups were kept.
    pub const FILE_ERRORS: &str = "sbbf_file_errors";
    /// Row groups skipped by a join's keys (the join filters DataFusion pushes into the scan
    /// while the query runs); also counted in [`PRUNED`].
    pub const PRUNED_DYNAMIC: &str = "row_groups_pruned_sbbf_join";
    /// Files whose filters were probed for a join's keys when the file was opened.
    pub const DYNAMIC_FILES: &str = "sbbf_join_files";
    /// Files opened while a join filter pushed into the scan was not yet complete (its
    /// state then was used, which is sound; DataFusion 55's hash join finishes its filter
    /// before it reads the probe side, so this stays 0 for hash joins).
    pub const DYNAMIC_INCOMPLETE: &str = "sbbf_join_filters_incomplete";
    /// The most keys a join filter brought to one column's filters (a gauge: the K of the
    /// survival bound `1 - (1 - p)^K`).
    pub const JOIN_KEYS: &str = "sbbf_join_keys";
    /// How many times a join's key set was coerced to a column type and hashed: once per
    /// update of the join filter and column type, whatever the number of files and
    /// partitions of the scan.
    pub const KEY_SETS_HASHED: &str = "sbbf_key_sets_hashed";
    /// Files the table's index ruled out for a join's keys: dropped when the scan came to
    /// them, before their filters were read (DataFusion read their footers while planning;
    /// their row groups count in [`PRUNED`] and [`PRUNED_DYNAMIC`]).
    pub const JOIN_FILES_PRUNED_INDEX: &str = "sbbf_join_files_pruned_index";
    /// A marker (always 0) on the scans of a named table ([`super::SbbfTable::with_name`]),
    /// labelled [`TABLE_LABEL`]`=name`.
    pub const TABLE: &str = "sbbf_table";
    /// The label of [`TABLE`] that holds the table's name.
    pub const TABLE_LABEL: &str = "table";
    /// Row groups of the files handed to the scan (after the listing's partition pruning),
    /// counted once each when the scan is planned.
    pub const ROW_GROUPS: &str = "sbbf_row_groups";
    /// Row groups skipped by min/max statistics before our filters are read (DataFusion's
    /// own statistics pruning, run first so those row groups cost no filter read).
    pub const PRUNED_STATISTICS: &str = "row_groups_pruned_statistics_sbbf";
    /// Files left out of the scan because none of their row groups can match (never
    /// opened by DataFusion).
    pub const FILES_PRUNED: &str = "sbbf_files_pruned";
    /// Files the table's index ruled out: left out of the listing, their footers never read.
    pub const FILES_PRUNED_INDEX: &str = "sbbf_files_pruned_index";
    /// The row groups of those files (as the index recorded them).
    pub const PRUNED_INDEX: &str = "row_groups_pruned_index";
}

/// A Parquet table (file, directory, glob or object-store prefix) whose scans skip the row
/// groups our split-block Bloom filters rule out.
///
/// It wraps DataFusion's [`ListingTable`] and keeps everything that table does (statistics and
/// page-index pruning, projection, partitioning), with one change: DataFusion's own
/// Bloom-filter reads are switched off, because ours replace them (and decide more: every
/// integer width, dates, timestamps, times, decimals of any width, FLOAT16, INT96, FLBA, struct
/// fields, both float zeros). Before a scan starts, the filters of every file are probed for
/// the scan's `=`, `IN`, `AND` and `OR` filters, and each file gets a `ParquetAccessPlan`
/// that skips the row groups proven empty. Footers come from DataFusion's metadata cache (and
/// land there for the scan to reuse); filter bytes are read through the session's object store
/// with block-granular, concurrent reads.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::common::Result<()> {
/// use datafusion::prelude::SessionContext;
/// use sbbf_datafusion::SbbfTable;
///
/// let ctx = SessionContext::new();
/// let table = SbbfTable::try_new(&ctx.state(), "../../testdata/pa_ints.parquet").await?;
/// ctx.register_table("t", std::sync::Arc::new(table))?;
/// let rows = ctx.sql("SELECT count(*) FROM t WHERE i64 = 42").await?.collect().await?;
/// assert_eq!(rows[0].num_rows(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct SbbfTable {
    inner: ListingTable,
    enabled: bool,
    file_concurrency: usize,
    name: Option<String>,
    index: Option<TableIndex>,
    /// What listing the files met and went around (a symbolic link loop, hive folders that
    /// are not columns), to show once.
    warnings: Vec<String>,
}

/// The index of a table root (`ROOT/_sbbf_index/`, see `crate::index`), and what it did.
#[derive(Debug)]
struct TableIndex {
    root: sbbf_index::Root,
    /// The files' own schema (without partition columns), for the listing tables of scans.
    file_schema: SchemaRef,
    /// Why the index was ignored, once.
    warning: std::sync::OnceLock<String>,
    /// Files and row groups scans left out by the index.
    files: AtomicUsize,
    row_groups: AtomicUsize,
    /// Files left out, as the index recorded them: counted without their footers.
    known: Mutex<crate::index::Dropped>,
}

impl SbbfTable {
    /// A table over the Parquet files at `path` (a file, a directory, a glob, or an
    /// object-store URL whose store is registered with the session), with the schema the
    /// files give. Below a directory or prefix laid out in hive partitions
    /// (`year=2024/month=01/x.parquet`), the partition keys are columns too, typed as DuckDB
    /// types them, and filters on them leave files out of the listing.
    ///
    /// A directory or prefix is its `*.parquet` files except those under a name starting
    /// with `_` or `.` below it (`_temporary/`, `.hidden`: Spark's, Hive's and pyarrow's
    /// rule); its schema merges all its files' (strings and binaries of different kinds
    /// read as the view type), a glob's is its first file's (as DataFusion's). A footer that
    /// cannot be read is an error naming its file.
    pub async fn try_new(state: &dyn Session, path: &str) -> Result<SbbfTable> {
        SbbfTable::with_pruning(state, path, true).await
    }

    /// The same table, with our pruning on (`enabled`) or off. Off means DataFusion's
    /// defaults, its own Bloom-filter reads included: to compare.
    pub async fn with_pruning(state: &dyn Session, path: &str, enabled: bool) -> Result<SbbfTable> {
        SbbfTable::with_options(state, path, enabled, enabled).await
    }

    /// The same table, with our pruning on or off and with or without the table index
    /// (`PATH/_sbbf_index/`, used only with our pruning). With the index the table's schema
    /// is learnt from one footer per schema the index records (and every file it does not
    /// know as it is now), not from every footer; without it, as DataFusion does.
    ///
    /// ```no_run
    /// # async fn run() -> datafusion::common::Result<()> {
    /// use datafusion::prelude::SessionContext;
    /// let ctx = SessionContext::new();
    /// // Every footer read to learn the schema, and the index not asked at all.
    /// let t = sbbf_datafusion::SbbfTable::with_options(&ctx.state(), "events/", true, false).await?;
    /// # Ok(()) }
    /// ```
    pub async fn with_options(
        state: &dyn Session,
        path: &str,
        enabled: bool,
        use_index: bool,
    ) -> Result<SbbfTable> {
        let url = ListingTableUrl::parse(path)?;
        let mut format =
            ParquetFormat::default().with_options(state.table_options().parquet.clone());
        if enabled {
            let mut options = format.options().clone();
            options.global.bloom_filter_on_read = false;
            format = format.with_options(options);
        }
        let options = ListingOptions::new(Arc::new(format)).with_file_extension(".parquet");
        // A single file named without the extension is still read.
        let options = if url.is_collection() || path.contains(['*', '?', '[']) {
            options
        } else {
            options.with_file_extension("")
        };
        let mut warnings = Vec::new();
        // The table's files, listed once: for its partition keys and its schema.
        let ext = options.file_extension.clone();
        // A local glob names the files `sbbf probe` and a shell name: `*` stays inside one
        // folder (DataFusion's own glob matching lets it cross folders).
        let local_glob = local_glob_files(path)?;
        // A local glob's schema is its first file's, as DataFusion takes the schema of a list
        // of files; any other table's merges those of all its files.
        let merge = local_glob.is_none();
        let ((store, files), config, partitions) = match local_glob {
            Some(urls) => (
                objects_of(state, &urls).await?,
                ListingTableConfig::new_with_multi_paths(urls),
                Vec::new(),
            ),
            None if url.is_collection() => match list_files(state, &url, &ext).await {
                Ok((store, files)) => {
                    // Names starting with `_` or `.` below the root are not the table's
                    // (a Spark job's `_temporary/`, `.hidden` files): when there are any,
                    // the table lists through a view of its store that leaves them out.
                    let before = files.len();
                    let files: Vec<object_store::ObjectMeta> = files
                        .into_iter()
                        .filter(|m| !crate::visible::hidden_below(url.prefix(), &m.location))
                        .collect();
                    let table_url = if files.len() < before {
                        crate::visible::visible_url(state.runtime_env(), &url, Arc::clone(&store))
                            .ok_or_else(|| {
                            datafusion::common::DataFusionError::Plan(format!(
                                "{path}: cannot list it without its hidden files"
                            ))
                        })?
                    } else {
                        url.clone()
                    };
                    let (partitions, why) = hive_partitions(&url, &files);
                    warnings.extend(why.map(|w| format!("{path}: {w}")));
                    (
                        (store, files),
                        ListingTableConfig::new(table_url),
                        partitions,
                    )
                }
                // DataFusion's walk of a local directory stops at a symbolic link loop:
                // the files are then found as every other command finds them (a loop is
                // not entered), and the table says so once.
                Err(e) if !sbbf_parquet::remote::is_remote_url(path) && is_loop(&e) => {
                    warnings.push(format!(
                        "{path}: {e}; the loop is not followed (each file below {path} \
                         is read once)"
                    ));
                    let urls = local_listing(path)?;
                    (
                        objects_of(state, &urls).await?,
                        ListingTableConfig::new_with_multi_paths(urls),
                        Vec::new(),
                    )
                }
                Err(e) => return Err(e),
            },
            None => (
                list_files(state, &url, &ext).await?,
                ListingTableConfig::new(url.clone()),
                Vec::new(),
            ),
        };
        // A directory or prefix may have an index; anything else has none.
        let root = match sbbf_index::Root::open(path) {
            Ok(Some(root)) if enabled && use_index && url.is_collection() => Some(root),
            _ => None,
        };
        let known = match &root {
            Some(root) if url.is_collection() => {
                schema_from_index(state, &url, &options, root, (&store, &files)).await
            }
            _ => None,
        };
        let schema = match known {
            Some(schema) => Some(schema),
            None if files.iter().any(|m| m.size > 0) => {
                Some(infer_schema(state, &options, &url, &store, &files, merge).await?)
            }
            None => None,
        };
        let config = config.with_listing_options(options);
        let mut config = match schema {
            Some(schema) => config.with_schema(schema),
            // No file to learn from: DataFusion says what it makes of that.
            None => config.infer_schema(state).await?,
        };
        // Partition columns are columns, unless the files have a column of the name (then
        // the files' values are the column, as DataFusion would refuse the clash).
        let clash = |name: &str| {
            config
                .file_schema
                .as_ref()
                .is_some_and(|s| s.field_with_name(name).is_ok())
        };
        if !partitions.is_empty() && !partitions.iter().any(|(n, _)| clash(n)) {
            if let Some(options) = config.options.take() {
                config.options = Some(options.with_table_partition_cols(partitions));
            }
        }
        let index = match root {
            Some(root) => config.file_schema.clone().map(|file_schema| TableIndex {
                root,
                file_schema,
                warning: Default::default(),
                files: Default::default(),
                row_groups: Default::default(),
                known: Default::default(),
            }),
            _ => None,
        };
        Ok(SbbfTable {
            inner: ListingTable::try_new(config)?,
            enabled,
            file_concurrency: DEFAULT_FILE_CONCURRENCY,
            name: None,
            index,
            warnings,
        })
    }

    /// Whether scans use the table's index (`PATH/_sbbf_index/`, `sbbf index build`) to
    /// leave out the files it rules out before DataFusion reads their footers (default: yes,
    /// when PATH is a directory or an object-store prefix with our pruning on). Off: every
    /// file is listed and pruned by its own footer and filters.
    pub fn with_index(mut self, on: bool) -> SbbfTable {
        if !on {
            self.index = None;
        }
        self
    }

    /// Why the table's index was ignored (damaged, foreign, unreadable), when a scan found
    /// it so: to show once. Files are then pruned as without an index.
    pub fn index_warning(&self) -> Option<&str> {
        self.index
            .as_ref()
            .and_then(|ix| ix.warning.get())
            .map(String::as_str)
    }

    /// What listing the table's files met and went around, to show once each: a symbolic
    /// link loop below a directory (not entered, as every other command does); hive folders
    /// (`year=2024/`) that are not columns because other files are not in such folders.
    pub fn listing_warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Files and row groups the index left out of this table's scans so far.
    pub fn index_pruned(&self) -> (usize, usize) {
        self.index.as_ref().map_or((0, 0), |ix| {
            (
                ix.files.load(Ordering::Relaxed),
                ix.row_groups.load(Ordering::Relaxed),
            )
        })
    }

    /// The row groups of all the table's files, as [`table_row_groups`] counts them, except
    /// that the files the index left out of a scan are counted from the index (their footers
    /// are not read).
    pub async fn row_groups(&self, state: &dyn Session) -> Result<usize> {
        let known = self
            .index
            .as_ref()
            .map(|ix| ix.known.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default();
        count_listed(state, &self.inner, &known).await
    }

    /// The listing table of one scan: the table's own, or, when the index rules files out
    /// for `filters`, one that lists through a store view leaving them out (see
    /// `crate::index`), with the store view's counters.
    async fn listing_for(
        &self,
        state: &dyn Session,
        filters: &[Expr],
    ) -> Option<(ListingTable, Arc<crate::index::Hiding>)> {
        use crate::index::{ask, hiding_url, Asked, Hiding};
        let ix = self.index.as_ref()?;
        let pred = predicate(filters, &ix.file_schema)?;

        let [table_url] = self.inner.table_paths().as_slice() else {
            return None;
        };
        let dropped = match ask(&ix.root, table_url, &pred).await {
            Asked::Nothing => return None,
            Asked::Ignored(why) => {
                let _ = ix.warning.set(why);
                return None;
            }
            Asked::Drop(d) => d,
        };
        let store = state.runtime_env().object_store(table_url).ok()?;
        let (store_url, listing_url) = hiding_url(table_url)?;

        let hiding = Arc::new(Hiding::new(store, dropped.clone()));
        state
            .runtime_env()
            .register_object_store(&store_url, Arc::clone(&hiding) as Arc<dyn ObjectStore>);
        let config = ListingTableConfig::new(listing_url)
            .with_listing_options(self.inner.options().clone())
            .with_schema(Arc::clone(&ix.file_schema));
        let table = ListingTable::try_new(config).ok()?;
        ix.known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(dropped);
        Some((table, hiding))
    }

    /// What the index's store view left out of a scan's listing: counted on the table and in
    /// the scan's metrics (when it has a scan: with every file left out, DataFusion plans
    /// none).
    fn count_index(&self, plan: &Arc<dyn ExecutionPlan>, hiding: &crate::index::Hiding) {
        let (files, rgs) = (
            hiding.files.load(Ordering::Relaxed),
            hiding.row_groups.load(Ordering::Relaxed),
        );
        if let Some(ix) = &self.index {
            ix.files.fetch_add(files, Ordering::Relaxed);
            ix.row_groups.fetch_add(rgs, Ordering::Relaxed);
        }
        if let Some(config) = plan
            .downcast_ref::<DataSourceExec>()
            .and_then(|e| e.data_source().downcast_ref::<FileScanConfig>())
        {
            let set = config.file_source().metrics();
            let counter = |name: &'static str| MetricBuilder::new(set).global_counter(name);
            counter(metric::FILES_PRUNED_INDEX).add(files);
            counter(metric::PRUNED_INDEX).add(rgs);
        }
    }

    /// Wraps a listing table of Parquet files. Its format options are used as they are: switch
    /// off DataFusion's own Bloom-filter reads (`bloom_filter_on_read`) to avoid reading the
    /// filters twice.
    pub fn from_listing(inner: ListingTable) -> SbbfTable {
        SbbfTable {
            inner,
            enabled: true,
            file_concurrency: DEFAULT_FILE_CONCURRENCY,
            name: None,
            index: None,
            warnings: Vec::new(),
        }
    }

    /// Probe the filters of at most `n` files at once while planning (default
    /// [`DEFAULT_FILE_CONCURRENCY`]).
    pub fn with_file_concurrency(mut self, n: usize) -> SbbfTable {
        self.file_concurrency = n.max(1);
        self
    }

    /// Names the table's scans: each carries a [`metric::TABLE`] counter labelled
    /// `table=name`, so [`crate::ScanStats::of_table`] can tell the tables of a join apart.
    pub fn with_name(mut self, name: impl Into<String>) -> SbbfTable {
        self.name = Some(name.into());
        self
    }

    /// The wrapped listing table.
    pub fn listing(&self) -> &ListingTable {
        &self.inner
    }

    async fn prune(
        &self,
        state: &dyn Session,
        plan: Arc<dyn ExecutionPlan>,
        filters: &[Expr],
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(exec) = plan.downcast_ref::<DataSourceExec>() else {
            return Ok(plan);
        };
        let Some(config) = exec.data_source().downcast_ref::<FileScanConfig>() else {
            return Ok(plan);
        };
        if let Some(name) = &self.name {
            MetricBuilder::new(config.file_source().metrics())
                .with_label(Label::new(metric::TABLE_LABEL, name.clone()))
                .global_counter(metric::TABLE);
        }
        let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
        let store = state.runtime_env().object_store(&config.object_store_url)?;
        let metrics = Metrics::new(config);
        let files: Vec<PartitionedFile> = config
            .file_groups
            .iter()
            .flat_map(|g| g.iter().cloned())
            .collect();
        if !self.enabled {
            // DataFusion alone; the files' row groups are still counted, so that `--stats`
            // adds up the same way (footers from the cache the listing filled).
            count_row_groups(&store, &cache, &files, &metrics, self.file_concurrency).await;
            return Ok(plan);
        }
        // The join filters arrive later, while the query runs: the file source probes them
        // when it opens each file (`dynamic.rs`).
        let mut source = SbbfSource::new(Arc::clone(config.file_source()), Arc::clone(&cache));
        // With an index, the join's keys are asked of it first: files it rules out are
        // dropped unread.
        if let (Some(ix), [table_url]) = (&self.index, self.inner.table_paths().as_slice()) {
            source = source.with_index(ix.root.clone(), table_url.clone());
        }
        let source: Arc<dyn FileSource> = Arc::new(source);
        // The files' own columns: a filter on a partition column (`year=2024/`) is not in
        // any file, and leaves the rest of an AND to be tested.
        // Prepared: its key sets are hashed once for all the scan's files.
        let bloom = predicate(filters, config.file_schema()).map(PreparedPredicate::new);
        // Statistics first: the row groups min/max rule out cost no filter read.
        let stats = if state.config_options().execution.parquet.pruning {
            StatsStep::new(state, filters, config.file_schema())
        } else {
            None
        };
        let step = Step {
            store: &store,
            policy: policy_for(&config.object_store_url),
            cache: &cache,
            bloom: bloom.as_ref(),
            stats: stats.as_ref(),
            metrics: &metrics,
        };
        let mut plans: Vec<Planned> = futures::stream::iter(files)
            .map(|f| {
                let step = &step;
                async move { step.plan(f).await }
            })
            .buffered(self.file_concurrency)
            .collect()
            .await;
        plans.reverse();
        // Files with no row group left are dropped from the scan: DataFusion never opens
        // them. Every group stays (possibly empty), so the scan's partitioning is unchanged.
        let groups: Vec<FileGroup> = config
            .file_groups
            .iter()
            .map(|g| {
                FileGroup::new(
                    g.iter()
                        .filter_map(|f| {
                            let planned = plans.pop().unwrap_or(Planned::Keep);
                            let mut f = f.clone();
                            match planned {
                                Planned::Keep => Some(f),
                                Planned::Drop => None,
                                Planned::Narrowed(plan) => {
                                    f.extensions.insert(plan);
                                    Some(f)
                                }
                            }
                        })
                        .collect(),
                )
            })
            .collect();
        let config = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(groups)
            .with_source(source)
            .build();
        Ok(DataSourceExec::from_data_source(config))
    }
}

/// Counts the row groups of `files` into [`metric::ROW_GROUPS`] (`--no-sbbf`).
async fn count_row_groups(
    store: &Arc<dyn ObjectStore>,
    cache: &Arc<FileMetadataCache>,
    files: &[PartitionedFile],
    metrics: &Metrics,
    concurrency: usize,
) {
    futures::stream::iter(files.iter().cloned())
        .map(|f| async move {
            if let Ok(m) = footer(store, cache, &f).await {
                metrics.row_groups.add(m.num_row_groups());
            }
        })
        .buffer_unordered(concurrency)
        .collect::<Vec<()>>()
        .await;
}

/// What planning did with one file.
enum Planned {
    /// Scan it as DataFusion planned.
    Keep,
    /// Nothing in it can match: leave it out of the scan.
    Drop,
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
    /// The pruning predicate of each file schema met so far (`None`: nothing to prune with
    /// in files of that schema). Most tables have one or a few schemas.
    by_schema: Mutex<HashMap<Schema, Option<Arc<PruningPredicate>>>>,
}

impl StatsStep {
    /// The pruning predicate of the scan's filters that name only the files' own columns
    /// (`None`: nothing statistics can rule out).
    fn new(state: &dyn Session, filters: &[Expr], schema: &SchemaRef) -> Option<StatsStep> {
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
            let adapter = DefaultPhysicalExprAdapterFactory
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
}

impl Step<'_> {
    /// Statistics, then our filters for the row groups statistics leave; every row group of
    /// the file is counted once ([`metric::ROW_GROUPS`]). Never skips on doubt.
    async fn plan(&self, file: PartitionedFile) -> Planned {
        let file = &file;
        let Ok(metadata) = footer(self.store, self.cache, file).await else {
            self.metrics.file_errors.add(1);
            return Planned::Keep;
        };
        let n = metadata.num_row_groups();
        self.metrics.row_groups.add(n);
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
            if plan.row_group_index_iter().next().is_some() {
                bloom_narrow(
                    self.store,
                    self.policy,
                    file,
                    metadata,
                    pred,
                    self.metrics,
                    &mut plan,
                )
                .await;
            }
        }
        if plan.row_group_index_iter().next().is_none() {
            self.metrics.files_pruned.add(1);
            return Planned::Drop;
        }
        if plan.row_group_index_iter().count() == scanned_before {
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

/// Skips in `plan` the row groups still scanned that our filters rule out for `pred`; the
/// filters of row groups already skipped are not read.
async fn bloom_narrow(
    store: &Arc<dyn ObjectStore>,
    policy: IoPolicy,
    file: &PartitionedFile,
    metadata: Arc<ParquetMetaData>,
    pred: &PreparedPredicate,
    metrics: &Metrics,
    plan: &mut ParquetAccessPlan,
) {
    let meta = &file.object_meta;
    let n = metadata.num_row_groups();
    // A file DataFusion split into byte ranges is opened once per range, and reads in each
    // only the row groups whose first page lies in it (its own rule): each range probes and
    // counts only those, so no filter is read twice and no row group counted twice.
    let wanted: Vec<bool> = (0..n)
        .map(|rg| plan.should_scan(rg) && in_range(file, &metadata, rg))
        .collect();
    let reader = ObjectReader::new(Arc::clone(store), meta.location.clone(), meta.size);
    let mut pq = ParquetFile::from_metadata(reader, metadata, meta.size);
    let pruned = pq.prune_prepared_among(pred, policy, &wanted).await;
    let io = pq.io_stats();
    metrics.requests.add(io.requests as usize);
    metrics.bytes.add(io.bytes as usize);
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

/// How filter bytes are read from the store at `url`: an object store's coalesced, whole
/// filters once a few blocks are wanted (a request costs as much as 256 KiB); a local file's
/// blocks where few are wanted ([`LOCAL_STORE_POLICY`]).
pub(crate) fn policy_for(url: &datafusion::execution::object_store::ObjectStoreUrl) -> IoPolicy {
    // A local table listed without its hidden files has a scheme of its own (`visible`).
    if url.as_str().starts_with("file://")
        || url
            .as_str()
            .starts_with(crate::visible::LOCAL_SCHEME_PREFIX)
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
    row_groups: Count,
    pruned_statistics: Count,
    files_pruned: Count,
}

impl Metrics {
    fn new(config: &FileScanConfig) -> Metrics {
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
) -> Option<ParquetAccessPlan> {
    let n = metadata.num_row_groups();
    let mut plan = attached_plan(file, n);
    let before = plan.row_group_index_iter().count();
    bloom_narrow(store, policy, file, metadata, pred, metrics, &mut plan).await;
    (plan.row_group_index_iter().count() < before).then_some(plan)
}

#[async_trait]
impl TableProvider for SbbfTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let args = ScanArgs::default()
            .with_projection(projection.map(|p| p.as_slice()))
            .with_filters(Some(filters))
            .with_limit(limit);
        Ok(self.scan_with_args(state, args).await?.into_inner())
    }

    async fn scan_with_args<'a>(
        &self,
        state: &dyn Session,
        args: ScanArgs<'a>,
    ) -> Result<ScanResult> {
        let filters = args.filters().unwrap_or(&[]);
        let plan = match self.listing_for(state, filters).await {
            Some((listing, hiding)) => {
                let plan = listing.scan_with_args(state, args).await?.into_inner();
                self.count_index(&plan, &hiding);
                plan
            }
            None => self.inner.scan_with_args(state, args).await?.into_inner(),
        };
        Ok(self.prune(state, plan, filters).await?.into())
    }
}

/// Row groups in every file the table lists, those a scan never opens included (footers
/// through DataFusion's metadata cache, so a scan's footers are not read twice).
pub async fn table_row_groups(state: &dyn Session, table: &ListingTable) -> Result<usize> {
    count_listed(state, table, &Default::default()).await
}

/// [`table_row_groups`], taking the count of a file in `known` (object path -> size, row
/// groups) from there while its size is the same.
async fn count_listed(
    state: &dyn Session,
    table: &ListingTable,
    known: &crate::index::Dropped,
) -> Result<usize> {
    let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
    let ext = &table.options().file_extension;
    let mut total = 0;
    for url in table.table_paths() {
        let (store, files) = list_files(state, url, ext).await?;
        for meta in &files {
            if let Some(&(size, n)) = known.get(meta.location.as_ref()) {
                if size == meta.size {
                    total += n;
                    continue;
                }
            }
            let metadata = DFParquetMetadata::new(store.as_ref(), meta)
                .with_file_metadata_cache(Some(Arc::clone(&cache)))
                .fetch_metadata()
                .await?;
            total += metadata.num_row_groups();
        }
    }
    Ok(total)
}

/// The store of `url` and the files DataFusion lists under it.
/// The schema DataFusion infers for the table at `url` (listed as `files` in `store`) from
/// every footer, from as few footers as the index at `root` allows: one per schema fingerprint among the files it knows
/// as they are now, every other file's (`sbbf_index::probe::schema_files`). `None` without a
/// usable index (then every footer is read).
async fn schema_from_index(
    state: &dyn Session,
    url: &ListingTableUrl,
    options: &ListingOptions,
    root: &sbbf_index::Root,
    (store, files): (&Arc<dyn ObjectStore>, &[object_store::ObjectMeta]),
) -> Option<SchemaRef> {
    let (loaded, _) = root.load().await.ok()??;
    // Empty files tell no schema (DataFusion leaves them out too); its order, by location.
    let mut files: Vec<object_store::ObjectMeta> =
        files.iter().filter(|m| m.size > 0).cloned().collect();
    files.sort_by(|a, b| a.location.cmp(&b.location));
    if files.is_empty() {
        return None;
    }
    let rel = |m: &object_store::ObjectMeta| -> Option<String> {
        Some(url.strip_prefix(&m.location)?.collect::<Vec<_>>().join("/"))
    };
    // The index's view of the same files: an object's listing as DataFusion's gave it, a
    // local file as the index lists it (inode and times).
    let listing: Vec<sbbf_index::Listed> = match root {
        sbbf_index::Root::Store { .. } => root.listed_objects(files.clone()),
        sbbf_index::Root::Local { .. } => {
            let mut by_rel: std::collections::HashMap<String, sbbf_index::Listed> = root
                .list()
                .await
                .ok()?
                .into_iter()
                .map(|l| (l.rel.clone(), l))
                .collect();
            files
                .iter()
                .filter_map(|m| by_rel.remove(&rel(m)?))
                .collect()
        }
    };
    let read = sbbf_index::probe::schema_files(root, &loaded, &listing)
        .await
        .ok()?;
    let told: std::collections::HashSet<&str> =
        read.iter().map(|&i| listing[i].rel.as_str()).collect();
    let listed: std::collections::HashSet<&str> = listing.iter().map(|l| l.rel.as_str()).collect();
    // A file DataFusion lists and the index's listing does not (or whose name does not map)
    // is read as well.
    let chosen: Vec<object_store::ObjectMeta> = files
        .into_iter()
        .filter(|m| match rel(m) {
            Some(r) => told.contains(r.as_str()) || !listed.contains(r.as_str()),
            None => true,
        })
        .collect();
    infer_schema(state, options, url, store, &chosen, true)
        .await
        .ok()
}

async fn list_files(
    state: &dyn Session,
    url: &ListingTableUrl,
    ext: &str,
) -> Result<(Arc<dyn ObjectStore>, Vec<object_store::ObjectMeta>)> {
    use futures::TryStreamExt;
    let store = state.runtime_env().object_store(url)?;
    let files = url
        .list_all_files(state, store.as_ref(), ext)
        .await?
        .try_collect()
        .await?;
    Ok((store, files))
}

/// The hive partitions of the table at `url` (`year=2024/month=01/x.parquet`): each key of
/// the `key=value` folders every file sits in, in order, typed as DuckDB infers them
/// (`BIGINT` when every value is an integer written as one, `01` is not; else a string).
/// None when some file's folders do not name the same keys in the same order: DataFusion
/// would leave such files out of the table, and no file may go missing. Then, when some
/// file is in `key=value` folders, why those keys are no columns (DuckDB would read them,
/// null for the other files): to say.
fn hive_partitions(
    url: &ListingTableUrl,
    files: &[object_store::ObjectMeta],
) -> (Vec<(String, DataType)>, Option<String>) {
    // Each file's keys, or None when a folder on its way is no `key=value` one.
    let layout = |f: &object_store::ObjectMeta| -> Option<(Vec<String>, Vec<String>)> {
        let mut parts: Vec<&str> = url.strip_prefix(&f.location)?.collect();
        parts.pop(); // the file's own name
        let mut keys = Vec::with_capacity(parts.len());
        let mut values = Vec::with_capacity(parts.len());
        for part in parts {
            match part.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    keys.push(k.to_string());
                    values.push(v.to_string());
                }
                _ => return None,
            }
        }
        Some((keys, values))
    };
    let mut keys: Option<Vec<String>> = None;
    let mut integer: Vec<bool> = Vec::new();
    // The first file in `key=value` folders and the first whose layout differs from it.
    let mut odd: Option<&object_store::ObjectMeta> = None;
    for f in files {
        let Some((these, values)) = layout(f) else {
            odd = Some(f);
            break;
        };
        match &keys {
            None => {
                integer = vec![true; these.len()];
                keys = Some(these);
            }
            Some(k) if *k != these => {
                odd = Some(f);
                break;
            }
            Some(_) => {}
        }
        for (i, v) in values.iter().enumerate() {
            // As DuckDB: an integer only if it reads back the same (`01` stays a string).
            integer[i] &= v.parse::<i64>().is_ok_and(|n| n.to_string() == *v);
        }
    }
    let Some(odd) = odd else {
        let partitions = keys
            .unwrap_or_default()
            .into_iter()
            .zip(integer)
            .map(|(k, int)| (k, if int { DataType::Int64 } else { DataType::Utf8 }))
            .collect();
        return (partitions, None);
    };
    // Keys named by the folders of some file: those a reader might expect as columns.
    let hive = files.iter().find_map(|f| {
        let parts: Vec<&str> = url.strip_prefix(&f.location)?.collect();
        let keys: Vec<&str> = parts[..parts.len().saturating_sub(1)]
            .iter()
            .filter_map(|p| p.split_once('=').map(|(k, _)| k).filter(|k| !k.is_empty()))
            .collect();
        (!keys.is_empty()).then(|| (f, keys.join(", ")))
    });
    let why = hive.map(|(f, keys)| {
        let other = if std::ptr::eq(f, odd) {
            files.first().unwrap_or(f)
        } else {
            odd
        };
        format!(
            "the hive partition folders ({keys}) are not read as columns: {} is in them and \
             {} is not in the same key=value folders (every file is read)",
            object_name(url, &f.location),
            object_name(url, &other.location)
        )
    });
    (Vec::new(), why)
}

/// Every object the file URLs `urls` name (a glob's files), in one store.
async fn objects_of(
    state: &dyn Session,
    urls: &[ListingTableUrl],
) -> Result<(Arc<dyn ObjectStore>, Vec<object_store::ObjectMeta>)> {
    let mut store = None;
    let mut out = Vec::with_capacity(urls.len());
    for u in urls {
        let (s, files) = list_files(state, u, "").await?;
        store.get_or_insert(s);
        out.extend(files);
    }
    let store = match store {
        Some(s) => s,
        None => state
            .runtime_env()
            .object_store(ObjectStoreUrl::local_filesystem())?,
    };
    Ok((store, out))
}

/// Where an object of the table at `url` is, as a user names it: a local path, or a URL.
fn object_name(url: &ListingTableUrl, location: &object_store::path::Path) -> String {
    if url.scheme() == "file" {
        format!("/{location}")
    } else {
        format!("{}{location}", url.object_store().as_str())
    }
}

/// The schema of the table at `url` whose files are `files` (of `store`): each file's as
/// DataFusion reads it (its format options applied), merged in the order of their locations
/// (`merge`), or the first's (a local glob's files, as DataFusion takes the schema of a list
/// of files; the others' footers are still read, so that a damaged one is named now, and
/// the scan finds them in the cache). A footer that cannot be read is an error naming its
/// file.
///
/// Files may differ in the kind of a string or binary column (`string` in one, `string_view`
/// in another: delta-rs rewrites files with views; large types), which DataFusion's merge
/// refuses: such a column is read as the view type in every file, as DuckDB and pyarrow
/// read those files as one table.
async fn infer_schema(
    state: &dyn Session,
    options: &ListingOptions,
    url: &ListingTableUrl,
    store: &Arc<dyn ObjectStore>,
    files: &[object_store::ObjectMeta],
    merge: bool,
) -> Result<SchemaRef> {
    use datafusion::common::DataFusionError;
    use futures::TryStreamExt;
    let format = &options.format;
    let concurrency = state
        .config_options()
        .execution
        .meta_fetch_concurrency
        .get();
    // By location, as DataFusion orders them: columns in the order files bring them, and the
    // first damaged file in that order is the one named, whatever the reads' timing.
    let mut files: Vec<&object_store::ObjectMeta> = files.iter().filter(|m| m.size > 0).collect();
    files.sort_by(|a, b| a.location.cmp(&b.location));
    let schemas: Vec<(object_store::path::Path, SchemaRef)> = futures::stream::iter(files)
        .map(|m| async move {
            match format
                .infer_schema(state, store, std::slice::from_ref(m))
                .await
            {
                Ok(schema) => Ok((m.location.clone(), schema)),
                Err(e) => Err(DataFusionError::Execution(format!(
                    "{}: {e}",
                    object_name(url, &m.location)
                ))),
            }
        })
        .buffered(concurrency)
        .try_collect()
        .await?;
    if !merge {
        return Ok(schemas
            .into_iter()
            .next()
            .map(|(_, s)| s)
            .unwrap_or_else(|| Arc::new(Schema::empty())));
    }
    let merged = match Schema::try_merge(schemas.iter().map(|(_, s)| s.as_ref().clone())) {
        Ok(s) => s,
        Err(_) => {
            let mut merged = Schema::empty();
            for (location, schema) in &schemas {
                merged = merge_views(&merged, schema).map_err(|e| {
                    DataFusionError::Plan(format!(
                        "{}: its schema does not merge with that of the files before it: {e}",
                        object_name(url, location)
                    ))
                })?;
            }
            merged
        }
    };
    let all: Vec<&Schema> = schemas.iter().map(|(_, s)| s.as_ref()).collect();
    Ok(Arc::new(nullable_where_missing(merged, &all)))
}

/// `merged` with every column (and struct field) that some file of `files` lacks made
/// nullable: that file's rows hold nulls there. A column declared non-null in the files
/// that have it would otherwise fail the scan of a file without it.
fn nullable_where_missing(merged: Schema, files: &[&Schema]) -> Schema {
    use datafusion::arrow::datatypes::{Field, Fields};
    /// The field with every child some of `others` (the same field in each file that has
    /// it) lacks made nullable, itself too when `missing`.
    fn fix(field: &Field, others: &[&Field], missing: bool) -> Field {
        let mut f = field.clone();
        if missing {
            f = f.with_nullable(true);
        }
        if let DataType::Struct(children) = field.data_type() {
            let fixed: Fields = children
                .iter()
                .map(|c| {
                    let theirs: Vec<&Field> = others
                        .iter()
                        .filter_map(|o| match o.data_type() {
                            DataType::Struct(cs) => cs.find(c.name()).map(|(_, x)| x.as_ref()),
                            _ => None,
                        })
                        .collect();
                    Arc::new(fix(c, &theirs, theirs.len() < others.len()))
                })
                .collect();
            f = f.with_data_type(DataType::Struct(fixed));
        }
        f
    }
    let fields: Vec<Field> = merged
        .fields()
        .iter()
        .map(|f| {
            let theirs: Vec<&Field> = files
                .iter()
                .filter_map(|s| s.field_with_name(f.name()).ok())
                .collect();
            fix(f, &theirs, theirs.len() < files.len())
        })
        .collect();
    Schema::new_with_metadata(fields, merged.metadata().clone())
}

/// `a` and `b` merged as Arrow merges schemas (columns and struct fields added, each type
/// the same in both), except that a string or binary column of two kinds is one column of
/// the view type.
fn merge_views(a: &Schema, b: &Schema) -> std::result::Result<Schema, String> {
    use datafusion::arrow::datatypes::Field;
    let mut fields: Vec<Field> = a.fields().iter().map(|f| f.as_ref().clone()).collect();
    for f in b.fields() {
        match fields.iter_mut().find(|g| g.name() == f.name()) {
            Some(g) => {
                let t = reconcile(g.data_type(), f.data_type()).ok_or_else(|| {
                    format!(
                        "column {} is {} there and {} before",
                        f.name(),
                        f.data_type(),
                        g.data_type()
                    )
                })?;
                let nullable = g.is_nullable() || f.is_nullable();
                *g = g.clone().with_data_type(t).with_nullable(nullable);
            }
            None => fields.push(f.as_ref().clone()),
        }
    }
    let mut metadata = a.metadata().clone();
    for (k, v) in b.metadata() {
        metadata.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(Schema::new_with_metadata(fields, metadata))
}

/// One type for `a` and `b`: the same, one where the other is null, or, for strings (and
/// for binaries) of different kinds, the view type; struct fields merged by name, list
/// items and map entries reconciled. `None`: no one type.
fn reconcile(a: &DataType, b: &DataType) -> Option<DataType> {
    use datafusion::arrow::datatypes::FieldRef;
    let string =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let binary = |t: &DataType| {
        matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    };
    let field = |x: &FieldRef, y: &FieldRef| -> Option<FieldRef> {
        (x.name() == y.name()).then_some(())?;
        let t = reconcile(x.data_type(), y.data_type())?;
        let nullable = x.is_nullable() || y.is_nullable();
        Some(Arc::new(
            x.as_ref().clone().with_data_type(t).with_nullable(nullable),
        ))
    };
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (DataType::Null, t) | (t, DataType::Null) => t.clone(),
        _ if string(a) && string(b) => DataType::Utf8View,
        _ if binary(a) && binary(b) => DataType::BinaryView,
        (DataType::Struct(x), DataType::Struct(y)) => {
            let mut fields: Vec<FieldRef> = x.iter().cloned().collect();
            for f in y.iter() {
                match fields.iter_mut().find(|g| g.name() == f.name()) {
                    Some(g) => *g = field(g, f)?,
                    None => fields.push(Arc::clone(f)),
                }
            }
            DataType::Struct(fields.into())
        }
        (DataType::List(x), DataType::List(y)) => DataType::List(field(x, y)?),
        (DataType::LargeList(x), DataType::LargeList(y)) => DataType::LargeList(field(x, y)?),
        (DataType::FixedSizeList(x, n), DataType::FixedSizeList(y, m)) if n == m => {
            DataType::FixedSizeList(field(x, y)?, *n)
        }
        (DataType::Map(x, s), DataType::Map(y, t)) if s == t => DataType::Map(field(x, y)?, *s),
        _ => return None,
    })
}

/// The files a local glob names, as [`sbbf_parquet::source::local_files`] finds them (and so
/// every other command), or `None` for a path that is no local glob.
fn local_glob_files(path: &str) -> Result<Option<Vec<ListingTableUrl>>> {
    if sbbf_parquet::remote::is_remote_url(path) || !path.contains(['*', '?', '[']) {
        return Ok(None);
    }
    local_listing(path).map(Some)
}

/// The files of a local path as [`sbbf_parquet::source::local_files`] finds them, those that
/// can be opened (a link to nothing is left out: it holds no row).
fn local_listing(path: &str) -> Result<Vec<ListingTableUrl>> {
    let files = sbbf_parquet::source::local_files(path)
        .map_err(|e| datafusion::common::DataFusionError::External(Box::new(e)))?;
    files
        .iter()
        .filter(|f| f.exists())
        .map(|f| ListingTableUrl::parse(f.to_string_lossy()))
        .collect()
}

/// Whether DataFusion's listing failed on a symbolic link loop (the local store's walk
/// reports it only as text).
fn is_loop(e: &datafusion::common::DataFusionError) -> bool {
    e.to_string().contains("File system loop found")
}
