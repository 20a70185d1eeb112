//! A source of Parquet files: one local file, a directory (every `*.parquet` below it), a glob,
//! an object on a store or every `*.parquet` object under a prefix. Local and remote files go
//! through the same read planner and the same async driver: the same waves, the same
//! concurrency rules, the same statistics; only the reader differs.
//!
//! [`Source::probe`] and [`Source::prune`] work on many files at once and yield one result per
//! file, in the source's (sorted) order, as soon as that file and those before it are done.
//! Files run as tasks of the current tokio runtime (so local files use every core), at most
//! [`SourceOptions::concurrency`] at a time; on an object store the same number also bounds the
//! requests in flight across all files, whatever each file's waves ask for.
//!
//! ```
//! # #[tokio::main(flavor = "multi_thread")]
//! # async fn main() -> Result<(), sbbf_parquet::Error> {
//! use futures::StreamExt;
//! use sbbf_parquet::source::{Source, SourceOptions};
//! use sbbf_parquet::{prune::Predicate, values::stored::Literal};
//! # let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/conformance");
//! // A directory here; "s3://bucket/events/" or "https://host/f.parquet" the same way.
//! let source = Source::open(dir, SourceOptions::default()).await?;
//! assert!(source.len() > 1);
//! let p = Predicate::eq("i64", Literal::Int(-1234567));
//! let mut results = source.prune(p);
//! while let Some((name, pruned)) = results.next().await {
//!     match pruned {
//!         Ok(p) => println!("{name}: read row groups {:?}", p.row_groups),
//!         Err(e) => println!("{name}: {e}"),
//!     }
//! }
//! # Ok(()) }
//! ```

use crate::format::column::ColumnType;
use crate::io::IoPolicy;
use crate::keys::KeySet;
use crate::prune::{Predicate, Pruned};
use crate::read::async_driver::REMOTE_POLICY;
use crate::source::local::local_files;
use crate::source::object::{self, FileProbe, ObjectReader};
use crate::values::stored::Encoded;
use crate::{Error, ParquetFile, ReadError};
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, StreamExt};
use futures::FutureExt;
use object_store::path::Path as StorePath;
use object_store::ObjectStore;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::file::metadata::ParquetMetaData;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Requests in flight at once (and files worked on at once) unless told otherwise: enough to
/// hide an object store's latency, few enough for one client connection pool.
pub const DEFAULT_CONCURRENCY: usize = 64;

/// How a [`Source`] reads.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// Files worked on at once, and on an object store the bound on requests in flight across
    /// all of them (at least 1).
    pub concurrency: usize,
    /// Keys for files with modular encryption (empty: such files answer as without keys).
    pub keys: KeySet,
    /// Read planning; by default [`IoPolicy::default`] for local files and
    /// [`REMOTE_POLICY`] for object stores.
    pub policy: Option<IoPolicy>,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            concurrency: DEFAULT_CONCURRENCY,
            keys: KeySet::new(),
            policy: None,
        }
    }
}

/// The reader behind a file of a [`Source`]: a local file or an object.
#[derive(Debug, Clone)]
pub enum SourceReader {
    /// A local file, read with positioned reads.
    Local(LocalReader),
    /// An object, read with ranged GETs.
    Object(ObjectReader),
}

/// A file of a [`Source`], opened.
pub type SourceFile = ParquetFile<SourceReader>;

/// An [`AsyncFileReader`] over a local file: positioned reads on the blocking thread pool, so
/// several files (and the ranges of one wave) are read at once.
#[derive(Debug, Clone)]
pub struct LocalReader {
    file: Arc<std::fs::File>,
    len: u64,
}

impl LocalReader {
    /// Opens `path` for reading.
    pub fn open(path: &Path) -> Result<LocalReader, Error> {
        let io = ReadError::Open;
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Ok(LocalReader {
            file: Arc::new(file),
            len,
        })
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn read(
        &self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'static, parquet::errors::Result<Vec<Bytes>>> {
        let file = Arc::clone(&self.file);
        async move {
            let read = move || -> parquet::errors::Result<Vec<Bytes>> {
                ranges
                    .into_iter()
                    .map(|r| {
                        let len = usize::try_from(r.end.saturating_sub(r.start)).map_err(|_| {
                            parquet::errors::ParquetError::General(format!(
                                "range {}..{} is too large",
                                r.start, r.end
                            ))
                        })?;
                        let mut buf = vec![0u8; len];
                        read_at(&file, &mut buf, r.start)?;
                        Ok(Bytes::from(buf))
                    })
                    .collect()
            };
            match tokio::runtime::Handle::try_current() {
                Ok(h) => h
                    .spawn_blocking(read)
                    .await
                    .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?,
                // Outside a runtime (a caller's own executor): read in place.
                Err(_) => read(),
            }
        }
        .boxed()
    }
}

/// Fills `buf` from `file` at offset `at` without moving a shared cursor (a positioned read),
/// so several tasks read one open file at once.
#[cfg(unix)]
pub fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

/// Fills `buf` from `file` at offset `at` without moving a shared cursor (a positioned read),
/// so several tasks read one open file at once.
#[cfg(windows)]
pub fn read_at(file: &std::fs::File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

impl AsyncFileReader for SourceReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        match self {
            SourceReader::Object(r) => r.get_bytes(range),
            SourceReader::Local(r) => r
                .read(vec![range])
                .map(|got| got.map(|mut v| v.pop().unwrap_or_default()))
                .boxed(),
        }
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        match self {
            SourceReader::Object(r) => r.get_byte_ranges(ranges),
            SourceReader::Local(r) => r.read(ranges),
        }
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        match self {
            SourceReader::Object(r) => r.get_metadata(options),
            SourceReader::Local(r) => {
                let len = r.len;
                async move {
                    let reader = parquet::file::metadata::ParquetMetaDataReader::new()
                        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Skip);
                    let mut me = SourceReader::Local(r.clone());
                    Ok(Arc::new(reader.load_and_finish(&mut me, len).await?))
                }
                .boxed()
            }
        }
    }
}

/// Where one file of a source is.
enum At {
    Local(PathBuf),
    Object {
        store: Arc<dyn ObjectStore>,
        path: StorePath,
        size: u64,
        /// The listing's ETag: the version every read of it asks for.
        e_tag: Option<String>,
    },
    /// Opened while resolving the source (a single object: its footer came with its size).
    Opened(Box<SourceFile>),
}

/// A set of Parquet files, local or on an object store (see the module docs of [`source`](crate::source)).
pub struct Source {
    files: Vec<(String, At)>,
    many: bool,
    options: SourceOptions,
    policy: IoPolicy,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("files", &self.names().collect::<Vec<_>>())
            .field("many", &self.many)
            .finish_non_exhaustive()
    }
}

impl Source {
    /// What `arg` names: a local path (file, directory, glob) or an object-store URL (`s3://`,
    /// `gs://`, `az://`, `http(s)://`; see [`object::store_from_url`] for credentials). A URL
    /// that names an object is that object (its footer and size read in one request, no
    /// `HEAD`); otherwise, or when it ends in `/`, every `*.parquet` below it (one listing). An
    /// `http(s)://` URL not ending in `/` names one file: a 404 is the answer.
    pub async fn open(arg: &str, options: SourceOptions) -> Result<Source, Error> {
        if object::is_remote_url(arg) {
            return Source::open_url(arg, options).await;
        }
        Ok(Source::from_paths(local_files(arg)?, options))
    }

    /// The same files in the order of their names (a table's files, whose listing order is
    /// the log's or the index's: results come in one order however they were found).
    pub fn sorted_by_name(mut self) -> Source {
        self.files.sort_by(|a, b| a.0.cmp(&b.0));
        self
    }

    /// A source of exactly these local files, in this order (a caller's own listing, e.g. a
    /// subset of [`local_files`]), each named by its path as displayed.
    pub fn from_paths(paths: Vec<PathBuf>, options: SourceOptions) -> Source {
        let many = paths.len() > 1;
        Source {
            files: paths
                .into_iter()
                .map(|p| (p.display().to_string(), At::Local(p)))
                .collect(),
            many,
            policy: options.policy.unwrap_or_default(),
            options,
        }
    }

    /// A source of exactly these local files, in this order, each with the name results
    /// give it (a table's data files named below the table's path); `many` says whether a
    /// file without the asked column is a result of its own.
    pub fn from_named_paths(
        paths: Vec<(String, PathBuf)>,
        many: bool,
        options: SourceOptions,
    ) -> Source {
        Source {
            files: paths
                .into_iter()
                .map(|(name, p)| (name, At::Local(p)))
                .collect(),
            many,
            policy: options.policy.unwrap_or_default(),
            options,
        }
    }

    async fn open_url(url: &str, options: SourceOptions) -> Result<Source, Error> {
        let (store, prefix) = object::store_from_url(url)?;
        Source::open_store(url, store, prefix, options).await
    }

    /// [`Source::open`] for a location in a store the caller configured: `url` is how files
    /// are named in results (`s3://bucket/dir/`), `prefix` the path it names in `store`.
    pub async fn open_store(
        url: &str,
        store: Arc<dyn ObjectStore>,
        prefix: StorePath,
        options: SourceOptions,
    ) -> Result<Source, Error> {
        // Every request of every file goes through one limit.
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::limit::LimitStore::new(
            store,
            options.concurrency.max(1),
        ));
        let policy = options.policy.unwrap_or(REMOTE_POLICY);
        let as_dir = url.ends_with('/') || prefix.as_ref().is_empty();
        let http = url.starts_with("http://") || url.starts_with("https://");
        let one = |file: SourceFile| Source {
            files: vec![(url.to_string(), At::Opened(Box::new(file)))],
            many: false,
            options: options.clone(),
            policy,
        };
        if !as_dir {
            // One object: its footer and size in one suffix read (no HEAD first); a name that
            // is no object may still be a prefix (not on a web server, which does not list).
            match object::open_unsized_with_keys(&store, &prefix, &options.keys).await {
                Ok(pq) => return Ok(one(pq.map_reader(SourceReader::Object))),
                Err(Error::Read(ReadError::Store {
                    source: object_store::Error::NotFound { .. },
                    ..
                })) if !http => {}
                Err(e) => return Err(e),
            }
        }
        let objects = object::list_parquet(&store, &prefix).await?;
        if objects.is_empty() {
            return Err(ReadError::NoObjects {
                location: if prefix.as_ref().is_empty() {
                    "/".to_string()
                } else {
                    prefix.to_string()
                },
            }
            .into());
        }
        Ok(Source::objects_of(
            url, store, &prefix, objects, options, policy,
        ))
    }

    /// A source of exactly these objects of `store`, in this order (a caller's own listing of
    /// the location `url` names, `prefix` its path in `store`), named as [`Source::open_store`]
    /// names them. Requests go through one limit of [`SourceOptions::concurrency`].
    pub fn from_objects(
        url: &str,
        store: Arc<dyn ObjectStore>,
        prefix: &StorePath,
        objects: Vec<object_store::ObjectMeta>,
        options: SourceOptions,
    ) -> Source {
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::limit::LimitStore::new(
            store,
            options.concurrency.max(1),
        ));
        let policy = options.policy.unwrap_or(REMOTE_POLICY);
        Source::objects_of(url, store, prefix, objects, options, policy)
    }

    fn objects_of(
        url: &str,
        store: Arc<dyn ObjectStore>,
        prefix: &StorePath,
        objects: Vec<object_store::ObjectMeta>,
        options: SourceOptions,
        policy: IoPolicy,
    ) -> Source {
        Source {
            files: objects
                .into_iter()
                .map(|m| {
                    let name = object_name(url, prefix.as_ref(), m.location.as_ref());
                    (
                        name,
                        At::Object {
                            store: Arc::clone(&store),
                            path: m.location,
                            size: m.size,
                            e_tag: m.e_tag,
                        },
                    )
                })
                .collect(),
            many: true,
            options,
            policy,
        }
    }

    /// The files, as results name them (paths as given, or URLs).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(n, _)| n.as_str())
    }

    /// How many files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are no files (never, for a source that opened).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Whether the source names several files (a directory, a glob, a prefix): then a file
    /// without the asked column is a result of its own rather than an error.
    pub fn is_many(&self) -> bool {
        self.many
    }

    /// The read planning the files use.
    pub fn policy(&self) -> IoPolicy {
        self.policy
    }

    /// Probes `column` in every file; `encode` turns the caller's values into the bytes of each
    /// file's column type (types may differ between files). One result per file, in order; a
    /// file that cannot be opened, lacks the column or whose values do not encode is an error
    /// of its own and does not stop the others.
    pub fn probe<F>(
        self,
        column: &str,
        encode: F,
    ) -> BoxStream<'static, (String, Result<FileProbe, Error>)>
    where
        F: Fn(&ColumnType) -> Result<Vec<Encoded>, Error> + Send + Sync + 'static,
    {
        self.probe_lacking(column, encode, None)
    }

    /// [`Source::probe`], where a file that does not hold `column` answers "unknown" in every
    /// row group ([`FilterState::NotInFile`](crate::read::answer::FilterState::NotInFile),
    /// with `why`) when `why` is given, instead of [`Error::UnknownColumn`]: for a table that
    /// gives such a file's rows a value of the column all the same (an Iceberg identity
    /// partition's source column, a column's default), where "no such column" would read as
    /// "no row holds the value".
    pub fn probe_lacking<F>(
        self,
        column: &str,
        encode: F,
        why: Option<String>,
    ) -> BoxStream<'static, (String, Result<FileProbe, Error>)>
    where
        F: Fn(&ColumnType) -> Result<Vec<Encoded>, Error> + Send + Sync + 'static,
    {
        let column: Arc<str> = Arc::from(column);
        let why: Option<Arc<str>> = why.map(Arc::from);
        let encoded = Arc::new(EncodedByType {
            encode,
            done: std::sync::Mutex::new(Vec::new()),
        });
        let policy = self.policy;
        self.run(move |mut pq| {
            let column = Arc::clone(&column);
            let encoded = Arc::clone(&encoded);
            let why = why.clone();
            async move {
                match (&why, pq.column_index(&column)) {
                    (Some(why), Err(Error::UnknownColumn { .. })) => {
                        unknown_everywhere(&pq, &column, |ty| encoded.get(ty), why)
                    }
                    _ => {
                        object::probe_file_shared(&mut pq, &column, |ty| encoded.get(ty), policy)
                            .await
                    }
                }
            }
            .boxed()
        })
    }

    /// [`ParquetFile::prune_async`] in every file; one result per file, in order.
    pub fn prune(
        self,
        predicate: Predicate,
    ) -> BoxStream<'static, (String, Result<Pruned, Error>)> {
        let predicate = Arc::new(predicate);
        let policy = self.policy;
        self.run(move |mut pq| {
            let predicate = Arc::clone(&predicate);
            async move { pq.prune_async(&predicate, policy).await }.boxed()
        })
    }

    /// Opens each file and runs `work` on it as a task of its own, `concurrency` files at a
    /// time, yielding the results in the source's order.
    pub fn run<T, W>(self, work: W) -> BoxStream<'static, (String, Result<T, Error>)>
    where
        T: Send + 'static,
        W: Fn(SourceFile) -> BoxFuture<'static, Result<T, Error>> + Send + Sync + 'static,
    {
        self.run_named(move |_, pq| work(pq))
    }

    /// [`Source::run`], with `work` told each file's name as results show it.
    fn run_named<T, W>(self, work: W) -> BoxStream<'static, (String, Result<T, Error>)>
    where
        T: Send + 'static,
        W: Fn(&str, SourceFile) -> BoxFuture<'static, Result<T, Error>> + Send + Sync + 'static,
    {
        let work = Arc::new(work);
        let keys = Arc::new(self.options.keys);
        let concurrency = self.options.concurrency.max(1);
        futures::stream::iter(self.files)
            .map(move |(name, at)| {
                let (work, keys) = (Arc::clone(&work), Arc::clone(&keys));
                let shown = name.clone();
                let task = async move {
                    let pq = open_at(at, &keys).await?;
                    work(&shown, pq).await
                };
                async move { (name, spawned(task).await) }
            })
            .buffered(concurrency)
            .boxed()
    }
}

impl Source {
    /// Runs `work` on each file read whole into memory and opened with the source's keys (on
    /// the blocking pool): for work that reads most of a file anyway, such as inspecting every
    /// filter or verifying every data page. `work` is told the file's name as results show it.
    /// Results come in the source's order.
    pub fn run_whole<T, W>(self, work: W) -> BoxStream<'static, (String, Result<T, Error>)>
    where
        T: Send + 'static,
        W: Fn(&str, ParquetFile<Bytes>) -> Result<T, Error> + Send + Sync + 'static,
    {
        let work = Arc::new(work);
        let keys = Arc::new(self.options.keys.clone());
        self.run_named(move |name, mut pq| {
            let (work, keys) = (Arc::clone(&work), Arc::clone(&keys));
            let name = name.to_string();
            async move {
                let len = pq.file_len();
                let bytes = pq
                    .reader_mut()
                    .get_bytes(0..len)
                    .await
                    .map_err(|e| Error::Read(ReadError::Parquet(e)))?;
                let whole = ParquetFile::open_with_keys(bytes, &keys)?;
                match tokio::task::spawn_blocking(move || work(&name, whole)).await {
                    Ok(r) => r,
                    Err(e) => Err(ReadError::Parquet(parquet::errors::ParquetError::External(
                        Box::new(e),
                    ))
                    .into()),
                }
            }
            .boxed()
        })
    }
}

/// The caller's values encoded and hashed once per column type met: every file whose column
/// has that type probes the same ones. (Encoded per file, a run held its values once per
/// file in flight: 100,000 values over 64 files at once took gigabytes.)
struct EncodedByType<F> {
    encode: F,
    /// A run meets one type, or a few: a list is enough. Only successes are kept: a value
    /// that does not encode fails each file the same way, as `encode` says it.
    done: std::sync::Mutex<Vec<(ColumnType, object::SharedValues)>>,
}

impl<F> EncodedByType<F>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, Error>,
{
    fn get(&self, ty: &ColumnType) -> Result<object::SharedValues, Error> {
        let mut done = match self.done.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some((_, (v, h))) = done.iter().find(|(t, _)| t == ty) {
            return Ok((Arc::clone(v), Arc::clone(h)));
        }
        // Encoded under the lock: files of the same type wait for the first instead of each
        // encoding the values again.
        let v: Arc<[Encoded]> = (self.encode)(ty)?.into();
        let h: Arc<[u64]> = crate::read::answer::candidate_hashes(&v).into();
        done.push((ty.clone(), (Arc::clone(&v), Arc::clone(&h))));
        Ok((v, h))
    }
}

/// The answers of a file that does not hold `column` although its table gives its rows a
/// value of it: "unknown" in every row group, the values encoded as text (every value is).
fn unknown_everywhere<R: AsyncFileReader>(
    pq: &ParquetFile<R>,
    column: &str,
    encoded: impl FnOnce(&ColumnType) -> Result<object::SharedValues, Error>,
    why: &str,
) -> Result<FileProbe, Error> {
    use crate::read::answer::{Answer, FilterState, RowGroupAnswer};
    let ty = ColumnType {
        path: column.to_string(),
        physical: parquet::basic::Type::BYTE_ARRAY,
        type_length: 0,
        kind: crate::format::column::ValueKind::String,
        logical: Some("STRING".into()),
    };
    let (encoded, _) = encoded(&ty)?;
    let answers = RowGroupAnswer::for_every_row_group(
        pq.metadata(),
        FilterState::NotInFile(why.to_string()),
        vec![Answer::Unknown; encoded.len()],
    );
    Ok(FileProbe {
        column: ty,
        encoded,
        answers,
        io: pq.io_stats(),
        other_readings: Vec::new(),
    })
}

/// Runs `task` on the current runtime's threads when there is one (so files use every core),
/// else in place.
async fn spawned<T: Send + 'static>(
    task: impl std::future::Future<Output = Result<T, Error>> + Send + 'static,
) -> Result<T, Error> {
    match tokio::runtime::Handle::try_current() {
        Ok(h) => match h.spawn(task).await {
            Ok(r) => r,
            Err(e) => {
                Err(ReadError::Parquet(parquet::errors::ParquetError::External(Box::new(e))).into())
            }
        },
        Err(_) => task.await,
    }
}

async fn open_at(at: At, keys: &KeySet) -> Result<SourceFile, Error> {
    match at {
        At::Opened(pq) => Ok(*pq),
        At::Local(path) => {
            let r = LocalReader::open(&path)?;
            let len = r.len();
            ParquetFile::open_async_with_keys(SourceReader::Local(r), len, keys).await
        }
        At::Object {
            store,
            path,
            size,
            e_tag,
        } => {
            let r = ObjectReader::new(store, path, size).with_e_tag(e_tag);
            ParquetFile::open_async_with_keys(SourceReader::Object(r), size, keys).await
        }
    }
}

/// The name a report shows for an object found under the location `url` names (`prefix` is
/// that location's path in its store): the URL itself for a single object, else the URL (as a
/// directory) followed by the object's path below the prefix.
pub fn object_name(url: &str, prefix: &str, location: &str) -> String {
    if location == prefix {
        return url.to_string();
    }
    let rel = if prefix.is_empty() {
        location
    } else {
        location
            .strip_prefix(prefix)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(location)
    };
    format!("{}/{rel}", url.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::object_name;

    /// A run over many files encodes its values once per column type and every file probes
    /// those same values: memory is the values once, not once per file in flight.
    #[test]
    fn values_are_encoded_once_per_type_and_shared() {
        use super::{Source, SourceOptions};
        use crate::values::text::{encode_text, EncodeOptions};
        use futures::StreamExt as _;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let src = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/conformance/duckdb_five_rowgroups.parquet"
        );
        for i in 0..6 {
            std::fs::copy(src, dir.path().join(format!("f{i}.parquet"))).unwrap();
        }
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let encode = move |ty: &crate::format::column::ColumnType| {
            counted.fetch_add(1, Ordering::SeqCst);
            ["1", "2", "-7"]
                .iter()
                .map(|v| encode_text(ty, v, EncodeOptions::default()).map_err(crate::Error::from))
                .collect::<Result<Vec<_>, _>>()
        };
        let options = SourceOptions {
            concurrency: 3,
            ..SourceOptions::default()
        };
        let got: Vec<_> = crate::source::block_on(async move {
            let source = Source::open(dir.path().to_str().unwrap(), options)
                .await
                .unwrap();
            source.probe("i32", encode).collect::<Vec<_>>().await
        })
        .unwrap();
        assert_eq!(got.len(), 6);
        assert_eq!(calls.load(Ordering::SeqCst), 1, "encoded once");
        let first = got[0].1.as_ref().unwrap();
        let local = crate::ParquetFile::open(std::fs::File::open(src).unwrap()).unwrap();
        let col = local.column_index("i32").unwrap();
        let direct = local.probe(col, &first.encoded, crate::IoPolicy::default());
        for (name, r) in &got {
            let r = r.as_ref().unwrap();
            assert!(Arc::ptr_eq(&r.encoded, &first.encoded), "{name}: a copy");
            assert_eq!(r.answers, direct, "{name}");
        }
    }

    #[test]
    fn object_names() {
        assert_eq!(
            object_name("s3://b/dir/", "dir", "dir/x/a.parquet"),
            "s3://b/dir/x/a.parquet"
        );
        assert_eq!(
            object_name("s3://b/dir", "dir", "dir/a.parquet"),
            "s3://b/dir/a.parquet"
        );
        assert_eq!(object_name("s3://b/", "", "a.parquet"), "s3://b/a.parquet");
        assert_eq!(
            object_name("s3://b/a.parquet", "a.parquet", "a.parquet"),
            "s3://b/a.parquet"
        );
    }
}
