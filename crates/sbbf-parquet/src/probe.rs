//! Probing: which row groups of a column may hold a value, reading only the filter bytes the
//! answer needs.

use crate::io::{Fetched, IoPolicy};
use crate::job::ProbeJob;
use crate::value::Encoded;
use crate::ParquetFile;
use parquet::file::reader::ChunkReader;

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

/// Where a chunk's filter is, by the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterLocation {
    /// `bloom_filter_offset`.
    pub offset: Option<i64>,
    /// `bloom_filter_length` (header plus bitset), absent in older files.
    pub length: Option<i32>,
}

impl<R: ChunkReader> ParquetFile<R> {
    /// Probes leaf `column` for `values` in every row group.
    ///
    /// A filter that cannot be read or understood makes its row group [`Answer::Unknown`] with
    /// the reason in [`FilterState::Invalid`]; it never makes anything [`Answer::Absent`], and
    /// the other row groups are still answered.
    ///
    /// ```no_run
    /// use sbbf_parquet::{ParquetFile, value::{encode_text, EncodeOptions}, IoPolicy};
    /// let pq = ParquetFile::open(std::fs::File::open("data.parquet")?)?;
    /// let col = pq.column_index("user_id")?;
    /// let v = encode_text(&pq.columns()[col], "42", EncodeOptions::default())?;
    /// for rg in pq.probe(col, &[v], IoPolicy::default()) {
    ///     println!("row group {}: {:?}", rg.row_group, rg.answers[0]);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn probe(
        &self,
        column: usize,
        values: &[Encoded],
        policy: IoPolicy,
    ) -> Vec<RowGroupAnswer> {
        let mut job = self.probe_job(column, values, policy);
        while let Some(ranges) = job.next_reads() {
            job.supply(Fetched::read(self.reader(), &ranges));
        }
        job.finish(values)
    }
}

impl<R> ParquetFile<R> {
    /// Where every row group's filter of leaf `column` is, by the footer.
    pub fn filter_locations(&self, column: usize) -> Vec<FilterLocation> {
        self.metadata()
            .row_groups()
            .iter()
            .map(|rg| {
                let c = rg.column(column);
                FilterLocation {
                    offset: c.bloom_filter_offset(),
                    length: c.bloom_filter_length(),
                }
            })
            .collect()
    }

    /// A job that reads every filter of leaf `column` whole.
    pub fn whole_job(&self, column: usize, policy: IoPolicy) -> ProbeJob {
        let num_rows = self
            .metadata()
            .row_groups()
            .iter()
            .map(|rg| rg.num_rows())
            .collect();
        ProbeJob::whole(
            &self.filter_locations(column),
            num_rows,
            self.footer_start(),
            policy,
        )
    }

    /// The I/O-free job behind [`ParquetFile::probe`], for drivers of other readers.
    pub fn probe_job(&self, column: usize, values: &[Encoded], policy: IoPolicy) -> ProbeJob {
        let num_rows = self
            .metadata()
            .row_groups()
            .iter()
            .map(|rg| rg.num_rows())
            .collect();
        ProbeJob::new(
            &self.filter_locations(column),
            num_rows,
            self.footer_start(),
            candidate_hashes(values),
            policy,
        )
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
