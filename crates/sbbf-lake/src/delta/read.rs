//! A Delta snapshot through Delta's kernel (`delta_kernel`): the snapshot at a version or a
//! time, its data files with their sizes, row counts, partition values and deletion vectors.
//!
//! The kernel replays the log (checkpoints and commits) and refuses what it cannot read (a
//! reader version above 3, unknown reader features); its refusal is this module's error, in
//! the kernel's words. Its API is synchronous, so it runs on the blocking pool.

use super::log::{to_read, LogLook};
use crate::whole::WholeObjects;
use crate::LakeError;
use crate::{AsOf, DataFile, Deletes, Format, LakeColumn, Snapshot, StoreRoot};
use delta_kernel::engine_data::{FilteredRowVisitor, GetData, RowIndexIterator, TypedGetData};
use delta_kernel::expressions::ColumnName;
use delta_kernel::history_manager::{latest_version_as_of, HistoryCommitType};
use delta_kernel::scan::state::{DvInfo, ScanFile};
use delta_kernel::schema::DataType;
use delta_kernel::schema::{ColumnMetadataKey, MetadataValue};
use delta_kernel::Snapshot as KernelSnapshot;
use delta_kernel_default_engine::DefaultEngineBuilder;
use futures::TryStreamExt;
use object_store::{ObjectMeta, ObjectStore};
use sbbf_parquet::Error;
use std::collections::HashMap;
use std::sync::Arc;
use url::Url;

/// Reads the snapshot of the Delta table at `url`, `arg` being how the user named it; `look`:
/// what finding the table on a store learnt of its log.
pub(crate) async fn snapshot(
    root: &StoreRoot,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
    look: Option<LogLook>,
) -> Result<Snapshot, Error> {
    // Each log object read once, whole (see `whole`), and on a store what the kernel will
    // read asked for at once.
    let store = Arc::new(WholeObjects::new(root.store()));
    if let Some(look) = look {
        warm(&store, look, as_of).await;
    }
    let (table, url) = (arg.to_string(), url.clone());
    tokio::task::spawn_blocking(move || read(store, &table, &url, as_of))
        .await
        .map_err(|e| kernel_error(arg, e))?
}

/// Gives the kernel's store view what finding the table learnt (the listing, and the checkpoint
/// hint when the listing is not whole) and reads ahead, at once, the objects the kernel will
/// ask for one after another: on a store, the snapshot opens in two round trips (four when
/// the log is longer than a listing page: the hint, then the listing from it) where the
/// kernel alone takes five or more.
async fn warm(store: &WholeObjects, look: LogLook, as_of: Option<AsOf>) {
    let LogLook {
        log,
        entries,
        complete,
        last_checkpoint,
    } = look;
    let hint = log.clone().join("_last_checkpoint");
    let mut checkpoint = None;
    if let Some(read) = last_checkpoint {
        checkpoint = read.as_ref().and_then(|(_, bytes)| {
            let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
            v.get("version")?.as_u64()
        });
        store.know_object(hint.clone(), read);
    }
    let target = match as_of {
        Some(AsOf::Version(v)) => u64::try_from(v).ok(),
        _ => None,
    };
    let reads = if complete {
        // The whole log is listed, so the listing names the newest checkpoint: the hint, which
        // only says where to start listing, is not read (to the kernel it is absent, and it
        // lists from the start: the listing at hand).
        store.know_object(hint, None);
        let reads = to_read(&log, &entries, target);
        store.know_listing(log, None, entries);
        reads
    } else if let Some(c) = checkpoint {
        // The log is longer than a page: list from the checkpoint on, as the kernel would.
        let from = log.clone().join(format!("{c:020}"));
        let inner = store.inner();
        let rest: Result<Vec<ObjectMeta>, _> = inner
            .list_with_offset(Some(&log), &from)
            .try_collect()
            .await;
        match rest {
            Ok(rest) => {
                let reads = to_read(&log, &rest, target);
                store.know_listing(log, Some(from), rest);
                reads
            }
            Err(_) => return,
        }
    } else {
        return;
    };
    store.read_ahead(reads).await;
}

fn kernel_error(table: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    LakeError::Delta {
        table: table.to_string(),
        source: Box::new(e),
    }
    .into()
}

/// The deletion vectors of a Delta snapshot's files, read when asked: a table of many files
/// with vectors costs one read per file whose rows are wanted, not one per file at open.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vectors {
    /// The table's root, which relative vector paths are below.
    root: Option<Url>,
    /// Each file's vector, by the file's URL.
    by_file: HashMap<String, DvInfo>,
}

impl Vectors {
    pub(crate) async fn deleted_rows(
        &self,
        store: &StoreRoot,
        table: &str,
        file: &str,
        rows: Option<u64>,
    ) -> Result<Option<Vec<u64>>, Error> {
        let (Some(root), Some(dv)) = (self.root.clone(), self.by_file.get(file).cloned()) else {
            return Ok(None);
        };
        let store = store.store();
        let name = table.to_string();
        let read = tokio::task::spawn_blocking(move || {
            let engine = DefaultEngineBuilder::new(store).build();
            dv.get_row_indexes(&engine, &root)
        })
        .await
        .map_err(|e| kernel_error(table, e))?
        .map_err(|e| kernel_error(table, e))?;
        let Some(mut deleted) = read else {
            return Ok(None);
        };
        deleted.sort_unstable();
        deleted.dedup();
        if let (Some(rows), Some(&last)) = (rows, deleted.last()) {
            if last >= rows {
                return Err(LakeError::Delta {
                    table: name,
                    source: format!(
                        "the deletion vector of {file} deletes row {last}, and the file has \
                         {rows} rows"
                    )
                    .into(),
                }
                .into());
            }
        }
        Ok(Some(deleted))
    }
}

/// Each scan file's `stats` JSON, by its path as the log writes it: the kernel's own scan
/// file visitor keeps only the row count.
#[derive(Default)]
struct StatsOf {
    by_path: HashMap<String, String>,
}

impl FilteredRowVisitor for StatsOf {
    fn selected_column_names_and_types(&self) -> (&'static [ColumnName], &'static [DataType]) {
        static NAMES: std::sync::LazyLock<[ColumnName; 2]> =
            std::sync::LazyLock::new(|| [ColumnName::new(["path"]), ColumnName::new(["stats"])]);
        static TYPES: [DataType; 2] = [DataType::STRING, DataType::STRING];
        (&*NAMES, &TYPES)
    }

    fn visit_filtered<'a>(
        &mut self,
        getters: &[&'a dyn GetData<'a>],
        rows: RowIndexIterator<'_>,
    ) -> delta_kernel::KernelResult<()> {
        for row in rows {
            let path: Option<String> = getters[0].get_opt(row, "path")?;
            let stats: Option<String> = getters[1].get_opt(row, "stats")?;
            if let (Some(p), Some(st)) = (path, stats) {
                self.by_path.insert(p, st);
            }
        }
        Ok(())
    }
}

/// One scan file, as the visitor keeps it (the callback is a plain `fn`).
struct Seen {
    path: String,
    size: i64,
    rows: Option<u64>,
    partition: HashMap<String, String>,
    deletes: Deletes,
    dv: Option<DvInfo>,
}

fn keep(seen: &mut Vec<Seen>, f: ScanFile) {
    let deletes = match f.dv_info.has_vector() {
        true => Deletes::Vector {
            rows: f.dv_info.cardinality().ok().flatten(),
        },
        false => Deletes::None,
    };
    seen.push(Seen {
        path: f.path,
        size: f.size,
        rows: f.stats.as_ref().map(|s| s.num_records),
        partition: f.partition_values,
        deletes,
        dv: f.dv_info.has_vector().then_some(f.dv_info),
    });
}

fn read(
    store: Arc<WholeObjects>,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
) -> Result<Snapshot, Error> {
    let store: Arc<dyn ObjectStore> = store;
    let engine = DefaultEngineBuilder::new(store).build();
    let snap = kernel_snapshot(&engine, arg, url, as_of)?;
    let version = i64::try_from(snap.version()).unwrap_or(i64::MAX);
    let timestamp_ms = snap.get_timestamp(&engine).ok();
    let Columns {
        partition_columns,
        physical,
        inner_physical,
        columns,
    } = columns_of(&snap);
    let (files, vectors) = data_files(&snap, &engine, arg, url, &columns, &physical)?;
    Ok(Snapshot {
        format: Format::Delta,
        location: arg.to_string(),
        version,
        timestamp_ms,
        metadata: None,
        partition_columns,
        files,
        columns,
        notes: Vec::new(),
        vectors,
        positions: Default::default(),
        equalities: Default::default(),
        inner_physical,
        log_reads: Default::default(),
        data_manifests: None,
        data_only_list: None,
    })
}

/// The kernel's snapshot of the table at `url` at `as_of` (a version, or the newest committed
/// at or before a time), else the latest; a version the log lacks is [`no_such`].
fn kernel_snapshot(
    engine: &dyn delta_kernel::Engine,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
) -> Result<Arc<KernelSnapshot>, Error> {
    let err = |e| kernel_error(arg, e);
    let root = url.as_str();
    let latest = || KernelSnapshot::builder_for(root).build(engine).map_err(err);
    Ok(match as_of {
        None => latest()?,
        Some(AsOf::Version(v)) => {
            let v = u64::try_from(v).map_err(|_| no_such(arg, format!("version {v}")))?;
            KernelSnapshot::builder_for(root)
                .at_version(v)
                .build(engine)
                .map_err(|e| {
                    // A version past the log's end is no snapshot; else the kernel's reason.
                    match latest() {
                        Ok(l) if l.version() < v => {
                            no_such(arg, format!("version {v} (the latest is {})", l.version()))
                        }
                        _ => no_such(arg, format!("version {v} ({e})")),
                    }
                })?
        }
        Some(AsOf::TimestampMs(t)) => {
            let latest = latest()?;
            let at = latest_version_as_of(&latest, engine, t, HistoryCommitType::Recreatable)
                .map_err(|e| no_such(arg, format!("committed at or before {t} ms ({e})")))?;
            KernelSnapshot::builder_for(root)
                .at_version(at.version)
                .build(engine)
                .map_err(err)?
        }
    })
}

/// What a snapshot's schema says of its columns: the partition columns (by name, and by the
/// physical name partition values are keyed by), the physical names inside nested columns
/// under column mapping, and every top-level column.
struct Columns {
    partition_columns: Vec<String>,
    physical: Vec<(String, String)>,
    inner_physical: HashMap<String, Vec<crate::PathPair>>,
    columns: Vec<LakeColumn>,
}

fn columns_of(snap: &KernelSnapshot) -> Columns {
    let partition_columns: Vec<String> = snap
        .table_configuration()
        .logical_partition_columns()
        .to_vec();
    // Partition values are keyed by physical name under column mapping.
    let schema = snap.schema();
    let physical: Vec<(String, String)> = partition_columns
        .iter()
        .map(|name| {
            let phys = schema
                .field(name)
                .and_then(|f| {
                    match f.get_config_value(&ColumnMetadataKey::ColumnMappingPhysicalName) {
                        Some(MetadataValue::String(p)) => Some(p.clone()),
                        _ => None,
                    }
                })
                .unwrap_or_else(|| name.clone());
            (name.clone(), phys)
        })
        .collect();
    // Under column mapping the fields inside a nested column have physical names too.
    let mut inner_physical = HashMap::new();
    if physical_name(schema.fields().next()).is_some() {
        for f in schema.fields() {
            let mut leaves = Vec::new();
            physical_leaves(
                f.data_type(),
                &mut Vec::new(),
                &mut Vec::new(),
                &mut leaves,
                0,
            );
            if !leaves.is_empty() {
                inner_physical.insert(f.name().to_string(), leaves);
            }
        }
    }
    // Readers resolve fields by id in `id` mode and by physical name in `name` mode.
    let by_id = snap
        .table_configuration()
        .metadata()
        .configuration()
        .get("delta.columnMapping.mode")
        .is_some_and(|m| m == "id");
    let columns: Vec<LakeColumn> = schema
        .fields()
        .map(|f| LakeColumn {
            name: f.name().to_string(),
            physical: match f.get_config_value(&ColumnMetadataKey::ColumnMappingPhysicalName) {
                Some(MetadataValue::String(p)) if p != f.name() => Some(p.clone()),
                _ => None,
            },
            field_id: f.column_mapping_id(),
            earlier_names: Vec::new(),
            // Delta renames only under column mapping, where inner fields have physical
            // names of their own (`Snapshot::inner_physical`).
            inner_renamed: false,
            inner: Vec::new(),
            inner_names: match inner_physical.contains_key(f.name()) {
                true => {
                    let mut names = Vec::new();
                    mapped_names(f.data_type(), by_id, &mut Vec::new(), &mut names, 0);
                    names
                }
                false => Vec::new(),
            },
            data_type: Some(f.data_type().to_string()),
            // Delta's partition columns are in no file (`Snapshot::partition_columns`), and
            // its column defaults are written into files, never read in their place.
            missing_not_null: false,
        })
        .collect();
    Columns {
        partition_columns,
        physical,
        inner_physical,
        columns,
    }
}

/// The snapshot's data files (URL, size, rows, partition values by table name, deletes,
/// statistics as bounds) and their deletion vectors, from the kernel's scan of it.
fn data_files(
    snap: &Arc<KernelSnapshot>,
    engine: &dyn delta_kernel::Engine,
    arg: &str,
    url: &Url,
    columns: &[LakeColumn],
    physical: &[(String, String)],
) -> Result<(Vec<DataFile>, Vectors), Error> {
    let err = |e| kernel_error(arg, e);
    let scan = Arc::clone(snap).scan_builder().build().map_err(err)?;
    let mut seen: Vec<Seen> = Vec::new();
    let mut stats = StatsOf::default();
    for meta in scan.scan_metadata(engine).map_err(err)? {
        let meta = meta.map_err(err)?;
        stats.visit_rows_of(&meta.scan_files).map_err(err)?;
        seen = meta.visit_scan_files(seen, keep).map_err(err)?;
    }
    // A string statistic of this many characters may be a cut prefix.
    let prefix = snap
        .table_configuration()
        .metadata()
        .configuration()
        .get("delta.dataSkippingStringPrefixLength")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(32)
        .min(32);
    let mut files = Vec::with_capacity(seen.len());
    let mut vectors = Vectors {
        root: Some(url.clone()),
        by_file: HashMap::new(),
    };
    for s in seen {
        // Paths are relative to the table root (percent-encoded) or absolute URLs.
        let file_url = url.join(&s.path).map_err(|_| LakeError::BadLocation {
            location: s.path.clone(),
        })?;
        let partition = physical
            .iter()
            .map(|(name, phys)| (name.clone(), s.partition.get(phys).cloned()))
            .collect();
        if let Some(dv) = s.dv {
            vectors.by_file.insert(file_url.to_string(), dv);
        }
        let bounds = match stats.by_path.get(&s.path) {
            Some(text) => crate::bounds::delta(text, columns, prefix),
            None => Vec::new(),
        };
        files.push(DataFile {
            bounds,
            url: file_url.to_string(),
            size: u64::try_from(s.size).unwrap_or(0),
            rows: s.rows,
            partition,
            deletes: s.deletes,
        });
    }
    Ok((files, vectors))
}

/// A struct field's physical name under column mapping.
pub(crate) fn physical_name(f: Option<&delta_kernel::schema::StructField>) -> Option<String> {
    match f?.get_config_value(&ColumnMetadataKey::ColumnMappingPhysicalName) {
        Some(MetadataValue::String(p)) => Some(p.clone()),
        _ => None,
    }
}

/// The deepest nesting walked (the schema comes from the log: untrusted).
const MAX_DEPTH: usize = 64;

/// Notes each leaf below the type `t` as (path as the table names it, path as files name it),
/// in path segments: a struct's field by its name and by its physical name; a list's two
/// Parquet levels (`list.element`, or `list.item` as arrow's writer names them) as `*`, which
/// any segment matches and is kept as asked; a map's as `*` then `key` or `value`.
fn physical_leaves(
    t: &DataType,
    logical: &mut Vec<String>,
    physical: &mut Vec<String>,
    out: &mut Vec<crate::PathPair>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut step = |segs: &[String], phys: &[String], t: &DataType, out: &mut Vec<_>| {
        logical.extend_from_slice(segs);
        physical.extend_from_slice(phys);
        physical_leaves(t, logical, physical, out, depth + 1);
        logical.truncate(logical.len() - segs.len());
        physical.truncate(physical.len() - phys.len());
    };
    let any = || "*".to_string();
    match t {
        DataType::Struct(s) => {
            for f in s.fields() {
                let name = f.name().to_string();
                let phys = physical_name(Some(f)).unwrap_or_else(|| name.clone());
                step(&[name], &[phys], f.data_type(), out);
            }
        }
        DataType::Array(a) => step(&[any(), any()], &[any(), any()], a.element_type(), out),
        DataType::Map(m) => {
            for (part, t) in [("key", m.key_type()), ("value", m.value_type())] {
                let segs = [any(), part.to_string()];
                step(&segs, &segs, t, out);
            }
        }
        _ if !logical.is_empty() => out.push((logical.clone(), physical.clone())),
        _ => {}
    }
}

/// Notes every struct field below `t` under column mapping: its logical name, its path
/// below the column as files name it (physical names; `element`, `key`, `value` for a
/// list's and a map's own levels) and, in `id` mode, its field id.
fn mapped_names(
    t: &DataType,
    by_id: bool,
    path: &mut Vec<String>,
    out: &mut Vec<crate::InnerName>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let below = |segment: String, t: &DataType, path: &mut Vec<String>, out: &mut Vec<_>| {
        path.push(segment);
        mapped_names(t, by_id, path, out, depth + 1);
        path.pop();
    };
    match t {
        DataType::Struct(s) => {
            for f in s.fields() {
                let phys = physical_name(Some(f)).unwrap_or_else(|| f.name().to_string());
                let mut physical = path.clone();
                physical.push(phys.clone());
                out.push(crate::InnerName {
                    id: f.column_mapping_id().filter(|_| by_id),
                    physical,
                    name: f.name().to_string(),
                });
                below(phys, f.data_type(), path, out);
            }
        }
        DataType::Array(a) => below("element".into(), a.element_type(), path, out),
        DataType::Map(m) => {
            below("key".into(), m.key_type(), path, out);
            below("value".into(), m.value_type(), path, out);
        }
        _ => {}
    }
}

fn no_such(table: &str, asked: String) -> Error {
    LakeError::NoSuchSnapshot {
        format: "Delta",
        table: table.to_string(),
        asked,
    }
    .into()
}
