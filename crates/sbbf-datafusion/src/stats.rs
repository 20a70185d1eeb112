//! What a scan pruned and read, from the metrics of an executed plan.

use crate::table::metric;
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
    /// Row groups skipped by DataFusion's own Bloom-filter reads (zero where ours replace them).
    pub pruned_datafusion_bloom: usize,
    /// Row groups skipped by DataFusion's min/max statistics.
    pub pruned_statistics: usize,
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
                            self.pruned_statistics += pruning_metrics.pruned()
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
