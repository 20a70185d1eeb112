//! The flags every reading command takes for Delta and Iceberg tables, and the line that says
//! which table version was read.

use crate::Format;
use sbbf_lake::catalog::Catalog;
use sbbf_lake::{AsOf, LakeOptions, TableRef, TableVersion};

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
    /// Read PATH as an Iceberg table named NAMESPACE.TABLE in this catalog, the authority on
    /// its current metadata: `sqlite:///PATH` (a SQL catalog in SQLite, as pyiceberg's
    /// SqlCatalog and Java's JdbcCatalog write it) or `http(s)://HOST/...` (a REST catalog;
    /// a bearer token from SBBF_CATALOG_TOKEN).
    #[arg(long, value_name = "URI", conflicts_with = "as_directory")]
    pub catalog: Option<String>,
    /// Which catalog of several in one SQL database (its `catalog_name`); for a REST
    /// catalog, the warehouse to ask for.
    #[arg(long, value_name = "NAME", requires = "catalog")]
    pub catalog_name: Option<String>,
}

fn parse_as_of(s: &str) -> Result<AsOf, String> {
    s.parse().map_err(|e: sbbf_parquet::Error| e.to_string())
}

impl TableArgs {
    /// PATH as the library takes a location: `NAMESPACE.TABLE` of `--catalog`, else a path
    /// or URL (a `file://` URL as its path).
    pub fn table_ref(&self, path: &str) -> Result<TableRef, sbbf_parquet::Error> {
        let catalog = self
            .catalog
            .as_deref()
            .map(|uri| Catalog::new(uri, self.catalog_name.as_deref()));
        TableRef::new(path, catalog)
    }

    /// What the library reads for PATH (`query`, which registers its stores first) ([`sbbf_lake::Table::locate`]): with `--catalog`, the
    /// current metadata file of the table PATH names; else PATH (a `file://` URL as its path).
    #[cfg_attr(not(feature = "query"), allow(dead_code))]
    pub async fn location(&self, path: &str) -> Result<String, sbbf_parquet::Error> {
        let table = sbbf_lake::Table::locate(self.table_ref(path)?, &self.options()).await?;
        Ok(table.location().to_string())
    }

    /// [`TableArgs::table_ref`], a failure said on stderr and returned as exit code 2; a
    /// path that is a web server's URL refused as every command refuses it.
    pub fn table_ref_or_exit(&self, command: &str, path: &str) -> Result<TableRef, u8> {
        let at = self.table_ref(path).map_err(|e| {
            err!("sbbf {command}: {path}: {e}");
            2u8
        })?;
        if let TableRef::Path(p) = &at {
            if let Err(e) = crate::store_url::check_http_endpoint(p) {
                err!("sbbf {command}: {p}: {e}");
                return Err(2);
            }
        }
        Ok(at)
    }

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

/// `Delta table events/ version 4 (3 data file(s); log read: 5 GET(s), 1 LIST(s) of 7
/// object(s), 4096 bytes)`.
pub fn version_text(t: &TableVersion) -> String {
    let what = match t.format.as_str() {
        "iceberg" => format!("Iceberg table {} snapshot {}", t.location, t.version),
        _ => format!("Delta table {} version {}", t.location, t.version),
    };
    let r = &t.log_reads;
    let log = match t.format.as_str() {
        "iceberg" => "metadata",
        _ => "log",
    };
    let since = match t.log_since {
        Some(v) if t.format == "iceberg" => format!(" after snapshot {v} (the index's)"),
        Some(v) => format!(" after version {v} (the index's)"),
        None => String::new(),
    };
    format!(
        "{what} ({} data file(s); {log} read{since}: {} GET(s), {} LIST(s) of {} object(s), {} bytes)",
        t.files, r.gets, r.lists, r.listed, r.bytes
    )
}
