//! Reading the index's bytes, all untrusted: the trailer and header, the head, the file table
//! and column sections, and a stripe's checksum.

use super::types::*;
use super::{HEADER_LEN, MAGIC, MAX_DIRECTORY, READ_VERSIONS, TRAILER_LEN};
use crate::IndexError;
use parquet::basic::Type as PhysicalType;
use sbbf_parquet::format::column::{ColumnType, Unit, ValueKind};

/// Where the head is, from the trailer (the head opens the directory: file table and column
/// sections lie before it, where it says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// Offset of the head.
    pub dir_offset: u64,
    /// Its length.
    pub dir_len: u64,
    /// Its CRC-32.
    pub dir_crc: u32,
    /// The format version the index was written in.
    pub version: u32,
}

/// Reads the trailer (the last 40 bytes of an index of `index_len` bytes) and checks it
/// against the index's length.
pub fn parse_trailer(tail: &[u8], index_len: u64) -> Result<Trailer, IndexError> {
    let bad = |why: String| IndexError::Damaged(why);
    if index_len < HEADER_LEN + TRAILER_LEN || tail.len() < TRAILER_LEN as usize {
        return Err(bad(format!("{index_len} bytes is too short for an index")));
    }
    let t = &tail[tail.len() - TRAILER_LEN as usize..];
    if &t[32..40] != MAGIC {
        return Err(IndexError::Foreign);
    }
    let u64_at = |i: usize| u64::from_le_bytes(t[i..i + 8].try_into().unwrap_or([0; 8]));
    let u32_at = |i: usize| u32::from_le_bytes(t[i..i + 4].try_into().unwrap_or([0; 4]));
    let (dir_offset, dir_len, len, version, dir_crc) =
        (u64_at(0), u64_at(8), u64_at(16), u32_at(24), u32_at(28));
    if !READ_VERSIONS.contains(&version) {
        return Err(IndexError::Version(version));
    }
    if len != index_len {
        return Err(bad(format!(
            "the trailer says {len} bytes, the index has {index_len} (truncated or appended to)"
        )));
    }
    if dir_len > MAX_DIRECTORY
        || dir_offset < HEADER_LEN
        || dir_offset.checked_add(dir_len) != Some(index_len - TRAILER_LEN)
    {
        return Err(bad(format!(
            "directory at {dir_offset}, {dir_len} bytes, does not fit an index of {index_len} bytes"
        )));
    }
    Ok(Trailer {
        dir_offset,
        dir_len,
        dir_crc,
        version,
    })
}

/// Checks the 16 header bytes.
pub fn check_header(head: &[u8]) -> Result<(), IndexError> {
    if head.len() < HEADER_LEN as usize || &head[..8] != MAGIC {
        return Err(IndexError::Foreign);
    }
    let version = u32::from_le_bytes(head[8..12].try_into().unwrap_or([0; 4]));
    if !READ_VERSIONS.contains(&version) {
        return Err(IndexError::Version(version));
    }
    Ok(())
}

/// A bounds-checked reader over untrusted bytes.
pub(crate) struct In<'a> {
    b: &'a [u8],
    at: usize,
}

fn damaged(why: impl Into<String>) -> IndexError {
    IndexError::Damaged(why.into())
}

impl<'a> In<'a> {
    pub(crate) fn new(b: &'a [u8]) -> In<'a> {
        In { b, at: 0 }
    }
    pub(crate) fn left(&self) -> usize {
        self.b.len() - self.at
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], IndexError> {
        if n > self.left() {
            return Err(damaged("the directory ends early"));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, IndexError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32, IndexError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or([0; 4]),
        ))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, IndexError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or([0; 8]),
        ))
    }
    pub(crate) fn var(&mut self) -> Result<u64, IndexError> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            if i == 9 && b > 1 {
                break;
            }
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(damaged("a number in the directory is too long"))
    }
    pub(crate) fn zig(&mut self) -> Result<i64, IndexError> {
        let v = self.var()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }
    /// A count of items that take at least `min_bytes` each: never more than the bytes left
    /// allow, so a hostile count cannot make us allocate.
    pub(crate) fn count(&mut self, min_bytes: usize) -> Result<usize, IndexError> {
        let n = self.var()?;
        if n > (self.left() / min_bytes.max(1)) as u64 {
            return Err(damaged(format!(
                "a count of {n} does not fit the {} bytes left",
                self.left()
            )));
        }
        Ok(n as usize)
    }
    pub(crate) fn small(&mut self, max: u64, what: &str) -> Result<u64, IndexError> {
        let v = self.var()?;
        if v > max {
            return Err(damaged(format!("{what} {v} is out of range")));
        }
        Ok(v)
    }
    pub(crate) fn str(&mut self) -> Result<String, IndexError> {
        let n = self.var()?;
        if n > self.left() as u64 {
            return Err(damaged("a string runs past the directory"));
        }
        String::from_utf8(self.take(n as usize)?.to_vec())
            .map_err(|_| damaged("a string is not UTF-8"))
    }
    pub(crate) fn flag(&mut self) -> Result<bool, IndexError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(damaged(format!("flag byte {b}"))),
        }
    }
}

impl In<'_> {
    fn section(&mut self) -> Result<Section, IndexError> {
        Ok(Section {
            offset: self.u64()?,
            len: self.u64()?,
            crc: self.u32()?,
        })
    }
}

/// Decodes and checks the head (its CRC checked by the caller) of an index whose head starts
/// at `head_offset`: every section it names lies in `[HEADER_LEN, head_offset)` and no two
/// overlap.
pub fn parse_head(bytes: &[u8], head_offset: u64) -> Result<Head, IndexError> {
    parse_head_of(bytes, head_offset, super::VERSION)
}

/// [`parse_head`] of a head written in format `head_version`.
pub fn parse_head_of(
    bytes: &[u8],
    head_offset: u64,
    head_version: u32,
) -> Result<Head, IndexError> {
    let mut i = In::new(bytes);
    let created_ms = i.var()?;
    let root = i.str()?;
    let target_fpp = if i.flag()? {
        let p = f64::from_bits(i.u64()?);
        if !(p > 0.0 && p < 1.0) {
            return Err(damaged(format!("target FPP {p}")));
        }
        Some(p)
    } else {
        None
    };
    let explicit_columns = i.flag()?;
    let n_files = i.var()?;
    let files = i.section()?;
    // Each file takes at least six bytes of the file table.
    if n_files > files.len / 6 {
        return Err(damaged(format!(
            "{n_files} files cannot fit a file table of {} bytes",
            files.len
        )));
    }
    let n_files = n_files as usize;
    let n_schemas = i.count(8)?;
    let mut schemas = Vec::with_capacity(n_schemas);
    for _ in 0..n_schemas {
        schemas.push(i.u64()?);
    }
    let n_types = i.count(5)?;
    let mut types = Vec::with_capacity(n_types);
    for _ in 0..n_types {
        types.push(parse_type(&mut i)?);
    }
    let n_columns = i.count(23)?;
    let mut columns = Vec::with_capacity(n_columns);
    let mut sections = vec![files];
    for _ in 0..n_columns {
        let path = i.str()?;
        let section = i.section()?;
        let n = i.count(1)?;
        let mut col_types = Vec::with_capacity(n);
        for _ in 0..n {
            col_types.push(i.small(n_types.saturating_sub(1) as u64, "type number")? as u32);
        }
        if n_types == 0 && n > 0 || col_types.windows(2).any(|w| w[0] >= w[1]) {
            return Err(damaged(format!("the types of column {path}")));
        }
        let n_groups = i.count(22)?;
        if n_groups > 0 && n_files == 0 {
            return Err(damaged("a group in an index without files"));
        }
        let mut groups = Vec::with_capacity(n_groups);
        let mut entries_total = 0u64;
        for _ in 0..n_groups {
            let blocks = i.small((sbbf::MAX_BYTES / 32) as u64, "block count")?;
            if blocks == 0 {
                return Err(damaged("a group of 0 blocks"));
            }
            let entries = i.var()?;
            let g = i.section()?;
            // An entry takes at least seven bytes of the column's section.
            entries_total = entries_total.saturating_add(entries);
            if entries == 0 || entries_total > section.len / 7 {
                return Err(damaged(format!(
                    "a group of {entries} entries in column {path}"
                )));
            }
            let want = entries
                .checked_mul(32)
                .and_then(|s| s.checked_add(4))
                .and_then(|s| s.checked_mul(blocks));
            if want != Some(g.len) {
                return Err(damaged(format!(
                    "a group of {blocks} blocks and {entries} entries cannot be {} bytes",
                    g.len
                )));
            }
            sections.push(g);
            groups.push(GroupAt {
                blocks: blocks as u32,
                entries: entries as usize,
                section: g,
            });
        }
        sections.push(section);
        columns.push(ColumnHead {
            path,
            section,
            types: col_types,
            groups,
        });
    }
    // Format 4 heads may end with the table version they were built from.
    let table = match i.left() {
        0 => None,
        _ => Some(parse_table_at(&mut i, head_version)?),
    };
    if i.left() != 0 {
        return Err(damaged("bytes after the head's end"));
    }
    for s in &sections {
        if s.len > 0
            && (s.offset < HEADER_LEN
                || s.offset.checked_add(s.len).is_none_or(|e| e > head_offset))
        {
            return Err(damaged(format!(
                "a section at {}, {} bytes, lies outside the index's data",
                s.offset, s.len
            )));
        }
    }
    sections.retain(|s| s.len > 0);
    sections.sort_unstable_by_key(|s| s.offset);
    if sections
        .windows(2)
        .any(|w| w[0].offset + w[0].len > w[1].offset)
    {
        return Err(damaged("sections overlap"));
    }
    Ok(Head {
        created_ms,
        root,
        target_fpp,
        explicit_columns,
        n_files,
        files,
        schemas,
        types,
        columns,
        table,
    })
}

/// The bytes of `s` out of `bytes` (which hold the index from offset `from`), checked against
/// the section's CRC.
pub fn section_bytes<'a>(bytes: &'a [u8], from: u64, s: &Section) -> Result<&'a [u8], IndexError> {
    let got = s
        .offset
        .checked_sub(from)
        .and_then(|a| Some((a as usize, usize::try_from(s.len).ok()?)))
        .and_then(|(a, n)| bytes.get(a..a.checked_add(n)?))
        .ok_or_else(|| damaged("a section was not read"))?;
    if crc32fast::hash(got) != s.crc {
        return Err(damaged("a section's checksum does not match"));
    }
    Ok(got)
}

/// The table version a head ends with (format 4), and what later formats put after it.
fn parse_table_at(i: &mut In<'_>, head_version: u32) -> Result<TableAt, IndexError> {
    let format = i.str()?;
    let version = i.zig()?;
    if !matches!(format.as_str(), "delta" | "iceberg") {
        return Err(damaged(format!("table format `{format}`")));
    }
    let (mut names, mut mark, mut manifests) = (None, None, None);
    if head_version >= 5 {
        names = Some(i.str()?).filter(|n| !n.is_empty());
        let size = i.var()?;
        if size > 0 {
            mark = Some(sbbf_lake::since::CommitMark {
                size: size - 1,
                etag: i.str()?,
            });
        }
        if i.flag()? {
            // Each location takes at least its length's byte.
            let n = i.count(1)?;
            let mut m = Vec::with_capacity(n);
            for _ in 0..n {
                m.push(i.str()?);
            }
            manifests = Some(m);
        }
    }
    let (mut metadata, mut list) = (None, None);
    if head_version >= 6 {
        metadata = Some(i.str()?).filter(|m| !m.is_empty());
        list = Some(i.str()?).filter(|l| !l.is_empty());
    }
    Ok(TableAt {
        format,
        version,
        names,
        mark,
        manifests,
        metadata,
        list,
    })
}

/// Decodes the file table (its CRC checked by the caller) of `n_files` files.
pub fn parse_files(bytes: &[u8], head: &Head) -> Result<Vec<FileEntry>, IndexError> {
    let n_files = head.n_files;
    let mut i = In::new(bytes);
    let mut files: Vec<FileEntry> = Vec::with_capacity(n_files);
    let mut path: Vec<u8> = Vec::new();
    for _ in 0..n_files {
        let shared = i.small(path.len() as u64, "shared path prefix")? as usize;
        let n = i.var()?;
        if n > i.left() as u64 {
            return Err(damaged("a path runs past the file table"));
        }
        path.truncate(shared);
        path.extend_from_slice(i.take(n as usize)?);
        let p = std::str::from_utf8(&path)
            .map_err(|_| damaged("a path is not UTF-8"))?
            .to_string();
        let size = i.var()?;
        let stamp = match i.u8()? {
            2 => {
                let ino = i.var()?;
                let mtime_ns = i.zig()?;
                let ctime_ns = mtime_ns.wrapping_add(i.zig()?);
                Stamp::Local {
                    ino,
                    mtime_ns,
                    ctime_ns,
                }
            }
            1 => {
                let last_modified_ms = i.zig()?;
                let etag = if i.flag()? { Some(i.u64()?) } else { None };
                Stamp::Object {
                    last_modified_ms,
                    etag,
                }
            }
            b => return Err(damaged(format!("stamp kind {b}"))),
        };
        let row_counts = if i.flag()? {
            let n = i.count(1)?;
            let mut rows = Vec::with_capacity(n);
            for _ in 0..n {
                rows.push(i.zig()?);
            }
            Some(rows)
        } else {
            None
        };
        let schema = match i.small(head.schemas.len() as u64, "schema number")? {
            0 => None,
            n => Some(head.schemas[n as usize - 1]),
        };
        if files.last().is_some_and(|f| f.path >= p) {
            return Err(damaged("the files are not sorted by path, or repeat"));
        }
        files.push(FileEntry {
            path: p,
            size,
            stamp,
            row_counts,
            schema,
        });
    }
    if i.left() != 0 {
        return Err(damaged("bytes after the file table's end"));
    }
    Ok(files)
}

/// Decodes a column's section (its CRC checked by the caller) against the head's description
/// of it and the files.
pub fn parse_column(
    bytes: &[u8],
    head: &ColumnHead,
    files: &[FileEntry],
) -> Result<ColumnEntry, IndexError> {
    let mut i = In::new(bytes);
    let path = &head.path;
    if files.len() > i.left() {
        return Err(damaged("a column's section ends early"));
    }
    let mut file_types = Vec::with_capacity(files.len());
    for _ in 0..files.len() {
        let t = match i.var()? {
            0 => None,
            t => Some(
                u32::try_from(t - 1)
                    .ok()
                    .filter(|t| head.types.binary_search(t).is_ok())
                    .ok_or_else(|| damaged(format!("a file's type in column {path}")))?,
            ),
        };
        file_types.push(t);
    }
    let mut seen = std::collections::HashSet::new();
    let mut groups = Vec::with_capacity(head.groups.len());
    for g in &head.groups {
        let mut entries = Vec::with_capacity(g.entries);
        let mut last = 0i64;
        for _ in 0..g.entries {
            let file = last
                .checked_add(i.zig()?)
                .filter(|f| (0..files.len() as i64).contains(f))
                .ok_or_else(|| damaged("an entry names no file"))?;
            last = file;
            let file = file as usize;
            let rg = i.var()?;
            let folds = i.u8()?;
            let fpp = f32::from_bits(i.u32()?);
            let rgs = files[file].row_counts.as_ref().map_or(0, |r| r.len());
            if rg >= rgs as u64 || file_types[file].is_none() {
                return Err(damaged(format!(
                    "entry (file {file}, row group {rg}) names no indexed row group"
                )));
            }
            if !seen.insert((file, rg)) {
                return Err(damaged(format!(
                    "entry (file {file}, row group {rg}) appears twice in column {path}"
                )));
            }
            if !(0.0..=1.0).contains(&fpp) || folds > 30 {
                return Err(damaged("an entry's FPP or fold count is out of range"));
            }
            entries.push(Entry {
                file: file as u32,
                row_group: rg as u32,
                folds,
                fpp,
            });
        }
        groups.push(Group {
            blocks: g.blocks,
            entries,
            offset: g.section.offset,
            len: g.section.len,
            crc: g.section.crc,
        });
    }
    if i.left() != 0 {
        return Err(damaged("bytes after a column section's end"));
    }
    Ok(ColumnEntry {
        path: path.clone(),
        file_types,
        groups,
    })
}

impl Directory {
    /// The directory of `head` with its `files` and (some of) its `columns`.
    pub fn of(head: &Head, files: Vec<FileEntry>, columns: Vec<ColumnEntry>) -> Directory {
        Directory {
            created_ms: head.created_ms,
            root: head.root.clone(),
            target_fpp: head.target_fpp,
            explicit_columns: head.explicit_columns,
            files,
            types: head.types.clone(),
            columns,
            table: head.table.clone(),
        }
    }
}

/// Decodes everything after the group sections: `bytes` hold the index from offset `from` up
/// to the trailer (or all of it), `head` is the head read from them.
pub fn parse_directory(bytes: &[u8], from: u64, head: &Head) -> Result<Directory, IndexError> {
    let files = parse_files(section_bytes(bytes, from, &head.files)?, head)?;
    let columns = head
        .columns
        .iter()
        .map(|c| parse_column(section_bytes(bytes, from, &c.section)?, c, &files))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Directory::of(head, files, columns))
}

fn parse_type(i: &mut In<'_>) -> Result<ColumnType, IndexError> {
    let path = i.str()?;
    let physical = match i.u8()? {
        0 => PhysicalType::BOOLEAN,
        1 => PhysicalType::INT32,
        2 => PhysicalType::INT64,
        3 => PhysicalType::INT96,
        4 => PhysicalType::FLOAT,
        5 => PhysicalType::DOUBLE,
        6 => PhysicalType::BYTE_ARRAY,
        7 => PhysicalType::FIXED_LEN_BYTE_ARRAY,
        b => return Err(damaged(format!("physical type {b}"))),
    };
    let type_length = i32::try_from(i.zig()?).map_err(|_| damaged("type length"))?;
    let unit = |b: u8| match b {
        0 => Ok(Unit::Millis),
        1 => Ok(Unit::Micros),
        2 => Ok(Unit::Nanos),
        _ => Err(damaged(format!("time unit {b}"))),
    };
    let kind = match i.u8()? {
        0 => ValueKind::Boolean,
        1 => ValueKind::Int {
            bits: i.u8()?,
            signed: i.flag()?,
        },
        2 => ValueKind::Date,
        3 => ValueKind::Time(unit(i.u8()?)?),
        4 => ValueKind::Timestamp {
            unit: unit(i.u8()?)?,
            utc: i.flag()?,
        },
        5 => ValueKind::Decimal {
            precision: i.small(u32::MAX as u64, "precision")? as u32,
            scale: i.small(u32::MAX as u64, "scale")? as u32,
        },
        6 => ValueKind::Float,
        7 => ValueKind::Double,
        8 => ValueKind::Float16,
        9 => ValueKind::String,
        10 => ValueKind::Binary,
        11 => ValueKind::Uuid,
        12 => ValueKind::Int96,
        b => return Err(damaged(format!("value kind {b}"))),
    };
    let logical = if i.flag()? { Some(i.str()?) } else { None };
    Ok(ColumnType {
        path,
        physical,
        type_length,
        kind,
        logical,
    })
}

/// Checks one stripe read from the index: `bytes` is block `j` of every entry followed by its
/// CRC-32.
pub fn check_stripe(bytes: &[u8]) -> Result<&[u8], IndexError> {
    if bytes.len() < 4 {
        return Err(damaged("a stripe shorter than its checksum"));
    }
    let (data, crc) = bytes.split_at(bytes.len() - 4);
    let want = u32::from_le_bytes(crc.try_into().unwrap_or([0; 4]));
    if crc32fast::hash(data) != want {
        return Err(damaged("a stripe's checksum does not match"));
    }
    Ok(data)
}
