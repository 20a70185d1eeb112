//! The async driver: the same I/O-free probe job as the sync path, fed through arrow-rs'
//! [`AsyncFileReader`] (object stores, HTTP, anything async). The ranges of one round go out in
//! one `get_byte_ranges` call, which object-store readers fetch concurrently.

use crate::io::{Fetched, IoPolicy, Range};
use crate::read::answer::NoFilter;
use crate::read::answer::RowGroupAnswer;
use crate::read::plan::{FilterSpan, ProbeJob};
use crate::values::stored::Encoded;
use crate::ParquetFile;
use parquet::arrow::async_reader::AsyncFileReader;

/// Bytes fetched from the end of a file when opening it: the footer of most files fits, so
/// one request reads it.
pub const FOOTER_SUFFIX: u64 = 64 * 1024;

/// The I/O policy for object stores: a request costs about as much as 256 KiB of transfer,
/// and holes up to 64 KiB are read through to save requests.
pub const REMOTE_POLICY: IoPolicy = IoPolicy {
    request_cost: 256 * 1024,
    max_gap: 64 * 1024,
};

impl<R: AsyncFileReader> ParquetFile<R> {
    /// The one async driver: reads what `jobs` ask for through the async reader until they
    /// have all they need. Each wave (the ranges of every job's next round) goes out in one
    /// `get_byte_ranges` call.
    pub(crate) async fn drive(&mut self, jobs: &mut [ProbeJob]) {
        for _ in 0..crate::read::plan::MAX_ROUNDS {
            let Some(ranges) = crate::read::plan::next_reads_all(jobs) else {
                break;
            };
            if ranges.is_empty() {
                crate::read::plan::supply_all(jobs, Fetched::default());
                continue;
            }
            // Ranges within the bytes read with the footer are answered from them.
            let mut fetched = Fetched::default();
            let mut ranges = ranges;
            if let Some((start, tail)) = &self.tail {
                ranges.retain(|r| match r.start >= *start && r.end >= r.start {
                    true => {
                        let (from, to) = ((r.start - start) as usize, (r.end - start) as usize);
                        match tail.get(from..to) {
                            Some(_) => {
                                fetched.push(*r, Ok(tail.slice(from..to)));
                                false
                            }
                            None => true,
                        }
                    }
                    false => true,
                });
            }
            if ranges.is_empty() {
                crate::read::plan::supply_all(jobs, fetched);
                continue;
            }
            let wanted: Vec<std::ops::Range<u64>> = ranges.iter().map(|r| r.start..r.end).collect();
            self.io.start();
            let got = self.reader_mut().get_byte_ranges(wanted).await;
            let tail_bytes = fetched.bytes();
            match got {
                Ok(parts) if parts.len() == ranges.len() => {
                    for (r, b) in ranges.iter().zip(parts) {
                        let ok = b.len() as u64 == r.end - r.start;
                        fetched.push(
                            *r,
                            if ok {
                                Ok(b)
                            } else {
                                Err(format!(
                                    "short read: {} of {} bytes",
                                    b.len(),
                                    r.end - r.start
                                ))
                            },
                        );
                    }
                }
                Ok(_) => fail_all(
                    &mut fetched,
                    &ranges,
                    "the reader returned the wrong number of ranges",
                ),
                Err(e) => fail_all(&mut fetched, &ranges, &e.to_string()),
            }
            self.io
                .wave(ranges.len() as u64, fetched.bytes() - tail_bytes);
            crate::read::plan::supply_all(jobs, fetched);
        }
    }

    /// [`ParquetFile::probe`], asynchronously.
    pub async fn probe_async(
        &mut self,
        column: usize,
        values: &[Encoded],
        policy: IoPolicy,
    ) -> Vec<RowGroupAnswer> {
        let mut job = [self.probe_job(column, values, policy)];
        self.drive(&mut job).await;
        let [job] = job;
        job.finish()
    }

    /// [`ParquetFile::probe_async`] for values encoded and hashed once and shared by many
    /// files (no copy per file).
    pub(crate) async fn probe_async_shared(
        &mut self,
        column: usize,
        values: std::sync::Arc<[Encoded]>,
        hashes: std::sync::Arc<[u64]>,
        policy: IoPolicy,
    ) -> Vec<RowGroupAnswer> {
        let mut job = [self.shared_probe_job(column, values, hashes, policy)];
        self.drive(&mut job).await;
        let [job] = job;
        job.finish()
    }

    /// [`ParquetFile::read_filters`], asynchronously.
    pub async fn read_filters_async(
        &mut self,
        column: usize,
        policy: IoPolicy,
    ) -> Vec<Result<FilterSpan, NoFilter>> {
        let mut job = [self.whole_job(column, policy)];
        self.drive(&mut job).await;
        let [job] = job;
        job.into_spans()
    }

    /// [`ParquetFile::read_filters_async`] for several leaf columns at once, their reads in
    /// the same waves; one list per column, in the order given.
    pub async fn read_filters_of_columns_async(
        &mut self,
        columns: &[usize],
        policy: IoPolicy,
    ) -> Vec<Vec<Result<FilterSpan, NoFilter>>> {
        let mut jobs: Vec<ProbeJob> = columns.iter().map(|&c| self.whole_job(c, policy)).collect();
        self.drive(&mut jobs).await;
        jobs.into_iter().map(ProbeJob::into_spans).collect()
    }
}

fn fail_all(fetched: &mut Fetched, ranges: &[Range], why: &str) {
    for r in ranges {
        fetched.push(*r, Err(why.to_string()));
    }
}
