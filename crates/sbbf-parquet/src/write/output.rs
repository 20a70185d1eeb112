//! Where a write goes, and how it gets there without losing anything: the checks on input and
//! output, the in-place rules (symbolic links followed, an exclusive lock, no table format's
//! data file, no read-only file or hard link unless forced), and the atomic write itself (a
//! temporary file beside the target, synced, given the original's mode and owner, renamed).
//!
//! Every front end (the `sbbf` command, the Python package) plans its writes here, so the
//! rules and their wording exist once.
//!
//! ```
//! use sbbf_parquet::write::output::{Destination, WritePlan};
//! # let dir = tempfile::tempdir()?;
//! # let input = dir.path().join("in.parquet");
//! # std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet"), &input)?;
//! let out = dir.path().join("out.parquet");
//! let plan = WritePlan::new(&input, &Destination::File { path: out.clone(), force: false })?;
//! assert_eq!(plan.target(), out.as_path());
//! // A table format's data file is never rewritten in place.
//! std::fs::create_dir(dir.path().join("_delta_log"))?;
//! let refused = WritePlan::new(&input, &Destination::InPlace { force: false });
//! assert!(refused.unwrap_err().to_string().contains("Delta"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{Error, WriteError};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where the result of a write goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A new file; an existing one is replaced only with `force`.
    File {
        /// The output path.
        path: PathBuf,
        /// Replace an existing file.
        force: bool,
    },
    /// The input itself (through symbolic links). `force` also replaces a read-only file and
    /// splits a hard link (the other names keep the old contents).
    InPlace {
        /// Replace read-only files and files with several hard links.
        force: bool,
    },
}

/// A table format whose metadata records each data file's size, so a data file rewritten in
/// place no longer matches what the table says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableFormat {
    /// Delta Lake (`_delta_log/` records `size` for every added file).
    Delta,
    /// Apache Iceberg (`metadata/` manifests record `file_size_in_bytes`).
    Iceberg,
    /// Apache Hudi (`.hoodie/` commit metadata records file sizes).
    Hudi,
}

impl std::fmt::Display for TableFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TableFormat::Delta => "Delta",
            TableFormat::Iceberg => "Iceberg",
            TableFormat::Hudi => "Hudi",
        })
    }
}

impl TableFormat {
    /// The metadata folder that marks a table root of this format.
    pub fn marker(self) -> &'static str {
        match self {
            TableFormat::Delta => "_delta_log",
            TableFormat::Iceberg => "metadata",
            TableFormat::Hudi => ".hoodie",
        }
    }
}

/// The table format whose root is `dir` itself, if any: a `_delta_log/` folder (Delta), a
/// `.hoodie/` folder (Hudi), or a `metadata/` folder holding `version-hint.text` or a
/// `*.metadata.json` file (Iceberg).
pub fn table_format_at(dir: &Path) -> Option<TableFormat> {
    if dir.join("_delta_log").is_dir() {
        return Some(TableFormat::Delta);
    }
    if dir.join(".hoodie").is_dir() {
        return Some(TableFormat::Hudi);
    }
    let meta = dir.join("metadata");
    if meta.is_dir() {
        if let Ok(entries) = std::fs::read_dir(&meta) {
            for e in entries.flatten() {
                if names_iceberg_metadata(&e.file_name().to_string_lossy()) {
                    return Some(TableFormat::Iceberg);
                }
            }
        }
    }
    None
}

/// Whether a name in a folder's `metadata/` marks an Iceberg table: a metadata file
/// (`*.metadata.json`) or a version hint (`version-hint.text`). One rule for a local folder
/// ([`table_format_at`]) and a store's listing.
///
/// ```
/// use sbbf_parquet::write::output::names_iceberg_metadata;
/// assert!(names_iceberg_metadata("00003-9c.metadata.json"));
/// assert!(names_iceberg_metadata("version-hint.text"));
/// assert!(!names_iceberg_metadata("snap-1-0-9c.avro"));
/// ```
pub fn names_iceberg_metadata(name: &str) -> bool {
    name.ends_with(".metadata.json") || name == "version-hint.text"
}

/// The nearest folder above `file` (or `file` itself, for a folder) that is a table format's
/// root, and its format.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// std::fs::create_dir_all(dir.path().join("t/.hoodie"))?;
/// std::fs::create_dir_all(dir.path().join("t/2024/01"))?;
/// let (root, format) = sbbf_parquet::write::output::table_root_above(&dir.path().join("t/2024/01/f.parquet")).unwrap();
/// assert_eq!(format, sbbf_parquet::write::output::TableFormat::Hudi);
/// assert!(root.ends_with("t"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn table_root_above(file: &Path) -> Option<(PathBuf, TableFormat)> {
    let abs = std::path::absolute(file).ok()?;
    let start = if abs.is_dir() {
        Some(abs.as_path())
    } else {
        abs.parent()
    };
    let mut dir = start;
    while let Some(d) = dir {
        if let Some(f) = table_format_at(d) {
            return Some((d.to_path_buf(), f));
        }
        dir = d.parent();
    }
    None
}

/// Why a write was refused before anything was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The input does not exist.
    #[error("no such file (the input must exist)")]
    NoInput,
    /// The input is a directory.
    #[error("is a directory; add and resize take one Parquet file")]
    InputIsDirectory,
    /// The input is not a regular file.
    #[error("not a regular file")]
    NotRegular,
    /// The input's metadata could not be read.
    #[error("cannot read the input: {0}")]
    Input(#[source] std::io::Error),
    /// The output exists and `force` was not given.
    #[error("{}: the output file exists", .0.display())]
    OutputExists(PathBuf),
    /// The output is a directory.
    #[error("{}: the output is a directory", .0.display())]
    OutputIsDirectory(PathBuf),
    /// The path could not be resolved through its symbolic links.
    #[error("cannot resolve the path: {0}")]
    Resolve(#[source] std::io::Error),
    /// The file is a data file of a table whose metadata records its size.
    #[error(
        "this file belongs to the {format} table at {} (its {} records each data file's size, \
         so a file rewritten in place would no longer be readable through the table); write \
         a new file instead and let the table commit it in place of this one",
        .root.display(), .format.marker()
    )]
    TableFile {
        /// The table's root folder.
        root: PathBuf,
        /// Its format.
        format: TableFormat,
    },
    /// The file is read-only and `force` was not given.
    #[error("the file is read-only")]
    ReadOnly,
    /// The file has other hard links, which would keep the old contents.
    #[error(
        "the file has {links} hard links; replacing it gives this name a new file and leaves \
         the other names with the old contents"
    )]
    HardLinks {
        /// Its link count.
        links: u64,
    },
    /// Another process holds the lock.
    #[error(
        "another process is writing this file (an in-place add or resize?); try again when it \
         has finished"
    )]
    Busy,
    /// The lock could not be taken.
    #[error("cannot lock the file: {0}")]
    Lock(#[source] std::io::Error),
}

/// A checked write: the file read, the file written (the same one in place, through symbolic
/// links), and for in-place writes the exclusive advisory lock, held until the plan is dropped.
#[derive(Debug)]
pub struct WritePlan {
    input: PathBuf,
    target: PathBuf,
    _lock: Option<File>,
}

impl WritePlan {
    /// Checks `input` and `dest`. In place, the file a symbolic link points to is the one
    /// replaced, and it is refused when a table format's root (Delta, Iceberg, Hudi) lies
    /// above it, when it is read-only or has other hard links (unless forced), or when
    /// another process holds its lock. A lock is taken without waiting: a run that waited
    /// would read a file that has since been replaced.
    pub fn new(input: &Path, dest: &Destination) -> Result<WritePlan, Refusal> {
        let meta = match std::fs::metadata(input) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Refusal::NoInput),
            Err(e) => return Err(Refusal::Input(e)),
            Ok(m) if m.is_dir() => return Err(Refusal::InputIsDirectory),
            Ok(m) if !m.is_file() => return Err(Refusal::NotRegular),
            Ok(m) => m,
        };
        match dest {
            Destination::File { path, force } => {
                if path.is_dir() {
                    return Err(Refusal::OutputIsDirectory(path.clone()));
                }
                if !force && std::fs::symlink_metadata(path).is_ok() {
                    return Err(Refusal::OutputExists(path.clone()));
                }
                Ok(WritePlan {
                    input: input.to_path_buf(),
                    target: path.clone(),
                    _lock: None,
                })
            }
            Destination::InPlace { force } => {
                let real = std::fs::canonicalize(input).map_err(Refusal::Resolve)?;
                if let Some((root, format)) = table_root_above(&real) {
                    return Err(Refusal::TableFile { root, format });
                }
                if !force && meta.permissions().readonly() {
                    return Err(Refusal::ReadOnly);
                }
                #[cfg(unix)]
                {
                    use std::os::unix::fs::MetadataExt;
                    if !force && meta.nlink() > 1 {
                        return Err(Refusal::HardLinks {
                            links: meta.nlink(),
                        });
                    }
                }
                let lock = lock(&real)?;
                Ok(WritePlan {
                    input: real.clone(),
                    target: real,
                    _lock: Some(lock),
                })
            }
        }
    }

    /// The file to read (in place: the file the input's links point to).
    pub fn input(&self) -> &Path {
        &self.input
    }

    /// The file to write.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the input is replaced.
    pub fn in_place(&self) -> bool {
        self._lock.is_some()
    }
}

fn lock(path: &Path) -> Result<File, Refusal> {
    let f = File::open(path).map_err(Refusal::Lock)?;
    match f.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(Refusal::Busy),
        Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
            // No advisory locks on this platform or file system: go on without one.
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(Refusal::Lock(e)),
    }
    // A file replaced between opening and locking it is someone else's fresh result.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let held = f.metadata().map_err(Refusal::Lock)?;
        let now = std::fs::metadata(path).map_err(Refusal::Lock)?;
        if (held.dev(), held.ino()) != (now.dev(), now.ino()) {
            return Err(Refusal::Busy);
        }
    }
    Ok(f)
}

/// This process's writes, for an interrupt handler: the temporary outputs being written now,
/// how many writes have been renamed into place, and whether an interrupt stopped them. One
/// lock covers creating a temporary file, renaming it and [`interrupt`], so a handler sees
/// every write either before its rename (and removes its file) or after it (and counts it).
struct Writes {
    unfinished: Vec<PathBuf>,
    finished: usize,
    stopped: bool,
}

static WRITES: Mutex<Writes> = Mutex::new(Writes {
    unfinished: Vec::new(),
    finished: 0,
    stopped: false,
});

fn writes() -> std::sync::MutexGuard<'static, Writes> {
    match WRITES.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// What [`interrupt`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interrupted {
    /// The temporary outputs of unfinished writes, removed: their targets were not touched.
    pub removed: Vec<PathBuf>,
    /// Writes of this process that had already been renamed into place (complete).
    pub finished: usize,
}

/// Stops this process's writes, for a SIGINT/SIGTERM handler: removes the temporary files of
/// writes in progress, and makes any write that has not been renamed into place yet fail
/// instead ([`WriteError::Interrupted`]). An interrupted write so leaves neither a changed
/// input nor a stray `.sbbf-*.tmp` file (a `kill -9` cannot be caught: it may leave such a
/// file beside the target, which is safe to delete). The answer tells the handler what to say:
/// writes undone, or writes that had finished before the signal came.
pub fn interrupt() -> Interrupted {
    let mut w = writes();
    w.stopped = true;
    let removed = std::mem::take(&mut w.unfinished)
        .into_iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .collect();
    Interrupted {
        removed,
        finished: w.finished,
    }
}

/// Removes the temporary files of writes still in progress, without stopping later writes
/// (an interrupt handler wants [`interrupt`], which also says whether a write had finished).
/// Returns the paths removed.
pub fn remove_unfinished() -> Vec<PathBuf> {
    let paths = std::mem::take(&mut writes().unfinished);
    paths
        .into_iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .collect()
}

#[cfg(test)]
fn track(path: &Path, on: bool) {
    let mut w = writes();
    if on {
        w.unfinished.push(path.to_path_buf());
    } else {
        w.unfinished.retain(|p| p != path);
    }
}

/// An error writing the output that replaces or creates `target`.
pub fn write_err(target: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| {
        WriteError::Io {
            target: target.to_path_buf(),
            source,
        }
        .into()
    }
}

/// Writes the output beside `target` and renames it into place once complete and synced. The
/// output takes the mode and (where the process may set it) the owner and group of `like`,
/// the input: a temporary file starts private and owned by whoever runs the write.
pub fn atomic_write(
    target: &Path,
    like: &Path,
    fill: impl FnOnce(&mut BufWriter<&File>) -> Result<(), Error>,
) -> Result<u64, Error> {
    let dir = dir_of(target);
    let tmp = {
        // Created and recorded under the lock: an interrupt either comes first (and nothing
        // is created) or finds the file.
        let mut w = writes();
        if w.stopped {
            return Err(WriteError::Interrupted.into());
        }
        let tmp = tempfile::Builder::new()
            .prefix(".sbbf-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|source| WriteError::TempFile {
                dir: dir.clone(),
                source,
            })?;
        w.unfinished.push(tmp.path().to_path_buf());
        tmp
    };
    fill_and_persist(tmp, target, like, fill)
}

fn fill_and_persist(
    tmp: tempfile::NamedTempFile,
    target: &Path,
    like: &Path,
    fill: impl FnOnce(&mut BufWriter<&File>) -> Result<(), Error>,
) -> Result<u64, Error> {
    let tmp_path = tmp.path().to_path_buf();
    let io_err = write_err(target);
    let out: Result<u64, Error> = (|| {
        {
            let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
            fill(&mut w)?;
            w.flush().map_err(&io_err)?;
        }
        if let Ok(m) = std::fs::metadata(like) {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                let mine = tmp.as_file().metadata().map_err(&io_err)?;
                if (mine.uid(), mine.gid()) != (m.uid(), m.gid()) {
                    std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid()))
                        .or_else(|e| {
                            // Someone else's file: keep its owner if the process may, else
                            // at least its group; a plain user replacing a file in a folder
                            // they may write takes ownership, as `cp` would.
                            if e.kind() == std::io::ErrorKind::PermissionDenied {
                                let _ =
                                    std::os::unix::fs::fchown(tmp.as_file(), None, Some(m.gid()));
                                Ok(())
                            } else {
                                Err(e)
                            }
                        })
                        .map_err(&io_err)?;
                }
            }
            tmp.as_file()
                .set_permissions(m.permissions())
                .map_err(&io_err)?;
        }
        tmp.as_file().sync_all().map_err(&io_err)?;
        let len = tmp.as_file().metadata().map_err(&io_err)?.len();
        // Renamed under the lock, unless an interrupt came first (it removed the file).
        let mut w = writes();
        if w.stopped {
            return Err(WriteError::Interrupted.into());
        }
        tmp.persist(target).map_err(|e| WriteError::Rename {
            target: target.to_path_buf(),
            source: e.error,
        })?;
        w.unfinished.retain(|p| *p != tmp_path);
        w.finished += 1;
        Ok(len)
    })();
    if out.is_err() {
        // The temporary file was removed when it was dropped.
        writes().unfinished.retain(|p| *p != tmp_path);
    }
    let len = out?;
    // Make the rename itself durable.
    if let Ok(d) = File::open(dir_of(target)) {
        let _ = d.sync_all();
    }
    Ok(len)
}

fn dir_of(target: &Path) -> PathBuf {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_formats_are_found_above_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path();
        std::fs::create_dir_all(t.join("ice/metadata")).unwrap();
        std::fs::create_dir_all(t.join("ice/data/x=1")).unwrap();
        assert_eq!(table_root_above(&t.join("ice/data/x=1/f.parquet")), None);
        std::fs::write(t.join("ice/metadata/v1.metadata.json"), b"{}").unwrap();
        let (root, f) = table_root_above(&t.join("ice/data/x=1/f.parquet")).unwrap();
        assert_eq!(
            (root.as_path(), f),
            (t.join("ice").as_path(), TableFormat::Iceberg)
        );
        std::fs::create_dir_all(t.join("plain/metadata")).unwrap();
        assert_eq!(table_root_above(&t.join("plain/f.parquet")), None);
    }

    #[test]
    fn remove_unfinished_removes_only_what_is_in_progress() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".sbbf-x.tmp");
        std::fs::write(&p, b"partial").unwrap();
        track(&p, true);
        assert_eq!(remove_unfinished(), vec![p.clone()]);
        assert!(!p.exists());
        assert!(remove_unfinished().is_empty());
    }
}
