//! The one way from what a user names to what it holds: a location parsed once
//! ([`TableRef`]), then found and read once ([`Table`]). Every front end (the `sbbf` command,
//! Python, the DataFusion table) opens a [`Table`] and renders or adapts it; none of them
//! decides whether a path is a table, asks a catalog, or lists a table's files itself.

use crate::catalog::Catalog;
use crate::{Format, Found, LakeOptions, Snapshot, StoreRoot};
use sbbf_parquet::source::{object, Source, SourceOptions};
use sbbf_parquet::Error;
use std::sync::Arc;

/// Where a table (or a file, or a folder of files) is, as a user names it.
///
/// ```
/// use sbbf_lake::catalog::Catalog;
/// use sbbf_lake::TableRef;
/// let at = TableRef::new("file:///data/events/", None).unwrap();
/// assert_eq!(at, TableRef::Path("/data/events/".into()));
/// let at = TableRef::new("ns.events", Some(Catalog::new("sqlite:///w/catalog.db", None))).unwrap();
/// assert_eq!(at.name(), "ns.events");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableRef {
    /// A path or URL: a Parquet file, a folder, a glob, an object-store URL or prefix, the
    /// folder of a Delta or Iceberg table, or an Iceberg metadata file. A `file://` URL is
    /// held as its local path, so it is found as the same path is.
    Path(String),
    /// `NAMESPACE.TABLE` in a catalog, the authority on an Iceberg table's current metadata.
    Catalog {
        /// The catalog.
        catalog: Catalog,
        /// The table's identifier.
        table: String,
    },
}

impl TableRef {
    /// `arg` as a location: in `catalog` when one is given (then `arg` is `NAMESPACE.TABLE`),
    /// else a path or URL (`file://` URLs as their local paths; a `file://` URL of another
    /// host is an error).
    pub fn new(arg: &str, catalog: Option<Catalog>) -> Result<TableRef, Error> {
        Ok(match catalog {
            Some(catalog) => TableRef::Catalog {
                catalog,
                table: arg.to_string(),
            },
            None => TableRef::Path(object::local_location(arg)?.into_owned()),
        })
    }

    /// The location as given, for messages: the path, or the catalog's table identifier.
    pub fn name(&self) -> &str {
        match self {
            TableRef::Path(p) => p,
            TableRef::Catalog { table, .. } => table,
        }
    }
}

impl From<&str> for TableRef {
    /// A path or URL, taken as it is (see [`TableRef::new`] for `file://` URLs).
    fn from(p: &str) -> TableRef {
        TableRef::Path(p.to_string())
    }
}

impl From<&String> for TableRef {
    fn from(p: &String) -> TableRef {
        TableRef::Path(p.clone())
    }
}

impl From<String> for TableRef {
    fn from(p: String) -> TableRef {
        TableRef::Path(p)
    }
}

/// What a location holds, found once: a Delta or Iceberg table (found, its snapshot read
/// once when asked: [`Table::open`], [`Table::read`]) or files (a file, a folder that is no
/// table, a glob, a URL; or a table's folder read as files, [`LakeOptions::as_directory`]).
///
/// ```no_run
/// # async fn demo() -> Result<(), sbbf_parquet::Error> {
/// use sbbf_lake::Table;
/// let table = Table::open("events/", &Default::default()).await?;
/// match table.snapshot() {
///     Some(snap) => println!("{} version {}: {} files", snap.format, snap.version, snap.files.len()),
///     None => println!("{} is read as plain Parquet files", table.location()),
/// }
/// let files = table.source(Default::default()).await?;
/// println!("{} files to read", files.len());
/// # Ok(()) }
/// ```
pub struct Table {
    at: TableRef,
    /// What is read: the path, or the metadata file the catalog names.
    location: String,
    format: Option<Format>,
    /// Found and not read yet.
    found: Option<Found>,
    snapshot: Option<Arc<Snapshot>>,
    lake: LakeOptions,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("at", &self.at)
            .field("location", &self.location)
            .field("format", &self.format)
            .field("read", &self.snapshot.is_some())
            .finish()
    }
}

impl Table {
    /// Finds what `at` names without reading a table's log: on a store one request for a
    /// Delta table (the first page of `_delta_log/`), a second for an Iceberg folder (the
    /// first page of `metadata/`), a
    /// catalog asked for its table's metadata file. A version asked of something that is no
    /// table is an error ([`LakeOptions::as_of`]).
    pub async fn locate(at: impl Into<TableRef>, lake: &LakeOptions) -> Result<Table, Error> {
        Table::locate_in(None, at, lake).await
    }

    /// [`Table::locate`] through a store the caller configured for a remote location (a
    /// query engine's registered store, rooted at the bucket); `None`: the store the URL
    /// names, configured from the environment.
    pub async fn locate_in(
        root: Option<StoreRoot>,
        at: impl Into<TableRef>,
        lake: &LakeOptions,
    ) -> Result<Table, Error> {
        Table::locate_known(root, at, lake, None).await
    }

    async fn locate_known(
        root: Option<StoreRoot>,
        at: impl Into<TableRef>,
        lake: &LakeOptions,
        known: Option<crate::since::KnownLater>,
    ) -> Result<Table, Error> {
        let at = at.into();
        let location = match &at {
            TableRef::Path(p) => object::local_location(p)?.into_owned(),
            TableRef::Catalog { catalog, table } => {
                crate::catalog::metadata_location(catalog, table).await?
            }
        };
        let found = crate::find_in(root, &location, lake, known).await?;
        Ok(Table {
            format: found.as_ref().map(Found::format),
            at,
            location,
            found,
            snapshot: None,
            lake: lake.clone(),
        })
    }

    /// Finds what `at` names ([`Table::locate`]) and reads a table's snapshot: the version
    /// `lake` asks for, else the latest.
    pub async fn open(at: impl Into<TableRef>, lake: &LakeOptions) -> Result<Table, Error> {
        Table::locate(at, lake).await?.read().await
    }

    /// [`Table::open`] through a store the caller configured (see [`Table::locate_in`]).
    pub async fn open_in(
        root: Option<StoreRoot>,
        at: impl Into<TableRef>,
        lake: &LakeOptions,
    ) -> Result<Table, Error> {
        Table::locate_in(root, at, lake).await?.read().await
    }

    /// [`Table::open_in`] for a reader that may hold a snapshot of the table already (an
    /// index built from it): `known` is awaited only where it helps, and only once (it runs
    /// beside finding the table, so its own reads share the first round trip). An Iceberg
    /// table whose current snapshot it is ([`KnownSnapshot`]) is then read without its
    /// manifest list and manifests, and on a store its metadata file is fetched beside its
    /// folder's listing. Anything else is read as [`Table::open_in`] reads it.
    ///
    /// [`KnownSnapshot`]: crate::since::KnownSnapshot
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), sbbf_parquet::Error> {
    /// use sbbf_lake::Table;
    /// // No snapshot held: the same as `Table::open_in`.
    /// let table = Table::open_known(None, "s3://bucket/events/", &Default::default(), async { None }).await?;
    /// println!("{:?}", table.format());
    /// # Ok(()) }
    /// ```
    pub async fn open_known(
        root: Option<StoreRoot>,
        at: impl Into<TableRef>,
        lake: &LakeOptions,
        known: impl std::future::Future<Output = Option<crate::since::KnownSnapshot>> + Send + 'static,
    ) -> Result<Table, Error> {
        use futures::FutureExt as _;
        let known = known.map(|k| k.map(Arc::new)).boxed().shared();
        Table::locate_known(root, at, lake, Some(known))
            .await?
            .read()
            .await
    }

    /// This table with its snapshot read (once: a table already read, or files, are returned
    /// as they are). Refused ([`crate::LakeError::NotBuilt`]) in a build without the
    /// feature `tables`.
    pub async fn read(mut self) -> Result<Table, Error> {
        if let Some(found) = self.found.take() {
            self.snapshot = Some(Arc::new(found.snapshot().await?));
        }
        Ok(self)
    }

    /// The location as the user gave it.
    pub fn at(&self) -> &TableRef {
        &self.at
    }

    /// What is read: the path or URL (a `file://` URL as its path), or the metadata file a
    /// catalog names.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The table's folder, where its index is: [`crate::table_folder`] of the location.
    pub fn folder(&self) -> &str {
        crate::table_folder(&self.location)
    }

    /// The table's format; `None` for files.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Whether the location is a Delta or Iceberg table read as one.
    pub fn is_table(&self) -> bool {
        self.format.is_some()
    }

    /// How the table is read (the version asked for; a folder read as files).
    pub fn lake(&self) -> &LakeOptions {
        &self.lake
    }

    /// The table found and not read yet (see [`Table::locate`]): for a reader that knows an
    /// earlier version and reads only what changed since ([`Found::delta_since`],
    /// [`Found::iceberg_since`]). `None` once read, and for files.
    pub fn found(&self) -> Option<&Found> {
        self.found.as_ref()
    }

    /// The snapshot read; `None` for files, or for a table not read yet.
    pub fn snapshot(&self) -> Option<&Arc<Snapshot>> {
        self.snapshot.as_ref()
    }

    /// The files to read: a table's snapshot files (read now if it was not yet), else what
    /// [`Source::open`] lists at the location.
    pub async fn source(&self, options: SourceOptions) -> Result<Source, Error> {
        match (&self.snapshot, &self.found) {
            (Some(snap), _) => crate::source_of(snap, options),
            (None, Some(_)) => Err(crate::LakeError::Unsupported {
                format: self.format.map_or("lake", |f| f.name()),
                table: self.location.clone(),
                feature: "listing a table found but not read (Table::read first)".into(),
            }
            .into()),
            (None, None) => Source::open(&self.location, options).await,
        }
    }

    /// The snapshot read, taken out of the table (not copied when nothing else holds it).
    #[cfg(any(test, feature = "tables"))]
    pub(crate) fn into_snapshot(self) -> Option<Snapshot> {
        self.snapshot.map(Arc::unwrap_or_clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_url_is_its_path_and_a_catalog_name_is_kept() {
        assert_eq!(
            TableRef::new("file:///t/", None).unwrap(),
            TableRef::Path("/t/".into())
        );
        assert!(TableRef::new("file://elsewhere/t", None).is_err());
        let c = Catalog::new("sqlite:///c.db", Some("cat"));
        assert_eq!(
            TableRef::new("ns.t", Some(c.clone())).unwrap(),
            TableRef::Catalog {
                catalog: c,
                table: "ns.t".into()
            }
        );
    }

    #[tokio::test]
    async fn a_folder_that_is_no_table_is_files() {
        let dir = tempfile::tempdir().unwrap();
        let data = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/pa_ints.parquet"
        );
        std::fs::copy(data, dir.path().join("a.parquet")).unwrap();
        let t = Table::open(dir.path().to_str().unwrap(), &Default::default())
            .await
            .unwrap();
        assert!(!t.is_table());
        assert!(t.snapshot().is_none() && t.found().is_none());
        assert_eq!(t.source(Default::default()).await.unwrap().len(), 1);
        // A version asked of files is refused: no table holds one.
        let lake = LakeOptions {
            as_of: Some(crate::AsOf::Version(1)),
            as_directory: false,
        };
        assert!(Table::open(dir.path().to_str().unwrap(), &lake)
            .await
            .is_err());
    }
}

#[cfg(all(test, feature = "tables"))]
mod with_tables {
    use super::*;

    fn testdata(name: &str) -> String {
        format!("{}/../../testdata/lake/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[tokio::test]
    async fn a_table_is_found_then_read_once_and_lists_its_snapshot() {
        let path = testdata("delta_basic");
        let located = Table::locate(path.as_str(), &Default::default())
            .await
            .unwrap();
        assert_eq!(located.format(), Some(Format::Delta));
        assert!(located.found().is_some() && located.snapshot().is_none());
        let table = located.read().await.unwrap();
        let snap = Arc::clone(table.snapshot().unwrap());
        assert!(table.found().is_none());
        let files = table.source(Default::default()).await.unwrap();
        assert_eq!(files.len(), snap.files.len());
        // Read as a folder: its files, whatever the log says.
        let lake = LakeOptions {
            as_of: None,
            as_directory: true,
        };
        let folder = Table::open(path.as_str(), &lake).await.unwrap();
        assert!(!folder.is_table());
        // An Iceberg metadata file: the table's folder holds its index.
        let meta = std::fs::read_dir(testdata("iceberg/ns/ice_basic/metadata"))
            .unwrap()
            .flatten()
            .map(|e| e.path().display().to_string())
            .find(|p| p.ends_with(".metadata.json"))
            .unwrap();
        let ice = Table::open(meta.as_str(), &Default::default())
            .await
            .unwrap();
        assert_eq!(ice.format(), Some(Format::Iceberg));
        assert_eq!(ice.folder(), testdata("iceberg/ns/ice_basic"));
    }

    #[tokio::test]
    async fn a_catalog_names_the_metadata_file_read() {
        let catalog = Catalog::new(
            &format!("sqlite://{}", testdata("iceberg/catalog.db")),
            None,
        );
        let at = TableRef::new("ns.ice_basic", Some(catalog)).unwrap();
        let table = Table::open(at, &Default::default()).await.unwrap();
        assert_eq!(table.at().name(), "ns.ice_basic");
        assert!(table.location().ends_with(".metadata.json"));
        assert_eq!(table.format(), Some(Format::Iceberg));
        assert!(!table.snapshot().unwrap().files.is_empty());
    }
}
