//! The index file's bytes (`docs/index-format.md`): a 16-byte header, the group sections, the
//! file table, one section per column, the head, and a 40-byte trailer. Everything read is untrusted: every count is checked
//! against the bytes left before anything is allocated for it, every offset against the file.
//!
//! | file | what |
//! |---|---|
//! | `types.rs` | the values: [`Stamp`], [`FileEntry`], [`Entry`], [`Group`], [`Directory`], [`Head`] |
//! | `write.rs` | the header, directory and trailer bytes a build writes |
//! | `read.rs` | [`parse_trailer`], [`check_header`], [`parse_head`], [`parse_directory`], ... |
//! | `part.rs` | a part's manifest and trailer, after its index ([`Manifest`], [`PART_MAGIC`]) |

mod part;
mod read;
#[cfg(test)]
mod tests;
mod types;
mod write;

pub(crate) use part::split_part;
pub use part::{Manifest, PART_MAGIC, PART_TRAILER_LEN, PART_VERSION};
pub use read::*;
pub use types::*;
pub(crate) use write::*;

/// The first and last eight bytes of an index file.
pub const MAGIC: &[u8; 8] = b"SBBFIDX\0";
/// The format version this crate writes.
pub const VERSION: u32 = 6;
/// The format versions this crate reads: 3 is 4 without the table version at the head's end,
/// 4 is 5 without the table's column names and commit mark after it, 5 is 6 without the
/// Iceberg metadata file and manifest list after those.
pub const READ_VERSIONS: std::ops::RangeInclusive<u32> = 3..=VERSION;
/// Bytes of the header: magic, version, reserved.
pub const HEADER_LEN: u64 = 16;
/// Bytes of the trailer: head offset, length, index length, version, the head's CRC, magic.
pub const TRAILER_LEN: u64 = 40;
/// The largest head a reader accepts (a bound on what a hostile trailer can make it read).
pub const MAX_DIRECTORY: u64 = 1 << 30;
