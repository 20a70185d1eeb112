//! Where files come from: local FILE arguments ([`local_files`]: a file, a directory, a
//! glob), objects on a store (`object`, feature `object_store`), and (`Source`, feature
//! `object_store`) many files at once through the one async driver.

pub mod local;
#[cfg(feature = "store")]
mod many;
#[cfg(feature = "store")]
pub mod object;

pub use local::{is_fs_loop, is_hidden_name, local_files};
#[cfg(feature = "store")]
pub use many::*;

/// Runs `work` to completion on a multi-threaded runtime started for it: how a synchronous
/// caller (a command, a Python call) drives the async sources.
///
/// ```
/// let answer = sbbf_parquet::source::block_on(async { 6 * 7 }).unwrap();
/// assert_eq!(answer, 42);
/// ```
#[cfg(feature = "store")]
pub fn block_on<F: std::future::Future>(work: F) -> Result<F::Output, crate::Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(crate::Error::Runtime)?;
    Ok(runtime.block_on(work))
}
