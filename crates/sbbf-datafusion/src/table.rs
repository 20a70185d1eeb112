//! The table: DataFusion's listing table, with each file's row groups pruned by our filters
//! before its scan starts.

use crate::dynamic::SbbfSource;
use crate::expr::predicate;
use crate::file_step::{footer, policy_for, Metrics, Planned, StatsStep, Step};
use crate::metric;
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::catalog::{ScanArgs, ScanResult, Session};
use datafusion::common::{Result, Statistics};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl, PartitionedFile,
};
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileScanConfigBuilder, FileSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::TableProvider;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::metrics::{Label, MetricBuilder};
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;
use object_store::ObjectStore;
use sbbf_parquet::prune::PreparedPredicate;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Files whose filters are read at once while planning a scan.
pub const DEFAULT_FILE_CONCURRENCY: usize = 32;

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
                Err(e) if !sbbf_parquet::source::object::is_remote_url(path) && is_loop(&e) => {
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
    if sbbf_parquet::source::object::is_remote_url(path) || !path.contains(['*', '?', '[']) {
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
