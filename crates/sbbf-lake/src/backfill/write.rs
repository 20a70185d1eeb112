//! The writes themselves (built with the feature `tables`): each table's snapshot, the copies,
//! and the commit through the table's protocol.

use super::part;
use super::{KeptFile, Rewrite, SwappedFile, TableWrite};
use crate::delta::commit::{self as delta_commit, About, Swap};
use crate::iceberg::commit::{self as iceberg_commit, Pointer};
use crate::LakeError;
use crate::TableRef;
use crate::{location, Format, StoreRoot};
use futures::StreamExt;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload};
use sbbf_parquet::source::object;
use sbbf_parquet::write::{add_filters, resize_filters, AddOptions, WriteReport};
use sbbf_parquet::{Error, ParquetFile, ReadError, WriteError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use url::Url;

impl TableWrite {
    /// The report of a write of `table` based on `version`, before any file.
    fn nothing_yet(format: Format, table: &str, version: i64) -> TableWrite {
        TableWrite {
            format,
            table: table.to_string(),
            read_version: version,
            committed_version: None,
            swapped: Vec::new(),
            kept: Vec::new(),
            withdrawn: Vec::new(),
            leftovers_removed: Vec::new(),
            tries: 0,
            bytes_read: 0,
            bytes_written: 0,
        }
    }

    /// Notes the copies `written` as swapped (committed, or recorded in a part).
    fn record(&mut self, written: Vec<Written>) {
        for w in written {
            self.bytes_written += w.report.output_len;
            self.swapped.push(SwappedFile {
                from: w.from,
                to: w.to,
                report: w.report,
            });
        }
    }
}

/// A copy up to this size is put in one request; a larger one in parts of this size.
const WHOLE_PUT: usize = 16 << 20;

/// The most commits tried before giving up to writers that keep committing first.
const TRIES: u32 = 10;

/// The operation's name in the table's history: an add's.
const ADD: &str = "ADD BLOOM FILTERS";

/// The operation's name in the table's history: a resize's.
const RESIZE: &str = "RESIZE BLOOM FILTERS";

/// Rewrites the current data files of `table` (found by [`crate::Table::locate`]: a local
/// folder, an object-store URL or a catalog's table) that `rewrite` changes, and commits one
/// new version that swaps them. `progress(done, total)` is called after each file.
///
/// Refused before anything is written ([`LakeError::WriteRefused`]): a path that is no table,
/// a Delta table whose protocol asks of writers what is not done here, an Iceberg table of
/// format 3, or a folder whose metadata files a catalog names
/// (`NNNNN-<uuid>.metadata.json`: commit through the catalog). Iceberg data files that
/// position deletes name are kept as they are (a copy would not be named by them). An error while writing the copies removes
/// the copies written so far; when other writers keep committing first, the copies are removed
/// and [`LakeError::Contended`] says so. A run stopped by force (a killed process) can leave
/// copies no version names: the table's VACUUM removes them as it removes any file no version
/// names.
pub async fn write_table(
    table: &crate::Table,
    rewrite: &Rewrite,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    let t = Table::open(table).await?;
    let plan = t.plan(rewrite).await?;
    let mut done = plan.report(&t);
    let written = t.copies(&plan, None, &mut done, progress).await?;
    let about = plan.about();
    t.commit(plan.base, written, &about, done, false).await
}

/// One worker's share of [`write_table`]: writes the copies of the files `files` names (paths
/// below the table's root as the log or `sbbf inspect` names them, or the files' URLs) and,
/// instead of committing, the part file `out` that [`commit_parts`] commits with the other
/// workers' parts. A named file that is not current is kept (`kept`, with why). The report's
/// `committed_version` is `None`.
///
/// ```no_run
/// # async fn demo() -> Result<(), sbbf_parquet::Error> {
/// use sbbf_lake::backfill::{commit_parts, write_part, Rewrite};
/// use sbbf_parquet::write::AddOptions;
/// use std::path::PathBuf;
/// let add = Rewrite::Add(AddOptions { columns: vec!["id".into()], fpp: 0.01, ndv: None, replace: false });
/// let share = vec!["p=a/part-0.parquet".to_string()];
/// let table = sbbf_lake::Table::locate("events/", &Default::default()).await?;
/// write_part(&table, &add, &share, &PathBuf::from("parts/0.sbbfcopies"), &mut |_, _| {}).await?;
/// let done = commit_parts(&table, &[PathBuf::from("parts/0.sbbfcopies")]).await?;
/// println!("version {:?}", done.committed_version);
/// # Ok(()) }
/// ```
pub async fn write_part(
    table: &crate::Table,
    rewrite: &Rewrite,
    files: &[String],
    out: &Path,
    progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    let t = Table::open(table).await?;
    let plan = t.plan(rewrite).await?;
    let mut done = plan.report(&t);
    let mut chosen = Vec::with_capacity(files.len());
    for name in files {
        match t.find(&plan.base, name) {
            Some(i) => chosen.push(i),
            None => done.kept.push(KeptFile {
                url: name.clone(),
                why: format!(
                    "it is not a current data file of version {}",
                    plan.base.version()
                ),
            }),
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    let written = t.copies(&plan, Some(&chosen), &mut done, progress).await?;
    let part = part::Part {
        table: t.identity(),
        read_version: u64::try_from(plan.base.version()).unwrap_or(0),
        about: plan.about(),
        bytes_read: done.bytes_read,
        copies: written
            .iter()
            .map(|w| part::Copy {
                swap: w.swap.clone(),
                from: w.from.clone(),
                to: w.to.clone(),
                report: w.report.clone(),
            })
            .collect(),
        kept: done.kept.clone(),
    };
    if let Err(e) = part.write(out) {
        t.withdraw(written.iter().map(|w| &w.to)).await;
        return Err(e);
    }
    done.record(written);
    Ok(done)
}

/// Commits the copies the parts `parts` (files [`write_part`] wrote, or folders of
/// `*.sbbfcopies` files) hold, in one new version of `table`, as [`write_table`]
/// commits its own. Checked first, and refused with the reason before anything is committed:
/// each part (its format; a copy's path below its original's folder), the parts against each
/// other and the table (the same table and operation, no file in two parts) and every copy
/// against storage (there, with the size the part says). A file removed since its part was
/// written is left out (`withdrawn`); its copy is deleted when no entry of a Delta table's log
/// names it (an older version may, when these parts were committed before; an Iceberg
/// table's are left to its cleanup of unnamed files).
pub async fn commit_parts(table: &crate::Table, parts: &[PathBuf]) -> Result<TableWrite, Error> {
    let t = Table::open(table).await?;
    let read = part::read_all(parts)?;
    let Some(first) = read.first() else {
        return Err(part::bad("(none)", "no part files given".into()));
    };
    let about = first.1.about.clone();
    let mut written = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let read_version = i64::try_from(first.1.read_version).unwrap_or(i64::MAX);
    let mut done = TableWrite::nothing_yet(t.format(), &t.table, read_version);
    for (path, p) in read {
        let name = path.display().to_string();
        if p.table != t.identity() {
            return Err(part::bad(
                &name,
                format!(
                    "it was written for the table {}, not {}",
                    p.table,
                    t.identity()
                ),
            ));
        }
        if p.about != about {
            return Err(part::bad(
                &name,
                "its operation or parameters differ from the first part's".into(),
            ));
        }
        done.bytes_read += p.bytes_read;
        done.kept.extend(p.kept);
        for c in p.copies {
            if !seen.insert(c.swap.old_path.clone()) {
                return Err(part::bad(
                    &name,
                    format!("{} has a copy in another part too", c.swap.old_path),
                ));
            }
            written.push(Written {
                swap: c.swap,
                from: c.from,
                to: c.to,
                report: c.report,
            });
        }
    }
    t.check_copies(&written).await?;
    if written.is_empty() {
        return Ok(done);
    }
    let base = t.base().await?;
    t.commit(base, written, &about, done, true).await
}

/// A table being written.
struct Table {
    root: StoreRoot,
    /// The table's folder (Delta) or its current metadata file when opened (Iceberg).
    url: Url,
    table: String,
    /// Where an Iceberg table's current metadata is named; `None`: a Delta table.
    pointer: Option<Pointer>,
    /// What finding the table learnt (a Delta log's listing), so reading its snapshot does
    /// not find it again.
    found: Option<crate::Found>,
}

/// The snapshot a write is based on.
enum Base {
    Delta(delta_commit::Base),
    Iceberg(Box<iceberg_commit::Base>),
}

impl Base {
    fn version(&self) -> i64 {
        match self {
            Base::Delta(b) => i64::try_from(b.version).unwrap_or(i64::MAX),
            Base::Iceberg(b) => b.version,
        }
    }

    fn len(&self) -> usize {
        match self {
            Base::Delta(b) => b.files.len(),
            Base::Iceberg(b) => b.files.len(),
        }
    }

    /// File `i`'s path as the log or manifest writes it, its size, and why it is kept as it
    /// is when it must be.
    fn file_at(&self, i: usize) -> (&str, i64, Option<&str>) {
        match self {
            Base::Delta(b) => (&b.files[i].path, b.files[i].size, None),
            Base::Iceberg(b) => {
                let f = &b.files[i];
                (&f.path, f.size, f.keep.as_deref())
            }
        }
    }

    /// Whether the snapshot names a live file at `path`.
    fn names(&self, path: &str) -> bool {
        match self {
            Base::Delta(b) => b.file(path).is_some(),
            Base::Iceberg(b) => b.file(path).is_some(),
        }
    }

    /// Whether the file at `path` is live and may still be swapped.
    fn swappable(&self, path: &str) -> bool {
        match self {
            Base::Delta(b) => b.file(path).is_some(),
            Base::Iceberg(b) => b.file(path).is_some_and(|f| f.keep.is_none()),
        }
    }
}

/// What became of one file: copied, kept (with the bytes read to find out), or not begun
/// (another file's copy failed).
enum Outcome {
    /// A copy written, the bytes read, and the columns asked that the file lacks.
    Copied(Written, u64, Vec<Lack>),
    /// A file kept as it is, the bytes read, and (when its footer was read) the columns asked
    /// that it lacks.
    Kept(KeptFile, u64, Option<Vec<Lack>>),
    Skipped,
}

/// A column asked (by the table's name) that a file has no leaf for, with the file's leaves
/// below the same top-level column (else its near misses, or all its leaves).
struct Lack {
    column: String,
    near: Vec<String>,
}

/// A copy written and not committed yet.
struct Written {
    swap: Swap,
    from: String,
    to: String,
    report: WriteReport,
}

/// What a write is based on: the snapshot, the rewrite with its columns as files name them.
struct Plan {
    base: Base,
    rewrite: Rewrite,
    /// Each column: (table's name, files' name).
    names: Vec<(String, String)>,
}

impl Plan {
    fn report(&self, t: &Table) -> TableWrite {
        TableWrite::nothing_yet(t.format(), &t.table, self.base.version())
    }

    /// What the commit says of itself, naming the table's columns (not the files' names:
    /// `col-<uuid>` under Delta column mapping, an old name in files written before an
    /// Iceberg rename).
    fn about(&self) -> About {
        let mut about = about(&self.rewrite);
        if !self.names.is_empty() {
            // A top-level column by its name (`a.b`, asked as `a\.b`), a leaf by its path.
            let table: Vec<String> = self
                .names
                .iter()
                .map(|(t, _)| match crate::names::split_top(t) {
                    (top, None) => top,
                    _ => t.clone(),
                })
                .collect();
            for (k, v) in &mut about.parameters {
                if k == "columns" {
                    *v = serde_json::to_string(&table).unwrap_or_default();
                }
            }
        }
        about
    }
}

impl Table {
    /// The table `located` found, refused as [`write_table`] says when it is none we write.
    /// Its format is the one finding it saw (not asked again).
    async fn open(located: &crate::Table) -> Result<Table, Error> {
        let root_for = |location: &str| match object::is_remote_url(location) {
            true => StoreRoot::for_url(location),
            false => Ok(StoreRoot::local()),
        };
        let arg = match located.at() {
            TableRef::Catalog { catalog, table } => {
                let location = crate::catalog::current(catalog, table).await?;
                let url = match location.starts_with('/') {
                    true => Url::from_file_path(&location).ok(),
                    false => Url::parse(&location).ok(),
                }
                .ok_or_else(|| LakeError::BadLocation {
                    location: location.clone(),
                })?;
                return Ok(Table {
                    root: root_for(&location)?,
                    url,
                    table: table.clone(),
                    pointer: Some(Pointer::Catalog {
                        catalog: catalog.clone(),
                        table: table.clone(),
                    }),
                    found: None,
                });
            }
            TableRef::Path(arg) => arg,
        };
        let format = located.format().ok_or_else(|| LakeError::NotATable {
            path: arg.to_string(),
        })?;
        // The location finding read (a `file://` URL as its path).
        let location = located.location();
        let url = location::table_url(location)?;
        let pointer = match (format, url.path().ends_with('/')) {
            (Format::Delta, _) => None,
            (Format::Iceberg, true) => Some(Pointer::Folder(url.clone())),
            (Format::Iceberg, false) => {
                return Err(LakeError::WriteRefused {
                    format: "Iceberg",
                    table: arg.to_string(),
                    reason: "a metadata file names one version of the table, not where its \
                             current one is kept: give the table's folder, or its catalog \
                             (--catalog URI NAMESPACE.TABLE)"
                        .to_string(),
                }
                .into())
            }
        };
        Ok(Table {
            root: root_for(location)?,
            url,
            table: arg.to_string(),
            pointer,
            found: located.found().cloned(),
        })
    }

    /// What names the table in a part: its URL, or a catalog's table by the catalog and its
    /// identifier (its metadata file changes with every commit).
    fn identity(&self) -> String {
        match &self.pointer {
            Some(Pointer::Catalog { catalog, table }) => format!(
                "{} {} {table}",
                catalog.uri,
                catalog.name.as_deref().unwrap_or("")
            ),
            _ => self.url.to_string(),
        }
    }

    fn format(&self) -> Format {
        match self.pointer {
            Some(_) => Format::Iceberg,
            None => Format::Delta,
        }
    }

    /// The latest snapshot, for a commit.
    async fn base(&self) -> Result<Base, Error> {
        Ok(match &self.pointer {
            None => Base::Delta(delta_commit::base(&self.root, &self.table, &self.url).await?),
            Some(p) => Base::Iceberg(Box::new(
                iceberg_commit::base(&self.root, p, &self.table).await?,
            )),
        })
    }

    /// Reads the latest snapshot and names `rewrite`'s columns as its files do.
    async fn plan(&self, rewrite: &Rewrite) -> Result<Plan, Error> {
        let base = self.base().await?;
        let (rewrite, names) = match &base {
            Base::Delta(_) => {
                let as_of = crate::AsOf::Version(base.version());
                let snap = match &self.found {
                    Some(found) => found.clone().with_as_of(Some(as_of)).snapshot().await?,
                    None => {
                        let lake = crate::LakeOptions {
                            as_of: Some(as_of),
                            as_directory: false,
                        };
                        crate::snapshot(&self.table, &lake).await?.ok_or_else(|| {
                            LakeError::NotATable {
                                path: self.table.clone(),
                            }
                        })?
                    }
                };
                in_file_names(rewrite, &snap)?
            }
            // Read with the base, from the same metadata file.
            Base::Iceberg(b) => in_file_names(rewrite, &b.snapshot)?,
        };
        Ok(Plan {
            base,
            rewrite,
            names,
        })
    }

    /// The index in `base` of the file `name` names: its path as the log writes it, a path
    /// below the table's root, or its URL (a local table's: its absolute path too).
    fn find(&self, base: &Base, name: &str) -> Option<usize> {
        // As `sbbf inspect TABLE` names them: the table as given, then the path below it.
        let folder = format!("{}/", crate::table_folder(&self.table));
        let name = name.strip_prefix(folder.as_str()).unwrap_or(name);
        let url = if name.contains("://") {
            Url::parse(name).ok()?
        } else if name.starts_with('/') {
            let abs = std::fs::canonicalize(name).unwrap_or_else(|_| PathBuf::from(name));
            Url::from_file_path(abs).ok()?
        } else {
            self.url.join(name).ok()?
        };
        (0..base.len()).find(|&i| {
            let path = base.file_at(i).0;
            path == name || self.url.join(path).is_ok_and(|u| u == url)
        })
    }

    /// Writes the copies of the files of `plan` (those at `only`, or all) that need one,
    /// several at once; on an error lets those under way finish, removes every copy written
    /// and returns it.
    async fn copies(
        &self,
        plan: &Plan,
        only: Option<&[usize]>,
        done: &mut TableWrite,
        progress: &mut (dyn FnMut(usize, usize) + Send),
    ) -> Result<Vec<Written>, Error> {
        let scratch = tempfile::tempdir().map_err(|source| WriteError::TempFile {
            dir: std::env::temp_dir(),
            source,
        })?;
        let chosen: Vec<usize> = match only {
            Some(c) => c.to_vec(),
            None => (0..plan.base.len()).collect(),
        };
        if !object::is_remote_url(self.url.as_str()) {
            let dirs = chosen
                .iter()
                .filter_map(|&i| self.url.join(plan.base.file_at(i).0).ok())
                .filter_map(|u| {
                    Some(
                        location::local_path(u.as_str())
                            .ok()?
                            .parent()?
                            .to_path_buf(),
                    )
                })
                .collect();
            done.leftovers_removed.extend(remove_stale_temps(&dirs));
        }
        let total = chosen.len();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (stop, scratch_dir) = (&stop, scratch.path());
        let mut results = futures::stream::iter(chosen.into_iter().enumerate())
            .map(|(n, i)| async move {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return Ok(Outcome::Skipped);
                }
                let scratch = scratch_dir.join(n.to_string());
                let got = self
                    .copy(&plan.base, i, &plan.rewrite, &plan.names, &scratch)
                    .await;
                if got.is_err() {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                got
            })
            .buffer_unordered(self.concurrency());
        let (mut written, mut failed, mut finished) = (Vec::new(), None, 0);
        let mut lacking = Lacking::default();
        while let Some(got) = results.next().await {
            match got {
                Ok(Outcome::Copied(w, read, lacks)) => {
                    done.bytes_read += read;
                    written.push(w);
                    lacking.add(lacks);
                }
                Ok(Outcome::Kept(k, read, lacks)) => {
                    done.bytes_read += read;
                    done.kept.push(k);
                    if let Some(lacks) = lacks {
                        lacking.add(lacks);
                    }
                }
                Ok(Outcome::Skipped) => {}
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
            finished += 1;
            progress(finished, total);
        }
        let failed = failed.or_else(|| {
            let reason = lacking.in_every_file()?;
            Some(
                LakeError::NoSuchColumn {
                    format: self.format().name(),
                    table: self.table.clone(),
                    reason,
                }
                .into(),
            )
        });
        if let Some(e) = failed {
            self.withdraw(written.iter().map(|w| &w.to)).await;
            return Err(e);
        }
        // The log's order, whatever order the copies finished in.
        written.sort_by_key(|w| {
            (0..plan.base.len()).position(|i| plan.base.file_at(i).0 == w.swap.old_path)
        });
        Ok(written)
    }

    /// Copies written at once: on a local disk one per core (building a filter hashes every
    /// value of its column), on a store more (each waits on its download and upload).
    fn concurrency(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        match object::is_remote_url(self.url.as_str()) {
            true => (cores * 4).clamp(8, 32),
            false => cores.clamp(1, 8),
        }
    }

    /// Commits `written` on `base` (made again on what is current when another writer commits
    /// first). Copies named by parts (`from_parts`) are deleted only when no entry of the
    /// log names them ([`Table::unnamed_copies`]): an older version may read them (parts
    /// committed before, since compacted away).
    async fn commit(
        &self,
        mut base: Base,
        mut written: Vec<Written>,
        about: &About,
        mut done: TableWrite,
        from_parts: bool,
    ) -> Result<TableWrite, Error> {
        if written.is_empty() {
            return Ok(done);
        }
        loop {
            done.tries += 1;
            // The originals no longer current (removed by another writer, or since named by
            // position deletes): left out, their copies withdrawn.
            let gone: Vec<String> = written
                .iter()
                .filter(|w| !base.swappable(&w.swap.old_path))
                .map(|w| w.swap.old_path.clone())
                .collect();
            if !gone.is_empty() {
                let (left, out): (Vec<Written>, Vec<Written>) = written
                    .into_iter()
                    .partition(|w| !gone.contains(&w.swap.old_path));
                // A copy the table names already (the same parts committed before) is the
                // table's now: never deleted, only said.
                let (live, dead): (Vec<Written>, Vec<Written>) =
                    out.into_iter().partition(|w| base.names(&w.swap.new_path));
                done.kept.extend(live.into_iter().map(|w| KeptFile {
                    url: w.from,
                    why: format!("its copy {} is committed already", w.to),
                }));
                match from_parts {
                    false => self.withdraw(dead.iter().map(|w| &w.to)).await,
                    true => {
                        let unnamed = self.unnamed_copies(&dead).await;
                        self.withdraw(unnamed.into_iter()).await
                    }
                }
                done.withdrawn.extend(dead.into_iter().map(|w| w.from));
                written = left;
                if written.is_empty() {
                    return Ok(done);
                }
            }
            let swaps: Vec<Swap> = written.iter().map(|w| w.swap.clone()).collect();
            let about = &committed(about, &written);
            let won = match (&base, &self.pointer) {
                (Base::Delta(b), _) => {
                    let (entry, _) = delta_commit::entry(b, &swaps, about, now_ms());
                    let next = b.version + 1;
                    delta_commit::put_entry(&self.root, &self.url, next, entry)
                        .await?
                        .then(|| i64::try_from(next).unwrap_or(i64::MAX))
                }
                (Base::Iceberg(b), Some(p)) => {
                    let attempt = iceberg_commit::Attempt {
                        root: &self.root,
                        pointer: p,
                        table: &self.table,
                        base: b,
                        swaps: &swaps,
                        about,
                        now_ms: now_ms(),
                    };
                    iceberg_commit::commit(&attempt).await?
                }
                (Base::Iceberg(_), None) => None,
            };
            if let Some(v) = won {
                done.committed_version = Some(v);
                break;
            }
            if done.tries >= TRIES {
                if !from_parts {
                    self.withdraw(written.iter().map(|w| &w.to)).await;
                }
                return Err(LakeError::Contended {
                    format: self.format().name(),
                    table: self.table.clone(),
                    tries: done.tries,
                }
                .into());
            }
            // Another writer took the version: the commit is made again on what is current
            // now (its files' deletion vectors and tags as they are now).
            // Unread, the table may name a copy already (parts committed before): none is
            // deleted then; one left unnamed is the table's VACUUM's to remove.
            base = self.base().await?;
        }
        done.record(written);
        Ok(done)
    }

    /// Checks that each copy a part names is in storage with the size the part says, and
    /// lies beside its original (a part is a file anyone could have written).
    async fn check_copies(&self, written: &[Written]) -> Result<(), Error> {
        let store = self.root.store();
        let checks = written.iter().map(|w| {
            let store = Arc::clone(&store);
            async move {
                let folder = |p: &str| {
                    p.rsplit_once('/')
                        .map_or(String::new(), |(d, _)| d.to_string())
                };
                let beside = !w.swap.new_path.split('/').any(|s| s == ".." || s == ".")
                    && folder(&w.swap.new_path) == folder(&w.swap.old_path);
                // Delta's log names files below the table's folder; Iceberg's manifests by
                // their whole locations.
                let safe = beside
                    && match self.pointer {
                        None => {
                            !w.swap.new_path.contains("://")
                                && !w.swap.new_path.starts_with('/')
                                && self
                                    .url
                                    .join(&w.swap.new_path)
                                    .is_ok_and(|u| u.as_str() == w.to)
                        }
                        Some(_) => copy_url(&w.swap.new_path).is_some_and(|u| u == w.to),
                    };
                if !safe {
                    return Err(format!(
                        "the copy {} of {} does not lie beside it",
                        w.swap.new_path, w.swap.old_path
                    ));
                }
                let size = match object::is_remote_url(&w.to) {
                    true => {
                        let path = self.root.path_of(&w.to).map_err(|e| e.to_string())?;
                        store
                            .head(&path)
                            .await
                            .map(|m| m.size)
                            .map_err(|e| e.to_string())?
                    }
                    false => location::local_path(&w.to)
                        .map_err(|e| e.to_string())
                        .and_then(|p| std::fs::metadata(p).map_err(|e| e.to_string()))?
                        .len(),
                };
                match size == w.swap.new_size {
                    true => Ok(()),
                    false => Err(format!(
                        "the copy {} is {size} bytes, and its part says {}",
                        w.to, w.swap.new_size
                    )),
                }
            }
        });
        let results: Vec<Result<(), String>> = futures::stream::iter(checks)
            .buffer_unordered(32)
            .collect()
            .await;
        match results.into_iter().find_map(Result::err) {
            Some(reason) => Err(part::bad("a part", reason)),
            None => Ok(()),
        }
    }

    /// Writes the copy of `f` that `rewrite` asks for, beside it (on a store, through files
    /// in `scratch`, a folder of its own), or says why it needs none.
    async fn copy(
        &self,
        base: &Base,
        i: usize,
        rewrite: &Rewrite,
        names: &[(String, String)],
        scratch: &Path,
    ) -> Result<Outcome, Error> {
        let (path, size, keep) = base.file_at(i);
        let bad = |location: &str| LakeError::BadLocation {
            location: location.to_string(),
        };
        let (from, new_path, to) = match self.pointer {
            None => {
                let from = self.url.join(path).map_err(|_| bad(path))?.to_string();
                // A file of another table (a shallow clone's) is not copied into that
                // table's folder.
                if path.contains("://") || path.starts_with('/') {
                    let why = "it lies outside the table's folder".to_string();
                    return Ok(Outcome::Kept(KeptFile { url: from, why }, 0, None));
                }
                let (dir, name) = match path.rsplit_once('/') {
                    Some((d, n)) => (format!("{d}/"), n),
                    None => (String::new(), path),
                };
                let new_path = format!("{dir}{}", copy_name(name, job_key(path, size, rewrite)));
                let to = self
                    .url
                    .join(&new_path)
                    .map_err(|_| bad(&new_path))?
                    .to_string();
                (from, new_path, to)
            }
            // Manifests name data files by their whole locations: the copy's is its
            // original's with another last segment.
            Some(_) => {
                let from = copy_url(path).ok_or_else(|| bad(path))?;
                let name = path.rsplit('/').next().unwrap_or(path);
                let named = copy_name(name, job_key(path, size, rewrite));
                let new_path = iceberg_commit::copy_location(path, &named);
                let to = copy_url(&new_path).ok_or_else(|| bad(&new_path))?;
                (from, new_path, to)
            }
        };
        if let Some(why) = keep {
            let why = why.to_string();
            return Ok(Outcome::Kept(KeptFile { url: from, why }, 0, None));
        }
        let local = !object::is_remote_url(&from);
        let input = match local {
            true => location::local_path(&from)?,
            false => self.download(&from, scratch).await?,
        };
        let expected = u64::try_from(size).unwrap_or(0);
        let held = std::fs::metadata(&input)
            .map_err(|_| self.missing(&from))?
            .len();
        if held != expected {
            let reason =
                format!("the table records {expected} bytes for {from}, and storage holds {held}");
            return Err(match self.pointer {
                None => LakeError::Delta {
                    table: self.table.clone(),
                    source: reason.into(),
                },
                Some(_) => LakeError::Iceberg {
                    table: self.table.clone(),
                    reason,
                    source: None,
                },
            }
            .into());
        }
        let output = match local {
            true => location::local_path(&to)?,
            false => scratch.join("copy.parquet"),
        };
        let work = decide(&input, rewrite, names)?;
        let Some(job) = work.job else {
            clean_scratch(local, &input);
            let why = work.why;
            let lacks = Some(work.lacks);
            return Ok(Outcome::Kept(KeptFile { url: from, why }, held, lacks));
        };
        let (i, o) = (input.clone(), output.clone());
        let report = tokio::task::spawn_blocking(move || match job {
            Job::Add(opts) => add_filters(&i, &o, &opts, &mut |_, _| {}),
            Job::Resize { fpp, columns } => resize_filters(&i, &o, fpp, &columns, &mut |_, _| {}),
        })
        .await
        .map_err(|e| LakeError::Delta {
            table: self.table.clone(),
            source: Box::new(e),
        })??;
        clean_scratch(local, &input);
        if report.filters.is_empty() {
            let _ = std::fs::remove_file(&output);
            let why = "no filter of it shrinks".to_string();
            return Ok(Outcome::Kept(
                KeptFile { url: from, why },
                held,
                Some(work.lacks),
            ));
        }
        let mtime = match local {
            true => modified_ms(&output),
            false => {
                let up = self.upload(&output, &to).await;
                let _ = std::fs::remove_file(&output);
                up?
            }
        };
        let written = Written {
            swap: Swap {
                old_path: path.to_string(),
                new_path,
                new_size: report.output_len,
                new_mtime_ms: mtime,
            },
            from,
            to,
            report,
        };
        Ok(Outcome::Copied(written, held, work.lacks))
    }

    fn missing(&self, file: &str) -> Error {
        LakeError::MissingFile {
            format: self.format().name(),
            table: self.table.clone(),
            file: file.to_string(),
        }
        .into()
    }

    /// Reads the object at `url` into a file in `scratch`.
    async fn download(&self, url: &str, scratch: &Path) -> Result<PathBuf, Error> {
        use std::io::Write;
        let path = self.root.path_of(url)?;
        let store = self.root.store();
        let got = match store.get(&path).await {
            Ok(g) => g,
            Err(object_store::Error::NotFound { .. }) => return Err(self.missing(url)),
            Err(source) => {
                return Err(ReadError::Store {
                    location: url.to_string(),
                    source,
                }
                .into())
            }
        };
        std::fs::create_dir_all(scratch).map_err(|source| WriteError::TempFile {
            dir: scratch.to_path_buf(),
            source,
        })?;
        let local = scratch.join("original.parquet");
        let mut file = std::fs::File::create(&local).map_err(|source| WriteError::Io {
            target: local.clone(),
            source,
        })?;
        let mut stream = got.into_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|source| ReadError::Store {
                location: url.to_string(),
                source,
            })?;
            file.write_all(&chunk).map_err(|source| WriteError::Io {
                target: local.clone(),
                source,
            })?;
        }
        Ok(local)
    }

    /// Puts the file `local` at `url`; its modification time. A copy up to [`WHOLE_PUT`] bytes
    /// goes in one request, only if no object is there; a larger one in parts of that size,
    /// read one at a time (so that several copies uploaded at once never hold whole files in
    /// memory). Parts cannot be put only-if-absent, and need not be: a copy's name is random.
    async fn upload(&self, local: &Path, url: &str) -> Result<i64, Error> {
        use std::io::Read;
        let path = self.root.path_of(url)?;
        let store: Arc<dyn ObjectStore> = self.root.store();
        let read_err = |source| -> Error {
            ReadError::Io {
                path: local.to_path_buf(),
                source,
            }
            .into()
        };
        let store_err = |source| -> Error {
            WriteError::Store {
                location: url.to_string(),
                source,
            }
            .into()
        };
        let mut file = std::fs::File::open(local).map_err(read_err)?;
        let len = file.metadata().map_err(read_err)?.len();
        if len <= WHOLE_PUT as u64 {
            let mut bytes = Vec::with_capacity(len as usize);
            file.read_to_end(&mut bytes).map_err(read_err)?;
            // A copy's name says what it holds ([`copy_name`]): one already there (a killed
            // run's, or another run's of the same job) holds the same bytes.
            let opts = PutOptions {
                mode: PutMode::Overwrite,
                ..Default::default()
            };
            store
                .put_opts(&path, PutPayload::from(bytes), opts)
                .await
                .map_err(store_err)?;
            return Ok(now_ms());
        }
        let upload = store.put_multipart(&path).await.map_err(store_err)?;
        let mut parts = object_store::WriteMultipart::new_with_chunk_size(upload, WHOLE_PUT);
        let mut chunk = vec![0u8; WHOLE_PUT];
        loop {
            let n = match file.read(&mut chunk) {
                Ok(n) => n,
                Err(e) => {
                    let _ = parts.abort().await;
                    return Err(read_err(e));
                }
            };
            if n == 0 {
                break;
            }
            if let Err(e) = parts.wait_for_capacity(2).await {
                return Err(store_err(e));
            }
            parts.write(&chunk[..n]);
        }
        parts.finish().await.map_err(store_err)?;
        Ok(now_ms())
    }

    /// Deletes copies no commit will name. Best effort: one left behind is named by no
    /// version, and the table's VACUUM removes it.
    /// Of the parts' copies `dead` (their originals gone), those no entry of the Delta log
    /// names (added or removed): no version reads them, so they are deleted. A version that
    /// names a copy (the same parts committed before) either still has it (then the table
    /// names it now) or has a later entry that removes it, and log entries are kept while
    /// the versions before them are readable. An Iceberg table's copies, and all of them when
    /// the log cannot be read, are left to the table's own cleanup of unnamed files.
    async fn unnamed_copies<'a>(&self, dead: &'a [Written]) -> Vec<&'a String> {
        if self.pointer.is_some() || dead.is_empty() {
            return Vec::new();
        }
        let mut named = vec![false; dead.len()];
        let Ok(log) = self.url.join("_delta_log/") else {
            return Vec::new();
        };
        if self.log_names(&log, dead, &mut named).await.is_err() {
            return Vec::new();
        }
        dead.iter()
            .zip(named)
            .filter(|(_, n)| !n)
            .map(|(w, _)| &w.to)
            .collect()
    }

    /// Marks in `named` each copy of `dead` some entry of the log at `log` names.
    async fn log_names(&self, log: &Url, dead: &[Written], named: &mut [bool]) -> Result<(), ()> {
        let (_, entries) = self.root.list_dir(log.as_str()).await.map_err(|_| ())?;
        // Commits (`N.json`) and compacted ranges (`A.B.compacted.json`); checkpoints only
        // repeat what a commit added.
        for name in entries.iter().filter(|n| n.ends_with(".json")) {
            let url = log.join(name).map_err(|_| ())?;
            let body = self.root.get(url.as_str()).await.map_err(|_| ())?;
            let text = String::from_utf8_lossy(&body);
            for (w, n) in dead.iter().zip(named.iter_mut()) {
                *n |= text.contains(w.swap.new_path.as_str());
            }
        }
        Ok(())
    }

    async fn withdraw<'a>(&self, urls: impl Iterator<Item = &'a String>) {
        let store = self.root.store();
        for url in urls {
            match object::is_remote_url(url) {
                true => {
                    if let Ok(p) = self.root.path_of(url) {
                        let _ = store.delete(&p).await;
                    }
                }
                false => {
                    if let Ok(p) = location::local_path(url) {
                        let _ = std::fs::remove_file(p);
                    }
                }
            }
        }
    }
}

/// The URL a copy at the Iceberg location `location` is read and written at.
fn copy_url(location: &str) -> Option<String> {
    iceberg_commit::location_to_url(location)
}

/// The rewrite with its columns named as the data files name them, and each pair (table's
/// name, files' name).
fn in_file_names(
    rewrite: &Rewrite,
    snap: &crate::Snapshot,
) -> Result<(Rewrite, Vec<(String, String)>), Error> {
    let columns = match rewrite {
        Rewrite::Add(o) => &o.columns,
        Rewrite::Resize { columns, .. } => columns,
    };
    let mut names = Vec::with_capacity(columns.len());
    for c in columns {
        check_column(snap, c)?;
        names.push((c.clone(), snap.file_column(c)?));
    }
    let physical: Vec<String> = names.iter().map(|(_, p)| p.clone()).collect();
    let rewrite = match rewrite {
        Rewrite::Add(o) => Rewrite::Add(AddOptions {
            columns: physical,
            ..o.clone()
        }),
        Rewrite::Resize { fpp, .. } => Rewrite::Resize {
            fpp: *fpp,
            columns: physical,
        },
    };
    Ok((rewrite, names))
}

/// Whether the table's column `c` is a group (a struct, list or map): its leaves hold the
/// values and the filters, not it.
fn is_group(c: &crate::LakeColumn) -> bool {
    let ty = c.data_type.as_deref().unwrap_or_default();
    ["struct", "list", "map"].contains(&ty)
        || ["struct<", "array<", "map<", "variant"]
            .iter()
            .any(|p| ty.starts_with(p))
}

/// Refuses `column` (below the table's column `c`) where it names no leaf: `c` itself when
/// it is a group, or (Iceberg, whose schema names every leaf) a path below it that is none
/// of its leaves, with the leaves to choose from.
fn check_leaf(c: &crate::LakeColumn, column: &str) -> Result<(), String> {
    let top = sbbf_parquet::format::column::escape_field(&c.name);
    let leaves: Vec<String> = c.inner.iter().map(|(p, _)| format!("{top}.{p}")).collect();
    let choices = |asked: &str| -> String {
        if leaves.is_empty() {
            return format!(
                "name one of its leaves as the data files name them (`sbbf inspect` lists \
                 them), e.g. `{top}.list.element` for a list's elements"
            );
        }
        let lower = asked.to_lowercase();
        let near: Vec<&String> = leaves
            .iter()
            .filter(|l| sbbf_parquet::read::file::edit_distance(&l.to_lowercase(), &lower) <= 4)
            .collect();
        meant(&near, &leaves, "its leaves")
    };
    match crate::names::split_top(column).1 {
        None if is_group(c) => Err(format!(
            "`{top}` is a {}, not a leaf column: filters are on its leaves; {}",
            c.data_type.as_deref().unwrap_or("group"),
            choices(column)
        )),
        Some(rest) if !leaves.is_empty() && !c.inner.iter().any(|(p, _)| p == rest) => {
            Err(format!(
                "`{column}` is no leaf of the column `{top}`; {}",
                choices(column)
            ))
        }
        _ => Ok(()),
    }
}

/// The one name meant when `near` holds one ("did you mean"), else every name of `all` to
/// choose from, after `what` ("its columns").
fn meant(near: &[&String], all: &[String], what: &str) -> String {
    match near {
        [one] => format!("did you mean `{one}`?"),
        _ => {
            let all: Vec<String> = all.iter().map(|n| format!("`{n}`")).collect();
            format!("{what}: {}", all.join(", "))
        }
    }
}

/// Refuses a column the table's schema has no top-level field for (with the columns it has,
/// or the one meant by a different case or a small typo), and a Delta partition column (its
/// files do not hold it: there is nothing to filter). A file without the column is then one
/// written before it was added, which is kept as it is.
fn check_column(snap: &crate::Snapshot, column: &str) -> Result<(), Error> {
    let top = sbbf_parquet::format::column::split_path(column)
        .into_iter()
        .next()
        .unwrap_or_default();
    let refuse = |reason: String| -> Error {
        LakeError::NoSuchColumn {
            format: snap.format.name(),
            table: snap.location.clone(),
            reason,
        }
        .into()
    };
    if snap.format == crate::Format::Delta && snap.partition_columns.contains(&top) {
        return Err(refuse(format!(
            "`{top}` is a partition column: its values are in the table's log, not in its \
             data files, so there is no filter to write (a probe of it answers from the log)"
        )));
    }
    if let Some(c) = snap.columns.iter().find(|c| c.name == top) {
        return check_leaf(c, column).map_err(refuse);
    }
    if snap.columns.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = snap
        .columns
        .iter()
        .filter(|c| {
            !(snap.format == crate::Format::Delta && snap.partition_columns.contains(&c.name))
        })
        .map(|c| sbbf_parquet::format::column::escape_field(&c.name))
        .collect();
    let lower = top.to_lowercase();
    let max_edits = (lower.chars().count() / 4).max(1);
    let near: Vec<&String> = names
        .iter()
        .filter(|n| sbbf_parquet::read::file::edit_distance(&n.to_lowercase(), &lower) <= max_edits)
        .collect();
    let choices = meant(&near, &names, "its columns");
    Err(refuse(format!(
        "no column `{top}` in its schema; {choices}"
    )))
}

/// What one file needs.
enum Job {
    Add(AddOptions),
    Resize { fpp: f64, columns: Vec<String> },
}

struct Decision {
    job: Option<Job>,
    /// Why no job, when none.
    why: String,
    /// The columns asked that the file has no leaf for.
    lacks: Vec<Lack>,
}

/// The columns asked below a group (a struct's field, a list's or map's leaf) that files
/// lack, over the files whose footers were read. The table's schema checks top-level columns
/// before any copy ([`check_column`]), but a Delta schema does not say how a writer names a
/// list's or map's leaves (`l.list.element`, `l.list.item`, `l.array`): a leaf that no file
/// has is a wrong name, not a column added later, and is refused once every file is read.
#[derive(Default)]
struct Lacking {
    /// Files whose footers were read.
    read: usize,
    /// Per column: the files that lack it, and the first one's near misses.
    columns: BTreeMap<String, (usize, Vec<String>)>,
}

impl Lacking {
    fn add(&mut self, lacks: Vec<Lack>) {
        self.read += 1;
        for l in lacks {
            let e = self.columns.entry(l.column).or_insert((0, l.near));
            e.0 += 1;
        }
    }

    /// Why the job is refused: a nested column that every file read lacks.
    fn in_every_file(&self) -> Option<String> {
        let (column, (_, near)) = self.columns.iter().find(|(c, (n, _))| {
            *n == self.read && self.read > 0 && crate::names::split_top(c).1.is_some()
        })?;
        let choices = meant(&near.iter().collect::<Vec<_>>(), near, "its leaves there");
        Some(format!(
            "none of its {} data files has a leaf `{column}` (a list's or map's leaves are \
             named as the files name them); {choices}",
            self.read
        ))
    }
}

/// Reads the footer of `input` to see what `rewrite` asks of it: for `Add`, the columns that
/// lack a filter in some row group (a column the file does not have, as in a file written
/// before the column was added, is left out); a column with filters in only some row groups
/// is rebuilt whole.
fn decide(input: &Path, rewrite: &Rewrite, names: &[(String, String)]) -> Result<Decision, Error> {
    let opts = match rewrite {
        Rewrite::Resize { fpp, columns } => {
            return Ok(Decision {
                job: Some(Job::Resize {
                    fpp: *fpp,
                    columns: columns.clone(),
                }),
                why: String::new(),
                lacks: Vec::new(),
            })
        }
        Rewrite::Add(o) => o,
    };
    let file = std::fs::File::open(input).map_err(|source| ReadError::Io {
        path: input.to_path_buf(),
        source,
    })?;
    let pq = ParquetFile::open(file)?;
    let (mut needing, mut partial, mut lacks) = (Vec::new(), false, Vec::new());
    for (c, (asked, _)) in opts.columns.iter().zip(names) {
        let i = match pq.column_index(c) {
            Ok(i) => i,
            Err(e) => {
                // The file's leaves below the same top-level column, else its near misses.
                let rest = crate::names::split_top(c).1.map_or(0, |r| r.len() + 1);
                let below = format!("{}.", &c[..c.len() - rest]);
                let mut near: Vec<String> = pq
                    .columns()
                    .iter()
                    .filter(|l| l.path.starts_with(&below))
                    .map(|l| l.path.clone())
                    .collect();
                if let (true, Error::UnknownColumn { candidates, .. }) = (near.is_empty(), e) {
                    near = candidates;
                }
                lacks.push(Lack {
                    column: asked.clone(),
                    near,
                });
                continue;
            }
        };
        let has: Vec<bool> = pq
            .filter_locations(i)
            .iter()
            .map(|l| l.offset.is_some())
            .collect();
        let all = has.iter().all(|h| *h);
        if opts.replace || !all {
            partial |= has.iter().any(|h| *h);
            needing.push(c.clone());
        }
    }
    if needing.is_empty() {
        let absent: Vec<&str> = lacks.iter().map(|l| l.column.as_str()).collect();
        let why = match absent.is_empty() {
            true => "it has the filters".to_string(),
            false => format!(
                "it has no column {} (written before it was added)",
                absent.join(", ")
            ),
        };
        return Ok(Decision {
            job: None,
            why,
            lacks,
        });
    }
    Ok(Decision {
        job: Some(Job::Add(AddOptions {
            columns: needing,
            replace: opts.replace || partial,
            ..opts.clone()
        })),
        why: String::new(),
        lacks,
    })
}

/// What a commit of `rewrite` says of itself, before the copies (see [`committed`]).
fn about(rewrite: &Rewrite) -> About {
    About {
        operation: match rewrite {
            Rewrite::Add(_) => ADD,
            Rewrite::Resize { .. } => RESIZE,
        }
        .to_string(),
        parameters: parameters(rewrite),
    }
}

/// The operation's parameters for the table's history.
fn parameters(rewrite: &Rewrite) -> Vec<(String, String)> {
    let list = |c: &[String]| serde_json::to_string(c).unwrap_or_default();
    match rewrite {
        Rewrite::Add(o) => {
            let mut p = vec![
                ("columns".to_string(), list(&o.columns)),
                ("fpp".to_string(), o.fpp.to_string()),
                ("replace".to_string(), o.replace.to_string()),
            ];
            if let Some(n) = o.ndv {
                p.push(("ndv".to_string(), n.to_string()));
            }
            p
        }
        Rewrite::Resize { fpp, columns } => vec![
            ("columns".to_string(), list(columns)),
            ("resizeFpp".to_string(), fpp.to_string()),
        ],
    }
}

/// What the commit of `written` says of itself: `about`, and for a resize, as its
/// `columns`, the columns whose filters the copies folded (as the files name them; the
/// columns asked for, or every column with filters when none was, less those where no
/// filter shrank).
fn committed(about: &About, written: &[Written]) -> About {
    let mut about = about.clone();
    if about.operation != RESIZE {
        return about;
    }
    let resized: std::collections::BTreeSet<&str> = written
        .iter()
        .flat_map(|w| w.report.filters.iter().map(|f| f.column.as_str()))
        .collect();
    let resized = serde_json::to_string(&resized).unwrap_or_default();
    for (k, v) in &mut about.parameters {
        if k == "columns" {
            v.clone_from(&resized);
        }
    }
    about
}

/// The name of a copy of the file `name`: its stem (without an earlier copy's suffix), the
/// job's key ([`job_key`]) in 12 hex digits, `.parquet`.
///
/// The same job on the same file always names its copy alike, and writes the same bytes
/// (building filters is deterministic): a run killed after some copies leaves copies that a
/// rerun writes again under the same names, replacing them instead of adding more beside
/// them, and two runs of one job at once write one file with one content. Replacing such a
/// file never changes what any version of the table reads.
fn copy_name(name: &str, key: u64) -> String {
    let stem = name.strip_suffix(".parquet").unwrap_or(name);
    let stem = match stem.rsplit_once("-sbbf-") {
        Some((s, tail)) if tail.len() == 12 && tail.bytes().all(|b| b.is_ascii_hexdigit()) => s,
        _ => stem,
    };
    let named = format!("{stem}-sbbf-{:012x}.parquet", key & 0xffff_ffff_ffff);
    // A copy of a copy whose key came out the same as its original's (one chance in 2^48)
    // would be written over the original, which the table names with its old size.
    match named == name {
        true => format!("{stem}-sbbf-{:012x}.parquet", !key & 0xffff_ffff_ffff),
        false => named,
    }
}

/// What names a copy: this build of sbbf (a later one may write other bytes), the original
/// (its path in the table and its size) and everything the job asks of it.
fn job_key(path: &str, size: i64, rewrite: &Rewrite) -> u64 {
    let mut text = format!("sbbf {}\n{path}\n{size}\n", env!("CARGO_PKG_VERSION"));
    for (k, v) in parameters(rewrite) {
        text.push_str(&format!("{k}={v}\n"));
    }
    xxhash_rust::xxh64::xxh64(text.as_bytes(), 0)
}

/// How long a temporary file of an unfinished copy (`.sbbf-*.tmp`) goes unchanged before a
/// later run takes it for the leftover of a killed one and removes it. A copy being written
/// changes its temporary file all along; one paused longer than this loses it and fails,
/// before any commit.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Removes the temporary files (`.sbbf-*.tmp`) in `dirs` that have gone unchanged for
/// [`STALE_TEMP`]: what a killed run of `sbbf add` left beside the copies it was writing.
/// Returns the paths removed.
fn remove_stale_temps(dirs: &std::collections::BTreeSet<PathBuf>) -> Vec<String> {
    let now = std::time::SystemTime::now();
    let mut removed = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if !(name.starts_with(".sbbf-") && name.ends_with(".tmp")) {
                continue;
            }
            let stale = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age >= STALE_TEMP));
            if stale && std::fs::remove_file(e.path()).is_ok() {
                removed.push(e.path().display().to_string());
            }
        }
    }
    removed
}

fn clean_scratch(local: bool, input: &Path) {
    if !local {
        let _ = std::fs::remove_file(input);
    }
}

fn now_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn modified_ms(path: &Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or_else(now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_leaves_take_filters() {
        let list = crate::LakeColumn {
            name: "l".into(),
            data_type: Some("list".into()),
            inner: vec![("list.element".into(), vec![3, 4])],
            ..Default::default()
        };
        let group = check_leaf(&list, "l").unwrap_err();
        assert!(
            group.contains("`l` is a list") && group.contains("`l.list.element`"),
            "{group}"
        );
        let wrong = check_leaf(&list, "l.list.item").unwrap_err();
        assert!(
            wrong.contains("no leaf") && wrong.contains("`l.list.element`"),
            "{wrong}"
        );
        assert_eq!(check_leaf(&list, "l.list.element"), Ok(()));
        let delta = crate::LakeColumn {
            name: "st".into(),
            data_type: Some("struct<a: long>".into()),
            ..Default::default()
        };
        assert!(check_leaf(&delta, "st")
            .unwrap_err()
            .contains("is a struct<a: long>"));
        // Leaves of a Delta column without column mapping are the files' to name.
        assert_eq!(check_leaf(&delta, "st.a"), Ok(()));
        let id = crate::LakeColumn {
            name: "id".into(),
            data_type: Some("long".into()),
            ..Default::default()
        };
        assert_eq!(check_leaf(&id, "id"), Ok(()));
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            match e.file_type().unwrap().is_dir() {
                true => copy_dir(&e.path(), &to.join(e.file_name())),
                false => drop(std::fs::copy(e.path(), to.join(e.file_name())).unwrap()),
            }
        }
    }

    /// Another writer commits while the copies are written (a DELETE removing one of the
    /// files): the commit is lost, made again on the new version without that file, and its
    /// copy is deleted.
    #[test]
    fn a_commit_lost_to_another_writer_is_made_again_for_the_files_still_current() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/lake");
        copy_dir(&fixtures.join("delta_partitioned"), &table);
        let arg = table.to_str().unwrap().to_string();
        let snap = sbbf_parquet::source::block_on(crate::snapshot(&arg, &Default::default()))
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!((snap.version, snap.files.len()), (2, 4));
        let root = Url::from_directory_path(std::fs::canonicalize(&table).unwrap()).unwrap();
        let victim = snap.files[0]
            .url
            .strip_prefix(root.as_str())
            .unwrap()
            .to_string();
        let log = table.join("_delta_log/00000000000000000003.json");
        let other_writer = format!(
            "{{\"commitInfo\":{{\"timestamp\":1,\"operation\":\"DELETE\"}}}}\n\
             {{\"remove\":{{\"path\":\"{victim}\",\"deletionTimestamp\":1,\"dataChange\":true}}}}\n"
        );
        let add = Rewrite::Add(AddOptions {
            columns: vec!["s".into()],
            fpp: 0.01,
            ndv: None,
            replace: false,
        });
        let mut progress = |done: usize, total: usize| {
            if done == total {
                std::fs::write(&log, &other_writer).unwrap();
            }
        };
        let located =
            sbbf_parquet::source::block_on(crate::Table::locate(arg.as_str(), &Default::default()))
                .unwrap()
                .unwrap();
        let done = sbbf_parquet::source::block_on(write_table(&located, &add, &mut progress))
            .unwrap()
            .unwrap();
        assert_eq!(done.read_version, 2);
        assert_eq!(done.committed_version, Some(4));
        assert_eq!(done.tries, 2);
        assert_eq!(done.withdrawn, [snap.files[0].url.clone()]);
        assert_eq!(done.swapped.len(), 3);
        let now = sbbf_parquet::source::block_on(crate::snapshot(&arg, &Default::default()))
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(now.version, 4);
        let mut current: Vec<&str> = now.files.iter().map(|f| f.url.as_str()).collect();
        let mut copies: Vec<&str> = done.swapped.iter().map(|s| s.to.as_str()).collect();
        current.sort();
        copies.sort();
        assert_eq!(current, copies);
        // No copy is left that no version names.
        let on_disk = walkdir::WalkDir::new(&table)
            .into_iter()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains("-sbbf-")
            })
            .count();
        assert_eq!(on_disk, 3);
    }

    /// A copy larger than one put goes up in parts, and arrives whole; a small one in one put.
    #[test]
    fn copies_are_uploaded_whole_or_in_parts() {
        use object_store::memory::InMemory;
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let base = Url::parse("s3://b/t/").unwrap();
        let t = Table {
            root: StoreRoot::with_store(Arc::clone(&store), Url::parse("s3://b/").unwrap()),
            url: base.clone(),
            table: "s3://b/t/".into(),
            pointer: None,
            found: None,
        };
        let dir = tempfile::tempdir().unwrap();
        for len in [1000, WHOLE_PUT * 2 + 12_345] {
            let local = dir.path().join("copy.parquet");
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            std::fs::write(&local, &bytes).unwrap();
            let url = format!("s3://b/t/c-{len}.parquet");
            sbbf_parquet::source::block_on(t.upload(&local, &url))
                .unwrap()
                .unwrap();
            let got = sbbf_parquet::source::block_on(async {
                let path = object_store::path::Path::from(format!("t/c-{len}.parquet"));
                store.get(&path).await.unwrap().bytes().await.unwrap()
            })
            .unwrap();
            assert!(got.as_ref() == bytes.as_slice(), "{len} bytes");
        }
    }

    #[test]
    fn a_copy_is_named_after_its_original_once() {
        let add = |columns: &[&str], fpp: f64| {
            Rewrite::Add(AddOptions {
                columns: columns.iter().map(|c| c.to_string()).collect(),
                fpp,
                ndv: None,
                replace: false,
            })
        };
        let name = "part-00000-3fd4-c000.zstd.parquet";
        let key = job_key(name, 6923, &add(&["id"], 0.01));
        let a = copy_name(name, key);
        assert!(a.starts_with("part-00000-3fd4-c000.zstd-sbbf-"), "{a}");
        assert!(a.ends_with(".parquet"));
        assert_eq!(a.len(), "part-00000-3fd4-c000.zstd-sbbf-".len() + 12 + 8);
        // The same job on the same file: the same name; any other: another.
        assert_eq!(copy_name(name, job_key(name, 6923, &add(&["id"], 0.01))), a);
        for other in [
            job_key(name, 6924, &add(&["id"], 0.01)),
            job_key(
                "x/part-00000-3fd4-c000.zstd.parquet",
                6923,
                &add(&["id"], 0.01),
            ),
            job_key(name, 6923, &add(&["id"], 0.02)),
            job_key(name, 6923, &add(&["id", "s"], 0.01)),
            job_key(
                name,
                6923,
                &Rewrite::Resize {
                    fpp: 0.01,
                    columns: vec!["id".into()],
                },
            ),
        ] {
            assert_ne!(copy_name(name, other), a);
        }
        // A copy of a copy does not grow its name.
        let b = copy_name(&a, job_key(&a, 7000, &add(&["s"], 0.01)));
        assert_eq!(b.len(), a.len());
        assert_ne!(a, b);
        // Never its original's name, even when the keys agree.
        assert_ne!(copy_name(&a, key), a);
    }

    #[test]
    fn a_resize_is_committed_as_one_naming_the_columns_it_folded() {
        let copy = |columns: &[&str]| Written {
            swap: Swap {
                old_path: "a.parquet".into(),
                new_path: "a-sbbf-0123456789ab.parquet".into(),
                new_size: 1,
                new_mtime_ms: 1,
            },
            from: "file:///t/a.parquet".into(),
            to: "file:///t/a-sbbf-0123456789ab.parquet".into(),
            report: WriteReport {
                filters: columns
                    .iter()
                    .map(|c| sbbf_parquet::write::WrittenFilter {
                        row_group: 0,
                        column: c.to_string(),
                        bytes_before: 64,
                        bytes_after: 32,
                        distinct: None,
                    })
                    .collect(),
                input_len: 1,
                output_len: 1,
                bytes_written: 1,
                compacted: false,
            },
        };
        let written = [copy(&["s", "id"]), copy(&["id"])];
        // Every column asked for (none named): the ones whose filters shrank.
        let resize = about(&Rewrite::Resize {
            fpp: 0.1,
            columns: Vec::new(),
        });
        assert_eq!(resize.parameters[0].1, "[]");
        let said = committed(&resize, &written);
        assert_eq!(said.operation, "RESIZE BLOOM FILTERS");
        assert_eq!(
            said.parameters,
            vec![
                ("columns".to_string(), r#"["id","s"]"#.to_string()),
                ("resizeFpp".to_string(), "0.1".to_string()),
            ]
        );
        // An add says what was asked, as before.
        let add = about(&Rewrite::Add(AddOptions {
            columns: vec!["id".into()],
            fpp: 0.01,
            ndv: None,
            replace: false,
        }));
        let said = committed(&add, &written);
        assert_eq!(said.operation, "ADD BLOOM FILTERS");
        assert_eq!(said.parameters[0].1, r#"["id"]"#);
    }
}
