//! What a table is below its root: every Parquet file except those under a name starting with
//! `_` or `.` (`_temporary/`, `_SUCCESS`, `.hidden`), as Spark, Hive and pyarrow's datasets
//! read a folder (see [`sbbf_parquet::source::is_hidden_name`]). DataFusion's listing reads
//! them all: a Spark job's in-flight task output would be counted.
//!
//! A table whose listing holds such files lists through [`Visible`], a view of its object
//! store whose listings leave them out, registered in the session under a URL of its own
//! (as the table index's view, `crate::index`); the rest is DataFusion's, unchanged.

use datafusion::datasource::listing::ListingTableUrl;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use sbbf_parquet::source::is_hidden_name;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Whether `location` lies below `root` under a name that hides it (below the root only: a
/// root named `_data/` is still a table).
pub(crate) fn hidden_below(root: &Path, location: &Path) -> bool {
    match location.prefix_match(root) {
        Some(mut parts) => parts.any(|p| is_hidden_name(p.as_ref())),
        None => false,
    }
}

/// A view of an object store whose listings leave out what lies below `root` under a hidden
/// name; every other call is the store's.
#[derive(Debug)]
pub(crate) struct Visible {
    inner: Arc<dyn ObjectStore>,
    root: Path,
}

impl Visible {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>, root: Path) -> Visible {
        Visible { inner, root }
    }
}

impl fmt::Display for Visible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Visible({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Visible {
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
        let root = self.root.clone();
        self.inner
            .list(prefix)
            .filter(move |m| {
                let keep = match m {
                    Ok(m) => !hidden_below(&root, &m.location),
                    Err(_) => true,
                };
                futures::future::ready(keep)
            })
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let mut r = self.inner.list_with_delimiter(prefix).await?;
        r.objects.retain(|m| !hidden_below(&self.root, &m.location));
        r.common_prefixes.retain(|p| !hidden_below(&self.root, p));
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

/// Registers a [`Visible`] view of `store` (the store of `table`) in the session, and returns
/// the table's URL through it. Its scheme is its own (`sbbf-visible-N`, or
/// `sbbf-local-visible-N` for a local table: its filters are read as a local file's).
pub(crate) fn visible_url(
    env: &datafusion::execution::runtime_env::RuntimeEnv,
    table: &ListingTableUrl,
    store: Arc<dyn ObjectStore>,
) -> Option<ListingTableUrl> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let url: &url::Url = table.as_ref();
    let rest = &url.as_str()[url.scheme().len()..];
    let scheme = if url.scheme() == "file" {
        format!("{LOCAL_SCHEME_PREFIX}{n}")
    } else {
        format!("sbbf-visible-{n}")
    };
    let store_url = url::Url::parse(&format!(
        "{scheme}://{}",
        &url[url::Position::BeforeHost..url::Position::AfterPort]
    ))
    .ok()?;
    // DataFusion's list-files cache keys a listing by table and path, not by store: with a
    // table of its own, the listing is this view's.
    let listing = ListingTableUrl::parse(format!("{scheme}{rest}"))
        .ok()?
        .with_table_ref(datafusion::common::TableReference::bare(scheme));
    let view = Visible::new(store, table.prefix().clone());
    env.register_object_store(&store_url, Arc::new(view));
    Some(listing)
}

/// The scheme of the view of a local table.
pub(crate) const LOCAL_SCHEME_PREFIX: &str = "sbbf-local-visible-";
