//! Probing: which row groups of a column may hold a value, reading only the filter bytes the
//! answer needs.

use crate::format::layout::{Layout, Region, RegionKind};
use crate::io::IoPolicy;
use crate::read::answer::{FilterLocation, NoFilter, RowGroupAnswer};
use crate::read::plan::{run, FilterSpan, ProbeJob};
use crate::values::stored::Encoded;
use crate::ParquetFile;
use parquet::file::reader::ChunkReader;
use std::collections::HashMap;

/// The writers (`created_by` prefixes) whose BOOLEAN filters hold each value as one byte,
/// 0x00 or 0x01: ClickHouse (checked on ClickHouse 26.9's files) and arrow-rs (its writer
/// hashes a `bool` by its one byte, and its reader checks so).
const BOOLEAN_FILTER_WRITERS: [&str; 2] = ["ClickHouse", "parquet-rs"];

impl<R: ChunkReader> ParquetFile<R> {
    /// Probes leaf `column` for `values` in every row group.
    ///
    /// A filter that cannot be read or understood makes its row group [`Answer::Unknown`](crate::Answer::Unknown) with
    /// the reason in [`FilterState::Invalid`](crate::FilterState::Invalid); it never makes anything [`Answer::Absent`](crate::Answer::Absent), and
    /// the other row groups are still answered.
    ///
    /// ```no_run
    /// use sbbf_parquet::{ParquetFile, values::text::{encode_text, EncodeOptions}, IoPolicy};
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
        let mut job = [self.probe_job(column, values, policy)];
        run(self.reader(), &self.io, &mut job);
        let [job] = job;
        job.finish()
    }

    /// Reads every filter of leaf `column` whole: per row group the filter and where it lies
    /// in the file, or why there is none (to keep filters for many probes, to check or copy
    /// them).
    pub fn read_filters(
        &self,
        column: usize,
        policy: IoPolicy,
    ) -> Vec<Result<FilterSpan, NoFilter>> {
        let mut job = [self.whole_job(column, policy)];
        run(self.reader(), &self.io, &mut job);
        let [job] = job;
        job.into_spans()
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
    pub(crate) fn whole_job(&self, column: usize, policy: IoPolicy) -> ProbeJob {
        let job = ProbeJob::whole(
            &self.filter_locations(column),
            self.row_counts(),
            self.footer_start(),
            policy,
        );
        self.with_crypto(self.with_footer_conflicts(job, column), column)
    }

    /// Applies the file's encryption to a job over leaf `column` (nothing for a plaintext
    /// file).
    fn with_crypto(&self, job: ProbeJob, _column: usize) -> ProbeJob {
        #[cfg(feature = "encryption")]
        if let Some(e) = self.encryption() {
            return job.with_crypto(e.filter_keys(_column, self.metadata().num_row_groups()));
        }
        job
    }

    fn row_counts(&self) -> Vec<i64> {
        self.metadata()
            .row_groups()
            .iter()
            .map(|rg| rg.num_rows())
            .collect()
    }

    /// Marks the filters the footer itself shows to be unusable (see `footer_conflicts`).
    fn with_footer_conflicts(&self, mut job: ProbeJob, column: usize) -> ProbeJob {
        for (rg, reason) in self.footer_conflicts(column) {
            job.invalidate(rg, reason);
        }
        if let Some(reason) = self.untrusted_boolean_filters(column) {
            for rg in 0..self.metadata().num_row_groups() {
                job.invalidate(rg, reason.clone());
            }
        }
        job
    }

    /// Why the BOOLEAN filters of leaf `column` cannot be used, if it is BOOLEAN and its writer
    /// is not one known to hash each value as one byte (0x00, 0x01). Parquet's spec defines no
    /// BOOLEAN filter: ClickHouse and arrow-rs write them so (and arrow-rs reads them so), but
    /// parquet-java writes an empty one (every value "absent"), and another writer may hash
    /// some other form. Only the known ones are read.
    pub(crate) fn untrusted_boolean_filters(&self, column: usize) -> Option<String> {
        let ty = self.columns().get(column)?;
        if ty.physical != parquet::basic::Type::BOOLEAN {
            return None;
        }
        let by = self.metadata().file_metadata().created_by().unwrap_or("");
        if BOOLEAN_FILTER_WRITERS.iter().any(|w| by.starts_with(w)) {
            return None;
        }
        Some(format!(
            "a BOOLEAN filter written by {}: Parquet defines none, and only {}'s are known to hold values as one byte",
            if by.is_empty() { "an unnamed writer" } else { by },
            BOOLEAN_FILTER_WRITERS.join("'s and ")
        ))
    }

    /// A job answering, per row group, whether any value of a set may be in leaf `column`,
    /// the set given as its candidate hashes and summary ([`crate::read::plan::AnyOf::encode`]).
    pub(crate) fn any_job(
        &self,
        column: usize,
        hashes: std::sync::Arc<[u64]>,
        any: crate::read::plan::AnyOf,
        policy: IoPolicy,
    ) -> ProbeJob {
        let job = ProbeJob::any_of(
            &self.filter_locations(column),
            self.row_counts(),
            self.footer_start(),
            hashes,
            any,
            policy,
        );
        self.with_crypto(self.with_footer_conflicts(job, column), column)
    }

    /// The I/O-free job behind [`ParquetFile::probe`] and its async twin.
    pub(crate) fn probe_job(
        &self,
        column: usize,
        values: &[Encoded],
        policy: IoPolicy,
    ) -> ProbeJob {
        let job = ProbeJob::new(
            &self.filter_locations(column),
            self.row_counts(),
            self.footer_start(),
            values.to_vec(),
            policy,
        );
        self.with_crypto(self.with_footer_conflicts(job, column), column)
    }

    /// [`ParquetFile::probe_job`] for values encoded and hashed once and shared by many
    /// files' jobs (`hashes` in [`crate::read::answer::candidate_hashes`] order).
    pub(crate) fn shared_probe_job(
        &self,
        column: usize,
        values: std::sync::Arc<[Encoded]>,
        hashes: std::sync::Arc<[u64]>,
        policy: IoPolicy,
    ) -> ProbeJob {
        let job = ProbeJob::shared(
            &self.filter_locations(column),
            self.row_counts(),
            self.footer_start(),
            values,
            hashes,
            policy,
        );
        self.with_crypto(self.with_footer_conflicts(job, column), column)
    }

    /// Row groups whose filter of leaf `column` starts where the footer also puts another
    /// chunk's filter, or inside a chunk's data pages, with the reason. The bytes there are not
    /// (only) this chunk's filter: probing them could answer "absent" for a value the row group
    /// holds. No writer lays files out this way; a corrupt or hostile footer can.
    fn footer_conflicts(&self, column: usize) -> Vec<(usize, String)> {
        let all = self.conflicts.get_or_init(|| self.all_footer_conflicts());
        let mut out: Vec<(usize, String)> = all
            .iter()
            .filter(|((_, c), _)| *c == column)
            .map(|((r, _), why)| (*r, why.clone()))
            .collect();
        out.sort();
        out
    }

    /// [`Self::footer_conflicts`] of every column chunk, computed once per file: the footer is
    /// walked once, not once per probe.
    fn all_footer_conflicts(&self) -> HashMap<(usize, usize), String> {
        let rgs = self.metadata().row_groups();
        let mut filters: HashMap<i64, usize> = HashMap::new();
        for rg in rgs {
            for chunk in rg.columns() {
                if let Some(o) = chunk.bloom_filter_offset() {
                    *filters.entry(o).or_default() += 1;
                }
            }
        }
        // Each chunk's data pages, by start, and the one reaching furthest among those starting
        // at or before each (a sorted sweep instead of testing every pair).
        let layout = Layout::of(self.metadata());
        let mut data: Vec<&Region> = layout
            .regions
            .iter()
            .filter(|r| r.kind == RegionKind::Data && r.end > r.start)
            .collect();
        data.sort_unstable_by_key(|r| (r.start, r.end, r.row_group, r.column));
        let mut furthest: Vec<&Region> = Vec::with_capacity(data.len());
        for &r in &data {
            match furthest.last() {
                Some(&f) if f.end >= r.end => furthest.push(f),
                _ => furthest.push(r),
            }
        }
        let name = |c: usize| self.columns().get(c).map_or("?", |t| t.path.as_str());
        let mut out = HashMap::new();
        for (r, rg) in rgs.iter().enumerate() {
            for (column, chunk) in rg.columns().iter().enumerate() {
                let Some(off) = chunk.bloom_filter_offset() else {
                    continue;
                };
                if filters.get(&off).copied().unwrap_or(0) > 1 {
                    out.insert(
                        (r, column),
                        format!(
                            "bloom_filter_offset {off} is also given for another column chunk's filter"
                        ),
                    );
                    continue;
                }
                let Ok(o) = u64::try_from(off) else { continue };
                let i = data.partition_point(|d| d.start <= o);
                if let Some(&inside) = i.checked_sub(1).map(|i| &furthest[i]) {
                    if o < inside.end {
                        out.insert(
                            (r, column),
                            format!(
                                "bloom_filter_offset {off} lies inside {}",
                                inside.describe(name(inside.column))
                            ),
                        );
                    }
                }
            }
        }
        out
    }
}
