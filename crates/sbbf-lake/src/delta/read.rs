//! Delta Lake tables through Delta's kernel (`delta_kernel`): the snapshot at a version or a
//! time, its data files with their sizes, row counts, partition values and deletion vectors.
//!
//! The kernel replays the log (checkpoints and commits) and refuses what it cannot read (a
//! reader version above 3, unknown reader features); its refusal is this module's error, in
//! the kernel's words. Its API is synchronous, so it runs on the blocking pool.
//!
//! Commits to a Delta table (`sbbf add TABLE`'s swap of files for copies) are `commit.rs`.

pub(crate) mod commit;

use crate::whole::WholeObjects;
use crate::{AsOf, DataFile, Deletes, Format, LakeColumn, Snapshot, StoreRoot};
use bytes::Bytes;
use delta_kernel::engine_data::{FilteredRowVisitor, GetData, RowIndexIterator, TypedGetData};
use delta_kernel::expressions::ColumnName;
use delta_kernel::history_manager::{latest_version_as_of, HistoryCommitType};
use delta_kernel::scan::state::{DvInfo, ScanFile};
use delta_kernel::schema::DataType;
use delta_kernel::schema::{ColumnMetadataKey, MetadataValue};
use delta_kernel::Snapshot as KernelSnapshot;
use delta_kernel_default_engine::DefaultEngineBuilder;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as StorePath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt as _};
use sbbf_parquet::{Error, LakeError};
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

/// The first page of a Delta log's listing and its `_last_checkpoint`, asked together when a
/// table on a store is found.
#[derive(Debug)]
pub(crate) struct LogLook {
    /// The log folder's path in the store.
    pub(crate) log: StorePath,
    /// The objects under it, as far as the first page went.
    pub(crate) entries: Vec<ObjectMeta>,
    /// Whether `entries` is every object under it.
    pub(crate) complete: bool,
    /// `_last_checkpoint`: `Some(None)` when the store has none, `None` when it failed.
    last_checkpoint: Option<Option<(ObjectMeta, Bytes)>>,
}

/// Objects listed in one request (S3's page); a first page this full may not be all.
const FIRST_PAGE: usize = 1000;

/// The largest `_last_checkpoint` read while finding the table (real ones are a few hundred
/// bytes of JSON; the read must not allocate what a hostile store claims).
const HINT_LIMIT: u64 = 1 << 20;

/// Asks the store for the first page of `log` and for its `_last_checkpoint` at once (one
/// round trip). An error of the listing is the caller's; the hint's is left to the kernel.
pub(crate) async fn look(
    store: &Arc<dyn ObjectStore>,
    log: StorePath,
) -> object_store::Result<LogLook> {
    let hint = log.clone().join("_last_checkpoint");
    let listing = async {
        let mut entries = Vec::new();
        // `take` stops before a second page is asked for.
        let mut listed = store.list(Some(&log)).take(FIRST_PAGE);
        while let Some(m) = listed.next().await {
            entries.push(m?);
        }
        Ok::<_, object_store::Error>(entries)
    };
    let last_checkpoint = async {
        match store.get(&hint).await {
            // A hint of more than a few hundred bytes is no hint: not read here (the kernel
            // reads it as it reads it, whole or not).
            Ok(got) if got.meta.size > HINT_LIMIT => None,
            Ok(got) => {
                let meta = got.meta.clone();
                got.bytes().await.ok().map(|b| Some((meta, b)))
            }
            Err(object_store::Error::NotFound { .. }) => Some(None),
            Err(_) => None,
        }
    };
    let (entries, last_checkpoint) = futures::future::join(listing, last_checkpoint).await;
    let entries = entries?;
    Ok(LogLook {
        complete: entries.len() < FIRST_PAGE,
        log,
        entries,
        last_checkpoint,
    })
}

/// What a log object's name says: its version and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogName {
    Commit,
    Crc,
    /// A checkpoint in one file (classic or v2).
    Checkpoint,
    /// Part `.0` of `.1` of a multi-part checkpoint.
    Part(u64, u64),
}

pub(crate) fn log_name(name: &str) -> Option<(u64, LogName)> {
    let digits = name.get(..20)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let version: u64 = digits.parse().ok()?;
    let kind = match &name[20..] {
        ".json" => LogName::Commit,
        ".crc" => LogName::Crc,
        ".checkpoint.parquet" => LogName::Checkpoint,
        rest => {
            let middle = rest
                .strip_prefix(".checkpoint.")?
                .strip_suffix(".parquet")
                .or_else(|| rest.strip_prefix(".checkpoint.")?.strip_suffix(".json"))?;
            match middle.split_once('.') {
                Some((i, n)) if i.len() == 10 && n.len() == 10 => {
                    LogName::Part(i.parse().ok()?, n.parse().ok()?)
                }
                _ => LogName::Checkpoint,
            }
        }
    };
    Some((version, kind))
}

/// The log objects the kernel reads for the snapshot at `target` (the newest when `None`),
/// from a listing of the log (from some version on): the newest complete checkpoint at or
/// before it, the commits after that, and the target's checksum file.
fn to_read(log: &StorePath, listed: &[ObjectMeta], target: Option<u64>) -> Vec<ObjectMeta> {
    let prefix = format!("{log}/");
    let named: Vec<(u64, LogName, &ObjectMeta)> = listed
        .iter()
        .filter_map(|m| {
            let name = m.location.as_ref().strip_prefix(&prefix)?;
            if name.contains('/') {
                return None;
            }
            let (v, kind) = log_name(name)?;
            Some((v, kind, m))
        })
        .collect();
    let Some(target) = target.or_else(|| {
        named
            .iter()
            .filter(|(_, k, _)| *k == LogName::Commit)
            .map(|(v, _, _)| *v)
            .max()
    }) else {
        return Vec::new();
    };
    // The newest complete checkpoint at or before the target: one file, or every part
    // 1..=n of a multi-part one (the parts of each (version, n) counted once, in one pass).
    let mut parts: HashMap<(u64, u64), std::collections::HashSet<u64>> = HashMap::new();
    let mut complete: Vec<u64> = Vec::new();
    for (v, kind, _) in named.iter().filter(|(v, _, _)| *v <= target) {
        match *kind {
            LogName::Checkpoint => complete.push(*v),
            LogName::Part(i, n) if (1..=n).contains(&i) => {
                parts.entry((*v, n)).or_default().insert(i);
            }
            _ => {}
        }
    }
    complete.extend(
        parts
            .iter()
            .filter(|((_, n), found)| found.len() as u64 == *n)
            .map(|((v, _), _)| *v),
    );
    let checkpoint = complete.into_iter().max();
    let mut out = Vec::new();
    let mut bytes = 0u64;
    for (v, kind, meta) in &named {
        let wanted = match kind {
            LogName::Commit => checkpoint.is_none_or(|c| *v > c) && *v <= target,
            LogName::Crc => *v == target,
            LogName::Checkpoint | LogName::Part(..) => Some(*v) == checkpoint,
        };
        // Past this much, the kernel reads the rest itself.
        if wanted && bytes + meta.size <= READ_AHEAD_BYTES {
            bytes += meta.size;
            out.push((*meta).clone());
        }
    }
    out
}

/// The most log bytes read ahead.
const READ_AHEAD_BYTES: u64 = 256 << 20;

/// Gives the kernel's store view what finding the table learnt (the listing, the checkpoint
/// hint) and reads ahead, at once, the objects the kernel will ask for one after another: on
/// a store, the snapshot opens in two round trips (three when the log is longer than a
/// listing page) where the kernel alone takes five or more.
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
        store.know_object(hint, read);
    }
    let target = match as_of {
        Some(AsOf::Version(v)) => u64::try_from(v).ok(),
        _ => None,
    };
    let reads = if complete {
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
    let err = |e| kernel_error(arg, e);
    let store: Arc<dyn ObjectStore> = store;
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
            Some(text) => crate::bounds::delta(text, &columns, prefix),
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
        equalities: Default::default(),
        inner_physical,
        log_reads: Default::default(),
        data_manifests: None,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(names: &[&str]) -> Vec<ObjectMeta> {
        names
            .iter()
            .map(|n| ObjectMeta {
                location: StorePath::from(format!("t/_delta_log/{n}")),
                last_modified: Default::default(),
                size: 10,
                e_tag: None,
                version: None,
            })
            .collect()
    }

    fn names(read: &[ObjectMeta]) -> Vec<&str> {
        read.iter()
            .map(|m| m.location.filename().unwrap_or_default())
            .collect()
    }

    #[test]
    fn log_names_are_read_by_version_and_kind() {
        let v = |n: &str| log_name(n);
        assert_eq!(v("00000000000000000003.json"), Some((3, LogName::Commit)));
        assert_eq!(v("00000000000000000003.crc"), Some((3, LogName::Crc)));
        assert_eq!(
            v("00000000000000000010.checkpoint.parquet"),
            Some((10, LogName::Checkpoint))
        );
        assert_eq!(
            v("00000000000000000010.checkpoint.0000000002.0000000003.parquet"),
            Some((10, LogName::Part(2, 3)))
        );
        assert_eq!(
            v("00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"),
            Some((10, LogName::Checkpoint))
        );
        for other in [
            "_last_checkpoint",
            "00000000000000000003.00000000000000000005.compacted.json",
            "0000000000000000003.json",
            "0000000000000000000x.json",
            "00000000000000000003.json.tmp",
            "é",
        ] {
            assert_eq!(v(other), None, "{other}");
        }
    }

    #[test]
    fn the_newest_complete_checkpoint_and_the_commits_after_it_are_read_ahead() {
        let log = StorePath::from("t/_delta_log");
        let listed = listing(&[
            "00000000000000000000.json",
            "00000000000000000001.json",
            "00000000000000000002.checkpoint.parquet",
            "00000000000000000002.json",
            "00000000000000000003.json",
            // A multi-part checkpoint with a part missing is not one.
            "00000000000000000004.checkpoint.0000000001.0000000002.parquet",
            "00000000000000000004.json",
            "00000000000000000004.crc",
            "00000000000000000003.crc",
            "_last_checkpoint",
            "_sidecars/00000000000000000001.json",
        ]);
        assert_eq!(
            names(&to_read(&log, &listed, None)),
            [
                "00000000000000000002.checkpoint.parquet",
                "00000000000000000003.json",
                "00000000000000000004.json",
                "00000000000000000004.crc",
            ]
        );
        // An older version: its own commits and checksum.
        assert_eq!(
            names(&to_read(&log, &listed, Some(1))),
            ["00000000000000000000.json", "00000000000000000001.json"]
        );
        let mut whole = listed.clone();
        whole.extend(listing(&[
            "00000000000000000004.checkpoint.0000000002.0000000002.parquet",
        ]));
        assert_eq!(
            names(&to_read(&log, &whole, None)),
            [
                "00000000000000000004.checkpoint.0000000001.0000000002.parquet",
                "00000000000000000004.crc",
                "00000000000000000004.checkpoint.0000000002.0000000002.parquet",
            ]
        );
        assert!(to_read(&log, &[], None).is_empty());
        // A name claiming ten billion parts is one part of an incomplete checkpoint (counted,
        // not looked for part by part).
        let mut claimed = listed.clone();
        claimed.extend(listing(&[
            "00000000000000000004.checkpoint.0000000001.9999999999.parquet",
        ]));
        assert_eq!(
            names(&to_read(&log, &claimed, None)),
            names(&to_read(&log, &listed, None))
        );
    }
}
