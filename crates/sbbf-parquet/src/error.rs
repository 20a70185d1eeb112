//! Errors of the adapter.

use crate::value::ValueError;

/// Why a file could not be probed or inspected at all. Problems with one row group's filter
/// are not errors: they make that row group "unknown" (see [`crate::FilterState`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a Parquet file (too short, bad magic, bad footer length).
    #[error("not a Parquet file: {0}")]
    NotParquet(String),
    /// Modular encryption ("PARE" footer): filters are encrypted too.
    #[error("the file is encrypted (Parquet modular encryption); encrypted Bloom filters are not supported")]
    Encrypted,
    /// The footer could not be decoded.
    #[error("cannot read the Parquet footer: {0}")]
    Footer(String),
    /// Reading bytes failed.
    #[error("read failed: {0}")]
    Read(String),
    /// No leaf column has this path.
    #[error("no column `{column}` in this file; {}", candidates_text(.candidates))]
    UnknownColumn {
        /// What was asked for.
        column: String,
        /// Leaf paths that look related (or all of them).
        candidates: Vec<String>,
    },
    /// A filter could not be built (unsupported type, bad sizing).
    #[error("cannot build a filter: {0}")]
    Build(String),
    /// Writing the output failed.
    #[error("write failed: {0}")]
    Write(String),
    /// The value text does not parse for the column's type.
    #[error(transparent)]
    Value(#[from] ValueError),
}

fn candidates_text(c: &[String]) -> String {
    if c.is_empty() {
        "the file has no leaf columns".to_string()
    } else {
        format!("leaf columns: {}", c.join(", "))
    }
}
