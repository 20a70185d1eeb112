//! New versions of a Delta table that swap data files for copies holding the same rows (the
//! copies carry Bloom filters the originals lack), committed as the Delta protocol says: the
//! next log entry written with put-if-absent, so of two writers racing for a version exactly
//! one wins and the other learns it.
//!
//! The kernel reads the snapshot the commit is based on: its live files with every field an
//! `add` carries (deletion vector, tags, row-tracking ids, clustering provider, statistics)
//! and its protocol. The actions are written here, not by the kernel's transaction: a copy must
//! keep its original's row ids (`baseRowId`, `defaultRowCommitVersion`), deletion vector and
//! tags, and the kernel assigns fresh row ids to the files it adds and takes neither vectors
//! nor tags on them.

use crate::LakeError;
use crate::StoreRoot;
use delta_kernel::engine_data::{FilteredRowVisitor, GetData, RowIndexIterator, TypedGetData};
use delta_kernel::expressions::ColumnName;
use delta_kernel::schema::{DataType, MapType};
use delta_kernel::Snapshot as KernelSnapshot;
use delta_kernel_default_engine::DefaultEngineBuilder;
use object_store::{PutMode, PutOptions, PutPayload};
use sbbf_parquet::Error;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock};
use url::Url;

/// Writer features a commit of ours keeps the promises of, by their protocol names. Each
/// either constrains data we do not change (invariants, constraints, generated and identity
/// columns, column defaults, types), concerns readers or checkpoints only, or is carried over
/// file by file (deletion vectors, row tracking, clustering) or handled when committing
/// (in-commit timestamps). Anything else is refused by name.
const WRITER_FEATURES: &[&str] = &[
    "appendOnly",
    "invariants",
    "checkConstraints",
    "changeDataFeed",
    "generatedColumns",
    "identityColumns",
    "inCommitTimestamp",
    "rowTracking",
    "domainMetadata",
    "clustering",
    "allowColumnDefaults",
    "materializePartitionColumns",
    "columnMapping",
    "deletionVectors",
    "timestampNtz",
    "typeWidening",
    "typeWidening-preview",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "variantType",
    "variantType-preview",
    "variantShredding",
    "variantShredding-preview",
    "geospatial",
];

/// The highest writer protocol version known here.
const WRITER_VERSION_MAX: i32 = 7;

/// One live data file of the base snapshot, with everything its `add` action says.
#[derive(Debug, Clone)]
pub(crate) struct LiveFile {
    /// Its path as the log writes it (relative to the table root, percent-encoded, or a URL).
    pub(crate) path: String,
    pub(crate) size: i64,
    stats: Option<String>,
    /// The deletion vector descriptor, as the log writes it.
    deletion_vector: Option<Value>,
    /// Partition values by physical column name (`None`: null).
    partition: BTreeMap<String, Option<String>>,
    base_row_id: Option<i64>,
    default_row_commit_version: Option<i64>,
    tags: Option<BTreeMap<String, String>>,
    clustering_provider: Option<String>,
}

/// The snapshot a commit is based on.
#[derive(Debug, Clone)]
pub(crate) struct Base {
    /// Its version: the commit writes the next one.
    pub(crate) version: u64,
    /// With in-commit timestamps enabled, the base version's timestamp (a commit's must be
    /// later).
    in_commit_timestamp: Option<i64>,
    /// Its live files, in the log's order.
    pub(crate) files: Vec<LiveFile>,
}

impl Base {
    /// The live file with log path `path`.
    pub(crate) fn file(&self, path: &str) -> Option<&LiveFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// One file swapped: the original (by its log path) and the copy written beside it.
#[derive(Debug, Clone)]
pub(crate) struct Swap {
    pub(crate) old_path: String,
    /// The copy's path as the log will write it.
    pub(crate) new_path: String,
    pub(crate) new_size: u64,
    /// When the copy was written (ms since the epoch).
    pub(crate) new_mtime_ms: i64,
}

/// What the commit says of itself in `commitInfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct About {
    /// The operation's name (`ADD BLOOM FILTERS`).
    pub(crate) operation: String,
    /// Its parameters, as text.
    pub(crate) parameters: Vec<(String, String)>,
}

/// Reads the latest snapshot of the Delta table at `url` (`table`: as the user named it) for
/// a commit: refused, with the reason, when its protocol asks of writers what this module
/// does not do.
pub(crate) async fn base(root: &StoreRoot, table: &str, url: &Url) -> Result<Base, Error> {
    let (store, name, url) = (root.store(), table.to_string(), url.clone());
    tokio::task::spawn_blocking(move || read_base(store, &name, &url))
        .await
        .map_err(|e| kernel_error(table, e))?
}

fn kernel_error(table: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    LakeError::Delta {
        table: table.to_string(),
        source: Box::new(e),
    }
    .into()
}

fn refused(table: &str, reason: String) -> Error {
    LakeError::WriteRefused {
        format: "Delta",
        table: table.to_string(),
        reason,
    }
    .into()
}

fn read_base(
    store: Arc<dyn object_store::ObjectStore>,
    table: &str,
    url: &Url,
) -> Result<Base, Error> {
    let err = |e| kernel_error(table, e);
    let engine = DefaultEngineBuilder::new(store).build();
    let snap = KernelSnapshot::builder_for(url.as_str())
        .build(&engine)
        .map_err(err)?;
    let config = snap.table_configuration();
    let protocol = config.protocol();
    if protocol.min_writer_version() > WRITER_VERSION_MAX {
        return Err(refused(
            table,
            format!(
                "its writer protocol version is {} (up to {WRITER_VERSION_MAX} is written here)",
                protocol.min_writer_version()
            ),
        ));
    }
    if let Some(features) = protocol.writer_features() {
        let unknown: Vec<String> = features
            .iter()
            .map(|f| f.to_string())
            .filter(|f| !WRITER_FEATURES.contains(&f.as_str()))
            .collect();
        if !unknown.is_empty() {
            return Err(refused(
                table,
                format!(
                    "it uses the writer feature(s) {}, whose rules this tool does not follow \
                     when committing",
                    unknown.join(", ")
                ),
            ));
        }
    }
    let properties = config.metadata().configuration();
    let in_commit_timestamp = match properties
        .get("delta.enableInCommitTimestamps")
        .map(|v| v.eq_ignore_ascii_case("true"))
    {
        Some(true) => Some(snap.get_timestamp(&engine).map_err(err)?),
        _ => None,
    };
    // Partition values are keyed by physical name; a null value may be left out of the map
    // the kernel gives, so every partition column is named in each action.
    let schema = snap.schema();
    let partition_columns: Vec<String> = config
        .logical_partition_columns()
        .iter()
        .map(|name| crate::delta::physical_name(schema.field(name)).unwrap_or_else(|| name.clone()))
        .collect();
    let scan = Arc::clone(&snap).scan_builder().build().map_err(err)?;
    let mut visitor = Files {
        partition_columns,
        files: Vec::new(),
    };
    for meta in scan.scan_metadata(&engine).map_err(err)? {
        let meta = meta.map_err(err)?;
        visitor.visit_rows_of(&meta.scan_files).map_err(err)?;
    }
    Ok(Base {
        version: snap.version(),
        in_commit_timestamp,
        files: visitor.files,
    })
}

/// The scan rows' fields an `add` action carries.
struct Files {
    partition_columns: Vec<String>,
    files: Vec<LiveFile>,
}

static FIELDS: LazyLock<(Vec<ColumnName>, Vec<DataType>)> = LazyLock::new(|| {
    let map = || {
        DataType::Map(Box::new(MapType::new(
            DataType::STRING,
            DataType::STRING,
            true,
        )))
    };
    let fields: [(&[&str], DataType); 14] = [
        (&["path"], DataType::STRING),
        (&["size"], DataType::LONG),
        (&["modificationTime"], DataType::LONG),
        (&["stats"], DataType::STRING),
        (&["deletionVector", "storageType"], DataType::STRING),
        (&["deletionVector", "pathOrInlineDv"], DataType::STRING),
        (&["deletionVector", "offset"], DataType::INTEGER),
        (&["deletionVector", "sizeInBytes"], DataType::INTEGER),
        (&["deletionVector", "cardinality"], DataType::LONG),
        (&["fileConstantValues", "partitionValues"], map()),
        (&["fileConstantValues", "baseRowId"], DataType::LONG),
        (
            &["fileConstantValues", "defaultRowCommitVersion"],
            DataType::LONG,
        ),
        (&["fileConstantValues", "tags"], map()),
        (
            &["fileConstantValues", "clusteringProvider"],
            DataType::STRING,
        ),
    ];
    fields
        .into_iter()
        .map(|(path, t)| (ColumnName::new(path.iter().copied()), t))
        .unzip()
});

impl FilteredRowVisitor for Files {
    fn selected_column_names_and_types(&self) -> (&'static [ColumnName], &'static [DataType]) {
        (&FIELDS.0, &FIELDS.1)
    }

    fn visit_filtered<'a>(
        &mut self,
        getters: &[&'a dyn GetData<'a>],
        rows: RowIndexIterator<'_>,
    ) -> delta_kernel::KernelResult<()> {
        for row in rows {
            let Some(path) = getters[0].get_opt(row, "path")? else {
                continue;
            };
            let path: String = path;
            let size: i64 = getters[1].get(row, "size")?;
            let stats: Option<String> = getters[3].get_opt(row, "stats")?;
            let storage: Option<String> = getters[4].get_opt(row, "deletionVector.storageType")?;
            let deletion_vector = match storage {
                Some(storage) => {
                    let dv_path: String = getters[5].get(row, "deletionVector.pathOrInlineDv")?;
                    let offset: Option<i32> = getters[6].get_opt(row, "deletionVector.offset")?;
                    let bytes: i32 = getters[7].get(row, "deletionVector.sizeInBytes")?;
                    let cardinality: i64 = getters[8].get(row, "deletionVector.cardinality")?;
                    let mut dv = Map::new();
                    dv.insert("storageType".into(), json!(storage));
                    dv.insert("pathOrInlineDv".into(), json!(dv_path));
                    if let Some(o) = offset {
                        dv.insert("offset".into(), json!(o));
                    }
                    dv.insert("sizeInBytes".into(), json!(bytes));
                    dv.insert("cardinality".into(), json!(cardinality));
                    Some(Value::Object(dv))
                }
                None => None,
            };
            let values: HashMap<String, String> = getters[9]
                .get_opt(row, "fileConstantValues.partitionValues")?
                .unwrap_or_default();
            let mut partition: BTreeMap<String, Option<String>> =
                values.into_iter().map(|(k, v)| (k, Some(v))).collect();
            for c in &self.partition_columns {
                partition.entry(c.clone()).or_insert(None);
            }
            let tags: Option<HashMap<String, String>> =
                getters[12].get_opt(row, "fileConstantValues.tags")?;
            self.files.push(LiveFile {
                path,
                size,
                stats,
                deletion_vector,
                partition,
                base_row_id: getters[10].get_opt(row, "fileConstantValues.baseRowId")?,
                default_row_commit_version: getters[11]
                    .get_opt(row, "fileConstantValues.defaultRowCommitVersion")?,
                tags: tags.map(|t| t.into_iter().collect()),
                clustering_provider: getters[13]
                    .get_opt(row, "fileConstantValues.clusteringProvider")?,
            });
        }
        Ok(())
    }
}

/// The fields an original's `remove` and its copy's `add` share: everything but the path,
/// size and times.
fn carried(f: &LiveFile, action: &mut Map<String, Value>) {
    action.insert("partitionValues".into(), json!(f.partition));
    if let Some(s) = &f.stats {
        action.insert("stats".into(), json!(s));
    }
    if let Some(t) = &f.tags {
        action.insert("tags".into(), json!(t));
    }
    if let Some(dv) = &f.deletion_vector {
        action.insert("deletionVector".into(), dv.clone());
    }
    if let Some(id) = f.base_row_id {
        action.insert("baseRowId".into(), json!(id));
    }
    if let Some(v) = f.default_row_commit_version {
        action.insert("defaultRowCommitVersion".into(), json!(v));
    }
}

/// The log entry that swaps each of `swaps` whose original is live in `base` (the others are
/// returned: a commit since removed them), as newline-delimited JSON: `commitInfo` first (as
/// in-commit timestamps require), then a `remove` of each original and an `add` of its copy,
/// both `dataChange: false` (the rows are the same).
pub(crate) fn entry(
    base: &Base,
    swaps: &[Swap],
    about: &About,
    now_ms: i64,
) -> (Vec<u8>, Vec<String>) {
    let mut gone = Vec::new();
    let mut lines = Vec::new();
    let (mut removed_bytes, mut added_bytes, mut n) = (0i64, 0u64, 0usize);
    for s in swaps {
        let Some(f) = base.file(&s.old_path) else {
            gone.push(s.old_path.clone());
            continue;
        };
        let mut remove = Map::new();
        remove.insert("path".into(), json!(f.path));
        remove.insert("deletionTimestamp".into(), json!(now_ms));
        remove.insert("dataChange".into(), json!(false));
        remove.insert("extendedFileMetadata".into(), json!(true));
        remove.insert("size".into(), json!(f.size));
        carried(f, &mut remove);
        let mut add = Map::new();
        add.insert("path".into(), json!(s.new_path));
        add.insert("size".into(), json!(s.new_size));
        add.insert("modificationTime".into(), json!(s.new_mtime_ms));
        add.insert("dataChange".into(), json!(false));
        carried(f, &mut add);
        if let Some(c) = &f.clustering_provider {
            add.insert("clusteringProvider".into(), json!(c));
        }
        lines.push(json!({ "remove": remove }));
        lines.push(json!({ "add": add }));
        removed_bytes += f.size;
        added_bytes += s.new_size;
        n += 1;
    }
    let parameters: Map<String, Value> = about
        .parameters
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let mut info = Map::new();
    info.insert("timestamp".into(), json!(now_ms));
    if let Some(previous) = base.in_commit_timestamp {
        info.insert(
            "inCommitTimestamp".into(),
            json!(now_ms.max(previous.saturating_add(1))),
        );
    }
    info.insert("operation".into(), json!(about.operation));
    info.insert("operationParameters".into(), Value::Object(parameters));
    info.insert("readVersion".into(), json!(base.version));
    info.insert("isolationLevel".into(), json!("SnapshotIsolation"));
    info.insert("isBlindAppend".into(), json!(false));
    info.insert(
        "operationMetrics".into(),
        json!({
            "numRemovedFiles": n.to_string(),
            "numAddedFiles": n.to_string(),
            "numRemovedBytes": removed_bytes.to_string(),
            "numAddedBytes": added_bytes.to_string(),
        }),
    );
    info.insert(
        "engineInfo".into(),
        json!(concat!("sbbf/", env!("CARGO_PKG_VERSION"))),
    );
    let mut out = Vec::new();
    for line in std::iter::once(json!({ "commitInfo": info })).chain(lines) {
        // Serializing a JSON value built here cannot fail.
        out.extend_from_slice(line.to_string().as_bytes());
        out.push(b'\n');
    }
    (out, gone)
}

/// Writes `entry` as version `version` of the table at `url`, if no writer has: `Ok(false)`
/// when the version exists (another commit won it; nothing was written).
pub(crate) async fn put_entry(
    root: &StoreRoot,
    url: &Url,
    version: u64,
    entry: Vec<u8>,
) -> Result<bool, Error> {
    let location = url
        .join(&format!("_delta_log/{version:020}.json"))
        .map_err(|_| LakeError::BadLocation {
            location: format!("{url}_delta_log/{version:020}.json"),
        })?;
    let path = root.path_of(location.as_str())?;
    let opts = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    match root
        .store()
        .put_opts(&path, PutPayload::from(entry), opts)
        .await
    {
        Ok(_) => Ok(true),
        Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
        Err(source) => Err(sbbf_parquet::WriteError::Store {
            location: location.to_string(),
            source,
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(path: &str) -> LiveFile {
        LiveFile {
            path: path.into(),
            size: 100,
            stats: Some(r#"{"numRecords":3}"#.into()),
            deletion_vector: Some(
                json!({"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", "sizeInBytes": 40, "cardinality": 6}),
            ),
            partition: [("p".to_string(), None), ("q".to_string(), Some("1".into()))].into(),
            base_row_id: Some(7),
            default_row_commit_version: Some(2),
            tags: Some([("k".to_string(), "v".to_string())].into()),
            clustering_provider: Some("liquid".into()),
        }
    }

    #[test]
    fn a_swap_removes_the_original_and_adds_a_copy_with_all_it_carried() {
        let base = Base {
            version: 4,
            in_commit_timestamp: Some(5_000),
            files: vec![live("p=__HIVE_DEFAULT_PARTITION__/a.parquet")],
        };
        let swaps = [
            Swap {
                old_path: "p=__HIVE_DEFAULT_PARTITION__/a.parquet".into(),
                new_path: "p=__HIVE_DEFAULT_PARTITION__/a-sbbf-1.parquet".into(),
                new_size: 120,
                new_mtime_ms: 1_000,
            },
            Swap {
                old_path: "gone.parquet".into(),
                new_path: "gone-sbbf-1.parquet".into(),
                new_size: 1,
                new_mtime_ms: 1_000,
            },
        ];
        let about = About {
            operation: "ADD BLOOM FILTERS".into(),
            parameters: vec![("columns".into(), "[\"id\"]".into())],
        };
        let (bytes, gone) = entry(&base, &swaps, &about, 1_000);
        assert_eq!(gone, ["gone.parquet"]);
        let lines: Vec<Value> = String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        let info = &lines[0]["commitInfo"];
        // The clock is behind the last commit's timestamp: one past it.
        assert_eq!(info["inCommitTimestamp"], 5_001);
        assert_eq!(info["readVersion"], 4);
        assert_eq!(info["operationMetrics"]["numAddedFiles"], "1");
        let (remove, add) = (&lines[1]["remove"], &lines[2]["add"]);
        for a in [remove, add] {
            assert_eq!(a["dataChange"], false);
            assert_eq!(a["partitionValues"], json!({"p": null, "q": "1"}));
            assert_eq!(a["deletionVector"]["cardinality"], 6);
            assert_eq!(a["baseRowId"], 7);
            assert_eq!(a["defaultRowCommitVersion"], 2);
            assert_eq!(a["tags"], json!({"k": "v"}));
            assert_eq!(a["stats"], r#"{"numRecords":3}"#);
        }
        assert_eq!(remove["path"], "p=__HIVE_DEFAULT_PARTITION__/a.parquet");
        assert_eq!(remove["size"], 100);
        assert_eq!(add["path"], "p=__HIVE_DEFAULT_PARTITION__/a-sbbf-1.parquet");
        assert_eq!(add["size"], 120);
        assert_eq!(add["clusteringProvider"], "liquid");
    }

    #[test]
    fn a_version_is_written_once_whoever_asks_second() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("_delta_log")).unwrap();
        let url = Url::from_directory_path(dir.path()).unwrap();
        let root = StoreRoot::local();
        let put = |bytes: &[u8]| {
            sbbf_parquet::source::block_on(put_entry(&root, &url, 3, bytes.to_vec()))
                .unwrap()
                .unwrap()
        };
        assert!(put(b"first\n"));
        assert!(!put(b"second\n"));
        let log = dir.path().join("_delta_log/00000000000000000003.json");
        assert_eq!(std::fs::read(log).unwrap(), b"first\n");
    }
}
