//! The table: DataFusion's listing table, with each file's row groups pruned by our filters
//! before its scan starts.

use crate::expr::predicate;
use crate::file_step::{footer, policy_for, Metrics, Planned, StatsStep, Step};
use crate::filtered::{hiding_url, FilteredStore};
use crate::index::{ask_lake, ask_row_groups, AskedRowGroups, Dropped, KnownFiles};
use crate::index::{KnownStatistics, LakeFiles, Loading};
use crate::join::SbbfSource;
use crate::lake::{ByTableColumns, Columns, Deleted, FileBounds, PartitionValues};
use crate::listing::{list_files, list_table, TableFiles};
use crate::metric;
use crate::schema::{infer_schema, schema_from_index};
use crate::tail::TailReaderFactory;
use async_trait::async_trait;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::{ScanArgs, ScanResult, Session};
use datafusion::common::stats::Precision;
use datafusion::common::{project_schema, DataFusionError, Result, Statistics};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl, PartitionedFile,
};
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileScanConfigBuilder, FileSource, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::datasource::TableProvider;
use datafusion::execution::cache::cache_manager::{
    CachedFileMetadata, FileMetadataCache, FileStatisticsCache,
};
use datafusion::execution::cache::SchemaFingerprint;
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::metrics::{Label, MetricBuilder};
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use sbbf_lake::{LakeOptions, TableVersion};
use sbbf_parquet::prune::PreparedPredicate;
use sbbf_parquet::read::async_driver::REMOTE_POLICY;
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
    /// The table version read, when the path is a Delta or Iceberg table.
    table: Option<TableVersion>,
    /// How a lake table's files name its columns, when not as the table does.
    columns: Option<Arc<Columns>>,
    /// A lake table's deletes (Delta deletion vectors, Iceberg delete files), when any file
    /// has some.
    deleted: Option<Arc<Deleted>>,
    /// A lake table's per-file bounds from its snapshot, when any file has some.
    bounds: Option<Arc<FileBounds>>,
    /// Files scans left out by those bounds, footers unread: counted as holding no row group
    /// (object path -> size, 0).
    unread: Mutex<Dropped>,
    /// Files whose footers scans read (object path -> size, row groups): counted from that
    /// read, not read again ([`SbbfTable::row_groups`]).
    counted: Mutex<Dropped>,
    /// A Delta table's partition values by file, from its log: scans take them instead of
    /// DataFusion's reading of folder names, and filters on them are not DataFusion's
    /// listing's to apply.
    partition_values: Option<Arc<PartitionValues>>,
}

/// What the index gives one scan ([`SbbfTable::indexed_scan`]).
struct IndexedScan {
    /// A listing without the files it rules out, when it rules any out.
    listing: Option<(ListingTable, Arc<FilteredStore>)>,
    /// What it knows of the row groups of the other files, as they were when asked.
    known: Arc<KnownFiles>,
    /// A lake table's files it rules out (its listing is the snapshot's: they are taken
    /// out of the scan's files, no listing made again).
    dropped: Option<Dropped>,
}

/// The index of a table root (`ROOT/_sbbf_index/`, see `crate::index`), and what it did.
#[derive(Debug)]
struct TableIndex {
    root: sbbf_index::Root,
    /// The table's files as its one listing found them (an object-store prefix: the scans
    /// list from the same files, see `crate::listing`); `None` for a local directory, listed
    /// when asked.
    listed: Option<Arc<Vec<sbbf_index::Listed>>>,
    /// The files' own schema (without partition columns), for the listing tables of scans.
    file_schema: SchemaRef,
    /// Why the index was ignored, once.
    warning: std::sync::OnceLock<String>,
    /// Files and row groups scans left out by the index.
    files: AtomicUsize,
    row_groups: AtomicUsize,
    /// What scans' asks read of the index (its head and the sections asked).
    reads: Mutex<sbbf_index::table::ReadStats>,
    /// Files left out, as the index recorded them: counted without their footers.
    known: Mutex<Dropped>,
    /// The files the index knew as they were when the table was made, by object path:
    /// scans plan them (and DataFusion takes their row counts) without reading their
    /// footers, while they are unchanged.
    rows: Arc<KnownFiles>,
    /// Their row counts as DataFusion's statistics of them (see [`known_statistics`]).
    statistics: Arc<FileStatisticsCache>,
    /// A lake table's files and how they name its columns: asked through its snapshot
    /// (`crate::index::ask_lake`).
    lake: Option<LakeFiles>,
    /// The index as read when the table was made, for the first scan (later ones read it
    /// again).
    preloaded: Mutex<Option<Loading>>,
}

impl TableIndex {
    /// The index `root` of a table whose files' schema is `file_schema`: the files one listing
    /// found (a prefix's, kept for the scans) or a lake table's, the index as read beside the
    /// listing (for the first scan), and the files it knew.
    fn new(
        root: sbbf_index::Root,
        file_schema: SchemaRef,
        (files, lake): (&[object_store::ObjectMeta], Option<LakeFiles>),
        preloaded: Option<Loading>,
        rows: KnownFiles,
    ) -> TableIndex {
        TableIndex {
            statistics: known_statistics(&file_schema, &rows),
            listed: match (&root, &lake) {
                (sbbf_index::Root::Store { .. }, None) => {
                    Some(Arc::new(root.listed_objects(files.to_vec())))
                }
                _ => None,
            },
            lake,
            preloaded: Mutex::new(preloaded),
            root,
            file_schema,
            warning: Default::default(),
            files: Default::default(),
            row_groups: Default::default(),
            reads: Default::default(),
            known: Default::default(),
            rows: Arc::new(rows),
        }
    }
}

/// The listing options of a table at `path`: Parquet read as the session says, without
/// DataFusion's own Bloom filter reads when ours prune (`enabled`); `*.parquet` below a folder,
/// and a single file named without the extension still read.
fn listing_options(
    state: &dyn Session,
    path: &str,
    url: &ListingTableUrl,
    enabled: bool,
) -> ListingOptions {
    let mut format = ParquetFormat::default().with_options(state.table_options().parquet.clone());
    if enabled {
        let mut options = format.options().clone();
        options.global.bloom_filter_on_read = false;
        format = format.with_options(options);
    }
    let options = ListingOptions::new(Arc::new(format)).with_file_extension(".parquet");
    if url.is_collection() || path.contains(['*', '?', '[']) {
        options
    } else {
        options.with_file_extension("")
    }
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
    /// cannot be read is an error naming its file. An object-store prefix is listed once,
    /// here: the table's scans read the files as listed then (make the table again to see
    /// files added since).
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
        SbbfTable::with_lake(state, path, enabled, use_index, &LakeOptions::default()).await
    }

    /// [`SbbfTable::with_options`], a Delta or Iceberg table read as `lake` says: by default
    /// its current snapshot's data files only (never the files its folder keeps that the
    /// table removed), at [`LakeOptions::as_of`] an older snapshot, with
    /// [`LakeOptions::as_directory`] its folder as plain files. Columns are the table's, each
    /// found in every file as the format says (Iceberg field ids: a renamed column is read
    /// from files written before the rename; Delta column mapping's physical names and ids).
    /// The rows Delta deletion vectors and Iceberg position and equality deletes delete are
    /// left out of the scan. Iceberg v3 deletion vectors and the fields inside a nested column
    /// under Delta column mapping are refused for now with an error naming them, rather than
    /// read wrong.
    ///
    /// ```no_run
    /// # async fn run() -> datafusion::common::Result<()> {
    /// use datafusion::prelude::SessionContext;
    /// use sbbf_lake::{AsOf, LakeOptions};
    /// let ctx = SessionContext::new();
    /// let lake = LakeOptions { as_of: Some(AsOf::Version(3)), as_directory: false };
    /// let t = sbbf_datafusion::SbbfTable::with_lake(&ctx.state(), "delta/events/", true, true, &lake).await?;
    /// println!("{:?}", t.table_version());
    /// # Ok(()) }
    /// ```
    pub async fn with_lake(
        state: &dyn Session,
        path: &str,
        enabled: bool,
        use_index: bool,
        lake: &LakeOptions,
    ) -> Result<SbbfTable> {
        // `file:///t/` is `/t/`: a lake table found as one, not listed as a folder.
        let path = &*sbbf_parquet::source::object::local_location(path)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let url = ListingTableUrl::parse(path)?;
        let options = listing_options(state, path, &url, enabled);
        // The index at the table's folder is read beside finding and reading the table (one
        // round trip for both on a store, where it would otherwise wait for the snapshot).
        let early = match enabled && use_index && may_be_a_table(path, &url) {
            true => index_root_at(state, path),
            false => None,
        };
        // An Iceberg table whose current snapshot the index was built from is read from the
        // index's file table, not its manifests: the head, once in, is handed to the table's
        // reader, which asks it only for an Iceberg table.
        let (loading, known) = sbbf_index::table::load_for_reader(early.clone());
        let (listed, mut preloaded) = futures::future::join(
            list_table(state, path, &url, &options.file_extension, lake, known),
            loading,
        )
        .await;
        let TableFiles {
            store,
            files,
            config,
            partitions,
            warnings,
            merge,
            table,
            columns,
            deleted,
            bounds,
            schema: typed,
            partition_values,
            snapshot,
        } = listed?;
        // A directory or prefix may have an index, and a lake table at its folder (however
        // named: its folder, a metadata file); anything else has none. A root reads through
        // the session's store; a prefix is known to be no lake table (found so above: not
        // asked again), and a lake table's files are its snapshot's.
        let root = match (&snapshot, early) {
            // No index: nothing more to ask.
            (Some(_), _) if matches!(preloaded, Some(Ok(None)) | None) => None,
            (Some((snap, _)), early) => early.map(|r| {
                r.with_lake(lake.clone())
                    .with_snapshot(Some(Arc::clone(snap)))
            }),
            (None, early) => match sbbf_index::Root::open(path) {
                Ok(Some(root)) if enabled && use_index && url.is_collection() => {
                    let root = match root {
                        sbbf_index::Root::Store { prefix, .. } => {
                            sbbf_index::Root::from_store(path, Arc::clone(&store), prefix)
                        }
                        local => local,
                    };
                    // The load made beside the listing is the first scan's, when of this
                    // index.
                    if early.is_none_or(|e| e.index_location() != root.index_location()) {
                        preloaded = None;
                    }
                    Some(root.with_lake(lake.clone()).with_snapshot(None))
                }
                _ => None,
            },
        };
        let (known, rows) = match &root {
            Some(root) if url.is_collection() && snapshot.is_none() => {
                match schema_from_index(state, &url, &options, root, (&store, &files)).await {
                    Some((schema, rows)) => (Some(schema), rows),
                    None => (None, KnownFiles::new()),
                }
            }
            _ => (None, KnownFiles::new()),
        };
        let schema = match known.or(typed) {
            Some(schema) => Some(schema),
            None if files.iter().any(|m| m.size > 0) => Some(
                infer_schema(
                    state,
                    &options,
                    &url,
                    &store,
                    &files,
                    merge,
                    columns.as_deref(),
                )
                .await?,
            ),
            // A lake table with no file yet: its columns as its schema types them.
            None => match &columns {
                Some(cols) => Some(Arc::new(cols.table_schema(&Schema::empty())?)),
                None => None,
            },
        };
        let mut config = config.with_listing_options(options);
        if let Some(cols) = &columns {
            config = config.with_expr_adapter_factory(Arc::new(ByTableColumns(Arc::clone(cols))));
        }
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
        let partitioned = !partitions.is_empty() && !partitions.iter().any(|(n, _)| clash(n));
        if partitioned {
            if let Some(options) = config.options.take() {
                config.options = Some(options.with_table_partition_cols(partitions));
            }
        }
        // The log's partition columns, unless a file column has the name (as above).
        let partition_values = partition_values.filter(|v| !v.names().any(clash));
        // A lake table's files as the index lists them: the snapshot's, each with its own
        // `stat` locally (no store request), in the snapshot's order.
        let lake_files = match (&root, snapshot) {
            (Some(root), Some((snapshot, paths))) => match root.list().await {
                Ok(listed) if listed.len() == paths.len() => Some(LakeFiles {
                    snapshot,
                    listed,
                    paths,
                }),
                // The scan reads the files as without an index (and says what is wrong).
                _ => None,
            },
            _ => None,
        };
        let root = root.filter(|_| lake_files.is_some() || table.is_none());
        let index = match (root, config.file_schema.clone()) {
            (Some(root), Some(file_schema)) => Some(TableIndex::new(
                root,
                file_schema,
                (&files, lake_files),
                preloaded,
                rows,
            )),
            _ => None,
        };
        Ok(SbbfTable {
            inner: ListingTable::try_new(config)?,
            enabled,
            file_concurrency: DEFAULT_FILE_CONCURRENCY,
            name: None,
            index,
            warnings,
            table,
            columns,
            deleted,
            bounds,
            unread: Default::default(),
            counted: Default::default(),
            partition_values,
        })
    }

    /// The table version read, when the path is a Delta or Iceberg table.
    pub fn table_version(&self) -> Option<&TableVersion> {
        self.table.as_ref()
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

    /// What scans read of the table's index to ask it (requests, bytes, waves: its head and
    /// the sections asked, summed over the scans); `None` without an index asked.
    pub fn index_reads(&self) -> Option<sbbf_index::table::ReadStats> {
        let ix = self.index.as_ref()?;
        let reads = *ix.reads.lock().unwrap_or_else(|p| p.into_inner());
        (reads.requests > 0).then_some(reads)
    }

    /// The row groups of all the table's files, as [`table_row_groups`] counts them, except
    /// that the files the index left out of a scan are counted from the index, and a lake
    /// table's files its snapshot statistics left out count none (their footers are not
    /// read).
    pub async fn row_groups(&self, state: &dyn Session) -> Result<usize> {
        let mut known = self
            .index
            .as_ref()
            .map(|ix| {
                // The files it knew when the table was made, then those it left out since.
                let mut known: Dropped = ix
                    .rows
                    .iter()
                    .map(|(path, k)| (path.clone(), (k.size(), k.row_counts.len())))
                    .collect();
                known.extend(ix.known.lock().unwrap_or_else(|p| p.into_inner()).clone());
                known
            })
            .unwrap_or_default();
        for read in [&self.counted, &self.unread] {
            let read = read.lock().unwrap_or_else(|p| p.into_inner());
            known.extend(read.iter().map(|(k, v)| (k.clone(), *v)));
        }
        count_listed(state, &self.inner, &known, self.file_concurrency).await
    }

    /// What the index gives one scan (`None` without a usable index): for `filters`, a
    /// listing table that lists through a store view leaving out the files it rules out (see
    /// `crate::index`), with the store view's counters, when it rules any out; and what it
    /// knows of the other files' row groups (without a filter it can ask about, the row
    /// counts it knew when the table was made).
    async fn indexed_scan(&self, state: &dyn Session, filters: &[Expr]) -> Option<IndexedScan> {
        let ix = self.index.as_ref()?;
        let Some(pred) = predicate(filters, &ix.file_schema) else {
            return Some(IndexedScan {
                listing: None,
                known: Arc::clone(&ix.rows),
                dropped: None,
            });
        };
        let [table_url] = self.inner.table_paths().as_slice() else {
            return None;
        };
        let preloaded = ix
            .preloaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let asked = match &ix.lake {
            Some(files) => ask_lake(&ix.root, files, &pred, preloaded).await,
            None => {
                let listed = ix.listed.as_deref().map(|l| l.as_slice());
                ask_row_groups(&ix.root, listed, table_url, &pred, preloaded).await
            }
        };
        let (dropped, known) = match asked {
            AskedRowGroups::Nothing => return None,
            AskedRowGroups::Ignored(why) => {
                let _ = ix.warning.set(why);
                return None;
            }
            AskedRowGroups::Answered {
                dropped,
                known,
                reads,
            } => {
                ix.reads
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .add(reads);
                (dropped, Arc::new(known))
            }
        };
        if ix.lake.is_some() {
            return Some(IndexedScan {
                listing: None,
                known,
                dropped: Some(dropped),
            });
        }
        let listing = match dropped.is_empty() {
            true => None,
            false => self.hiding_listing(state, table_url, dropped),
        };
        Some(IndexedScan {
            listing,
            known,
            dropped: None,
        })
    }

    /// `plan` without the files in `dropped` (a lake table's files its index rules out),
    /// counted as [`SbbfTable::count_index`] counts them; they are counted without their
    /// footers by [`SbbfTable::row_groups`].
    fn without_dropped(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        dropped: Dropped,
    ) -> Arc<dyn ExecutionPlan> {
        let Some(config) = plan
            .downcast_ref::<DataSourceExec>()
            .and_then(|e| e.data_source().downcast_ref::<FileScanConfig>())
        else {
            return plan;
        };
        let (mut files, mut rgs) = (0, 0);
        let groups: Vec<FileGroup> = config
            .file_groups
            .iter()
            .map(|g| {
                let kept =
                    g.iter()
                        .filter(|f| match dropped.get(f.object_meta.location.as_ref()) {
                            Some((_, n)) => {
                                files += 1;
                                rgs += n;
                                false
                            }
                            None => true,
                        });
                FileGroup::new(kept.cloned().collect())
            })
            .collect();
        let config = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(groups)
            .build();
        let plan: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(config);
        self.count_index(&plan, (files, rgs));
        if let Some(ix) = &self.index {
            ix.known
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(dropped);
        }
        plan
    }

    /// A listing table of this table's files but `dropped`, listing through a store view
    /// that leaves them out, registered in the session under a URL of its own.
    fn hiding_listing(
        &self,
        state: &dyn Session,
        table_url: &ListingTableUrl,
        dropped: Dropped,
    ) -> Option<(ListingTable, Arc<FilteredStore>)> {
        let ix = self.index.as_ref()?;
        let store = state.runtime_env().object_store(table_url).ok()?;
        let (store_url, listing_url) = hiding_url(table_url)?;

        let hiding = Arc::new(FilteredStore::without_dropped(store, dropped.clone()));
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
    fn count_index(&self, plan: &Arc<dyn ExecutionPlan>, (files, rgs): (usize, usize)) {
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
            table: None,
            columns: None,
            deleted: None,
            bounds: None,
            unread: Default::default(),
            counted: Default::default(),
            partition_values: None,
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
        known: Option<&KnownFiles>,
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
            if self.exact_statistics() {
                return Ok(plan);
            }
            let groups = self
                .without_deleted(&store, &cache, config.file_groups.clone())
                .await?;
            let config = FileScanConfigBuilder::from(config.clone())
                .with_file_groups(groups)
                .build();
            return Ok(DataSourceExec::from_data_source(without_statistics(config)));
        }
        // On an object store, each file's footer and the pages in its last bytes come from
        // one request (DataFusion's reader asks for the pages again, a round trip later), and
        // a file the planning opened to ask its filters is not read again for them.
        let tail_reader = match (
            policy_for(&config.object_store_url) == REMOTE_POLICY,
            config.file_source().downcast_ref::<ParquetSource>(),
        ) {
            (true, Some(parquet))
                if parquet
                    .table_parquet_options()
                    .crypto
                    .file_decryption
                    .is_none()
                    && parquet.table_parquet_options().crypto.factory_id.is_none() =>
            {
                let tail = Arc::new(TailReaderFactory::new(
                    Arc::clone(&store),
                    Arc::clone(&cache),
                ));
                Some((parquet, tail))
            }
            _ => None,
        };
        let inner = match &tail_reader {
            Some((parquet, tail)) => Arc::new(
                (*parquet)
                    .clone()
                    .with_parquet_file_reader_factory(Arc::clone(tail) as _),
            ) as Arc<dyn FileSource>,
            None => Arc::clone(config.file_source()),
        };
        // The join filters arrive later, while the query runs: the file source probes them
        // when it opens each file (`dynamic.rs`).
        let mut source =
            SbbfSource::new(inner, Arc::clone(&cache)).with_columns(self.columns.clone());
        // With an index, the join's keys are asked of it first: files it rules out are
        // dropped unread.
        // Not a lake table's: the join's keys would be asked by the table's names.
        let index = self.index.as_ref().filter(|ix| ix.lake.is_none());
        if let (Some(ix), [table_url]) = (index, self.inner.table_paths().as_slice()) {
            source = source.with_index(ix.root.clone(), ix.listed.clone(), table_url.clone());
        }
        let source: Arc<dyn FileSource> = Arc::new(source);
        // The files' own columns: a filter on a partition column (`year=2024/`) is not in
        // any file, and leaves the rest of an AND to be tested.
        // Prepared: its key sets are hashed once for all the scan's files.
        let bloom = predicate(filters, config.file_schema()).map(PreparedPredicate::new);
        // The snapshot's bounds are the table's columns' (partition columns included).
        let table_pred = match &self.bounds {
            Some(_) => predicate(filters, &self.schema()),
            None => None,
        };
        // Statistics first: the row groups min/max rule out cost no filter read.
        let stats = if state.config_options().execution.parquet.pruning {
            StatsStep::new(
                state,
                filters,
                config.file_schema(),
                config.expr_adapter_factory.clone(),
            )
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
            columns: self.columns.as_deref(),
            bounds: self.bounds.as_deref().zip(table_pred.as_ref()),
            known,
            counted: &self.counted,
            tails: tail_reader.as_ref().map(|(_, t)| t.tails()),
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
                                Planned::Unread => {
                                    // Counted without its footer: no row group of it is read.
                                    self.unread
                                        .lock()
                                        .unwrap_or_else(|p| p.into_inner())
                                        .insert(
                                            f.object_meta.location.to_string(),
                                            (f.object_meta.size, 0),
                                        );
                                    None
                                }
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
        let groups = self.without_deleted(&store, &cache, groups).await?;
        let config = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(groups)
            .with_source(source)
            .build();
        let config = match self.exact_statistics() {
            true => config,
            false => without_statistics(config),
        };
        Ok(DataSourceExec::from_data_source(config))
    }

    /// Whether the statistics DataFusion gathered from the files' footers are the table's:
    /// not where a lake table's files name its columns otherwise (a file's column of the
    /// same name may be another column of the table), nor where deletes delete rows the
    /// footers count, nor where partition values are the log's (DataFusion's
    /// statistics of a partition column are its folder names').
    fn exact_statistics(&self) -> bool {
        self.columns.is_none() && self.deleted.is_none() && self.partition_values.is_none()
    }

    /// `plan`, the listing's scan, with the partition columns and values of the table's log
    /// when it keeps them (a Delta table's, [`PartitionValues`]): the listing declares
    /// partition columns as its folder names give them, never null, typed as text. The scan
    /// is made again as the listing makes it, over a file source whose table schema has the
    /// log's columns (typed as the table's schema types them, nullable), each file with the
    /// log's values; `projection` is the scan's, as the listing got it.
    async fn with_log_partitions(
        &self,
        state: &dyn Session,
        plan: Arc<dyn ExecutionPlan>,
        projection: Option<&[usize]>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(values) = &self.partition_values else {
            return Ok(plan);
        };
        let Some(config) = plan
            .downcast_ref::<DataSourceExec>()
            .and_then(|e| e.data_source().downcast_ref::<FileScanConfig>())
        else {
            // No file to scan (a version with no data file yet, or every file left out): no
            // rows, in this table's columns (the listing's have no partition column).
            let schema =
                project_schema(&self.schema(), projection.map(<[usize]>::to_vec).as_ref())?;
            return Ok(Arc::new(EmptyExec::new(schema)));
        };
        let table_schema = TableSchema::builder(Arc::clone(config.file_schema()))
            .with_table_partition_cols(values.fields())
            .build();
        let source = self.inner.options().format.file_source(table_schema);
        let unknown = Statistics::new_unknown(source.table_schema().table_schema());
        let groups = self.with_partition_values(config.file_groups.clone())?;
        let config = FileScanConfigBuilder::from(config.clone())
            .with_source(source)
            .with_file_groups(groups)
            .with_statistics(unknown)
            .with_projection_indices(projection.map(<[usize]>::to_vec))?
            .build();
        self.inner
            .options()
            .format
            .create_physical_plan(state, config)
            .await
    }

    /// `groups` with each file's partition values from the table's log, when it keeps them
    /// (a Delta table's: [`PartitionValues`]).
    fn with_partition_values(&self, groups: Vec<FileGroup>) -> Result<Vec<FileGroup>> {
        let Some(values) = &self.partition_values else {
            return Ok(groups);
        };
        groups
            .into_iter()
            .map(|g| {
                // Statistics are dropped with the folder names' values (see
                // `exact_statistics`).
                let mut files = g.into_inner();
                for f in &mut files {
                    values.set(f)?;
                }
                Ok(FileGroup::new(files))
            })
            .collect()
    }

    /// `groups` with the rows each file's deletes delete left out of its access
    /// plan (a file they all are is dropped). Deletes that cannot be read fail the scan:
    /// their rows would be counted.
    async fn without_deleted(
        &self,
        store: &Arc<dyn ObjectStore>,
        cache: &Arc<FileMetadataCache>,
        groups: Vec<FileGroup>,
    ) -> Result<Vec<FileGroup>> {
        let Some(deleted) = &self.deleted else {
            return Ok(groups);
        };
        let mut out = Vec::with_capacity(groups.len());
        for g in groups {
            let files: Vec<Option<PartitionedFile>> = futures::stream::iter(g.iter().cloned())
                .map(|mut f| async move {
                    if !deleted.has(&f) {
                        return Ok::<_, datafusion::common::DataFusionError>(Some(f));
                    }
                    let metadata = footer(store, cache, &f).await?;
                    Ok(match deleted.plan(&f, &metadata).await? {
                        Some(plan) if plan.row_group_index_iter().next().is_none() => None,
                        Some(plan) => {
                            f.extensions.insert(plan);
                            Some(f)
                        }
                        None => Some(f),
                    })
                })
                .buffered(self.file_concurrency)
                .try_collect()
                .await?;
            out.push(FileGroup::new(files.into_iter().flatten().collect()));
        }
        Ok(out)
    }
}

/// `config` with no statistics of its files: nothing is answered from them (`count(*)`) and
/// no file is pruned by them.
fn without_statistics(config: FileScanConfig) -> FileScanConfig {
    let schema = Arc::clone(config.file_source().table_schema().table_schema());
    let groups: Vec<FileGroup> = config
        .file_groups
        .iter()
        .map(|g| {
            FileGroup::new(
                g.iter()
                    .cloned()
                    .map(|mut f| {
                        f.statistics = None;
                        f
                    })
                    .collect(),
            )
        })
        .collect();
    FileScanConfigBuilder::from(config)
        .with_file_groups(groups)
        .with_statistics(Statistics::new_unknown(&schema))
        .build()
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
        let schema = self.inner.schema();
        match &self.partition_values {
            Some(values) => values.appended(&schema),
            None => schema,
        }
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        let mut support = self.inner.supports_filters_pushdown(filters)?;
        // A filter on a Delta table's partition column is evaluated above the scan, on the
        // values the scan takes from the log (DataFusion's listing would apply it to folder
        // names).
        if let Some(values) = &self.partition_values {
            for (s, f) in support.iter_mut().zip(filters) {
                if values.touches(f) && *s == TableProviderFilterPushDown::Exact {
                    *s = TableProviderFilterPushDown::Inexact;
                }
            }
        }
        Ok(support)
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
        // Filters on a Delta table's partition columns stay out of DataFusion's listing (it
        // would match them against folder names; see [`PartitionValues`]): the scan's own
        // steps and the filter above it see them.
        let listed_filters: Vec<Expr>;
        let args: ScanArgs<'_> = match &self.partition_values {
            Some(values) if filters.iter().any(|f| values.touches(f)) => {
                listed_filters = filters
                    .iter()
                    .filter(|f| !values.touches(f))
                    .cloned()
                    .collect();
                args.with_filters(Some(&listed_filters))
            }
            _ => args,
        };
        // A lake table's statistics are its snapshot's: DataFusion would read every file's
        // footer while planning to gather its own (a request per file on a store, even for
        // the files the snapshot's statistics then rule out).
        let lake_state;
        let state = match (&self.table, state.as_any().downcast_ref::<SessionState>()) {
            (Some(_), Some(s)) if s.config().collect_statistics() => {
                let mut s = s.clone();
                s.config_mut().options_mut().execution.collect_statistics = false;
                lake_state = s;
                &lake_state as &dyn Session
            }
            _ => state,
        };
        // The projection is of this table's schema, whose last columns are the log's
        // partition columns when it has them: the listing, which knows none of them, scans
        // the file columns asked for, and `with_log_partitions` adds the others.
        let projection = args.projection();
        let file_projection: Vec<usize>;
        let args: ScanArgs<'_> = match (&self.partition_values, projection) {
            (Some(_), Some(p)) => {
                let files = self.inner.schema().fields().len();
                file_projection = p.iter().copied().filter(|&i| i < files).collect();
                args.with_projection(Some(&file_projection))
            }
            _ => args,
        };
        let indexed = self.indexed_scan(state, filters).await;
        // The row counts the index knows stand for the footers DataFusion reads for its
        // statistics: for a scan with filters (its statistics answer nothing then) and for
        // one that reads no column (`count(*)`). Other scans may be aggregates DataFusion
        // answers from the footers' minima and maxima, which the index does not hold.
        let known_statistics = match &self.index {
            Some(ix) if ix.lake.is_some() => None,
            Some(ix) if !filters.is_empty() || projection.is_some_and(<[usize]>::is_empty) => {
                Some(Arc::clone(&ix.statistics))
            }
            _ => None,
        };
        let plan = match indexed.as_ref().and_then(|i| i.listing.as_ref()) {
            Some((listing, hiding)) => {
                let listing = listing.clone().with_cache(known_statistics);
                let plan = listing.scan_with_args(state, args).await?.into_inner();
                self.count_index(&plan, hiding.left_out());
                plan
            }
            None if known_statistics.is_some() => self
                .inner
                .clone()
                .with_cache(known_statistics)
                .scan_with_args(state, args)
                .await?
                .into_inner(),
            None => self.inner.scan_with_args(state, args).await?.into_inner(),
        };
        let (known, dropped) = match indexed {
            Some(i) => (Some(i.known), i.dropped),
            None => (None, None),
        };
        let plan = match dropped {
            Some(dropped) if !dropped.is_empty() => self.without_dropped(plan, dropped),
            _ => plan,
        };
        let plan = self.with_log_partitions(state, plan, projection).await?;
        Ok(self
            .prune(state, plan, filters, known.as_deref())
            .await?
            .into())
    }
}

/// The row counts of the files the index knows (`rows`, of a table whose files' schema is
/// `file_schema`) as the statistics DataFusion's listing gathers for each file of a scan
/// (see [`KnownStatistics`]).
fn known_statistics(file_schema: &SchemaRef, rows: &KnownFiles) -> Arc<FileStatisticsCache> {
    let fingerprint = Arc::new(SchemaFingerprint::from_schema(file_schema));
    let mut by_path = std::collections::HashMap::new();
    for known in rows.values() {
        let Some(meta) = known.object_meta().cloned() else {
            continue;
        };
        let Some(total) = known
            .row_counts
            .iter()
            .try_fold(0usize, |n, &r| n.checked_add(usize::try_from(r).ok()?))
        else {
            continue;
        };
        let mut statistics = Statistics::new_unknown(file_schema);
        statistics.num_rows = Precision::Exact(total);
        let entry = CachedFileMetadata::new(
            meta.clone(),
            Arc::clone(&fingerprint),
            Arc::new(statistics),
            None,
        );
        by_path.insert(meta.location, entry);
    }
    Arc::new(KnownStatistics(by_path))
}

/// Row groups in every file the table lists, those a scan never opens included (footers
/// through DataFusion's metadata cache, so a scan's footers are not read twice).
pub async fn table_row_groups(state: &dyn Session, table: &ListingTable) -> Result<usize> {
    count_listed(state, table, &Default::default(), DEFAULT_FILE_CONCURRENCY).await
}

/// [`table_row_groups`], taking the count of a file in `known` (object path -> size, row
/// groups) from there while its size is the same; the other footers read `concurrency` at a
/// time.
async fn count_listed(
    state: &dyn Session,
    table: &ListingTable,
    known: &Dropped,
    concurrency: usize,
) -> Result<usize> {
    let cache = state.runtime_env().cache_manager.get_file_metadata_cache();
    let ext = &table.options().file_extension;
    let mut total = 0;
    for url in table.table_paths() {
        let (store, files) = list_files(state, url, ext).await?;
        // The footers not known yet, read as many at a time as the scan reads them.
        let mut unknown = Vec::new();
        for meta in files {
            match known.get(meta.location.as_ref()) {
                Some(&(size, n)) if size == meta.size => total += n,
                _ => unknown.push(meta),
            }
        }
        let counts: Vec<Result<usize>> = futures::stream::iter(unknown)
            .map(|meta| {
                let (store, cache) = (&store, &cache);
                async move {
                    let metadata = DFParquetMetadata::new(store.as_ref(), &meta)
                        .with_file_metadata_cache(Some(Arc::clone(cache)))
                        .fetch_metadata()
                        .await?;
                    Ok(metadata.num_row_groups())
                }
            })
            .buffered(concurrency.max(1))
            .collect()
            .await;
        for n in counts {
            total += n?;
        }
    }
    Ok(total)
}

/// The index root of the table at `path` (`sbbf_index::Root::open_table`: a local folder,
/// or a prefix read through the session's store for it), when there can be one.
fn index_root_at(state: &dyn Session, path: &str) -> Option<sbbf_index::Root> {
    match sbbf_index::Root::open_table(path).ok()? {
        Some(sbbf_index::Root::Store { url, prefix, .. }) => {
            let store = state
                .runtime_env()
                .object_store(ListingTableUrl::parse(&url).ok()?)
                .ok()?;
            Some(sbbf_index::Root::from_store(&url, store, prefix))
        }
        local => local,
    }
}

/// Whether `path` (parsed as `url`) may name a table root: a folder or prefix, an Iceberg
/// metadata file, a store's path whose last name has no extension (`s3://b/t`).
fn may_be_a_table(path: &str, url: &ListingTableUrl) -> bool {
    let last = path.rsplit('/').next().unwrap_or_default();
    url.is_collection()
        || path.ends_with(".metadata.json")
        || (sbbf_parquet::source::object::is_remote_url(path) && !last.contains('.'))
}
