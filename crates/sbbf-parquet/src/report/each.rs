//! Reports of every file a path names: the multi-file loop of `inspect` and `verify`, once for
//! every front end (the command line, Python).
//!
//! The files are a path — a file, a directory (every `*.parquet` below it), a glob, or an
//! object-store URL (with the `object_store` feature), as [`Source`](crate::source) reads them
//! for probes — or files a caller listed (a lake table's snapshot, in `sbbf-lake`). Local files
//! are read in place; objects are read whole (inspect and verify read most of a file anyway).
//! Each file's report reaches the caller as soon as it is made, in the files' order.

use crate::report::{InspectReport, VerifyReport};
use crate::{Error, KeySet};
use std::path::{Path, PathBuf};

/// The files of a run: what a path names, or what a caller listed.
#[derive(Debug)]
pub enum Files<'a> {
    /// A file, a directory, a glob, or (feature `object_store`) an object-store URL.
    Path(&'a str),
    /// Local files as results name them, each with its path or the error that is its report
    /// (a file a table names that storage lacks).
    Local(Vec<(String, Result<PathBuf, Error>)>),
    /// Objects through a source, each read whole.
    #[cfg(feature = "store")]
    Objects(crate::source::Source),
}

impl<'a> From<&'a str> for Files<'a> {
    fn from(path: &'a str) -> Self {
        Files::Path(path)
    }
}

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

impl Tally {
    /// [`Error::NoFileHasColumn`] for the first asked column that no file has (among several
    /// files).
    pub fn no_file_has_column(&self) -> Option<Error> {
        self.column_in_no_file
            .as_ref()
            .map(|c| Error::NoFileHasColumn {
                column: c.clone(),
                first: None,
            })
    }
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

/// Inspects every file of `files` ([`InspectReport::of`]), calling `each` with each file's
/// report in order; `keys` open encrypted files, `columns` (empty: every column) choose the
/// chunks.
///
/// ```
/// use sbbf_parquet::report::each::inspect_each;
/// # let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");
/// let mut reports = Vec::new();
/// let pattern = format!("{dir}/pa_*.parquet");
/// let tally = inspect_each(pattern.as_str().into(), &Default::default(), &[], |r| {
///     reports.push(r)
/// })?;
/// assert!(tally.many && tally.files == reports.len());
/// assert!(reports.iter().all(|r| r.report.is_ok()));
/// # Ok::<(), sbbf_parquet::Error>(())
/// ```
pub fn inspect_each(
    files: Files<'_>,
    keys: &KeySet,
    columns: &[String],
    each: impl FnMut(FileReport<InspectReport>),
) -> Result<Tally, Error> {
    let remote_columns = columns.to_vec();
    run(
        files,
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

/// Verifies every file of `files` (decodes the chosen columns and
/// tests every stored value, plus `samples` absent ones per chunk), calling `each` with each
/// file's report in order. `progress(file)` gives the `(done, total)` callback of a local
/// file's chunks.
///
/// ```
/// use sbbf_parquet::report::each::verify_each;
/// # let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
/// let mut false_negatives = 0;
/// let tally = verify_each(file.into(), &Default::default(), &[], 100, |_| |_, _| {}, |r| {
///     false_negatives += r.report.map(|r| r.false_negatives).unwrap_or(0)
/// })?;
/// assert_eq!((tally.files, tally.failed, false_negatives), (1, 0, 0));
/// # Ok::<(), sbbf_parquet::Error>(())
/// ```
pub fn verify_each<P: FnMut(usize, usize)>(
    files: Files<'_>,
    keys: &KeySet,
    columns: &[String],
    samples: u64,
    mut progress: impl FnMut(&str) -> P,
    each: impl FnMut(FileReport<VerifyReport>),
) -> Result<Tally, Error> {
    let (remote_columns, remote_keys) = (columns.to_vec(), keys.clone());
    run(
        files,
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
    files: Files<'_>,
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
    let many = match files {
        Files::Local(listed) => {
            for (shown, file) in listed {
                match file {
                    Ok(file) => {
                        let (report, warnings) = local(&shown, &file, true);
                        note(shown, report, warnings);
                    }
                    Err(e) => note(shown, Err(e), Vec::new()),
                }
            }
            true
        }
        #[cfg(feature = "store")]
        Files::Objects(source) => {
            objects_run(source, remote, &mut note)?;
            true
        }
        Files::Path(path) => match remote_run(path, keys, remote, &mut note)? {
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
        },
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

/// The objects of `source`, each read whole and reported by `work` (as one of many).
#[cfg(feature = "store")]
fn objects_run<T, R>(
    source: crate::source::Source,
    work: R,
    note: &mut impl FnMut(String, Result<T, Error>, Vec<String>),
) -> Result<(), Error>
where
    T: Send + 'static,
    R: Fn(&str, crate::ParquetFile<bytes::Bytes>, bool) -> Result<T, Error> + Send + Sync + 'static,
{
    use futures::StreamExt as _;
    crate::source::block_on(async {
        let mut reports = source.run_whole(move |shown, pq| work(shown, pq, true));
        while let Some((file, report)) = reports.next().await {
            note(file, report, Vec::new());
        }
    })
}

/// When `url` is an object-store URL: the objects it names, each read whole and reported by
/// `work`, and whether there are several. `None` for a local path.
#[cfg(feature = "store")]
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

#[cfg(not(feature = "store"))]
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

/// One value's row groups by answer, summed over the files of a probe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValueCounts {
    /// Row groups that may hold the value.
    pub maybe: usize,
    /// Row groups that cannot tell (no usable filter).
    pub unknown: usize,
    /// Row groups that definitely lack it.
    pub absent: usize,
    /// Files with some row group that may hold it or cannot tell.
    pub files_hit: usize,
}

/// How one file's probe result counts in a [`ProbeTally`]: what a front end shows for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Counted {
    /// The file answered; `any_not_absent`: some value may be in some row group of it.
    Answered {
        /// Whether some row group may hold (or cannot rule out) some value.
        any_not_absent: bool,
    },
    /// One of several files, without the column: a result of its own (no row of it can hold
    /// a value of the column), counted among the files.
    WithoutColumn,
    /// A value that does not fit the column's type: the same for every file of that type, so
    /// `first` says whether this is the first file that met this error. Not counted.
    BadValue {
        /// The first file with this message.
        first: bool,
    },
    /// The file could not be probed (unreadable, not Parquet, no keys, ...). Not counted.
    Failed,
}

/// What the files of a multi-file probe add up to: per value, row groups by answer; files
/// without the column; files that failed; the exit status every front end gives. The one
/// place the multi-file probe rule is written (the command line prints it, Python raises by
/// it).
///
/// ```
/// use sbbf_parquet::report::each::{Counted, ProbeTally};
/// use sbbf_parquet::{Error, IoStats};
/// let mut tally = ProbeTally::new("id", 1, true);
/// let missing = Error::UnknownColumn { column: "id".into(), candidates: vec!["idx".into()] };
/// assert_eq!(tally.add_error(&missing), Counted::WithoutColumn);
/// assert_eq!(tally.files, 1);
/// // Every file lacks the column: an error, whatever else happened.
/// assert!(matches!(tally.no_file_has_column(), Some(Error::NoFileHasColumn { .. })));
/// assert_eq!(tally.exit_status(), 2);
/// ```
#[derive(Debug)]
pub struct ProbeTally {
    /// The column asked about, as asked.
    pub column: String,
    /// Several files (a directory, a glob, a prefix): a file without the column is a result.
    pub many: bool,
    /// Files counted: answered or without the column.
    pub files: usize,
    /// Of those, files without the column.
    pub without_column: usize,
    /// Files that could not be probed (not counted in `files`).
    pub unprobed: usize,
    /// Whether some value may be in some row group of some file.
    pub any_not_absent: bool,
    /// Per value, in the order asked.
    pub values: Vec<ValueCounts>,
    /// The reads of every file, summed (waves too).
    pub io: crate::IoStats,
    /// The first file's "no such column" error (column, near misses), for
    /// [`ProbeTally::no_file_has_column`].
    first_missing: Option<(String, Vec<String>)>,
    /// The value errors met so far (their messages).
    bad_values: Vec<String>,
}

impl ProbeTally {
    /// An empty tally of a probe of `column` for `values` values over one file or `many`.
    pub fn new(column: &str, values: usize, many: bool) -> ProbeTally {
        ProbeTally {
            column: column.to_string(),
            many,
            files: 0,
            without_column: 0,
            unprobed: 0,
            any_not_absent: false,
            values: vec![ValueCounts::default(); values],
            io: crate::IoStats::default(),
            first_missing: None,
            bad_values: Vec::new(),
        }
    }

    /// Counts a file's answers (one per row group, each with one answer per value) and the
    /// reads it took.
    pub fn add_answers(
        &mut self,
        answers: &[crate::RowGroupAnswer],
        io: crate::IoStats,
    ) -> Counted {
        use crate::Answer;
        self.files += 1;
        self.io.requests += io.requests;
        self.io.bytes += io.bytes;
        self.io.waves += io.waves;
        let mut any = false;
        let mut hit = vec![false; self.values.len()];
        for rg in answers {
            for (i, ans) in rg.answers.iter().enumerate() {
                let Some(c) = self.values.get_mut(i) else {
                    continue;
                };
                match ans {
                    Answer::Maybe => c.maybe += 1,
                    Answer::Unknown => c.unknown += 1,
                    Answer::Absent => c.absent += 1,
                }
                if *ans != Answer::Absent {
                    any = true;
                    hit[i] = true;
                }
            }
        }
        for (c, h) in self.values.iter_mut().zip(hit) {
            c.files_hit += usize::from(h);
        }
        self.any_not_absent |= any;
        Counted::Answered {
            any_not_absent: any,
        }
    }

    /// Counts a file whose probe failed with `e`: among several files a missing column is a
    /// result of its own, a value that does not fit the column's type is said once, anything
    /// else is that file's failure.
    pub fn add_error(&mut self, e: &Error) -> Counted {
        match e {
            Error::UnknownColumn { column, candidates } if self.many => {
                self.files += 1;
                self.without_column += 1;
                self.first_missing
                    .get_or_insert_with(|| (column.clone(), candidates.clone()));
                Counted::WithoutColumn
            }
            Error::Value(_) => {
                self.unprobed += 1;
                let msg = e.to_string();
                let first = !self.bad_values.contains(&msg);
                if first {
                    self.bad_values.push(msg);
                }
                Counted::BadValue { first }
            }
            _ => {
                self.unprobed += 1;
                Counted::Failed
            }
        }
    }

    /// Row groups with the column (the same for every value).
    pub fn row_groups(&self) -> usize {
        self.values
            .first()
            .map_or(0, |c| c.maybe + c.unknown + c.absent)
    }

    /// [`Error::NoFileHasColumn`] when every counted file lacks the column: an error even
    /// among several files.
    pub fn no_file_has_column(&self) -> Option<Error> {
        (self.without_column > 0 && self.without_column == self.files).then(|| {
            Error::NoFileHasColumn {
                column: self.column.clone(),
                first: self.first_missing.as_ref().map(|(column, candidates)| {
                    Box::new(Error::UnknownColumn {
                        column: column.clone(),
                        candidates: candidates.clone(),
                    })
                }),
            }
        })
    }

    /// The exit status of a probe: 2 when some file could not be probed or no file has the
    /// column, else 0 when some value may be present somewhere, else 1 (every value
    /// definitely absent everywhere).
    pub fn exit_status(&self) -> u8 {
        if self.unprobed > 0 || self.no_file_has_column().is_some() {
            2
        } else if self.any_not_absent {
            0
        } else {
            1
        }
    }
}
