//! `inspect` and `verify` over a path that may be a table: a Delta or Iceberg table's snapshot
//! files (never its folder's), else the files the path names, through `sbbf-parquet`'s one
//! report loop ([`sbbf_parquet::report::each`]).

use crate::{LakeOptions, TableVersion};
use sbbf_parquet::report::{self, FileReport, Files, InspectReport, Tally, VerifyReport};
use sbbf_parquet::source::{block_on, object, SourceOptions};
use sbbf_parquet::{Error, KeySet, LakeError};

/// Inspects every file of `path` as [`report::inspect_each`] does, a table's snapshot files
/// when `path` is a table (unless `lake` says to read the folder); gives the tally and the
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
    path: &str,
    lake: &LakeOptions,
    keys: &KeySet,
    columns: &[String],
    each: impl FnMut(FileReport<InspectReport>),
) -> Result<(Tally, Option<TableVersion>), Error> {
    let (files, table) = files_of(path, lake, keys)?;
    Ok((report::inspect_each(files, keys, columns, each)?, table))
}

/// Verifies every file of `path` as [`report::verify_each`] does, a table's snapshot files
/// when `path` is a table; gives the tally and the table version read.
pub fn verify_each<P: FnMut(usize, usize)>(
    path: &str,
    lake: &LakeOptions,
    keys: &KeySet,
    columns: &[String],
    samples: u64,
    progress: impl FnMut(&str) -> P,
    each: impl FnMut(FileReport<VerifyReport>),
) -> Result<(Tally, Option<TableVersion>), Error> {
    let (files, table) = files_of(path, lake, keys)?;
    let tally = report::verify_each(files, keys, columns, samples, progress, each)?;
    Ok((tally, table))
}

/// The files of `path`: a table's snapshot (a local table's files in place, a file the
/// snapshot names that storage lacks as that file's error naming the table as broken; a
/// remote table's through a source) and its version, or the path itself.
fn files_of<'a>(
    path: &'a str,
    lake: &LakeOptions,
    keys: &KeySet,
) -> Result<(Files<'a>, Option<TableVersion>), Error> {
    let Some(snap) = block_on(crate::snapshot(path, lake))?? else {
        return Ok((Files::Path(path), None));
    };
    let version = snap.table_version();
    if object::is_remote_url(path) {
        let options = SourceOptions {
            keys: keys.clone(),
            ..SourceOptions::default()
        };
        return Ok((
            Files::Objects(crate::source_of(&snap, options)?),
            Some(version),
        ));
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
    Ok((Files::Local(listed), Some(version)))
}
