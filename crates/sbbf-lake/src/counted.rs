//! A view of an object store that counts what is asked of it: how a table's snapshot was
//! found and read (Delta's log through its kernel, Iceberg's metadata, manifest list and
//! manifests) is reported beside the data files' own reads ([`LogReads`]).

use crate::LogReads;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The counters a [`Counted`] store adds to.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    gets: AtomicU64,
    lists: AtomicU64,
    listed: AtomicU64,
    bytes: AtomicU64,
}

impl Counters {
    pub(crate) fn reads(&self) -> LogReads {
        LogReads {
            gets: self.gets.load(Ordering::Relaxed),
            lists: self.lists.load(Ordering::Relaxed),
            listed: self.listed.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct Counted {
    inner: Arc<dyn ObjectStore>,
    counters: Arc<Counters>,
}

impl Counted {
    #[cfg(test)]
    fn counted(inner: Arc<dyn ObjectStore>) -> (Arc<dyn ObjectStore>, Arc<Counters>) {
        let counters = Arc::new(Counters::default());
        (Counted::with(inner, Arc::clone(&counters)), counters)
    }

    /// `inner`, its requests counted into `counters`.
    pub(crate) fn with(
        inner: Arc<dyn ObjectStore>,
        counters: Arc<Counters>,
    ) -> Arc<dyn ObjectStore> {
        Arc::new(Counted { inner, counters })
    }

    fn counted_list(
        &self,
        listing: BoxStream<'static, object_store::Result<ObjectMeta>>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.counters.lists.fetch_add(1, Ordering::Relaxed);
        let counters = Arc::clone(&self.counters);
        listing
            .inspect(move |m| {
                if m.is_ok() {
                    counters.listed.fetch_add(1, Ordering::Relaxed);
                }
            })
            .boxed()
    }
}

impl fmt::Display for Counted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counted({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for Counted {
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
        self.counters.gets.fetch_add(1, Ordering::Relaxed);
        let head = options.head;
        let got = self.inner.get_opts(location, options).await?;
        if !head {
            // What the answer carries (the range asked, or the whole object).
            let n = got.range.end.saturating_sub(got.range.start);
            self.counters.bytes.fetch_add(n, Ordering::Relaxed);
        }
        Ok(got)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.counted_list(self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.counted_list(self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.counters.lists.fetch_add(1, Ordering::Relaxed);
        let got = self.inner.list_with_delimiter(prefix).await?;
        let n = (got.objects.len() + got.common_prefixes.len()) as u64;
        self.counters.listed.fetch_add(n, Ordering::Relaxed);
        Ok(got)
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

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::{GetRange, ObjectStoreExt};

    #[tokio::test]
    async fn reads_and_listings_are_counted() {
        let inner = Arc::new(InMemory::new());
        for name in ["t/a", "t/b", "u/c"] {
            inner
                .put(&Path::from(name), PutPayload::from_static(b"0123456789"))
                .await
                .unwrap();
        }
        let (store, counters) = Counted::counted(inner);
        store.get(&Path::from("t/a")).await.unwrap();
        let opts = GetOptions {
            range: Some(GetRange::Bounded(2..5)),
            ..Default::default()
        };
        store.get_opts(&Path::from("t/b"), opts).await.unwrap();
        let listed: Vec<_> = store.list(Some(&Path::from("t"))).collect().await;
        assert_eq!(listed.len(), 2);
        assert!(store.get(&Path::from("t/none")).await.is_err());
        assert_eq!(
            counters.reads(),
            LogReads {
                gets: 3,
                lists: 1,
                listed: 2,
                bytes: 13,
            }
        );
    }
}
