//! A Parquet file whose footer has been read ([`ParquetFile`]): its metadata, columns and
//! encryption; the footer is read in `read/footer.rs`.

use crate::format::column::ColumnType;
use crate::io::{IoCounters, IoStats};
use crate::Error;
use parquet::file::metadata::ParquetMetaData;
use std::sync::Arc;

/// A Parquet file whose footer has been read: the reader, the metadata and where the footer
/// starts (filters must lie before it).
pub struct ParquetFile<R> {
    reader: R,
    metadata: Arc<ParquetMetaData>,
    file_len: u64,
    footer_start: u64,
    columns: Vec<ColumnType>,
    /// Filters the footer itself shows to be unusable, by (row group, column); computed on
    /// first use.
    pub(crate) conflicts: std::sync::OnceLock<std::collections::HashMap<(usize, usize), String>>,
    /// Every read made through this file.
    pub(crate) io: IoCounters,
    /// Modular encryption: how each chunk is protected and the keys that open it.
    pub(crate) encryption: Encryption,
    /// The file's last bytes from an offset, read with its footer: reads within them are
    /// answered from them (the filters most writers put just before the footer).
    pub(crate) tail: Option<(u64, bytes::Bytes)>,
}

/// What starts a column path that names a top-level field by its Parquet field id rather than
/// by name ([`by_field_id`]).
pub const BY_FIELD_ID: char = '\u{1}';

/// The column path of the top-level field with Parquet field id `id` (and, with `rest`, the
/// field below it at that dotted path), whatever a file names it: an Iceberg column renamed
/// after some files were written keeps its id in every file, under the name each was written
/// with. [`ParquetFile::column_index`] resolves it in each file.
///
/// ```
/// use sbbf_parquet::read::file::by_field_id;
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
/// let pq = sbbf_parquet::ParquetFile::open(std::fs::File::open(path)?)?;
/// // pyarrow wrote no field ids: no field has id 1.
/// assert!(pq.column_index(&by_field_id(1, None)).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn by_field_id(id: i64, rest: Option<&str>) -> String {
    match rest {
        Some(r) => format!("{BY_FIELD_ID}{id}.{r}"),
        None => format!("{BY_FIELD_ID}{id}"),
    }
}

/// The column path of the leaf reached by the Parquet field ids `ids`, from a top-level field
/// down (the nodes without an id, such as a list's repeated `list` group, are passed over),
/// whatever a file names the fields on the way: an Iceberg field inside a struct renamed after
/// some files were written keeps its id in every file. [`ParquetFile::column_index`] resolves
/// it in each file.
///
/// ```
/// use sbbf_parquet::read::file::by_field_ids;
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
/// let pq = sbbf_parquet::ParquetFile::open(std::fs::File::open(path)?)?;
/// assert!(pq.column_index(&by_field_ids(&[2, 3])).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn by_field_ids(ids: &[i64]) -> String {
    let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
    format!("{BY_FIELD_ID}{}", ids.join("/"))
}

/// The columns a request names in one file ([`ParquetFile::choose_columns`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChosenColumns {
    /// Leaf indices, in the order asked.
    pub columns: Vec<usize>,
    /// Requested paths the file lacks.
    pub not_in_file: Vec<String>,
}

/// How a file is encrypted, and the keys that open it (nothing to hold in a build without the
/// `encryption` feature, where such files do not open).
#[cfg(feature = "encryption")]
pub(crate) type Encryption = Option<Arc<crate::crypto::FileEncryption>>;
#[cfg(not(feature = "encryption"))]
pub(crate) type Encryption = ();

impl<R> ParquetFile<R> {
    /// A file whose footer someone else has decoded already (a query engine's metadata cache):
    /// no read is made. `file_len` is the object's size. (An encrypted file's filters need its
    /// keys: open it with [`ParquetFile::open_with_keys`].)
    ///
    /// The footer's own length is not in [`ParquetMetaData`], so filters are only checked to
    /// end before the file's last 8 bytes (a file opened with [`ParquetFile::open`] also checks
    /// that they end before the footer).
    ///
    /// ```
    /// use parquet::file::metadata::ParquetMetaDataReader;
    /// let bytes = bytes::Bytes::from(std::fs::read("../../testdata/pa_ints.parquet")?);
    /// let metadata = ParquetMetaDataReader::new().parse_and_finish(&bytes)?;
    /// let len = bytes.len() as u64;
    /// let pq = sbbf_parquet::ParquetFile::from_metadata(bytes, metadata.into(), len);
    /// assert_eq!(pq.io_stats().requests, 0);
    /// assert!(pq.column_index("i64").is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_metadata(reader: R, metadata: Arc<ParquetMetaData>, file_len: u64) -> Self {
        ParquetFile::with_metadata(
            reader,
            metadata,
            file_len,
            file_len.saturating_sub(8),
            Encryption::default(),
        )
    }

    pub(crate) fn with_metadata(
        reader: R,
        metadata: Arc<ParquetMetaData>,
        file_len: u64,
        footer_start: u64,
        encryption: Encryption,
    ) -> Self {
        let columns = metadata
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| ColumnType::from_descriptor(c))
            .collect();
        ParquetFile {
            reader,
            metadata,
            file_len,
            footer_start,
            columns,
            conflicts: std::sync::OnceLock::new(),
            io: IoCounters::default(),
            encryption,
            tail: None,
        }
    }

    /// The same file over another reader of the same bytes (a wrapper around this one), keeping
    /// the footer, the keys and the read counts.
    pub fn map_reader<S>(self, f: impl FnOnce(R) -> S) -> ParquetFile<S> {
        ParquetFile {
            reader: f(self.reader),
            metadata: self.metadata,
            file_len: self.file_len,
            footer_start: self.footer_start,
            columns: self.columns,
            conflicts: self.conflicts,
            io: self.io,
            encryption: self.encryption,
            tail: self.tail,
        }
    }

    /// The reads made since the file was opened (the footer's included): requests, bytes and
    /// sequential waves.
    pub fn io_stats(&self) -> IoStats {
        self.io.get()
    }

    /// The reader, mutably (async readers need it).
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }
}

impl<R> ParquetFile<R> {
    /// The decoded footer.
    pub fn metadata(&self) -> &Arc<ParquetMetaData> {
        &self.metadata
    }

    /// The file's last bytes read with its footer, from the offset given, when it was opened
    /// that way ([`ParquetFile::open_async`]): a reader of the same file that keeps them
    /// reads its footer, and whatever else lies in them, with no request.
    pub fn tail(&self) -> Option<(u64, &bytes::Bytes)> {
        self.tail.as_ref().map(|(at, b)| (*at, b))
    }

    /// How chunk (`row_group`, `column`) is protected: always plaintext in a file without
    /// encryption (and in a build without the `encryption` feature, where encrypted files do
    /// not open).
    pub fn chunk_encryption(
        &self,
        row_group: usize,
        column: usize,
    ) -> crate::keys::ChunkEncryption {
        #[cfg(feature = "encryption")]
        if let Some(e) = self.encryption() {
            return e.chunk(row_group, column);
        }
        let _ = (row_group, column);
        crate::keys::ChunkEncryption::Plaintext
    }

    /// Whether the file uses modular encryption (never, in a build without the `encryption`
    /// feature: such files do not open there).
    pub fn is_encrypted(&self) -> bool {
        #[cfg(feature = "encryption")]
        return self.encryption.is_some();
        #[cfg(not(feature = "encryption"))]
        false
    }

    /// The file's modular encryption, if any: algorithm, footer mode, and how each chunk is
    /// protected ([`crate::crypto::FileEncryption::chunk`]).
    #[cfg(feature = "encryption")]
    pub fn encryption(&self) -> Option<&crate::crypto::FileEncryption> {
        self.encryption.as_deref()
    }

    /// The reader the file was opened with.
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Offset of the first footer byte (the Thrift `FileMetaData`).
    pub fn footer_start(&self) -> u64 {
        self.footer_start
    }

    /// Every leaf column, in schema order.
    pub fn columns(&self) -> &[ColumnType] {
        &self.columns
    }
    /// The leaf columns `requested` names (none: an empty list). With several files (`many`),
    /// a column this file lacks (schema evolution) is listed in `not_in_file` instead of being
    /// an error; with one, it is [`Error::UnknownColumn`].
    ///
    /// ```
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
    /// let pq = sbbf_parquet::ParquetFile::open(std::fs::File::open(path)?)?;
    /// let asked = ["i64".to_string(), "nosuch".to_string()];
    /// let chosen = pq.choose_columns(&asked, true)?;
    /// assert_eq!((chosen.columns.len(), chosen.not_in_file), (1, vec!["nosuch".to_string()]));
    /// assert!(pq.choose_columns(&asked, false).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn choose_columns(&self, requested: &[String], many: bool) -> Result<ChosenColumns, Error> {
        let mut chosen = ChosenColumns::default();
        for c in requested {
            match self.column_index(c) {
                Ok(i) => chosen.columns.push(i),
                Err(Error::UnknownColumn { .. }) if many => chosen.not_in_file.push(c.clone()),
                Err(e) => return Err(e),
            }
        }
        Ok(chosen)
    }

    /// The index of the leaf column with this dotted path.
    ///
    /// A path is the field names joined with `.`, a `.` inside a name written `\.` (and a `\`
    /// written `\\`): [`ColumnType::path`]. A path without those escapes is also accepted when
    /// exactly one leaf fits it with dots read either way (`a.b` for a top-level column named
    /// `a.b` when there is no struct `a` with a field `b`); when several fit, the error
    /// ([`Error::AmbiguousColumn`]) lists them. When none fits, the error lists near misses (a
    /// list's `lst.element` for `lst.list.element`, other case, small typos), or all leaves.
    pub fn column_index(&self, path: &str) -> Result<usize, Error> {
        if let Some(by_id) = path.strip_prefix(BY_FIELD_ID) {
            return self.column_by_field_id(by_id);
        }
        let exact: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].path == path)
            .collect();
        match exact.len() {
            1 => return Ok(exact[0]),
            0 => {}
            _ => {
                return Err(Error::AmbiguousColumn {
                    column: path.to_string(),
                    choices: exact
                        .iter()
                        .map(|&i| format!("{} (leaf column {i})", self.columns[i].path))
                        .collect(),
                })
            }
        }
        let loose: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.raw_parts(i).join(".") == path)
            .collect();
        match loose.len() {
            1 => return Ok(loose[0]),
            0 => {}
            _ => {
                return Err(Error::AmbiguousColumn {
                    column: path.to_string(),
                    choices: loose
                        .iter()
                        .map(|&i| self.columns[i].path.clone())
                        .collect(),
                })
            }
        }
        let mut candidates = self.near_misses(path);
        if candidates.is_empty() {
            candidates = self.columns.iter().map(|c| c.path.clone()).collect();
        }
        Err(Error::UnknownColumn {
            column: path.to_string(),
            candidates,
        })
    }

    /// The other leaves that a path written without escapes could mean, besides the one
    /// [`column_index`](Self::column_index) chose (`a\.b` when `a.b` chose field `b` of struct
    /// `a`): callers may want to warn.
    pub fn other_readings(&self, path: &str, chosen: usize) -> Vec<String> {
        (0..self.columns.len())
            .filter(|&i| i != chosen && self.raw_parts(i).join(".") == path)
            .map(|i| self.columns[i].path.clone())
            .collect()
    }

    /// The field names of leaf `i`, unescaped.
    /// The leaf a field-id path names (`ID`, or `ID.rest` for a field below it; see
    /// [`by_field_id`]): below the top-level field whose Parquet field id
    /// is `ID`, whatever the file names it.
    fn column_by_field_id(&self, by_id: &str) -> Result<usize, Error> {
        if by_id.contains('/') {
            return self.column_by_field_ids(by_id);
        }
        let (id, rest) = match by_id.split_once('.') {
            Some((id, rest)) => (id, Some(rest)),
            None => (by_id, None),
        };
        let unknown = || Error::UnknownColumn {
            column: match rest {
                Some(r) => format!("the field with id {id}, then {r}"),
                None => format!("the field with id {id}"),
            },
            candidates: Vec::new(),
        };
        let id: i32 = id.parse().map_err(|_| unknown())?;
        let schema = self.metadata.file_metadata().schema_descr();
        let found: Vec<usize> = (0..self.columns.len())
            .filter(|&i| {
                let root = schema.get_column_root(i);
                let info = root.get_basic_info();
                if !info.has_id() || info.id() != id {
                    return false;
                }
                let below = &self.raw_parts(i)[1..];
                match rest {
                    None => below.is_empty(),
                    Some(r) => below.join(".") == r,
                }
            })
            .collect();
        match found.as_slice() {
            [i] => Ok(*i),
            _ => Err(unknown()),
        }
    }

    /// The leaf whose ids on the way down (of the nodes that have one) are `chain`'s
    /// (`5/7`: [`by_field_ids`]).
    fn column_by_field_ids(&self, chain: &str) -> Result<usize, Error> {
        let unknown = || Error::UnknownColumn {
            column: format!("the field with ids {chain}"),
            candidates: Vec::new(),
        };
        let want: Vec<i32> = chain
            .split('/')
            .map(|id| id.parse().map_err(|_| unknown()))
            .collect::<Result<_, _>>()?;
        let schema = self.metadata.file_metadata().schema_descr();
        let found: Vec<usize> = (0..self.columns.len())
            .filter(|&i| {
                let parts = self.raw_parts(i);
                let mut node = schema.get_column_root(i);
                let mut ids = Vec::with_capacity(want.len());
                let mut note = |t: &parquet::schema::types::Type| {
                    let info = t.get_basic_info();
                    if info.has_id() {
                        ids.push(info.id());
                    }
                };
                note(node);
                for name in parts.iter().skip(1) {
                    // `get_fields` panics on a primitive; the leaf's own path only passes
                    // through groups, but the footer is untrusted.
                    if !node.is_group() {
                        return false;
                    }
                    let Some(child) = node.get_fields().iter().find(|f| f.name() == name.as_str())
                    else {
                        return false;
                    };
                    node = child;
                    note(node);
                }
                ids == want
            })
            .collect();
        match found.as_slice() {
            [i] => Ok(*i),
            _ => Err(unknown()),
        }
    }

    fn raw_parts(&self, i: usize) -> Vec<String> {
        self.metadata
            .file_metadata()
            .schema_descr()
            .column(i)
            .path()
            .parts()
            .to_vec()
    }

    /// Leaves the user may have meant by `path`: its field names in order within the leaf's
    /// (`lst.element` in `lst.list.element`, `b` in `s.b`, `s` in `s.a`), the same path in
    /// another case, or one a small typo away.
    fn near_misses(&self, path: &str) -> Vec<String> {
        let want: Vec<String> = crate::format::column::split_path(path)
            .iter()
            .map(|p| p.to_lowercase())
            .collect();
        let lower = path.to_lowercase();
        let max_edits = (lower.chars().count() / 4).max(1);
        (0..self.columns.len())
            .filter(|&i| {
                let have: Vec<String> =
                    self.raw_parts(i).iter().map(|p| p.to_lowercase()).collect();
                let mut rest = have.iter();
                let in_order = want.iter().all(|w| rest.any(|h| h == w));
                let full = self.columns[i].path.to_lowercase();
                in_order || edit_distance(&full, &lower) <= max_edits
            })
            .map(|i| self.columns[i].path.clone())
            .collect()
    }
}

/// Levenshtein distance by characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(feature = "encryption")]
impl<R: parquet::file::reader::ChunkReader> ParquetFile<R> {
    /// Column chunk `(row_group, column)` of an encrypted file (opened with
    /// [`ParquetFile::open_with_keys`]) as a [`PlainImage`](crate::crypto::PlainImage): its pages decrypted with the
    /// chunk's key, or copied as they are when the chunk is not encrypted (the file's footer is
    /// still one the `parquet` crate cannot read). See the module documentation for the format
    /// and the cost.
    ///
    /// Errors: [`CryptoError::ChunkUnreadable`](crate::CryptoError::ChunkUnreadable) when the chunk's key was not given (or its
    /// metadata did not authenticate); [`CryptoError::Page`](crate::CryptoError::Page) when a page does not decrypt or
    /// does not fit the chunk.
    ///
    /// ```
    /// use sbbf_parquet::{ParquetFile, crypto::{Key, KeySet}};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"),
    /// #     "/../../testdata/encrypted/encrypt_columns_and_footer_ctr.parquet.encrypted");
    /// let keys = KeySet::new()
    ///     .with_footer_key(Key::parse("0123456789012345")?)
    ///     .with_column_key("double_field", Key::parse("1234567890123450")?);
    /// let pq = ParquetFile::open_with_keys(std::fs::File::open(path)?, &keys)?;
    /// let c = pq.column_index("double_field")?;
    /// let image = pq.plaintext_image(0, c)?;
    /// // An ordinary file: any Parquet reader decodes the chunk (its leaf column, row group 0).
    /// use parquet::arrow::{arrow_reader::ParquetRecordBatchReaderBuilder, ProjectionMask};
    /// let leaf = ProjectionMask::leaves(image.metadata.file_metadata().schema_descr(), [c]);
    /// let rows: usize = ParquetRecordBatchReaderBuilder::try_new(image.bytes.clone())?
    ///     .with_projection(leaf)
    ///     .build()?
    ///     .map(|b| b.map(|b| b.num_rows()))
    ///     .sum::<Result<_, _>>()?;
    /// assert_eq!(rows, 50);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn plaintext_image(
        &self,
        row_group: usize,
        column: usize,
    ) -> Result<crate::crypto::PlainImage, Error> {
        let path = self
            .columns()
            .get(column)
            .map(|c| c.path.as_str())
            .unwrap_or_default();
        crate::crypto::plaintext_image(
            self.encryption(),
            self.metadata(),
            path,
            self.footer_start(),
            self.reader(),
            row_group,
            column,
        )
    }
}
