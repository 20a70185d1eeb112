//! A view of an object store whose listings leave some objects out ([`FilteredStore`]); every
//! other call is the store's. A table lists through such a view, registered in the session
//! under a URL of its own; the rest of the scan is DataFusion's, unchanged. Two rules use it:
//!
//! - **Hidden names** ([`FilteredStore::without_hidden`], [`visible_url`]): a table below its
//!   root is every Parquet file except those under a name starting with `_` or `.`
//!   (`_temporary/`, `_SUCCESS`, `.hidden`), as Spark, Hive and pyarrow's datasets read a
//!   folder (see [`sbbf_parquet::source::is_hidden_name`]). DataFusion's listing reads them
//!   all: a Spark job's in-flight task output would be counted.
//! - **Files the table index rules out** for one scan ([`FilteredStore::without_dropped`],
//!   [`hiding_url`]; `crate::index` says which), each only while its size is the one the
//!   index recorded, counted as they are left out.
//! - **Only these files** ([`snapshot_url`]): a lake table's snapshot files, or an
//!   object-store prefix's files as listed once for the table; listings are answered from
//!   them and the store is never listed again.

use crate::index::Dropped;
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

/// What a [`FilteredStore`]'s listings leave out.
#[derive(Debug, Clone)]
enum Rule {
    /// What lies below this root under a hidden name (objects and common prefixes).
    Hidden(Path),
    /// These objects (object path -> size, row groups), each while its size is the same.
    Dropped(Arc<Dropped>),
    /// Only these objects, listed from here and not from the store: a lake table's snapshot
    /// files, as its log or manifests describe them (the rest of its folder is files the
    /// table removed or never committed, and its log), or a prefix's files as the table
    /// listed them once (a listing costs a request per 1,000 names on an object store).
    Only(Arc<Vec<ObjectMeta>>),
}

/// Files and row groups a [`FilteredStore`]'s listings left out by [`Rule::Dropped`].
#[derive(Debug, Default)]
struct Counts {
    files: AtomicUsize,
    row_groups: AtomicUsize,
}

impl Rule {
    /// Whether a listing keeps object `m` (counting what it leaves out into `counts`).
    fn keeps(&self, counts: &Counts, m: &ObjectMeta) -> bool {
        match self {
            Rule::Hidden(root) => !hidden_below(root, &m.location),
            Rule::Dropped(dropped) => match dropped.get(m.location.as_ref()) {
                Some(&(size, n)) if size == m.size => {
                    counts.files.fetch_add(1, Ordering::Relaxed);
                    counts.row_groups.fetch_add(n, Ordering::Relaxed);
                    false
                }
                _ => true,
            },
            Rule::Only(_) => false,
        }
    }

    /// Whether a delimited listing keeps the common prefix `p`.
    fn keeps_prefix(&self, p: &Path) -> bool {
        match self {
            Rule::Hidden(root) => !hidden_below(root, p),
            Rule::Dropped(_) | Rule::Only(_) => true,
        }
    }
}

/// A view of an object store whose listings leave out what its rule says (hidden names below
/// a root, or the files an index ruled out); every other call is the store's.
#[derive(Debug)]
pub(crate) struct FilteredStore {
    inner: Arc<dyn ObjectStore>,
    rule: Rule,
    counts: Arc<Counts>,
}

impl FilteredStore {
    /// `inner` without what lies below `root` under a hidden name.
    pub(crate) fn without_hidden(inner: Arc<dyn ObjectStore>, root: Path) -> FilteredStore {
        FilteredStore::new(inner, Rule::Hidden(root))
    }

    /// `inner` without the files in `dropped` (object path -> size, row groups), each only
    /// while its size is the one recorded.
    pub(crate) fn without_dropped(inner: Arc<dyn ObjectStore>, dropped: Dropped) -> FilteredStore {
        FilteredStore::new(inner, Rule::Dropped(Arc::new(dropped)))
    }

    fn new(inner: Arc<dyn ObjectStore>, rule: Rule) -> FilteredStore {
        FilteredStore {
            inner,
            rule,
            counts: Arc::default(),
        }
    }

    /// Files and row groups its listings left out so far (index-dropped files only).
    pub(crate) fn left_out(&self) -> (usize, usize) {
        (
            self.counts.files.load(Ordering::Relaxed),
            self.counts.row_groups.load(Ordering::Relaxed),
        )
    }
}

impl fmt::Display for FilteredStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rule {
            Rule::Hidden(_) => write!(f, "Visible({})", self.inner),
            Rule::Dropped(_) => write!(f, "Hiding({})", self.inner),
            Rule::Only(_) => write!(f, "Snapshot({})", self.inner),
        }
    }
}

#[async_trait::async_trait]
impl ObjectStore for FilteredStore {
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
        if let Rule::Only(files) = &self.rule {
            let below: Vec<object_store::Result<ObjectMeta>> = files
                .iter()
                .filter(|m| prefix.is_none_or(|p| m.location.prefix_matches(p)))
                .cloned()
                .map(Ok)
                .collect();
            return futures::stream::iter(below).boxed();
        }
        let (rule, counts) = (self.rule.clone(), Arc::clone(&self.counts));
        self.inner
            .list(prefix)
            .filter(move |m| {
                let keep = match m {
                    Ok(m) => rule.keeps(&counts, m),
                    Err(_) => true,
                };
                futures::future::ready(keep)
            })
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        if let Rule::Only(files) = &self.rule {
            return Ok(delimited(files, prefix));
        }
        let mut r = self.inner.list_with_delimiter(prefix).await?;
        r.objects.retain(|m| self.rule.keeps(&self.counts, m));
        r.common_prefixes.retain(|p| self.rule.keeps_prefix(p));
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

/// The objects of `files` directly below `prefix`, and the folders below it that hold the
/// others, as a store's delimited listing answers.
fn delimited(files: &[ObjectMeta], prefix: Option<&Path>) -> ListResult {
    let mut objects = Vec::new();
    let mut folders = std::collections::BTreeSet::new();
    let depth = prefix.map_or(0, |p| p.parts().count());
    for m in files {
        if prefix.is_some_and(|p| m.location.prefix_match(p).is_none()) {
            continue;
        }
        let parts: Vec<_> = m.location.parts().skip(depth).collect();
        match parts.as_slice() {
            [_] => objects.push(m.clone()),
            [first, _, ..] => {
                let folder = match prefix {
                    Some(p) => p.clone().join(first.clone()),
                    None => Path::from_iter([first.clone()]),
                };
                folders.insert(folder);
            }
            [] => {}
        }
    }
    ListResult {
        common_prefixes: folders.into_iter().collect(),
        objects,
    }
}

/// A URL of its own for a view of the store of `table`, under scheme `scheme`: the store's
/// URL, and the table's URL through it.
fn view_url(table: &ListingTableUrl, scheme: String) -> Option<(url::Url, ListingTableUrl)> {
    let url: &url::Url = table.as_ref();
    let rest = &url.as_str()[url.scheme().len()..];
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

/// Registers a view of `store` (the store of `table`) without its hidden names in the
/// session, and returns the table's URL through it (see [`register_view`]).
pub(crate) fn visible_url(
    env: &datafusion::execution::runtime_env::RuntimeEnv,
    table: &ListingTableUrl,
    store: Arc<dyn ObjectStore>,
) -> Option<ListingTableUrl> {
    let view = FilteredStore::without_hidden(store, table.prefix().clone());
    register_view(env, table, view, "visible")
}

/// Registers a view of `store` (the store of `table`) whose listings are `files` (a lake
/// table's snapshot files, or a prefix's as listed once; the store is never listed), and
/// returns the table's URL through it (see [`register_view`]).
pub(crate) fn snapshot_url(
    env: &datafusion::execution::runtime_env::RuntimeEnv,
    table: &ListingTableUrl,
    store: Arc<dyn ObjectStore>,
    files: Vec<ObjectMeta>,
) -> Option<ListingTableUrl> {
    let view = FilteredStore::new(store, Rule::Only(Arc::new(files)));
    register_view(env, table, view, "snapshot")
}

/// Registers `view` in the session under a scheme of its own (`sbbf-KIND-N`, or
/// `sbbf-local-visible-N` for a local table: its filters are read as a local file's) and
/// returns `table`'s URL through it; `None` when `table` cannot be given one.
fn register_view(
    env: &datafusion::execution::runtime_env::RuntimeEnv,
    table: &ListingTableUrl,
    view: FilteredStore,
    kind: &str,
) -> Option<ListingTableUrl> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let url: &url::Url = table.as_ref();
    let scheme = if url.scheme() == "file" {
        format!("{LOCAL_SCHEME_PREFIX}{n}")
    } else {
        format!("sbbf-{kind}-{n}")
    };
    let (store_url, listing) = view_url(table, scheme)?;
    env.register_object_store(&store_url, Arc::new(view));
    Some(listing)
}

/// The scheme of the view of a local table.
pub(crate) const LOCAL_SCHEME_PREFIX: &str = "sbbf-local-visible-";

/// A URL of its own for one scan's view without the files the index ruled out
/// ([`FilteredStore::without_dropped`]): `table` with its scheme replaced (`sbbf-index-N`).
pub(crate) fn hiding_url(table: &ListingTableUrl) -> Option<(url::Url, ListingTableUrl)> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    view_url(table, format!("sbbf-index-{n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_view_lists_as_a_store_does() {
        let meta = |p: &str| ObjectMeta {
            location: Path::from(p),
            last_modified: Default::default(),
            size: 1,
            e_tag: None,
            version: None,
        };
        let files = [
            meta("t/x.parquet"),
            meta("t/p=1/y.parquet"),
            meta("t/p=1/q=2/z.parquet"),
            meta("u/w.parquet"),
        ];
        let r = delimited(&files, Some(&Path::from("t")));
        let objects: Vec<&str> = r.objects.iter().map(|m| m.location.as_ref()).collect();
        let folders: Vec<&str> = r.common_prefixes.iter().map(|p| p.as_ref()).collect();
        assert_eq!(objects, ["t/x.parquet"]);
        assert_eq!(folders, ["t/p=1"]);
        let r = delimited(&files, None);
        assert!(r.objects.is_empty());
        assert_eq!(r.common_prefixes, [Path::from("t"), Path::from("u")]);
    }
}
