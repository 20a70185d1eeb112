//! Parquet files on object stores (S3, GCS, Azure Blob, HTTP) through the `object_store`
//! crate: open one file, list every `*.parquet` under a prefix, and probe or prune many files
//! at once with bounded concurrency.
//!
//! Files are read through [`ObjectReader`], an arrow-rs [`AsyncFileReader`] over an
//! [`ObjectStore`] (arrow-rs' own `ParquetObjectReader` is deprecated since parquet 59.2 in
//! favour of implementing the trait directly). It also serves arrow-rs' async record batch
//! reader, so the row groups a prune keeps can be read with the same reader.
//!
//! Each file costs one request for the footer (the last
//! [`FOOTER_SUFFIX`](crate::asyncio::FOOTER_SUFFIX) bytes; a second only for larger footers)
//! and one round of concurrent, coalesced ranged reads per filter round (usually one) for the
//! filters of the probed column. Column data is never read.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sbbf_parquet::Error> {
//! use sbbf_parquet::remote::{self, ManyOptions};
//! use sbbf_parquet::{prune::Predicate, stored::Literal};
//!
//! // Credentials and endpoint from AWS_* (GOOGLE_*, AZURE_*) environment variables.
//! let (store, prefix) = remote::store_from_url("s3://bucket/events/")?;
//! let files = remote::list_parquet(&store, &prefix).await?;
//! let p = Predicate::eq("user_id", Literal::Int(12345));
//! for (file, pruned) in files.iter().zip(remote::prune_many(&store, &files, &p, ManyOptions::default()).await) {
//!     println!("{}: read row groups {:?}", file.location, pruned?.row_groups);
//! }
//! # Ok(()) }
//! ```

use crate::asyncio::REMOTE_POLICY;
use crate::column::ColumnType;
use crate::io::IoPolicy;
use crate::probe::RowGroupAnswer;
use crate::prune::{Predicate, Pruned};
use crate::stored::Encoded;
use crate::{Error, ParquetFile, ReadError};
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, ObjectStoreScheme};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use url::Url;

pub use object_store;

/// Files probed at once by [`probe_many`] and [`prune_many`] unless told otherwise.
pub const DEFAULT_CONCURRENCY: usize = 8;

/// Ranged reads of one `get_byte_ranges` call in flight at once. object_store's own
/// `get_ranges` allows 10, so the 64 filters of a file whose filters follow each row group took
/// 7 round trips; with 64 they go out as one wave.
pub const DEFAULT_RANGE_CONCURRENCY: usize = 64;

/// A Parquet file read through an object store.
pub type RemoteFile = ParquetFile<ObjectReader>;

/// An [`AsyncFileReader`] over one object: `get_bytes` is one ranged GET; `get_byte_ranges`
/// fetches its ranges concurrently (up to [`DEFAULT_RANGE_CONCURRENCY`] at a time, see
/// [`ObjectReader::with_concurrency`]), one GET each, merging only ranges closer than the
/// `coalesce` gap (0 by default).
///
/// The probe's ranges arrive already merged by its [`IoPolicy`], so the reader adds no
/// merging of its own: `ObjectStore::get_ranges` (what arrow-rs' `ParquetObjectReader` calls)
/// reads through holes up to 1 MiB, which for filters written after each row group means
/// reading the column data between them. For arrow-rs' record batch reader, where that is
/// wanted, use [`ObjectReader::with_coalesce`] with `object_store::OBJECT_STORE_COALESCE_DEFAULT`.
#[derive(Debug, Clone)]
pub struct ObjectReader {
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    coalesce: u64,
    concurrency: usize,
}

impl ObjectReader {
    /// A reader of the object at `path`, `size` bytes long (from a listing or a `HEAD`).
    pub fn new(store: Arc<dyn ObjectStore>, path: Path, size: u64) -> ObjectReader {
        ObjectReader {
            store,
            path,
            size,
            coalesce: 0,
            concurrency: DEFAULT_RANGE_CONCURRENCY,
        }
    }

    /// At most `n` ranged reads of one `get_byte_ranges` call in flight at once (at least 1).
    pub fn with_concurrency(self, n: usize) -> ObjectReader {
        ObjectReader {
            concurrency: n.max(1),
            ..self
        }
    }

    /// Merges the ranges of one `get_byte_ranges` call whose gap is at most `gap` bytes.
    pub fn with_coalesce(self, gap: u64) -> ObjectReader {
        ObjectReader {
            coalesce: gap,
            ..self
        }
    }

    /// The object's path in its store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The object's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl AsyncFileReader for ObjectReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        async move { Ok(self.store.get_range(&self.path, range).await?) }.boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        async move {
            let (store, path) = (&self.store, &self.path);
            if self.coalesce > 0 {
                return Ok(object_store::coalesce_ranges(
                    &ranges,
                    |r| store.get_range(path, r),
                    self.coalesce,
                )
                .await?);
            }
            // The probe's ranges arrive merged by its I/O policy: fetch them as they are, all
            // in one wave up to the bound.
            Ok(futures::stream::iter(ranges)
                .map(|r| store.get_range(path, r))
                .buffered(self.concurrency)
                .try_collect::<Vec<Bytes>>()
                .await?)
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            let mut reader = ParquetMetaDataReader::new()
                .with_metadata_options(options.map(|o| o.metadata_options().clone()));
            if let Some(o) = options {
                reader = reader
                    .with_column_index_policy(o.column_index_policy())
                    .with_offset_index_policy(o.offset_index_policy());
            } else {
                reader = reader.with_page_index_policy(PageIndexPolicy::Skip);
            }
            let size = self.size;
            Ok(Arc::new(reader.load_and_finish(self, size).await?))
        }
        .boxed()
    }
}

/// How many files to work on at once, and the I/O policy for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ManyOptions {
    /// Files in flight at once (at least 1).
    pub concurrency: usize,
    /// Read planning for each file ([`REMOTE_POLICY`] by default).
    pub policy: IoPolicy,
}

impl Default for ManyOptions {
    fn default() -> Self {
        ManyOptions {
            concurrency: DEFAULT_CONCURRENCY,
            policy: REMOTE_POLICY,
        }
    }
}

/// Whether `arg` names a remote location this module can open (`s3://`, `s3a://`, `gs://`,
/// `az://`, `abfs(s)://`, `adl://`, `azure://`, `http://`, `https://`).
pub fn is_remote_url(arg: &str) -> bool {
    let Ok(url) = Url::parse(arg) else {
        return false;
    };
    matches!(
        ObjectStoreScheme::parse(&url),
        Ok((
            ObjectStoreScheme::AmazonS3
                | ObjectStoreScheme::GoogleCloudStorage
                | ObjectStoreScheme::MicrosoftAzure
                | ObjectStoreScheme::Http,
            _
        ))
    )
}

/// The store options taken from the environment: every `AWS_*`, `GOOGLE_*` and `AZURE_*`
/// variable, lower-cased (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `GOOGLE_SERVICE_ACCOUNT`,
/// `AZURE_STORAGE_ACCOUNT_NAME`, ...). Keys a store does not know are ignored by it.
pub fn env_options() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            ["AWS_", "GOOGLE_", "AZURE_"]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .collect()
}

/// The store and the path in it that `url` names, configured from [`env_options`]. A plain
/// `http://` URL (not an S3-style endpoint) is allowed to use HTTP: the user asked for it.
pub fn store_from_url(url: &str) -> Result<(Arc<dyn ObjectStore>, Path), Error> {
    store_from_url_opts(url, env_options())
}

/// [`store_from_url`] with explicit options (keys as in `object_store::parse_url_opts`).
pub fn store_from_url_opts(
    url: &str,
    options: impl IntoIterator<Item = (String, String)>,
) -> Result<(Arc<dyn ObjectStore>, Path), Error> {
    let parsed = Url::parse(url).map_err(|source| ReadError::Url {
        url: url.to_string(),
        source,
    })?;
    let mut options: Vec<(String, String)> = options.into_iter().collect();
    if parsed.scheme() == "http"
        && matches!(
            ObjectStoreScheme::parse(&parsed),
            Ok((ObjectStoreScheme::Http, _))
        )
    {
        options.push(("allow_http".into(), "true".into()));
    }
    let (store, path) =
        object_store::parse_url_opts(&parsed, options).map_err(|source| ReadError::Store {
            location: url.to_string(),
            source,
        })?;
    Ok((Arc::from(store), path))
}

/// Opens the file at `path` of `size` bytes (sizes come from a listing or a `HEAD`): one
/// request for the footer.
pub async fn open(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    size: u64,
) -> Result<RemoteFile, Error> {
    ParquetFile::open_async(
        ObjectReader::new(Arc::clone(store), path.clone(), size),
        size,
    )
    .await
}

/// Opens the file a URL names ([`open_unsized`]: no `HEAD`).
pub async fn open_url(url: &str) -> Result<RemoteFile, Error> {
    let (store, path) = store_from_url(url)?;
    open_unsized(&store, &path).await
}

/// Opens the object at `path` without knowing its size: one suffix read brings the last
/// 64 KiB (the footer of most files) and, with them, the object's size, so no `HEAD` goes
/// before it (a round trip saved on every store that serves suffix ranges: S3, GCS, Azure,
/// HTTP servers that honour `Range: bytes=-N`).
pub async fn open_unsized(store: &Arc<dyn ObjectStore>, path: &Path) -> Result<RemoteFile, Error> {
    let store_err = |source| -> Error {
        ReadError::Store {
            location: path.to_string(),
            source,
        }
        .into()
    };
    let options = object_store::GetOptions {
        range: Some(object_store::GetRange::Suffix(
            crate::asyncio::FOOTER_SUFFIX,
        )),
        ..Default::default()
    };
    let got = store.get_opts(path, options).await.map_err(store_err)?;
    let size = got.meta.size;
    if got.range.end != size {
        return Err(ReadError::Short {
            start: got.range.start,
            wanted: size.saturating_sub(got.range.start),
            got: got.range.end - got.range.start,
        }
        .into());
    }
    let tail = got.bytes().await.map_err(store_err)?;
    ParquetFile::open_with_tail(
        ObjectReader::new(Arc::clone(store), path.clone(), size),
        size,
        tail,
    )
    .await
}

/// Every object under `prefix` whose name ends in `.parquet` (any case), sorted by path.
pub async fn list_parquet(
    store: &Arc<dyn ObjectStore>,
    prefix: &Path,
) -> Result<Vec<ObjectMeta>, Error> {
    let prefix_opt = (!prefix.as_ref().is_empty()).then_some(prefix);
    let mut out: Vec<ObjectMeta> = store
        .list(prefix_opt)
        .try_filter(|m| {
            let keep = m
                .location
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
            std::future::ready(keep)
        })
        .try_collect()
        .await
        .map_err(|source| ReadError::Store {
            location: format!("listing {prefix}"),
            source,
        })?;
    out.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(out)
}

/// What a location names: the single object when one exists at `path` (and `path` is not
/// meant as a directory, `as_dir`), otherwise every `*.parquet` below it. An empty result is
/// an error naming the location.
pub async fn resolve(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    as_dir: bool,
) -> Result<Vec<ObjectMeta>, Error> {
    if !as_dir && !path.as_ref().is_empty() {
        match store.head(path).await {
            Ok(meta) => return Ok(vec![meta]),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(source) => {
                return Err(ReadError::Store {
                    location: path.to_string(),
                    source,
                }
                .into())
            }
        }
    }
    let files = list_parquet(store, path).await?;
    if files.is_empty() {
        return Err(ReadError::NoObjects {
            location: if path.as_ref().is_empty() {
                "/".to_string()
            } else {
                path.to_string()
            },
        }
        .into());
    }
    Ok(files)
}

/// One file's probe: the column, the values as encoded for its type, and the answers.
#[derive(Debug, Clone)]
pub struct FileProbe {
    /// The probed leaf column.
    pub column: ColumnType,
    /// The values, encoded for the column (by the caller's `encode`).
    pub encoded: Vec<Encoded>,
    /// One answer per row group.
    pub answers: Vec<RowGroupAnswer>,
    /// The reads the file took (footer included).
    pub io: crate::IoStats,
}

/// Probes `column` in each file; `encode` turns the caller's values into the bytes of each
/// file's column type (types may differ between files). Results are in the order of `files`;
/// a file that cannot be opened, lacks the column or whose values do not encode is an error
/// of its own and does not stop the others.
pub async fn probe_many<F>(
    store: &Arc<dyn ObjectStore>,
    files: &[ObjectMeta],
    column: &str,
    encode: F,
    options: ManyOptions,
) -> Vec<Result<FileProbe, Error>>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, Error>,
{
    let encode = &encode;
    for_each_file(store, files, options, move |mut pq| async move {
        probe_file(&mut pq, column, encode, options.policy).await
    })
    .await
}

/// Probes `column` of one opened file (see [`open_unsized`]) for the values `encode` gives for
/// its type.
pub async fn probe_file<F>(
    pq: &mut RemoteFile,
    column: &str,
    encode: F,
    policy: IoPolicy,
) -> Result<FileProbe, Error>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, Error>,
{
    let col = pq.column_index(column)?;
    let ty = pq.columns()[col].clone();
    let encoded = encode(&ty)?;
    let answers = pq.probe_async(col, &encoded, policy).await;
    Ok(FileProbe {
        column: ty,
        encoded,
        answers,
        io: pq.io_stats(),
    })
}

/// [`ParquetFile::prune_async`] over many files; results in the order of `files`.
pub async fn prune_many(
    store: &Arc<dyn ObjectStore>,
    files: &[ObjectMeta],
    predicate: &Predicate,
    options: ManyOptions,
) -> Vec<Result<Pruned, Error>> {
    for_each_file(store, files, options, move |mut pq| async move {
        pq.prune_async(predicate, options.policy).await
    })
    .await
}

/// Opens each file and runs `work` on it, `options.concurrency` files at a time.
async fn for_each_file<'a, T, W, Fut>(
    store: &'a Arc<dyn ObjectStore>,
    files: &'a [ObjectMeta],
    options: ManyOptions,
    work: W,
) -> Vec<Result<T, Error>>
where
    W: Fn(RemoteFile) -> Fut + 'a,
    Fut: Future<Output = Result<T, Error>> + 'a,
{
    let work = &work;
    let mut done: Vec<(usize, Result<T, Error>)> = futures::stream::iter(files.iter().enumerate())
        .map(|(i, meta)| async move {
            let r = match open(store, &meta.location, meta.size).await {
                Ok(pq) => work(pq).await,
                Err(e) => Err(e),
            };
            (i, r)
        })
        .buffer_unordered(options.concurrency.max(1))
        .collect()
        .await;
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}
