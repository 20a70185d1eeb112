//! The report of a table write (`sbbf add TABLE --format json`, `sbbf resize TABLE`, Python's
//! `add` and `resize` on a table): one `Serialize` type every front end prints or returns.

use super::TableWrite;
use sbbf_parquet::report::WriteSummary;
use serde::Serialize;

/// What a write into a table did (`sbbf add TABLE --format json`, `sbbf resize TABLE`,
/// Python's `add` and `resize` on a table): the version read and the one committed, each
/// file swapped for its copy (as a [`WriteSummary`] from the original to the copy), each file
/// kept and why.
#[derive(Debug, Clone, Serialize)]
pub struct TableWriteSummary {
    /// Bytes of data files read.
    pub bytes_read: u64,
    /// Bytes of data files written.
    pub bytes_written: u64,
    /// `add` or `resize`.
    pub command: String,
    /// The version committed; `null` when nothing needed a copy (nothing was written).
    pub committed_version: Option<i64>,
    /// `delta` or `iceberg`.
    pub format: String,
    /// The files left as they are.
    pub kept: Vec<KeptLine>,
    /// Temporary files a killed run left, removed (see `TableWrite::leftovers_removed`).
    pub leftovers_removed: Vec<String>,
    /// The version the work was based on.
    pub read_version: i64,
    /// The files swapped for copies: `input` the original, `output` the copy.
    pub swapped: Vec<WriteSummary>,
    /// The table as given.
    pub table: String,
    /// Commits tried.
    pub tries: u32,
    /// Files another writer removed meanwhile: left out of the commit, their copies deleted.
    pub withdrawn: Vec<String>,
}

/// A file of a [`TableWriteSummary`] left as it is.
#[derive(Debug, Clone, Serialize)]
pub struct KeptLine {
    /// The file.
    pub file: String,
    /// Why it needs no copy.
    pub why: String,
}

impl TableWriteSummary {
    /// The summary of `done`, a table write by `command`.
    pub fn new(command: &str, done: &TableWrite) -> TableWriteSummary {
        TableWriteSummary {
            bytes_read: done.bytes_read,
            bytes_written: done.bytes_written,
            command: command.to_string(),
            committed_version: done.committed_version,
            format: done.format.to_string(),
            kept: done
                .kept
                .iter()
                .map(|k| KeptLine {
                    file: k.url.clone(),
                    why: k.why.clone(),
                })
                .collect(),
            leftovers_removed: done.leftovers_removed.clone(),
            read_version: done.read_version,
            swapped: done
                .swapped
                .iter()
                .map(|s| WriteSummary::new(command, &s.from, &s.to, &s.report))
                .collect(),
            table: done.table.clone(),
            tries: done.tries,
            withdrawn: done.withdrawn.clone(),
        }
    }
}
