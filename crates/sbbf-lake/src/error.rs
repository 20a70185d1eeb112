//! Why a table could not be read or written as one. Carried through the Parquet crate's
//! error ([`sbbf_parquet::Error::Lake`]) with whose fault it is, so every front end's exit
//! codes and messages stay as they are for files.

use sbbf_parquet::{Error, Fault};

/// Why a table could not be read as its snapshot.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LakeError {
    /// Delta's kernel refused or failed (protocol, log, checkpoint).
    #[error("Delta table {table}: {source}")]
    Delta {
        /// The table.
        table: String,
        /// The kernel's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An Iceberg table's metadata or manifests could not be read or make no sense.
    #[error("Iceberg table {table}: {reason}")]
    Iceberg {
        /// The table (its metadata file).
        table: String,
        /// What is wrong.
        reason: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The table uses something this build does not read.
    #[error("{format} table {table} uses {feature}, which is not supported yet")]
    Unsupported {
        /// The format.
        format: &'static str,
        /// The table.
        table: String,
        /// The feature.
        feature: String,
    },
    /// No snapshot fits the asked version or time.
    #[error("{format} table {table} has no snapshot {asked}")]
    NoSuchSnapshot {
        /// The format.
        format: &'static str,
        /// The table.
        table: String,
        /// What was asked, in words.
        asked: String,
    },
    /// A data file the snapshot names is not in storage: the table is broken.
    #[error("{format} table {table} names data file {file}, which storage does not have")]
    MissingFile {
        /// The format.
        format: &'static str,
        /// The table.
        table: String,
        /// The missing file.
        file: String,
    },
    /// A data file of the table could not be read as the table gives its rows.
    #[error("{format} table {table}: data file {file}: {reason}")]
    DataFile {
        /// The format.
        format: &'static str,
        /// The table.
        table: String,
        /// The data file.
        file: String,
        /// What went wrong.
        reason: String,
        /// The underlying error, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The text given for a snapshot is neither a version nor an RFC 3339 time.
    #[error("`{text}` is neither a table version (an integer) nor an RFC 3339 time (2026-12-03T15:00:00Z)")]
    AsOfText {
        /// The text.
        text: String,
    },
    /// A table names a file in another store than its own (another bucket or scheme).
    #[error(
        "the table names {file}, outside its store {store}; such tables are not supported yet"
    )]
    OutsideStore {
        /// The file.
        file: String,
        /// The table's store.
        store: String,
    },
    /// A location in a table's log or metadata is not a usable URL or path.
    #[error("`{location}` is not a usable file location")]
    BadLocation {
        /// The location.
        location: String,
    },
    /// A metadata file or manifest larger than any table's: not read.
    #[error("{location} is {size} bytes, more than the {limit} a table's metadata file or manifest may have")]
    TooLarge {
        /// The object.
        location: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A write into a table was refused before anything was written.
    #[error("{format} table {table} is not written: {reason}")]
    WriteRefused {
        /// The format.
        format: &'static str,
        /// The table.
        table: String,
        /// Why.
        reason: String,
    },
    /// A part file of a distributed table write is damaged or does not belong with the others
    /// or with the table: nothing was committed.
    #[error("part {part} is refused: {reason}; nothing was committed")]
    BadPart {
        /// The part file.
        part: String,
        /// Why.
        reason: String,
    },
    /// Other writers kept committing first: the commit was given up after this many tries
    /// (the files written for it were removed).
    #[error("{format} table {table}: gave up after {tries} tries, each lost to another writer's commit; nothing was committed")]
    Contended {
        /// The format.
        format: &'static str,
        /// The table.
        table: String,
        /// Tries made.
        tries: u32,
    },
    /// A column asked of a table that its schema does not have, or that takes no filter.
    #[error("{format} table {table}: {reason}")]
    NoSuchColumn {
        /// `Delta` or `Iceberg`.
        format: &'static str,
        /// The table.
        table: String,
        /// What is wrong with the column, and the choices.
        reason: String,
    },
    /// A version was asked of something that is not a table.
    #[error("{path} is not a Delta or Iceberg table, so it has no versions")]
    NotATable {
        /// The path.
        path: String,
    },
    /// A table met by a build without Delta and Iceberg (crate `sbbf-lake` without its
    /// `tables` feature): found, and refused rather than read as a folder of files (a folder
    /// keeps files its table has removed).
    #[error(
        "`{path}` is {} {format} table, and this sbbf was built without Delta and Iceberg support: build it with `--features lake` (cargo install --path crates/sbbf-cli --features lake)",
        article(format)
    )]
    NotBuilt {
        /// The table as given.
        path: String,
        /// `Delta` or `Iceberg`.
        format: &'static str,
    },
    /// An Iceberg catalog could not be read, or answered something unusable.
    #[error("Iceberg catalog {catalog}: {reason}")]
    Catalog {
        /// The catalog's URI.
        catalog: String,
        /// What went wrong.
        reason: String,
    },
    /// The catalog has no such table.
    #[error("Iceberg catalog {catalog} has no table {table}")]
    NoSuchTable {
        /// The catalog's URI.
        catalog: String,
        /// The table asked for (`NS.TABLE`).
        table: String,
    },
}

impl LakeError {
    /// Whose fault it is: a version the table lacks, a version asked of no table, a table
    /// feature not read yet, a write refused: the question's; the rest the table's.
    pub fn fault(&self) -> Fault {
        match self {
            LakeError::Unsupported { .. }
            | LakeError::NoSuchSnapshot { .. }
            | LakeError::AsOfText { .. }
            | LakeError::NoSuchTable { .. }
            | LakeError::NotATable { .. }
            | LakeError::NotBuilt { .. }
            | LakeError::NoSuchColumn { .. }
            | LakeError::WriteRefused { .. }
            | LakeError::BadPart { .. } => Fault::Input,
            _ => Fault::File,
        }
    }

    /// The table error `e` carries, if it is one.
    pub fn of(e: &Error) -> Option<&LakeError> {
        match e {
            Error::Lake { source, .. } => source.downcast_ref(),
            _ => None,
        }
    }
}

impl From<LakeError> for Error {
    fn from(e: LakeError) -> Error {
        Error::Lake {
            fault: e.fault(),
            source: Box::new(e),
        }
    }
}

/// `an` before a vowel (`an Iceberg table`), else `a` (`a Delta table`).
fn article(word: &str) -> &'static str {
    match word.starts_with(['A', 'E', 'I', 'O', 'U']) {
        true => "an",
        false => "a",
    }
}
