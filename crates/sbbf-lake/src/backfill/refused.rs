//! Writes into a table in a build without the feature `tables`: the table is found and
//! refused ([`LakeError::NotBuilt`]), a path that is no table refused as a build with the
//! feature refuses it. Nothing is read or written.

use super::{Rewrite, TableAt, TableWrite};
use sbbf_parquet::{Error, LakeError};
use std::path::{Path, PathBuf};

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn write_table(
    at: impl Into<TableAt>,
    _rewrite: &Rewrite,
    _progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    Err(refuse(at.into()).await)
}

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn write_part(
    at: impl Into<TableAt>,
    _rewrite: &Rewrite,
    _files: &[String],
    _out: &Path,
    _progress: &mut (dyn FnMut(usize, usize) + Send),
) -> Result<TableWrite, Error> {
    Err(refuse(at.into()).await)
}

/// Refused: this build reads no table ([`LakeError::NotBuilt`]).
pub async fn commit_parts(at: impl Into<TableAt>, _parts: &[PathBuf]) -> Result<TableWrite, Error> {
    Err(refuse(at.into()).await)
}

async fn refuse(at: TableAt) -> Error {
    match at {
        TableAt::Catalog { table, .. } => crate::not_built(&table, crate::Format::Iceberg),
        TableAt::Path(arg) => match crate::detect(&arg).await {
            Ok(Some(format)) => crate::not_built(&arg, format),
            Ok(None) => LakeError::NotATable { path: arg }.into(),
            Err(e) => e,
        },
    }
}
