//! Turning a local FILE argument into files: a file, a directory (every `*.parquet` below it),
//! or a glob.

use crate::{NoFilesReason, ReadError};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The files one local FILE argument names, sorted; an error names what could not be found.
/// A directory is walked following symbolic links, but a link back to a directory being
/// walked (a loop) is not entered, and a file reached by several paths is visited once (under
/// its first path in sorted order). Below a directory, files and folders whose names start
/// with `_` or `.` are no part of it ([`is_hidden_name`]); a file or glob names what it names.
///
/// ```
/// # let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/conformance");
/// let files = sbbf_parquet::source::local_files(dir)?;
/// assert!(files.iter().all(|f| f.extension().is_some_and(|e| e == "parquet")));
/// assert!(sbbf_parquet::source::local_files("no/such/place").is_err());
/// # Ok::<(), sbbf_parquet::ReadError>(())
/// ```
pub fn local_files(arg: &str) -> Result<Vec<PathBuf>, ReadError> {
    let fail = |reason: NoFilesReason| ReadError::NoFiles {
        location: arg.to_string(),
        reason,
    };
    let path = Path::new(arg);
    if path.is_dir() {
        let out = walk(path).map_err(|e| fail(NoFilesReason::Walk(e)))?;
        if out.is_empty() {
            return Err(fail(NoFilesReason::EmptyDirectory));
        }
        return Ok(out);
    }
    if path.exists() {
        return Ok(vec![path.to_path_buf()]);
    }
    if arg.contains(['*', '?', '[']) {
        let mut out: Vec<PathBuf> = glob::glob(arg)
            .map_err(|e| fail(NoFilesReason::BadGlob(e)))?
            .filter_map(Result::ok)
            .filter(|p| p.is_file())
            .collect();
        out.sort();
        let out = once_each(out);
        if out.is_empty() {
            return Err(fail(NoFilesReason::NoMatch));
        }
        return Ok(out);
    }
    Err(fail(NoFilesReason::NotFound))
}

/// Whether a file or folder named `name`, below a table's root, is no part of the table: a
/// name starting with `_` or `.`, as Spark, Hive and pyarrow's datasets read a folder (a
/// job's output in flight under `_temporary/`, `_SUCCESS`, `_delta_log/`, `.hidden` files,
/// the table index's `_sbbf_index/`).
///
/// ```
/// use sbbf_parquet::source::is_hidden_name;
/// assert!(is_hidden_name("_temporary") && is_hidden_name(".part-0.parquet.crc"));
/// assert!(!is_hidden_name("part-0.parquet") && !is_hidden_name("year=2024"));
/// ```
pub fn is_hidden_name(name: &str) -> bool {
    name.starts_with(['_', '.'])
}

/// Whether `e`, or an error it wraps (its `source()` chain), is a directory walk that met a
/// symbolic link back to a directory it is walking (walkdir's loop error): how `object_store`'s
/// local store, and so DataFusion's listing of a local directory, fails on a loop, which
/// [`local_files`] walks around.
pub fn is_fs_loop(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.downcast_ref::<walkdir::Error>()
            .is_some_and(|w| w.loop_ancestor().is_some())
        {
            return true;
        }
        next = e.source();
    }
    false
}

fn is_parquet(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>, walkdir::Error> {
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        // The root is what the user named, whatever its name; below it, hidden names are
        // left out with everything under them.
        .filter_entry(|e| e.depth() == 0 || !is_hidden_name(&e.file_name().to_string_lossy()));
    for entry in walk {
        match entry {
            Ok(e) => {
                if e.file_type().is_file() && is_parquet(e.path()) {
                    out.push(e.into_path());
                }
            }
            // A link to a directory above it: everything below was or will be visited.
            Err(e) if e.loop_ancestor().is_some() => {}
            // A `*.parquet` link to nothing: listed, so that opening it fails as one file's
            // error while every other file is read (a walk that stopped here would lose them).
            Err(e)
                if e.path()
                    .is_some_and(|p| is_parquet(p) && p.symlink_metadata().is_ok()) =>
            {
                if let Some(p) = e.path() {
                    out.push(p.to_path_buf());
                }
            }
            Err(e) => return Err(e),
        }
    }
    out.sort();
    Ok(once_each(out))
}

/// Drops paths that name a file already in the list (through links).
fn once_each(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())))
        .collect()
}
