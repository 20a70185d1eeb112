//! The table index (`sbbf index build`, crate `sbbf-index`): the files it rules out for a
//! scan's `=` / `IN` predicate are left out of DataFusion's listing, so their footers are
//! never read; the other files it knows as they are now are planned from what it knows
//! (their row groups, those it rules out, and their row counts as DataFusion's statistics:
//! [`KnownFiles`], [`KnownStatistics`]), so planning reads none of their footers either.
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

use datafusion::common::TableReference;
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::execution::cache::cache_manager::CachedFileMetadata;
use datafusion::execution::cache::{Cache, CacheEntryInfo, TableScopedPath};
use object_store::path::Path;
use object_store::ObjectMeta;
use sbbf_index::format::Stamp;
use sbbf_index::probe::{row_groups_ruled_out, KnownFile};
use sbbf_index::table::ReadStats;
use sbbf_index::{Listed, Root};
use sbbf_lake::Snapshot;
use sbbf_parquet::prune::Predicate;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

pub(crate) use sbbf_index::table::Loading;

/// Files the index rules out for one scan: object path -> (size, row groups).
pub(crate) type Dropped = HashMap<String, (u64, usize)>;

/// Files the index knows as they are now, by object path: what it says of their row groups,
/// and the listing entry it judged them by ([`Known::of`] holds a scan's file to it).
pub(crate) type KnownFiles = HashMap<String, Known>;

/// A file the index knows as it was listed: its row groups (and, for a scan's predicate,
/// those it rules out), so that the scan plans it without reading its footer.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    size: u64,
    stamp: Stamp,
    /// Rows per row group, from the index.
    pub(crate) row_counts: Vec<i64>,
    /// Row groups the index proves the scan's predicate false in (all `false` without one).
    pub(crate) ruled_out: Vec<bool>,
    /// Row groups whose answer is the file's own filters' (all `true` without a predicate).
    pub(crate) exact: Vec<bool>,
    /// The file as the query engine's listing gave it, where known.
    meta: Option<ObjectMeta>,
    /// A lake table's data file: its path and size are what identify it (both formats write
    /// a data file once under a new name and never change it in place; the index checked
    /// its stamp when asked), where the listing, made from the snapshot, has no time.
    lake: bool,
}

impl Known {
    pub(crate) fn new(listed: &Listed, file: KnownFile) -> Known {
        Known {
            size: listed.size,
            stamp: listed.stamp.clone(),
            row_counts: file.row_counts,
            ruled_out: file.ruled_out,
            exact: file.exact,
            meta: None,
            lake: false,
        }
    }

    /// With the query engine's listing entry of the file (the one `listed` was made from).
    pub(crate) fn with_meta(mut self, meta: ObjectMeta) -> Known {
        self.meta = Some(meta);
        self
    }

    /// Whether the scan can plan the file from this alone: every row group is ruled out or
    /// answered as its own filters would answer.
    pub(crate) fn plans_alone(&self) -> bool {
        self.ruled_out.len() == self.row_counts.len()
            && self.exact.len() == self.row_counts.len()
            && self
                .ruled_out
                .iter()
                .zip(&self.exact)
                .all(|(r, e)| *r || *e)
    }

    /// The file's size when the index judged it.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// The query engine's listing entry of the file, when known.
    pub(crate) fn object_meta(&self) -> Option<&ObjectMeta> {
        self.meta.as_ref()
    }

    /// What the index knows of the file a scan lists as `meta`, when that is the file the
    /// index judged (same size, and the same modification time, or time and ETag, as it was
    /// listed then); `None` on any doubt: a file that changed since is planned from its own
    /// footer.
    pub(crate) fn of<'a>(known: &'a KnownFiles, meta: &ObjectMeta) -> Option<&'a Known> {
        let k = known.get(meta.location.as_ref())?;
        let same = k.size == meta.size
            && match &k.stamp {
                _ if k.lake => true,
                Stamp::Local { mtime_ns, .. } => {
                    meta.last_modified.timestamp_nanos_opt() == Some(*mtime_ns)
                }
                Stamp::Object {
                    last_modified_ms,
                    etag,
                } => {
                    meta.last_modified.timestamp_millis() == *last_modified_ms
                        && etag.is_some()
                        && sbbf_index::table::content_tag(meta) == *etag
                }
            };
        same.then_some(k)
    }
}

/// The outcome of asking the index about a join's keys.
pub(crate) enum Asked {
    /// No usable index (a damaged one is reported by the table's own scans), or nothing to
    /// leave out.
    Nothing,
    /// These files can be left out.
    Drop(Dropped),
}

/// [`ask`], row group by row group: the files the index rules out wholly, and what it knows
/// of every other file it knows as it is now.
pub(crate) enum AskedRowGroups {
    /// No usable index.
    Nothing,
    /// The index was unusable: ignore it, saying why once.
    Ignored(String),
    /// Files to leave out, the row groups of the others the index knows, and what reading
    /// the index took (its head, when read for this ask, and the sections asked).
    Answered {
        dropped: Dropped,
        known: KnownFiles,
        reads: ReadStats,
    },
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
    match ask_row_groups(root, listed, table, pred, None).await {
        AskedRowGroups::Nothing | AskedRowGroups::Ignored(_) => Asked::Nothing,
        AskedRowGroups::Answered { dropped, .. } if dropped.is_empty() => Asked::Nothing,
        AskedRowGroups::Answered { dropped, .. } => Asked::Drop(dropped),
    }
}

/// [`ask`], keeping what the index says of the row groups of the files it does not rule out
/// wholly; `preloaded`: the index's head when already read.
pub(crate) async fn ask_row_groups(
    root: &Root,
    listed: Option<&[Listed]>,
    table: &ListingTableUrl,
    pred: &Predicate,
    preloaded: Option<Loading>,
) -> AskedRowGroups {
    let load = async {
        match preloaded {
            Some(loaded) => loaded,
            None => root.load().await,
        }
    };
    let (listing, loaded) = match listed {
        Some(l) => (Ok(std::borrow::Cow::Borrowed(l)), load.await),
        None => {
            let (l, loaded) = futures::future::join(root.list(), load).await;
            (l.map(std::borrow::Cow::Owned), loaded)
        }
    };
    let Ok(listing) = listing else {
        // The scan's own listing will say what is wrong.
        return AskedRowGroups::Nothing;
    };
    let (out, reads) = match ruled_out(root, loaded, &listing, pred).await {
        Ok(out) => out,
        Err(asked) => return asked,
    };
    let prefix = table.prefix().as_ref().trim_end_matches('/').to_string();
    answered(
        listing
            .iter()
            .zip(out)
            .map(|(l, f)| (object_path(&prefix, l), l, f)),
        false,
        reads,
    )
}

/// A lake table's files as its index is asked about them: the snapshot (how its files name
/// its columns), its files as the index lists them (in the snapshot's order, see
/// [`Root::list_table`]), and the object path the scan's listing gives each.
#[derive(Debug)]
pub(crate) struct LakeFiles {
    pub(crate) snapshot: Arc<Snapshot>,
    pub(crate) listed: Vec<Listed>,
    pub(crate) paths: Vec<Path>,
}

/// [`ask_row_groups`] of a lake table: `pred`, over the table's columns, is asked by the
/// names its files give them ([`Snapshot::index_column`]); a leaf on a column the index
/// cannot answer for soundly (a partition column, a renamed one, one with a default) is
/// left out of it, which only ever leaves more files in. Files are keyed by their object
/// paths as the scan's listing names them, and known by path and size.
pub(crate) async fn ask_lake(
    root: &Root,
    files: &LakeFiles,
    pred: &Predicate,
    preloaded: Option<Loading>,
) -> AskedRowGroups {
    let Some(pred) = by_file_names(pred, &files.snapshot) else {
        return AskedRowGroups::Nothing;
    };
    let loaded = match preloaded {
        Some(loaded) => loaded,
        None => root.load().await,
    };
    let (out, reads) = match ruled_out(root, loaded, &files.listed, &pred).await {
        Ok(out) => out,
        Err(asked) => return asked,
    };
    answered(
        files
            .listed
            .iter()
            .zip(out)
            .zip(&files.paths)
            .map(|((l, f), p)| (p.to_string(), l, f)),
        true,
        reads,
    )
}

/// `pred` with each leaf's column as the index of the table `snap` knows it, and the leaves
/// it cannot be asked soundly left out: from an AND (what is left is weaker), or the whole
/// OR holding one (`None`: nothing left to ask).
pub(crate) fn by_file_names(pred: &Predicate, snap: &Snapshot) -> Option<Predicate> {
    match pred {
        Predicate::Eq(c, v) => Some(Predicate::Eq(snap.index_column(c)?, v.clone())),
        Predicate::In(c, vs) => Some(Predicate::In(snap.index_column(c)?, vs.clone())),
        Predicate::And(ps) => {
            let mut kept: Vec<Predicate> =
                ps.iter().filter_map(|p| by_file_names(p, snap)).collect();
            match kept.len() {
                0 => None,
                1 => kept.pop(),
                _ => Some(Predicate::And(kept)),
            }
        }
        Predicate::Or(ps) => ps
            .iter()
            .map(|p| by_file_names(p, snap))
            .collect::<Option<Vec<_>>>()
            .map(Predicate::Or),
    }
}

/// What the index says of each of `listing`'s files for `pred`, once its load (`loaded`)
/// is in, and what reading it took (the load's and the ask's); else what the scan does
/// without it.
async fn ruled_out(
    root: &Root,
    loaded: Loading,
    listing: &[Listed],
    pred: &Predicate,
) -> Result<(Vec<Option<KnownFile>>, ReadStats), AskedRowGroups> {
    let ignore = |e: &dyn fmt::Display| {
        AskedRowGroups::Ignored(format!("ignoring the index {}: {e}", root.index_location()))
    };
    let (loaded, mut reads) = match loaded {
        Ok(Some(got)) => got,
        Ok(None) => return Err(AskedRowGroups::Nothing),
        Err(e) => return Err(ignore(&e)),
    };
    let out = row_groups_ruled_out(root, &loaded, listing, pred, &mut reads).await;
    out.map(|o| (o, reads)).map_err(|e| ignore(&e))
}

/// The files the index rules out wholly, and what it knows of the others, by the keys
/// given.
fn answered<'a>(
    files: impl Iterator<Item = (String, &'a Listed, Option<KnownFile>)>,
    lake: bool,
    reads: ReadStats,
) -> AskedRowGroups {
    let mut dropped = Dropped::new();
    let mut known = KnownFiles::new();
    for (key, l, file) in files {
        let Some(file) = file else { continue };
        let n = file.row_counts.len();
        if n > 0 && file.ruled_out.iter().all(|&r| r) {
            dropped.insert(key, (l.size, n));
        } else {
            let mut k = Known::new(l, file);
            k.lake = lake;
            known.insert(key, k);
        }
    }
    AskedRowGroups::Answered {
        dropped,
        known,
        reads,
    }
}

/// The object path of listed file `l` of the table whose prefix is `prefix`.
pub(crate) fn object_path(prefix: &str, l: &Listed) -> String {
    if prefix.is_empty() {
        l.rel.clone()
    } else {
        format!("{prefix}/{}", l.rel)
    }
}

/// The statistics of the files the index knows, as DataFusion's listing asks its statistics
/// cache for them before reading a footer: filled once when the table is made, by object
/// path. Whatever listing table asks (the table's own, or a scan's view leaving files out,
/// which names its files' table otherwise), an entry answers for the same object, and
/// DataFusion takes it only while the file's size and modification time are those listed
/// then. It keeps nothing DataFusion gathers itself (files the index does not know are read
/// as without it).
#[derive(Debug, Default)]
pub(crate) struct KnownStatistics(pub(crate) HashMap<Path, CachedFileMetadata>);

impl Cache<TableScopedPath, CachedFileMetadata> for KnownStatistics {
    fn get(&self, key: &TableScopedPath) -> Option<CachedFileMetadata> {
        self.0.get(&key.path).cloned()
    }

    fn put(&self, _: &TableScopedPath, _: CachedFileMetadata) -> Option<CachedFileMetadata> {
        None
    }

    fn remove(&self, _: &TableScopedPath) -> Option<CachedFileMetadata> {
        None
    }

    fn contains_key(&self, key: &TableScopedPath) -> bool {
        self.0.contains_key(&key.path)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn clear(&self) {}

    fn name(&self) -> String {
        "sbbf index row counts".to_string()
    }

    fn cache_limit(&self) -> usize {
        usize::MAX
    }

    fn update_cache_limit(&self, _: usize) {}

    fn cache_ttl(&self) -> Option<std::time::Duration> {
        None
    }

    fn update_cache_ttl(&self, _: Option<std::time::Duration>) {}

    fn drop_table_entries(&self, _: &TableReference) -> datafusion::common::Result<()> {
        Ok(())
    }

    fn list_entries(
        &self,
    ) -> datafusion::common::HashMap<TableScopedPath, CacheEntryInfo<CachedFileMetadata>> {
        datafusion::common::HashMap::new()
    }
}
