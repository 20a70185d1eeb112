//! The Parquet side of split-block Bloom filters: where a column chunk's filter is, how to read
//! it cheaply and safely, and which bytes a value is hashed as.
//!
//! Data flows one way: file bytes → footer ([`ParquetFile::open`], the `parquet` crate decodes
//! it) → column chunk ([`ParquetFile::filter_locations`]) → filter bytes ([`header`], [`io`]) →
//! [`sbbf::SbbfRef`]; and a typed value → plain bytes → hash → probe.
//!
//! Values have one home, [`stored`]: the [`Literal`] vocabulary and the rules that turn a
//! literal into the bytes a column stores (widths, units, scales, INT96, the float zero rule,
//! "never stored", "always maybe"). Its front ends only translate: command-line text
//! ([`value`]), Arrow arrays ([`arrow_values`]), and engines' literals directly.
//!
//! Beyond probing:
//!
//! - [`prune`] answers "which row groups can a predicate skip" for query engines (one
//!   evaluation path: the predicate's leaves are probed, then the answers decide);
//!   [`asyncio`] does the same through any arrow-rs `AsyncFileReader`, and `remote` (feature
//!   `object_store`) over S3, GCS, Azure and HTTP.
//! - [`build`] makes filters from a chunk's stored values or from Arrow arrays; [`write`](mod@write) adds
//!   or resizes filters in a file without touching its data ([`footer`] re-encodes the footer).
//! - [`crypto`]: files with Parquet modular encryption, opened with a [`crypto::KeySet`]
//!   ([`ParquetFile::open_with_keys`]): encrypted filters are decrypted and authenticated;
//!   a chunk without its key answers "unknown" with the reason.
//! - `report` (feature `serde`) is the probe report, the JSON object per file that every
//!   front end prints or returns.
//! - [`verify`] checks a writer's filters against the data; [`inspect`] reports on every filter.
//! - Every read is planned by one I/O-free job (`job.rs`), driven by one sync and one async
//!   driver, and merged by [`io`]'s rules; [`ParquetFile::io_stats`] counts requests, bytes
//!   and waves. Which byte ranges belong to which chunk is `layout.rs`'s.
//!
//! The Bloom filter header is decoded with the `thrift` crate's compact protocol (the
//! `parquet` crate keeps its own Thrift reader private), configured with tight size limits
//! because its defaults allocate what a length prefix claims.
//!
//! ```no_run
//! use sbbf_parquet::{ParquetFile, IoPolicy, Answer, value::{encode_text, EncodeOptions}};
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

pub mod arrow_values;
#[cfg(feature = "async")]
pub mod asyncio;
pub mod build;
pub mod column;
pub mod crypto;
mod decode;
mod error;
mod file;
#[cfg(feature = "object_store")]
mod files;
pub mod footer;
pub mod header;
pub mod inspect;
pub mod io;
mod job;
mod layout;
pub mod output;
mod probe;
pub mod prune;
#[cfg(feature = "object_store")]
pub mod remote;
#[cfg(feature = "serde")]
pub mod report;
#[cfg(feature = "object_store")]
pub mod source;
pub mod stored;
pub mod value;
pub mod verify;
pub mod write;

pub use error::{BuildError, Error, FooterError, NoFilesReason, NotParquet, ReadError, WriteError};
pub use file::ParquetFile;
pub use io::{IoPolicy, IoStats};
pub use job::{FilterSpan, NoFilter};
pub use probe::{Answer, FilterLocation, FilterState, RowGroupAnswer};
pub use stored::{Encoded, Literal};
