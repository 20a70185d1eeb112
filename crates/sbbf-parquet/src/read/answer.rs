//! What a probe answers: per value and row group [`Answer`], per row group [`FilterState`],
//! and the rule (`decide`) that turns a filter's bits into an answer. "Unknown, never
//! absent": a filter that cannot be read or used never rules a row group out.

use crate::values::stored::Encoded;

/// The answer for one value in one row group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The row group may hold the value.
    Maybe,
    /// The row group definitely does not hold the value: it can be skipped.
    Absent,
    /// No usable filter: the row group cannot be skipped.
    Unknown,
}

impl Answer {
    /// `maybe`, `absent` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Maybe => "maybe",
            Answer::Absent => "absent",
            Answer::Unknown => "unknown",
        }
    }
}

/// Whether a row group's column chunk has a usable filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterState {
    /// A valid filter was read.
    Present,
    /// The footer names no filter for this chunk.
    Missing,
    /// The footer names a filter that cannot be used; the reason says why.
    Invalid(String),
    /// No filter was asked: a lake table's partition column, which its files do not hold,
    /// answered from the file's partition value (said here) in the table's log.
    Partition(String),
    /// The file does not hold the column, and the table gives its rows a value all the same
    /// (an Iceberg identity partition's source column, a column's default): no filter of the
    /// file knows it, so every row group may hold any value; the reason says why.
    NotInFile(String),
}

/// One row group's answers, one per probed value, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowGroupAnswer {
    /// 0-based row group index.
    pub row_group: usize,
    /// Rows in the row group.
    pub num_rows: i64,
    /// Filter state.
    pub filter: FilterState,
    /// One answer per value.
    pub answers: Vec<Answer>,
}

impl RowGroupAnswer {
    /// The same `answers`, with the same `filter` state, for every row group `metadata` lists:
    /// what a file answers when no filter of it decides (a partition value, a column the
    /// file leaves to its table).
    pub fn for_every_row_group(
        metadata: &parquet::file::metadata::ParquetMetaData,
        filter: FilterState,
        answers: Vec<Answer>,
    ) -> Vec<RowGroupAnswer> {
        let groups = metadata.row_groups().iter().enumerate();
        groups
            .map(|(i, rg)| RowGroupAnswer {
                row_group: i,
                num_rows: rg.num_rows(),
                filter: filter.clone(),
                answers: answers.clone(),
            })
            .collect()
    }
}

/// Where a chunk's filter is, by the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterLocation {
    /// `bloom_filter_offset`.
    pub offset: Option<i64>,
    /// `bloom_filter_length` (header plus bitset), absent in older files.
    pub length: Option<i32>,
}

/// Why a row group has no filter to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoFilter {
    /// The footer names no filter for this chunk.
    Missing,
    /// The footer names a filter that cannot be used; the reason says why.
    Invalid(String),
}

impl From<NoFilter> for FilterState {
    fn from(n: NoFilter) -> FilterState {
        match n {
            NoFilter::Missing => FilterState::Missing,
            NoFilter::Invalid(why) => FilterState::Invalid(why),
        }
    }
}

/// Every candidate's hash, in value order.
pub(crate) fn candidate_hashes(values: &[Encoded]) -> Vec<u64> {
    values
        .iter()
        .flat_map(|v| match v {
            Encoded::Candidates(c) => c.iter().map(|b| sbbf::hash(b)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The answer for one value given the filter state and a probe function for present filters.
pub(crate) fn decide(
    v: &Encoded,
    state: &FilterState,
    mut probe: impl FnMut(u64) -> bool,
) -> Answer {
    match v {
        Encoded::NeverStored(_) => Answer::Absent,
        Encoded::AlwaysMaybe(_) => match state {
            FilterState::Present => Answer::Maybe,
            _ => Answer::Unknown,
        },
        Encoded::Candidates(c) => match state {
            FilterState::Present => {
                // Probe every candidate (no short cut) so read failures are always noticed.
                let mut any = false;
                for b in c {
                    any |= probe(sbbf::hash(b));
                }
                if any {
                    Answer::Maybe
                } else {
                    Answer::Absent
                }
            }
            _ => Answer::Unknown,
        },
    }
}
