//! Listing a table's files when the table is made ([`list_table`]): a local glob's files as
//! every other command finds them, a directory's or prefix's as DataFusion lists them
//! without hidden names below the root (`crate::filtered`), a local symbolic link loop walked
//! around, and the hive partition folders (`year=2024/`) read as columns.

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::listing::{ListingTableConfig, ListingTableUrl};
use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::ObjectStore;
use sbbf_lake::{Deletes, Format, Snapshot, StoreRoot};
use sbbf_lake::{LakeOptions, TableVersion};
use std::sync::Arc;

/// The store of `url` and the files DataFusion lists under it.
pub(crate) async fn list_files(
    state: &dyn Session,
    url: &ListingTableUrl,
    ext: &str,
) -> Result<(Arc<dyn ObjectStore>, Vec<object_store::ObjectMeta>)> {
    use futures::TryStreamExt;
    let store = state.runtime_env().object_store(url)?;
    let files = url
        .list_all_files(state, store.as_ref(), ext)
        .await?
        .try_collect()
        .await?;
    Ok((store, files))
}

/// The hive partitions of the table at `url` (`year=2024/month=01/x.parquet`): each key of
/// the `key=value` folders every file sits in, in order, typed as DuckDB infers them
/// (`BIGINT` when every value is an integer written as one, `01` is not; else a string).
/// None when some file's folders do not name the same keys in the same order: DataFusion
/// would leave such files out of the table, and no file may go missing. Then, when some
/// file is in `key=value` folders, why those keys are no columns (DuckDB would read them,
/// null for the other files): to say.
fn hive_partitions(
    url: &ListingTableUrl,
    files: &[object_store::ObjectMeta],
) -> (Vec<(String, DataType)>, Option<String>) {
    // Each file's keys, or None when a folder on its way is no `key=value` one.
    let layout = |f: &object_store::ObjectMeta| -> Option<(Vec<String>, Vec<String>)> {
        let mut parts: Vec<&str> = url.strip_prefix(&f.location)?.collect();
        parts.pop(); // the file's own name
        let mut keys = Vec::with_capacity(parts.len());
        let mut values = Vec::with_capacity(parts.len());
        for part in parts {
            match part.split_once('=') {
                Some((k, v)) if !k.is_empty() => {
                    keys.push(k.to_string());
                    values.push(v.to_string());
                }
                _ => return None,
            }
        }
        Some((keys, values))
    };
    let mut keys: Option<Vec<String>> = None;
    let mut integer: Vec<bool> = Vec::new();
    // The first file in `key=value` folders and the first whose layout differs from it.
    let mut odd: Option<&object_store::ObjectMeta> = None;
    for f in files {
        let Some((these, values)) = layout(f) else {
            odd = Some(f);
            break;
        };
        match &keys {
            None => {
                integer = vec![true; these.len()];
                keys = Some(these);
            }
            Some(k) if *k != these => {
                odd = Some(f);
                break;
            }
            Some(_) => {}
        }
        for (i, v) in values.iter().enumerate() {
            // As DuckDB: an integer only if it reads back the same (`01` stays a string).
            integer[i] &= v.parse::<i64>().is_ok_and(|n| n.to_string() == *v);
        }
    }
    let Some(odd) = odd else {
        let partitions = keys
            .unwrap_or_default()
            .into_iter()
            .zip(integer)
            .map(|(k, int)| (k, if int { DataType::Int64 } else { DataType::Utf8 }))
            .collect();
        return (partitions, None);
    };
    // Keys named by the folders of some file: those a reader might expect as columns.
    let hive = files.iter().find_map(|f| {
        let parts: Vec<&str> = url.strip_prefix(&f.location)?.collect();
        let keys: Vec<&str> = parts[..parts.len().saturating_sub(1)]
            .iter()
            .filter_map(|p| p.split_once('=').map(|(k, _)| k).filter(|k| !k.is_empty()))
            .collect();
        (!keys.is_empty()).then(|| (f, keys.join(", ")))
    });
    let why = hive.map(|(f, keys)| {
        let other = if std::ptr::eq(f, odd) {
            files.first().unwrap_or(f)
        } else {
            odd
        };
        format!(
            "the hive partition folders ({keys}) are not read as columns: {} is in them and \
             {} is not in the same key=value folders (every file is read)",
            object_name(url, &f.location),
            object_name(url, &other.location)
        )
    });
    (Vec::new(), why)
}

/// Every object the file URLs `urls` name (a glob's files), in one store.
async fn objects_of(
    state: &dyn Session,
    urls: &[ListingTableUrl],
) -> Result<(Arc<dyn ObjectStore>, Vec<object_store::ObjectMeta>)> {
    let mut store = None;
    let mut out = Vec::with_capacity(urls.len());
    for u in urls {
        let (s, files) = list_files(state, u, "").await?;
        store.get_or_insert(s);
        out.extend(files);
    }
    let store = match store {
        Some(s) => s,
        None => state
            .runtime_env()
            .object_store(ObjectStoreUrl::local_filesystem())?,
    };
    Ok((store, out))
}

/// Where an object of the table at `url` is, as a user names it: a local path, or a URL.
pub(crate) fn object_name(url: &ListingTableUrl, location: &object_store::path::Path) -> String {
    if url.scheme() == "file" {
        format!("/{location}")
    } else {
        format!("{}{location}", url.object_store().as_str())
    }
}

/// The files a local glob names, as [`sbbf_parquet::source::local_files`] finds them (and so
/// every other command), or `None` for a path that is no local glob.
fn local_glob_files(path: &str) -> Result<Option<Vec<ListingTableUrl>>> {
    if sbbf_parquet::source::object::is_remote_url(path) || !path.contains(['*', '?', '[']) {
        return Ok(None);
    }
    local_listing(path).map(Some)
}

/// The files of a local path as [`sbbf_parquet::source::local_files`] finds them, those that
/// can be opened (a link to nothing is left out: it holds no row).
fn local_listing(path: &str) -> Result<Vec<ListingTableUrl>> {
    let files = sbbf_parquet::source::local_files(path)
        .map_err(|e| datafusion::common::DataFusionError::External(Box::new(e)))?;
    files
        .iter()
        .filter(|f| f.exists())
        .map(|f| ListingTableUrl::parse(f.to_string_lossy()))
        .collect()
}

/// Whether DataFusion's listing failed on a symbolic link loop: the local store's walk
/// (walkdir's loop error, wrapped by `object_store`'s local store).
fn is_loop(e: &datafusion::common::DataFusionError) -> bool {
    sbbf_parquet::source::is_fs_loop(e)
}

/// A table's files, listed once when the table is made: for its partition keys, its schema
/// and its listing table's configuration.
pub(crate) struct TableFiles {
    /// The store the files are in.
    pub(crate) store: Arc<dyn ObjectStore>,
    /// The files, without those under a hidden name below the root.
    pub(crate) files: Vec<object_store::ObjectMeta>,
    /// The listing table's paths: the table's URL, a view of its store that leaves hidden
    /// files out, or the file URLs of a local glob or of a walk that met a loop.
    pub(crate) config: ListingTableConfig,
    /// The hive partition columns (none for a glob, a single file or a walk that met a loop).
    pub(crate) partitions: Vec<(String, DataType)>,
    /// What listing met and went around, to show once each.
    pub(crate) warnings: Vec<String>,
    /// Whether the schema merges those of all files (else: the first file's, as for a
    /// local glob).
    pub(crate) merge: bool,
    /// The table version read, when the path is a Delta or Iceberg table.
    pub(crate) table: Option<TableVersion>,
    /// How a lake table's files name its columns, when not as the table does.
    pub(crate) columns: Option<Arc<crate::lake::Columns>>,
    /// A Delta table's deletion vectors, when any file has one.
    pub(crate) deleted: Option<Arc<crate::lake::Deleted>>,
    /// A lake table's per-file bounds, when any file has some.
    pub(crate) bounds: Option<Arc<crate::lake::FileBounds>>,
    /// A lake table's file schema as its snapshot types it, when it can (no footer read).
    pub(crate) schema: Option<SchemaRef>,
    /// A Delta table's partition values by file, from its log (not its folder names).
    pub(crate) partition_values: Option<Arc<crate::lake::PartitionValues>>,
    /// A lake table's snapshot (its index is asked through it), and the object path of each
    /// of its files, in its order, as the listing names them.
    pub(crate) snapshot: Option<(Arc<Snapshot>, Vec<object_store::path::Path>)>,
}

/// The files of the table at `path` (parsed as `url`) with extension `ext`: a local glob's
/// as every other command finds them; a directory's or prefix's as DataFusion lists them,
/// hidden names below the root left out (through a store view registered in the session)
/// and a local symbolic link loop walked around; anything else as DataFusion lists it.
pub(crate) async fn list_table(
    state: &dyn Session,
    path: &str,
    url: &ListingTableUrl,
    ext: &str,
    lake: &LakeOptions,
    known: impl std::future::Future<Output = Option<sbbf_lake::since::KnownSnapshot>> + Send + 'static,
) -> Result<TableFiles> {
    // A remote table is read through the session's store for its URL (the one the scan
    // reads through), not one configured anew from the environment.
    let root = match sbbf_parquet::source::object::is_remote_url(path) {
        true => Some(sbbf_lake::StoreRoot::with_store(
            state.runtime_env().object_store(url)?,
            AsRef::<url::Url>::as_ref(&url.object_store()).clone(),
        )),
        false => None,
    };
    let table = sbbf_lake::Table::open_known(root, path, lake, known)
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    if let Some(snap) = table.snapshot() {
        return lake_table(state, path, ext, Arc::clone(snap)).await;
    }
    let mut warnings = Vec::new();
    // The table's files, listed once: for its partition keys and its schema.
    // A local glob names the files `sbbf probe` and a shell name: `*` stays inside one
    // folder (DataFusion's own glob matching lets it cross folders).
    let local_glob = local_glob_files(path)?;
    // A local glob's schema is its first file's, as DataFusion takes the schema of a list
    // of files; any other table's merges those of all its files.
    let merge = local_glob.is_none();
    let ((store, files), config, partitions) = match local_glob {
        Some(urls) => (
            objects_of(state, &urls).await?,
            ListingTableConfig::new_with_multi_paths(urls),
            Vec::new(),
        ),
        None if url.is_collection() => match list_files(state, url, ext).await {
            Ok((store, files)) => {
                // Names starting with `_` or `.` below the root are not the table's
                // (a Spark job's `_temporary/`, `.hidden` files): when there are any,
                // the table lists through a view of its store that leaves them out.
                let before = files.len();
                let files: Vec<object_store::ObjectMeta> = files
                    .into_iter()
                    .filter(|m| !crate::filtered::hidden_below(url.prefix(), &m.location))
                    .collect();
                let cannot = |what: &str| {
                    datafusion::common::DataFusionError::Plan(format!(
                        "{path}: cannot list it {what}"
                    ))
                };
                let table_url = if sbbf_parquet::source::object::is_remote_url(path) {
                    // A prefix is listed once per table: its scans, the index's check and
                    // `--stats` list these files through a view that answers from them (a
                    // listing costs a request per 1,000 names). What changes after this
                    // listing is not seen: the query reads the prefix as listed here.
                    crate::filtered::snapshot_url(
                        state.runtime_env(),
                        url,
                        Arc::clone(&store),
                        files.clone(),
                    )
                    .ok_or_else(|| cannot("once"))?
                } else if files.len() < before {
                    crate::filtered::visible_url(state.runtime_env(), url, Arc::clone(&store))
                        .ok_or_else(|| cannot("without its hidden files"))?
                } else {
                    url.clone()
                };
                let (partitions, why) = hive_partitions(url, &files);
                warnings.extend(why.map(|w| format!("{path}: {w}")));
                (
                    (store, files),
                    ListingTableConfig::new(table_url),
                    partitions,
                )
            }
            // DataFusion's walk of a local directory stops at a symbolic link loop:
            // the files are then found as every other command finds them (a loop is
            // not entered), and the table says so once.
            Err(e) if !sbbf_parquet::source::object::is_remote_url(path) && is_loop(&e) => {
                warnings.push(format!(
                    "{path}: {e}; the loop is not followed (each file below {path} \
                         is read once)"
                ));
                let urls = local_listing(path)?;
                (
                    objects_of(state, &urls).await?,
                    ListingTableConfig::new_with_multi_paths(urls),
                    Vec::new(),
                )
            }
            Err(e) => return Err(e),
        },
        None => (
            list_files(state, url, ext).await?,
            ListingTableConfig::new(url.clone()),
            Vec::new(),
        ),
    };
    Ok(TableFiles {
        store,
        files,
        config,
        partitions,
        warnings,
        merge,
        table: None,
        columns: None,
        deleted: None,
        bounds: None,
        schema: None,
        partition_values: None,
        snapshot: None,
    })
}

/// A Delta or Iceberg table as its snapshot: the folder listed once, and only the files the
/// snapshot names kept (through a view of the store that lists nothing else); a file it
/// names that storage lacks is an error naming it. Columns are matched to each file's fields
/// by field id or physical name, and Delta deletion vectors and Iceberg position deletes
/// leave their rows out of the scan (`crate::lake`), and so do the rows Iceberg equality
/// deletes match. What the scan cannot apply yet (Iceberg v3 deletion vectors) is refused,
/// naming the feature: a count that includes deleted rows would be silently wrong.
async fn lake_table(
    state: &dyn Session,
    path: &str,
    ext: &str,
    snap: Arc<Snapshot>,
) -> Result<TableFiles> {
    let refuse = |feature: String| {
        DataFusionError::External(Box::new(sbbf_parquet::Error::from(
            sbbf_lake::LakeError::Unsupported {
                format: snap.format.name(),
                table: path.to_string(),
                feature: format!("{feature} in a query"),
            },
        )))
    };
    // Delta's deletion vectors and Iceberg's position and equality delete files are applied
    // (`crate::lake::Deleted`); Iceberg's v3 deletion vectors not yet.
    let unread = |f: &&sbbf_lake::DataFile| {
        snap.format == Format::Iceberg && matches!(f.deletes, Deletes::Vector { .. })
    };
    if snap.files_with_deletes().any(|f| unread(&f)) {
        let n = snap.files_with_deletes().filter(unread).count();
        return Err(refuse(format!("deletion vectors on {n} data file(s)")));
    }
    // The folder the files lie below: a Delta table's root; an Iceberg table's files are
    // wherever its manifests say, so the deepest folder above them all.
    let root = match snap.format {
        Format::Delta => table_folder(path),
        Format::Iceberg => common_folder(snap.files.iter().map(|f| f.url.as_str()))
            .unwrap_or_else(|| table_folder(path)),
    };
    let root_url = ListingTableUrl::parse(&root)?;
    let at = match sbbf_parquet::source::object::is_remote_url(&root) {
        true => StoreRoot::for_url(&root),
        false => Ok(StoreRoot::local()),
    }
    .map_err(|e| DataFusionError::External(Box::new(e)))?;
    // The files as the snapshot describes them: the data folder is never listed. A local
    // file the snapshot names and the disk lacks is named now; a remote one when it is read.
    if !sbbf_parquet::source::object::is_remote_url(&root) {
        let local =
            sbbf_lake::local_files(&snap).map_err(|e| DataFusionError::External(Box::new(e)))?;
        if let Some((_, missing)) = local.iter().find(|(_, p)| !p.is_file()) {
            let e = sbbf_lake::LakeError::MissingFile {
                format: snap.format.name(),
                table: path.to_string(),
                file: missing.display().to_string(),
            };
            return Err(DataFusionError::External(Box::new(
                sbbf_parquet::Error::from(e),
            )));
        }
    }
    let mut files = Vec::with_capacity(snap.files.len());
    let mut paths = Vec::with_capacity(snap.files.len());
    for f in &snap.files {
        let location = at
            .path_of(&f.url)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        paths.push(location.clone());
        if !f.url.ends_with(ext) {
            continue;
        }
        files.push(object_store::ObjectMeta {
            location,
            last_modified: Default::default(),
            size: f.size,
            e_tag: None,
            version: None,
        });
    }
    let store = state.runtime_env().object_store(&root_url)?;
    let table_url = crate::filtered::snapshot_url(
        state.runtime_env(),
        &root_url,
        Arc::clone(&store),
        files.clone(),
    )
    .ok_or_else(|| DataFusionError::Plan(format!("{path}: cannot list its snapshot's files")))?;
    // Delta keeps partition values out of the files, and the folders they lie in need not
    // name them (`p=1/` as deltalake writes without column mapping; `52/` or `col-<uuid>=1/`
    // under it; any layout at all, for the protocol): the scan declares the partition
    // columns itself and takes each file's values from the log (`PartitionValues`), typed as
    // the table's schema types them (text where it names no type known here). DataFusion's
    // listing is told of none: it would drop every file whose folders do not name them.
    // Iceberg data files hold their partition source columns.
    let typed: Vec<(String, DataType)> = match snap.format {
        Format::Delta => snap
            .partition_columns
            .iter()
            .map(|name| {
                let t = snap
                    .columns
                    .iter()
                    .find(|c| &c.name == name)
                    .and_then(|c| c.data_type.as_deref())
                    .and_then(|t| sbbf_lake::arrow_types::arrow_type(snap.format, t));
                (name.clone(), t.unwrap_or(DataType::Utf8))
            })
            .collect(),
        Format::Iceberg => Vec::new(),
    };
    let (table, columns) = (
        Some(snap.table_version()),
        crate::lake::Columns::of(&snap, path).map(Arc::new),
    );
    let warnings = snap.notes.iter().map(|n| format!("{path}: {n}")).collect();
    let partition_values = crate::lake::PartitionValues::of(&snap, &at, &typed)?;
    let bounds = crate::lake::FileBounds::of(&snap, &at, partition_values.as_ref())?.map(Arc::new);
    let views = state
        .config_options()
        .execution
        .parquet
        .schema_force_view_types;
    let schema = crate::lake::snapshot_schema(&snap, views).map(Arc::new);
    let kept = Arc::clone(&snap);
    Ok(TableFiles {
        store,
        files,
        config: ListingTableConfig::new(table_url),
        partitions: Vec::new(),
        warnings,
        merge: true,
        table,
        columns,
        deleted: crate::lake::Deleted::of(snap, at)?.map(Arc::new),
        bounds,
        schema,
        partition_values: partition_values.map(Arc::new),
        snapshot: Some((kept, paths)),
    })
}

/// The folder of the table `path` names ([`sbbf_lake::table_folder`]) as a
/// listing URL: an object-store URL, or an absolute local path, ending in `/`.
fn table_folder(path: &str) -> String {
    let p = sbbf_lake::table_folder(path);
    match sbbf_parquet::source::object::is_remote_url(p) {
        true => format!("{p}/"),
        false => {
            let abs = std::fs::canonicalize(p).unwrap_or_else(|_| p.into());
            format!("{}/", abs.display())
        }
    }
}

/// The deepest folder above every location (URLs), as a URL or local path ending in `/`.
fn common_folder<'a>(mut urls: impl Iterator<Item = &'a str>) -> Option<String> {
    let first = urls.next()?;
    let mut common = first.rsplit_once('/')?.0.to_string();
    for u in urls {
        while !u.starts_with(&format!("{common}/")) {
            common = common.rsplit_once('/')?.0.to_string();
        }
    }
    let folder = format!("{common}/");
    Some(match folder.strip_prefix("file://") {
        Some(local) => local.to_string(),
        None => folder,
    })
}
