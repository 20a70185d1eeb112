//! Writes into a table in a build without the feature `tables`: the table is found and
//! refused ([`LakeError::NotBuilt`]), a path that is no table refused as a build with the
//! feature refuses it. Nothing is read or written.

use super::{Rewrite, TableWrite};
use crate::LakeError;
use crate::TableRef;
use sbbf_parquet::Error;
use std::path::{Path, PathBuf};

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn write_table(
    table: &crate::Table,
    _rewrite: &Rewrite,
    _progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    Err(refuse(table))
}

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn write_part(
    table: &crate::Table,
    _rewrite: &Rewrite,
    _files: &[String],
    _out: &Path,
    _progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    Err(refuse(table))
}

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn commit_parts(table: &crate::Table, _parts: &[PathBuf]) -> Result<TableWrite, Error> {
    Err(refuse(table))
}

fn refuse(table: &crate::Table) -> Error {
    match (table.format(), table.at()) {
        (Some(format), TableRef::Path(arg)) => crate::not_built(arg, format),
        (_, TableRef::Catalog { table, .. }) => crate::not_built(table, crate::Format::Iceberg),
        (None, TableRef::Path(arg)) => LakeError::NotATable { path: arg.clone() }.into(),
    }
}
