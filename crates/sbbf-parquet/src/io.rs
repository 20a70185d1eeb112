//! Reading byte ranges: planning, coalescing and fetching them in as few requests as possible.

use crate::ReadError;
use bytes::Bytes;
use parquet::file::reader::ChunkReader;

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
#[derive(Debug, Default)]
pub(crate) struct Fetched {
    chunks: Vec<(Range, Result<Bytes, String>)>,
}

impl Fetched {
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
