//! Where files come from: local FILE arguments ([`local_files`]: a file, a directory, a
//! glob), objects on a store (`object`, feature `object_store`), and (`Source`, feature
//! `object_store`) many files at once through the one async driver.

pub mod local;
#[cfg(feature = "object_store")]
mod many;
#[cfg(feature = "object_store")]
pub mod object;

pub use local::local_files;
#[cfg(feature = "object_store")]
pub use many::*;
