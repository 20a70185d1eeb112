//! What a table read is asked for (which snapshot, or the folder as files) and what it reports
//! back (the version read, the requests its log or metadata took).

use crate::LakeError;
use sbbf_parquet::source::SourceOptions;
use sbbf_parquet::Error;
use std::str::FromStr;

/// Which snapshot of a table to read: a version (a Delta version, an Iceberg snapshot id) or
/// the snapshot current at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsOf {
    /// A Delta table version, or an Iceberg snapshot id.
    Version(i64),
    /// Milliseconds since the Unix epoch: the last snapshot committed at or before it.
    TimestampMs(i64),
}

impl FromStr for AsOf {
    type Err = Error;

    /// An integer is a version (or snapshot id); anything else must be an RFC 3339 time
    /// (`2026-12-03T15:00:00Z`).
    ///
    /// ```
    /// use sbbf_lake::AsOf;
    /// assert_eq!("3".parse::<AsOf>().unwrap(), AsOf::Version(3));
    /// assert_eq!(
    ///     "1970-01-01T00:00:01Z".parse::<AsOf>().unwrap(),
    ///     AsOf::TimestampMs(1000)
    /// );
    /// assert!("yesterday".parse::<AsOf>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<AsOf, Error> {
        let s = s.trim();
        if let Ok(v) = s.parse::<i64>() {
            return Ok(AsOf::Version(v));
        }
        chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| AsOf::TimestampMs(t.timestamp_millis()))
            .map_err(|_| {
                LakeError::AsOfText {
                    text: s.to_string(),
                }
                .into()
            })
    }
}

/// How a path that is a Delta or Iceberg table is read (module `lake`, feature `lake`).
#[derive(Debug, Clone, Default)]
pub struct LakeOptions {
    /// Read this snapshot instead of the current one.
    pub as_of: Option<AsOf>,
    /// Read the folder as plain Parquet files even where it is a table (repair work: removed
    /// and uncommitted files included).
    pub as_directory: bool,
}

/// What reading a table's snapshot asked of its store: the requests made to find the table
/// and read its log or metadata (not the data files'), as counted where they leave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogReads {
    /// Reads of objects (whole or ranges; metadata requests included).
    pub gets: u64,
    /// Listings started (a listing of more than a page's keys takes more than one request).
    pub lists: u64,
    /// Objects named by those listings.
    pub listed: u64,
    /// Bytes the reads returned.
    pub bytes: u64,
}

/// Which version of which table a command read, for reports (JSON, `--stats`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TableVersion {
    /// `delta` or `iceberg`.
    pub format: String,
    /// The table as given.
    pub location: String,
    /// A Delta version, or an Iceberg snapshot id (-1: no snapshot yet).
    pub version: i64,
    /// When that version was committed (ms since the epoch), when known.
    pub timestamp_ms: Option<i64>,
    /// How many data files the snapshot has.
    pub files: usize,
    /// What finding the table and reading its log or metadata asked of its store (the
    /// data files' reads are counted apart).
    pub log_reads: LogReads,
    /// When a probe read only the Delta commits after this version (an index's) and not
    /// the snapshot: that version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_since: Option<i64>,
}

/// How the files of a path are read: as files ([`SourceOptions`]: concurrency, keys, read
/// planning) and, where the path is a table, which snapshot ([`LakeOptions`]).
///
/// ```
/// use sbbf_lake::{AsOf, LakeOptions, TableOptions};
/// let options = TableOptions {
///     lake: LakeOptions { as_of: Some(AsOf::Version(3)), ..Default::default() },
///     ..Default::default()
/// };
/// assert_eq!(options.source.concurrency, sbbf_parquet::source::DEFAULT_CONCURRENCY);
/// ```
#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    /// How each file is read.
    pub source: SourceOptions,
    /// How a path that is a table is read.
    pub lake: LakeOptions,
}
