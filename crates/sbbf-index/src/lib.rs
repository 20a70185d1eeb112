//! A table index of Parquet split-block Bloom filters: the filters a table's files already
//! carry, gathered into one object under `ROOT/_sbbf_index/` so that one value is tested
//! against every (file, row group) of a column in one contiguous read per group, instead of a
//! footer and a filter read per file.
//!
//! - Entries are grouped by filter size (blocks); a group is laid out transposed: block `j` of
//!   every entry side by side, so a value's bits for the whole group are one stripe. An entry
//!   keeps its file's filter bit for bit unless `--fpp` lets it be folded (exactly: block `j`
//!   becomes `j / 2`) to a smaller shared size whose estimated FPP still honours the target.
//! - The index records each file's relative path, size, inode and times or ETag, and
//!   its row groups: a listing alone says which files are stale (changed, new); those are never
//!   answered from the index. A damaged or foreign index is ignored (with a warning), never
//!   trusted.
//! - The format is versioned and checksummed ([`format`](mod@format), `docs/index-format.md`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), sbbf_index::Error> {
//! use sbbf_index::{Root, build::{build, BuildOptions}};
//! let root = Root::open("events/")?.expect("a directory is a table root");
//! let report = build(&root, &BuildOptions::default()).await?;
//! println!("{} files indexed", report.files);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

// The modules, each using only those above it in this list (src/layering.rs checks it):
// - format: the index file's bytes, and a part's manifest (format/{types,write,read,part}.rs)
// - table: `Root`, a table root: listing it, loading its index, writing one atomically
// - probe: answering a probe or a predicate from the index
// - follow: a probe of a later Delta version from the index and the commits since
// - report: the reports a build, update, merge, inspect or probe returns
// - build: building and updating an index (build/{gather,spool}.rs: one file's filters, the spool)
// - part: building an index in parts, and merging them
// - each: a table file by file for every front end (probe, prune): the index first, then the
//   other files in listing order
pub mod build;
pub mod each;
mod follow;
pub mod format;
#[cfg(test)]
mod layering;
pub mod part;
pub mod probe;
pub mod report;
pub mod table;

pub use table::{Listed, Root};

/// Why an index cannot be used. Readers ignore such an index (with one warning) and probe
/// the files directly.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Not an sbbf index at all (another file under the name).
    #[error("not an sbbf index (no SBBFIDX magic)")]
    Foreign,
    /// An index of a format version this build does not read.
    #[error("index format version {0}; this build reads version {v}", v = format::VERSION)]
    Version(u32),
    /// Truncated, torn, or altered.
    #[error("damaged index: {0}")]
    Damaged(String),
}

/// What two parts of one index disagree on ([`Error::PartsDiffer`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PartMismatch {
    /// The table roots they were built for.
    Root(String, String),
    /// The columns they index (`None`: every column with filters).
    Columns(Option<Vec<String>>, Option<Vec<String>>),
    /// Their FPP targets (`None`: filters kept as written).
    Fpp(Option<f64>, Option<f64>),
}

impl PartMismatch {
    /// The other part's side, in words.
    fn other_side(&self) -> String {
        match self {
            PartMismatch::Root(_, b) => format!("for {b}"),
            PartMismatch::Columns(_, b) => columns_text(b),
            PartMismatch::Fpp(_, b) => format!("with {}", fpp_text(*b)),
        }
    }
}

impl std::fmt::Display for PartMismatch {
    /// The first part's side, in words.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PartMismatch::Root(a, _) => write!(f, "was built for the root {a}"),
            PartMismatch::Columns(a, _) => write!(f, "indexes {}", columns_text(a)),
            PartMismatch::Fpp(a, _) => write!(f, "was built with {}", fpp_text(*a)),
        }
    }
}

fn columns_text(c: &Option<Vec<String>>) -> String {
    match c {
        Some(c) => format!("columns {}", c.join(", ")),
        None => "every column with filters".to_string(),
    }
}

fn fpp_text(p: Option<f64>) -> String {
    p.map_or("filters as written".to_string(), |p| {
        format!("filters folded to FPP {p}")
    })
}

/// Errors of building, updating and reading an index.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The table's files could not be listed or read.
    #[error(transparent)]
    Parquet(#[from] sbbf_parquet::Error),
    /// The index itself is unusable.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A local read or write failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An object store request failed.
    #[error("{what}: {source}")]
    Store {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: object_store::Error,
    },
    /// The location is not a table root (a directory, or an object-store prefix ending in `/`).
    #[error("{0} is not a table root: give a directory or an object-store prefix ending in /")]
    NotATable(String),
    /// There is no index at the table root.
    #[error("no index at {0}")]
    NoIndex(String),
    /// A bad option.
    #[error("{0}")]
    Invalid(String),
    /// A false-positive probability target (`BuildOptions::fpp`) outside (0, 1). Front ends
    /// say it in their own option names (as `sbbf index` does).
    #[error("a false-positive probability is between 0 and 1, not {0}")]
    FppOutOfRange(f64),
    /// Filters are to be built from data (`build_missing`) but no column is named to build
    /// them for (an update takes the index's own columns). Front ends say it in their own
    /// option names.
    #[error("building missing filters needs the columns to build them for (an update takes the index's own columns)")]
    BuildMissingWithoutColumns,
    /// Tightening entries (building looser filters again from data) was asked without the
    /// columns or the target FPP (an update takes the index's own). Front ends say it in
    /// their own option names.
    #[error(
        "tightening entries needs the columns and the target FPP (an update takes the index's own)"
    )]
    TightenWithout,
    /// Parts of one index disagree (built for other roots, columns or FPP targets): nothing
    /// was merged. Front ends say the settings in their own option names.
    #[error("parts refused: {first} {mismatch}, {other} {}", mismatch.other_side())]
    PartsDiffer {
        /// The first part.
        first: String,
        /// The part that differs from it.
        other: String,
        /// What differs, the first part's setting first.
        mismatch: PartMismatch,
    },
    /// Another process is writing the index (it holds the writers' lock): nothing was done.
    #[error("another process is writing the index {0}; nothing was done (try again when it has finished)")]
    Busy(String),
    /// A file the index left to read directly was not probed (the direct probes ended
    /// early): the run cannot be trusted to be complete.
    #[error("{0}: was not probed")]
    NotProbed(String),
    /// A column asked for is in no readable file of the table (nothing was written).
    #[error("no file of the table has column `{column}`; nothing was written{}", .source.as_ref().map(|e| format!("; in the first: {e}")).unwrap_or_default())]
    UnknownColumn {
        /// The column as asked.
        column: String,
        /// Why the first file has no such column (its near misses).
        #[source]
        source: Option<Box<sbbf_parquet::Error>>,
    },
    /// A column asked for has no Bloom filter in any readable file of the table (nothing was
    /// written): its index would answer nothing.
    #[error("no file of the table has a Bloom filter for column `{column}`; nothing was written")]
    NoFilters {
        /// The column as asked.
        column: String,
    },
}

impl Error {
    /// This error with its column named as the table names it, where `names` (how the
    /// table's files name its columns) says the files name it otherwise.
    pub(crate) fn with_table_names(self, names: Option<&sbbf_lake::TableNames>) -> Error {
        let rename = |c: String| names.and_then(|n| n.table_column(&c)).unwrap_or(c);
        match self {
            Error::UnknownColumn { column, source } => Error::UnknownColumn {
                column: rename(column),
                source,
            },
            Error::NoFilters { column } => Error::NoFilters {
                column: rename(column),
            },
            e => e,
        }
    }
}
