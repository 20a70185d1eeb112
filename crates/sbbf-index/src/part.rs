//! Building an index in pieces: each worker (a Spark task, a shell job) builds a **part**, the
//! index of the files it was given; one last step merges the parts into the table's index.
//!
//! A part is a complete index of its files (the format of `docs/index-format.md`, its own
//! checksums) followed by a **manifest**: the table root, the columns and FPP target it was
//! built with, and the files it was given. The manifest is what [`merge`] checks parts
//! against each other with: the same root, columns and target; no file given to two parts.
//! A part's own trailer names it (`SBBFPRT\0`), so a part copied over an index is foreign
//! there and ignored, never read as one.
//! The part's own bytes (manifest and trailer) are the format module's
//! ([`crate::format::Manifest`]); this module builds, reads and merges parts.
//!
//! Merging reads no data file: it lists the root once and takes each part's entries of files
//! that are still as the part saw them. A file changed since its part was built, or given to
//! no part, is left out of the merged index: probes read it directly, and `sbbf index update`
//! reads it (and only it).
//!
//! ```no_run
//! # async fn demo() -> Result<(), sbbf_index::Error> {
//! use sbbf_index::build::BuildOptions;
//! use sbbf_index::part::{build_part, merge};
//! use sbbf_index::Root;
//! let root = Root::open("events/")?.expect("a directory is a table root");
//! let options = BuildOptions::default();
//! // On two workers: half of the files each.
//! build_part(&root, &["a.parquet".into()], &options, "a.sbbfpart".as_ref()).await?;
//! build_part(&root, &["b.parquet".into()], &options, "b.sbbfpart".as_ref()).await?;
//! // Then once:
//! let report = merge(&root, &["a.sbbfpart".into(), "b.sbbfpart".into()]).await?;
//! println!("{} files covered", report.files_covered);
//! # Ok(()) }
//! ```

use crate::build::{assemble, BuildOptions, Prepared, Sink};
use crate::format::{self, Manifest};
use crate::report::{BuildReport, MergeReport};
use crate::table::{check_whole, is_fresh, Root};
use crate::{Error, IndexError, PartMismatch};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The largest part a merge reads (parts are read whole: they hold filters only).
const MAX_PART: u64 = 16 << 30;

/// A part read from its bytes, every checksum verified.
#[derive(Debug, Clone)]
pub struct Part {
    /// What it says of itself.
    pub manifest: Manifest,
    /// Its index, checked whole.
    pub loaded: crate::table::WholeIndex,
    /// The index's bytes.
    pub bytes: bytes::Bytes,
}

/// Reads and checks a part's bytes: the part trailer and manifest, then the embedded index as
/// a whole-index read checks one (header, trailer, directory and every group's CRC).
pub fn parse_part(all: bytes::Bytes) -> Result<Part, IndexError> {
    let (manifest, index_len) = format::split_part(&all)?;
    let bytes = all.slice(..index_len as usize);
    let loaded = check_whole(&bytes)?;
    // The index holds exactly files the part was given.
    let given: BTreeSet<&str> = manifest.files.iter().map(String::as_str).collect();
    if let Some(f) = loaded
        .directory
        .files
        .iter()
        .find(|f| !given.contains(f.path.as_str()))
    {
        return Err(IndexError::Damaged(format!(
            "the part's index holds {}, which its manifest does not list",
            f.path
        )));
    }
    Ok(Part {
        manifest,
        loaded,
        bytes,
    })
}

/// Builds the part of the index of `root` that covers `files` (paths relative to the root,
/// `/`-separated, as `sbbf index build` records them) and writes it to `out` (atomically:
/// a temporary name beside it, then a rename).
///
/// The root is listed (as a build lists it) to learn each file's size, inode and times or
/// ETag as a listing shows them: those are what a probe compares. A named file the
/// listing does not show is an error.
pub async fn build_part(
    root: &Root,
    files: &[String],
    options: &BuildOptions,
    out: &Path,
) -> Result<BuildReport, Error> {
    crate::build::check_options(options)?;
    let given: BTreeSet<String> = files
        .iter()
        .map(|f| f.trim_start_matches("./").to_string())
        .collect();
    if given.is_empty() {
        return Err(Error::Invalid(
            "a part needs at least one file (the list is empty)".into(),
        ));
    }
    let listed_at = crate::build::now_ns();
    let (mut listing, table) = root.list_lake().await?;
    listing.retain(|l| given.contains(&l.rel));
    if listing.len() != given.len() {
        let listed: BTreeSet<&str> = listing.iter().map(|l| l.rel.as_str()).collect();
        let absent: Vec<&str> = given
            .iter()
            .map(String::as_str)
            .filter(|f| !listed.contains(f))
            .take(5)
            .collect();
        return Err(Error::Invalid(format!(
            "not data files of {} (give paths relative to the root, as the index lists them): {}",
            root_arg(root),
            absent.join(", ")
        )));
    }
    let mut columns = options.columns.clone();
    columns.sort();
    columns.dedup();
    let manifest = Manifest {
        root: root_arg(root),
        explicit_columns: !columns.is_empty(),
        columns,
        target_fpp: options.fpp,
        files: given.into_iter().collect(),
    };
    let mut pre = Prepared::new().map_err(crate::build::io_err)?;
    pre.table = crate::build::table_at(table.as_deref()).await;
    let sink = Sink::Part {
        out: out.to_path_buf(),
        manifest: manifest.encode(),
    };
    assemble(root, listing, listed_at, pre, options, sink).await
}

fn root_arg(root: &Root) -> String {
    match root {
        Root::Local { arg, .. } => arg.clone(),
        Root::Store { url, .. } => url.clone(),
    }
}

/// Why parts cannot be merged: the first difference found, naming the parts.
fn refuse(why: String) -> Error {
    Error::Invalid(format!("parts refused: {why}"))
}

/// Merges the parts at `parts` (local files) into the index of `root`, written atomically
/// under it as `sbbf index build` writes one.
///
/// Every part is checked whole first, and the parts against each other: the same root,
/// columns and FPP target, and no file given to two parts; any mismatch refuses the merge
/// (nothing is written) with the reason. The root is listed once: files changed since their
/// part was built, and files no part covers, are left out (probes read them directly; `sbbf
/// index update` reads only them); files gone are dropped.
pub async fn merge(root: &Root, parts: &[PathBuf]) -> Result<MergeReport, Error> {
    if parts.is_empty() {
        return Err(Error::Invalid("no parts to merge".into()));
    }
    let _writer = root.lock_writer()?;
    let listed_at = crate::build::now_ns();
    let listing = root.list_lake();
    let mut read: Vec<Part> = Vec::with_capacity(parts.len());
    let mut part_bytes = 0u64;
    for p in parts {
        let all = read_local(p)?;
        part_bytes += all.len() as u64;
        let part = parse_part(all).map_err(|e| match e {
            IndexError::Foreign => refuse(format!("{}: not an sbbf index part", p.display())),
            e => refuse(format!("{}: {e}", p.display())),
        })?;
        read.push(part);
    }
    let first = read[0].manifest.clone();
    for (p, part) in parts.iter().zip(&read).skip(1) {
        let m = &part.manifest;
        let (a, b) = (parts[0].display(), p.display());
        let differ = |mismatch| Error::PartsDiffer {
            first: a.to_string(),
            other: b.to_string(),
            mismatch,
        };
        if m.root != first.root {
            return Err(differ(PartMismatch::Root(
                first.root.clone(),
                m.root.clone(),
            )));
        }
        if m.explicit_columns != first.explicit_columns || m.columns != first.columns {
            let cols = |m: &Manifest| m.explicit_columns.then(|| m.columns.clone());
            return Err(differ(PartMismatch::Columns(cols(&first), cols(m))));
        }
        if m.target_fpp.map(f64::to_bits) != first.target_fpp.map(f64::to_bits) {
            return Err(differ(PartMismatch::Fpp(first.target_fpp, m.target_fpp)));
        }
    }
    // Paths in a part are relative to its root: entries of another table's files must not
    // be taken for this one's, even where names agree.
    let here = root_arg(root);
    if first.root.trim_end_matches('/') != here.trim_end_matches('/') {
        return Err(refuse(format!(
            "{} was built for the root {}, not {here}",
            parts[0].display(),
            first.root
        )));
    }
    let mut owner: HashMap<&str, usize> = HashMap::new();
    for (k, part) in read.iter().enumerate() {
        for f in &part.manifest.files {
            if let Some(o) = owner.insert(f.as_str(), k) {
                return Err(refuse(format!(
                    "{f} is in both {} and {}",
                    parts[o].display(),
                    parts[k].display()
                )));
            }
        }
    }
    let (listing, table) = listing.await?;
    let by_rel: HashMap<&str, usize> = listing
        .iter()
        .enumerate()
        .map(|(i, l)| (l.rel.as_str(), i))
        .collect();
    let mut report = MergeReport {
        index: root.index_location(),
        parts: parts.len(),
        part_bytes,
        files_listed: listing.len(),
        ..MergeReport::default()
    };
    // Per part: index file -> listed file, for the files still as the part saw them.
    let mut kept: Vec<HashMap<usize, usize>> = Vec::with_capacity(read.len());
    let mut seen_listed = 0usize;
    for part in &read {
        let d = &part.loaded.directory;
        let mut k = HashMap::new();
        let in_index = d.by_path();
        for f in &part.manifest.files {
            let Some(&li) = by_rel.get(f.as_str()) else {
                report.files_gone += 1;
                continue;
            };
            seen_listed += 1;
            match in_index.get(f.as_str()) {
                Some(&fi) if is_fresh(&d.files[fi], &listing[li]) => {
                    if d.files[fi].row_counts.is_some() {
                        k.insert(fi, li);
                    } else {
                        // Unreadable, or modified just before its part's listing.
                        report.files_not_covered += 1;
                    }
                }
                _ => report.files_stale += 1,
            }
        }
        kept.push(k);
    }
    if seen_listed == 0 && !listing.is_empty() {
        return Err(refuse(format!(
            "no file the parts cover is listed under {}: parts of another table?",
            root_arg(root)
        )));
    }
    report.files_missing = listing.len() - seen_listed;
    let mut pre = Prepared::new().map_err(crate::build::io_err)?;
    for (part, k) in read.iter().zip(&kept) {
        pre.take_from(&part.loaded.directory, &part.bytes, k)
            .map_err(crate::build::io_err)?;
        report.files_covered += k.len();
    }
    pre.read_others = false;
    pre.table = crate::build::table_at(table.as_deref()).await;
    drop(read);
    let options = BuildOptions {
        columns: first.columns.clone(),
        fpp: first.target_fpp,
        ..BuildOptions::default()
    };
    let built = assemble(root, listing, listed_at, pre, &options, Sink::Root).await?;
    report.index_bytes = built.index_bytes;
    report.columns = built.columns;
    Ok(report)
}

fn read_local(p: &Path) -> Result<bytes::Bytes, Error> {
    let io = |source| Error::Io {
        what: format!("reading the part {}", p.display()),
        source,
    };
    let len = std::fs::metadata(p).map_err(io)?.len();
    if len > MAX_PART {
        return Err(refuse(format!(
            "{}: {len} bytes is larger than a part can be",
            p.display()
        )));
    }
    Ok(bytes::Bytes::from(std::fs::read(p).map_err(io)?))
}
