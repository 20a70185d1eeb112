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
//! Joins prune too: the keys a hash join pushes into the scan while the query runs (its
//! dynamic filter) are tested against each file's filters when the file is opened, before any
//! data page is read ([`SbbfSource`]); [`with_join_key_sets`] lets up to 20,000 keys reach
//! them as a set.
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

// The modules, each using only those above it in this list (src/layering.rs checks it):
// - expr: DataFusion filters (logical, and a join's dynamic filter) to Bloom-filter predicates
// - metric: names of the scan's metrics; stats: what a scan pruned and read, from them
// - index: which files the table index lets a scan leave out
// - filtered: a store view whose listings leave out hidden names or the index's files
// - file_step: the per-file step (footer, min/max pruning, Bloom filters) tables and joins run
// - listing: a table's files (globs, hidden names, hive folders, symbolic link loops)
// - schema: a table's schema, from its footers or as few as its index allows
// - join: join filters, tested when a file is opened (`SbbfSource`)
// - table: the `TableProvider` (`SbbfTable`)
mod expr;
mod file_step;
mod filtered;
mod index;
mod join;
mod lake;
#[cfg(test)]
mod layering;
mod listing;
pub mod metric;
mod schema;
mod stats;
mod table;
mod tail;

pub use expr::{dynamic_predicate, predicate};
pub use join::SbbfSource;
pub use stats::{QueryStats, QueryStatsLine, ScanStats, Survivors};
pub use table::{table_row_groups, SbbfTable, DEFAULT_FILE_CONCURRENCY};

use datafusion::common::Result;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;

/// Distinct join keys a hash join may push into its probe-side scan as a set, with
/// [`with_join_key_sets`] (DataFusion's default: 150). Not more: above its own limit
/// DataFusion pushes a lookup into its hash table instead, and building a set of a million
/// keys (and translating it for the filters) cost three times the whole join, while so many
/// keys pass every filter of 1 % FPP anyway (a row group without them survives 20,000 keys
/// unless its filter's rate is below about 1e-5).
pub const JOIN_KEYS_MAX: usize = 20_000;

/// Bytes of build-side key arrays, per partition, up to which a hash join pushes its keys as a
/// set, with [`with_join_key_sets`] (DataFusion's default: 128 KiB): room for
/// [`JOIN_KEYS_MAX`] keys of a few hundred bytes. The join holds these arrays anyway; the set
/// is a copy of the distinct keys.
pub const JOIN_KEY_BYTES_MAX: usize = 8 * 1024 * 1024;

/// `config` with DataFusion's limits on pushed join key sets raised to [`JOIN_KEYS_MAX`] keys
/// and [`JOIN_KEY_BYTES_MAX`] bytes.
///
/// Above its limits (150 distinct keys, 128 KiB) a hash join pushes a lookup into its hash
/// table instead of the keys: that decides rows, but no Bloom filter can use it, so a join
/// with more keys would prune nothing. The limits are session options, not a table's: this
/// raises them for every join of the session. DataFusion itself only uses a big set for
/// min/max pruning (its statistics pruning skips `IN` lists of more than a few values). A
/// file whose filters are too loose for the keys pushed (estimated from their sizes before
/// they are read) is not probed.
///
/// ```
/// use datafusion::prelude::{SessionConfig, SessionContext};
/// let config = sbbf_datafusion::with_join_key_sets(SessionConfig::new());
/// assert_eq!(config.options().optimizer.hash_join_inlist_pushdown_max_distinct_values, 20_000);
/// let ctx = SessionContext::new_with_config(config);
/// ```
pub fn with_join_key_sets(mut config: SessionConfig) -> SessionConfig {
    let o = &mut config.options_mut().optimizer;
    o.hash_join_inlist_pushdown_max_distinct_values = JOIN_KEYS_MAX;
    o.hash_join_inlist_pushdown_max_size = JOIN_KEY_BYTES_MAX;
    config
}

/// Registers the Parquet files at `path` (file, directory, glob or object-store URL whose store
/// the context knows) as table `name`, pruned by our filters.
pub async fn register(ctx: &SessionContext, name: &str, path: &str) -> Result<()> {
    let table = SbbfTable::try_new(&ctx.state(), path)
        .await?
        .with_name(name);
    ctx.register_table(name, Arc::new(table))?;
    Ok(())
}
