//! The async driver: the same [`ProbeJob`] as the sync path, fed through arrow-rs'
//! [`AsyncFileReader`] (object stores, HTTP, anything async). The ranges of one round go out in
//! one `get_byte_ranges` call, which object-store readers fetch concurrently.

use crate::file::{check_min_len, footer_start};
use crate::io::{Fetched, IoPolicy, Range};
use crate::literal::{coerce, Literal};
use crate::probe::RowGroupAnswer;
use crate::prune::{Predicate, Pruned};
use crate::value::Encoded;
use crate::{Error, ParquetFile, ProbeJob, ReadError};
use parquet::arrow::async_reader::AsyncFileReader;
use std::cell::RefCell;

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
    /// Opens a file through an async reader: one request for the last 64 KiB (or the whole
    /// file if smaller), a second only when the footer is larger.
    pub async fn open_async(mut reader: R, file_len: u64) -> Result<Self, Error> {
        check_min_len(file_len)?;
        let suffix = FOOTER_SUFFIX.min(file_len);
        let tail = reader
            .get_bytes(file_len - suffix..file_len)
            .await
            .map_err(|e| Error::Read(ReadError::Parquet(e)))?;
        if tail.len() as u64 != suffix {
            return Err(Error::Read(ReadError::Short {
                start: file_len - suffix,
                wanted: suffix,
                got: tail.len() as u64,
            }));
        }
        let start = footer_start(&tail[tail.len() - 8..], file_len)?;
        let meta = if start >= file_len - suffix {
            let from = (start - (file_len - suffix)) as usize;
            tail.slice(from..tail.len() - 8)
        } else {
            let b = reader
                .get_bytes(start..file_len - 8)
                .await
                .map_err(|e| Error::Read(ReadError::Parquet(e)))?;
            if b.len() as u64 != file_len - 8 - start {
                return Err(Error::Read(ReadError::Short {
                    start,
                    wanted: file_len - 8 - start,
                    got: b.len() as u64,
                }));
            }
            b
        };
        ParquetFile::from_footer(reader, file_len, start, &meta)
    }

    /// Runs a job to the end through the async reader.
    pub async fn drive(&mut self, mut job: ProbeJob) -> ProbeJob {
        while let Some(ranges) = job.next_reads() {
            let wanted: Vec<std::ops::Range<u64>> = ranges.iter().map(|r| r.start..r.end).collect();
            let got = self.reader_mut().get_byte_ranges(wanted).await;
            let mut fetched = Fetched::default();
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
            job.supply(fetched);
        }
        job
    }

    /// [`ParquetFile::probe`], asynchronously.
    pub async fn probe_async(
        &mut self,
        column: usize,
        values: &[Encoded],
        policy: IoPolicy,
    ) -> Vec<RowGroupAnswer> {
        let job = self.probe_job(column, values, policy);
        self.drive(job).await.finish(values)
    }

    /// [`ParquetFile::prune`], asynchronously, with the given I/O policy (see
    /// [`REMOTE_POLICY`] for object stores).
    pub async fn prune_async(
        &mut self,
        predicate: &Predicate,
        policy: IoPolicy,
    ) -> Result<Pruned, Error> {
        // Probe every leaf first (in the evaluation order), then evaluate from the answers.
        let mut leaves = Vec::new();
        collect_leaves(predicate, &mut leaves);
        let mut answers = Vec::new();
        for (column, literals) in leaves {
            let col = self.column_index(column)?;
            let ty = self.columns()[col].clone();
            let encoded: Vec<Encoded> = literals.iter().map(|l| coerce(&ty, l)).collect();
            answers.push(self.probe_async(col, &encoded, policy).await);
        }
        let next = RefCell::new(answers.into_iter());
        let n = self.metadata().num_row_groups();
        crate::prune::evaluate_with(predicate, n, &|_, _| {
            Ok(next
                .borrow_mut()
                .next()
                .expect("one answer per leaf, in order"))
        })
    }
}

fn fail_all(fetched: &mut Fetched, ranges: &[Range], why: &str) {
    for r in ranges {
        fetched.push(*r, Err(why.to_string()));
    }
}

fn collect_leaves<'a>(p: &'a Predicate, out: &mut Vec<(&'a str, &'a [Literal])>) {
    match p {
        Predicate::Eq(c, v) => out.push((c, std::slice::from_ref(v))),
        Predicate::In(c, vs) => out.push((c, vs)),
        Predicate::And(ps) | Predicate::Or(ps) => ps.iter().for_each(|p| collect_leaves(p, out)),
    }
}
