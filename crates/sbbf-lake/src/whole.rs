//! A view of an object store that reads each object whole, once, and answers every later read
//! of it (byte ranges included) from memory. Delta's kernel reads a log this way: a
//! checkpoint in several ranged requests one after another (its footer, then its columns),
//! and some commits twice (the snapshot, then the scan): on an object store each of those is
//! a round trip. Measured on a checkpointed table (tools/bench/bench_lake.py): 19 requests in
//! 16 waves to open the snapshot, of which 11 were reads of one checkpoint and commits read
//! again. Log objects are small; one above [`WHOLE_LIMIT`] is read as asked, and nothing more
//! is kept once [`KEPT_LIMIT`] bytes are.
//!
//! What a caller already knows can be given to the view before the kernel asks: a complete
//! listing of the log (from an offset on), objects known to be absent, objects read ahead
//! together. The kernel otherwise asks one thing after another (`_last_checkpoint`, then a
//! listing, then the checkpoint, then the commits), a round trip each.

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use std::collections::{HashMap, HashSet};
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

/// How many objects are read ahead at once.
const READ_AHEAD: usize = 64;

#[derive(Debug, Default)]
struct Kept {
    objects: HashMap<Path, (ObjectMeta, Bytes)>,
    bytes: u64,
    /// Objects the store answered "not found" for.
    missing: HashSet<Path>,
    /// A complete listing of one prefix.
    listed: Option<Listed>,
}

/// Every object under `prefix` whose path sorts after `from` (all of them when `None`), in
/// the order of their paths, as the store listed them.
#[derive(Debug)]
struct Listed {
    prefix: Path,
    from: Option<Path>,
    entries: Vec<ObjectMeta>,
}

impl Kept {
    fn keep(&mut self, path: Path, meta: ObjectMeta, bytes: Bytes) {
        if self.bytes + meta.size <= KEPT_LIMIT && !self.objects.contains_key(&path) {
            self.bytes += meta.size;
            self.objects.insert(path, (meta, bytes));
        }
    }

    /// The listing of `prefix` after `offset` (from its start when `None`), if known.
    fn listing(&self, prefix: Option<&Path>, offset: Option<&Path>) -> Option<Vec<ObjectMeta>> {
        let listed = self.listed.as_ref()?;
        if Some(&listed.prefix) != prefix {
            return None;
        }
        match (&listed.from, offset) {
            (None, _) => {}
            (Some(from), Some(offset)) if from <= offset => {}
            _ => return None,
        }
        Some(
            listed
                .entries
                .iter()
                .filter(|m| offset.is_none_or(|o| &m.location > o))
                .cloned()
                .collect(),
        )
    }
}

impl WholeObjects {
    pub(crate) fn new(inner: Arc<dyn ObjectStore>) -> WholeObjects {
        WholeObjects {
            inner,
            kept: Mutex::default(),
        }
    }

    /// The store this is a view of.
    pub(crate) fn inner(&self) -> &Arc<dyn ObjectStore> {
        &self.inner
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The store's listing of every object under `prefix` after `from` (all when `None`):
    /// later listings of `prefix` from `from` or past it are answered from it.
    pub(crate) fn know_listing(
        &self,
        prefix: Path,
        from: Option<Path>,
        mut entries: Vec<ObjectMeta>,
    ) {
        entries.sort_by(|a, b| a.location.cmp(&b.location));
        entries.retain(|m| from.as_ref().is_none_or(|f| &m.location > f));
        self.kept().listed = Some(Listed {
            prefix,
            from,
            entries,
        });
    }

    /// The store's answer to a read of `path`: its bytes, or `None` when it was not found.
    pub(crate) fn know_object(&self, path: Path, read: Option<(ObjectMeta, Bytes)>) {
        let mut kept = self.kept();
        match read {
            Some((meta, bytes)) => kept.keep(path, meta, bytes),
            None => {
                kept.missing.insert(path);
            }
        }
    }

    /// Reads `objects` whole, [`READ_AHEAD`] at a time, to answer later reads from memory.
    /// A read that fails is left for whoever asks next (who then sees the store's error).
    pub(crate) async fn read_ahead(&self, objects: Vec<ObjectMeta>) {
        let inner = &self.inner;
        let mut reads = futures::stream::iter(objects)
            .filter(|m| futures::future::ready(m.size <= WHOLE_LIMIT))
            .map(|m| async move {
                let got = inner
                    .get_opts(&m.location, GetOptions::default())
                    .await
                    .ok()?;
                // Grown past the limit since it was listed: left for the kernel to read.
                if got.meta.size > WHOLE_LIMIT {
                    return None;
                }
                let meta = got.meta.clone();
                let bytes = got.bytes().await.ok()?;
                Some((m.location, meta, bytes))
            })
            .buffer_unordered(READ_AHEAD);
        while let Some(read) = reads.next().await {
            if let Some((path, meta, bytes)) = read {
                self.kept().keep(path, meta, bytes);
            }
        }
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
        let known = {
            let kept = self.kept();
            if kept.missing.contains(location) {
                return Err(object_store::Error::NotFound {
                    path: location.to_string(),
                    source: "not found when the log was first read".into(),
                });
            }
            kept.objects.get(location).cloned()
        };
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
        self.kept()
            .keep(location.clone(), meta.clone(), bytes.clone());
        answer(meta, bytes, options.range.as_ref())
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        match self.kept().listing(prefix, None) {
            Some(known) => futures::stream::iter(known.into_iter().map(Ok)).boxed(),
            None => self.inner.list(prefix),
        }
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        match self.kept().listing(prefix, Some(offset)) {
            Some(known) => futures::stream::iter(known.into_iter().map(Ok)).boxed(),
            None => self.inner.list_with_offset(prefix, offset),
        }
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

    /// A store that fails every request: what the view answers, it answers from memory.
    #[derive(Debug)]
    struct Unreachable;

    impl fmt::Display for Unreachable {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Unreachable")
        }
    }

    fn refused() -> object_store::Error {
        object_store::Error::NotImplemented {
            operation: "any request".into(),
            implementer: "Unreachable".into(),
        }
    }

    #[async_trait::async_trait]
    impl ObjectStore for Unreachable {
        async fn put_opts(
            &self,
            _: &Path,
            _: PutPayload,
            _: PutOptions,
        ) -> object_store::Result<PutResult> {
            Err(refused())
        }
        async fn put_multipart_opts(
            &self,
            _: &Path,
            _: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            Err(refused())
        }
        async fn get_opts(&self, _: &Path, _: GetOptions) -> object_store::Result<GetResult> {
            Err(refused())
        }
        fn delete_stream(
            &self,
            _: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            futures::stream::once(async { Err(refused()) }).boxed()
        }
        fn list(&self, _: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            futures::stream::once(async { Err(refused()) }).boxed()
        }
        async fn list_with_delimiter(&self, _: Option<&Path>) -> object_store::Result<ListResult> {
            Err(refused())
        }
        async fn copy_opts(&self, _: &Path, _: &Path, _: CopyOptions) -> object_store::Result<()> {
            Err(refused())
        }
    }

    fn meta(path: &str, size: u64) -> ObjectMeta {
        ObjectMeta {
            location: Path::from(path),
            last_modified: Default::default(),
            size,
            e_tag: None,
            version: None,
        }
    }

    #[tokio::test]
    async fn what_is_known_is_answered_without_the_store() {
        use futures::TryStreamExt;
        let whole = WholeObjects::new(Arc::new(Unreachable));
        let log = Path::from("t/_delta_log");
        let names = [
            "t/_delta_log/00000000000000000000.json",
            "t/_delta_log/00000000000000000001.json",
        ];
        // Given out of order: listings are answered in the order of their paths.
        let listed = vec![meta(names[1], 20), meta(names[0], 10)];
        whole.know_listing(log.clone(), None, listed);
        let all: Vec<ObjectMeta> = whole.list(Some(&log)).try_collect().await.unwrap();
        assert_eq!(
            all.iter().map(|m| m.location.as_ref()).collect::<Vec<_>>(),
            names
        );
        let after: Vec<ObjectMeta> = whole
            .list_with_offset(
                Some(&log),
                &Path::from("t/_delta_log/00000000000000000000.json"),
            )
            .try_collect()
            .await
            .unwrap();
        assert_eq!(after.len(), 1);
        assert_eq!(after[0].location.as_ref(), names[1]);
        // Another prefix is the store's to list.
        let other: Result<Vec<ObjectMeta>, _> =
            whole.list(Some(&Path::from("t/data"))).try_collect().await;
        assert!(other.is_err());

        // An object known absent is "not found" (as the kernel expects of a missing hint).
        let hint = log.clone().join("_last_checkpoint");
        whole.know_object(hint.clone(), None);
        let got = whole.get_opts(&hint, GetOptions::default()).await;
        assert!(matches!(got, Err(object_store::Error::NotFound { .. })));
        // An object known by its bytes is answered from them, ranges included.
        let first = Path::from(names[0]);
        whole.know_object(
            first.clone(),
            Some((meta(names[0], 4), Bytes::from_static(b"abcd"))),
        );
        let opts = GetOptions {
            range: Some(object_store::GetRange::Bounded(1..3)),
            ..Default::default()
        };
        let got = whole
            .get_opts(&first, opts)
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(&got[..], b"bc");
    }

    #[tokio::test]
    async fn a_listing_from_an_offset_answers_only_from_there_on() {
        use futures::TryStreamExt;
        let whole = WholeObjects::new(Arc::new(Unreachable));
        let log = Path::from("t/_delta_log");
        let from = log.clone().join("00000000000000000010");
        let listed = vec![
            meta("t/_delta_log/00000000000000000010.checkpoint.parquet", 100),
            meta("t/_delta_log/00000000000000000011.json", 10),
        ];
        whole.know_listing(log.clone(), Some(from.clone()), listed);
        let later: Vec<ObjectMeta> = whole
            .list_with_offset(Some(&log), &log.clone().join("00000000000000000011"))
            .try_collect()
            .await
            .unwrap();
        assert_eq!(later.len(), 1);
        // From an earlier offset, or from the start, the listing is not known.
        let earlier: Result<Vec<ObjectMeta>, _> = whole
            .list_with_offset(Some(&log), &log.clone().join("00000000000000000005"))
            .try_collect()
            .await;
        assert!(earlier.is_err());
        let all: Result<Vec<ObjectMeta>, _> = whole.list(Some(&log)).try_collect().await;
        assert!(all.is_err());
    }

    #[tokio::test]
    async fn reading_ahead_keeps_what_it_read_and_leaves_failures() {
        let inner = Arc::new(InMemory::new());
        let a = Path::from("t/_delta_log/00000000000000000000.json");
        inner.put(&a, PutPayload::from_static(b"{}")).await.unwrap();
        let whole = WholeObjects::new(inner.clone());
        let missing = meta("t/_delta_log/00000000000000000001.json", 2);
        whole
            .read_ahead(vec![meta(a.as_ref(), 2), missing.clone()])
            .await;
        inner.delete(&a).await.unwrap();
        // Read before the delete: answered from memory.
        let got = whole.get_opts(&a, GetOptions::default()).await.unwrap();
        assert_eq!(&got.bytes().await.unwrap()[..], b"{}");
        // The failed read is asked of the store again, which answers for itself.
        assert!(whole
            .get_opts(&missing.location, GetOptions::default())
            .await
            .is_err());
    }
}
