//! The index in the first round trips of a probe over a store prefix: its sections are asked
//! as soon as its head is read, while the listing is still going (not after it), and the
//! listing asks the prefix's folders beside its first page (the same objects, at most one
//! request more). No timing: the store holds a listing back until what must go beside it has
//! been asked, so a probe that waited for one before asking the other would never finish.

use crate::common::{encoder, write_file};
use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use sbbf_index::build::{build, BuildOptions};
use sbbf_index::probe::plan;
use sbbf_index::Root;
use sbbf_parquet::source::object::{list_parquet, list_parquet_ahead};
use sbbf_parquet::source::SourceOptions;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::watch;

/// What lets a [`Gated`] store's listings through.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Until {
    /// Nothing holds them.
    Open,
    /// Every LIST waits until the index has been read twice (its head, then its sections).
    IndexSections,
    /// A flat LIST waits until a delimited one (the folders) has been asked.
    Folders,
}

/// An in-memory store that counts LIST requests (a page of 1,000 keys each, as S3 lists) and
/// reads of the index, and holds listings back as [`Until`] says.
#[derive(Debug)]
struct Gated {
    inner: Arc<InMemory>,
    until: Until,
    lists: Arc<AtomicUsize>,
    index_reads: AtomicUsize,
    released: watch::Sender<bool>,
}

impl Gated {
    fn new(inner: InMemory, until: Until) -> Gated {
        Gated {
            inner: Arc::new(inner),
            until,
            lists: Arc::new(AtomicUsize::new(0)),
            index_reads: AtomicUsize::new(0),
            released: watch::channel(until == Until::Open).0,
        }
    }

    fn read(&self, l: &Path) {
        if l.as_ref().ends_with("index.sbbfi")
            && self.index_reads.fetch_add(1, Ordering::SeqCst) + 1 >= 2
            && self.until == Until::IndexSections
        {
            self.released.send_replace(true);
        }
    }

    /// `listing` counted as requests: one when its first key is asked for, one more for each
    /// 1,000 keys after (a listing no one reads asks nothing).
    fn paged(
        &self,
        listing: impl futures::Stream<Item = object_store::Result<ObjectMeta>> + Send + 'static,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let lists = Arc::clone(&self.lists);
        let mut seen = 0usize;
        futures::stream::once(async move {
            lists.fetch_add(1, Ordering::SeqCst);
            listing.map(move |m| {
                seen += 1;
                if seen > 1 && seen % 1000 == 1 {
                    lists.fetch_add(1, Ordering::SeqCst);
                }
                m
            })
        })
        .flatten()
        .boxed()
    }

    /// Waits until listings are let through.
    fn gate(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.released.subscribe();
        async move {
            let _ = rx.wait_for(|open| *open).await;
        }
    }
}

impl std::fmt::Display for Gated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gated")
    }
}

#[async_trait]
impl ObjectStore for Gated {
    async fn put_opts(
        &self,
        l: &Path,
        p: PutPayload,
        o: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(l, p, o).await
    }
    async fn put_multipart_opts(
        &self,
        l: &Path,
        o: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(l, o).await
    }
    async fn get_opts(&self, l: &Path, o: GetOptions) -> object_store::Result<GetResult> {
        self.read(l);
        self.inner.get_opts(l, o).await
    }
    async fn get_ranges(
        &self,
        l: &Path,
        r: &[std::ops::Range<u64>],
    ) -> object_store::Result<Vec<bytes::Bytes>> {
        self.read(l);
        self.inner.get_ranges(l, r).await
    }
    fn delete_stream(
        &self,
        s: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(s)
    }
    fn list(&self, p: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let (inner, p, gate) = (Arc::clone(&self.inner), p.cloned(), self.gate());
        let listing = futures::stream::once(async move {
            gate.await;
            inner.list(p.as_ref())
        })
        .flatten();
        self.paged(listing)
    }
    fn list_with_offset(
        &self,
        p: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.paged(self.inner.list_with_offset(p, offset))
    }
    async fn list_with_delimiter(&self, p: Option<&Path>) -> object_store::Result<ListResult> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        match self.until {
            Until::Folders => {
                self.released.send_replace(true);
            }
            _ => self.gate().await,
        }
        self.inner.list_with_delimiter(p).await
    }
    async fn copy_opts(&self, a: &Path, b: &Path, o: CopyOptions) -> object_store::Result<()> {
        self.inner.copy_opts(a, b, o).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_index_sections_are_asked_while_the_listing_goes_on() {
    // 200 files in two folders with their index, built locally, then put on the store: 20,000
    // values a file make filters of 64 KiB and an index of 13 MB, whose first read (its last
    // 512 KiB) does not hold the value's stripes.
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    for k in 0..200i64 {
        let folder = dir.join(format!("p={}", k % 2));
        std::fs::create_dir_all(&folder).unwrap();
        write_file(
            &folder.join(format!("f{k:02}.parquet")),
            k,
            20_000,
            1,
            20_000,
        );
    }
    sbbf_testkit::settle(&dir);
    let local = Root::open(dir.to_str().unwrap()).unwrap().unwrap();
    build(&local, &BuildOptions::default()).await.unwrap();
    let mem = InMemory::new();
    for entry in walkdir(&dir) {
        let rel = entry
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let bytes = std::fs::read(&entry).unwrap();
        mem.put(&Path::from(format!("t/{rel}")), bytes.into())
            .await
            .unwrap();
    }
    let store = Arc::new(Gated::new(mem, Until::IndexSections));
    let root = Root::from_store("memory:///t/", store.clone(), Path::from("t")).with_snapshot(None);
    let values = vec!["17".to_string()];
    let enc = encoder(&values);
    let planned = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        plan(&root, "id", move |t| enc(t), SourceOptions::default()),
    )
    .await
    .expect("the listing waited for the index's sections, which waited for the listing")
    .unwrap();
    assert!(planned.stats.used, "{:?}", planned.warning);
    assert!(store.index_reads.load(Ordering::SeqCst) >= 2);
}

/// Every file below `dir`.
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn the_folders_are_asked_with_the_first_page() {
    // A page that is all there is; a full page in folders (split by folder); a full page of
    // objects of the prefix's own (page after page).
    for (name, keys) in [
        (
            "small",
            (0..10)
                .map(|k| format!("p={}/f{k}.parquet", k % 2))
                .collect::<Vec<_>>(),
        ),
        (
            "folders",
            (0..2500)
                .map(|k| format!("p={}/f{k:04}.parquet", k % 3))
                .collect(),
        ),
        (
            "flat",
            (0..1500).map(|k| format!("f{k:04}.parquet")).collect(),
        ),
    ] {
        let mem = InMemory::new();
        for k in &keys {
            mem.put(&Path::from(format!("t/{k}")), vec![0u8; 4].into())
                .await
                .unwrap();
        }
        let prefix = Path::from("t");
        let open = Arc::new(Gated::new(mem.clone(), Until::Open));
        let store: Arc<dyn ObjectStore> = open.clone();
        let whole = list_parquet(&store, &prefix).await.unwrap();
        let without = open.lists.load(Ordering::SeqCst);
        // The first page is held until the folders are asked: asked one after the other,
        // this never finishes.
        let gated = Arc::new(Gated::new(mem, Until::Folders));
        let store: Arc<dyn ObjectStore> = gated.clone();
        let ahead = tokio::time::timeout(
            std::time::Duration::from_secs(120),
            list_parquet_ahead(&store, &prefix),
        )
        .await
        .expect("the first page waited for the folders, which waited for the first page")
        .unwrap();
        let with = gated.lists.load(Ordering::SeqCst);
        let names = |v: &[ObjectMeta]| v.iter().map(|m| m.location.to_string()).collect::<Vec<_>>();
        assert_eq!(names(&ahead), names(&whole), "{name}");
        assert_eq!(whole.len(), keys.len(), "{name}");
        // The folders' request is one more at most (none where the first page was full and
        // in folders: it was asked anyway).
        let more = if name == "folders" { 0 } else { 1 };
        assert_eq!(with, without + more, "{name}: LIST requests");
    }
}
