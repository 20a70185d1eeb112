//! Bytes on disk, before any value or read policy: the Bloom filter header, the footer
//! (`FileMetaData`) and its edits, column types and paths, and which byte ranges belong to
//! which column chunk. No I/O and no keys: encrypted column metadata is opened and sealed
//! through [`footer::ColumnMetaCipher`], which the encryption layer implements.

pub mod column;
pub mod footer;
pub mod header;
pub(crate) mod layout;
