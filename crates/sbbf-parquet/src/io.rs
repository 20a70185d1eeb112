//! Reading byte ranges: planning, coalescing and fetching them in as few requests as possible.

use crate::ReadError;
use bytes::Bytes;
use parquet::file::reader::ChunkReader;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where reads should be merged and when a whole filter beats reading single blocks.
///
/// The cost rule: one request costs about as much as reading `request_cost` contiguous bytes
/// (a seek or a round trip). Reading `k` separate 32-byte blocks costs `k * request_cost`;
/// reading the whole bitset costs its size. The cheaper one wins. Neighbouring ranges closer
/// than `max_gap` are read as one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoPolicy {
    /// Bytes a request is worth.
    pub request_cost: u64,
    /// Largest hole that is read through to merge two ranges.
    pub max_gap: u64,
}

impl Default for IoPolicy {
    /// Local files: a request is worth a 4 KiB page; holes up to 1 KiB are read through.
    fn default() -> Self {
        IoPolicy {
            request_cost: 4096,
            max_gap: 1024,
        }
    }
}

/// The reads a [`crate::ParquetFile`] has made since it was opened (footer included): what
/// an object store bills and what a user waits for.
///
/// ```no_run
/// use sbbf_parquet::{ParquetFile, IoPolicy, Encoded};
/// let pq = ParquetFile::open(std::fs::File::open("data.parquet")?)?;
/// pq.probe(0, &[Encoded::Candidates(vec![42i64.to_le_bytes().to_vec()])], IoPolicy::default());
/// let s = pq.io_stats();
/// println!("{} requests, {} bytes, {} waves", s.requests, s.bytes, s.waves);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IoStats {
    /// Ranged reads asked of the reader.
    pub requests: u64,
    /// Bytes those reads returned.
    pub bytes: u64,
    /// Sequential rounds: reads of one round are independent and go out together, each
    /// round waits for the one before (on an object store, a round trip each).
    pub waves: u64,
    /// Wall time from the first read's start to the last read's end (zero before any read):
    /// what the waves cost on this store.
    pub elapsed: std::time::Duration,
}

/// [`IoStats`] kept by a file that is shared between threads.
#[derive(Debug, Default)]
pub(crate) struct IoCounters {
    requests: AtomicU64,
    bytes: AtomicU64,
    waves: AtomicU64,
    /// When the first read started, and nanoseconds from then to the end of the last one.
    first: std::sync::OnceLock<std::time::Instant>,
    elapsed_ns: AtomicU64,
}

impl IoCounters {
    /// Notes that a read is about to start (the clock of [`IoStats::elapsed`] starts at the
    /// first one).
    pub(crate) fn start(&self) {
        self.first.get_or_init(std::time::Instant::now);
    }

    /// Starts the clock at `t` (when the footer read began, before the file existed).
    pub(crate) fn start_at(&self, t: std::time::Instant) {
        self.first.get_or_init(|| t);
    }

    /// One wave of `requests` reads returning `bytes` bytes, just finished.
    pub(crate) fn wave(&self, requests: u64, bytes: u64) {
        self.requests.fetch_add(requests, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.waves.fetch_add(1, Ordering::Relaxed);
        if let Some(t) = self.first.get() {
            let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.elapsed_ns.fetch_max(ns, Ordering::Relaxed);
        }
    }

    pub(crate) fn get(&self) -> IoStats {
        IoStats {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            waves: self.waves.load(Ordering::Relaxed),
            elapsed: std::time::Duration::from_nanos(self.elapsed_ns.load(Ordering::Relaxed)),
        }
    }
}

/// A half-open byte range `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Range {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// Sorts and merges ranges whose gap is at most `max_gap`.
///
/// ```
/// use sbbf_parquet::io::{coalesce, Range};
/// let r = |start, end| Range { start, end };
/// assert_eq!(coalesce(vec![r(100, 132), r(0, 16), r(20, 52)], 8), vec![r(0, 52), r(100, 132)]);
/// ```
pub fn coalesce(mut ranges: Vec<Range>, max_gap: u64) -> Vec<Range> {
    ranges.retain(|r| r.end > r.start);
    ranges.sort();
    let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(max_gap) => {
                last.end = last.end.max(r.end)
            }
            _ => out.push(r),
        }
    }
    out
}

/// Bytes fetched for a set of merged ranges; answers sub-range look-ups.
#[derive(Debug, Default, Clone)]
pub(crate) struct Fetched {
    chunks: Vec<(Range, Result<Bytes, String>)>,
}

impl Fetched {
    /// Bytes of the reads that succeeded.
    pub(crate) fn bytes(&self) -> u64 {
        self.chunks
            .iter()
            .filter_map(|(_, b)| b.as_ref().ok())
            .map(|b| b.len() as u64)
            .sum()
    }

    /// Reads every range (already merged) from `reader`; a failed read is remembered, not fatal.
    pub(crate) fn read<R: ChunkReader>(reader: &R, ranges: &[Range]) -> Fetched {
        let mut f = Fetched::default();
        for r in ranges {
            f.push(*r, read_range(reader, *r).map_err(|e| e.to_string()));
        }
        f
    }

    /// Takes over the ranges of another fetch.
    pub(crate) fn extend(&mut self, other: Fetched) {
        self.chunks.extend(other.chunks);
    }

    /// Adds a range fetched elsewhere (e.g. asynchronously).
    pub(crate) fn push(&mut self, range: Range, bytes: Result<Bytes, String>) {
        self.chunks.push((range, bytes));
    }

    /// The bytes `[start, start + len)`, if one fetched range holds them all.
    pub(crate) fn get(&self, start: u64, len: u64) -> Result<Bytes, String> {
        let end = start.saturating_add(len);
        for (r, b) in &self.chunks {
            if start >= r.start && end <= r.end {
                return match b {
                    Ok(bytes) => {
                        let off = (start - r.start) as usize;
                        Ok(bytes.slice(off..off + len as usize))
                    }
                    Err(e) => Err(e.clone()),
                };
            }
        }
        Err(format!("bytes {start}..{end} were not read"))
    }
}

/// One ranged read, checked to return exactly what was asked.
pub(crate) fn read_range<R: ChunkReader>(reader: &R, r: Range) -> Result<Bytes, ReadError> {
    let len = usize::try_from(r.end.saturating_sub(r.start)).map_err(|_| ReadError::TooLarge {
        start: r.start,
        end: r.end,
    })?;
    let b = reader.get_bytes(r.start, len).map_err(ReadError::Parquet)?;
    if b.len() == len {
        Ok(b)
    } else {
        Err(ReadError::Short {
            start: r.start,
            wanted: len as u64,
            got: b.len() as u64,
        })
    }
}
