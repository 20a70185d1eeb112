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
    /// Several leaf columns fit this path (dots inside field names, or duplicate names).
    #[error(
        "column path `{column}` is ambiguous: it fits {}; write one of these paths (a `.` inside a field name is written `\\.`)",
        quoted(.choices)
    )]
    AmbiguousColumn {
        /// What was asked for.
        column: String,
        /// The leaf paths it fits.
        choices: Vec<String>,
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
    match c {
        [] => "the file has no leaf columns".to_string(),
        [one] => format!("did you mean `{one}`?"),
        _ => format!("leaf columns to choose from: {}", quoted(c)),
    }
}

/// `a`, `b`, ... (at most 20, then how many more).
fn quoted(c: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut text = c
        .iter()
        .take(SHOWN)
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if c.len() > SHOWN {
        text.push_str(&format!(" and {} more", c.len() - SHOWN));
    }
    text
}
