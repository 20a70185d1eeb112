//! Filters into a lake table, committed through the table's own protocol (`sbbf add TABLE`,
//! `sbbf resize TABLE`): for each current data file that needs it, a copy with the filters is
//! written beside it (its data pages, page indexes and every byte not ours copied as
//! [`add_filters`](sbbf_parquet::write::add_filters) copies them), and one new table version
//! swaps the originals for the copies. The rows, their order, deletion vectors, statistics and
//! tags are unchanged, so the commit says `dataChange: false`, as a compaction does. The
//! originals stay for time travel until the table's own VACUUM removes them.
//!
//! A Delta table commits a new log entry; an Iceberg table (format 1 or 2, a folder with
//! `metadata/vN.metadata.json` or a table of a SQL catalog) a `replace` snapshot (see
//! `iceberg::commit`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), sbbf_parquet::Error> {
//! use sbbf_lake::backfill::{write_table, Rewrite};
//! use sbbf_parquet::write::AddOptions;
//! let add = Rewrite::Add(AddOptions { columns: vec!["user_id".into()], fpp: 0.01, ndv: None, replace: false });
//! let table = sbbf_lake::Table::locate("events/", &Default::default()).await?;
//! let done = write_table(&table, &add, &mut |_, _| {}).await?;
//! match done.committed_version {
//!     Some(v) => println!("version {v}: {} files now have filters", done.swapped.len()),
//!     None => println!("every file already had them"),
//! }
//! # Ok(()) }
//! ```

#[cfg(feature = "tables")]
mod part;
#[cfg(not(feature = "tables"))]
mod refused;
mod summary;
#[cfg(feature = "tables")]
mod write;

use crate::Format;
#[cfg(not(feature = "tables"))]
pub use refused::{commit_parts, write_part, write_table};
use sbbf_parquet::write::{AddOptions, WriteReport};
pub use summary::{KeptLine, TableWriteSummary};
#[cfg(feature = "tables")]
pub use write::{commit_parts, write_part, write_table};

/// A part file's extension (`NAME.sbbfcopies`: [`write_part`] writes one).
pub const PART_EXTENSION: &str = "sbbfcopies";

/// What to do to each data file.
#[derive(Debug, Clone, PartialEq)]
pub enum Rewrite {
    /// Give the columns filters ([`add_filters`](sbbf_parquet::write::add_filters)): the files
    /// that lack one for some column in some row group (every file with
    /// [`AddOptions::replace`]). Columns by the table's names (Delta column mapping: the
    /// files' physical names are found here).
    Add(AddOptions),
    /// Fold oversized filters ([`resize_filters`](sbbf_parquet::write::resize_filters)) of
    /// `columns` (all when empty) down to `fpp`: the files where some filter shrinks.
    Resize {
        /// The target false-positive rate.
        fpp: f64,
        /// The columns, by the table's names.
        columns: Vec<String>,
    },
}

/// One data file swapped for a copy.
#[derive(Debug, Clone, PartialEq)]
pub struct SwappedFile {
    /// The original's URL.
    pub from: String,
    /// The copy's URL.
    pub to: String,
    /// What was written into the copy.
    pub report: WriteReport,
}

/// A current data file left as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptFile {
    /// Its URL.
    pub url: String,
    /// Why it needs no copy (it has the filters, no filter shrinks, it lacks the column).
    pub why: String,
}

/// What [`write_table`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct TableWrite {
    /// The table's format.
    pub format: Format,
    /// The table as given.
    pub table: String,
    /// The version the work was based on.
    pub read_version: i64,
    /// The version committed; `None` when no file needed a copy (nothing was written).
    pub committed_version: Option<i64>,
    /// The files swapped by that commit.
    pub swapped: Vec<SwappedFile>,
    /// The current files left as they are.
    pub kept: Vec<KeptFile>,
    /// Files another writer removed while the copies were being written: the commit left them
    /// out, and their copies were deleted again (by [`commit_parts`] only when no entry of a
    /// Delta log names them: see there).
    pub withdrawn: Vec<String>,
    /// Temporary files of copies a killed run left unfinished (`.sbbf-*.tmp`, unchanged for
    /// 15 minutes), removed before the copies were written. (A killed run's finished copies
    /// need no removal: a rerun of the job writes the same copies under the same names.)
    pub leftovers_removed: Vec<String>,
    /// Commits tried (more than one when other writers committed first).
    pub tries: u32,
    /// Bytes of data files read.
    pub bytes_read: u64,
    /// Bytes of data files written.
    pub bytes_written: u64,
}
