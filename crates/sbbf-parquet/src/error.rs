//! Errors of the adapter.
//!
//! Every error that comes from another library (an [`std::io::Error`] with its kind, a
//! [`ParquetError`], a `thrift::Error`, an [`sbbf::Error`], an `object_store::Error`) is kept
//! as the error's [`source`](std::error::Error::source), so callers can match on it instead of
//! reading message text. Messages already include the text of their cause, so a one-line
//! `{}` is complete; programs that walk the `source()` chain will see that text twice.
//!
//! Messages never name command-line flags: a front end adds its own wording from the variant.

use parquet::errors::ParquetError;
use std::path::PathBuf;

/// Why a file could not be probed or inspected at all. Problems with one row group's filter
/// are not errors: they make that row group "unknown" (see [`crate::FilterState`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a Parquet file (too short, bad magic, bad footer length).
    #[error("not a Parquet file: {0}")]
    NotParquet(NotParquet),
    /// Modular encryption, and the keys needed were not given: an encrypted ("PARE") footer
    /// without the footer key, or a file this operation cannot handle encrypted (rewriting).
    #[error("the file is encrypted (Parquet modular encryption); its keys are needed")]
    Encrypted,
    /// The file uses modular encryption, and this build of the library cannot read it (it was
    /// built without the `encryption` feature).
    #[error(
        "the file uses Parquet modular encryption, which this build cannot read (built without \
         the `encryption` feature)"
    )]
    EncryptionNotBuilt,
    /// An encrypted file whose footer or keys do not work (wrong key, altered file, malformed
    /// crypto metadata). A chunk that cannot be decrypted is not an error: its filter answers
    /// "unknown" with the reason.
    #[error("encrypted file: {0}")]
    Crypto(#[source] CryptoError),
    /// The footer could not be decoded or re-encoded.
    #[error("cannot read the Parquet footer: {0}")]
    Footer(#[source] FooterError),
    /// Reading bytes failed.
    #[error("read failed: {0}")]
    Read(#[source] ReadError),
    /// No leaf column has this path.
    #[error("no column `{column}` in this file; {}", candidates_text(.candidates))]
    UnknownColumn {
        /// What was asked for.
        column: String,
        /// Leaf paths that look related (or all of them).
        candidates: Vec<String>,
    },
    /// Among several files (a directory, a glob, a prefix), none has the column asked about;
    /// `first` is why the first file has none (its near misses), when known.
    #[error("no file has column `{column}`{}", .first.as_ref().map(|e| format!("; in the first: {e}")).unwrap_or_default())]
    NoFileHasColumn {
        /// What was asked for.
        column: String,
        /// The first file's error (an [`Error::UnknownColumn`]).
        #[source]
        first: Option<Box<Error>>,
    },
    /// A Delta or Iceberg table could not be read or written as one: the lake crate's error
    /// (`sbbf_lake::LakeError`), with whose fault it is.
    #[error("{source}")]
    Lake {
        /// The question's ([`Fault::Input`]: a version the table lacks, a feature not read
        /// yet) or the table's ([`Fault::File`]).
        fault: Fault,
        /// The lake crate's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Several leaf columns fit this path (dots inside field names, or duplicate names).
    #[error(
        "column path `{column}` is ambiguous: it fits {}; write one of these paths (a `.` inside a field name is written `\\.`)",
        quoted(.choices)
    )]
    AmbiguousColumn {
        /// What was asked for.
        column: String,
        /// The leaf paths it fits.
        choices: Vec<String>,
    },
    /// A filter could not be built (unsupported type, bad sizing, unusable existing filter).
    #[error("cannot build a filter: {0}")]
    Build(#[source] BuildError),
    /// Writing the output failed.
    #[error("write failed: {0}")]
    Write(#[source] WriteError),
    /// The value text does not parse for the column's type.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// The async runtime that drives object-store reads could not start (threads, I/O driver).
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// Whose fault an [`Error`] is, for front ends that sort failures into kinds (Python's
/// `InputError` and `FileError`, exit codes, HTTP statuses) without reading message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// What the caller asked for: a value, a column, an option, a path pattern that matches
    /// nothing. Asking differently fixes it.
    Input,
    /// A file, an object or the system: unreadable, missing, damaged, encrypted, unwritable.
    File,
}

impl Error {
    /// Whose fault the error is.
    ///
    /// ```
    /// use sbbf_parquet::{Error, Fault};
    /// let e = Error::UnknownColumn { column: "idd".into(), candidates: vec!["id".into()] };
    /// assert_eq!(e.fault(), Fault::Input);
    /// assert_eq!(Error::Encrypted.fault(), Fault::File);
    /// ```
    pub fn fault(&self) -> Fault {
        match self {
            Error::UnknownColumn { .. }
            | Error::NoFileHasColumn { .. }
            | Error::AmbiguousColumn { .. }
            | Error::Build(_)
            | Error::Value(_) => Fault::Input,
            #[cfg(feature = "store")]
            Error::Read(ReadError::FileUrl { .. } | ReadError::StoreNotBuilt { .. }) => {
                Fault::Input
            }
            Error::Read(ReadError::NoFiles { reason, .. }) => match reason {
                // A path that is not there, or a directory that cannot be walked, is the file
                // system's answer; an empty directory or a pattern that matches nothing is
                // the question's.
                NoFilesReason::NotFound | NoFilesReason::Walk(_) => Fault::File,
                _ => Fault::Input,
            },
            Error::Lake { fault, .. } => *fault,
            _ => Fault::File,
        }
    }
}

/// Why the bytes are not a Parquet file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotParquet {
    /// Shorter than magic, footer length and magic.
    #[error("{len} bytes is shorter than the smallest Parquet file")]
    TooShort {
        /// The file's size.
        len: u64,
    },
    /// The last four bytes are neither `PAR1` nor `PARE`.
    #[error("the file does not end with PAR1 (found {:?})", String::from_utf8_lossy(.found))]
    BadMagic {
        /// The last four bytes.
        found: [u8; 4],
    },
    /// The footer length in the tail is larger than the file.
    #[error("footer length {footer_len} exceeds the file size {file_len}")]
    FooterTooLong {
        /// What the tail announces.
        footer_len: u64,
        /// The file's size.
        file_len: u64,
    },
}

/// Why the footer (`FileMetaData`) could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FooterError {
    /// The `parquet` crate could not decode it.
    #[error("{0}")]
    Decode(#[source] ParquetError),
    /// The schema at its start is not well-formed Thrift.
    #[error("malformed schema: {0}")]
    Schema(#[source] thrift::Error),
    /// A schema element claims more children than the schema has elements (or a negative
    /// number): decoding it would reserve memory for them.
    #[error(
        "schema element {element} claims {claimed} children, \
         but the schema has {elements} elements"
    )]
    SchemaChildren {
        /// Index of the element.
        element: usize,
        /// Children it claims.
        claimed: i64,
        /// Elements in the schema.
        elements: usize,
    },
    /// Copying the footer with new locations failed (malformed Thrift).
    #[error("cannot re-encode the footer: {0}")]
    Reencode(#[source] thrift::Error),
    /// Some new filter locations named column chunks the footer does not have (or that have
    /// no `ColumnMetaData`).
    #[error(
        "{missing} of {total} filter locations found no column \
         chunk with metadata"
    )]
    UnmatchedEdits {
        /// Locations not applied.
        missing: usize,
        /// Locations asked for.
        total: usize,
    },
}

/// Why bytes could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The reader (a `ChunkReader` or an `AsyncFileReader`) or the `parquet` crate's column
    /// decoding failed.
    #[error("{0}")]
    Parquet(#[source] ParquetError),
    /// Decoding column data into Arrow arrays failed.
    #[error("{0}")]
    Arrow(#[source] arrow_schema::ArrowError),
    /// A local file could not be opened or read.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause, with its [`std::io::ErrorKind`].
        #[source]
        source: std::io::Error,
    },
    /// The reader returned fewer bytes than asked.
    #[error("short read at byte {start}: {got} of {wanted} bytes")]
    Short {
        /// First byte asked for.
        start: u64,
        /// Bytes asked for.
        wanted: u64,
        /// Bytes returned.
        got: u64,
    },
    /// A range larger than this platform can hold in memory.
    #[error("range {start}..{end} is too large")]
    TooLarge {
        /// First byte.
        start: u64,
        /// One past the last byte.
        end: u64,
    },
    /// An object store request failed.
    #[cfg(feature = "store")]
    #[error("{location}: {source}")]
    Store {
        /// The URL, object or prefix.
        location: String,
        /// The cause.
        #[source]
        source: object_store::Error,
    },
    /// A location is not a URL.
    #[cfg(feature = "store")]
    #[error("{url}: bad URL: {source}")]
    Url {
        /// The text given.
        url: String,
        /// The cause.
        #[source]
        source: url::ParseError,
    },
    /// A `file://` URL that names no local path (another host, no absolute path, or a
    /// path that is not UTF-8).
    #[cfg(feature = "store")]
    #[error("{url}: a file:// URL must name an absolute local path (file:///PATH)")]
    FileUrl {
        /// The text given.
        url: String,
    },
    /// A URL of an object store this build has no client for: S3, GCS, Azure and HTTP are the
    /// feature `object_store` (the `sbbf` command's feature of the same name).
    #[cfg(feature = "store")]
    #[error(
        "{url}: this build reads no {store} objects: object stores (S3, GCS, Azure, HTTP) are \
         the feature `object_store` (e.g. `cargo install --path crates/sbbf-cli --features \
         object_store`; `--features query` includes it)"
    )]
    StoreNotBuilt {
        /// The URL given.
        url: String,
        /// The store the URL names (`S3`, `GCS`, `Azure`, `HTTP`).
        store: &'static str,
    },
    /// No object at a location and no `*.parquet` objects under it.
    #[cfg(feature = "store")]
    #[error("{location}: no such object and no *.parquet objects under it")]
    NoObjects {
        /// The object path or prefix (`/` for the store's root).
        location: String,
    },
    /// A file could not be opened (the caller names it).
    #[error("cannot open: {0}")]
    Open(#[source] std::io::Error),
    /// A local FILE argument names no Parquet file: nothing there, an empty directory, a glob
    /// that matches nothing, a bad glob, a directory that cannot be walked.
    #[error("{location}: {reason}")]
    NoFiles {
        /// The argument as given.
        location: String,
        /// What was wrong with it.
        reason: NoFilesReason,
    },
}

/// Why a local FILE argument names no Parquet file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NoFilesReason {
    /// Nothing exists at the path, and it is no glob.
    #[error("no such file or directory")]
    NotFound,
    /// A directory without `*.parquet` files below it.
    #[error("no *.parquet files in this directory")]
    EmptyDirectory,
    /// A glob that matches no file.
    #[error("no file matches this pattern")]
    NoMatch,
    /// A glob that cannot be read.
    #[error("bad glob pattern: {0}")]
    BadGlob(#[source] glob::PatternError),
    /// A directory that cannot be walked (permissions, a vanished entry).
    #[error("{0}")]
    Walk(#[source] walkdir::Error),
}

/// Why a filter could not be built or rewritten.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The filter crate refused the sizing or the bits (false-positive rate outside (0, 1),
    /// bitset of a bad length, ...).
    #[error("{0}")]
    Filter(#[source] sbbf::Error),
    /// Parquet defines no Bloom filter for BOOLEAN values.
    #[error("`{column}`: Parquet defines no Bloom filter for BOOLEAN values")]
    Boolean {
        /// Column path.
        column: String,
    },
    /// An element of an Arrow array that the column cannot hold exactly (another type, out of
    /// range, finer than its unit): a filter is not built from a guess.
    #[error("element {index} of an Arrow {data_type} array does not fit column `{column}` ({physical}): {reason}")]
    ArrowValue {
        /// The element's index.
        index: usize,
        /// The array's Arrow type.
        data_type: String,
        /// Column path.
        column: String,
        /// The column's physical type.
        physical: String,
        /// Why, by the stored-value rules.
        reason: String,
    },
    /// The column already has filters and replacing them was not asked for.
    #[error("`{column}` already has Bloom filters")]
    HasFilters {
        /// Column path.
        column: String,
    },
    /// An existing filter cannot be read, so it cannot be resized.
    #[error("row group {row_group} `{column}`: unusable filter, not resizing: {reason}")]
    Unusable {
        /// Row group.
        row_group: usize,
        /// Column path.
        column: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A builder thread ended before handing over its filters.
    #[error("a worker stopped before building every filter")]
    WorkerStopped,
}

/// Why the output could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// No temporary file could be created beside the target.
    #[error("cannot create a temporary file in {}: {source}", .dir.display())]
    TempFile {
        /// The target's directory.
        dir: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Writing, syncing or setting permissions of the temporary output failed.
    #[error("{}: {source}", .target.display())]
    Io {
        /// The file being replaced or created.
        target: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The complete output could not be renamed over the target.
    #[error("cannot rename into {}: {source}", .target.display())]
    Rename {
        /// The target.
        target: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An interrupt ([`crate::write::output::interrupt`]) stopped the write before its output was
    /// renamed into place: the target was not touched.
    #[error("interrupted before the output was complete; nothing was replaced")]
    Interrupted,
    /// The input got shorter while it was being copied.
    #[error("input shrank while copying ({copied} of {len} bytes)")]
    InputShrank {
        /// Bytes copied.
        copied: u64,
        /// Bytes expected.
        len: u64,
    },
    /// An object store refused or failed a write.
    #[cfg(feature = "store")]
    #[error("{location}: {source}")]
    Store {
        /// The object written.
        location: String,
        /// The store's error.
        #[source]
        source: object_store::Error,
    },
}

/// Text that does not parse for the column's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {text:?} as a value of column `{column}` ({ty}): {expected}")]
pub struct ValueError {
    /// The text.
    pub text: String,
    /// Column path.
    pub column: String,
    /// Physical and logical type.
    pub ty: String,
    /// What was expected.
    pub expected: String,
}

/// Why an encrypted file or module could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// A key of a length AES does not take.
    #[error("a key must be 16, 24 or 32 bytes (AES-128, -192, -256), not {len}")]
    KeyLength {
        /// The length given.
        len: usize,
    },
    /// Key text that starts with `0x` but is not hexadecimal.
    #[error("`0x…` key is not hexadecimal: {len} characters")]
    KeyHex {
        /// The key text's length in bytes (the text itself is secret and is not kept).
        len: usize,
    },
    /// The footer is encrypted and no footer key was given.
    #[error("the footer is encrypted (PARE); the footer key is needed")]
    NoFooterKey,
    /// The encrypted footer did not authenticate.
    #[error("the footer did not decrypt: wrong footer key or AAD prefix, or the file was altered")]
    FooterAuth,
    /// The plaintext footer's signature did not verify with the footer key.
    #[error("the plaintext footer's signature does not verify: wrong footer key or AAD prefix, or the footer was altered")]
    FooterSignature,
    /// The file was written with an AAD prefix it does not store.
    #[error(
        "the file was encrypted with an AAD prefix that it does not store; the prefix is needed"
    )]
    NeedAadPrefix,
    /// A rewrite found no plaintext filter on an encrypted column that it could seal.
    #[error(
        "no plaintext Bloom filter on an encrypted column whose key was given: nothing to seal"
    )]
    NothingToSeal,
    /// A column chunk is encrypted and cannot be decrypted (its key was not given, or its
    /// metadata did not authenticate): its pages cannot be read.
    #[error("row group {row_group}, column `{column}`: encrypted, and {reason}")]
    ChunkUnreadable {
        /// Row group index.
        row_group: usize,
        /// Leaf column path.
        column: String,
        /// Why (the missing key, or the failed authentication).
        reason: String,
    },
    /// A page of an encrypted column chunk did not decrypt (altered, or a wrong key) or is
    /// malformed.
    #[error("row group {row_group}, column `{column}`, page {page}: {reason}")]
    Page {
        /// Row group index.
        row_group: usize,
        /// Leaf column path.
        column: String,
        /// The page's position in the chunk (0 = first page, dictionary included).
        page: usize,
        /// What is wrong.
        reason: String,
    },
    /// The crypto metadata is not what the specification describes, or an operation for
    /// encrypted files was asked of a plaintext one.
    #[error("malformed encryption metadata: {0}")]
    Malformed(#[source] MalformedCrypto),
}

/// What is wrong with a file's encryption metadata ([`CryptoError::Malformed`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum MalformedCrypto {
    /// An operation on encrypted column chunks was asked of a file that is not encrypted.
    #[error("the file is not encrypted")]
    NotEncrypted,
    /// The encrypted footer's `FileCryptoMetaData` does not decode.
    #[error("FileCryptoMetaData: {0}")]
    CryptoMetaData(#[source] std::sync::Arc<thrift::Error>),
    /// The encrypted footer module's length prefix runs past the footer.
    #[error("the encrypted footer's length prefix does not fit the {after} bytes after FileCryptoMetaData")]
    FooterLength {
        /// The bytes after `FileCryptoMetaData`.
        after: usize,
    },
    /// A plaintext footer of an encrypted file names no algorithm.
    #[error("no encryption_algorithm")]
    NoAlgorithm,
    /// A plaintext footer's signature is not 28 bytes (nonce and tag).
    #[error("a plaintext footer is followed by a 28-byte signature, not {len} bytes")]
    SignatureLength {
        /// The bytes after the footer.
        len: usize,
    },
    /// A row group the footer does not have.
    #[error("no row group {0}")]
    NoRowGroup(usize),
    /// A column chunk the row group does not have.
    #[error("no column {0}")]
    NoColumn(usize),
    /// A chunk whose metadata cannot be decrypted was asked for its pages.
    #[error("unreadable chunk")]
    UnreadableChunk,
    /// A chunk that decrypts has no key (the key set changed under it).
    #[error("no key for a readable chunk")]
    NoChunkKey,
}

impl PartialEq for MalformedCrypto {
    fn eq(&self, other: &Self) -> bool {
        // The thrift error is compared by its text (it is not comparable itself).
        self.to_string() == other.to_string()
    }
}

impl Eq for MalformedCrypto {}

macro_rules! from_kind {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::$v(e)
            }
        }
    )*};
}
from_kind!(NotParquet => NotParquet, FooterError => Footer, ReadError => Read,
    BuildError => Build, WriteError => Write, CryptoError => Crypto);

fn candidates_text(c: &[String]) -> String {
    match c {
        [] => "the file has no leaf columns".to_string(),
        [one] => format!("did you mean `{one}`?"),
        _ => format!("leaf columns to choose from: {}", quoted(c)),
    }
}

/// `a`, `b`, ... (at most 20, then how many more).
fn quoted(c: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut text = c
        .iter()
        .take(SHOWN)
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if c.len() > SHOWN {
        text.push_str(&format!(" and {} more", c.len() - SHOWN));
    }
    text
}
