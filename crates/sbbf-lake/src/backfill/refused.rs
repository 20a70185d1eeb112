//! Writes into a table in a build without the feature `tables`: the table is found and
//! refused ([`LakeError::NotBuilt`]), a path that is no table refused as a build with the
//! feature refuses it. Nothing is read or written.

use super::{Rewrite, TableWrite};
use crate::TableRef;
use sbbf_parquet::{Error, LakeError};
use std::path::{Path, PathBuf};

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn write_table(
    at: impl Into<TableRef>,
    _rewrite: &Rewrite,
    _progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    Err(refuse(at.into()).await)
}

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn write_part(
    at: impl Into<TableRef>,
    _rewrite: &Rewrite,
    _files: &[String],
    _out: &Path,
    _progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    Err(refuse(at.into()).await)
}

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn commit_parts(
    at: impl Into<TableRef>,
    _parts: &[PathBuf],
) -> Result<TableWrite, Error> {
    Err(refuse(at.into()).await)
}

async fn refuse(at: TableRef) -> Error {
    match at {
        TableRef::Catalog { table, .. } => crate::not_built(&table, crate::Format::Iceberg),
        TableRef::Path(arg) => {
            match crate::Table::locate(arg.as_str(), &Default::default()).await {
                Ok(t) => match t.format() {
                    Some(format) => crate::not_built(&arg, format),
                    None => LakeError::NotATable { path: arg }.into(),
                },
                Err(e) => e,
            }
        }
    }
}
