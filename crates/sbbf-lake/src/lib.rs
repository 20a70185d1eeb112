//! Lake tables read as their snapshots: a Delta Lake table (a folder with
//! `_delta_log/`, read through Delta's kernel) or an Apache Iceberg table (a
//! `*.metadata.json` file, a folder with `metadata/`, or `NAMESPACE.TABLE` of a catalog) is the
//! set of data files its log or metadata names at one version, never the files its folder
//! happens to hold. A folder keeps files a table has removed (compaction, deletes, overwrites)
//! until VACUUM or snapshot expiry, and files of commits that failed: reading them answers for
//! rows the table does not have.
//!
//! [`Table`] is the one way in: a location ([`TableRef`]: a path, a URL, or a catalog's table)
//! is found once and its snapshot read once; a location that is no table is read as plain
//! files ([`Table::source`]).
//!
//! Reading and writing tables is the default feature `tables` (Delta's kernel, Avro, the
//! catalogs' clients). Without it a table is still found ([`Table::locate`]) and every read or
//! write of one is refused with [`LakeError::NotBuilt`], never done as a read of its folder's
//! files.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sbbf_parquet::Error> {
//! use sbbf_lake::Table;
//! let table = Table::open("events/", &Default::default()).await?;
//! if let Some(snap) = table.snapshot() {
//!     println!("{} version {}: {} files", snap.format, snap.version, snap.files.len());
//! }
//! println!("{} files to read", table.source(Default::default()).await?.len());
//! # Ok(()) }
//! ```

pub mod arrow_types;
pub mod backfill;
// Without `tables`, what only the formats' reads call (statistics as bounds, the log since a
// version, a found table's store and log listing) is built but not called: a table is found,
// then refused before anything of it is read.
#[cfg_attr(not(feature = "tables"), allow(dead_code))]
mod bounds;
pub mod catalog;
mod counted;
pub mod delta;
pub mod each;
mod error;
#[cfg(feature = "tables")]
pub mod iceberg;
mod inner;
mod location;
mod names;
mod options;
pub mod partitions;
#[cfg(feature = "tables")]
pub mod rows;
#[cfg_attr(not(feature = "tables"), allow(dead_code))]
pub mod since;
mod table;
#[cfg(feature = "tables")]
mod whole;

pub use error::LakeError;
pub use inner::{InnerName, Relabel};
pub use location::StoreRoot;
pub use names::TableNames;
pub use options::{AsOf, LakeOptions, LogReads, TableOptions, TableVersion};
pub use partitions::PartitionColumn;
pub use table::{Table, TableRef};

use sbbf_parquet::source::{object, Source, SourceOptions};
use sbbf_parquet::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which table format a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Delta Lake: `_delta_log/` beside the data (the default of [`TableNames`]).
    #[default]
    Delta,
    /// Apache Iceberg: a metadata JSON file naming manifest lists and manifests.
    Iceberg,
}

impl Format {
    /// The format's name in messages: `Delta`, `Iceberg`.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Delta => "Delta",
            Format::Iceberg => "Iceberg",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Delta => "delta",
            Format::Iceberg => "iceberg",
        })
    }
}

/// Rows a data file's deletes take away, as the snapshot records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Deletes {
    /// No delete applies to the file.
    #[default]
    None,
    /// A deletion vector (Delta, or an Iceberg v3 deletion vector) marks deleted rows.
    Vector {
        /// How many rows it deletes, when the snapshot says.
        rows: Option<u64>,
    },
    /// Iceberg delete files that may apply to the file.
    Files {
        /// Position delete files.
        position: u32,
        /// Equality delete files.
        equality: u32,
    },
}

impl Deletes {
    /// Whether any delete may apply.
    pub fn any(&self) -> bool {
        !matches!(self, Deletes::None)
    }
}

/// One data file of a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    /// Its absolute location: a `file://` URL for a local table, else the store's URL.
    pub url: String,
    /// Its size in bytes, as the table records it.
    pub size: u64,
    /// Its row count before deletes, as the table records it.
    pub rows: Option<u64>,
    /// Partition values by column name (Delta: logical names; Iceberg: partition field
    /// names), as text (`None`: null).
    pub partition: Vec<(String, Option<String>)>,
    /// Deletes that apply to it.
    pub deletes: Deletes,
    /// What the snapshot records of its columns' values (Delta `stats`, Iceberg manifest
    /// bounds), where that rules values out exactly: integer, date and string columns.
    pub bounds: Vec<Bounds>,
}

impl DataFile {
    /// Whether `value` may be in the table's column `column` of this file: `false` only when
    /// the snapshot's bounds of the column rule it out (the file need not be opened).
    ///
    /// ```
    /// use sbbf_lake::{Bounds, DataFile};
    /// use sbbf_parquet::Literal;
    /// let f = DataFile {
    ///     url: "file:///t/a.parquet".into(),
    ///     size: 100,
    ///     rows: Some(3),
    ///     partition: vec![],
    ///     deletes: Default::default(),
    ///     bounds: vec![Bounds { column: "id".into(), min: Some(Literal::Int(5)), max: Some(Literal::Int(9)) }],
    /// };
    /// assert!(!f.may_hold("id", &Literal::Int(4)));
    /// assert!(f.may_hold("id", &Literal::Int(7)));
    /// assert!(f.may_hold("other", &Literal::Int(4)));
    /// ```
    pub fn may_hold(&self, column: &str, value: &sbbf_parquet::Literal) -> bool {
        self.bounds
            .iter()
            .filter(|b| b.column == column)
            .all(|b| b.may_hold(value))
    }
}

/// The least and greatest value of one column in one data file, as the snapshot records
/// them (`None`: not recorded, or not exact enough to rule a value out).
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    /// The table's name of the column (top-level).
    pub column: String,
    /// No value is below this.
    pub min: Option<sbbf_parquet::Literal>,
    /// No value is above this.
    pub max: Option<sbbf_parquet::Literal>,
}

impl Bounds {
    /// Whether `value` may lie within these bounds: `false` only when it is below the
    /// minimum or above the maximum, compared as values of one kind (integers, dates,
    /// strings by their UTF-8 bytes); a literal of another kind is never ruled out.
    pub fn may_hold(&self, value: &sbbf_parquet::Literal) -> bool {
        bounds::may_hold(self, value)
    }
}

/// A top-level column of a table: its name, and how its data files name it.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct LakeColumn {
    /// Its name in the table's current schema.
    pub name: String,
    /// Its name in the data files when it differs (Delta column mapping: `col-5f1c...`).
    pub physical: Option<String>,
    /// Its field id (Iceberg; Delta column mapping's id), when known.
    pub field_id: Option<i64>,
    /// Other names the same field had in earlier schemas (an Iceberg rename): files written
    /// before the rename hold it under one of these.
    pub earlier_names: Vec<String>,
    /// A field inside it (a struct's field, a list's element, a map's key or value) had
    /// another name in an earlier schema, or its name belonged to another field (dropped and
    /// added again): files written before then name inner fields otherwise than the table
    /// does (an Iceberg schema change). Reads relabel such a column ([`LakeColumn::relabel`]);
    /// probes find its leaves by field ids ([`LakeColumn::inner`]).
    pub inner_renamed: bool,
    /// The fields inside it in the current schema (Iceberg): each leaf's Parquet path below
    /// the column (`b` for a struct's field, `list.element` for a list's element,
    /// `key_value.key` for a map's key, names escaped as column paths escape them) and the
    /// field ids from the column down to it. A field inside a column whose inner fields were
    /// renamed ([`LakeColumn::inner_renamed`]) is found in each file by these ids.
    pub inner: Vec<(String, Vec<i64>)>,
    /// The struct fields inside it (at any depth) with the table's names for them and what
    /// finds them in files (field ids; Delta column mapping's physical names): what
    /// [`LakeColumn::relabel`] renames a file's nested field by. Empty when files name them
    /// as the table does (a Delta table without column mapping).
    pub inner_names: Vec<InnerName>,
    /// Its type as the format names it (Delta: `long`, `string`, `decimal(10,2)`,
    /// `struct<...>`; Iceberg: `long`, `string`, `timestamptz`, `struct`), when known.
    pub data_type: Option<String>,
    /// A data file without it may still hold values of it (Iceberg: the source of an
    /// identity partition, which a file may leave to its partition tuple; a column with an
    /// `initial-default`, which files written before it read as that value). A file's lack
    /// of the column then proves nothing, and an index must not rule the file out for it.
    #[serde(default)]
    pub missing_not_null: bool,
}

/// A table's snapshot: the version read and its data files.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The table's format.
    pub format: Format,
    /// The table as given (a path or a URL).
    pub location: String,
    /// The version read: a Delta version, an Iceberg snapshot id (-1: no snapshot yet).
    pub version: i64,
    /// When that version was committed (ms since the epoch), when known.
    pub timestamp_ms: Option<i64>,
    /// The Iceberg metadata file read (`None` for Delta).
    pub metadata: Option<String>,
    /// The partition columns, in the table's order.
    pub partition_columns: Vec<String>,
    /// The data files (Parquet only), in the order the log or manifests list them.
    pub files: Vec<DataFile>,
    /// The current schema's top-level columns, with how files name them.
    pub columns: Vec<LakeColumn>,
    /// What the reader should know about how the snapshot was found (e.g. an Iceberg folder
    /// read without its catalog).
    pub notes: Vec<String>,
    /// Delta: the table's root and each file's deletion vector, read when asked
    /// ([`Snapshot::deleted_rows`]).
    #[cfg(feature = "tables")]
    vectors: delta::Vectors,
    /// Iceberg: each data file's position delete files, read when asked.
    #[cfg(feature = "tables")]
    positions: iceberg::positions::Positions,
    /// Iceberg: each data file's equality delete files, read when asked.
    #[cfg(feature = "tables")]
    equalities: iceberg::equality::Equalities,
    /// Delta under column mapping: the leaves inside each nested column (by its name), as
    /// (path as the table names it, path as files name it), in segments (`*`: any segment,
    /// a list's or map's own levels).
    inner_physical: std::collections::HashMap<String, Vec<PathPair>>,
    /// What finding the table and reading this snapshot asked of its store.
    pub log_reads: LogReads,
    /// Iceberg: the snapshot's data manifests (`None` for Delta).
    data_manifests: Option<Vec<String>>,
    /// Iceberg: the snapshot's manifest list, when it names no delete manifest.
    data_only_list: Option<String>,
}

/// A leaf's path below its column as the table names it and as files name it, in segments.
pub(crate) type PathPair = (Vec<String>, Vec<String>);

impl Snapshot {
    /// Which version of which table this is, for reports.
    pub fn table_version(&self) -> TableVersion {
        TableVersion {
            format: self.format.to_string(),
            location: self.location.clone(),
            version: self.version,
            timestamp_ms: self.timestamp_ms,
            files: self.files.len(),
            log_reads: self.log_reads,
            log_since: None,
        }
    }

    /// The column path that data files hold for the table's column `column` (a path, `a.b`
    /// for a nested field): the same path; under Delta column mapping its physical name; for
    /// an Iceberg column renamed after files were written, a path that finds it by field id
    /// in each file ([`sbbf_parquet::read::file::by_field_id`]), whatever name the file has for it;
    /// for a field inside a column whose inner fields were renamed, by the ids from the
    /// column down to the leaf ([`sbbf_parquet::read::file::by_field_ids`]).
    pub fn file_column(&self, column: &str) -> Result<String, Error> {
        names::file_column(
            self.format,
            &self.location,
            &self.columns,
            &self.inner_physical,
            column,
        )
    }

    /// The table's name of a column path its data files hold ([`TableNames::table_column`]):
    /// what a report shows for a leaf a file names by Delta column mapping's physical names.
    pub fn table_column(&self, file_path: &str) -> Option<String> {
        names::table_column(&self.columns, &self.inner_physical, file_path)
    }

    /// The column path an index of the table's files ([`Snapshot::file_column`]'s) may be
    /// asked `column` by, where a file whose filters say a value is absent, or which lacks
    /// the column, surely holds no row with that value; `None` where that does not hold: a
    /// partition column (a Delta file holds none of it; an Iceberg file may leave an
    /// identity partition's to its partition tuple), a column with an earlier name or inner
    /// fields renamed (files hold it by field id, which an index does not record), a column
    /// a file without it reads as a default ([`LakeColumn::missing_not_null`]), a column the
    /// schema lacks.
    ///
    /// ```
    /// use sbbf_lake::{Format, LakeColumn, TableNames};
    /// let mut names = TableNames::default();
    /// names.format = Format::Delta;
    /// names.partition_columns = Some(vec!["day".into()]);
    /// for (name, physical) in [("id", "col-1f2e"), ("day", "day")] {
    ///     names.columns.push(LakeColumn {
    ///         name: name.into(),
    ///         physical: Some(physical.into()),
    ///         ..Default::default()
    ///     });
    /// }
    /// assert_eq!(names.index_column("t/", "id").as_deref(), Some("col-1f2e"));
    /// assert_eq!(names.index_column("t/", "day"), None);
    /// assert_eq!(names.index_column("t/", "nosuch"), None);
    /// ```
    pub fn index_column(&self, column: &str) -> Option<String> {
        names::index_column(
            &self.names(),
            &self.location,
            &self.partition_columns,
            column,
        )
    }

    /// Iceberg: the locations of the snapshot's data manifests, which an index built from it
    /// keeps: a later snapshot that still lists them all has their files and those of the
    /// manifests added since ([`Found::iceberg_since`]). `None` for Delta.
    pub fn data_manifests(&self) -> Option<&[String]> {
        self.data_manifests.as_deref()
    }

    /// Iceberg: the snapshot's manifest list, as its metadata file names it, when the list
    /// names data manifests only (no delete file applies to any of its files): what a
    /// reader that keeps this snapshot's files records, to know the snapshot again without
    /// reading its manifests ([`since::KnownSnapshot`]).
    pub fn data_only_list(&self) -> Option<&str> {
        self.data_only_list.as_deref()
    }

    /// What [`Snapshot::file_column`] needs, to keep beside an index built from this
    /// snapshot: a later version's column is then found without reading its snapshot.
    pub fn names(&self) -> TableNames {
        TableNames {
            format: self.format,
            columns: self.columns.clone(),
            inner_physical: self.inner_physical.clone(),
            partition_columns: Some(self.partition_columns.clone()),
        }
    }

    /// The files with deletes that apply to them.
    pub fn files_with_deletes(&self) -> impl Iterator<Item = &DataFile> {
        self.files.iter().filter(|f| f.deletes.any())
    }

    /// The rows of `file` (one of this snapshot's files, by its [`DataFile::url`]) that its
    /// deletes delete: positions in the file (0 is its first row), ascending; `None` when no
    /// delete applies. Delta deletion vectors (inline in the log, or a file beside the
    /// table's) and Iceberg position delete files are read now, through `root` (each delete
    /// file once per snapshot); a position at or past `rows` (the file's row count, when
    /// given) is an error: the table is damaged. Iceberg equality deletes are applied by
    /// reading the data file's delete columns (by field id) and matching them against the
    /// delete files' rows (a null matches a null). Iceberg v3 deletion vectors are not read
    /// yet (an [`LakeError::Unsupported`] naming them).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), sbbf_parquet::Error> {
    /// use sbbf_lake::{StoreRoot, Table};
    /// let table = Table::open("events/", &Default::default()).await?;
    /// let snap = table.snapshot().expect("a table");
    /// for f in snap.files_with_deletes() {
    ///     let gone = snap.deleted_rows(&StoreRoot::local(), &f.url, None).await?;
    ///     println!("{}: {} rows deleted", f.url, gone.map_or(0, |g| g.len()));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn deleted_rows(
        &self,
        root: &StoreRoot,
        file: &str,
        rows: Option<u64>,
    ) -> Result<Option<Vec<u64>>, Error> {
        let Some(f) = self.files.iter().find(|f| f.url == file) else {
            return Ok(None);
        };
        let unsupported = |feature: &str| -> Error {
            LakeError::Unsupported {
                format: self.format.name(),
                table: self.location.clone(),
                feature: feature.to_string(),
            }
            .into()
        };
        match (self.format, f.deletes) {
            (_, Deletes::None) => Ok(None),
            #[cfg(feature = "tables")]
            (Format::Delta, _) => {
                self.vectors
                    .deleted_rows(root, &self.location, file, rows)
                    .await
            }
            #[cfg(feature = "tables")]
            (Format::Iceberg, Deletes::Files { .. }) => {
                let positions = self
                    .positions
                    .deleted_rows(root, &self.location, file, rows)
                    .await?;
                let equal = self
                    .equalities
                    .deleted_rows(root, &self.location, file, f.size)
                    .await?;
                Ok(match (positions, equal) {
                    (Some(mut p), Some(e)) => {
                        p.extend(e);
                        p.sort_unstable();
                        p.dedup();
                        Some(p)
                    }
                    (p, e) => p.or(e),
                })
            }
            (Format::Iceberg, Deletes::Vector { .. }) => Err(unsupported(
                "deletion vectors of format version 3 (read as rows)",
            )),
            // No snapshot is read without `tables`, so none has deletes to read.
            #[cfg(not(feature = "tables"))]
            _ => {
                let _ = (root, rows);
                Err(not_built(&self.location, self.format))
            }
        }
    }
}

/// What kind of table `arg` is, if any, without reading its log: a folder with
/// `_delta_log/`, a `*.metadata.json` file, a folder with `metadata/` holding metadata files
/// or a version hint.
///
/// Under an object-store URL that names a prefix (it ends in `/`, or its last name has no
/// extension) the same is asked of the store: the first page of `_delta_log/`, and only when
/// it is empty the first page of `metadata/` (see [`detect_remote`]). A URL naming an object
/// (`.../f.parquet`) and a web server's URL (which cannot be listed) are never tables.
///
/// Also what the detection on a store learnt, for the table's reader ([`Look`]).
async fn detect_in(
    root: Option<&StoreRoot>,
    arg: &str,
    known: Option<&since::KnownLater>,
) -> Result<Option<(Format, Option<Look>)>, Error> {
    if arg.ends_with(".metadata.json") {
        return Ok(Some((Format::Iceberg, None)));
    }
    if object::is_remote_url(arg) {
        return detect_remote(root, arg, known).await;
    }
    // A local folder is asked what the Parquet crate's in-place write guard asks of it (one
    // rule for both: `_delta_log/`, or `metadata/` with a metadata file or a version hint,
    // as on a store). A Hudi table, which the guard also knows, is no table this crate reads.
    use sbbf_parquet::write::output::{table_format_at, TableFormat};
    let p = Path::new(arg);
    if !p.is_dir() {
        return Ok(None);
    }
    Ok(match table_format_at(p) {
        Some(TableFormat::Delta) => Some((Format::Delta, None)),
        Some(TableFormat::Iceberg) => Some((Format::Iceberg, None)),
        _ => None,
    })
}

/// Whether a URL names a prefix a table could live under (see [`detect_in`]).
fn names_a_prefix(url: &str) -> bool {
    if url.starts_with("http://") || url.starts_with("https://") {
        return false;
    }
    if url.ends_with('/') {
        return true;
    }
    let last = url.rsplit('/').next().unwrap_or_default();
    !last.contains('.') && !last.contains(['*', '?', '['])
}

/// What finding a table on a store learnt that its reader would otherwise ask again.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "tables"), allow(dead_code))]
enum Look {
    /// A Delta log's first listing page (and checkpoint hint): the start of reading the log.
    Delta(delta::LogLook),
    /// An Iceberg table's folder.
    Iceberg {
        /// The names directly in its `metadata/`, all of them (when the first page was whole).
        names: Option<Vec<String>>,
        /// The metadata file a reader's known snapshot was read from, fetched beside the
        /// listing (URL, bytes).
        fetched: Option<(String, bytes::Bytes)>,
    },
}

#[cfg_attr(not(feature = "tables"), allow(dead_code))]
impl Look {
    fn delta(&self) -> Option<&delta::LogLook> {
        match self {
            Look::Delta(l) => Some(l),
            Look::Iceberg { .. } => None,
        }
    }

    fn into_delta(self) -> Option<delta::LogLook> {
        match self {
            Look::Delta(l) => Some(l),
            Look::Iceberg { .. } => None,
        }
    }

    fn metadata_names(&self) -> Option<&[String]> {
        match self {
            Look::Iceberg { names, .. } => names.as_deref(),
            Look::Delta(_) => None,
        }
    }

    fn fetched_metadata(&self) -> Option<&(String, bytes::Bytes)> {
        match self {
            Look::Iceberg { fetched, .. } => fetched.as_ref(),
            Look::Delta(_) => None,
        }
    }
}

/// The store's side of [`detect_in`]: `_delta_log/` is listed first, and `metadata/` only when
/// the log is empty. A Delta table (the common case on a store, and a table with both, as
/// Delta's Iceberg-compatible writers leave, is read as Delta anyway) is found in one
/// request, which is also the first of reading its log; an Iceberg folder costs a second
/// round trip, whose listing its reader then uses in place of its own. When a reader knows
/// a snapshot of the table (`known`: an index read beside the log's listing), the metadata
/// file it was read from is fetched in that second round trip too: when the listing shows
/// it is still the newest, the reader has it without a third.
async fn detect_remote(
    root: Option<&StoreRoot>,
    arg: &str,
    known: Option<&since::KnownLater>,
) -> Result<Option<(Format, Option<Look>)>, Error> {
    use futures::StreamExt;
    if !names_a_prefix(arg) {
        return Ok(None);
    }
    let root = match root {
        Some(r) => r.clone(),
        None => StoreRoot::for_url(arg)?,
    };
    let base = location::table_url(arg)?;
    let folder = |name: &str| -> Result<object_store::path::Path, Error> {
        let url = base.join(name).map_err(|_| LakeError::BadLocation {
            location: format!("{base}{name}"),
        })?;
        root.path_of(url.as_str().trim_end_matches('/'))
    };
    let (log, meta) = (folder("_delta_log/")?, folder("metadata/")?);
    let store = root.store();
    let listed = |e: object_store::Error| -> Error {
        sbbf_parquet::ReadError::Store {
            location: arg.to_string(),
            source: e,
        }
        .into()
    };
    let delta = delta::look(&store, log).await.map_err(listed)?;
    if !delta.entries.is_empty() {
        return Ok(Some((Format::Delta, Some(Look::Delta(delta)))));
    }
    // The first page of `metadata/`: an Iceberg metadata folder holds a metadata file or a
    // version hint.
    let page = async {
        let mut objects = 0;
        let mut names = Vec::new();
        let mut last = None;
        let mut page = store.list(Some(&meta)).take(delta::FIRST_PAGE);
        while let Some(m) = page.next().await {
            let m = m.map_err(listed)?;
            objects += 1;
            last = Some(m.location.clone());
            // Only the folder's own objects, as a delimited listing gives them.
            let mut parts = m.location.prefix_match(&meta).into_iter().flatten();
            if let (Some(name), None) = (parts.next(), parts.next()) {
                names.push(name.as_ref().to_string());
            }
        }
        Ok::<_, Error>((objects, names, last))
    };
    // The snapshot a reader holds is awaited first (its index was asked beside the log's
    // listing, so it is in or nearly): the listing and the metadata file then go out
    // together, one round trip, however long the reader took to make it.
    let known = match known {
        Some(k) => k.clone().await,
        None => None,
    };
    let meta_url = base.join("metadata/").ok();
    let fetch = async {
        let at = known?.metadata.clone()?;
        // Only one of this folder's own metadata files; a failed fetch is no error: the
        // reader then fetches the one it needs.
        if !at.starts_with(meta_url?.as_str()) {
            return None;
        }
        let bytes = root.get(&at).await.ok()?;
        Some((at, bytes))
    };
    let ((objects, names, last), fetched) = match futures::future::join(page, fetch).await {
        (Ok(page), fetched) => (page, fetched),
        (Err(e), _) => return Err(e),
    };
    use sbbf_parquet::write::output::names_iceberg_metadata;
    let mut found = names.iter().any(|n| names_iceberg_metadata(n));
    // A whole page without one: the names that sort first need not be the metadata files
    // (a Hadoop table's `v12.metadata.json` and hint sort after thousands of manifests named
    // by UUIDs and `snap-...`). The rest is listed, from the last name seen, until one is
    // found: such a folder is never read as plain files.
    if let (false, Some(last)) = (found, last.filter(|_| objects >= delta::FIRST_PAGE)) {
        let mut rest = store.list_with_offset(Some(&meta), &last);
        while let Some(m) = rest.next().await {
            let m = m.map_err(listed)?;
            let mut parts = m.location.prefix_match(&meta).into_iter().flatten();
            if let (Some(name), None) = (parts.next(), parts.next()) {
                if names_iceberg_metadata(name.as_ref()) {
                    found = true;
                    break;
                }
            }
        }
    }
    if found {
        let look = Look::Iceberg {
            names: (objects < delta::FIRST_PAGE).then_some(names),
            fetched,
        };
        return Ok(Some((Format::Iceberg, Some(look))));
    }
    Ok(None)
}

/// Reads the snapshot of the table at `arg` as `lake` says: `None` when `arg` is no table or is
/// to be read as a folder ([`LakeOptions::as_directory`]). Front ends open a [`Table`].
#[cfg(any(test, feature = "tables"))]
pub(crate) async fn snapshot(arg: &str, lake: &LakeOptions) -> Result<Option<Snapshot>, Error> {
    Ok(Table::open(arg, lake).await?.into_snapshot())
}

/// A table found at a path, not read yet: what finding it learnt (on a store, a Delta log's
/// first listing page, or an Iceberg folder's `metadata/` listing), to read its snapshot
/// ([`Found::snapshot`]) or, for a Delta table whose earlier version a reader knows, only the
/// commits since ([`Found::delta_since`]). Every request of finding and reading is counted
/// ([`LogReads`]).
#[cfg_attr(not(feature = "tables"), allow(dead_code))]
#[derive(Clone)]
pub struct Found {
    format: Format,
    arg: String,
    url: url::Url,
    root: StoreRoot,
    counters: Arc<counted::Counters>,
    look: Option<Look>,
    as_of: Option<AsOf>,
    /// A snapshot of the table a reader holds (an index's), on its way.
    known: Option<since::KnownLater>,
}

/// Finds the table at `arg` without reading it (on a store one request for a Delta table, two
/// round trips for an Iceberg folder): `None` when `arg` is no table or is to be read as a
/// folder; through a store the caller configured
/// (`root`), else the one the URL names. [`Table::locate`] is the way in.
pub(crate) async fn find_in(
    root: Option<StoreRoot>,
    arg: &str,
    lake: &LakeOptions,
    known: Option<since::KnownLater>,
) -> Result<Option<Found>, Error> {
    if lake.as_directory {
        return Ok(None);
    }
    let remote = object::is_remote_url(arg);
    // Every request of finding the table and reading its snapshot is counted.
    let counters = Arc::new(counted::Counters::default());
    let count = |r: StoreRoot| {
        StoreRoot::with_store(
            counted::Counted::with(r.store(), Arc::clone(&counters)),
            r.base().clone(),
        )
    };
    let root = match (root, remote) {
        (Some(r), true) => Some(count(r)),
        (None, true) if names_a_prefix(arg) => Some(count(StoreRoot::for_url(arg)?)),
        _ => None,
    };
    let Some((format, look)) = detect_in(root.as_ref(), arg, known.as_ref()).await? else {
        return match lake.as_of {
            Some(_) => Err(LakeError::NotATable {
                path: arg.to_string(),
            }
            .into()),
            None => Ok(None),
        };
    };
    let root = match (root, remote) {
        (Some(r), _) => r,
        (None, true) => count(StoreRoot::for_url(arg)?),
        (None, false) => count(StoreRoot::local()),
    };
    Ok(Some(Found {
        format,
        arg: arg.to_string(),
        url: location::table_url(arg)?,
        root,
        counters,
        look,
        as_of: lake.as_of,
        known,
    }))
}

impl Found {
    /// The table's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The same table, to be read at `as_of` (`None`: the latest version) without finding
    /// it again.
    pub fn with_as_of(mut self, as_of: Option<AsOf>) -> Found {
        self.as_of = as_of;
        self
    }

    /// What finding the table (and reading anything since) asked of its store.
    pub fn log_reads(&self) -> LogReads {
        self.counters.reads()
    }

    /// Reads the snapshot (the version asked for, else the latest); refused
    /// ([`LakeError::NotBuilt`]) in a build without the feature `tables`.
    pub async fn snapshot(self) -> Result<Snapshot, Error> {
        #[cfg(not(feature = "tables"))]
        return Err(not_built(&self.arg, self.format));
        #[cfg(feature = "tables")]
        {
            let Found {
                format,
                arg,
                url,
                root,
                counters,
                look,
                as_of,
                known,
            } = self;
            let mut snap = match format {
                Format::Delta => {
                    let look = look.and_then(Look::into_delta);
                    delta::snapshot(&root, &arg, &url, as_of, look).await?
                }
                Format::Iceberg => {
                    let known = match known {
                        Some(k) => k.await,
                        None => None,
                    };
                    let prior = iceberg::Prior {
                        listed: look.as_ref().and_then(Look::metadata_names),
                        fetched: look.as_ref().and_then(Look::fetched_metadata),
                        known: known.as_deref(),
                        unchanged: None,
                    };
                    iceberg::snapshot(&root, &arg, &url, as_of, prior).await?
                }
            };
            snap.log_reads = counters.reads();
            Ok(snap)
        }
    }

    /// A Delta table's commits after `since`, up to the version asked for (else the
    /// latest), when the log still holds them and they change only data files (see
    /// [`since::Tail`]); `mark` is what the reader knew of commit `since`, so a log written
    /// again under the same names (a table deleted and created anew) is not taken for it.
    pub async fn delta_since(
        &self,
        since: i64,
        mark: &since::CommitMark,
    ) -> Result<since::Tail, Error> {
        if self.format != Format::Delta {
            return Ok(since::Tail::Snapshot("the table is no Delta table".into()));
        }
        #[cfg(not(feature = "tables"))]
        return {
            let _ = (since, mark);
            Err(not_built(&self.arg, self.format))
        };
        #[cfg(feature = "tables")]
        delta::read_since(
            &self.root,
            &self.url,
            self.look.as_ref().and_then(Look::delta),
            since,
            mark,
            self.as_of,
        )
        .await
    }

    /// An Iceberg table's data files beyond those of snapshot `since`, whose data manifests
    /// were `known`: the files of the manifests the snapshot read (the one asked for, else
    /// the current one) lists beyond them, when it still lists every one of them (see
    /// [`since::Tail`]; the Iceberg read also gives the snapshot's column names). `list`:
    /// snapshot `since`'s manifest list, when known: a snapshot that still names it is
    /// `since` itself (nothing added), and its list is not read.
    pub async fn iceberg_since(
        &self,
        since: i64,
        known: &[String],
        list: Option<&str>,
    ) -> Result<since::Tail, Error> {
        if self.format != Format::Iceberg {
            return Ok(since::Tail::Snapshot(
                "the table is no Iceberg table".into(),
            ));
        }
        #[cfg(not(feature = "tables"))]
        return {
            let _ = (since, known, list);
            Err(not_built(&self.arg, self.format))
        };
        #[cfg(feature = "tables")]
        {
            let names = self.look.as_ref().and_then(Look::metadata_names);
            iceberg::since(
                &self.root, &self.arg, &self.url, self.as_of, names, since, known, list,
            )
            .await
        }
    }
}

/// What identifies commit `version` of the Delta table `arg` (its log entry's size and
/// ETag, one request), for a reader that later reads only the commits after it
/// ([`Found::delta_since`]); `None` when the store gives no ETag or the entry is gone (the
/// log was cleaned up past it).
pub async fn commit_mark(arg: &str, version: i64) -> Result<Option<since::CommitMark>, Error> {
    #[cfg(not(feature = "tables"))]
    return {
        let _ = version;
        Err(not_built(arg, Format::Delta))
    };
    #[cfg(feature = "tables")]
    {
        let root = match object::is_remote_url(arg) {
            true => StoreRoot::for_url(arg)?,
            false => StoreRoot::local(),
        };
        delta::since_mark(&root, &location::table_url(arg)?, version).await
    }
}

/// The error of a build without the feature `tables` (no Delta kernel, no Avro, no catalog
/// clients) for the table `path` it found: refused, never read as a folder of files.
#[cfg(not(feature = "tables"))]
pub(crate) fn not_built(path: &str, format: Format) -> Error {
    LakeError::NotBuilt {
        path: path.to_string(),
        format: format.name(),
    }
    .into()
}

/// The snapshot's files as a [`Source`], named as a listing of the table's folder names them
/// (the table path followed by the file's path below it; the file's URL when it lies
/// elsewhere).
pub fn source_of(snap: &Snapshot, options: SourceOptions) -> Result<Source, Error> {
    if !object::is_remote_url(&snap.location) {
        return Ok(Source::from_named_paths(local_files(snap)?, true, options));
    }
    let root = StoreRoot::for_url(&snap.location)?;
    let (_, prefix) = object::store_from_url(&snap.location)?;
    let mut objects = Vec::with_capacity(snap.files.len());
    for f in &snap.files {
        objects.push(object_store::ObjectMeta {
            location: root.path_of(&f.url)?,
            last_modified: chrono::DateTime::<chrono::Utc>::default(),
            size: f.size,
            e_tag: None,
            version: None,
        });
    }
    Ok(Source::from_objects(
        &snap.location,
        root.store(),
        &prefix,
        objects,
        options,
    ))
}

/// A local table's data files: each as results name it (below the table's folder, as a
/// listing of it would show it) and its path.
pub fn local_files(snap: &Snapshot) -> Result<Vec<(String, PathBuf)>, Error> {
    let base = PathBuf::from(table_folder(&snap.location));
    let abs_base = std::fs::canonicalize(&base).unwrap_or_else(|_| base.clone());
    snap.files
        .iter()
        .map(|f| local_file(&base, &abs_base, &f.url))
        .collect()
}

/// A local table's data file at `url` (a `file://` URL or an absolute path), as
/// [`local_files`] gives it: its name below `base` (the table's folder as given; `abs_base`
/// that folder's canonical path) and its path.
pub fn local_file(base: &Path, abs_base: &Path, url: &str) -> Result<(String, PathBuf), Error> {
    let path = location::local_path(url)?;
    let name = match path.strip_prefix(abs_base) {
        Ok(rel) => base.join(rel).display().to_string(),
        Err(_) => path.display().to_string(),
    };
    Ok((name, path))
}

/// The folder of the table `arg` names, as given (no trailing `/`): `arg` itself, or for an
/// Iceberg metadata file (`t/metadata/v3.metadata.json`) the folder above its `metadata/`.
///
/// ```
/// use sbbf_lake::table_folder;
/// assert_eq!(table_folder("t/metadata/v3.metadata.json"), "t");
/// assert_eq!(table_folder("s3://b/t/"), "s3://b/t");
/// ```
pub fn table_folder(arg: &str) -> &str {
    let p = arg.trim_end_matches('/');
    if !p.ends_with(".metadata.json") {
        return p;
    }
    match p.rsplit_once('/') {
        Some((dir, _)) => dir.rsplit_once('/').map_or(dir, |(t, _)| t),
        None => p,
    }
}

/// A build without the feature `tables` finds tables and refuses them: never `None` (which
/// would read a table's folder as plain files, removed files included).
#[cfg(all(test, not(feature = "tables")))]
mod without_tables {
    use super::*;

    fn testdata(path: &str) -> String {
        format!("{}/../../testdata/lake/{path}", env!("CARGO_MANIFEST_DIR"))
    }

    fn assert_not_built(e: Error, want: &str) {
        let text = e.to_string();
        match LakeError::of(&e) {
            Some(l) => assert!(
                matches!(l, LakeError::NotBuilt { format, .. } if *format == want),
                "{text}"
            ),
            None => panic!("not NotBuilt: {text}"),
        }
        assert!(text.contains("--features lake"), "{text}");
    }

    #[tokio::test]
    async fn tables_are_found_and_refused() {
        let lake = LakeOptions::default();
        for (path, format) in [
            (testdata("delta_basic"), Format::Delta),
            (testdata("iceberg/ns/ice_basic"), Format::Iceberg),
        ] {
            assert_eq!(
                detect_in(None, &path, None).await.unwrap().map(|f| f.0),
                Some(format),
                "{path}"
            );
            let found = find_in(None, &path, &lake, None)
                .await
                .unwrap()
                .expect("a table is found");
            assert_eq!(found.format(), format);
            assert_not_built(found.snapshot().await.unwrap_err(), format.name());
            assert_not_built(snapshot(&path, &lake).await.unwrap_err(), format.name());
            let opened = Table::open(path.as_str(), &lake).await;
            assert_not_built(opened.unwrap_err(), format.name());
            let located = Table::locate(path.as_str(), &lake).await.unwrap();
            assert_eq!(located.format(), Some(format));
            let add = backfill::Rewrite::Resize {
                fpp: 0.01,
                columns: vec![],
            };
            let written = backfill::write_table(&located, &add, &mut |_, _| {}).await;
            assert_not_built(written.unwrap_err(), format.name());
        }
        let delta = testdata("delta_basic");
        assert_not_built(commit_mark(&delta, 0).await.unwrap_err(), "Delta");
        let found = find_in(None, &delta, &lake, None).await.unwrap().unwrap();
        let mark = since::CommitMark {
            size: 1,
            etag: "e".into(),
        };
        assert_not_built(found.delta_since(0, &mark).await.unwrap_err(), "Delta");
        let catalog = catalog::Catalog::new(
            &format!("sqlite://{}", testdata("iceberg/catalog.db")),
            None,
        );
        let located = catalog::metadata_location(&catalog, "ns.ice_basic").await;
        assert_not_built(located.unwrap_err(), "Iceberg");
        // A plain folder is still no table, and read as files.
        let plain = format!("{}/../../testdata", env!("CARGO_MANIFEST_DIR"));
        assert!(find_in(None, &plain, &lake, None).await.unwrap().is_none());
    }
}

/// A build without the feature `object_store` refuses a store's URL before any request, with
/// the feature to build in, and never reads it as "no table".
#[cfg(all(test, not(feature = "object_store")))]
mod without_object_stores {
    use super::*;

    #[tokio::test]
    async fn store_urls_are_refused_with_the_feature() {
        for url in ["s3://bucket/t/", "gs://bucket/t/", "az://c/t/"] {
            let e = detect_in(None, url, None).await.expect_err(url);
            assert!(
                matches!(
                    e,
                    Error::Read(sbbf_parquet::ReadError::StoreNotBuilt { .. })
                ),
                "{url}: {e}"
            );
            assert!(e.to_string().contains("features object_store"), "{e}");
            let found = Table::locate(url, &LakeOptions::default()).await;
            assert!(found.is_err(), "{url}");
        }
        let Err(e) = object::store_from_url("https://h.example/t/x.parquet") else {
            panic!("an HTTP URL is read by a build without object stores");
        };
        assert!(e.to_string().contains("reads no HTTP objects"), "{e}");
    }
}
