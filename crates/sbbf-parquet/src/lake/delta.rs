//! Delta Lake tables through Delta's kernel (`delta_kernel`): the snapshot at a version or a
//! time, its data files with their sizes, row counts, partition values and deletion vectors.

use super::{AsOf, Snapshot, StoreRoot};
use crate::Error;
use url::Url;

/// Reads the snapshot of the Delta table at `url`, `arg` being how the user named it.
pub(crate) async fn snapshot(
    root: &StoreRoot,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
) -> Result<Snapshot, Error> {
    let _ = (root, arg, url, as_of);
    todo!("delta")
}
