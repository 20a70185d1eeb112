//! `sbbf add` and `sbbf resize`'s report: the filters written and what the file became.

use crate::write::WriteReport;
use serde::Serialize;

/// What a write did (`sbbf add --format json`, `sbbf resize --format json`).
///
/// ```
/// use sbbf_parquet::{report::WriteSummary, write::WriteReport};
/// let r = WriteReport { filters: vec![], input_len: 10, output_len: 10, bytes_written: 0, compacted: false };
/// let s = WriteSummary::new("add", "in.parquet", "out.parquet", &r);
/// assert_eq!(s.filter_bytes_after, 0);
/// assert!(serde_json::to_string(&s).unwrap().starts_with(r#"{"bytes_written":0,"command":"add""#));
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct WriteSummary {
    /// Bytes of the output that differ from the input's layout.
    pub bytes_written: u64,
    /// `add` or `resize`.
    pub command: String,
    /// Whether old filter space was given back.
    pub compacted: bool,
    /// Size of the input.
    pub file_bytes_before: u64,
    /// Size of the output.
    pub file_bytes_after: u64,
    /// Bitset bytes of the filters written, before.
    pub filter_bytes_before: u64,
    /// Bitset bytes of the filters written, after.
    pub filter_bytes_after: u64,
    /// The filters written.
    pub filters: Vec<FilterLine>,
    /// The input as given.
    pub input: String,
    /// The file written.
    pub output: String,
}

/// One filter of a [`WriteSummary`].
#[derive(Debug, Clone, Serialize)]
pub struct FilterLine {
    /// Bitset bytes after.
    pub bytes_after: u64,
    /// Bitset bytes before (0: there was none).
    pub bytes_before: u64,
    /// Leaf column path.
    pub column: String,
    /// Distinct values the filter holds, estimated from its fill (`add` only).
    pub distinct_values: Option<u64>,
    /// Row group.
    pub row_group: usize,
}

impl WriteSummary {
    /// The summary of `report`, written by `command` from `input` to `output`.
    pub fn new(command: &str, input: &str, output: &str, report: &WriteReport) -> WriteSummary {
        WriteSummary {
            bytes_written: report.bytes_written,
            command: command.to_string(),
            compacted: report.compacted,
            file_bytes_before: report.input_len,
            file_bytes_after: report.output_len,
            filter_bytes_before: report.filters.iter().map(|f| f.bytes_before).sum(),
            filter_bytes_after: report.filters.iter().map(|f| f.bytes_after).sum(),
            filters: report
                .filters
                .iter()
                .map(|f| FilterLine {
                    bytes_after: f.bytes_after,
                    bytes_before: f.bytes_before,
                    column: f.column.clone(),
                    distinct_values: f.distinct,
                    row_group: f.row_group,
                })
                .collect(),
            input: input.to_string(),
            output: output.to_string(),
        }
    }
}

/// `sbbf resize` when no filter can shrink: nothing was written.
#[derive(Debug, Clone, Serialize)]
pub struct NothingToDo {
    /// `resize`.
    pub command: String,
    /// Always empty.
    pub filters: Vec<FilterLine>,
    /// The input as given.
    pub input: String,
    /// Always true.
    pub nothing_to_do: bool,
    /// Always `null`: no file was written.
    pub output: Option<String>,
}

impl NothingToDo {
    /// The report of a `command` on `input` that had nothing to do.
    pub fn new(command: &str, input: &str) -> NothingToDo {
        NothingToDo {
            command: command.to_string(),
            filters: Vec::new(),
            input: input.to_string(),
            nothing_to_do: true,
            output: None,
        }
    }
}
