//! The index's parts as values: how a file looked ([`Stamp`]), its entries, the groups, the
//! directory, and the head and trailer that locate them.

use sbbf_parquet::format::column::ColumnType;

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

/// The version of a Delta or Iceberg table an index was built from: the snapshot whose files
/// it lists (a later version's files are matched to it by path and size, see
/// `sbbf_index::probe`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableAt {
    /// `delta` or `iceberg`.
    pub format: String,
    /// The Delta version, or the Iceberg snapshot id.
    pub version: i64,
    /// How the table's data files named its columns at that version
    /// ([`sbbf_lake::TableNames`] as JSON; format 5): a later version's column is
    /// found without reading that version's snapshot.
    pub names: Option<String>,
    /// What identified the Delta commit of that version in its log (format 5): a probe of a
    /// later version reads only the commits after it when the log still holds this one.
    pub mark: Option<sbbf_lake::since::CommitMark>,
    /// The Iceberg snapshot's data manifests (format 5): a later snapshot that still lists
    /// them all is read as the manifests added since.
    pub manifests: Option<Vec<String>>,
    /// The Iceberg metadata file the snapshot was read from, as a URL (format 6).
    pub metadata: Option<String>,
    /// The Iceberg snapshot's manifest list, when it names no delete manifest (format 6): a
    /// reader that finds this snapshot current takes its files from the file table instead
    /// of its manifests ([`sbbf_lake::since::KnownSnapshot`]).
    pub list: Option<String>,
}

impl TableAt {
    /// How the table's data files named its columns at that version, when recorded.
    pub fn table_names(&self) -> Option<sbbf_lake::TableNames> {
        sbbf_lake::TableNames::from_json(self.names.as_deref()?)
    }
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
    /// The table version it was built from, when the root is a Delta or Iceberg table read as
    /// its snapshot (format 4 and later; `None` in format 3 indexes and for folders of files).
    pub table: Option<TableAt>,
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
    /// The table version it was built from ([`Directory::table`]).
    pub table: Option<TableAt>,
}
