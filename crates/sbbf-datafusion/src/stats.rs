//! What a scan pruned and read, from the metrics of an executed plan.

use crate::metric;
use datafusion::physical_plan::metrics::MetricValue;
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

/// Row-group counts of the Parquet scans in an executed plan (summed over scans and files).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Row groups skipped by our filters (`row_groups_pruned_sbbf`).
    pub pruned_sbbf: usize,
    /// Of [`ScanStats::pruned_sbbf`], the row groups skipped by a join's keys (the join
    /// filters DataFusion pushes into the scan while the query runs).
    pub pruned_sbbf_join: usize,
    /// The most keys a join brought to one column's filters (0 without a join filter).
    pub join_keys: usize,
    /// How many times a join's key set was coerced and hashed: once per update of the join
    /// filter and column type, not once per file or partition.
    pub key_sets_hashed: usize,
    /// Files the table's index ruled out for a join's keys (dropped unread; their row groups
    /// count in `pruned_sbbf` and `pruned_sbbf_join`).
    pub join_files_pruned_index: usize,
    /// Files whose filters a join left unread: for that many keys, by their sizes, they
    /// would cost more bytes than they are expected to spare.
    pub join_files_unprobed: usize,
    /// Row groups skipped by DataFusion's own Bloom-filter reads (zero where ours replace them).
    pub pruned_datafusion_bloom: usize,
    /// Row groups skipped by DataFusion's min/max statistics in its scan.
    pub pruned_statistics: usize,
    /// Row groups skipped by min/max statistics before our filters were read (DataFusion's
    /// statistics pruning, run first by our scan planning).
    pub pruned_statistics_sbbf: usize,
    /// Row groups DataFusion's scan examined (matched or pruned by its statistics step): those
    /// of every file it opened, minus what was skipped before.
    pub examined: usize,
    /// Row groups of the files handed to the scans (0 when not counted).
    pub in_scan: usize,
    /// Files our planning left out of the scan (no row group could match).
    pub files_pruned: usize,
    /// Files a lake table's snapshot statistics left out of the scan (footers unread).
    pub files_pruned_table_stats: usize,
    /// Row groups of the files the table's index left out of the listing.
    pub pruned_index: usize,
    /// Those files.
    pub files_pruned_index: usize,
    /// Row groups skipped because a `LIMIT` was already satisfied.
    pub pruned_limit: usize,
    /// Row groups the scans went on to read (after every kind of pruning).
    pub read: usize,
    /// Filter read requests we made.
    pub sbbf_requests: usize,
    /// Filter bytes we read.
    pub sbbf_bytes: usize,
    /// Files whose filters could not be used (all their row groups kept).
    pub sbbf_file_errors: usize,
    /// Bytes DataFusion's scans read from the files (`bytes_scanned`: data pages, and its own
    /// filter reads where they are on; footers and our filter bytes not included).
    pub bytes_scanned: usize,
}

impl ScanStats {
    /// Sums the metrics of every node of `plan` (after it has run).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> datafusion::common::Result<()> {
    /// use datafusion::prelude::SessionContext;
    /// let ctx = SessionContext::new();
    /// let t = sbbf_datafusion::SbbfTable::try_new(&ctx.state(), "../../testdata/pa_ints.parquet").await?;
    /// ctx.register_table("t", std::sync::Arc::new(t))?;
    /// let plan = ctx.sql("SELECT * FROM t WHERE i64 = 42").await?.create_physical_plan().await?;
    /// datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx()).await?;
    /// let stats = sbbf_datafusion::ScanStats::of(&plan);
    /// assert!(stats.pruned_sbbf > 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn of(plan: &Arc<dyn ExecutionPlan>) -> ScanStats {
        ScanStats::summed(plan, None)
    }

    /// The same sums over the scans of table `name` only (a table made with
    /// [`crate::SbbfTable::with_name`], as [`crate::register`] does): the tables of a join
    /// apart.
    pub fn of_table(plan: &Arc<dyn ExecutionPlan>, name: &str) -> ScanStats {
        ScanStats::summed(plan, Some(name))
    }

    fn summed(plan: &Arc<dyn ExecutionPlan>, table: Option<&str>) -> ScanStats {
        let mut s = ScanStats::default();
        let mut matched = 0;
        s.add(plan.as_ref(), &mut matched, table);
        s.read = matched.saturating_sub(s.pruned_limit);
        s
    }

    fn add(&mut self, plan: &dyn ExecutionPlan, matched: &mut usize, table: Option<&str>) {
        let metrics = plan.metrics().filter(|metrics| {
            table.is_none_or(|name| {
                metrics.iter().any(|m| {
                    m.value().name() == metric::TABLE
                        && m.labels()
                            .iter()
                            .any(|l| l.name() == metric::TABLE_LABEL && l.value() == name)
                })
            })
        });
        if let Some(metrics) = metrics {
            for m in metrics.iter() {
                match m.value() {
                    MetricValue::PruningMetrics {
                        name,
                        pruning_metrics,
                    } => match name.as_ref() {
                        "row_groups_pruned_statistics" => {
                            self.pruned_statistics += pruning_metrics.pruned();
                            self.examined += pruning_metrics.pruned() + pruning_metrics.matched();
                        }
                        // The last row-group stage: what it matched went on to be read.
                        "row_groups_pruned_bloom_filter" => {
                            self.pruned_datafusion_bloom += pruning_metrics.pruned();
                            *matched += pruning_metrics.matched();
                        }
                        "limit_pruned_row_groups" => self.pruned_limit += pruning_metrics.pruned(),
                        _ => {}
                    },
                    MetricValue::Gauge { name, gauge } if name.as_ref() == metric::JOIN_KEYS => {
                        self.join_keys = self.join_keys.max(gauge.value());
                    }
                    MetricValue::Count { name, count } => {
                        let n = count.value();
                        match name.as_ref() {
                            metric::PRUNED => self.pruned_sbbf += n,
                            metric::REQUESTS => self.sbbf_requests += n,
                            metric::BYTES => self.sbbf_bytes += n,
                            metric::FILE_ERRORS => self.sbbf_file_errors += n,
                            metric::PRUNED_DYNAMIC => self.pruned_sbbf_join += n,
                            metric::KEY_SETS_HASHED => self.key_sets_hashed += n,
                            metric::JOIN_FILES_PRUNED_INDEX => self.join_files_pruned_index += n,
                            metric::JOIN_FILES_UNPROBED => self.join_files_unprobed += n,
                            metric::PRUNED_STATISTICS => self.pruned_statistics_sbbf += n,
                            metric::ROW_GROUPS => self.in_scan += n,
                            metric::FILES_PRUNED => self.files_pruned += n,
                            metric::PRUNED_INDEX => self.pruned_index += n,
                            metric::FILES_PRUNED_INDEX => self.files_pruned_index += n,
                            metric::FILES_PRUNED_TABLE_STATS => self.files_pruned_table_stats += n,
                            "bytes_scanned" => self.bytes_scanned += n,
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
        }
        for child in plan.children() {
            self.add(child.as_ref(), matched, table);
        }
    }
}

/// One table's line of `sbbf query --stats`: what the scan's row groups became, and, when a
/// join's keys reached the table, what the filters' false-positive rate lets them prune.
///
/// ```
/// use sbbf_datafusion::{QueryStats, ScanStats};
/// let s = ScanStats { join_keys: 100, ..ScanStats::default() };
/// let line = QueryStats::new(64, &s, false);
/// let survive = line.expected_survivors.unwrap().fpp_0_01;
/// assert!((survive - (1.0 - 0.99f64.powi(100))).abs() < 1e-12); // 63 % survive at 1 % FPP
/// ```
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueryStats {
    /// `sbbf` (our pruning) or `datafusion` (its own, `--no-sbbf`).
    pub bloom: &'static str,
    /// Bytes the scan read.
    pub bytes_scanned: usize,
    /// Row groups a K-key join leaves, by the filters' FPP (only with join keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_survivors: Option<Survivors>,
    /// Distinct join keys that reached the filters (only when some did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_keys: Option<usize>,
    /// Row groups in the table's files.
    pub row_groups: usize,
    /// Row groups the Bloom filters skipped (ours, or DataFusion's with `--no-sbbf`).
    pub row_groups_pruned_bloom: usize,
    /// Of ours, those skipped by a join's keys.
    pub row_groups_pruned_bloom_join: usize,
    /// Files the table's index ruled out for a join's keys, dropped unread (their row groups
    /// count in `row_groups_pruned_bloom_join`; only when there were some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_pruned_index_join: Option<usize>,
    /// Files whose filters a join left unread: judged from their sizes, row counts and the
    /// bytes the scan reads before reading them, they would cost more bytes than the row
    /// groups they are expected to rule out for that many keys (only when there were some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_unprobed_join: Option<usize>,
    /// Files of a lake table its snapshot's statistics ruled out: their footers are never
    /// read, so their row groups are in no count here, `row_groups` included (only when there
    /// were some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_pruned_table_stats: Option<usize>,
    /// Files the table's index ruled out: never opened (only when there were some).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_pruned_index: Option<usize>,
    /// Row groups of files the table's index ruled out (never listed, footers not read).
    pub row_groups_pruned_index: usize,
    /// Requests the scans made to the table's index (its head and the sections asked; only
    /// when it was asked). Set by the caller ([`crate::SbbfTable::index_reads`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_requests: Option<u64>,
    /// Bytes of the table's index those requests read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_bytes: Option<u64>,
    /// Row groups a LIMIT skipped.
    pub row_groups_pruned_limit: usize,
    /// Row groups of files the listing left out (a filter on partition columns).
    pub row_groups_pruned_listing: usize,
    /// Row groups min/max statistics skipped (before our filters were read, and in
    /// DataFusion's scan).
    pub row_groups_pruned_statistics: usize,
    /// Row groups read.
    pub row_groups_read: usize,
    /// Row groups of files the scan never opened: DataFusion skipped them whole when it came
    /// to them (file statistics, a join's or a TopK's filter), or a LIMIT was met first.
    pub row_groups_unopened: usize,
    /// Filter bytes we read.
    pub sbbf_bytes: usize,
    /// Files whose filters could not be used (all their row groups kept).
    pub sbbf_file_errors: usize,
    /// Requests we made for filter bytes.
    pub sbbf_requests: usize,
}

/// The share of row groups holding none of K keys that still survive, `1 - (1 - p)^K`, at a
/// few false-positive rates p: when it is near 1, smaller filters' FPP (`sbbf resize`, `sbbf
/// add --fpp`) would pay.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Survivors {
    /// At p = 1 %.
    #[serde(rename = "fpp_0.01")]
    pub fpp_0_01: f64,
    /// At p = 0.1 %.
    #[serde(rename = "fpp_0.001")]
    pub fpp_0_001: f64,
    /// At p = 0.01 %.
    #[serde(rename = "fpp_0.0001")]
    pub fpp_0_0001: f64,
}

impl QueryStats {
    /// The line of a table with `row_groups` row groups whose scan gave `s`; `no_sbbf`: the
    /// scan ran DataFusion's own Bloom pruning instead of ours.
    ///
    /// The row groups add up: `row_groups` = pruned by the index + by the listing + by
    /// statistics + by the Bloom filters + by a LIMIT + unopened + read (for a table scanned
    /// once).
    pub fn new(row_groups: usize, s: &ScanStats, no_sbbf: bool) -> QueryStats {
        let bloom = if no_sbbf {
            s.pruned_datafusion_bloom
        } else {
            s.pruned_sbbf
        };
        // Our statistics and Bloom steps run before DataFusion's scan examines a row group;
        // the scan examines every row group of every file it opens: the rest were unopened.
        let before_scan = s.pruned_statistics_sbbf + if no_sbbf { 0 } else { s.pruned_sbbf };
        let unopened = s.in_scan.saturating_sub(before_scan + s.examined);
        let k = s.join_keys as i32;
        let survive = |p: f64| 1.0 - (1.0 - p).powi(k);
        QueryStats {
            bloom: if no_sbbf { "datafusion" } else { "sbbf" },
            bytes_scanned: s.bytes_scanned,
            expected_survivors: (s.join_keys > 0).then(|| Survivors {
                fpp_0_01: survive(0.01),
                fpp_0_001: survive(0.001),
                fpp_0_0001: survive(0.0001),
            }),
            join_keys: (s.join_keys > 0).then_some(s.join_keys),
            row_groups,
            row_groups_pruned_bloom: bloom,
            row_groups_pruned_bloom_join: s.pruned_sbbf_join,
            files_pruned_index_join: (s.join_files_pruned_index > 0)
                .then_some(s.join_files_pruned_index),
            files_unprobed_join: (s.join_files_unprobed > 0).then_some(s.join_files_unprobed),
            files_pruned_table_stats: (s.files_pruned_table_stats > 0)
                .then_some(s.files_pruned_table_stats),
            files_pruned_index: (s.files_pruned_index > 0).then_some(s.files_pruned_index),
            row_groups_pruned_limit: s.pruned_limit,
            row_groups_pruned_index: s.pruned_index,
            index_requests: None,
            index_bytes: None,
            row_groups_pruned_listing: row_groups.saturating_sub(s.in_scan + s.pruned_index),
            row_groups_pruned_statistics: s.pruned_statistics + s.pruned_statistics_sbbf,
            row_groups_read: s.read,
            row_groups_unopened: unopened,
            sbbf_bytes: s.sbbf_bytes,
            sbbf_file_errors: s.sbbf_file_errors,
            sbbf_requests: s.sbbf_requests,
        }
    }
}

/// `sbbf query --stats` with several tables: `t`'s line, and every table's under `tables`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueryStatsLine {
    /// Table `t`'s figures, at the top level (as with one table).
    #[serde(flatten)]
    pub t: QueryStats,
    /// Every table's, by name (only with more than one table).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables: Option<std::collections::BTreeMap<String, QueryStats>>,
    /// The version read of each table that is a Delta or Iceberg table, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<std::collections::BTreeMap<String, sbbf_lake::TableVersion>>,
}
