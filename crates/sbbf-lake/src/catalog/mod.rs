//! Iceberg catalogs: where a table named `NS.TABLE` keeps its current metadata file.
//!
//! A catalog is the authority on an Iceberg table's current metadata (a folder's newest
//! metadata file may belong to a commit the catalog never took). Two kinds are read:
//!
//! - the SQL catalog in a SQLite file (`sqlite:///PATH`): the `iceberg_tables` table that
//!   pyiceberg's `SqlCatalog` and Java's `JdbcCatalog` share (`catalog_name`,
//!   `table_namespace`, `table_name`, `metadata_location`);
//! - the REST catalog (`http://` or `https://`): `GET v1/config` for the server's prefix, then
//!   `GET v1/{prefix}/namespaces/{ns}/tables/{table}`'s `metadata-location`. A bearer token is
//!   taken from `SBBF_CATALOG_TOKEN` when set.
//!
//! The answer is a metadata file's location, read from there on as any `*.metadata.json`.

#[cfg(feature = "tables")]
mod client;

#[cfg(feature = "tables")]
pub use client::metadata_location;
#[cfg(feature = "tables")]
pub(crate) use client::{current, is_sql, relocated, rest_commit, swap, RestCommit};

/// The environment variable whose value is sent as a REST catalog's bearer token.
pub const TOKEN_VAR: &str = "SBBF_CATALOG_TOKEN";

/// A catalog, as given on the command line (`--catalog URI [--catalog-name NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// `sqlite:///PATH` or `http(s)://HOST/...`.
    pub uri: String,
    /// The catalog's name among several in one SQL database (`catalog_name`); for REST,
    /// the warehouse asked of `v1/config`.
    pub name: Option<String>,
}

impl Catalog {
    /// A catalog at `uri`, named `name` when it holds several.
    ///
    /// ```
    /// use sbbf_lake::catalog::Catalog;
    /// let c = Catalog::new("sqlite:///tmp/warehouse/catalog.db", Some("default"));
    /// assert_eq!(c.name.as_deref(), Some("default"));
    /// ```
    pub fn new(uri: &str, name: Option<&str>) -> Catalog {
        Catalog {
            uri: uri.to_string(),
            name: name.map(str::to_string),
        }
    }
}

/// The current metadata file of `table` (`NS.TABLE`) in `catalog`: in a build without the
/// feature `tables`, the catalog is not read ([`crate::LakeError::NotBuilt`]).
#[cfg(not(feature = "tables"))]
pub async fn metadata_location(
    _catalog: &Catalog,
    table: &str,
) -> Result<String, sbbf_parquet::Error> {
    Err(crate::not_built(table, crate::Format::Iceberg))
}
