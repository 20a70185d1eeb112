//! Delta Lake tables through Delta's kernel (`delta_kernel`): the snapshot at a version or a
//! time, its data files with their sizes, row counts, partition values and deletion vectors.
//!
//! The kernel replays the log (checkpoints and commits) and refuses what it cannot read (a
//! reader version above 3, unknown reader features); its refusal is this module's error, in
//! the kernel's words. Its API is synchronous, so it runs on the blocking pool.

use super::{AsOf, DataFile, Deletes, Format, LakeColumn, Snapshot, StoreRoot};
use crate::{Error, LakeError};
use delta_kernel::engine_data::{FilteredRowVisitor, GetData, RowIndexIterator, TypedGetData};
use delta_kernel::expressions::ColumnName;
use delta_kernel::history_manager::{latest_version_as_of, HistoryCommitType};
use delta_kernel::scan::state::{DvInfo, ScanFile};
use delta_kernel::schema::DataType;
use delta_kernel::schema::{ColumnMetadataKey, MetadataValue};
use delta_kernel::Snapshot as KernelSnapshot;
use delta_kernel_default_engine::DefaultEngineBuilder;
use std::collections::HashMap;
use url::Url;

/// Reads the snapshot of the Delta table at `url`, `arg` being how the user named it.
pub(crate) async fn snapshot(
    root: &StoreRoot,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
) -> Result<Snapshot, Error> {
    let store = root.store();
    let (table, url) = (arg.to_string(), url.clone());
    tokio::task::spawn_blocking(move || read(store, &table, &url, as_of))
        .await
        .map_err(|e| kernel_error(arg, e))?
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
    store: std::sync::Arc<dyn object_store::ObjectStore>,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
) -> Result<Snapshot, Error> {
    let err = |e| kernel_error(arg, e);
    // Each log object read once, whole (see `whole`).
    let store: std::sync::Arc<dyn object_store::ObjectStore> =
        std::sync::Arc::new(super::whole::WholeObjects::new(store));
    let engine = DefaultEngineBuilder::new(store).build();
    let root = url.as_str();
    let latest = || {
        KernelSnapshot::builder_for(root)
            .build(&engine)
            .map_err(err)
    };
    let snap = match as_of {
        None => latest()?,
        Some(AsOf::Version(v)) => {
            let v = u64::try_from(v).map_err(|_| no_such(arg, format!("version {v}")))?;
            KernelSnapshot::builder_for(root)
                .at_version(v)
                .build(&engine)
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
            let at = latest_version_as_of(&latest, &engine, t, HistoryCommitType::Recreatable)
                .map_err(|e| no_such(arg, format!("committed at or before {t} ms ({e})")))?;
            KernelSnapshot::builder_for(root)
                .at_version(at.version)
                .build(&engine)
                .map_err(err)?
        }
    };
    let version = i64::try_from(snap.version()).unwrap_or(i64::MAX);
    let timestamp_ms = snap.get_timestamp(&engine).ok();
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
            data_type: Some(f.data_type().to_string()),
        })
        .collect();
    let scan = std::sync::Arc::clone(&snap)
        .scan_builder()
        .build()
        .map_err(err)?;
    let mut seen: Vec<Seen> = Vec::new();
    let mut stats = StatsOf::default();
    for meta in scan.scan_metadata(&engine).map_err(err)? {
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
            Some(text) => super::bounds::delta(text, &columns, prefix),
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
    })
}

fn no_such(table: &str, asked: String) -> Error {
    LakeError::NoSuchSnapshot {
        format: "Delta",
        table: table.to_string(),
        asked,
    }
    .into()
}
