//! A view of an object store that reads each object whole, once, and answers every later read
//! of it (byte ranges included) from memory. Delta's kernel reads a log this way: a
//! checkpoint in several ranged requests one after another (its footer, then its columns),
//! and some commits twice (the snapshot, then the scan): on an object store each of those is
//! a round trip. Measured on a checkpointed table (tools/bench/bench_lake.py): 19 requests in
//! 16 waves to open the snapshot, of which 11 were reads of one checkpoint and commits read
//! again. Log objects are small; one above [`WHOLE_LIMIT`] is read as asked, and nothing more
//! is kept once [`KEPT_LIMIT`] bytes are.

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// The largest object read whole (a bigger checkpoint part is read in ranges, as asked).
pub(crate) const WHOLE_LIMIT: u64 = 64 * 1024 * 1024;
/// The most bytes kept at once.
pub(crate) const KEPT_LIMIT: u64 = 512 * 1024 * 1024;

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct WholeObjects {
    inner: Arc<dyn ObjectStore>,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    objects: HashMap<Path, (ObjectMeta, Bytes)>,
    bytes: u64,
}

impl WholeObjects {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>) -> WholeObjects {
        WholeObjects {
            inner,
            kept: Mutex::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `bytes` (the whole object `meta`) as the answer to a read of `range` of it.
fn answer(
    meta: ObjectMeta,
    bytes: Bytes,
    range: Option<&object_store::GetRange>,
) -> object_store::Result<GetResult> {
    let range = match range {
        Some(r) => r
            .as_range(meta.size)
            .map_err(|e| object_store::Error::Generic {
                store: "whole-object view",
                source: Box::new(e),
            })?,
        None => 0..meta.size,
    };
    // `as_range` keeps the range within the object.
    let (start, end) = (range.start as usize, range.end as usize);
    let part = bytes.slice(start.min(bytes.len())..end.min(bytes.len()));
    Ok(GetResult {
        payload: GetResultPayload::Stream(futures::stream::once(async move { Ok(part) }).boxed()),
        meta,
        range,
        attributes: Default::default(),
    })
}

impl fmt::Display for WholeObjects {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WholeObjects({})", self.inner)
    }
}

#[async_trait::async_trait]
impl ObjectStore for WholeObjects {
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
        // Conditional reads, versions and HEAD requests are the store's to answer.
        let plain = !options.head
            && options.if_match.is_none()
            && options.if_none_match.is_none()
            && options.if_modified_since.is_none()
            && options.if_unmodified_since.is_none()
            && options.version.is_none();
        if !plain {
            return self.inner.get_opts(location, options).await;
        }
        let known = self.kept().objects.get(location).cloned();
        if let Some((meta, bytes)) = known {
            return answer(meta, bytes, options.range.as_ref());
        }
        let whole = self.inner.get_opts(location, GetOptions::default()).await?;
        if whole.meta.size > WHOLE_LIMIT {
            // Too big to keep: this read as asked (the whole object's body is not read).
            drop(whole);
            return self.inner.get_opts(location, options).await;
        }
        let meta = whole.meta.clone();
        let bytes = whole.bytes().await?;
        {
            let mut kept = self.kept();
            if kept.bytes + meta.size <= KEPT_LIMIT {
                kept.bytes += meta.size;
                kept.objects
                    .insert(location.clone(), (meta.clone(), bytes.clone()));
            }
        }
        answer(meta, bytes, options.range.as_ref())
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
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
    async fn ranges_are_answered_from_one_read() {
        let inner = Arc::new(InMemory::new());
        let path = Path::from("t/_delta_log/00.checkpoint.parquet");
        inner
            .put(&path, PutPayload::from_static(b"0123456789"))
            .await
            .unwrap();
        let whole = WholeObjects::new(inner.clone());
        let read = |range: Option<GetRange>| {
            let whole = &whole;
            let path = path.clone();
            async move {
                let opts = GetOptions {
                    range,
                    ..Default::default()
                };
                whole
                    .get_opts(&path, opts)
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap()
            }
        };
        assert_eq!(&read(Some(GetRange::Suffix(3))).await[..], b"789");
        // The object changed in the store: still answered from the first read.
        inner
            .put(&path, PutPayload::from_static(b"abcdefghij"))
            .await
            .unwrap();
        assert_eq!(&read(Some(GetRange::Bounded(2..5))).await[..], b"234");
        assert_eq!(&read(Some(GetRange::Offset(8))).await[..], b"89");
        assert_eq!(&read(None).await[..], b"0123456789");
        // A range past the end is the store's error, not a panic.
        let opts = GetOptions {
            range: Some(GetRange::Bounded(20..30)),
            ..Default::default()
        };
        assert!(whole.get_opts(&path, opts).await.is_err());
    }
}
