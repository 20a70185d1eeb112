//! DataFusion row-group pruning through Parquet split-block Bloom filters, for every type.
//!
//! [`SbbfTable`] is DataFusion's listing table over Parquet files with one addition: before a
//! scan starts, the scan's `=`, `IN`, `AND` and `OR` filters are tested against each file's
//! Bloom filters, and the row groups they rule out are skipped (a `ParquetAccessPlan` per
//! file). Values are encoded by `sbbf-parquet`'s one stored-value layer, so every type a writer
//! hashes is decided: all integer widths, dates, timestamps of any unit and zone, times,
//! decimals of any width and physical type, FLOAT16, INT96, fixed-length binary, struct fields,
//! and floats by SQL equality (`0.0` also finds `-0.0`). What the filters cannot decide keeps
//! the row group.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::common::Result<()> {
//! use datafusion::prelude::SessionContext;
//!
//! let ctx = SessionContext::new();
//! sbbf_datafusion::register(&ctx, "t", "../../testdata/pa_ints.parquet").await?;
//! let df = ctx.sql("SELECT count(*) AS n FROM t WHERE i64 IN (42, -752296985104395475)").await?;
//! let plan = df.create_physical_plan().await?;
//! let batches = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx()).await?;
//! let stats = sbbf_datafusion::ScanStats::of(&plan);
//! println!("{} row groups skipped by the filters, {} read", stats.pruned_sbbf, stats.read);
//! # assert_eq!(batches[0].num_rows(), 1);
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod expr;
mod stats;
mod table;

pub use expr::predicate;
pub use stats::ScanStats;
pub use table::{metric, table_row_groups, SbbfTable, DEFAULT_FILE_CONCURRENCY};

use datafusion::common::Result;
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// Registers the Parquet files at `path` (file, directory, glob or object-store URL whose store
/// the context knows) as table `name`, pruned by our filters.
pub async fn register(ctx: &SessionContext, name: &str, path: &str) -> Result<()> {
    let table = SbbfTable::try_new(&ctx.state(), path).await?;
    ctx.register_table(name, Arc::new(table))?;
    Ok(())
}
