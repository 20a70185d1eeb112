//! The index file's bytes (`docs/index-format.md`): a 16-byte header, the group sections, the
//! file table, one section per column, the head, and a 40-byte trailer. Everything read is untrusted: every count is checked
//! against the bytes left before anything is allocated for it, every offset against the file.

use crate::IndexError;
use parquet::basic::Type as PhysicalType;
use sbbf_parquet::format::column::{ColumnType, Unit, ValueKind};

/// The first and last eight bytes of an index file.
pub const MAGIC: &[u8; 8] = b"SBBFIDX\0";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 3;
/// Bytes of the header: magic, version, reserved.
pub const HEADER_LEN: u64 = 16;
/// Bytes of the trailer: head offset, length, index length, version, the head's CRC, magic.
pub const TRAILER_LEN: u64 = 40;
/// The largest head a reader accepts (a bound on what a hostile trailer can make it read).
pub const MAX_DIRECTORY: u64 = 1 << 30;

/// How a file looked when it was indexed: what a listing shows of it.
///
/// A stamp must change whenever the file's content may have. Size and modification time alone
/// do not: `cp -p`, `rsync -a`, `tar x` and `touch -r` set the time back, and `mv` keeps it.
/// Locally the inode and the status-change time (ctime, which no user tool can set) are kept
/// too: rewriting, restoring, renaming or swapping a file changes one of them. On a store the
/// ETag is what changes with content; an object listed without one is never trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    /// A local file's identity and times.
    Local {
        /// Its inode number.
        ino: u64,
        /// Modification time, nanoseconds since 1970.
        mtime_ns: i64,
        /// Status-change time, nanoseconds since 1970: set by the kernel on every write,
        /// rename, link or `touch`, and never settable to another value by a user.
        ctime_ns: i64,
    },
    /// An object's last-modified time (milliseconds since 1970) and ETag, as the store lists
    /// them.
    Object {
        /// Last-modified, milliseconds since 1970.
        last_modified_ms: i64,
        /// The XXH64 of the ETag (and the version id, where the store gives one), as
        /// [`crate::table::content_tag`] makes it; `None` when the store gives neither (such an
        /// object is never covered). An S3 ETag is 34 characters; its hash tells a changed
        /// object as well in 8 bytes.
        etag: Option<u64>,
    },
}

impl Stamp {
    /// The stamp of a local file whose metadata could not be read: never fresh (a file is
    /// trusted only when its change time is known).
    pub const UNKNOWN_LOCAL: Stamp = Stamp::Local {
        ino: 0,
        mtime_ns: i64::MIN,
        ctime_ns: i64::MIN,
    };
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
    /// The file's schema fingerprint ([`crate::build::schema_fingerprint`]), when it was read:
    /// files of one fingerprint give a query engine one schema, so it need read one footer of
    /// them to learn the table's.
    pub schema: Option<u64>,
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

/// Everything but the filters' bits, decoded: the head, the file table and the columns (all
/// of them for a whole-index read, the ones asked about for a probe).
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

/// Where a section of the index lies, and its CRC-32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Section {
    /// Offset in the index.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// CRC-32 of its bytes.
    pub crc: u32,
}

impl Section {
    /// Its byte range in the index.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.offset..self.offset + self.len
    }
}

/// A group as the head describes it: enough to find its stripes, not which entries it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupAt {
    /// Blocks of every entry's filter (`z`).
    pub blocks: u32,
    /// Entries in the group.
    pub entries: usize,
    /// The group's section.
    pub section: Section,
}

impl GroupAt {
    /// Bytes of one stripe: block `j` of every entry, then the stripe's CRC-32.
    pub fn stripe_len(&self) -> u64 {
        32 * self.entries as u64 + 4
    }

    /// The byte range of stripe `j` in the index.
    pub fn stripe(&self, j: u64) -> std::ops::Range<u64> {
        let start = self.section.offset + j * self.stripe_len();
        start..start + self.stripe_len()
    }
}

/// A column as the head describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnHead {
    /// The leaf's dotted path.
    pub path: String,
    /// The column's section: per file its type, then every group's entries.
    pub section: Section,
    /// The types (numbers into [`Head::types`]) its files have, ascending: a probe encodes its
    /// values for these before it has read which file has which.
    pub types: Vec<u32>,
    /// Its groups.
    pub groups: Vec<GroupAt>,
}

/// What the trailer points to: a few hundred bytes for a table of any number of files (it
/// grows with columns and groups only), so a probe's first read is small and its second reads
/// the file table, the columns it asks about and their stripes all at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    /// When the index was written, milliseconds since 1970.
    pub created_ms: u64,
    /// The table root as given to the build.
    pub root: String,
    /// The FPP the build folded to (`--fpp`), if any.
    pub target_fpp: Option<f64>,
    /// Whether the columns were chosen with `-c`.
    pub explicit_columns: bool,
    /// Files in the file table.
    pub n_files: usize,
    /// The file table.
    pub files: Section,
    /// The distinct schema fingerprints of the files (the file table numbers them).
    pub schemas: Vec<u64>,
    /// Column types, shared by files.
    pub types: Vec<ColumnType>,
    /// The columns.
    pub columns: Vec<ColumnHead>,
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

/// The bytes that follow the group sections when those end at `at`: the file table, one
/// section per column, then the head (what the trailer points to). Returns them and where in
/// them the head starts.
pub(crate) fn encode_directory(d: &Directory, at: u64) -> (Vec<u8>, usize) {
    let mut o = Out::default();
    let section = |o: &Out, start: usize| Section {
        offset: at + start as u64,
        len: (o.0.len() - start) as u64,
        crc: crc32fast::hash(&o.0[start..]),
    };
    // The file table: paths front-coded (sorted paths share long prefixes: folders, the
    // writer's name pattern), an object's ETag as its XXH64.
    let mut schemas: Vec<u64> = Vec::new();
    let mut schema_no: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut prev: &[u8] = b"";
    for f in &d.files {
        let p = f.path.as_bytes();
        let shared = prev.iter().zip(p).take_while(|(a, b)| a == b).count();
        o.var(shared as u64);
        o.var((p.len() - shared) as u64);
        o.0.extend_from_slice(&p[shared..]);
        prev = p;
        o.var(f.size);
        match &f.stamp {
            Stamp::Local {
                ino,
                mtime_ns,
                ctime_ns,
            } => {
                o.u8(2);
                o.var(*ino);
                o.zig(*mtime_ns);
                // As the distance from mtime: mostly a few bytes (a written file's times are
                // one instant), where a whole time takes nine.
                o.zig(ctime_ns.wrapping_sub(*mtime_ns));
            }
            Stamp::Object {
                last_modified_ms,
                etag,
            } => {
                o.u8(1);
                o.zig(*last_modified_ms);
                match etag {
                    Some(h) => {
                        o.u8(1);
                        o.u64(*h);
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
        match f.schema {
            Some(h) => {
                let n = *schema_no.entry(h).or_insert_with(|| {
                    schemas.push(h);
                    schemas.len() - 1
                });
                o.var(n as u64 + 1);
            }
            None => o.u8(0),
        }
    }
    let files = section(&o, 0);
    // One section per column: per file 0 (no such leaf) or type + 1, then every group's
    // entries, file numbers as differences from the entry before.
    let mut sections = Vec::with_capacity(d.columns.len());
    for c in &d.columns {
        let start = o.0.len();
        for t in &c.file_types {
            o.var(t.map_or(0, |t| t as u64 + 1));
        }
        for g in &c.groups {
            let mut last = 0i64;
            for e in &g.entries {
                o.zig(e.file as i64 - last);
                last = e.file as i64;
                o.var(e.row_group as u64);
                o.u8(e.folds);
                o.u32(e.fpp.to_bits());
            }
        }
        sections.push(section(&o, start));
    }
    // The head.
    let head = o.0.len();
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
    put_section(&mut o, &files);
    o.var(schemas.len() as u64);
    for h in &schemas {
        o.u64(*h);
    }
    o.var(d.types.len() as u64);
    for t in &d.types {
        encode_type(&mut o, t);
    }
    o.var(d.columns.len() as u64);
    for (c, s) in d.columns.iter().zip(&sections) {
        o.str(&c.path);
        put_section(&mut o, s);
        let types: std::collections::BTreeSet<u32> =
            c.file_types.iter().flatten().copied().collect();
        o.var(types.len() as u64);
        for t in types {
            o.var(t as u64);
        }
        o.var(c.groups.len() as u64);
        for g in &c.groups {
            o.var(g.blocks as u64);
            o.var(g.entries.len() as u64);
            put_section(
                &mut o,
                &Section {
                    offset: g.offset,
                    len: g.len,
                    crc: g.crc,
                },
            );
        }
    }
    (o.0, head)
}

fn put_section(o: &mut Out, s: &Section) {
    o.u64(s.offset);
    o.u64(s.len);
    o.u32(s.crc);
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

/// The 40 trailer bytes for a head at `dir_offset` of `dir_len` bytes.
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
                    stamp: Stamp::Local {
                        ino: 1 << 40,
                        mtime_ns: -3,
                        ctime_ns: 1_700_000_000_123_456_789,
                    },
                    row_counts: Some(vec![10, 20]),
                    schema: Some(77),
                },
                FileEntry {
                    path: "b.parquet".into(),
                    size: 7,
                    stamp: Stamp::Object {
                        last_modified_ms: 9,
                        etag: Some(sbbf::hash(b"\"x\"")),
                    },
                    row_counts: None,
                    schema: None,
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

    /// The sample's index bytes from offset 0 (header, a zeroed group section, directory) and
    /// where the head starts.
    fn index_of(d: &Directory) -> (Vec<u8>, u64) {
        let mut all = header();
        all.resize(88, 0);
        let (dir, head) = encode_directory(d, 88);
        all.extend_from_slice(&dir);
        (all, 88 + head as u64)
    }

    fn decode(all: &[u8], head_at: u64) -> Result<Directory, IndexError> {
        let head = parse_head(all.get(head_at as usize..).unwrap_or_default(), head_at)?;
        parse_directory(all, 0, &head)
    }

    #[test]
    fn directory_round_trip() {
        let d = sample();
        let (all, head_at) = index_of(&d);
        assert_eq!(decode(&all, head_at).unwrap(), d);
        let h = head_at as usize;
        // Every truncation of the head is an error, never a panic.
        for n in h..all.len() {
            assert!(parse_head(&all[h..n], head_at).is_err());
        }
        // Every single-byte change either fails or decodes; it never panics. Changes in the
        // file table and column sections fail their checksums.
        for k in 88..all.len() {
            let mut b = all.clone();
            b[k] ^= 0xff;
            let r = decode(&b, head_at);
            assert!(k >= h || r.is_err(), "a change at {k} went unseen");
        }
        // The sections must lie before the head.
        assert!(parse_head(&all[h..], 100).is_err());
    }

    /// Paths sharing prefixes (and not) come back from the front coding as they were.
    #[test]
    fn front_coded_paths() {
        let mut d = sample();
        let names = [
            "",
            "a",
            "a/b=1/x.parquet",
            "a/b=1/y.parquet",
            "a/b=2/\u{e9}.parquet",
            "b",
        ];
        d.files = names
            .iter()
            .map(|p| FileEntry {
                path: p.to_string(),
                size: 1,
                stamp: Stamp::Local {
                    ino: 0,
                    mtime_ns: 0,
                    ctime_ns: 0,
                },
                row_counts: Some(vec![1, 2]),
                schema: Some(p.len() as u64 % 2),
            })
            .collect();
        d.columns[0].file_types = vec![Some(0); names.len()];
        let (all, head_at) = index_of(&d);
        assert_eq!(decode(&all, head_at).unwrap().files, d.files);
    }

    /// Random sections (and random edits of real ones) never panic and never allocate what a
    /// count claims: they decode or fail.
    #[test]
    fn hostile_directories() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let d = sample();
        let (all, head_at) = index_of(&d);
        let head = parse_head(&all[head_at as usize..], head_at).unwrap();
        let files = d.files.clone();
        let part = |s: &Section| all[s.offset as usize..(s.offset + s.len) as usize].to_vec();
        let good = [
            all[head_at as usize..].to_vec(),
            part(&head.files),
            part(&head.columns[0].section),
        ];
        for _ in 0..20_000 {
            let n = (next() % 200) as usize;
            let bytes: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            let _ = parse_head(&bytes, 1 << 40);
            let _ = parse_files(&bytes, &head);
            let _ = parse_column(&bytes, &head.columns[0], &files);
            for (k, g) in good.iter().enumerate() {
                let mut b = g.clone();
                for _ in 0..1 + next() % 4 {
                    let at = (next() as usize) % b.len();
                    b[at] = next() as u8;
                }
                let _ = match k {
                    0 => parse_head(&b, 1 << 40).map(|_| ()),
                    1 => parse_files(&b, &head).map(|_| ()),
                    _ => parse_column(&b, &head.columns[0], &files).map(|_| ()),
                };
            }
        }
        // A count of files that claims more than the file table can hold is refused before
        // allocating.
        let mut b = Out::default();
        b.var(0);
        b.str("");
        b.u8(0);
        b.u8(0);
        b.var(u64::MAX >> 1);
        put_section(
            &mut b,
            &Section {
                offset: 16,
                len: 60,
                crc: 0,
            },
        );
        assert!(matches!(
            parse_head(&b.0, 1 << 40),
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
