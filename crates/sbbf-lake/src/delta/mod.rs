//! Delta Lake tables: the snapshot at a version or a time through Delta's kernel
//! (`read.rs`), the log's listing and its objects' names (`log.rs`, which finding a table
//! needs in every build), the commits after a version (`since.rs`, for an index that knows
//! it), and commits to a table (`commit.rs`: `sbbf add TABLE`'s swap of
//! files for copies). The kernel's parts are built with the feature `tables` only.

#[cfg(feature = "tables")]
pub(crate) mod commit;
#[cfg_attr(not(feature = "tables"), allow(dead_code))]
mod log;
#[cfg(feature = "tables")]
mod read;
#[cfg_attr(not(feature = "tables"), allow(dead_code))]
mod since;

pub(crate) use log::{log_name, look, LogLook, LogName, FIRST_PAGE};
#[cfg(feature = "tables")]
pub(crate) use read::{physical_name, snapshot, Vectors};
#[cfg_attr(not(feature = "tables"), allow(unused_imports))]
pub(crate) use since::{mark as since_mark, read as read_since};
