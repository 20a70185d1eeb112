//! Reports of every file a path names: the multi-file loop of `inspect` and `verify`, once for
//! every front end (the command line, Python).
//!
//! A path is a file, a directory (every `*.parquet` below it), a glob, or an object-store URL
//! (with the `object_store` feature), as [`Source`](crate::source) reads them for probes. Local
//! files are read in place; objects are read whole (inspect and verify read most of a file
//! anyway). Each file's report reaches the caller as soon as it is made, in the path's order.

use crate::report::{InspectReport, VerifyReport};
use crate::{Error, KeySet};
use std::path::Path;

/// One file's report in a run over the files of a path.
#[derive(Debug)]
pub struct FileReport<T> {
    /// The file as results name it: a local path as displayed, or an object's URL.
    pub file: String,
    /// Its report, or why there is none.
    pub report: Result<T, Error>,
    /// What is worth saying about a file that has no report: plaintext filter headers found
    /// in an encrypted file whose footer could not be opened (they may reveal an encrypted
    /// column's values).
    pub warnings: Vec<String>,
}

/// What a run over the files of a path found, beside each file's report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Whether the path names several files (a directory, a glob, a prefix): then a file
    /// without an asked column is a report of its own rather than an error.
    pub many: bool,
    /// Files reported.
    pub files: usize,
    /// Files without a report (unreadable, not Parquet, no keys, ...).
    pub failed: usize,
    /// The first asked column that no file has, among several files (with one file, a missing
    /// column is that file's error).
    pub column_in_no_file: Option<String>,
}

/// What the asked columns of a file's report are missing.
trait MissingColumns {
    fn columns_not_in_file(&self) -> &[String];
}

impl MissingColumns for InspectReport {
    fn columns_not_in_file(&self) -> &[String] {
        &self.columns_not_in_file
    }
}

impl MissingColumns for VerifyReport {
    fn columns_not_in_file(&self) -> &[String] {
        &self.columns_not_in_file
    }
}

/// Inspects every file `path` names ([`InspectReport::of`]), calling `each` with each file's
/// report in order; `keys` open encrypted files, `columns` (empty: every column) choose the
/// chunks.
///
/// ```
/// use sbbf_parquet::report::each::inspect_each;
/// # let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");
/// let mut reports = Vec::new();
/// let tally = inspect_each(&format!("{dir}/pa_*.parquet"), &Default::default(), &[], |r| {
///     reports.push(r)
/// })?;
/// assert!(tally.many && tally.files == reports.len());
/// assert!(reports.iter().all(|r| r.report.is_ok()));
/// # Ok::<(), sbbf_parquet::Error>(())
/// ```
pub fn inspect_each(
    path: &str,
    keys: &KeySet,
    columns: &[String],
    each: impl FnMut(FileReport<InspectReport>),
) -> Result<Tally, Error> {
    let remote_columns = columns.to_vec();
    run(
        path,
        keys,
        columns,
        |shown, file, many| {
            let report = InspectReport::of_file(shown, file, keys, columns, many);
            let warnings = match &report {
                Err(Error::Encrypted) => stray_headers_unopened(file),
                _ => Vec::new(),
            };
            (report, warnings)
        },
        move |shown, pq, many| InspectReport::of(shown, &pq, &remote_columns, many),
        each,
    )
}

/// Verifies every file `path` names (decodes the chosen columns and
/// tests every stored value, plus `samples` absent ones per chunk), calling `each` with each
/// file's report in order. `progress(file)` gives the `(done, total)` callback of a local
/// file's chunks.
///
/// ```
/// use sbbf_parquet::report::each::verify_each;
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
/// let mut false_negatives = 0;
/// let tally = verify_each(file, &Default::default(), &[], 100, |_| |_, _| {}, |r| {
///     false_negatives += r.report.map(|r| r.false_negatives).unwrap_or(0)
/// })?;
/// assert_eq!((tally.files, tally.failed, false_negatives), (1, 0, 0));
/// # Ok::<(), sbbf_parquet::Error>(())
/// ```
pub fn verify_each<P: FnMut(usize, usize)>(
    path: &str,
    keys: &KeySet,
    columns: &[String],
    samples: u64,
    mut progress: impl FnMut(&str) -> P,
    each: impl FnMut(FileReport<VerifyReport>),
) -> Result<Tally, Error> {
    let (remote_columns, remote_keys) = (columns.to_vec(), keys.clone());
    run(
        path,
        keys,
        columns,
        |shown, file, many| {
            let bar = progress(shown);
            let report = VerifyReport::of_file(shown, file, keys, columns, many, samples, bar);
            (report, Vec::new())
        },
        move |shown, pq, many| {
            let bytes = pq.reader().clone();
            let (keys, columns) = (&remote_keys, &remote_columns);
            VerifyReport::of_bytes(shown, bytes, keys, columns, many, samples, |_, _| {})
        },
        each,
    )
}

/// The loop both reports share: local files one after the other, objects through the source.
fn run<T, L, R>(
    path: &str,
    keys: &KeySet,
    columns: &[String],
    mut local: L,
    remote: R,
    mut each: impl FnMut(FileReport<T>),
) -> Result<Tally, Error>
where
    T: MissingColumns + Send + 'static,
    L: FnMut(&str, &Path, bool) -> (Result<T, Error>, Vec<String>),
    R: Fn(&str, crate::ParquetFile<bytes::Bytes>, bool) -> Result<T, Error> + Send + Sync + 'static,
{
    let mut tally = Tally::default();
    let mut found = vec![false; columns.len()];
    let mut note = |file: String, report: Result<T, Error>, warnings: Vec<String>| {
        tally.files += 1;
        match &report {
            Ok(r) => {
                for (c, seen) in columns.iter().zip(found.iter_mut()) {
                    *seen |= !r.columns_not_in_file().contains(c);
                }
            }
            Err(_) => tally.failed += 1,
        }
        each(FileReport {
            file,
            report,
            warnings,
        });
    };
    let many = match remote_run(path, keys, remote, &mut note)? {
        Some(many) => many,
        None => {
            let paths = crate::source::local_files(path)?;
            let many = paths.len() > 1;
            for file in &paths {
                let shown = file.display().to_string();
                let (report, warnings) = local(&shown, file, many);
                note(shown, report, warnings);
            }
            many
        }
    };
    tally.many = many;
    if many {
        tally.column_in_no_file = columns
            .iter()
            .zip(&found)
            .find(|(_, seen)| !**seen)
            .map(|(c, _)| c.clone());
    }
    Ok(tally)
}

/// When `url` is an object-store URL: the objects it names, each read whole and reported by
/// `work`, and whether there are several. `None` for a local path.
#[cfg(feature = "object_store")]
fn remote_run<T, R>(
    url: &str,
    keys: &KeySet,
    work: R,
    note: &mut impl FnMut(String, Result<T, Error>, Vec<String>),
) -> Result<Option<bool>, Error>
where
    T: Send + 'static,
    R: Fn(&str, crate::ParquetFile<bytes::Bytes>, bool) -> Result<T, Error> + Send + Sync + 'static,
{
    use crate::source::{block_on, Source, SourceOptions};
    use futures::StreamExt as _;
    if !crate::source::object::is_remote_url(url) {
        return Ok(None);
    }
    block_on(async {
        let options = SourceOptions {
            keys: keys.clone(),
            ..SourceOptions::default()
        };
        let source = Source::open(url, options).await?;
        let many = source.is_many();
        let mut reports = source.run_whole(move |shown, pq| work(shown, pq, many));
        while let Some((file, report)) = reports.next().await {
            note(file, report, Vec::new());
        }
        Ok(Some(many))
    })?
}

#[cfg(not(feature = "object_store"))]
fn remote_run<T, R>(
    _: &str,
    _: &KeySet,
    _: R,
    _: &mut impl FnMut(String, Result<T, Error>, Vec<String>),
) -> Result<Option<bool>, Error> {
    // Without object stores every path is local.
    Ok(None)
}

/// The stray plaintext filter headers of a local file whose footer cannot be read (encrypted,
/// no footer key): the whole data area is scanned.
#[cfg(feature = "encryption")]
fn stray_headers_unopened(path: &Path) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return Vec::new();
    };
    let mut tail = [0u8; 8];
    let read_tail = |mut f: &std::fs::File, tail: &mut [u8; 8]| {
        use std::io::{Read, Seek, SeekFrom};
        f.seek(SeekFrom::Start(len - 8))?;
        f.read_exact(tail)
    };
    if len < 12 || read_tail(&file, &mut tail).is_err() {
        return Vec::new();
    }
    let footer_len = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    let Some(footer_start) = len.checked_sub(8 + footer_len) else {
        return Vec::new();
    };
    match crate::crypto::scan_data_area(&file, footer_start) {
        Ok(found) => found
            .iter()
            .map(|h| {
                format!(
                    "plaintext Bloom filter header at offset {} ({}-byte bitset); the footer is \
                     encrypted, so its column is not known: if it is an encrypted column's, it \
                     reveals that column's values",
                    h.offset, h.num_bytes
                )
            })
            .collect(),
        Err(e) => vec![format!("cannot scan for plaintext filter headers: {e}")],
    }
}

#[cfg(not(feature = "encryption"))]
fn stray_headers_unopened(_: &Path) -> Vec<String> {
    Vec::new()
}
