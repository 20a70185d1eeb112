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
//! its statistics). For a scan the index prunes, the table lists through [`Hiding`], a view
//! of the table's object store whose listings leave those files out (everything else is the
//! store's), registered in the session under a URL of its own; the rest of the scan is
//! DataFusion's, unchanged.

use datafusion::datasource::listing::ListingTableUrl;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use sbbf_index::probe::ruled_out;
use sbbf_index::{Listed, Root};
use sbbf_parquet::prune::Predicate;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

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
/// their object path under `table` (as DataFusion's listing names them).
pub(crate) async fn ask(root: &Root, table: &ListingTableUrl, pred: &Predicate) -> Asked {
    let (listing, loaded) = futures::future::join(root.list(), root.load()).await;
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

/// A view of an object store whose listings leave out the files an index ruled out (each
/// only while its size is the one the index recorded); every other call is the store's.
#[derive(Debug)]
pub(crate) struct Hiding {
    inner: Arc<dyn ObjectStore>,
    dropped: Arc<Dropped>,
    /// Files and row groups its listings left out.
    pub(crate) files: Arc<AtomicUsize>,
    pub(crate) row_groups: Arc<AtomicUsize>,
}

impl Hiding {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>, dropped: Dropped) -> Hiding {
        Hiding {
            inner,
            dropped: Arc::new(dropped),
            files: Arc::default(),
            row_groups: Arc::default(),
        }
    }

    fn keeps(
        dropped: &Dropped,
        files: &AtomicUsize,
        row_groups: &AtomicUsize,
        m: &ObjectMeta,
    ) -> bool {
        match dropped.get(m.location.as_ref()) {
            Some(&(size, n)) if size == m.size => {
                files.fetch_add(1, Ordering::Relaxed);
                row_groups.fetch_add(n, Ordering::Relaxed);
                false
            }
            _ => true,
        }
    }
}

impl fmt::Display for Hiding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hiding({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Hiding {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<bytes::Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let (dropped, files, rgs) = (
            Arc::clone(&self.dropped),
            Arc::clone(&self.files),
            Arc::clone(&self.row_groups),
        );
        self.inner
            .list(prefix)
            .filter(move |m| {
                let keep = match m {
                    Ok(m) => Hiding::keeps(&dropped, &files, &rgs, m),
                    Err(_) => true,
                };
                futures::future::ready(keep)
            })
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let mut r = self.inner.list_with_delimiter(prefix).await?;
        r.objects
            .retain(|m| Hiding::keeps(&self.dropped, &self.files, &self.row_groups, m));
        Ok(r)
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A URL of its own for one scan's [`Hiding`] store: `table` with its scheme replaced.
pub(crate) fn hiding_url(table: &ListingTableUrl) -> Option<(url::Url, ListingTableUrl)> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let url: &url::Url = table.as_ref();
    let rest = &url.as_str()[url.scheme().len()..];
    let scheme = format!("sbbf-index-{n}");
    let store = url::Url::parse(&format!(
        "{scheme}://{}",
        &url[url::Position::BeforeHost..url::Position::AfterPort]
    ))
    .ok()?;
    // DataFusion's list-files cache keys a listing by table and path, not by store: without
    // a table of its own, this listing would be answered with the table's full one.
    let listing = ListingTableUrl::parse(format!("{scheme}{rest}"))
        .ok()?
        .with_table_ref(datafusion::common::TableReference::bare(scheme));
    Some((store, listing))
}
