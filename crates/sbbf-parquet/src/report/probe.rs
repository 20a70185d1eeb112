//! The probe report: the JSON object `sbbf probe --format json` prints for each file, shared by
//! every front end that reports probes (the command, the Python package) so their objects are
//! the same by construction.
//!
//! Serialized straight from the answers (a `serde_json::Value` per answer cost about 1.5 KiB
//! each: 100,000 values on 20 row groups took 3 GiB). Fields are declared in sorted order, the
//! order the line always had, so output is stable.
//!
//! ```
//! use sbbf_parquet::report::{ErrorLine, ProbeLine};
//! let line = ProbeLine::missing_column("a.parquet", "id");
//! assert_eq!(
//!     serde_json::to_string(&line).unwrap(),
//!     r#"{"column":"id","file":"a.parquet","logical_type":null,"physical_type":null,"row_groups":[]}"#
//! );
//! let err = ErrorLine { error: "bad".into(), file: "b.parquet" };
//! assert_eq!(serde_json::to_string(&err).unwrap(), r#"{"error":"bad","file":"b.parquet"}"#);
//! ```

use crate::format::column::ColumnType;
use crate::io::IoStats;
use crate::read::answer::{FilterState, RowGroupAnswer};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// One file's probe answers:
/// `{"column", "file", "logical_type", "physical_type", "row_groups": [...], "stats"?}`.
#[derive(Serialize)]
pub struct ProbeLine<'a> {
    /// The column's dotted path as the file names it (or as asked, when the file lacks it;
    /// a table's name for it after [`ProbeLine::as_asked`]).
    pub column: &'a str,
    /// The file's path of the column, when `column` is the table's other name for it (Delta
    /// column mapping's physical names, an Iceberg column's name before a rename).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_in_file: Option<&'a str>,
    /// The file as shown to the user.
    pub file: &'a str,
    /// The logical type in compact text, if annotated.
    pub logical_type: Option<&'a str>,
    /// The physical type (`null` when the file lacks the column).
    pub physical_type: Option<&'a str>,
    /// One entry per row group.
    pub row_groups: Vec<RowGroupLine<'a>>,
    /// The reads the file took, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<StatsLine>,
}

impl<'a> ProbeLine<'a> {
    /// The line for `answers` of column `ty` in `file`; `values` are the values as given, one
    /// per answer of each row group.
    pub fn new(
        file: &'a str,
        ty: &'a ColumnType,
        answers: &'a [RowGroupAnswer],
        values: &'a [String],
        stats: Option<IoStats>,
    ) -> ProbeLine<'a> {
        ProbeLine {
            column: &ty.path,
            column_in_file: None,
            file,
            logical_type: ty.logical.as_deref(),
            physical_type: Some(ty.physical_name()),
            row_groups: answers
                .iter()
                .map(|rg| RowGroupLine { rg, values })
                .collect(),
            stats: stats.map(|io| StatsLine {
                bytes: io.bytes,
                requests: io.requests,
                waves: io.waves,
                elapsed_ms: io.elapsed.as_secs_f64() * 1000.0,
            }),
        }
    }

    /// The line with `asked` (how the user named the column: a table's name for it) as its
    /// `column`, and the file's path as `column_in_file` where the two differ.
    ///
    /// ```
    /// use sbbf_parquet::report::ProbeLine;
    /// let line = ProbeLine::missing_column("f.parquet", "col-1f2e").as_asked("User Name");
    /// assert_eq!((line.column, line.column_in_file), ("User Name", Some("col-1f2e")));
    /// ```
    pub fn as_asked(mut self, asked: &'a str) -> ProbeLine<'a> {
        if asked != self.column {
            self.column_in_file = Some(self.column);
            self.column = asked;
        }
        self
    }

    /// The line for a file (of several) without the column: no row group of it can hold a
    /// value of it.
    pub fn missing_column(file: &'a str, column: &'a str) -> ProbeLine<'a> {
        ProbeLine {
            column,
            column_in_file: None,
            file,
            logical_type: None,
            physical_type: None,
            row_groups: Vec::new(),
            stats: None,
        }
    }
}

/// A file that could not be probed: `{"error", "file"}`.
#[derive(Serialize)]
pub struct ErrorLine<'a> {
    /// The error's message.
    pub error: String,
    /// The file as shown to the user.
    pub file: &'a str,
}

/// `{"bytes", "elapsed_ms", "requests", "waves"}`: see [`IoStats`].
#[derive(Serialize)]
pub struct StatsLine {
    /// Bytes read.
    pub bytes: u64,
    /// Milliseconds from the first read's start to the last read's end.
    pub elapsed_ms: f64,
    /// Ranged reads.
    pub requests: u64,
    /// Sequential rounds of reads.
    pub waves: u64,
}

/// One row group: `{"filter", "num_rows", "reason", "row_group", "values": [{"result",
/// "value"}, ...]}`.
pub struct RowGroupLine<'a> {
    rg: &'a RowGroupAnswer,
    values: &'a [String],
}

impl Serialize for RowGroupLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (filter, reason) = match &self.rg.filter {
            FilterState::Present => ("present", None),
            FilterState::Missing => ("missing", None),
            FilterState::Invalid(r) => ("invalid", Some(r.as_str())),
            FilterState::Partition(r) => ("partition", Some(r.as_str())),
            FilterState::NotInFile(r) => ("not_in_file", Some(r.as_str())),
        };
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("filter", filter)?;
        m.serialize_entry("num_rows", &self.rg.num_rows)?;
        m.serialize_entry("reason", &reason)?;
        m.serialize_entry("row_group", &self.rg.row_group)?;
        m.serialize_entry("values", &ValuesLine(self))?;
        m.end()
    }
}

struct ValuesLine<'a>(&'a RowGroupLine<'a>);

impl Serialize for ValuesLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct One<'v>(&'v str, &'static str);
        impl Serialize for One<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("result", self.1)?;
                m.serialize_entry("value", self.0)?;
                m.end()
            }
        }
        let RowGroupLine { rg, values } = self.0;
        let mut seq = s.serialize_seq(Some(rg.answers.len()))?;
        for (v, ans) in values.iter().zip(&rg.answers) {
            seq.serialize_element(&One(v, ans.as_str()))?;
        }
        seq.end()
    }
}
