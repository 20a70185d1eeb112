//! Join filters: the build-side keys a hash join pushes into our scan while the query runs,
//! tested against each file's Bloom filters when the file is opened.
//!
//! DataFusion's physical optimizer pushes a hash join's `DynamicFilterPhysicalExpr` into the
//! probe-side scan's file source (`FileSource::try_pushdown_filters`). Our table wraps
//! DataFusion's `ParquetSource` in [`SbbfSource`], which forwards everything to it and adds one
//! step in front of each file's planner: the dynamic conjuncts of the source's predicate, as
//! they stand, are translated ([`crate::dynamic_predicate`]), the file's filters are probed
//! for them (block-granular reads, one wave per file), and the row groups they rule out are
//! skipped in the file's `ParquetAccessPlan` before DataFusion's planner reads any data page.
//!
//! # When the keys are there, and why the scan never waits
//!
//! A `HashJoinStream` (DataFusion 55) collects its build side, reports it to the shared
//! accumulator, and waits until every partition has reported and the filter is final
//! (`WaitPartitionBoundsReport`) before it polls its probe side for the first time; an empty
//! build side does not poll it at all. So when a probe-side scan opens a file, the join's
//! filter is already complete: no wait is needed. Waiting at open time would be worse than
//! useless: a TopK (`ORDER BY .. LIMIT`) or aggregate dynamic filter looks the same before
//! its first update (`lit(true)` over the same columns) and completes only when this very
//! scan has finished, so a scan that waited for it would deadlock. The scan therefore uses
//! each dynamic filter as it stands (any snapshot is sound: DataFusion's contract, and what
//! its own opener relies on), and counts the files opened while one was still incomplete
//! ([`crate::metric::DYNAMIC_INCOMPLETE`]), so a change in DataFusion's scheduling shows.
//!
//! # What DataFusion's own planner sees
//!
//! DataFusion's file planner simplifies and rewrites the scan's predicate once per file; with
//! the key set limits raised ([`crate::with_join_key_sets`]) a join filter can hold 20,000
//! keys, which would cost more per file than anything DataFusion does with them (its
//! statistics pruning skips such lists). So its planner gets each join filter wrapped in
//! `SmallSets`: rows are still decided by the whole filter, but the snapshot it prunes with
//! leaves out sets of more than 150 keys (DataFusion's own default), which our filters test.

use crate::expr::{dynamic_filters, dynamic_predicate};
use crate::file_step::{file_plan, footer, policy_for, Metrics};
use crate::index::{ask, Asked, Dropped};
use crate::lake::Columns;
use crate::metric;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::datasource::listing::{ListingTableUrl, PartitionedFile};
use datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
use datafusion::datasource::physical_plan::ParquetSource;
use datafusion::datasource::physical_plan::{FileScanConfig, FileSource};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::logical_expr::ColumnarValue;
use datafusion::parquet::basic::{Encoding, PageType, Type as PhysicalType};
use datafusion::parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData, RowGroupMetaData};
use datafusion::physical_expr::expressions::{lit, DynamicFilterPhysicalExpr, InListExpr};
use datafusion::physical_expr::projection::ProjectionExprs;
use datafusion::physical_expr::utils::{collect_columns, conjunction, split_conjunction};
use datafusion::physical_expr::{EquivalenceProperties, LexOrdering, PhysicalExpr};
use datafusion::physical_expr_common::physical_expr::snapshot_physical_expr;
use datafusion::physical_expr_common::sort_expr::PhysicalSortExpr;
use datafusion::physical_plan::filter_pushdown::{FilterPushdownPropagation, PushedDown};
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, Gauge, MetricBuilder};
use datafusion::physical_plan::{DisplayFormatType, SortOrderPushdownResult};
use datafusion_datasource::file_stream::FileOpener;
use datafusion_datasource::morsel::{MorselPlan, MorselPlanner, Morselizer};
use futures::FutureExt;
use object_store::ObjectStore;
use sbbf_parquet::prune::{Predicate, PreparedPredicate};
use std::fmt;
use std::sync::{Arc, Mutex};

/// DataFusion's `ParquetSource` with our join-filter pruning in front of each file's planner
/// (see the module notes). Every other behaviour is the wrapped source's.
pub struct SbbfSource {
    inner: Arc<dyn FileSource>,
    cache: Arc<FileMetadataCache>,
    /// The table's index, asked once per join-filter update for the files the keys rule out.
    index: Option<Arc<JoinIndex>>,
    /// The join filters translated and their key sets hashed, shared by every partition of
    /// the scan: a big key set is hashed once per update, not once per partition or file.
    translated: Arc<Mutex<Option<Translated>>>,
    /// How a lake table's files name its columns, when not as the table does.
    columns: Option<Arc<Columns>>,
}

impl SbbfSource {
    /// Wraps `inner` (a `ParquetSource`); footers are looked up in `cache` (DataFusion's
    /// file metadata cache, so the scan reads each footer once).
    pub fn new(inner: Arc<dyn FileSource>, cache: Arc<FileMetadataCache>) -> SbbfSource {
        SbbfSource {
            inner,
            cache,
            index: None,
            translated: Arc::default(),
            columns: None,
        }
    }

    /// The same source for a lake table whose files name its columns as `columns` says:
    /// a file whose fields the join's columns would be looked up in by another name is
    /// left to the scan, its filters unread.
    pub(crate) fn with_columns(mut self, columns: Option<Arc<Columns>>) -> Self {
        self.columns = columns;
        self
    }

    /// The same source, asking the table's index (`root`, the table at `table`) which files a
    /// join's keys rule out: those are dropped before their filters are read.
    pub(crate) fn with_index(
        mut self,
        root: sbbf_index::Root,
        listed: Option<Arc<Vec<sbbf_index::Listed>>>,
        table: ListingTableUrl,
    ) -> Self {
        self.index = Some(Arc::new(JoinIndex {
            root,
            listed,
            table,
        }));
        self
    }

    /// The names of the table's columns the scan reads: its projection's and those `filter`
    /// tests; `None` without a projection (every column).
    fn columns_read(
        &self,
        filter: Option<&Arc<dyn PhysicalExpr>>,
    ) -> Option<std::collections::HashSet<String>> {
        let projection = self.inner.projection()?;
        let schema = self.inner.table_schema().table_schema();
        let mut indices = projection.column_indices();
        if let Some(f) = filter {
            indices.extend(collect_columns(f).iter().map(|c| c.index()));
        }
        Some(
            indices
                .into_iter()
                .filter_map(|i| schema.fields().get(i).map(|f| f.name().clone()))
                .collect(),
        )
    }

    /// The wrapped source.
    pub fn inner(&self) -> &Arc<dyn FileSource> {
        &self.inner
    }

    fn wrap(&self, inner: Arc<dyn FileSource>) -> Arc<dyn FileSource> {
        // The translation is shared with the new source: DataFusion derives one per partition
        // (`with_batch_size`) and after each pushdown, and a translation is only reused for
        // the very same join filters (held, compared by identity) at the same generations.
        Arc::new(SbbfSource {
            inner,
            cache: Arc::clone(&self.cache),
            index: self.index.clone(),
            translated: Arc::clone(&self.translated),
            columns: self.columns.clone(),
        })
    }
}

impl fmt::Debug for SbbfSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SbbfSource").finish_non_exhaustive()
    }
}

impl FileSource for SbbfSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        self.inner
            .create_file_opener(object_store, base_config, partition)
    }

    fn create_morselizer(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Box<dyn Morselizer>> {
        let filter = self.inner.filter();
        let dynamic = filter.as_ref().map(dynamic_filters).unwrap_or_default();
        if dynamic.is_empty() {
            // No join filter reaches this scan: DataFusion's planner as it is.
            return self
                .inner
                .create_morselizer(object_store, base_config, partition);
        }
        // DataFusion's planner gets the join filters with their big key sets left out (see
        // `SmallSets`): our filters test those; it keeps the bounds and the small sets.
        let inner = match (self.inner.downcast_ref::<ParquetSource>(), &filter) {
            (Some(parquet), Some(filter)) => {
                let trimmed = conjunction(split_conjunction(filter).into_iter().map(|c| {
                    if dynamic.iter().any(|d| Arc::ptr_eq(d, c)) {
                        Arc::new(SmallSets::new(Arc::clone(c))) as Arc<dyn PhysicalExpr>
                    } else {
                        Arc::clone(c)
                    }
                }));
                parquet.with_predicate(trimmed).create_morselizer(
                    Arc::clone(&object_store),
                    base_config,
                    partition,
                )?
            }
            _ => self
                .inner
                .create_morselizer(Arc::clone(&object_store), base_config, partition)?,
        };
        let set = self.inner.metrics();
        Ok(Box::new(SbbfMorselizer {
            inner: Arc::from(inner),
            shared: Arc::new(Shared {
                dynamic,
                schema: Arc::clone(self.inner.table_schema().file_schema()),
                store: object_store,
                policy: policy_for(&base_config.object_store_url),
                cache: Arc::clone(&self.cache),
                metrics: Metrics::new_in(set),
                join: JoinMetrics::new(set),
                index: self.index.clone(),
                translated: Arc::clone(&self.translated),
                columns: self.columns.clone(),
                read: self.columns_read(filter.as_ref()),
            }),
        }))
    }

    fn table_schema(&self) -> &TableSchema {
        self.inner.table_schema()
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        self.wrap(self.inner.with_batch_size(batch_size))
    }

    fn filter(&self) -> Option<Arc<dyn PhysicalExpr>> {
        self.inner.filter()
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        self.inner.projection()
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        self.inner.metrics()
    }

    fn file_type(&self) -> &str {
        self.inner.file_type()
    }

    fn fmt_extra(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.fmt_extra(t, f)
    }

    fn supports_repartitioning(&self) -> bool {
        self.inner.supports_repartitioning()
    }

    fn repartitioned(
        &self,
        target_partitions: usize,
        repartition_file_min_size: usize,
        output_ordering: Option<LexOrdering>,
        config: &FileScanConfig,
    ) -> Result<Option<FileScanConfig>> {
        self.inner.repartitioned(
            target_partitions,
            repartition_file_min_size,
            output_ordering,
            config,
        )
    }

    fn try_pushdown_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn FileSource>>> {
        // A filter on a nested column whose files may name its inner fields otherwise is
        // kept above the scan: DataFusion's row filter cannot read through the relabelling
        // (`get_field` over it) and would leave that part out, keeping rows it should drop.
        let held: Vec<bool> = filters
            .iter()
            .map(|f| self.columns.as_ref().is_some_and(|c| c.reads_relabelled(f)))
            .collect();
        let down: Vec<Arc<dyn PhysicalExpr>> = filters
            .iter()
            .zip(&held)
            .filter(|(_, held)| !**held)
            .map(|(f, _)| Arc::clone(f))
            .collect();
        let r = self.inner.try_pushdown_filters(down, config)?;
        let mut answers = r.filters.into_iter();
        let filters = held
            .iter()
            .map(|held| match held {
                true => PushedDown::No,
                false => answers.next().unwrap_or(PushedDown::No),
            })
            .collect();
        Ok(FilterPushdownPropagation {
            filters,
            updated_node: r.updated_node.map(|n| self.wrap(n)),
        })
    }

    fn try_pushdown_sort(
        &self,
        order: &[PhysicalSortExpr],
        eq_properties: &EquivalenceProperties,
    ) -> Result<SortOrderPushdownResult<Arc<dyn FileSource>>> {
        Ok(match self.inner.try_pushdown_sort(order, eq_properties)? {
            SortOrderPushdownResult::Exact { inner } => SortOrderPushdownResult::Exact {
                inner: self.wrap(inner),
            },
            SortOrderPushdownResult::Inexact { inner } => SortOrderPushdownResult::Inexact {
                inner: self.wrap(inner),
            },
            SortOrderPushdownResult::Unsupported => SortOrderPushdownResult::Unsupported,
        })
    }

    fn reorder_files(&self, files: Vec<PartitionedFile>) -> Vec<PartitionedFile> {
        self.inner.reorder_files(files)
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> Result<Option<Arc<dyn FileSource>>> {
        Ok(self
            .inner
            .try_pushdown_projection(projection)?
            .map(|n| self.wrap(n)))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        self.inner.apply_expressions(f)
    }
}

/// Key sets up to this size stay in what DataFusion's own planner sees of a join filter
/// (DataFusion's default `hash_join_inlist_pushdown_max_distinct_values`).
const SMALL_SET: usize = 150;

/// A join filter as DataFusion's file planner should see it: rows are decided by the filter
/// itself (`evaluate`), but its snapshot (what the planner prunes and simplifies with, once
/// per file) leaves out `IN` sets of more than [`SMALL_SET`] values, as if they were `true`.
/// Weaker, so sound; and the planner no longer rewrites a set of a million literals for every
/// file, which costs more than its statistics pruning can gain from it (it skips such lists)
/// while our filters test the whole set.
///
/// The trimmed snapshot is made once per generation of the join filter and form of its
/// children (DataFusion derives a copy of the predicate for every file, with its columns
/// mapped to the file's schema, and a snapshot of a derived join filter rewrites its whole key
/// set: 100,000 keys over 200 files cost seconds), and shared by every copy.
#[derive(Debug)]
struct SmallSets(Arc<dyn PhysicalExpr>, Arc<Trimmed>);

/// Trimmed snapshots already made: (generation, children, snapshot); the newest few.
#[derive(Debug, Default)]
struct Trimmed(Mutex<Vec<TrimmedSnapshot>>);

type TrimmedSnapshot = (u64, Vec<Arc<dyn PhysicalExpr>>, Arc<dyn PhysicalExpr>);

/// Trimmed snapshots kept per join filter: one per form of its children a scan uses (files of
/// one schema share one).
const TRIMMED_KEPT: usize = 8;

impl SmallSets {
    fn new(filter: Arc<dyn PhysicalExpr>) -> SmallSets {
        SmallSets(filter, Arc::default())
    }

    fn trimmed(&self) -> Result<Arc<dyn PhysicalExpr>> {
        let now = snapshot_physical_expr(Arc::clone(&self.0))?;
        let trimmed = now.transform_up(|e| {
            Ok(match e.downcast_ref::<InListExpr>() {
                Some(list) if list.len() > SMALL_SET => Transformed::yes(lit(true)),
                _ => Transformed::no(e),
            })
        })?;
        Ok(trimmed.data)
    }
}

impl PartialEq for SmallSets {
    fn eq(&self, other: &SmallSets) -> bool {
        self.0.as_ref() == other.0.as_ref()
    }
}

impl Eq for SmallSets {}

impl std::hash::Hash for SmallSets {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl fmt::Display for SmallSets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl PhysicalExpr for SmallSets {
    fn data_type(&self, input_schema: &Schema) -> Result<DataType> {
        self.0.data_type(input_schema)
    }

    fn nullable(&self, input_schema: &Schema) -> Result<bool> {
        self.0.nullable(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        self.0.evaluate(batch)
    }

    // The join filter's own children (its columns), not the filter: a traversal that
    // snapshots every node bottom-up (`snapshot_physical_expr`) would otherwise replace the
    // filter by its whole key set before this node is asked for its trimmed snapshot.
    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        self.0.children()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let filter = Arc::clone(&self.0).with_new_children(children)?;
        Ok(Arc::new(SmallSets(filter, Arc::clone(&self.1))))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_sql(f)
    }

    fn snapshot(&self) -> Result<Option<Arc<dyn PhysicalExpr>>> {
        if self.0.downcast_ref::<DynamicFilterPhysicalExpr>().is_none() {
            // Only a join filter's state is told by its generation.
            return Ok(Some(self.trimmed()?));
        }
        let generation = self.0.snapshot_generation();
        let children: Vec<Arc<dyn PhysicalExpr>> = self.0.children().into_iter().cloned().collect();
        // Same generation and children, same snapshot: the filter's state is what the
        // generation counts, the children are all a derived copy changes.
        let same = |(g, c, _): &&TrimmedSnapshot| {
            *g == generation
                && c.len() == children.len()
                && c.iter()
                    .zip(&children)
                    .all(|(a, b)| a.as_ref() == b.as_ref())
        };
        if let Some((_, _, t)) = self
            .1
             .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(same)
        {
            return Ok(Some(Arc::clone(t)));
        }
        let trimmed = self.trimmed()?;
        let mut kept = self.1 .0.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= TRIMMED_KEPT {
            kept.remove(0);
        }
        kept.push((generation, children, Arc::clone(&trimmed)));
        Ok(Some(trimmed))
    }

    fn snapshot_generation(&self) -> u64 {
        self.0.snapshot_generation()
    }
}

/// Counters of the join-filter step.
struct JoinMetrics {
    /// Files whose filters were probed for a join filter.
    files: Count,
    /// Row groups that step skipped (also counted in [`metric::PRUNED`]).
    pruned: Count,
    /// Files opened while a dynamic filter was still incomplete.
    incomplete: Count,
    /// Files whose filters were left unread: too loose for the keys to pay for their reading
    /// ([`metric::JOIN_FILES_UNPROBED`]).
    unprobed: Count,
    /// The most keys one join leaf tested (the K of `1 - (1 - p)^K`).
    keys: Gauge,
    /// Key sets coerced and hashed ([`metric::KEY_SETS_HASHED`]).
    hashed: Count,
    /// Files the table's index ruled out for the keys ([`metric::JOIN_FILES_PRUNED_INDEX`]).
    files_index: Count,
}

impl JoinMetrics {
    fn new(set: &ExecutionPlanMetricsSet) -> JoinMetrics {
        let counter = |name: &'static str| MetricBuilder::new(set).global_counter(name);
        JoinMetrics {
            files: counter(metric::DYNAMIC_FILES),
            pruned: counter(metric::PRUNED_DYNAMIC),
            incomplete: counter(metric::DYNAMIC_INCOMPLETE),
            unprobed: counter(metric::JOIN_FILES_UNPROBED),
            keys: MetricBuilder::new(set).global_gauge(metric::JOIN_KEYS),
            hashed: counter(metric::KEY_SETS_HASHED),
            files_index: counter(metric::JOIN_FILES_PRUNED_INDEX),
        }
    }
}

/// A translated predicate (`None`: nothing to test) and what it was made from: the dynamic
/// filters (held, so no other filter can take their address) and their generations.
type Translated = (Vec<(Arc<dyn PhysicalExpr>, u64)>, Option<Arc<Prepared>>);

/// A prepared join predicate and how many of its hashings are already counted.
struct Prepared {
    predicate: PreparedPredicate,
    counted: std::sync::atomic::AtomicUsize,
    /// The files the table's index rules out for it: asked once, by the first file opened
    /// (the others wait for that answer rather than ask again); `Some(None)`: nothing.
    dropped: futures::lock::Mutex<Option<Option<Arc<Dropped>>>>,
}

/// A table's index, for the join filters.
#[derive(Debug)]
pub(crate) struct JoinIndex {
    root: sbbf_index::Root,
    /// The table's files as its listing found them, when it keeps them (see `crate::index::ask`).
    listed: Option<Arc<Vec<sbbf_index::Listed>>>,
    table: ListingTableUrl,
}

impl Prepared {
    /// Hashings not counted yet (exact when files of several partitions finish together).
    fn newly_hashed(&self) -> usize {
        let now = self.predicate.key_sets_hashed();
        let before = self
            .counted
            .fetch_max(now, std::sync::atomic::Ordering::Relaxed);
        now.saturating_sub(before)
    }
}

/// What every file planner of one scan partition shares.
struct Shared {
    dynamic: Vec<Arc<dyn PhysicalExpr>>,
    schema: SchemaRef,
    store: Arc<dyn ObjectStore>,
    /// How the store's filter bytes are read ([`policy_for`]).
    policy: sbbf_parquet::IoPolicy,
    cache: Arc<FileMetadataCache>,
    metrics: Metrics,
    join: JoinMetrics,
    index: Option<Arc<JoinIndex>>,
    /// The translated predicate for the dynamic filters' generations it was made from: the
    /// key set is translated and hashed once per update, not once per file (shared by the
    /// scan's partitions, [`SbbfSource::translated`]).
    translated: Arc<Mutex<Option<Translated>>>,
    columns: Option<Arc<Columns>>,
    /// The top-level columns the scan reads (its projection's and its filter's), by name;
    /// `None`: all of them.
    read: Option<std::collections::HashSet<String>>,
}

impl Shared {
    /// The predicate of the join filters as they stand now.
    fn predicate(&self) -> Option<Arc<Prepared>> {
        let generations: Vec<(Arc<dyn PhysicalExpr>, u64)> = self
            .dynamic
            .iter()
            .map(|d| (Arc::clone(d), d.snapshot_generation()))
            .collect();
        let same = |made: &[(Arc<dyn PhysicalExpr>, u64)]| {
            made.len() == generations.len()
                && made
                    .iter()
                    .zip(&generations)
                    .all(|((a, g), (b, h))| Arc::ptr_eq(a, b) && g == h)
        };
        let mut slot = self.translated.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((made, p)) = slot.as_ref() {
            if same(made) {
                return p.clone();
            }
        }
        let p = self
            .dynamic
            .iter()
            .map(|d| dynamic_predicate(d, &self.schema))
            .collect::<Vec<_>>();
        let parts: Vec<Predicate> = p.into_iter().flatten().collect();
        let p = match parts.len() {
            0 => None,
            1 => parts.into_iter().next(),
            _ => Some(Predicate::And(parts)),
        };
        if let Some(p) = &p {
            self.join.keys.set_max(most_keys(p));
        }
        let p = p.map(|p| {
            Arc::new(Prepared {
                predicate: PreparedPredicate::new(p),
                counted: Default::default(),
                dropped: Default::default(),
            })
        });
        *slot = Some((generations, p.clone()));
        p
    }

    fn any_incomplete(&self) -> bool {
        self.dynamic.iter().any(|d| {
            d.downcast_ref::<DynamicFilterPhysicalExpr>()
                .is_some_and(|d| d.wait_complete().now_or_never().is_none())
        })
    }

    /// The row groups of `file` when the table's index rules all of them out for `pred` (the
    /// file as the index recorded it: same path and size, and unchanged since, see
    /// `crate::index::ask`); `None` on any doubt.
    async fn ruled_out_by_index(&self, pred: &Prepared, file: &PartitionedFile) -> Option<usize> {
        let ix = self.index.as_ref()?;
        let dropped = {
            let mut slot = pred.dropped.lock().await;
            if slot.is_none() {
                *slot = Some(
                    match ask(
                        &ix.root,
                        ix.listed.as_deref().map(|l| l.as_slice()),
                        &ix.table,
                        pred.predicate.predicate(),
                    )
                    .await
                    {
                        Asked::Drop(d) => Some(Arc::new(d)),
                        Asked::Nothing => None,
                    },
                );
            }
            slot.clone().flatten()?
        };
        let meta = &file.object_meta;
        match dropped.get(meta.location.as_ref()) {
            Some(&(size, n)) if size == meta.size => Some(n),
            _ => None,
        }
    }

    /// `file` with the row groups the join filters rule out skipped in its access plan, or
    /// `None` when the table's index or the file's own filters rule all of it out (nothing
    /// more of it is read).
    async fn prune(&self, mut file: PartitionedFile) -> Option<PartitionedFile> {
        if self.any_incomplete() {
            self.join.incomplete.add(1);
        }
        // With an index, the index is asked first: it may drop the file, its filters unread.
        if self.index.is_some() {
            let Some(pred) = self.predicate() else {
                return Some(file);
            };
            if let Some(n) = self.ruled_out_by_index(&pred, &file).await {
                self.join.files.add(1);
                // Every row group of it, counted once for a file DataFusion split into ranges.
                if file.range.as_ref().is_none_or(|r| r.start == 0) {
                    self.metrics.pruned.add(n);
                    self.join.pruned.add(n);
                    self.join.files_index.add(1);
                }
                return None;
            }
        }
        // The footer comes from the metadata cache DataFusion's planning filled.
        let Ok(metadata) = footer(&self.store, &self.cache, &file).await else {
            self.metrics.file_errors.add(1);
            return Some(file);
        };
        // A file without one Bloom filter (a dimension table, say, probed with a fact
        // table's keys) has nothing to test: the key set is not even translated for it.
        let any_filter = metadata.row_groups().iter().any(|g| {
            g.columns()
                .iter()
                .any(|c| c.bloom_filter_offset().is_some())
        });
        if !any_filter {
            return Some(file);
        }
        let Some(pred) = self.predicate() else {
            return Some(file);
        };
        // Before any filter byte is read: whether its filters could rule out any row group
        // for this many keys. Where each would pass nearly every row group, reading them costs
        // bytes and time that no skipped row group pays back.
        if !worth_probing(&metadata, pred.predicate.predicate(), self.read.as_ref()) {
            // Counted once for a file DataFusion split into byte ranges.
            if file.range.as_ref().is_none_or(|r| r.start == 0) {
                self.join.unprobed.add(1);
            }
            return Some(file);
        }
        self.join.files.add(1);
        let before = self.metrics.pruned.value();
        let plan = file_plan(
            &self.store,
            self.policy,
            metadata,
            &file,
            &pred.predicate,
            &self.metrics,
            self.columns.as_deref(),
        )
        .await;
        self.join
            .pruned
            .add(self.metrics.pruned.value().saturating_sub(before));
        self.join.hashed.add(pred.newly_hashed());
        match plan {
            // Every row group of the file (of its byte range, the others are left scanned)
            // ruled out: DataFusion's planner is not even asked, which spares its per-file
            // work (the predicate rewritten for the file, its pruning set up) on files that
            // give no rows: on 200 one-row-group files with 3 keys, 197 of them.
            Some(plan) if plan.row_group_index_iter().next().is_none() => None,
            Some(plan) => {
                file.extensions.insert::<ParquetAccessPlan>(plan);
                Some(file)
            }
            None => Some(file),
        }
    }
}

/// Up to this many keys a file is always probed: DataFusion's own default pushes that many
/// and tests its Bloom filters with them, so fewer row groups than it reads are never left
/// to chance.
const ALWAYS_PROBED_KEYS: usize = 150;

/// What one read request costs, counted in bytes: about what a read of this size takes
/// beside the request's own latency on an object store, where a request is tens of
/// milliseconds. Small files are then judged by their requests, large ones by their bytes.
const READ_REQUEST_BYTES: u64 = 64 * 1024;

/// Whether probing a file with footer `metadata` for `p` is expected to pay, judged before a
/// byte of its filters is read: what it is expected to spare (each row group's chance of
/// being ruled out times what the scan reads of it: a request and the chunks of the columns
/// in `read`, all of them when `None` or when none is found by name) against what reading
/// the filters costs (a request and their bytes; [`READ_REQUEST_BYTES`]). A row group without the keys passes a set of K keys with probability
/// `1 - (1 - fpp)^K`, each filter's rate estimated from its size and the chunk's values (an
/// upper bound on its distinct values, so the rate is rather overestimated, which favours
/// probing). `true` on any doubt (a filter of unknown size, a column not found by name), and
/// always up to [`ALWAYS_PROBED_KEYS`] keys.
fn worth_probing(
    metadata: &ParquetMetaData,
    p: &Predicate,
    read: Option<&std::collections::HashSet<String>>,
) -> bool {
    if most_keys(p) <= ALWAYS_PROBED_KEYS {
        return true;
    }
    // A read costs its bytes and a request: the filters are read together, a row group's
    // chunks in a read of their own.
    let request = READ_REQUEST_BYTES as f64;
    let mut spared = 0.0;
    let mut cost = request;
    for rg in metadata.row_groups() {
        let Some(survives) = survival(rg, p) else {
            return true;
        };
        spared += (1.0 - survives) * (request + scanned_bytes(rg, read) as f64);
        cost += filter_bytes(rg, p) as f64;
    }
    spared > cost
}

/// The bytes a scan reading the columns in `read` (top-level names; all when `None`) reads of
/// row group `rg`: their chunks' compressed sizes, or the whole row group's when none is
/// found by name.
fn scanned_bytes(rg: &RowGroupMetaData, read: Option<&std::collections::HashSet<String>>) -> u64 {
    let whole = u64::try_from(rg.compressed_size()).unwrap_or(0);
    let Some(read) = read else {
        return whole;
    };
    let mut found = false;
    let mut bytes = 0u64;
    for c in rg.columns() {
        let top = c.column_path().parts().first().map(String::as_str);
        if top.is_some_and(|t| read.contains(t)) {
            found = true;
            bytes = bytes.saturating_add(u64::try_from(c.compressed_size()).unwrap_or(0));
        }
    }
    if found {
        bytes
    } else {
        whole
    }
}

/// The bytes of the filters a probe of `p` reads in row group `rg` (each column's once).
fn filter_bytes(rg: &RowGroupMetaData, p: &Predicate) -> u64 {
    fn columns<'a>(p: &'a Predicate, out: &mut Vec<&'a str>) {
        match p {
            Predicate::Eq(c, _) | Predicate::In(c, _) => out.push(c),
            Predicate::And(ps) | Predicate::Or(ps) => ps.iter().for_each(|p| columns(p, out)),
        }
    }
    let mut names = Vec::new();
    columns(p, &mut names);
    names.sort_unstable();
    names.dedup();
    rg.columns()
        .iter()
        .filter(|c| names.contains(&c.column_path().string().as_str()))
        .filter_map(|c| c.bloom_filter_length())
        .map(|l| u64::try_from(l).unwrap_or(0))
        .sum()
}

/// The estimated probability that a row group holding none of `p`'s keys passes its filters
/// for `p`; `None` when it cannot be estimated.
fn survival(rg: &RowGroupMetaData, p: &Predicate) -> Option<f64> {
    let leaf = |column: &str, keys: usize| -> Option<f64> {
        let chunk = rg
            .columns()
            .iter()
            .find(|c| c.column_path().string() == column)?;
        let Some(len) = chunk.bloom_filter_length() else {
            // No filter: nothing to rule out; an offset without a length: size unknown.
            return chunk.bloom_filter_offset().is_none().then_some(1.0);
        };
        // The bitset, less a header of a few bytes.
        let bits = (u64::try_from(len).ok()?.saturating_sub(16)).max(32) * 8;
        let values = distinct_values(chunk);
        let fpp = sbbf::sizing::sbbf_fpp(bits as f64 / values as f64);
        Some(1.0 - (1.0 - fpp).powi(i32::try_from(keys).unwrap_or(i32::MAX)))
    };
    match p {
        Predicate::Eq(c, _) => leaf(c, 1),
        Predicate::In(c, v) => leaf(c, v.len()),
        Predicate::And(ps) => ps.iter().map(|p| survival(rg, p)).product(),
        Predicate::Or(ps) => ps
            .iter()
            .map(|p| survival(rg, p).map(|s| 1.0 - s))
            .product::<Option<f64>>()
            .map(|none| 1.0 - none),
    }
}

/// An estimate of the distinct values of a column chunk, from its footer alone: the distinct
/// count its statistics give; else, where every data page is dictionary encoded, the entries
/// its dictionary page can hold (its bytes over the width of one entry: a byte array's is its
/// 4-byte length and the mean of its minimum's and maximum's lengths; a compressed dictionary
/// holds more, so the filter then looks tighter than it is, and is probed); else its value
/// count (a writer that gave up on its dictionary kept only some values in it).
fn distinct_values(chunk: &ColumnChunkMetaData) -> u64 {
    let values = u64::try_from(chunk.num_values()).unwrap_or(0).max(1);
    let statistics = chunk.statistics();
    if let Some(n) = statistics.and_then(|s| s.distinct_count_opt()) {
        return n.clamp(1, values);
    }
    let width = match chunk.column_type() {
        PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
        PhysicalType::INT96 => 12,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => u64::try_from(chunk.column_descr().type_length())
            .unwrap_or(1)
            .max(1),
        PhysicalType::BYTE_ARRAY => {
            let len = |b: Option<&[u8]>| b.map_or(0, <[u8]>::len) as u64;
            let (min, max) =
                statistics.map_or((0, 0), |s| (len(s.min_bytes_opt()), len(s.max_bytes_opt())));
            4 + (min + max) / 2
        }
        _ => 4,
    };
    let dictionary = chunk
        .dictionary_page_offset()
        .filter(|_| all_dictionary_encoded(chunk))
        .and_then(|d| chunk.data_page_offset().checked_sub(d))
        .and_then(|b| u64::try_from(b).ok())
        .filter(|b| *b > 0);
    match dictionary {
        Some(bytes) => (bytes / width).clamp(1, values),
        None => values,
    }
}

/// Whether the footer says every data page of the chunk is dictionary encoded (the page
/// encoding statistics, whole or as the mask the reader keeps of them); `false` when it does
/// not say.
fn all_dictionary_encoded(chunk: &ColumnChunkMetaData) -> bool {
    let dictionary =
        |e: Encoding| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY);
    if let Some(mask) = chunk.page_encoding_stats_mask() {
        return mask.is_only(Encoding::PLAIN_DICTIONARY) || mask.is_only(Encoding::RLE_DICTIONARY);
    }
    chunk.page_encoding_stats().is_some_and(|stats| {
        stats
            .iter()
            .filter(|s| matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2))
            .all(|s| dictionary(s.encoding))
    })
}

/// The most literals one leaf of `p` holds.
fn most_keys(p: &Predicate) -> usize {
    match p {
        Predicate::Eq(..) => 1,
        Predicate::In(_, v) => v.len(),
        Predicate::And(ps) | Predicate::Or(ps) => ps.iter().map(most_keys).max().unwrap_or(0),
    }
}

struct SbbfMorselizer {
    inner: Arc<dyn Morselizer>,
    shared: Arc<Shared>,
}

impl fmt::Debug for SbbfMorselizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SbbfMorselizer")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl Morselizer for SbbfMorselizer {
    fn plan_file(&self, file: PartitionedFile) -> Result<Box<dyn MorselPlanner>> {
        Ok(Box::new(SbbfPlanner {
            inner: Arc::clone(&self.inner),
            shared: Arc::clone(&self.shared),
            file,
        }))
    }
}

/// The first step of a file's plan: probe the join filters (I/O, so in the pending future),
/// then hand the file, its access plan narrowed, to DataFusion's planner.
struct SbbfPlanner {
    inner: Arc<dyn Morselizer>,
    shared: Arc<Shared>,
    file: PartitionedFile,
}

impl fmt::Debug for SbbfPlanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SbbfPlanner")
            .field("file", &self.file.object_meta.location)
            .finish_non_exhaustive()
    }
}

/// The plan of a file the table's index ruled out: no morsel, nothing read.
#[derive(Debug)]
struct NothingToRead;

impl MorselPlanner for NothingToRead {
    fn plan(self: Box<Self>) -> Result<Option<MorselPlan>> {
        Ok(None)
    }
}

impl MorselPlanner for SbbfPlanner {
    fn plan(self: Box<Self>) -> Result<Option<MorselPlan>> {
        let SbbfPlanner {
            inner,
            shared,
            file,
        } = *self;
        Ok(Some(MorselPlan::new().with_pending_planner(async move {
            match shared.prune(file).await {
                Some(file) => inner.plan_file(file),
                None => Ok(Box::new(NothingToRead) as Box<dyn MorselPlanner>),
            }
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;
    use datafusion::physical_expr::expressions::{col, in_list};

    /// DataFusion snapshots a predicate bottom-up for every file, on copies derived for the
    /// file's schema: the join filter's trimmed snapshot is made once and shared, and its big
    /// key set is left out of it.
    #[test]
    fn a_trimmed_snapshot_is_made_once_for_every_copy() {
        let schema = Schema::new(vec![Field::new("k", DataType::Int64, false)]);
        let k = col("k", &schema).unwrap();
        let keys = (0..1000).map(|i| lit(i as i64)).collect();
        let big = in_list(Arc::clone(&k), keys, &false, &schema).unwrap();
        let filter = Arc::new(DynamicFilterPhysicalExpr::new(
            vec![Arc::clone(&k)],
            lit(true),
        ));
        filter.update(big).unwrap();
        let small = Arc::new(SmallSets::new(filter)) as Arc<dyn PhysicalExpr>;
        for _ in 0..5 {
            // A copy for another file of the same schema, as DataFusion's planner makes.
            let copy = Arc::clone(&small)
                .with_new_children(vec![Arc::clone(&k)])
                .unwrap();
            let snap = snapshot_physical_expr(copy).unwrap();
            assert!(
                snap.downcast_ref::<InListExpr>().is_none(),
                "the key set was left in: {snap}"
            );
        }
        let SmallSets(_, trimmed) = small.downcast_ref::<SmallSets>().unwrap();
        assert_eq!(trimmed.0.lock().unwrap().len(), 1);
    }
}
