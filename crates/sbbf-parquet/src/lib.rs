//! The Parquet side of split-block Bloom filters: where a column chunk's filter is, how to read
//! it cheaply and safely, and which bytes a value is hashed as.
//!
//! Data flows one way, and so do the imports: each module below uses only those before it
//! (`tests/parquet/layering.rs` fails otherwise).
//!
//! | module | what it holds |
//! |---|---|
//! | `error` | every error type ([`Error`] and its parts); uses nothing of the crate |
//! | [`format`](mod@format) | bytes on disk: the filter [`header`](format::header), the [`footer`](format::footer) and its edits, [`column`](format::column) types and paths, which byte ranges belong to which chunk |
//! | [`values`] | the stored-value layer: [`stored`](values::stored)'s [`Literal`] vocabulary and rules (widths, units, scales, INT96, the float zero rule, "never stored", "always maybe"); its front ends only translate: command-line [`text`](values::text), [`arrow`](values::arrow) arrays |
//! | [`io`] | read policy, merged ranges, fetched bytes, [`IoStats`] |
//! | [`keys`] | keys for encrypted files and how each chunk is protected (plain data) |
//! | `crypto` | (feature `encryption`, on by default) Parquet modular encryption: footers, column metadata, sealed filter modules, pages; without it no AES crate is built and an encrypted file is [`Error::EncryptionNotBuilt`] |
//! | [`read`] | reading a file's footer (`read/footer.rs`), the [`answer`](read::answer)s, the one I/O-free plan of which filter bytes to read, and its drivers: [`ParquetFile`]'s synchronous probes, [`read::async_driver`] (feature `async`) over any arrow-rs `AsyncFileReader` |
//! | [`prune`] | "which row groups can a predicate skip", for query engines (the leaves are probed in the same waves, then the answers decide) |
//! | [`source`] | local FILE arguments ([`source::local_files`]), object stores (feature `store`: the `ObjectStore` trait and local files; feature `object_store`: S3, GCS, Azure and HTTP from URLs) and many files at once |
//! | [`write`](mod@write) | [`build`](write::build)ing filters, adding and resizing them in a file without touching its data, and where output goes ([`output`](write::output): the in-place rules, the atomic rename) |
//! | [`inspect`], [`verify`] | a report on every filter; filters checked against the data |
//! | `report` | (feature `serde`) the probe report, the JSON object per file that every front end prints or returns |
//!
//! Encryption reaches the rest through two narrow hooks: the read plan hands an encrypted
//! filter's byte ranges to the sealed-filter opener, and the footer code opens and seals
//! encrypted column metadata through [`format::footer::ColumnMetaCipher`].
//!
//! The Bloom filter header is decoded with the `thrift` crate's compact protocol (the
//! `parquet` crate keeps its own Thrift reader private), configured with tight size limits
//! because its defaults allocate what a length prefix claims.
//!
//! ```no_run
//! use sbbf_parquet::{ParquetFile, IoPolicy, Answer, values::text::{encode_text, EncodeOptions}};
//!
//! let pq = ParquetFile::open(std::fs::File::open("events.parquet")?)?;
//! let col = pq.column_index("user_id")?;
//! let value = encode_text(&pq.columns()[col], "12345", EncodeOptions::default())?;
//! let skippable: Vec<usize> = pq
//!     .probe(col, &[value], IoPolicy::default())
//!     .iter()
//!     .filter(|rg| rg.answers[0] == Answer::Absent)
//!     .map(|rg| rg.row_group)
//!     .collect();
//! println!("row groups to skip: {skippable:?}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

// The modules, in the order data flows through them: each uses only those above it
// (tests/parquet/layering.rs checks it).
#[cfg(feature = "encryption")]
pub mod crypto;
mod error;
pub mod format;
pub mod inspect;
pub mod io;
pub mod keys;
pub mod prune;
pub mod read;
#[cfg(feature = "serde")]
pub mod report;
pub mod source;
pub mod values;
pub mod verify;
pub mod write;

pub use error::{
    BuildError, CryptoError, Error, Fault, FooterError, MalformedCrypto, NoFilesReason, NotParquet,
    ReadError, ValueError, WriteError,
};
pub use io::{IoPolicy, IoStats};
pub use keys::{Key, KeySet};
pub use read::answer::{Answer, FilterLocation, FilterState, NoFilter, RowGroupAnswer};
pub use read::file::ParquetFile;
pub use read::plan::FilterSpan;
pub use values::stored::{Encoded, Literal, MaybeWhy};
