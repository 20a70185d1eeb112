//! The flags every reading command takes for Delta and Iceberg tables, and the line that says
//! which table version was read.

use crate::Format;
use sbbf_parquet::source::{AsOf, LakeOptions, TableVersion};

/// How a Delta Lake or Apache Iceberg table is read (a folder with `_delta_log/`, a
/// `*.metadata.json` file, or a folder with `metadata/`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TableArgs {
    /// Read an older snapshot of a Delta or Iceberg table: a Delta version, an Iceberg
    /// snapshot id, or an RFC 3339 time (2026-12-03T15:00:00Z: the snapshot current then).
    #[arg(long, value_name = "V", value_parser = parse_as_of)]
    pub as_of: Option<AsOf>,
    /// Read a Delta or Iceberg table's folder as plain Parquet files: every file in it,
    /// removed and uncommitted ones included (repair work). By default a table is read as
    /// its snapshot: only the data files its log or metadata names.
    #[arg(long, conflicts_with = "as_of")]
    pub as_directory: bool,
}

fn parse_as_of(s: &str) -> Result<AsOf, String> {
    s.parse().map_err(|e: sbbf_parquet::Error| e.to_string())
}

impl TableArgs {
    /// The library's options.
    pub fn options(&self) -> LakeOptions {
        LakeOptions {
            as_of: self.as_of,
            as_directory: self.as_directory,
        }
    }
}

#[derive(serde::Serialize)]
struct TableLine<'a> {
    table: &'a TableVersion,
}

/// Says which table version was read: in JSON a `{"table": {...}}` line on stdout before the
/// files' lines; in text, with `stats`, a line on stderr.
pub fn say_version(command: &str, table: Option<&TableVersion>, format: Format, stats: bool) {
    let Some(t) = table else {
        return;
    };
    if format == Format::Json {
        out!("{}", crate::to_json(&TableLine { table: t }));
    } else if stats {
        err!("{command}: {}", version_text(t));
    }
}

/// `Delta table events/ version 4 (3 data files)`.
pub fn version_text(t: &TableVersion) -> String {
    let what = match t.format.as_str() {
        "iceberg" => format!("Iceberg table {} snapshot {}", t.location, t.version),
        _ => format!("Delta table {} version {}", t.location, t.version),
    };
    format!("{what} ({} data file(s))", t.files)
}
