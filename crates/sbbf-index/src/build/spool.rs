//! The spool of a build: a temporary file holding the bitsets read, and the groups written
//! from it, a chunk of stripes at a time.

use super::{io_err, Col};
use crate::format::{ColumnEntry, Entry, Group};
use crate::report::{BuildReport, ColumnReport, GroupReport};
use crate::table::write_all;
use crate::Error;
use sbbf_parquet::source::read_at;
use std::collections::BTreeMap;
use std::io::Write;

/// Where a bitset is in the [`Spool`], and the FPP its bits give.
#[derive(Debug, Clone, Copy)]
pub(super) struct Spooled {
    pub(super) at: u64,
    pub(super) len: usize,
    pub(super) fpp: f32,
}

/// A temporary file holding the bitsets read, so that a build's memory does not grow with the
/// table: only one group's chunk of stripes is in memory while the index is written.
pub(super) struct Spool {
    file: std::fs::File,
    len: u64,
}

impl Spool {
    pub(super) fn new() -> std::io::Result<Spool> {
        Ok(Spool {
            file: tempfile::tempfile()?,
            len: 0,
        })
    }

    pub(super) fn put(&mut self, bits: &[u8]) -> std::io::Result<Spooled> {
        let fpp = sbbf::SbbfRef::new(bits)
            .map(|v| v.estimated_fpp() as f32)
            .unwrap_or(1.0);
        write_at(&self.file, bits, self.len)?;
        let at = self.len;
        self.len += bits.len() as u64;
        Ok(Spooled {
            at,
            len: bits.len(),
            fpp,
        })
    }

    pub(super) fn read(&self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
        read_at(&self.file, buf, at)
    }
}

#[cfg(unix)]
fn write_at(file: &std::fs::File, buf: &[u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, at)
}

#[cfg(windows)]
fn write_at(file: &std::fs::File, mut buf: &[u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        let n = file.seek_write(buf, at)?;
        buf = &buf[n..];
        at += n as u64;
    }
    Ok(())
}

/// Bytes of stripes assembled in memory at once while writing a group (tiny in unit tests, so
/// that groups are written in many chunks).
#[cfg(not(test))]
const CHUNK_BYTES: usize = 64 << 20;
#[cfg(test)]
const CHUNK_BYTES: usize = 96;

/// Writes each column's groups to `w` from `at` on (advanced past them): entries of one
/// filter size form a group, laid out in stripes a chunk of blocks at a time from the
/// spool. Returns the columns' directory entries (`n_files` files) and adds their reports.
pub(super) fn write_groups(
    w: &mut impl Write,
    spool: &Spool,
    cols: BTreeMap<String, Col>,
    n_files: usize,
    at: &mut u64,
    report: &mut BuildReport,
) -> Result<Vec<ColumnEntry>, Error> {
    let io = io_err;
    let mut columns = Vec::with_capacity(cols.len());
    for (path, (file_types, mut entries)) in cols {
        entries.sort_by_key(|e| (e.3.len, e.0, e.1));
        let mut groups = Vec::new();
        let mut rep = ColumnReport {
            column: path.clone(),
            entries: entries.len(),
            ..ColumnReport::default()
        };
        let mut start = 0;
        while start < entries.len() {
            let size = entries[start].3.len;
            let end = start
                + entries[start..]
                    .iter()
                    .take_while(|e| e.3.len == size)
                    .count();
            let members = &entries[start..end];
            let blocks = size / 32;
            let mut crc = crc32fast::Hasher::new();
            // Stripes a chunk of blocks at a time: each entry's blocks [j0, j1) are one read
            // of the spool, so memory stays at one chunk whatever the table's size.
            let e_n = members.len();
            let per_chunk = (CHUNK_BYTES / (32 * e_n)).max(1);
            let mut j0 = 0;
            while j0 < blocks {
                let j1 = (j0 + per_chunk).min(blocks);
                let width = (j1 - j0) * 32;
                let mut chunk = vec![0u8; width * e_n];
                let mut one = vec![0u8; width];
                for (e, m) in members.iter().enumerate() {
                    spool
                        .read(m.3.at + (j0 * 32) as u64, &mut one)
                        .map_err(io)?;
                    for j in 0..j1 - j0 {
                        let to = (j * e_n + e) * 32;
                        chunk[to..to + 32].copy_from_slice(&one[j * 32..j * 32 + 32]);
                    }
                }
                for stripe in chunk.chunks_exact(32 * e_n) {
                    let sc = crc32fast::hash(stripe);
                    write_all(w, &mut crc, stripe).map_err(io)?;
                    write_all(w, &mut crc, &sc.to_le_bytes()).map_err(io)?;
                }
                j0 = j1;
            }
            let len = blocks as u64 * (32 * members.len() as u64 + 4);
            let group = Group {
                blocks: blocks as u32,
                entries: members
                    .iter()
                    .map(|m| Entry {
                        file: m.0 as u32,
                        row_group: m.1 as u32,
                        folds: m.2,
                        fpp: m.3.fpp,
                    })
                    .collect(),
                offset: *at,
                len,
                crc: crc.finalize(),
            };
            rep.folded += members.iter().filter(|m| m.2 > 0).count();
            rep.groups.push(GroupReport {
                blocks: group.blocks,
                entries: members.len(),
                bytes: len,
                max_fpp: group.max_fpp(),
            });
            *at += len;
            groups.push(group);
            start = end;
        }
        report.columns.push(rep);
        columns.push(ColumnEntry {
            path,
            file_types: (0..n_files).map(|f| file_types.get(&f).copied()).collect(),
            groups,
        });
    }
    Ok(columns)
}
