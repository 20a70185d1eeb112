//! `inspect` and `verify` over a path that may be a table: a Delta or Iceberg table's snapshot
//! files (never its folder's), else the files the path names, through `sbbf-parquet`'s one
//! report loop ([`sbbf_parquet::report::each`]).

use crate::LakeError;
use crate::{LakeOptions, Snapshot, Table, TableRef, TableVersion};
use sbbf_parquet::report::{self, FileReport, Files, InspectReport, Tally, VerifyReport};
use sbbf_parquet::source::{block_on, object, SourceOptions};
use sbbf_parquet::{Error, KeySet};
use std::sync::Arc;

/// Inspects every file `at` names as [`report::inspect_each`] does, a table's snapshot files
/// when it is a table ([`Table::open`]) (unless `lake` says to read the folder); gives the tally and the
/// table version read.
///
/// ```
/// use sbbf_lake::each::inspect_each;
/// # let table = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/lake/delta_basic");
/// let mut files = 0;
/// let (tally, version) = inspect_each(table, &Default::default(), &Default::default(), &[], |r| {
///     files += usize::from(r.report.is_ok())
/// })?;
/// assert_eq!(version.map(|v| v.files), Some(files));
/// assert_eq!(tally.files, files);
/// # Ok::<(), sbbf_parquet::Error>(())
/// ```
pub fn inspect_each(
    at: impl Into<TableRef>,
    lake: &LakeOptions,
    keys: &KeySet,
    columns: &[String],
    mut each: impl FnMut(FileReport<InspectReport>),
) -> Result<(Tally, Option<TableVersion>), Error> {
    let table = block_on(Table::open(at, lake))??;
    let (files, snap) = files_of(&table, keys)?;
    let names = Names::of(snap.as_deref(), columns)?;
    let table = snap.as_deref().map(Snapshot::table_version);
    let tally = report::inspect_each(files, keys, &names.asked, |r| each(names.in_report(r)))?;
    Ok((tally, table))
}

/// Verifies every file `at` names as [`report::verify_each`] does, a table's snapshot files
/// when it is a table ([`Table::open`]); gives the tally and the table version read.
pub fn verify_each<P: FnMut(usize, usize)>(
    at: impl Into<TableRef>,
    lake: &LakeOptions,
    keys: &KeySet,
    columns: &[String],
    samples: u64,
    progress: impl FnMut(&str) -> P,
    mut each: impl FnMut(FileReport<VerifyReport>),
) -> Result<(Tally, Option<TableVersion>), Error> {
    let table = block_on(Table::open(at, lake))??;
    let (files, snap) = files_of(&table, keys)?;
    let names = Names::of(snap.as_deref(), columns)?;
    let table = snap.as_deref().map(Snapshot::table_version);
    let tally = report::verify_each(files, keys, &names.asked, samples, progress, |r| {
        each(names.in_report(r))
    })?;
    Ok((tally, table))
}

/// A table's column names against its files' (Delta column mapping's `col-<uuid>`): the
/// columns asked for, as the files name them, and the top-level columns the files name
/// otherwise than the table, to report by the table's names.
struct Names {
    asked: Vec<String>,
    /// What turns a file's column path into the table's (none: not a table).
    table: Option<crate::TableNames>,
}

impl Names {
    fn of(snap: Option<&Snapshot>, columns: &[String]) -> Result<Names, Error> {
        let Some(snap) = snap else {
            return Ok(Names {
                asked: columns.to_vec(),
                table: None,
            });
        };
        let asked = columns
            .iter()
            .map(|c| snap.file_column(c))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Names {
            asked,
            table: Some(snap.names()),
        })
    }

    /// `r` with each column the files name otherwise (Delta column mapping's physical names,
    /// at the top and inside nested columns) renamed to the table's name.
    fn in_report<T: ReportColumns>(&self, mut r: FileReport<T>) -> FileReport<T> {
        let (Ok(report), Some(table)) = (&mut r.report, &self.table) else {
            return r;
        };
        for c in report.columns_mut() {
            if let Some(t) = table.table_column(c) {
                *c = t;
            }
        }
        r
    }
}

/// The column names a per-file report shows: its chunks' and the asked ones the file lacks.
trait ReportColumns {
    fn columns_mut(&mut self) -> Vec<&mut String>;
}

impl ReportColumns for InspectReport {
    fn columns_mut(&mut self) -> Vec<&mut String> {
        let chunks = self.chunks.iter_mut().map(|c| &mut c.column);
        chunks.chain(self.columns_not_in_file.iter_mut()).collect()
    }
}

impl ReportColumns for VerifyReport {
    fn columns_mut(&mut self) -> Vec<&mut String> {
        let chunks = self.chunks.iter_mut().map(|c| &mut c.column);
        chunks.chain(self.columns_not_in_file.iter_mut()).collect()
    }
}

/// The files of `table`: a table's snapshot (a local table's files in place, a file the
/// snapshot names that storage lacks as that file's error naming the table as broken; a
/// remote table's through a source) and the snapshot, or the location itself.
fn files_of<'a>(
    table: &'a Table,
    keys: &KeySet,
) -> Result<(Files<'a>, Option<Arc<Snapshot>>), Error> {
    let Some(snap) = table.snapshot().cloned() else {
        return Ok((Files::Path(table.location()), None));
    };
    if object::is_remote_url(table.location()) {
        let options = SourceOptions {
            keys: keys.clone(),
            ..SourceOptions::default()
        };
        let source = crate::source_of(&snap, options)?;
        return Ok((Files::Objects(source), Some(snap)));
    }
    let listed = crate::local_files(&snap)?
        .into_iter()
        .map(|(shown, file)| {
            let file = match file.exists() {
                true => Ok(file),
                false => Err(LakeError::MissingFile {
                    format: snap.format.name(),
                    table: snap.location.clone(),
                    file: shown.clone(),
                }
                .into()),
            };
            (shown, file)
        })
        .collect();
    Ok((Files::Local(listed), Some(snap)))
}
