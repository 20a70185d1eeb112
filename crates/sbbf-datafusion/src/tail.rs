//! The scan's reads of a file on an object store, the file's tail read once: its footer and
//! whatever lies in its last bytes (the last row group's pages of a small file: all of
//! them for the files lake tables are often made of) come from one request.
//!
//! DataFusion's own reader asks for the footer (one request, the size hint's bytes), then for
//! the pages it plans (one more, after the first: a round trip more), even where those pages
//! were among the bytes the footer's request brought. A point lookup that opens one file of
//! a few hundred KiB then takes one round trip instead of two. (A scan given decryption keys
//! keeps DataFusion's reader: this one reads footers without keys.)

use bytes::Bytes;
use datafusion::common::Result;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::CachedParquetMetaData;
use datafusion::datasource::physical_plan::parquet::ParquetFileMetrics;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::execution::cache::cache_manager::{CachedFileMetadataEntry, FileMetadataCache};
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::{
    PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader,
};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::future::BoxFuture;
use futures::FutureExt;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// The tail read when the scan gives no size hint: as the library's own first read of a
/// remote file.
const TAIL: u64 = 64 << 10;

/// The tail is read once per file opened, so it is bounded whatever the hint says.
const MAX_TAIL: u64 = 4 << 20;

/// The tails a scan keeps for the readers it opens later on the same file (DataFusion opens
/// a file once for its footer and again for each share of its row groups): at most this many
/// bytes in all; past it, tails are not kept.
const KEPT_TAILS: usize = 64 << 20;

/// The tails read so far in a scan, by file: by its readers, and by the scan's planning,
/// which opens a file the same way (its last 64 KiB) to ask its filters.
#[derive(Debug, Default)]
pub(crate) struct Tails {
    by_path: HashMap<Path, (u64, Bytes)>,
    bytes: usize,
}

impl Tails {
    /// Keeps `bytes`, the tail of the file at `path` from offset `start`, within the bound.
    pub(crate) fn keep(tails: &Mutex<Tails>, path: &Path, start: u64, bytes: &Bytes) {
        let mut kept = lock(tails);
        if kept.by_path.contains_key(path) || kept.bytes + bytes.len() > KEPT_TAILS {
            return;
        }
        kept.bytes += bytes.len();
        kept.by_path.insert(path.clone(), (start, bytes.clone()));
    }
}

/// Opens each file of a scan as a [`TailReader`] of `store`.
#[derive(Debug)]
pub(crate) struct TailReaderFactory {
    store: Arc<dyn ObjectStore>,
    cache: Arc<FileMetadataCache>,
    tails: Arc<Mutex<Tails>>,
}

impl TailReaderFactory {
    /// Files of `store` (a remote one: on local files a read is no round trip), their
    /// footers looked up in and added to `cache` (DataFusion's, which others of the query
    /// read: `--stats` counts row groups from it) as DataFusion's own reader does.
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        cache: Arc<FileMetadataCache>,
    ) -> TailReaderFactory {
        TailReaderFactory {
            store,
            cache,
            tails: Arc::default(),
        }
    }

    /// The tails its readers share, where the planning keeps those it read.
    pub(crate) fn tails(&self) -> &Mutex<Tails> {
        &self.tails
    }
}

impl ParquetFileReaderFactory for TailReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> Result<Box<dyn AsyncFileReader + Send>> {
        let metrics =
            ParquetFileMetrics::new(partition_index, file.object_meta.location.as_ref(), metrics);
        // At least TAIL: a hint may be the footer's exact length (known from the index), and
        // the pages before it would cost another request.
        let hint = metadata_size_hint.map_or(TAIL, |h| (h as u64).max(TAIL));
        let tail = lock(&self.tails)
            .by_path
            .get(&file.object_meta.location)
            .cloned();
        Ok(Box::new(TailReader {
            store: Arc::clone(&self.store),
            meta: file.object_meta,
            want: hint.min(MAX_TAIL),
            tail,
            kept: Arc::clone(&self.tails),
            cache: Arc::clone(&self.cache),
            metrics,
        }))
    }
}

/// A file's reader whose first read is its tail, kept: reads within it cost no request.
pub(crate) struct TailReader {
    store: Arc<dyn ObjectStore>,
    meta: ObjectMeta,
    /// Bytes of the tail to read.
    want: u64,
    /// The tail: its offset in the file and its bytes.
    tail: Option<(u64, Bytes)>,
    /// The scan's tails, where this one goes once read.
    kept: Arc<Mutex<Tails>>,
    cache: Arc<FileMetadataCache>,
    metrics: ParquetFileMetrics,
}

fn lock(tails: &Mutex<Tails>) -> std::sync::MutexGuard<'_, Tails> {
    tails.lock().unwrap_or_else(|p| p.into_inner())
}

impl TailReader {
    /// `range` from the tail, when it lies in it.
    fn in_tail(&self, range: &Range<u64>) -> Option<Bytes> {
        let (start, bytes) = self.tail.as_ref()?;
        let end = start + bytes.len() as u64;
        (range.start >= *start && range.end <= end && range.start <= range.end)
            .then(|| bytes.slice((range.start - start) as usize..(range.end - start) as usize))
    }

    /// The file's footer in DataFusion's cache, when it is there for the file as it is.
    fn cached(&self) -> Option<Arc<ParquetMetaData>> {
        let entry = self.cache.get(&self.meta.location)?;
        if !entry.is_valid_for(&self.meta) {
            return None;
        }
        let md = entry
            .file_metadata
            .as_any()
            .downcast_ref::<CachedParquetMetaData>()?;
        Some(Arc::clone(md.parquet_metadata()))
    }

    /// The file's tail another reader of the scan read, when this one has none yet.
    fn adopt_kept(&mut self) {
        if self.tail.is_none() {
            self.tail = lock(&self.kept).by_path.get(&self.meta.location).cloned();
        }
    }

    async fn read_tail(&mut self) -> Result<(), ParquetError> {
        self.adopt_kept();
        if self.tail.is_some() {
            return Ok(());
        }
        let size = self.meta.size;
        let start = size.saturating_sub(self.want);
        let bytes = self
            .store
            .get_range(&self.meta.location, start..size)
            .await
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        if bytes.len() as u64 != size - start {
            return Err(ParquetError::General(format!(
                "{}: asked {} bytes of its tail, got {} (the file changed?)",
                self.meta.location,
                size - start,
                bytes.len()
            )));
        }
        self.metrics.bytes_scanned.add(bytes.len());
        Tails::keep(&self.kept, &self.meta.location, start, &bytes);
        self.tail = Some((start, bytes));
        Ok(())
    }
}

impl AsyncFileReader for TailReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, Result<Bytes, ParquetError>> {
        self.adopt_kept();
        if let Some(b) = self.in_tail(&range) {
            return futures::future::ready(Ok(b)).boxed();
        }
        async move {
            self.metrics
                .bytes_scanned
                .add((range.end - range.start) as usize);
            self.store
                .get_range(&self.meta.location, range)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, Result<Vec<Bytes>, ParquetError>> {
        self.adopt_kept();
        async move {
            // The ranges outside the tail in one call (the store coalesces them).
            let outside: Vec<Range<u64>> = ranges
                .iter()
                .filter(|r| self.in_tail(r).is_none())
                .cloned()
                .collect();
            let mut fetched = match outside.is_empty() {
                true => Vec::new(),
                false => {
                    let n: u64 = outside.iter().map(|r| r.end - r.start).sum();
                    self.metrics.bytes_scanned.add(n as usize);
                    self.store
                        .get_ranges(&self.meta.location, &outside)
                        .await
                        .map_err(|e| ParquetError::External(Box::new(e)))?
                }
            }
            .into_iter();
            ranges
                .iter()
                .map(|r| match self.in_tail(r) {
                    Some(b) => Ok(b),
                    None => fetched
                        .next()
                        .ok_or_else(|| ParquetError::General("a range was not read".into())),
                })
                .collect()
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, Result<Arc<ParquetMetaData>, ParquetError>> {
        async move {
            // A footer already read (with its page index, when that is asked) is not read
            // again.
            let asks_pages = options.is_some_and(|o| {
                o.column_index_policy() != PageIndexPolicy::Skip
                    || o.offset_index_policy() != PageIndexPolicy::Skip
            });
            if let Some(md) = self.cached() {
                let has_pages = md.column_index().is_some() && md.offset_index().is_some();
                if has_pages || !asks_pages {
                    return Ok(md);
                }
            }
            self.read_tail().await?;
            let mut reader = ParquetMetaDataReader::new()
                .with_metadata_options(options.map(|o| o.metadata_options().clone()));
            reader = match options {
                Some(o) => reader
                    .with_column_index_policy(o.column_index_policy())
                    .with_offset_index_policy(o.offset_index_policy()),
                None => reader.with_page_index_policy(PageIndexPolicy::Skip),
            };
            let size = self.meta.size;
            let md = Arc::new(reader.load_and_finish(&mut *self, size).await?);
            let entry = CachedFileMetadataEntry::new(
                self.meta.clone(),
                Arc::new(CachedParquetMetaData::new(Arc::clone(&md))),
            );
            self.cache.put(&self.meta.location, entry);
            Ok(md)
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, RecordBatch};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::execution::cache::default_cache::DefaultCache;
    use datafusion::parquet::arrow::{ArrowWriter, ParquetRecordBatchStreamBuilder};
    use futures::TryStreamExt;
    use object_store::memory::InMemory;

    /// A small file read through the tail reader: the same rows as its own reader gives, one
    /// request (the tail) for the footer and every page, and none by a second reader.
    #[tokio::test]
    async fn a_small_file_is_read_in_one_request() {
        let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
        let mut buf = Vec::new();
        let mut w = ArrowWriter::try_new(&mut buf, schema.clone(), None).unwrap();
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from_iter_values(0..1000))],
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let store = Arc::new(InMemory::new());
        let path = Path::from("t/a.parquet");
        store.put(&path, buf.clone().into()).await.unwrap();
        let meta = store.head(&path).await.unwrap();
        let cache: Arc<FileMetadataCache> = Arc::new(DefaultCache::new(1 << 20));
        let kept: Arc<Mutex<Tails>> = Arc::default();
        // Read twice, as DataFusion opens a file for its footer and again for its rows.
        for (run, want) in [(0, buf.len()), (1, 0)] {
            let set = ExecutionPlanMetricsSet::new();
            let reader = TailReader {
                store: store.clone(),
                meta: meta.clone(),
                want: TAIL,
                tail: None,
                kept: Arc::clone(&kept),
                cache: Arc::clone(&cache),
                metrics: ParquetFileMetrics::new(0, path.as_ref(), &set),
            };
            let rows: Vec<RecordBatch> = ParquetRecordBatchStreamBuilder::new(reader)
                .await
                .unwrap()
                .build()
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 1000);
            // The first reader reads every byte once (the tail was the whole file); the
            // second nothing (the footer from the cache, the pages from the scan's tails).
            let scanned: usize = set
                .clone_inner()
                .sum_by_name("bytes_scanned")
                .map(|m| m.as_usize())
                .unwrap_or(0);
            assert_eq!(scanned, want, "run {run}");
        }
    }
}
