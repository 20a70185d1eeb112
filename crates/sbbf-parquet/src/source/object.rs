//! Parquet files on object stores (S3, GCS, Azure Blob, HTTP) through the `object_store`
//! crate: the store a URL names, one file opened, the `*.parquet` objects under a prefix.
//! [`crate::source::Source`] builds on these to probe or prune many files at once.
//!
//! Files are read through [`ObjectReader`], an arrow-rs [`AsyncFileReader`] over an
//! [`ObjectStore`] (arrow-rs' own `ParquetObjectReader` is deprecated since parquet 59.2 in
//! favour of implementing the trait directly). It also serves arrow-rs' async record batch
//! reader, so the row groups a prune keeps can be read with the same reader.
//!
//! Each file costs one request for the footer (the last
//! [`FOOTER_SUFFIX`](crate::read::async_driver::FOOTER_SUFFIX) bytes; a second only for larger footers)
//! and one wave of concurrent, coalesced ranged reads per filter round (usually one) for the
//! filters of the probed columns. Column data is never read.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sbbf_parquet::Error> {
//! use sbbf_parquet::source::object;
//! use sbbf_parquet::read::async_driver::REMOTE_POLICY;
//! use sbbf_parquet::{prune::Predicate, values::stored::Literal};
//!
//! // Credentials and endpoint from AWS_* (GOOGLE_*, AZURE_*) environment variables.
//! let mut pq = object::open_url("s3://bucket/events/part-0.parquet").await?;
//! let p = Predicate::eq("user_id", Literal::Int(12345));
//! println!("read row groups {:?}", pq.prune_async(&p, REMOTE_POLICY).await?.row_groups);
//! # Ok(()) }
//! ```

use crate::format::column::ColumnType;
use crate::io::IoPolicy;
use crate::keys::KeySet;
use crate::read::answer::RowGroupAnswer;
use crate::values::stored::Encoded;
use crate::{Error, ParquetFile, ReadError};
use bytes::Bytes;
use futures::future::{BoxFuture, Either};
use futures::FutureExt;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, ObjectStoreScheme};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use std::ops::Range;
use std::sync::Arc;
use url::Url;

pub use object_store;

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
    /// The object's ETag as first seen: every read asks for that version (`If-Match`).
    e_tag: Option<String>,
    /// The object's last bytes as the footer's read brought them (from this offset): later
    /// reads inside them (a small file's pages) take them from here, not from the store.
    tail: Option<(u64, Bytes)>,
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
            e_tag: None,
            tail: None,
        }
    }

    /// Reads only the version of the object whose ETag is `e_tag` (as a listing or the
    /// footer's read saw it): a read of an object replaced since fails ("precondition") instead
    /// of mixing the new object's bytes with offsets from the old one's footer, which could
    /// make a filter answer "absent" for a value the file holds. `None`: any version.
    ///
    /// A weak ETag (`W/"..."`) is not pinned: `If-Match` compares strongly, so a server that
    /// gives weak tags would refuse every read.
    pub fn with_e_tag(self, e_tag: Option<String>) -> ObjectReader {
        let e_tag = e_tag.filter(|t| !t.starts_with("W/"));
        ObjectReader { e_tag, ..self }
    }

    /// One range, of the version pinned by [`ObjectReader::with_e_tag`] when there is one:
    /// from the tail the footer's read kept when it lies there.
    async fn range(&self, range: Range<u64>) -> object_store::Result<Bytes> {
        if let Some((start, tail)) = &self.tail {
            let end = start + tail.len() as u64;
            if range.start >= *start && range.end <= end && range.start <= range.end {
                return Ok(tail.slice((range.start - start) as usize..(range.end - start) as usize));
            }
        }
        match &self.e_tag {
            None => self.store.get_range(&self.path, range).await,
            Some(tag) => {
                let options = object_store::GetOptions {
                    range: Some(range.into()),
                    if_match: Some(tag.clone()),
                    ..Default::default()
                };
                self.store
                    .get_opts(&self.path, options)
                    .await?
                    .bytes()
                    .await
            }
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
        async move { Ok(self.range(range).await?) }.boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        async move {
            let this = &*self;
            if this.coalesce > 0 {
                return Ok(object_store::coalesce_ranges(
                    &ranges,
                    |r| this.range(r),
                    this.coalesce,
                )
                .await?);
            }
            // The probe's ranges arrive merged by its I/O policy: fetch them as they are, all
            // in one wave up to the bound.
            Ok(futures::stream::iter(ranges)
                .map(|r| this.range(r))
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
            // The footer in one read of the last 64 KiB, as the library opens a file (without
            // a hint: the last 8 bytes, then the footer, a round trip later).
            let hint = crate::read::async_driver::FOOTER_SUFFIX as usize;
            let mut reader = ParquetMetaDataReader::new()
                .with_prefetch_hint(Some(hint))
                .with_metadata_options(options.map(|o| o.metadata_options().clone()));
            if let Some(o) = options {
                reader = reader
                    .with_column_index_policy(o.column_index_policy())
                    .with_offset_index_policy(o.offset_index_policy());
            } else {
                reader = reader.with_page_index_policy(PageIndexPolicy::Skip);
            }
            // The suffix is read here and kept: the footer is parsed from it, and a small file's
            // pages (the whole file, when it is under the hint) are then read from it too.
            let size = self.size;
            if self.tail.is_none() && size > 0 {
                let start = size.saturating_sub(hint as u64);
                let bytes = self.range(start..size).await?;
                self.tail = Some((start, bytes));
            }
            Ok(Arc::new(reader.load_and_finish(self, size).await?))
        }
        .boxed()
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

/// A location as every command reads it: a `file://` URL is the local path it names
/// (percent escapes decoded; a trailing `/` kept, as it says "a folder" for a prefix);
/// anything else is returned as it is. Every front end passes its locations through this
/// first, so that `file:///data/t/` is read exactly as `/data/t/` (a table detected as a
/// table, not listed as a folder of Parquet files).
///
/// ```
/// use sbbf_parquet::source::object::local_location;
/// assert_eq!(local_location("file:///data/my%20t/").unwrap(), "/data/my t/");
/// assert_eq!(local_location("file:///data/t").unwrap(), "/data/t");
/// assert_eq!(local_location("s3://bucket/t/").unwrap(), "s3://bucket/t/");
/// assert_eq!(local_location("data/t").unwrap(), "data/t");
/// assert!(local_location("file://otherhost/t").is_err());
/// ```
pub fn local_location(arg: &str) -> Result<std::borrow::Cow<'_, str>, Error> {
    // The scheme is case-insensitive (RFC 3986), and `file:/data/t` is the same URL.
    let is_file_url = arg
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("file:"));
    if !is_file_url {
        return Ok(std::borrow::Cow::Borrowed(arg));
    }
    let bad = || -> Error {
        ReadError::FileUrl {
            url: arg.to_string(),
        }
        .into()
    };
    let url = Url::parse(arg).map_err(|_| bad())?;
    let path = url.to_file_path().map_err(|_| bad())?;
    let mut text = path.into_os_string().into_string().map_err(|_| bad())?;
    if url.path().ends_with('/') && !text.ends_with('/') {
        text.push('/');
    }
    Ok(std::borrow::Cow::Owned(text))
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
    #[cfg(not(feature = "object_store"))]
    {
        let store = match ObjectStoreScheme::parse(&parsed) {
            Ok((ObjectStoreScheme::AmazonS3, _)) => Some("S3"),
            Ok((ObjectStoreScheme::GoogleCloudStorage, _)) => Some("GCS"),
            Ok((ObjectStoreScheme::MicrosoftAzure, _)) => Some("Azure"),
            Ok((ObjectStoreScheme::Http, _)) => Some("HTTP"),
            _ => None,
        };
        if let Some(store) = store {
            return Err(ReadError::StoreNotBuilt {
                url: url.to_string(),
                store,
            }
            .into());
        }
    }
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
    open_unsized_with_keys(store, path, &KeySet::new()).await
}

/// [`open_unsized`] for a file with modular encryption (see [`ParquetFile::open_with_keys`]).
pub async fn open_unsized_with_keys(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    keys: &KeySet,
) -> Result<RemoteFile, Error> {
    let store_err = |source| -> Error {
        ReadError::Store {
            location: path.to_string(),
            source,
        }
        .into()
    };
    let options = object_store::GetOptions {
        range: Some(object_store::GetRange::Suffix(
            crate::read::async_driver::FOOTER_SUFFIX,
        )),
        ..Default::default()
    };
    let started = std::time::Instant::now();
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
    let e_tag = got.meta.e_tag.clone();
    let tail = got.bytes().await.map_err(store_err)?;
    ParquetFile::open_with_tail_keyed(
        ObjectReader::new(Arc::clone(store), path.clone(), size).with_e_tag(e_tag),
        size,
        tail,
        keys,
        started,
    )
    .await
}

/// Keys per page of a LIST on S3 and Google Cloud Storage: a listing of more takes a round
/// trip per page, one after another.
const LIST_PAGE: usize = 1000;

/// At most this many folders are listed at once when a long listing is split by folder.
const FOLDERS_AT_ONCE: usize = 64;

/// Every object under `prefix` whose name ends in `.parquet` (any case), sorted by path,
/// except those below a name starting with `_` or `.` under the prefix
/// ([`crate::source::is_hidden_name`]).
///
/// A store lists 1,000 keys a page, each page a round trip after the one before. So when
/// the first page is full and every key on it lies in a folder below the prefix (partition
/// folders: `p=0/`, `date=2024-01-01/`), the prefix's folders are listed (one delimited
/// request) and then each folder at once (at most 64 in flight), the same
/// way again below them: 10,000 objects in 10 partition folders take 3 round trips instead
/// of 10. A prefix with objects of its own on the first page, or with more folders than that,
/// is listed page after page.
pub async fn list_parquet(
    store: &Arc<dyn ObjectStore>,
    prefix: &Path,
) -> Result<Vec<ObjectMeta>, Error> {
    list_parquet_split(store, prefix, false).await
}

/// [`list_parquet`], with the prefix's folders asked beside its first page (one delimited
/// LIST): a prefix laid out in folders is listed a round trip sooner, at one request more
/// where the first page turns out to be all there is or not in folders. For a reader that
/// waits on the listing with nothing else to do (a probe answered by the table index).
pub async fn list_parquet_ahead(
    store: &Arc<dyn ObjectStore>,
    prefix: &Path,
) -> Result<Vec<ObjectMeta>, Error> {
    list_parquet_split(store, prefix, true).await
}

async fn list_parquet_split(
    store: &Arc<dyn ObjectStore>,
    prefix: &Path,
    ahead: bool,
) -> Result<Vec<ObjectMeta>, Error> {
    let prefix_opt = (!prefix.as_ref().is_empty()).then_some(prefix);
    let mut out: Vec<ObjectMeta> = list_split(Arc::clone(store), prefix_opt.cloned(), 0, ahead)
        .await
        .map_err(|source| ReadError::Store {
            location: format!("listing {prefix}"),
            source,
        })?
        .into_iter()
        .filter(|m| {
            let parquet = m
                .location
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
            // As below a local directory: `_` and `.` names below the prefix are not the
            // table's.
            let hidden = m
                .location
                .prefix_match(prefix)
                .is_some_and(|mut parts| parts.any(|p| crate::source::is_hidden_name(p.as_ref())));
            parquet && !hidden
        })
        .collect();
    out.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(out)
}

/// How deep folders are split (hostile or odd layouts list page after page below that).
const MAX_SPLIT_DEPTH: usize = 8;

/// Every object below `prefix`, split by folder where that saves round trips (see
/// [`list_parquet`]); folders with hidden names are left out when split.
fn list_split(
    store: Arc<dyn ObjectStore>,
    prefix: Option<Path>,
    depth: usize,
    ahead: bool,
) -> BoxFuture<'static, object_store::Result<Vec<ObjectMeta>>> {
    Box::pin(async move {
        let prefix = prefix.as_ref();
        let mut flat = store.list(prefix);
        // The first page, without asking for the second (which would cost its round trip).
        let first_page = async {
            let mut got = Vec::new();
            while got.len() < LIST_PAGE {
                match flat.try_next().await? {
                    Some(m) => got.push(m),
                    None => return Ok((got, true)),
                }
            }
            Ok::<_, object_store::Error>((got, false))
        };
        // Asked ahead, the folders come with the first page; left unread (their request
        // dropped, never its next pages: a flat prefix's delimited listing is as long as the
        // flat one) unless that page is full and in folders.
        let (page, mut folders_pending, folders_read) = match ahead {
            true => {
                let folders = store.list_with_delimiter(prefix);
                match futures::future::select(Box::pin(first_page), folders).await {
                    Either::Left((page, folders)) => (page, Some(folders), None),
                    Either::Right((top, page)) => (page.await, None, Some(top)),
                }
            }
            false => (first_page.await, None, None),
        };
        let (mut got, complete) = page?;
        if complete {
            return Ok(got);
        }
        let in_folder = |m: &ObjectMeta| {
            m.location
                .prefix_match(prefix.unwrap_or(&Path::default()))
                .is_some_and(|parts| parts.count() > 1)
        };
        let split = depth < MAX_SPLIT_DEPTH && got.iter().all(in_folder);
        if !split {
            drop(folders_pending.take());
            // Not laid out in folders: the rest of the pages, in turn.
            while let Some(m) = flat.try_next().await? {
                got.push(m);
            }
            return Ok(got);
        }
        drop(flat);
        let top = match (folders_read, folders_pending) {
            (Some(top), _) => top?,
            (None, Some(pending)) => pending.await?,
            (None, None) => store.list_with_delimiter(prefix).await?,
        };
        let folders: Vec<Path> = top
            .common_prefixes
            .into_iter()
            .filter(|f| !f.filename().is_some_and(crate::source::is_hidden_name))
            .collect();
        if folders.len() > FOLDERS_AT_ONCE {
            let all = store.list(prefix).try_collect().await?;
            return Ok(all);
        }
        let mut all = top.objects;
        let lists: Vec<_> = folders
            .into_iter()
            .map(|f| list_split(Arc::clone(&store), Some(f), depth + 1, false))
            .collect();
        let below: Vec<Vec<ObjectMeta>> = futures::stream::iter(lists)
            .buffer_unordered(FOLDERS_AT_ONCE)
            .try_collect()
            .await?;
        all.extend(below.into_iter().flatten());
        Ok(all)
    })
}

/// One file's probe: the column, the values as encoded for its type, and the answers.
#[derive(Debug, Clone)]
pub struct FileProbe {
    /// The probed leaf column.
    pub column: ColumnType,
    /// The values, encoded for the column (by the caller's `encode`); over many files, shared
    /// by every file whose column has the same type.
    pub encoded: Arc<[Encoded]>,
    /// One answer per row group.
    pub answers: Vec<RowGroupAnswer>,
    /// The reads the file took (footer included).
    pub io: crate::IoStats,
    /// Other leaves the column path could also be read as (`a.b` and `a\.b`), see
    /// [`ParquetFile::other_readings`].
    pub other_readings: Vec<String>,
}

/// Probes `column` of one opened file (see [`open_unsized`]) for the values `encode` gives for
/// its type.
pub async fn probe_file<R, F>(
    pq: &mut ParquetFile<R>,
    column: &str,
    encode: F,
    policy: IoPolicy,
) -> Result<FileProbe, Error>
where
    R: AsyncFileReader,
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, Error>,
{
    probe_file_shared(
        pq,
        column,
        |ty| {
            let encoded: Arc<[Encoded]> = encode(ty)?.into();
            let hashes = crate::read::answer::candidate_hashes(&encoded).into();
            Ok((encoded, hashes))
        },
        policy,
    )
    .await
}

/// Values encoded for one column type and their candidate hashes, shared by many files.
pub(crate) type SharedValues = (Arc<[Encoded]>, Arc<[u64]>);

/// [`probe_file`] with the values encoded and hashed by `encoded`, which may hand every file
/// of a run the same ones (shared, not copied: a run's memory is its values once, not once
/// per file in flight).
pub(crate) async fn probe_file_shared<R, F>(
    pq: &mut ParquetFile<R>,
    column: &str,
    encoded: F,
    policy: IoPolicy,
) -> Result<FileProbe, Error>
where
    R: AsyncFileReader,
    F: FnOnce(&ColumnType) -> Result<SharedValues, Error>,
{
    let col = pq.column_index(column)?;
    let other_readings = pq.other_readings(column, col);
    let ty = pq.columns()[col].clone();
    let (encoded, hashes) = encoded(&ty)?;
    let answers = pq
        .probe_async_shared(col, Arc::clone(&encoded), hashes, policy)
        .await;
    Ok(FileProbe {
        column: ty,
        encoded,
        answers,
        io: pq.io_stats(),
        other_readings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;

    #[test]
    fn a_prefix_lists_no_hidden_names_below_it() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let names = [
            "_t/a.parquet",
            "_t/sub/b.PARQUET",
            "_t/_temporary/0/part-0.parquet",
            "_t/.hidden.parquet",
            "_t/sub/.staging/c.parquet",
            "_t/_SUCCESS",
            "_t/notes.txt",
            "other/d.parquet",
        ];
        let listed = crate::source::block_on(async {
            for n in names {
                store
                    .put(&Path::from(n), object_store::PutPayload::from_static(b"x"))
                    .await
                    .unwrap();
            }
            (
                list_parquet(&store, &Path::from("_t")).await.unwrap(),
                list_parquet(&store, &Path::from("")).await.unwrap(),
            )
        })
        .unwrap();
        let paths = |l: &[ObjectMeta]| -> Vec<String> {
            l.iter().map(|m| m.location.to_string()).collect()
        };
        // The prefix itself may start with `_`: only names below it count.
        assert_eq!(paths(&listed.0), ["_t/a.parquet", "_t/sub/b.PARQUET"]);
        // From the bucket's root, `_t` is below the prefix.
        assert_eq!(paths(&listed.1), ["other/d.parquet"]);
    }
}
