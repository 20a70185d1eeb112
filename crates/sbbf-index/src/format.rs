//! The index file's bytes (`docs/index-format.md`): a 16-byte header, the group sections, the
//! directory, and a 40-byte trailer. Everything read is untrusted: every count is checked
//! against the bytes left before anything is allocated for it, every offset against the file.

use crate::IndexError;
use parquet::basic::Type as PhysicalType;
use sbbf_parquet::column::{ColumnType, Unit, ValueKind};

/// The first and last eight bytes of an index file.
pub const MAGIC: &[u8; 8] = b"SBBFIDX\0";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 1;
/// Bytes of the header: magic, version, reserved.
pub const HEADER_LEN: u64 = 16;
/// Bytes of the trailer: directory offset, length, index length, version, CRC, magic.
pub const TRAILER_LEN: u64 = 40;
/// The largest directory a reader accepts (a bound on what a hostile trailer can make it read).
pub const MAX_DIRECTORY: u64 = 1 << 30;

/// How a file looked when it was indexed: what a listing shows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    /// A local file's modification time, nanoseconds since 1970.
    Mtime(i64),
    /// An object's last-modified time (milliseconds since 1970) and ETag, as the store lists
    /// them.
    Object {
        /// Last-modified, milliseconds since 1970.
        last_modified_ms: i64,
        /// The ETag, when the store gives one.
        etag: Option<String>,
    },
}

/// One data file of the table, as indexed.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    /// Path relative to the table root, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time or ETag.
    pub stamp: Stamp,
    /// Rows per row group; `None` when the file could not be read at build time (it is then
    /// covered by nothing and always probed directly).
    pub row_counts: Option<Vec<i64>>,
}

/// One (file, row group) filter inside a group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// Index into [`Directory::files`].
    pub file: u32,
    /// Row group of that file.
    pub row_group: u32,
    /// How many times the file's filter was halved to fit the group (0: its own size).
    pub folds: u8,
    /// The FPP its bits give a random absent value, at the group's size.
    pub fpp: f32,
}

/// Entries of one column whose filters share one block count, laid out transposed.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Blocks of every entry's filter (`z`).
    pub blocks: u32,
    /// The entries, in file then row-group order.
    pub entries: Vec<Entry>,
    /// Offset of the group's section in the index.
    pub offset: u64,
    /// Length of the section: `blocks * (32 * entries + 4)`.
    pub len: u64,
    /// CRC-32 of the whole section.
    pub crc: u32,
}

impl Group {
    /// Bytes of one stripe: block `j` of every entry, then the stripe's CRC-32.
    pub fn stripe_len(&self) -> u64 {
        32 * self.entries.len() as u64 + 4
    }

    /// The byte range of stripe `j` in the index.
    pub fn stripe(&self, j: u64) -> std::ops::Range<u64> {
        let start = self.offset + j * self.stripe_len();
        start..start + self.stripe_len()
    }

    /// The largest FPP among the entries.
    pub fn max_fpp(&self) -> f64 {
        self.entries
            .iter()
            .map(|e| e.fpp as f64)
            .fold(0.0, f64::max)
    }
}

/// One indexed column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnEntry {
    /// The leaf's dotted path (as [`ColumnType::path`] writes it).
    pub path: String,
    /// Per file: index into [`Directory::types`] of the column's type there, `None` when the
    /// file has no such leaf (or could not be read).
    pub file_types: Vec<Option<u32>>,
    /// The groups.
    pub groups: Vec<Group>,
}

/// Everything but the filters' bits: what a probe reads first.
#[derive(Debug, Clone, PartialEq)]
pub struct Directory {
    /// When the index was written, milliseconds since 1970.
    pub created_ms: u64,
    /// The table root as given to the build (for people; entries are relative).
    pub root: String,
    /// The FPP the build folded to (`--fpp`), if any.
    pub target_fpp: Option<f64>,
    /// Whether the columns were chosen with `-c` (else: every column with filters).
    pub explicit_columns: bool,
    /// The files, sorted by path.
    pub files: Vec<FileEntry>,
    /// Column types, shared by files.
    pub types: Vec<ColumnType>,
    /// The columns.
    pub columns: Vec<ColumnEntry>,
}

impl Directory {
    /// Each recorded file's position in [`Directory::files`], by its path below the root.
    pub fn by_path(&self) -> std::collections::HashMap<&str, usize> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.as_str(), i))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Writing.

/// Appends LEB128 varints, strings and fixed-width numbers.
#[derive(Default)]
pub(crate) struct Out(pub(crate) Vec<u8>);

impl Out {
    pub(crate) fn var(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }
    pub(crate) fn zig(&mut self, v: i64) {
        self.var(((v << 1) ^ (v >> 63)) as u64);
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.var(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn flag(&mut self, v: bool) {
        self.0.push(v as u8);
    }
}

/// The 16 header bytes.
pub(crate) fn header() -> Vec<u8> {
    let mut o = Out::default();
    o.0.extend_from_slice(MAGIC);
    o.u32(VERSION);
    o.u32(0);
    o.0
}

/// The directory's bytes.
pub(crate) fn encode_directory(d: &Directory) -> Vec<u8> {
    let mut o = Out::default();
    o.var(d.created_ms);
    o.str(&d.root);
    match d.target_fpp {
        Some(p) => {
            o.u8(1);
            o.u64(p.to_bits());
        }
        None => o.u8(0),
    }
    o.u8(u8::from(d.explicit_columns));
    o.var(d.files.len() as u64);
    for f in &d.files {
        o.str(&f.path);
        o.var(f.size);
        match &f.stamp {
            Stamp::Mtime(ns) => {
                o.u8(0);
                o.zig(*ns);
            }
            Stamp::Object {
                last_modified_ms,
                etag,
            } => {
                o.u8(1);
                o.zig(*last_modified_ms);
                match etag {
                    Some(e) => {
                        o.u8(1);
                        o.str(e);
                    }
                    None => o.u8(0),
                }
            }
        }
        match &f.row_counts {
            Some(rows) => {
                o.u8(1);
                o.var(rows.len() as u64);
                for r in rows {
                    o.zig(*r);
                }
            }
            None => o.u8(0),
        }
    }
    o.var(d.types.len() as u64);
    for t in &d.types {
        encode_type(&mut o, t);
    }
    o.var(d.columns.len() as u64);
    for c in &d.columns {
        o.str(&c.path);
        // Per file: 0 = no such leaf, else type + 1.
        for t in &c.file_types {
            o.var(t.map_or(0, |t| t as u64 + 1));
        }
        o.var(c.groups.len() as u64);
        for g in &c.groups {
            o.var(g.blocks as u64);
            o.u64(g.offset);
            o.u64(g.len);
            o.u32(g.crc);
            o.var(g.entries.len() as u64);
            for e in &g.entries {
                o.var(e.file as u64);
                o.var(e.row_group as u64);
                o.u8(e.folds);
                o.u32(e.fpp.to_bits());
            }
        }
    }
    o.0
}

fn encode_type(o: &mut Out, t: &ColumnType) {
    o.str(&t.path);
    o.u8(physical_code(t.physical));
    o.zig(t.type_length as i64);
    let unit = |u: Unit| match u {
        Unit::Millis => 0u8,
        Unit::Micros => 1,
        Unit::Nanos => 2,
    };
    match t.kind {
        ValueKind::Boolean => o.u8(0),
        ValueKind::Int { bits, signed } => {
            o.u8(1);
            o.u8(bits);
            o.u8(u8::from(signed));
        }
        ValueKind::Date => o.u8(2),
        ValueKind::Time(u) => {
            o.u8(3);
            o.u8(unit(u));
        }
        ValueKind::Timestamp { unit: u, utc } => {
            o.u8(4);
            o.u8(unit(u));
            o.u8(u8::from(utc));
        }
        ValueKind::Decimal { precision, scale } => {
            o.u8(5);
            o.var(precision as u64);
            o.var(scale as u64);
        }
        ValueKind::Float => o.u8(6),
        ValueKind::Double => o.u8(7),
        ValueKind::Float16 => o.u8(8),
        ValueKind::String => o.u8(9),
        ValueKind::Binary => o.u8(10),
        ValueKind::Uuid => o.u8(11),
        ValueKind::Int96 => o.u8(12),
    }
    match &t.logical {
        Some(l) => {
            o.u8(1);
            o.str(l);
        }
        None => o.u8(0),
    }
}

fn physical_code(t: PhysicalType) -> u8 {
    match t {
        PhysicalType::BOOLEAN => 0,
        PhysicalType::INT32 => 1,
        PhysicalType::INT64 => 2,
        PhysicalType::INT96 => 3,
        PhysicalType::FLOAT => 4,
        PhysicalType::DOUBLE => 5,
        PhysicalType::BYTE_ARRAY => 6,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => 7,
    }
}

/// The 40 trailer bytes for a directory at `dir_offset` of `dir_len` bytes.
pub(crate) fn trailer(dir_offset: u64, dir_len: u64, dir_crc: u32) -> Vec<u8> {
    let mut o = Out::default();
    o.u64(dir_offset);
    o.u64(dir_len);
    o.u64(dir_offset + dir_len + TRAILER_LEN);
    o.u32(VERSION);
    o.u32(dir_crc);
    o.0.extend_from_slice(MAGIC);
    o.0
}

// ---------------------------------------------------------------------------------------
// Reading.

/// Where the directory is, from the trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// Offset of the directory.
    pub dir_offset: u64,
    /// Its length.
    pub dir_len: u64,
    /// Its CRC-32.
    pub dir_crc: u32,
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
    if version != VERSION {
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
    })
}

/// Checks the 16 header bytes.
pub fn check_header(head: &[u8]) -> Result<(), IndexError> {
    if head.len() < HEADER_LEN as usize || &head[..8] != MAGIC {
        return Err(IndexError::Foreign);
    }
    let version = u32::from_le_bytes(head[8..12].try_into().unwrap_or([0; 4]));
    if version != VERSION {
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

/// Decodes and checks a directory (its CRC checked by the caller) of an index whose group
/// sections must lie in `[HEADER_LEN, dir_offset)`.
pub fn parse_directory(bytes: &[u8], dir_offset: u64) -> Result<Directory, IndexError> {
    let mut i = In { b: bytes, at: 0 };
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
    let n_files = i.count(4)?;
    let mut files = Vec::with_capacity(n_files);
    for _ in 0..n_files {
        let path = i.str()?;
        let size = i.var()?;
        let stamp = match i.u8()? {
            0 => Stamp::Mtime(i.zig()?),
            1 => {
                let last_modified_ms = i.zig()?;
                let etag = if i.flag()? { Some(i.str()?) } else { None };
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
        files.push(FileEntry {
            path,
            size,
            stamp,
            row_counts,
        });
    }
    if files.windows(2).any(|w| w[0].path >= w[1].path) {
        return Err(damaged("the files are not sorted by path, or repeat"));
    }
    let n_types = i.count(5)?;
    let mut types = Vec::with_capacity(n_types);
    for _ in 0..n_types {
        types.push(parse_type(&mut i)?);
    }
    let n_columns = i.count(2)?;
    let mut columns = Vec::with_capacity(n_columns);
    let mut sections: Vec<(u64, u64)> = Vec::new();
    for _ in 0..n_columns {
        let path = i.str()?;
        if n_files > i.left() {
            return Err(damaged("the directory ends early"));
        }
        let mut file_types = Vec::with_capacity(n_files);
        for _ in 0..n_files {
            let t = i.small(n_types as u64, "type number")?;
            file_types.push(t.checked_sub(1).map(|t| t as u32));
        }
        let n_groups = i.count(22)?;
        let mut groups = Vec::with_capacity(n_groups);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..n_groups {
            let blocks = i.small((sbbf::MAX_BYTES / 32) as u64, "block count")?;
            if blocks == 0 {
                return Err(damaged("a group of 0 blocks"));
            }
            let (offset, len, crc) = (i.u64()?, i.u64()?, i.u32()?);
            let n_entries = i.count(7)?;
            if n_entries == 0 {
                return Err(damaged("a group without entries"));
            }
            let mut entries = Vec::with_capacity(n_entries);
            if n_files == 0 {
                return Err(damaged("a group in an index without files"));
            }
            for _ in 0..n_entries {
                let file = i.small(n_files.saturating_sub(1) as u64, "file number")? as usize;
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
            let want = (n_entries as u64)
                .checked_mul(32)
                .and_then(|s| s.checked_add(4))
                .and_then(|s| s.checked_mul(blocks));
            if want != Some(len) {
                return Err(damaged(format!(
                    "a group of {blocks} blocks and {n_entries} entries cannot be {len} bytes"
                )));
            }
            if offset < HEADER_LEN || offset.checked_add(len).is_none_or(|e| e > dir_offset) {
                return Err(damaged(format!(
                    "a group at {offset}, {len} bytes, lies outside the data area"
                )));
            }
            sections.push((offset, len));
            groups.push(Group {
                blocks: blocks as u32,
                entries,
                offset,
                len,
                crc,
            });
        }
        columns.push(ColumnEntry {
            path,
            file_types,
            groups,
        });
    }
    if i.left() != 0 {
        return Err(damaged("bytes after the directory's end"));
    }
    sections.sort_unstable();
    if sections.windows(2).any(|w| w[0].0 + w[0].1 > w[1].0) {
        return Err(damaged("group sections overlap"));
    }
    Ok(Directory {
        created_ms,
        root,
        target_fpp,
        explicit_columns,
        files,
        types,
        columns,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Directory {
        Directory {
            created_ms: 5,
            root: "t/".into(),
            target_fpp: Some(0.01),
            explicit_columns: false,
            files: vec![
                FileEntry {
                    path: "a.parquet".into(),
                    size: 100,
                    stamp: Stamp::Mtime(-3),
                    row_counts: Some(vec![10, 20]),
                },
                FileEntry {
                    path: "b.parquet".into(),
                    size: 7,
                    stamp: Stamp::Object {
                        last_modified_ms: 9,
                        etag: Some("\"x\"".into()),
                    },
                    row_counts: None,
                },
            ],
            types: vec![ColumnType {
                path: "id".into(),
                physical: PhysicalType::INT64,
                type_length: -1,
                kind: ValueKind::Decimal {
                    precision: 18,
                    scale: 2,
                },
                logical: Some("DECIMAL(18,2)".into()),
            }],
            columns: vec![ColumnEntry {
                path: "id".into(),
                file_types: vec![Some(0), None],
                groups: vec![Group {
                    blocks: 2,
                    entries: vec![Entry {
                        file: 0,
                        row_group: 1,
                        folds: 1,
                        fpp: 0.5,
                    }],
                    offset: 16,
                    len: 72,
                    crc: 3,
                }],
            }],
        }
    }

    #[test]
    fn directory_round_trip() {
        let d = sample();
        let bytes = encode_directory(&d);
        assert_eq!(parse_directory(&bytes, 88).unwrap(), d);
        // Every truncation is an error, never a panic.
        for n in 0..bytes.len() {
            assert!(parse_directory(&bytes[..n], 88).is_err());
        }
        // Every single-byte change either fails or decodes; it never panics.
        for k in 0..bytes.len() {
            let mut b = bytes.clone();
            b[k] ^= 0xff;
            let _ = parse_directory(&b, 88);
        }
        // The group must lie before the directory.
        assert!(parse_directory(&bytes, 80).is_err());
    }

    /// Random directories (and random edits of a real one) never panic and never allocate
    /// what a count claims: they decode or fail.
    #[test]
    fn hostile_directories() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let good = encode_directory(&sample());
        for _ in 0..20_000 {
            let n = (next() % 200) as usize;
            let bytes: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            let _ = parse_directory(&bytes, 1 << 40);
            let mut b = good.clone();
            for _ in 0..1 + next() % 4 {
                let k = (next() as usize) % b.len();
                b[k] = next() as u8;
            }
            let _ = parse_directory(&b, 1 << 40);
        }
        // A count of files that claims more than the bytes left is refused before allocating.
        let mut b = Out::default();
        b.var(0);
        b.str("");
        b.u8(0);
        b.u8(0);
        b.var(u64::MAX >> 1);
        assert!(matches!(
            parse_directory(&b.0, 1 << 40),
            Err(IndexError::Damaged(_))
        ));
    }

    #[test]
    fn trailer_checks() {
        let t = trailer(100, 20, 7);
        assert_eq!(
            parse_trailer(&t, 160).unwrap(),
            Trailer {
                dir_offset: 100,
                dir_len: 20,
                dir_crc: 7
            }
        );
        assert!(matches!(
            parse_trailer(&t, 159),
            Err(IndexError::Damaged(_))
        ));
        let mut f = t.clone();
        f[39] = b'x';
        assert!(matches!(parse_trailer(&f, 160), Err(IndexError::Foreign)));
        assert!(parse_trailer(&t[..10], 160).is_err());
    }
}
