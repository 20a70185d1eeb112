//! A table root (a local directory or an object-store prefix): its listing, and the index
//! object under it.

use crate::format::{self, Directory, Head, Stamp, Trailer};
use crate::{Error, IndexError};
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as StorePath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use sbbf_lake::{LakeOptions, Snapshot, StoreRoot, TableVersion};
use sbbf_parquet::source::object;
use sbbf_parquet::source::{local_files, object_name, read_at, Source, SourceOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The folder under a table root that holds the index. Its leading `_` makes the listings of
/// pyarrow datasets and Spark skip it; DuckDB globs and DataFusion listing tables only take
/// `*.parquet`, which the index is not.
pub const INDEX_DIR: &str = "_sbbf_index";
/// The index object's name inside [`INDEX_DIR`].
pub const INDEX_FILE: &str = "index.sbbfi";
/// The writers' lock file inside [`INDEX_DIR`] (local roots).
pub const LOCK_FILE: &str = ".lock";
/// Bytes a probe reads from the end of a local index in its first read: the trailer and the
/// head (a few hundred bytes for a few columns, whatever the number of files), and for a table
/// of a few hundred files its file table and columns as well.
pub const INDEX_SUFFIX: u64 = 16 << 10;
/// Bytes a probe reads from the end of an index on an object store in its first request: the
/// head, and the file table and column sections of a table of up to about 15,000 files (about
/// 30 bytes a file), which a second request would otherwise fetch. Half a MiB takes a few ms
/// more than a few KiB on a store's connection; a round trip takes tens of ms.
pub const STORE_INDEX_SUFFIX: u64 = 512 << 10;

/// A table root.
#[derive(Debug, Clone)]
pub enum Root {
    /// A local directory.
    Local {
        /// The argument as given (names of files are this joined with their path).
        arg: String,
        /// The directory.
        dir: PathBuf,
        /// How a Delta or Iceberg table at the root is read.
        lake: LakeRead,
    },
    /// A prefix on an object store.
    Store {
        /// The URL as given (ends in `/`).
        url: String,
        /// The store.
        store: Arc<dyn ObjectStore>,
        /// The prefix in it.
        prefix: StorePath,
        /// How a Delta or Iceberg table at the root is read.
        lake: LakeRead,
    },
}

/// How a Delta or Iceberg table at a root is read, and what reading it found once asked:
/// `Some(None)` when the root is no table (or is read as a folder), so the question, which
/// costs a round trip on an object store, is asked once per command.
#[derive(Debug, Clone, Default)]
pub struct LakeRead {
    options: LakeOptions,
    snapshot: Option<Option<Arc<Snapshot>>>,
    /// The index's head, when read beside finding the table ([`Root::with_head`]).
    head: Option<Loaded>,
}

/// One data file of a listing.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The name reports use (the same as [`Source::open`] gives it).
    pub name: String,
    /// Path relative to the root, `/`-separated.
    pub rel: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time or ETag.
    pub stamp: Stamp,
    at: At,
}

#[cfg(test)]
impl Listed {
    /// A local file's listing entry that is never opened: for unit tests of the answers.
    pub(crate) fn for_test(rel: &str, size: u64, stamp: Stamp) -> Listed {
        Listed {
            name: rel.to_string(),
            rel: rel.to_string(),
            size,
            stamp,
            at: At::Local(PathBuf::from(rel)),
        }
    }
}

#[derive(Debug, Clone)]
enum At {
    Local(PathBuf),
    Object(ObjectMeta),
}

/// Where a read of the index went: requests, bytes and sequential waves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReadStats {
    /// Requests (local: positioned reads).
    pub requests: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Sequential rounds of requests.
    pub waves: u64,
}

impl ReadStats {
    /// Adds `o` to these.
    pub fn add(&mut self, o: ReadStats) {
        self.requests += o.requests;
        self.bytes += o.bytes;
        self.waves += o.waves;
    }
}

impl Root {
    /// The root `arg` names, if it names one: a local directory, or an object-store URL that
    /// ends in `/` (or names a bucket). A file, a glob, an object, or a web server URL is no
    /// table root (`None`).
    pub fn open(arg: &str) -> Result<Option<Root>, Error> {
        if object::is_remote_url(arg) {
            if arg.starts_with("http://") || arg.starts_with("https://") {
                return Ok(None);
            }
            let (store, prefix) = object::store_from_url(arg)?;
            if !(arg.ends_with('/') || prefix.as_ref().is_empty()) {
                return Ok(None);
            }
            return Ok(Some(Root::Store {
                url: arg.to_string(),
                store,
                prefix,
                lake: LakeRead::default(),
            }));
        }
        let dir = Path::new(arg);
        if dir.is_dir() {
            return Ok(Some(Root::Local {
                arg: arg.to_string(),
                dir: dir.to_path_buf(),
                lake: LakeRead::default(),
            }));
        }
        Ok(None)
    }

    /// The root of the table `arg` names, where its index is: [`Root::open`] of `arg` (of
    /// `arg/` for a store's prefix named without its `/`), or for an Iceberg metadata file
    /// (`t/metadata/v3.metadata.json`, as a catalog names a table) of the table's folder
    /// (`t/`). The index's entries are checked file by file
    /// against the snapshot read, whichever metadata file named it.
    ///
    /// ```
    /// use sbbf_index::Root;
    /// let root = Root::open_table("s3://b/t/metadata/v3.metadata.json").unwrap().unwrap();
    /// assert_eq!(root.arg(), "s3://b/t/");
    /// ```
    pub fn open_table(arg: &str) -> Result<Option<Root>, Error> {
        let folder = sbbf_lake::table_folder(arg);
        let last = folder.rsplit('/').next().unwrap_or_default();
        // A store's prefix named without its `/` (`s3://b/t`), as tables are found.
        let prefix = !last.contains(['.', '*', '?', '[']) || arg.ends_with(".metadata.json");
        match object::is_remote_url(folder) {
            true if prefix => Root::open(&format!("{folder}/")),
            true => Root::open(arg),
            false => Root::open(folder),
        }
    }

    /// The root of `table` ([`Root::open_table`] of its location: a catalog's table at the
    /// folder of its metadata file), reading it as it was read, its snapshot (when read) not
    /// read again; `None` when the location is no folder, prefix or table.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use sbbf_index::Root;
    /// let table = sbbf_lake::Table::open("events/", &Default::default()).await?;
    /// if let Some(root) = Root::of_table(&table)? {
    ///     println!("index at {}", root.index_location());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn of_table(table: &sbbf_lake::Table) -> Result<Option<Root>, Error> {
        let root = Root::open_table(table.location())?;
        Ok(root.map(|r| {
            let r = r.with_lake(table.lake().clone());
            match table.snapshot() {
                Some(snap) => r.with_snapshot(Some(Arc::clone(snap))),
                None => r,
            }
        }))
    }

    /// A root on a store the caller configured (`url` names it in reports).
    pub fn from_store(url: &str, store: Arc<dyn ObjectStore>, prefix: StorePath) -> Root {
        Root::Store {
            url: url.to_string(),
            store,
            prefix,
            lake: LakeRead::default(),
        }
    }

    /// This root, a Delta or Iceberg table at it read as `lake` says (by default: its current
    /// snapshot's files, never its folder's).
    pub fn with_lake(mut self, options: LakeOptions) -> Root {
        match &mut self {
            Root::Local { lake, .. } | Root::Store { lake, .. } => lake.options = options,
        }
        self
    }

    /// This root with its table's snapshot already asked for (so it is read once per
    /// command): `None` when the root is no table or is read as a folder.
    pub fn with_snapshot(mut self, snap: Option<Arc<Snapshot>>) -> Root {
        match &mut self {
            Root::Local { lake, .. } | Root::Store { lake, .. } => lake.snapshot = Some(snap),
        }
        self
    }

    /// This root with its index's head already read (beside finding its table): the next
    /// [`Root::load`] answers with it, no request made.
    pub fn with_head(mut self, head: Option<Loaded>) -> Root {
        match &mut self {
            Root::Local { lake, .. } | Root::Store { lake, .. } => lake.head = head,
        }
        self
    }

    fn lake(&self) -> &LakeRead {
        match self {
            Root::Local { lake, .. } | Root::Store { lake, .. } => lake,
        }
    }

    /// The root as given (a path or a URL).
    pub fn arg(&self) -> &str {
        match self {
            Root::Local { arg, .. } => arg,
            Root::Store { url, .. } => url,
        }
    }

    /// Where the index is, for messages.
    pub fn index_location(&self) -> String {
        match self {
            Root::Local { dir, .. } => dir.join(INDEX_DIR).join(INDEX_FILE).display().to_string(),
            Root::Store { url, .. } => {
                format!("{}/{INDEX_DIR}/{INDEX_FILE}", url.trim_end_matches('/'))
            }
        }
    }

    fn index_path(&self) -> Option<StorePath> {
        match self {
            Root::Store { prefix, .. } => Some(prefix.clone().join(INDEX_DIR).join(INDEX_FILE)),
            Root::Local { .. } => None,
        }
    }

    /// The table's data files, with what a listing shows of each: a Delta or Iceberg table's
    /// snapshot files (see [`Root::list_table`]); else every `*.parquet` below the root,
    /// sorted: one listing of the prefix; locally a walk and one `stat` per file.
    pub async fn list(&self) -> Result<Vec<Listed>, Error> {
        Ok(self.list_table().await?.0)
    }

    /// [`Root::list`], and the table version read when the root is a Delta or Iceberg table:
    /// then the files are its snapshot's (in the log's or manifests' order), a local file with
    /// its own `stat`, an object with the size the table records and a tag made of its path
    /// and size (a table's data files are written once under a new name and never changed in
    /// place, by both formats' protocols; the table's own commit removes a file, and a removed
    /// file is no longer listed).
    pub async fn list_table(&self) -> Result<(Vec<Listed>, Option<TableVersion>), Error> {
        let (listed, snap) = self.list_lake().await?;
        Ok((listed, snap.map(|s| s.table_version())))
    }

    /// [`Root::list_table`], with the snapshot read (a build keeps its column names).
    pub async fn list_lake(&self) -> Result<(Vec<Listed>, Option<Arc<Snapshot>>), Error> {
        let LakeRead {
            options, snapshot, ..
        } = self.lake();
        let snap = match snapshot {
            Some(known) => known.clone(),
            None => sbbf_lake::Table::open(self.arg(), options)
                .await?
                .snapshot()
                .cloned(),
        };
        match snap {
            Some(snap) => Ok((self.listed_snapshot(&snap)?, Some(snap))),
            None => Ok((self.list_folder().await?, None)),
        }
    }

    fn listed_snapshot(&self, snap: &Snapshot) -> Result<Vec<Listed>, Error> {
        self.listed_urls(
            &snap.location,
            snap.files.iter().map(|f| (f.url.as_str(), f.size)),
        )
    }

    /// Listing entries of a table's data files (by URL and the size the table records), in
    /// the order given: a local file with its own `stat`; an object with a tag made of its
    /// URL and size (a table's data files are written once under a new name and never
    /// changed in place, by both formats' protocols).
    pub(crate) fn listed_urls<'a>(
        &self,
        location: &str,
        files: impl Iterator<Item = (&'a str, u64)>,
    ) -> Result<Vec<Listed>, Error> {
        match self {
            Root::Local { dir, .. } => {
                let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
                let base = PathBuf::from(sbbf_lake::table_folder(location));
                let abs_base = std::fs::canonicalize(&base).unwrap_or_else(|_| base.clone());
                files
                    .map(|(url, _)| {
                        let (name, p) = sbbf_lake::local_file(&base, &abs_base, url)?;
                        Ok(local_listed(name, rel_path(&p, &abs), p))
                    })
                    .collect()
            }
            Root::Store { url, .. } => {
                let root = StoreRoot::for_url(url)?;
                let mut objects = Vec::new();
                for (file, size) in files {
                    objects.push(ObjectMeta {
                        location: root.path_of(file)?,
                        last_modified: Default::default(),
                        size,
                        e_tag: Some(format!("table-file:{file}:{size}")),
                        version: None,
                    });
                }
                let mut listed = self.listed_objects(objects);
                // The tag is the stamp's alone: no store wrote it, so no read may ask for it.
                for l in &mut listed {
                    if let At::Object(m) = &mut l.at {
                        m.e_tag = None;
                    }
                }
                Ok(listed)
            }
        }
    }

    /// Whether every file of `listing` lies where [`Root::listed_since`] would name it from
    /// its relative path alone: below the root, at the root joined with it.
    pub(crate) fn locates_all(&self, listing: &[Listed]) -> bool {
        let abs = match self {
            Root::Local { dir, .. } => std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()),
            Root::Store { .. } => PathBuf::new(),
        };
        listing.iter().all(|l| match (self, &l.at) {
            (Root::Local { .. }, At::Local(p)) => {
                p.strip_prefix(&abs).is_ok() && abs.join(&l.rel) == *p
            }
            (Root::Store { prefix, .. }, At::Object(m)) => match prefix.as_ref() {
                "" => m.location.as_ref() == l.rel,
                p => m.location.as_ref() == format!("{p}/{}", l.rel),
            },
            _ => false,
        })
    }

    /// The data files of a later version of the Delta table at this root, from the files of
    /// the version an index lists (`known`, the index's file table) and the commits since
    /// (`tail`): the known files the table still has, then the files added since, named and
    /// stamped as [`Root::list_table`] names and stamps a snapshot's. A known file keeps the
    /// index's stamp on a store (its path and size are what the table's tag is made of);
    /// locally it is looked at again.
    pub(crate) fn listed_since(
        &self,
        location: &str,
        known: &[format::FileEntry],
        tail: &sbbf_lake::since::LogTail,
    ) -> Result<Vec<Listed>, Error> {
        let added = self.listed_urls(
            location,
            tail.added.iter().map(|(u, size)| (u.as_str(), *size)),
        )?;
        let removed = self.listed_urls(location, tail.removed.iter().map(|u| (u.as_str(), 0)))?;
        let gone: std::collections::HashSet<&str> = added
            .iter()
            .chain(&removed)
            .map(|l| l.rel.as_str())
            .collect();
        let mut out = Vec::with_capacity(known.len() + added.len());
        // Once, not per file.
        let (abs, base) = match self {
            Root::Local { dir, .. } => (
                std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone()),
                PathBuf::from(sbbf_lake::table_folder(location)),
            ),
            Root::Store { .. } => Default::default(),
        };
        for f in known.iter().filter(|f| !gone.contains(f.path.as_str())) {
            out.push(match self {
                Root::Local { .. } => {
                    let p = abs.join(&f.path);
                    let name = base.join(&f.path).display().to_string();
                    local_listed(name, f.path.clone(), p)
                }
                Root::Store { url, prefix, .. } => {
                    let location = match prefix.as_ref() {
                        "" => StorePath::parse(&f.path),
                        p => StorePath::parse(format!("{p}/{}", f.path)),
                    }
                    .map_err(|_| IndexError::Damaged(format!("a file path `{}`", f.path)))?;
                    Listed {
                        name: object_name(url, prefix.as_ref(), location.as_ref()),
                        rel: f.path.clone(),
                        size: f.size,
                        stamp: f.stamp.clone(),
                        at: At::Object(ObjectMeta {
                            location,
                            last_modified: Default::default(),
                            size: f.size,
                            e_tag: None,
                            version: None,
                        }),
                    }
                }
            });
        }
        out.extend(added);
        Ok(out)
    }

    async fn list_folder(&self) -> Result<Vec<Listed>, Error> {
        match self {
            Root::Local { arg, dir, .. } => {
                let (arg, dir) = (arg.clone(), dir.clone());
                let run = move || -> Result<Vec<Listed>, Error> {
                    let paths = local_files(&arg).map_err(sbbf_parquet::Error::from)?;
                    let mut out = Vec::with_capacity(paths.len());
                    for p in paths {
                        // A file that cannot be looked at (a link to nothing, a file removed
                        // since the walk) is listed all the same, with a stamp that is never
                        // fresh: opening it fails as that one file's error (reported by the
                        // probe or build) while the rest of the table is answered.
                        let (size, stamp) = match std::fs::metadata(&p) {
                            Ok(meta) => (meta.len(), local_stamp(&meta)),
                            Err(_) => (0, Stamp::UNKNOWN_LOCAL),
                        };
                        let rel = rel_path(&p, &dir);
                        out.push(Listed {
                            name: p.display().to_string(),
                            rel,
                            size,
                            stamp,
                            at: At::Local(p),
                        });
                    }
                    Ok(out)
                };
                match tokio::runtime::Handle::try_current() {
                    Ok(h) => h.spawn_blocking(run).await.map_err(|e| Error::Io {
                        what: "listing".into(),
                        source: std::io::Error::other(e),
                    })?,
                    Err(_) => run(),
                }
            }
            Root::Store { store, prefix, .. } => {
                // The index waits on the listing: the folders are asked with its first page.
                let objects = object::list_parquet_ahead(store, prefix).await?;
                Ok(self.listed_objects(objects))
            }
        }
    }

    /// Listing entries for objects of this root's store that the caller listed itself (a
    /// query engine's own listing), named as [`Root::list`] names them, in the order given.
    /// Empty for a local root.
    pub fn listed_objects(&self, objects: Vec<ObjectMeta>) -> Vec<Listed> {
        match self {
            Root::Local { .. } => Vec::new(),
            Root::Store { url, prefix, .. } => objects
                .into_iter()
                .map(|m| {
                    let loc = m.location.as_ref();
                    let rel = loc
                        .strip_prefix(prefix.as_ref())
                        .unwrap_or(loc)
                        .trim_start_matches('/')
                        .to_string();
                    Listed {
                        name: object_name(url, prefix.as_ref(), loc),
                        rel,
                        size: m.size,
                        stamp: Stamp::Object {
                            last_modified_ms: m.last_modified.timestamp_millis(),
                            etag: content_tag(&m),
                        },
                        at: At::Object(m),
                    }
                })
                .collect(),
        }
    }

    /// A [`Source`] of these listed files (in this order), to read them as `sbbf probe` does.
    pub fn source<'a>(
        &self,
        files: impl IntoIterator<Item = &'a Listed>,
        options: SourceOptions,
    ) -> Source {
        match self {
            // Named as listed (a lake table's files below the table's path as given).
            Root::Local { .. } => {
                let named: Vec<(String, PathBuf)> = files
                    .into_iter()
                    .filter_map(|l| match &l.at {
                        At::Local(p) => Some((l.name.clone(), p.clone())),
                        At::Object(_) => None,
                    })
                    .collect();
                let many = named.len() > 1;
                Source::from_named_paths(named, many, options)
            }
            Root::Store {
                url, store, prefix, ..
            } => Source::from_objects(
                url,
                Arc::clone(store),
                prefix,
                files
                    .into_iter()
                    .filter_map(|l| match &l.at {
                        At::Object(m) => Some(m.clone()),
                        At::Local(_) => None,
                    })
                    .collect(),
                options,
            ),
        }
    }

    /// Reads the trailer and the head: one read of the last [`INDEX_SUFFIX`] bytes
    /// ([`STORE_INDEX_SUFFIX`] on a store), a second only for a larger head. `Ok(None)`: there
    /// is no index.
    pub async fn load(&self) -> Result<Option<(Loaded, ReadStats)>, Error> {
        if let Some(head) = &self.lake().head {
            return Ok(Some((head.clone(), ReadStats::default())));
        }
        let mut st = ReadStats::default();
        let first = match self {
            Root::Local { .. } => INDEX_SUFFIX,
            Root::Store { .. } => STORE_INDEX_SUFFIX,
        };
        let (len, mut tail) = match self.read_suffix(first, &mut st).await? {
            None => return Ok(None),
            Some(x) => x,
        };
        let t = format::parse_trailer(&tail, len)?;
        if t.dir_offset < len - tail.len() as u64 {
            // A head of many columns: read from it to the end.
            match self.read_suffix(len - t.dir_offset, &mut st).await? {
                Some((again, bytes)) if again == len => tail = bytes,
                _ => return Err(IndexError::Damaged("the index changed while read".into()).into()),
            }
        }
        let from = (t.dir_offset - (len - tail.len() as u64)) as usize;
        let head = check_head(&tail[from..from + t.dir_len as usize], &t)?;
        Ok(Some((
            Loaded {
                head,
                len,
                trailer: t,
                tail,
            },
            st,
        )))
    }

    /// The whole index, every section's checksum verified. `Ok(None)`: there is no index.
    pub async fn load_whole(&self) -> Result<Option<(WholeIndex, Bytes)>, Error> {
        let mut st = ReadStats::default();
        let Some((len, all)) = self.read_suffix(u64::MAX, &mut st).await? else {
            return Ok(None);
        };
        if all.len() as u64 != len {
            return Err(IndexError::Damaged("short read".into()).into());
        }
        let loaded = check_whole(&all)?;
        Ok(Some((loaded, all)))
    }

    /// The last `n` bytes of the index (all of it when shorter) and its length.
    async fn read_suffix(&self, n: u64, st: &mut ReadStats) -> Result<Option<(u64, Bytes)>, Error> {
        match self {
            Root::Local { dir, .. } => {
                let path = dir.join(INDEX_DIR).join(INDEX_FILE);
                let what = || format!("reading {}", path.display());
                let file = match std::fs::File::open(&path) {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(source) => {
                        return Err(Error::Io {
                            what: what(),
                            source,
                        })
                    }
                };
                let len = file
                    .metadata()
                    .map_err(|source| Error::Io {
                        what: what(),
                        source,
                    })?
                    .len();
                let take = n.min(len);
                let mut buf = vec![0u8; take as usize];
                read_at(&file, &mut buf, len - take).map_err(|source| Error::Io {
                    what: what(),
                    source,
                })?;
                st.add(ReadStats {
                    requests: 1,
                    bytes: take,
                    waves: 1,
                });
                Ok(Some((len, Bytes::from(buf))))
            }
            Root::Store { store, .. } => {
                let path = self.index_path().unwrap_or_default();
                let range = if n == u64::MAX {
                    None
                } else {
                    Some(object_store::GetRange::Suffix(n))
                };
                let options = object_store::GetOptions {
                    range,
                    ..Default::default()
                };
                let got = match store.get_opts(&path, options).await {
                    Ok(g) => g,
                    Err(object_store::Error::NotFound { .. }) => return Ok(None),
                    Err(source) => {
                        return Err(Error::Store {
                            what: format!("reading {}", self.index_location()),
                            source,
                        })
                    }
                };
                let len = got.meta.size;
                let bytes = got.bytes().await.map_err(|source| Error::Store {
                    what: format!("reading {}", self.index_location()),
                    source,
                })?;
                st.add(ReadStats {
                    requests: 1,
                    bytes: bytes.len() as u64,
                    waves: 1,
                });
                if (bytes.len() as u64) < n.min(len) {
                    return Err(IndexError::Damaged("short read".into()).into());
                }
                Ok(Some((len, bytes)))
            }
        }
    }

    /// Reads byte ranges of the index, all in one wave.
    pub(crate) async fn read_ranges(
        &self,
        ranges: &[std::ops::Range<u64>],
        st: &mut ReadStats,
    ) -> Result<Vec<Bytes>, Error> {
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        let out: Vec<Bytes> = match self {
            Root::Local { dir, .. } => {
                let path = dir.join(INDEX_DIR).join(INDEX_FILE);
                let what = || format!("reading {}", path.display());
                let file = std::fs::File::open(&path).map_err(|source| Error::Io {
                    what: what(),
                    source,
                })?;
                let mut out = Vec::with_capacity(ranges.len());
                for r in ranges {
                    let mut buf = vec![0u8; (r.end - r.start) as usize];
                    read_at(&file, &mut buf, r.start).map_err(|source| Error::Io {
                        what: what(),
                        source,
                    })?;
                    out.push(Bytes::from(buf));
                }
                out
            }
            Root::Store { store, .. } => {
                let path = self.index_path().unwrap_or_default();
                futures::stream::iter(ranges.iter().cloned())
                    .map(|r| {
                        let (store, path) = (Arc::clone(store), path.clone());
                        async move { store.get_range(&path, r).await }
                    })
                    .buffered(64)
                    .try_collect()
                    .await
                    .map_err(|source| Error::Store {
                        what: format!("reading {}", self.index_location()),
                        source,
                    })?
            }
        };
        for (r, b) in ranges.iter().zip(&out) {
            if b.len() as u64 != r.end - r.start {
                return Err(IndexError::Damaged("short read".into()).into());
            }
        }
        st.add(ReadStats {
            requests: ranges.len() as u64,
            bytes: out.iter().map(|b| b.len() as u64).sum(),
            waves: 1,
        });
        Ok(out)
    }

    /// A temporary file to write a new index into: locally inside [`INDEX_DIR`] (so the rename
    /// stays on one file system), else in the system's temporary folder.
    /// Takes the writer's lock of a local root's index (an advisory lock on
    /// `_sbbf_index/.lock`, held while the returned file lives), without waiting: two builds
    /// at once would each replace the other's index, the last silently winning.
    /// [`Error::Busy`] when another process holds it. A file system without advisory locks,
    /// and an object store (which has none to offer), go on without one.
    pub(crate) fn lock_writer(&self) -> Result<Option<std::fs::File>, Error> {
        let Root::Local { dir, .. } = self else {
            return Ok(None);
        };
        let d = dir.join(INDEX_DIR);
        let io = |source| Error::Io {
            what: format!("locking {}", d.display()),
            source,
        };
        std::fs::create_dir_all(&d).map_err(io)?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(d.join(LOCK_FILE))
            .map_err(io)?;
        match f.try_lock() {
            Ok(()) => Ok(Some(f)),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Busy(self.index_location())),
            Err(std::fs::TryLockError::Error(_)) => Ok(None),
        }
    }

    pub(crate) fn temp_file(&self) -> Result<tempfile::NamedTempFile, Error> {
        let made = match self {
            Root::Local { dir, .. } => {
                let d = dir.join(INDEX_DIR);
                std::fs::create_dir_all(&d).and_then(|_| shared_temp(".index-", &d))
            }
            Root::Store { .. } => tempfile::NamedTempFile::new(),
        };
        made.map_err(|source| Error::Io {
            what: "creating the index's temporary file".into(),
            source,
        })
    }

    /// Puts the finished temporary file in place as the index, atomically: locally a rename
    /// over the old one; on a store one PUT.
    pub(crate) async fn commit(&self, tmp: tempfile::NamedTempFile, len: u64) -> Result<(), Error> {
        match self {
            Root::Local { dir, .. } => {
                let to = dir.join(INDEX_DIR).join(INDEX_FILE);
                tmp.as_file().sync_all().map_err(|source| Error::Io {
                    what: format!("writing {}", to.display()),
                    source,
                })?;
                keep_mode(&tmp, &to);
                tmp.persist(&to).map_err(|e| Error::Io {
                    what: format!("renaming the index to {}", to.display()),
                    source: e.error,
                })?;
                Ok(())
            }
            Root::Store { store, .. } => {
                let path = self.index_path().unwrap_or_default();
                let what = || format!("writing {}", self.index_location());
                let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
                use std::io::{Read, Seek};
                let mut file = tmp.reopen().map_err(|source| Error::Io {
                    what: what(),
                    source,
                })?;
                file.seek(std::io::SeekFrom::Start(0))
                    .and_then(|_| file.read_to_end(&mut buf))
                    .map_err(|source| Error::Io {
                        what: what(),
                        source,
                    })?;
                // One PUT: the object appears whole or not at all.
                store
                    .put(&path, buf.into())
                    .await
                    .map_err(|source| Error::Store {
                        what: what(),
                        source,
                    })?;
                Ok(())
            }
        }
    }
}

/// An index's head read and checked, with the bytes of its end that came with it.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The head.
    pub head: Head,
    /// The index's length in bytes.
    pub len: u64,
    /// Its trailer.
    pub trailer: Trailer,
    /// The end of the index as the first read brought it (later reads take from it).
    tail: Bytes,
}

impl Loaded {
    /// Reads `ranges` of the index, all in one wave: from the bytes at hand where they hold a
    /// range, the others in as few requests as near neighbours allow.
    pub(crate) async fn read(
        &self,
        root: &Root,
        ranges: &[std::ops::Range<u64>],
        st: &mut ReadStats,
    ) -> Result<Vec<Bytes>, Error> {
        let tail_start = self.len - self.tail.len() as u64;
        // Every range inside the index before any is read (the head's offsets are checked when
        // it is parsed; a range made from them still is, before it sizes a read).
        if ranges.iter().any(|r| r.end > self.len || r.start > r.end) {
            return Err(IndexError::Damaged("a range outside the index".into()).into());
        }
        // Requests for ranges close to each other are one request remotely: up to a MiB
        // between them (as the object store crate coalesces) costs less than a round trip.
        let gap = match root {
            Root::Local { .. } => 0,
            Root::Store { .. } => 1 << 20,
        };
        let mut far: Vec<std::ops::Range<u64>> = ranges
            .iter()
            .filter(|r| r.start < tail_start)
            .map(|r| r.start..r.end.min(tail_start))
            .collect();
        far.sort_by_key(|r| r.start);
        let mut merged: Vec<std::ops::Range<u64>> = Vec::new();
        for r in far {
            match merged.last_mut() {
                // Capped, so that many values' stripes still go as parallel requests.
                Some(m) if r.start <= m.end + gap && r.end.max(m.end) - m.start <= 8 << 20 => {
                    m.end = m.end.max(r.end)
                }
                _ => merged.push(r),
            }
        }
        let got = root.read_ranges(&merged, st).await?;
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            if r.start >= tail_start {
                out.push(
                    self.tail
                        .slice((r.start - tail_start) as usize..(r.end - tail_start) as usize),
                );
                continue;
            }
            let i = merged.partition_point(|m| m.start <= r.start) - 1;
            let (m, b) = (&merged[i], &got[i]);
            let near =
                b.slice((r.start - m.start) as usize..(r.end.min(tail_start) - m.start) as usize);
            if r.end > tail_start {
                // Straddles the bytes at hand: the part before them, then theirs.
                let mut v = near.to_vec();
                v.extend_from_slice(&self.tail[..(r.end - tail_start) as usize]);
                out.push(Bytes::from(v));
            } else {
                out.push(near);
            }
        }
        Ok(out)
    }
}

/// An index's head as [`Root::load`] reads it.
pub type Loading = Result<Option<(Loaded, ReadStats)>, Error>;

/// Reads the index's head at `root` for a table's reader: the load (`None`: no root to read
/// it at), to await beside finding the table (it runs whether or not the reader asks), and
/// what the reader is handed ([`sbbf_lake::Table::open_known`]): the snapshot the head
/// knows, awaited only where the reader needs it (an Iceberg table), once the load is in.
///
/// ```no_run
/// # async fn demo() -> Result<(), sbbf_parquet::Error> {
/// let root = sbbf_index::Root::open_table("s3://bucket/events/").ok().flatten();
/// let (load, known) = sbbf_index::table::load_for_reader(root);
/// let (table, head) = futures::future::join(
///     sbbf_lake::Table::open_known(None, "s3://bucket/events/", &Default::default(), known),
///     load,
/// )
/// .await;
/// println!("{:?}, index head read: {}", table?.format(), matches!(head, Some(Ok(Some(_)))));
/// # Ok(()) }
/// ```
pub fn load_for_reader(
    root: Option<Root>,
) -> (
    impl std::future::Future<Output = Option<Loading>>,
    impl std::future::Future<Output = Option<sbbf_lake::since::KnownSnapshot>> + Send + 'static,
) {
    let (send, heard) = futures::channel::oneshot::channel::<Loaded>();
    let at = root.clone();
    let load = async move {
        let loaded = at?.load().await;
        if let Ok(Some((head, _))) = &loaded {
            let _ = send.send(head.clone());
        }
        Some(loaded)
    };
    let known = async move {
        let head = heard.await.ok()?;
        head.known_snapshot(root.as_ref()?).await
    };
    (load, known)
}

impl Loaded {
    /// The Iceberg snapshot this index was built from, as a table's reader takes it
    /// ([`sbbf_lake::Table::open_known`]): its metadata file, manifest list, data manifests
    /// and every data file from the file table (read from the bytes at hand, else in one
    /// request). `None` when the index does not know one exactly: another format, a build
    /// that did not hold every file of the snapshot or whose list named delete manifests
    /// (nothing recorded then), a local root (its files are named otherwise than a store's
    /// URLs), a path the table's URLs would write otherwise, or a damaged file table.
    pub async fn known_snapshot(&self, root: &Root) -> Option<sbbf_lake::since::KnownSnapshot> {
        let t = self.head.table.as_ref().filter(|t| t.format == "iceberg")?;
        let (list, manifests) = (t.list.clone()?, t.manifests.clone()?);
        let Root::Store { url, .. } = root else {
            return None;
        };
        let section = &self.head.files;
        let mut st = ReadStats::default();
        let range = section.offset..section.offset + section.len;
        let got = self
            .read(root, std::slice::from_ref(&range), &mut st)
            .await
            .ok()?;
        let bytes = format::section_bytes(got.first()?, section.offset, section).ok()?;
        let entries = format::parse_files(bytes, &self.head).ok()?;
        let base = url.trim_end_matches('/');
        let mut files = Vec::with_capacity(entries.len());
        for e in entries {
            // An Iceberg location with these characters is escaped in its URL.
            if e.path.is_empty() || e.path.contains(['%', '?', '#', '\\']) {
                return None;
            }
            let rows = e.row_counts.map(|r| {
                r.iter()
                    .map(|&n| u64::try_from(n).ok())
                    .sum::<Option<u64>>()
            });
            files.push(sbbf_lake::DataFile {
                url: format!("{base}/{}", e.path),
                size: e.size,
                rows: rows.flatten(),
                partition: Vec::new(),
                deletes: Default::default(),
                bounds: Vec::new(),
            });
        }
        Some(sbbf_lake::since::KnownSnapshot {
            metadata: t.metadata.clone(),
            version: t.version,
            manifest_list: list,
            data_manifests: manifests,
            files,
        })
    }
}

/// A whole index read and checked: every section's checksum verified.
#[derive(Debug, Clone)]
pub struct WholeIndex {
    /// Its directory, every column.
    pub directory: Directory,
    /// The index's length in bytes.
    pub len: u64,
}

/// Checks a whole index's bytes: header, trailer, head, file table, column sections and
/// every group's CRC.
pub(crate) fn check_whole(all: &Bytes) -> Result<WholeIndex, IndexError> {
    let len = all.len() as u64;
    format::check_header(all)?;
    let t = format::parse_trailer(all, len)?;
    let head = check_head(
        &all[t.dir_offset as usize..(t.dir_offset + t.dir_len) as usize],
        &t,
    )?;
    let directory = format::parse_directory(all, 0, &head)?;
    for c in &directory.columns {
        for g in &c.groups {
            let s = &all[g.offset as usize..(g.offset + g.len) as usize];
            if crc32fast::hash(s) != g.crc {
                return Err(IndexError::Damaged(format!(
                    "the checksum of a group of column {} does not match",
                    c.path
                )));
            }
        }
    }
    Ok(WholeIndex { directory, len })
}

fn check_head(head: &[u8], t: &Trailer) -> Result<Head, IndexError> {
    if head.len() as u64 != t.dir_len {
        return Err(IndexError::Damaged("short head".into()));
    }
    if crc32fast::hash(head) != t.dir_crc {
        return Err(IndexError::Damaged(
            "the head's checksum does not match".into(),
        ));
    }
    format::parse_head_of(head, t.dir_offset, t.version)
}

/// What an object's listing says of its content, as kept: the XXH64 of its ETag and, where the
/// store versions objects, its version id (either changes when the content may have). `None`
/// when the store gives neither: such an object is never answered from the index.
pub fn content_tag(meta: &ObjectMeta) -> Option<u64> {
    match (meta.e_tag.as_deref(), meta.version.as_deref()) {
        (None, None) => None,
        (Some(e), None) => Some(sbbf::hash(e.as_bytes())),
        (e, Some(v)) => {
            let mut b = e.unwrap_or("").as_bytes().to_vec();
            b.push(0);
            b.extend_from_slice(v.as_bytes());
            Some(sbbf::hash(&b))
        }
    }
}

/// Whether a listed file is the file the index recorded: same size and same stamp (locally
/// inode, modification and change times; on a store last-modified and ETag). Anything
/// else is stale, and so is an object listed without an ETag or a local file whose times
/// could not be read: nothing then tells a rewrite of the same size from the file indexed.
pub fn is_fresh(entry: &format::FileEntry, listed: &Listed) -> bool {
    let trusted = match &listed.stamp {
        Stamp::Local { ctime_ns, .. } => *ctime_ns != i64::MIN,
        Stamp::Object { etag, .. } => etag.is_some(),
    };
    trusted && entry.size == listed.size && entry.stamp == listed.stamp
}

/// A temporary file in `dir` with the mode a new file gets from the umask (`0666` less it),
/// not the owner-only `0600` temporary files have: an index is read by every account that
/// reads the table, and one it cannot read sends them all to read every file.
pub(crate) fn shared_temp(prefix: &str, dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
}

/// Gives the finished temporary file the mode of the file it replaces, if there is one (an
/// owner's chosen mode outlives an update). Best effort: the write goes on without it.
pub(crate) fn keep_mode(tmp: &tempfile::NamedTempFile, target: &Path) {
    if let Ok(old) = std::fs::metadata(target) {
        let _ = tmp.as_file().set_permissions(old.permissions());
    }
}

/// A temporary file in the folder of `out`, so that the rename stays on one file system.
pub(crate) fn temp_beside(out: &Path) -> Result<tempfile::NamedTempFile, Error> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    shared_temp(".sbbfpart-", &dir).map_err(|source| Error::Io {
        what: format!("creating a temporary file in {}", dir.display()),
        source,
    })
}

/// Puts a finished part in place.
pub(crate) fn persist(tmp: tempfile::NamedTempFile, out: &Path) -> Result<(), Error> {
    tmp.as_file().sync_all().map_err(|source| Error::Io {
        what: format!("writing {}", out.display()),
        source,
    })?;
    keep_mode(&tmp, out);
    tmp.persist(out).map_err(|e| Error::Io {
        what: format!("renaming the part to {}", out.display()),
        source: e.error,
    })?;
    Ok(())
}

/// What a listing keeps of a local file: see [`Stamp`].
#[cfg(unix)]
fn local_stamp(meta: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
    Stamp::Local {
        ino: meta.ino(),
        mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
        ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
    }
}

/// What a listing keeps of a local file. Without a change time and an inode to tell a
/// restored or swapped file from the one indexed, the stamp is marked untrusted
/// (`ctime_ns == i64::MIN`): such files are always read directly.
#[cfg(not(unix))]
fn local_stamp(meta: &std::fs::Metadata) -> Stamp {
    let mtime_ns = match meta.modified() {
        Ok(t) => match t.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
        },
        Err(_) => i64::MIN,
    };
    Stamp::Local {
        ino: 0,
        mtime_ns,
        ctime_ns: i64::MIN,
    }
}

/// Writes all of `bytes`, feeding the running CRC.
pub(crate) fn write_all(
    w: &mut impl Write,
    crc: &mut crc32fast::Hasher,
    bytes: &[u8],
) -> std::io::Result<()> {
    crc.update(bytes);
    w.write_all(bytes)
}

/// A local file's listing entry, looked at now (a file that cannot be looked at gets a stamp
/// that is never fresh).
fn local_listed(name: String, rel: String, p: PathBuf) -> Listed {
    let (size, stamp) = match std::fs::metadata(&p) {
        Ok(meta) => (meta.len(), local_stamp(&meta)),
        Err(_) => (0, Stamp::UNKNOWN_LOCAL),
    };
    Listed {
        name,
        rel,
        size,
        stamp,
        at: At::Local(p),
    }
}

/// `p` relative to `dir`, `/`-separated (the whole path when it is not below `dir`).
fn rel_path(p: &Path, dir: &Path) -> String {
    p.strip_prefix(dir)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
