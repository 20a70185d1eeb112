//! Building and updating an index: footers and filters only, never data pages.
//!
//! `build` reads every file; `update` reads only files that are new or changed since the
//! index was written (the rest keep their entries' bytes, taken from the old index) and
//! drops files that are gone.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the options, [`build`], [`update`], and the phases of writing an index |
//! | `gather.rs` | what one file gives: its filters, read (folded) or built from its pages |
//! | `spool.rs` | the bitsets spooled to a temporary file, and the groups written from it |

mod gather;
mod spool;
#[cfg(test)]
mod tests;

use crate::format::{self, Directory, FileEntry, Group, Stamp, HEADER_LEN};
/// What a build or update returns; defined in [`crate::report`] with the other reports, and
/// named here too, where earlier releases had them.
pub use crate::report::{BuildReport, ColumnReport, GroupReport};
use crate::table::{is_fresh, Listed, Root};
use crate::Error;
use futures::{FutureExt, StreamExt};
use gather::{gather, Built, Gathered, RowGroupFilters};
pub use gather::{schema_fingerprint, BUILT_FPP};
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::source::{SourceOptions, DEFAULT_CONCURRENCY};
use spool::{write_groups, Spool, Spooled};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::Arc;

/// What to index.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Columns by dotted path; empty: every column that has a filter in some file.
    pub columns: Vec<String>,
    /// Fold filters down while their estimated FPP stays at or below this (`None`: keep every
    /// filter at its own size, so the index answers exactly as the files do).
    pub fpp: Option<f64>,
    /// Files read at once.
    pub concurrency: usize,
    /// Build the filters row groups lack for the chosen columns (`columns` must name them)
    /// from their data, as `sbbf add` builds them (at `fpp`, else [`BUILT_FPP`]): only those
    /// column chunks' pages are read. Without, such row groups are not covered (probed
    /// directly).
    pub build_missing: bool,
    /// With `fpp` and `columns`: a row group whose filter's bits give a false-positive rate
    /// above `fpp` gets its entry built from its column chunk's data at `fpp` instead (the
    /// file unchanged), so the index answers at `fpp` whatever rate the writers chose; those
    /// chunks' pages are read once, at build time. An entry built so rules out a value its
    /// chunk does not hold where the file's looser filter may say "maybe" (a direct probe
    /// reads such a file; the index does not).
    pub tighten: bool,
    /// Told `(files read, files to read)` as the build reads the table's files.
    pub progress: Option<Progress>,
}

/// A callback told `(done, total)` as work goes on (a front end draws a bar with it).
#[derive(Clone)]
pub struct Progress(pub Arc<dyn Fn(usize, usize) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            columns: Vec::new(),
            fpp: None,
            concurrency: DEFAULT_CONCURRENCY,
            build_missing: false,
            tighten: false,
            progress: None,
        }
    }
}

/// The table version a snapshot's listing is of, as an index records it: with the table's
/// column names, for Delta the mark of its commit (one request), for Iceberg its data
/// manifests, which let a probe of a later version read only what changed since.
pub(crate) async fn table_at(snap: Option<&sbbf_lake::Snapshot>) -> Option<format::TableAt> {
    use sbbf_lake::Format;
    let snap = snap?;
    let mark = match snap.format {
        // Without it the index still answers a later version, from its snapshot.
        Format::Delta => sbbf_lake::commit_mark(&snap.location, snap.version)
            .await
            .ok()
            .flatten(),
        Format::Iceberg => None,
    };
    Some(format::TableAt {
        format: snap.format.to_string(),
        version: snap.version,
        names: Some(snap.names().to_json()),
        mark,
        manifests: snap.data_manifests().map(<[String]>::to_vec),
        metadata: snap.metadata.clone(),
        list: snap.data_only_list().map(str::to_string),
    })
}

/// Builds the index of the table at `root` from every file.
pub async fn build(root: &Root, options: &BuildOptions) -> Result<BuildReport, Error> {
    check_options(options)?;
    let _writer = root.lock_writer()?;
    let listed_at = now_ns();
    let (listing, table) = root.list_lake().await?;
    // A table's columns by the table's names (`User Name`, `a\.b` under Delta column
    // mapping), indexed under the names its files hold them by, as probes look them up.
    let in_files;
    let options = match &table {
        Some(snap) => {
            let columns = options
                .columns
                .iter()
                .map(|c| snap.file_column(c))
                .collect::<Result<Vec<_>, _>>()?;
            in_files = BuildOptions {
                columns,
                ..options.clone()
            };
            &in_files
        }
        None => options,
    };
    let mut pre = Prepared::new().map_err(io_err)?;
    pre.check_asked = true;
    pre.table = table_at(table.as_deref()).await;
    assemble(root, listing, listed_at, pre, options, Sink::Root).await
}

/// Updates the index at `root`: reads only new and changed files, keeps the others' entries,
/// drops the gone ones. The columns and FPP target are the old index's. Without a usable old
/// index it builds (`rebuilt` says why).
pub async fn update(
    root: &Root,
    concurrency: usize,
) -> Result<(BuildReport, Option<String>), Error> {
    update_with(
        root,
        &UpdateOptions {
            concurrency,
            build_missing: false,
            tighten: false,
            progress: None,
            swapped: Vec::new(),
        },
    )
    .await
}

/// A data file of a lake table that a commit swapped for a copy with the same data pages
/// (`sbbf add TABLE`, `sbbf resize TABLE`, `sbbf commit`): an update carries the original's
/// entries over to the copy instead of reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swapped {
    /// The original's URL, as the table named it.
    pub from: String,
    /// The original's size in bytes.
    pub from_size: u64,
    /// The copy's URL.
    pub to: String,
    /// The columns (as the files name them) whose filters the copy got new or rewritten.
    pub columns: Vec<String>,
}

/// How [`update_with`] updates.
#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// Files read at once.
    pub concurrency: usize,
    /// As [`BuildOptions::build_missing`], for the old index's columns (chosen with `-c`):
    /// files with row groups still lacking an entry are read again, and those filters built.
    pub build_missing: bool,
    /// As [`BuildOptions::tighten`], for the files the update reads (new and changed ones;
    /// with the old index's columns and FPP target, which must be set).
    pub tighten: bool,
    /// Told `(files read, files to read)` as the update reads new and changed files.
    pub progress: Option<Progress>,
    /// Files just swapped for copies by a commit of this process: a copy whose original the
    /// old index holds fresh takes the original's entries (every filter valid for the
    /// original's row groups is valid for the copy's: the same data pages), unless the copy
    /// got filters of a column the index covers, which is then read (not held back as just
    /// changed: its writer is this process).
    pub swapped: Vec<Swapped>,
}

/// [`update`], with options.
pub async fn update_with(
    root: &Root,
    up: &UpdateOptions,
) -> Result<(BuildReport, Option<String>), Error> {
    let concurrency = up.concurrency;
    let _writer = root.lock_writer()?;
    let listed_at = now_ns();
    let (listing, old) = futures::future::join(root.list_lake(), root.load_whole()).await;
    let (listing, table) = listing?;
    let location = table.as_ref().map(|s| s.location.clone());
    let table = table_at(table.as_deref()).await;
    let old = match old {
        Ok(Some((loaded, bytes))) => Some((loaded.directory, bytes)),
        Ok(None) => return Err(Error::NoIndex(root.index_location())),
        Err(e) => {
            let why = e.to_string();
            let mut pre = Prepared::new().map_err(io_err)?;
            pre.table = table;
            let r = assemble(
                root,
                listing,
                listed_at,
                pre,
                &BuildOptions {
                    concurrency,
                    progress: up.progress.clone(),
                    ..BuildOptions::default()
                },
                Sink::Root,
            )
            .await?;
            return Ok((r, Some(why)));
        }
    };
    let options = old
        .as_ref()
        .map(|(d, _)| BuildOptions {
            columns: if d.explicit_columns {
                d.columns.iter().map(|c| c.path.clone()).collect()
            } else {
                Vec::new()
            },
            fpp: d.target_fpp,
            concurrency,
            build_missing: up.build_missing,
            tighten: up.tighten,
            progress: up.progress.clone(),
        })
        .unwrap_or_default();
    check_options(&options)?;
    let mut pre = Prepared::new().map_err(io_err)?;
    pre.table = table;
    if let Some((d, bytes)) = &old {
        // Which listed files the old index still describes.
        let by_path = d.by_path();
        // With --build-missing, a file that still lacks an entry for a row group of a column
        // it has is read again (for those filters).
        let mut lacking: std::collections::HashSet<usize> = std::collections::HashSet::new();
        if up.build_missing {
            for c in &d.columns {
                let mut have: std::collections::HashSet<(u32, u32)> =
                    std::collections::HashSet::new();
                for g in &c.groups {
                    have.extend(g.entries.iter().map(|e| (e.file, e.row_group)));
                }
                for (fi, t) in c.file_types.iter().enumerate() {
                    let n = d.files[fi].row_counts.as_ref().map_or(0, Vec::len);
                    if t.is_some() && (0..n as u32).any(|rg| !have.contains(&(fi as u32, rg))) {
                        lacking.insert(fi);
                    }
                }
            }
        }
        let mut kept: HashMap<usize, usize> = HashMap::new();
        for (li, l) in listing.iter().enumerate() {
            if let Some(&fi) = by_path.get(l.rel.as_str()) {
                if is_fresh(&d.files[fi], l)
                    && d.files[fi].row_counts.is_some()
                    && !lacking.contains(&fi)
                {
                    kept.insert(fi, li);
                }
            }
        }
        if let Some(location) = &location {
            let swaps = &up.swapped;
            let plan = carried_over(root, d, location, &listing, swaps, &lacking)?;
            kept.extend(plan.kept);
            pre.written = plan.read;
        }
        let listed: std::collections::HashSet<&str> =
            listing.iter().map(|l| l.rel.as_str()).collect();
        pre.gone = d
            .files
            .iter()
            .filter(|f| !listed.contains(f.path.as_str()))
            .count();
        pre.take_from(d, bytes, &kept).map_err(io_err)?;
    }
    Ok((
        assemble(root, listing, listed_at, pre, &options, Sink::Root).await?,
        None,
    ))
}

/// What an update does with the copies a commit swapped in: copies that take their
/// original's entries (index file -> listed file), and copies to read.
struct CarriedOver {
    kept: HashMap<usize, usize>,
    read: std::collections::HashSet<usize>,
}

/// Which of the `swapped` copies in `listing` take their original's entries in the old index
/// `d` (the entry fresh for the original as it still lies, row counts known, nothing missing
/// for `--build-missing`), and which must be read (new filters of an indexed column, or an
/// original the index did not hold fresh).
fn carried_over(
    root: &Root,
    d: &Directory,
    location: &str,
    listing: &[Listed],
    swapped: &[Swapped],
    lacking: &std::collections::HashSet<usize>,
) -> Result<CarriedOver, Error> {
    let by_path = d.by_path();
    let at: HashMap<&str, usize> = listing
        .iter()
        .enumerate()
        .map(|(i, l)| (l.rel.as_str(), i))
        .collect();
    // An index of "every column with filters" takes any new filter's column.
    let indexed = |c: &String| !d.explicit_columns || d.columns.iter().any(|col| col.path == *c);
    let mut out = CarriedOver {
        kept: HashMap::new(),
        read: std::collections::HashSet::new(),
    };
    // Listed at once (a local table's folder is resolved once, not per file).
    let originals = root.listed_urls(
        location,
        swapped.iter().map(|s| (s.from.as_str(), s.from_size)),
    )?;
    let copies = root.listed_urls(location, swapped.iter().map(|s| (s.to.as_str(), 0)))?;
    for ((s, original), copy) in swapped.iter().zip(&originals).zip(&copies) {
        // A copy another commit removed since is not in this version's listing.
        let Some(&li) = at.get(copy.rel.as_str()) else {
            continue;
        };
        let entry = by_path.get(original.rel.as_str()).copied().filter(|&fi| {
            is_fresh(&d.files[fi], original)
                && d.files[fi].row_counts.is_some()
                && !lacking.contains(&fi)
        });
        match entry {
            Some(fi) if !s.columns.iter().any(indexed) => {
                out.kept.insert(fi, li);
            }
            _ => {
                out.read.insert(li);
            }
        }
    }
    Ok(out)
}

/// After a commit of this process swapped `swapped` data files of the lake table at `root`
/// for copies, updates the table's index, when it has one, carrying the originals' entries
/// over ([`UpdateOptions::swapped`]): the index covers every file it covered before, at the
/// version committed or later. `Ok(None)` when the table has no index.
pub async fn follow_swaps(
    root: &Root,
    swapped: Vec<Swapped>,
    concurrency: usize,
) -> Result<Option<(BuildReport, Option<String>)>, Error> {
    // No index: nothing to follow (and no index folder made by the update's lock).
    match root.load().await {
        Ok(Some(_)) | Err(_) => {}
        Ok(None) => return Ok(None),
    }
    let up = UpdateOptions {
        concurrency,
        build_missing: false,
        tighten: false,
        progress: None,
        swapped,
    };
    update_with(root, &up).await.map(Some)
}

/// The swaps `done` committed (none when it committed nothing), as [`follow_swaps`] takes
/// them.
pub fn swaps_of(done: &sbbf_lake::backfill::TableWrite) -> Vec<Swapped> {
    if done.committed_version.is_none() {
        return Vec::new();
    }
    done.swapped
        .iter()
        .map(|s| Swapped {
            from: s.from.clone(),
            from_size: s.report.input_len,
            to: s.to.clone(),
            columns: s.report.filters.iter().map(|f| f.column.clone()).collect(),
        })
        .collect()
}

/// [`follow_swaps`] for the table write `done` of the table at `table` (a folder or an
/// object-store URL): what every front end runs after `sbbf add`, `sbbf resize` or
/// `sbbf commit` on a table. `Ok(None)`: nothing was committed, or the table has no index.
pub async fn follow_table_write(
    table: &str,
    done: &sbbf_lake::backfill::TableWrite,
) -> Result<Option<(BuildReport, Option<String>)>, Error> {
    let swapped = swaps_of(done);
    if swapped.is_empty() {
        return Ok(None);
    }
    let table = &*sbbf_parquet::source::object::local_location(table)?;
    let Some(root) = Root::open(table)? else {
        return Ok(None);
    };
    follow_swaps(&root, swapped, DEFAULT_CONCURRENCY).await
}

pub(crate) fn io_err(source: std::io::Error) -> Error {
    Error::Io {
        what: "writing the index".into(),
        source,
    }
}

/// Where [`assemble`] writes: the index under the root, or a part (see [`crate::part`]).
pub(crate) enum Sink {
    /// `ROOT/_sbbf_index/index.sbbfi`, atomically.
    Root,
    /// A part file: the index of some files, then the part's manifest.
    Part {
        /// Where.
        out: std::path::PathBuf,
        /// What the part says of itself (its manifest and part trailer, as encoded), written
        /// after the index.
        manifest: Vec<u8>,
    },
}

/// Entries already at hand before the files are read: the kept files of an old index
/// (update) or of parts (merge), spooled.
pub(crate) struct Prepared {
    spool: Spool,
    /// Per listed file (its index in the listing): what it gave.
    kept: HashMap<usize, Gathered<Spooled>>,
    /// Files an old index had that are gone.
    pub(crate) gone: usize,
    /// Whether listed files that are not kept are read (build, update) or left out of the
    /// index (merge: a file no part covers stays "new", for `update` to read).
    pub(crate) read_others: bool,
    /// Whether a column asked for that no file has, or that no file has a filter for, refuses
    /// the build (a new build: it would replace the index with one that answers nothing for
    /// it, the mark of a misspelt `-c`).
    pub(crate) check_asked: bool,
    /// The table version the listing is of (a Delta or Iceberg table's snapshot).
    pub(crate) table: Option<format::TableAt>,
    /// Listed files (by their index in the listing) this process just wrote: read, and
    /// covered although just changed.
    pub(crate) written: std::collections::HashSet<usize>,
}

impl Prepared {
    pub(crate) fn new() -> std::io::Result<Prepared> {
        Ok(Prepared {
            spool: Spool::new()?,
            kept: HashMap::new(),
            gone: 0,
            read_others: true,
            check_asked: false,
            table: None,
            written: std::collections::HashSet::new(),
        })
    }

    /// Spools the entries of index `d` (its bytes `bytes`, checked whole) of the files `kept`
    /// maps (index file -> listed file), as stored.
    pub(crate) fn take_from(
        &mut self,
        d: &Directory,
        bytes: &[u8],
        kept: &HashMap<usize, usize>,
    ) -> std::io::Result<()> {
        let mut per_file: HashMap<usize, Gathered<Spooled>> = HashMap::new();
        for &fi in kept.keys() {
            per_file.insert(
                fi,
                Gathered {
                    row_counts: d.files[fi].row_counts.clone().unwrap_or_default(),
                    schema: d.files[fi].schema,
                    columns: Vec::new(),
                    built: Built::default(),
                    asked: Vec::new(),
                },
            );
        }
        for c in &d.columns {
            let mut of_file: HashMap<usize, RowGroupFilters<Spooled>> = HashMap::new();
            for (fi, t) in c.file_types.iter().enumerate() {
                if t.is_some() && kept.contains_key(&fi) {
                    let n = d.files[fi].row_counts.as_ref().map_or(0, Vec::len);
                    of_file.insert(fi, vec![None; n]);
                }
            }
            for g in &c.groups {
                for (e, entry) in g.entries.iter().enumerate() {
                    if let Some(rgs) = of_file.get_mut(&(entry.file as usize)) {
                        let bits = extract(bytes, g, e);
                        if let Some(slot) = rgs.get_mut(entry.row_group as usize) {
                            *slot = Some((self.spool.put(&bits)?, entry.folds));
                        }
                    }
                }
            }
            for (fi, rgs) in of_file {
                if let (Some(g), Some(Some(t))) = (per_file.get_mut(&fi), c.file_types.get(fi)) {
                    if let Some(ty) = d.types.get(*t as usize) {
                        g.columns.push((ty.clone(), rgs));
                    }
                }
            }
        }
        for (fi, g) in per_file {
            self.kept.insert(kept[&fi], g);
        }
        Ok(())
    }
}

pub(crate) fn check_options(options: &BuildOptions) -> Result<(), Error> {
    if options.build_missing && options.columns.is_empty() {
        return Err(Error::BuildMissingWithoutColumns);
    }
    if options.tighten && (options.columns.is_empty() || options.fpp.is_none()) {
        return Err(Error::TightenWithout);
    }
    check_fpp(options.fpp)
}

fn check_fpp(fpp: Option<f64>) -> Result<(), Error> {
    match fpp {
        Some(p) if !(p > 0.0 && p < 1.0) => Err(Error::FppOutOfRange(p)),
        _ => Ok(()),
    }
}

/// Reads what it must, then writes the index (or part) to `sink`: the files not kept are
/// read ([`read_files`]), the directory's tables made ([`directory_tables`]) and checked
/// against the columns asked for ([`check_asked_columns`]), then the groups
/// ([`write_groups`]), the directory and the trailer are written and the result committed.
pub(crate) async fn assemble(
    root: &Root,
    listing: Vec<Listed>,
    listed_at: i64,
    pre: Prepared,
    options: &BuildOptions,
    sink: Sink,
) -> Result<BuildReport, Error> {
    let Prepared {
        mut spool,
        kept,
        gone,
        read_others,
        check_asked,
        table,
        written,
    } = pre;
    let mut report = BuildReport {
        index: match &sink {
            Sink::Root => root.index_location(),
            Sink::Part { out, .. } => out.display().to_string(),
        },
        files: listing.len(),
        files_kept: kept.len(),
        files_gone: gone,
        ..BuildReport::default()
    };

    // Read the other files: footers, then the filters of the chosen columns.
    let to_read: Vec<usize> = if read_others {
        (0..listing.len())
            .filter(|i| !kept.contains_key(i))
            .collect()
    } else {
        Vec::new()
    };
    let mut gathered =
        read_files(root, &listing, &to_read, options, &mut spool, &mut report).await?;
    // Kept files, and files this process just wrote, are covered although just changed.
    let mut kept_listed: std::collections::HashSet<usize> = kept.keys().copied().collect();
    kept_listed.extend(written);
    for (li, g) in kept {
        gathered[li] = Some(Ok(g));
    }

    // The directory: files, types, and per column its entries.
    let explicit = !options.columns.is_empty();
    let Tables {
        files,
        types,
        mut cols,
        asked,
    } = directory_tables(
        &listing,
        gathered,
        read_others,
        listed_at,
        &kept_listed,
        options,
        &mut report,
    );
    // A new build asked for a column no readable file has, or none has a filter for: refuse
    // before anything is written, so a good index is not replaced by one that answers
    // nothing for it. (Files that could not be read tell nothing either way.)
    // Reports and refusals name a table's columns by the table's names.
    let names = table.as_ref().and_then(format::TableAt::table_names);
    if check_asked && report.files_read > report.failed.len() {
        check_asked_columns(&options.columns, asked)
            .map_err(|e| e.with_table_names(names.as_ref()))?;
    }
    // Without -c, a column is indexed when some file has a filter for it; every file's type of
    // it is recorded all the same (a file with the column but no filter is then "not
    // covered", never "no such column"). A part keeps them all: another part's files may
    // have the filters.
    if !explicit && !matches!(sink, Sink::Part { .. }) {
        cols.retain(|_, (_, entries)| !entries.is_empty());
    }

    // Write: header, groups, directory, trailer.
    let io = io_err;
    let tmp = match &sink {
        Sink::Root => root.temp_file()?,
        Sink::Part { out, .. } => crate::table::temp_beside(out)?,
    };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file());
    w.write_all(&format::header()).map_err(io)?;
    let mut at = HEADER_LEN;
    let columns = write_groups(&mut w, &spool, cols, files.len(), &mut at, &mut report)?;
    // A later version is answered from the commits since this one only when the file table
    // holds every file of this one (a merge leaves out files no part covered): else a file
    // the table kept would go unnamed.
    // (A part covers some files only; a file outside the root, or two files of one relative
    // path, could not be named from the file table again.)
    let mut table = table;
    if let Some(t) = &mut table {
        let whole = matches!(sink, Sink::Root)
            && files.len() == listing.len()
            && root.locates_all(&listing);
        if !whole {
            (t.mark, t.manifests, t.list) = (None, None, None);
        }
    }
    let directory = Directory {
        created_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
        root: match root {
            Root::Local { arg, .. } => arg.clone(),
            Root::Store { url, .. } => url.clone(),
        },
        target_fpp: options.fpp,
        explicit_columns: explicit,
        files,
        types,
        columns,
        table,
    };
    report.table_version = directory.table.as_ref().map(|t| t.version);
    let (dir, head) = format::encode_directory(&directory, at);
    w.write_all(&dir).map_err(io)?;
    w.write_all(&format::trailer(
        at + head as u64,
        (dir.len() - head) as u64,
        crc32fast::hash(&dir[head..]),
    ))
    .map_err(io)?;
    let len = at + dir.len() as u64 + format::TRAILER_LEN;
    report.index_bytes = len;
    match sink {
        Sink::Root => {
            w.flush().map_err(io)?;
            drop(w);
            root.commit(tmp, len).await?;
        }
        Sink::Part { out, manifest } => {
            w.write_all(&manifest).map_err(io)?;
            w.flush().map_err(io)?;
            drop(w);
            crate::table::persist(tmp, &out)?;
        }
    }
    for c in &mut report.columns {
        (c.column, c.column_in_file) = crate::report::by_table_name(names.as_ref(), &c.column);
    }
    Ok(report)
}

/// Per listed file: what reading it gave (its bitsets in the spool), or why it could not be
/// read; `None` for a file not read.
type GatheredFiles = Vec<Option<Result<Gathered<Spooled>, String>>>;

/// Reads the listed files `to_read` (positions in `listing`): footers, then the filters of
/// the chosen columns (or builds them), their bitsets put in `spool`; counts the reads into
/// `report` and tells the progress.
async fn read_files(
    root: &Root,
    listing: &[Listed],
    to_read: &[usize],
    options: &BuildOptions,
    spool: &mut Spool,
    report: &mut BuildReport,
) -> Result<GatheredFiles, Error> {
    let source = root.source(
        to_read.iter().map(|&i| &listing[i]),
        SourceOptions {
            concurrency: options.concurrency.max(1),
            ..SourceOptions::default()
        },
    );
    let policy = source.policy();
    let wanted: Arc<Vec<String>> = Arc::new(options.columns.clone());
    let fpp = options.fpp;
    let built = (options.build_missing, options.tighten);
    let mut results = source.run(move |pq| {
        let wanted = Arc::clone(&wanted);
        async move { Ok(gather(pq, &wanted, fpp, built, policy).await) }.boxed()
    });
    let io = io_err;
    let mut gathered: Vec<Option<Result<Gathered<Spooled>, String>>> =
        (0..listing.len()).map(|_| None).collect();
    let mut k = 0;
    let tell = |done: usize| {
        if let Some(p) = &options.progress {
            (p.0)(done, to_read.len());
        }
    };
    tell(0);
    while let Some((_, r)) = results.next().await {
        let li = to_read[k];
        k += 1;
        tell(k);
        report.files_read += 1;
        gathered[li] = Some(match r {
            Ok((mut g, st)) => {
                report.requests += st.requests + g.built.requests;
                report.bytes_read += st.bytes + g.built.bytes;
                report.data_requests += g.built.requests;
                report.data_bytes += g.built.bytes;
                report.filters_built += g.built.filters;
                report.filters_tightened += g.built.tightened;
                let name = &listing[li].name;
                for (rg, col, why) in std::mem::take(&mut g.built.failed) {
                    report
                        .build_failed
                        .push((format!("{name}: row group {rg} `{col}`"), why));
                }
                Ok(g.spool(spool).map_err(io)?)
            }
            Err(e) => Err(e.to_string()),
        });
    }
    Ok(gathered)
}

/// Column path -> per file its type, and the entries (file, row group, folds, bits).
type Col = (BTreeMap<usize, u32>, Vec<(usize, usize, u8, Spooled)>);

/// Per column asked for: whether some readable file has it, whether one has a filter for it,
/// and why the first file without it has none.
type Asked = (bool, bool, Option<sbbf_parquet::Error>);

/// The directory's tables before the groups are written.
struct Tables {
    /// The files, sorted by relative path.
    files: Vec<FileEntry>,
    /// Column types, shared by files.
    types: Vec<ColumnType>,
    /// Per column path: its types and entries.
    cols: BTreeMap<String, Col>,
    /// Per column asked for (`-c`, in order): what the files said of it.
    asked: Vec<Asked>,
}

/// The file table, the types and each column's entries, from what each listed file gave
/// (`gathered`); a local file changed just before the listing (`listed_at`) and not kept
/// is not covered. Counts racy and failed files into `report`.
fn directory_tables(
    listing: &[Listed],
    mut gathered: GatheredFiles,
    read_others: bool,
    listed_at: i64,
    kept_listed: &std::collections::HashSet<usize>,
    options: &BuildOptions,
    report: &mut BuildReport,
) -> Tables {
    let mut files = Vec::with_capacity(listing.len());
    let mut types: Vec<ColumnType> = Vec::new();
    let mut type_ids: HashMap<ColumnTypeKey, u32> = HashMap::new();
    let mut cols: BTreeMap<String, Col> = BTreeMap::new();
    // Listing order is path order already; the index keeps files sorted by relative path.
    let mut order: Vec<usize> = (0..listing.len()).collect();
    order.sort_by(|&a, &b| listing[a].rel.cmp(&listing[b].rel));
    order.dedup_by(|a, b| listing[*a].rel == listing[*b].rel);
    if !read_others {
        order.retain(|li| gathered[*li].is_some());
    }
    // Per column asked for: whether some readable file has it (and a filter for it), and why
    // the first file without it has none.
    let mut asked: Vec<Asked> = options
        .columns
        .iter()
        .map(|_| (false, false, None))
        .collect();
    for &li in &order {
        let l = &listing[li];
        let fi = files.len();
        let mut g = gathered[li].take();
        if let Some(Ok(g)) = g.as_mut() {
            for (k, a) in std::mem::take(&mut g.asked).into_iter().enumerate() {
                let Some(slot) = asked.get_mut(k) else { break };
                match a {
                    Ok((_, filtered)) => {
                        slot.0 = true;
                        slot.1 |= filtered;
                    }
                    Err(e) => {
                        slot.2.get_or_insert(e);
                    }
                }
            }
        }
        // A local file changed shortly before the listing may change again within the same
        // tick of the file system's clock (coarse: milliseconds, FAT 2 s) without its times
        // changing: such a change would be invisible, so the file is not covered (the next
        // update reads it again). The change time is the one to ask: a restore (`cp -p`,
        // `rsync -a`) sets the modification time back but not it.
        // Objects of a store that gives no ETag are never covered: nothing tells a rewrite.
        let recent = match &l.stamp {
            Stamp::Local { ctime_ns, .. } => *ctime_ns > listed_at.saturating_sub(RACY_NS),
            Stamp::Object { etag: None, .. } => true,
            Stamp::Object { .. } => false,
        };
        let racy = !kept_listed.contains(&li) && recent;
        if racy && matches!(g, Some(Ok(_))) {
            report.racy += 1;
        }
        let (row_counts, schema) = match &g {
            Some(Ok(_)) if racy => (None, None),
            Some(Ok(g)) => (Some(g.row_counts.clone()), g.schema),
            Some(Err(e)) => {
                report.failed.push((l.name.clone(), e.clone()));
                (None, None)
            }
            None => (None, None),
        };
        files.push(FileEntry {
            path: l.rel.clone(),
            size: l.size,
            stamp: l.stamp.clone(),
            row_counts,
            schema,
        });
        let Some(Ok(g)) = g else { continue };
        if racy {
            continue;
        }
        for (ty, rgs) in g.columns {
            let key = ColumnTypeKey::of(&ty);
            let next = types.len() as u32;
            let t = *type_ids.entry(key).or_insert_with(|| {
                types.push(ty.clone());
                next
            });
            let col = cols.entry(ty.path.clone()).or_default();
            col.0.insert(fi, t);
            for (rg, f) in rgs.into_iter().enumerate() {
                if let Some((bits, folds)) = f {
                    col.1.push((fi, rg, folds, bits));
                }
            }
        }
    }
    Tables {
        files,
        types,
        cols,
        asked,
    }
}

/// Refuses a build when a column asked for (`columns`) is in no readable file, or has a
/// filter in none (`asked`, in the same order).
fn check_asked_columns(columns: &[String], asked: Vec<Asked>) -> Result<(), Error> {
    for (w, (found, filtered, why)) in columns.iter().zip(asked) {
        if !found {
            return Err(Error::UnknownColumn {
                column: w.clone(),
                source: why.map(Box::new),
            });
        }
        if !filtered {
            return Err(Error::NoFilters { column: w.clone() });
        }
    }
    Ok(())
}

/// How recent a change time must be (before the listing) for the file not to be
/// covered: 2 s, the coarsest clock of a common file system.
const RACY_NS: i64 = 2_000_000_000;

pub(crate) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Entry `e`'s bitset, gathered from the stripes of group `g` in the index bytes `all`
/// (checked whole by the caller).
fn extract(all: &[u8], g: &Group, e: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(g.blocks as usize * 32);
    for j in 0..g.blocks as u64 {
        let s = g.stripe(j);
        let at = s.start as usize + e * 32;
        out.extend_from_slice(&all[at..at + 32]);
    }
    out
}

/// Types are shared between files when every field agrees.
#[derive(Hash, PartialEq, Eq)]
struct ColumnTypeKey(String);

impl ColumnTypeKey {
    fn of(t: &ColumnType) -> ColumnTypeKey {
        ColumnTypeKey(format!("{t:?}"))
    }
}
