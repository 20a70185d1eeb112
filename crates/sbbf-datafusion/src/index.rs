//! The table index (`sbbf index build`, crate `sbbf-index`): the files it rules out for a
//! scan's `=` / `IN` predicate are left out of DataFusion's listing, so their footers are
//! never read.
//!
//! The index is never trusted blindly: a file is left out only when the index knows it, its
//! size, inode and times (or ETag) are those the index recorded, and the index says
//! every row group of it definitely fails the predicate. A new or changed file, a column the
//! index does not cover, values it cannot encode: the file is listed and pruned as without
//! an index. A damaged or foreign index is ignored, with one warning
//! ([`crate::SbbfTable::index_warning`]).
//!
//! # How files are left out
//!
//! DataFusion's listing table lists the files of a scan itself (and reads every footer for
//! its statistics). For a scan the index prunes ([`ask`]), the table lists through a view of
//! the table's object store whose listings leave those files out (everything else is the
//! store's: `crate::filtered`), registered in the session under a URL of its own; the rest of
//! the scan is DataFusion's, unchanged.

use datafusion::datasource::listing::ListingTableUrl;
use sbbf_index::probe::ruled_out;
use sbbf_index::{Listed, Root};
use sbbf_parquet::prune::Predicate;
use std::collections::HashMap;
use std::fmt;

/// Files the index rules out for one scan: object path -> (size, row groups).
pub(crate) type Dropped = HashMap<String, (u64, usize)>;

/// The outcome of asking the index about a scan.
pub(crate) enum Asked {
    /// No usable index, or nothing to leave out.
    Nothing,
    /// The index was unusable: ignore it, saying why once.
    Ignored(String),
    /// These files can be left out.
    Drop(Dropped),
}

/// The files under `root` the index proves `pred` false for in every row group, keyed by
/// their object path under `table` (as DataFusion's listing names them). `listed`: the
/// table's files as its own listing found them (the one listing of an object-store prefix,
/// which the scan lists from too); without it, the root is listed now.
pub(crate) async fn ask(
    root: &Root,
    listed: Option<&[Listed]>,
    table: &ListingTableUrl,
    pred: &Predicate,
) -> Asked {
    let (listing, loaded) = match listed {
        Some(l) => (Ok(std::borrow::Cow::Borrowed(l)), root.load().await),
        None => {
            let (l, loaded) = futures::future::join(root.list(), root.load()).await;
            (l.map(std::borrow::Cow::Owned), loaded)
        }
    };
    let Ok(listing) = listing else {
        // The scan's own listing will say what is wrong.
        return Asked::Nothing;
    };
    let ignore = |e: &dyn fmt::Display| {
        Asked::Ignored(format!("ignoring the index {}: {e}", root.index_location()))
    };
    let loaded = match loaded {
        Ok(Some((loaded, _))) => loaded,
        Ok(None) => return Asked::Nothing,
        Err(e) => return ignore(&e),
    };
    let out = match ruled_out(root, &loaded, &listing, pred).await {
        Ok(out) => out,
        Err(e) => return ignore(&e),
    };
    let prefix = table.prefix().as_ref().trim_end_matches('/').to_string();
    let mut dropped = Dropped::new();
    for (l, groups) in listing.iter().zip(&out) {
        if let Some(groups) = groups {
            dropped.insert(object_path(&prefix, l), (l.size, *groups));
        }
    }
    if dropped.is_empty() {
        Asked::Nothing
    } else {
        Asked::Drop(dropped)
    }
}

fn object_path(prefix: &str, l: &Listed) -> String {
    if prefix.is_empty() {
        l.rel.clone()
    } else {
        format!("{prefix}/{}", l.rel)
    }
}
