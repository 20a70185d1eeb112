//! Tests of the Iceberg reader on small tables written here: metadata JSON, and Avro manifest
//! lists and manifests with the spec's schemas (v2, and v1 where it differs).

use super::metadata::SpecField;
use super::partition::render;
use super::{snapshot, Prior};
use crate::since::KnownSnapshot;
use crate::LakeError;
use crate::{AsOf, DataFile, Deletes, Snapshot, StoreRoot};
use apache_avro::types::Value;
use apache_avro::{Schema, Writer};
use sbbf_parquet::Error;
use serde_json::json;
use std::path::{Path, PathBuf};
use url::Url;

/// The spec's `manifest_file` (v2): what a manifest list holds.
const MANIFEST_FILE: &str = r#"{"type": "record", "name": "manifest_file", "fields": [
  {"name": "manifest_path", "type": "string", "field-id": 500},
  {"name": "manifest_length", "type": "long", "field-id": 501},
  {"name": "partition_spec_id", "type": "int", "field-id": 502},
  {"name": "content", "type": "int", "field-id": 517},
  {"name": "sequence_number", "type": "long", "field-id": 515},
  {"name": "min_sequence_number", "type": "long", "field-id": 516},
  {"name": "added_snapshot_id", "type": "long", "field-id": 503},
  {"name": "added_files_count", "type": "int", "field-id": 504},
  {"name": "existing_files_count", "type": "int", "field-id": 505},
  {"name": "deleted_files_count", "type": "int", "field-id": 506},
  {"name": "added_rows_count", "type": "long", "field-id": 512},
  {"name": "existing_rows_count", "type": "long", "field-id": 513},
  {"name": "deleted_rows_count", "type": "long", "field-id": 514},
  {"name": "partitions", "type": ["null", {"type": "array", "element-id": 508, "items":
    {"type": "record", "name": "r508", "fields": [
      {"name": "contains_null", "type": "boolean", "field-id": 509},
      {"name": "contains_nan", "type": ["null", "boolean"], "default": null, "field-id": 518},
      {"name": "lower_bound", "type": ["null", "bytes"], "default": null, "field-id": 510},
      {"name": "upper_bound", "type": ["null", "bytes"], "default": null, "field-id": 511}]}}],
    "default": null, "field-id": 507},
  {"name": "key_metadata", "type": ["null", "bytes"], "default": null, "field-id": 519}
]}"#;

/// The spec's `manifest_entry` with its `data_file` (v2, with v3's `referenced_data_file`;
/// `v1`: without the v2 fields), around a partition record of `partition` fields (Avro
/// name, Avro type JSON).
fn manifest_entry_schema(partition: &[(&str, serde_json::Value)], v1: bool) -> Schema {
    let partition_fields: Vec<_> = partition
        .iter()
        .enumerate()
        .map(|(i, (name, ty))| {
            json!({"name": name, "type": ["null", ty], "default": null, "field-id": 1000 + i})
        })
        .collect();
    let mut data_file = vec![
        json!({"name": "file_path", "type": "string", "field-id": 100}),
        json!({"name": "file_format", "type": "string", "field-id": 101}),
        json!({"name": "partition", "type": {"type": "record", "name": "r102", "fields": partition_fields}, "field-id": 102}),
        json!({"name": "record_count", "type": "long", "field-id": 103}),
        json!({"name": "file_size_in_bytes", "type": "long", "field-id": 104}),
        json!({"name": "null_value_counts", "type": ["null", {"type": "array", "logicalType": "map", "items":
            {"type": "record", "name": "k121_v122", "fields": [
                {"name": "key", "type": "int", "field-id": 121},
                {"name": "value", "type": "long", "field-id": 122}]}}], "default": null, "field-id": 110}),
        json!({"name": "key_metadata", "type": ["null", "bytes"], "default": null, "field-id": 131}),
    ];
    let mut entry = vec![
        json!({"name": "status", "type": "int", "field-id": 0}),
        json!({"name": "snapshot_id", "type": ["null", "long"], "default": null, "field-id": 1}),
    ];
    if !v1 {
        data_file.insert(
            0,
            json!({"name": "content", "type": "int", "field-id": 134}),
        );
        data_file.push(json!({"name": "equality_ids", "type": ["null", {"type": "array", "items": "int", "element-id": 136}], "default": null, "field-id": 135}));
        data_file.push(json!({"name": "referenced_data_file", "type": ["null", "string"], "default": null, "field-id": 143}));
        entry.push(json!({"name": "sequence_number", "type": ["null", "long"], "default": null, "field-id": 3}));
        entry.push(json!({"name": "file_sequence_number", "type": ["null", "long"], "default": null, "field-id": 4}));
    }
    entry.push(json!({"name": "data_file", "type": {"type": "record", "name": "r2", "fields": data_file}, "field-id": 2}));
    let schema = json!({"type": "record", "name": "manifest_entry", "fields": entry});
    Schema::parse(&schema).expect("a valid test schema")
}

/// An optional value, as a union with null.
fn opt(v: Option<Value>) -> Value {
    match v {
        Some(v) => Value::Union(1, Box::new(v)),
        None => Value::Union(0, Box::new(Value::Null)),
    }
}

/// One manifest entry to write.
#[derive(Clone)]
struct E {
    status: i32,
    seq: Option<i64>,
    content: i32,
    path: String,
    format: &'static str,
    partition: Vec<Option<Value>>,
    records: i64,
    referenced: Option<String>,
}

impl E {
    /// An ADDED Parquet data file with an explicit sequence number.
    fn data(path: &str, seq: i64, partition: Vec<Option<Value>>) -> E {
        E {
            status: 1,
            seq: Some(seq),
            content: 0,
            path: path.to_string(),
            format: "PARQUET",
            partition,
            records: 10,
            referenced: None,
        }
    }
}

/// A test table in a temporary folder.
struct Table {
    dir: tempfile::TempDir,
}

impl Table {
    fn new() -> Table {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(dir.path().join("metadata")).expect("metadata dir");
        std::fs::create_dir_all(dir.path().join("data")).expect("data dir");
        Table { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The `file://` URL of `rel`.
    fn url(&self, rel: &str) -> String {
        Url::from_file_path(self.path(rel))
            .expect("an absolute path")
            .to_string()
    }

    /// Writes a manifest of `entries` (partition fields as in `manifest_entry_schema`) to
    /// `rel`; returns its URL.
    fn manifest(
        &self,
        rel: &str,
        partition: &[(&str, serde_json::Value)],
        entries: &[E],
        v1: bool,
    ) -> String {
        let schema = manifest_entry_schema(partition, v1);
        let mut w = Writer::new(&schema, Vec::new());
        for e in entries {
            let part = partition
                .iter()
                .zip(&e.partition)
                .map(|((name, _), v)| (name.to_string(), opt(v.clone())))
                .collect();
            let mut data_file = vec![
                ("file_path".to_string(), Value::String(e.path.clone())),
                ("file_format".into(), Value::String(e.format.into())),
                ("partition".into(), Value::Record(part)),
                ("record_count".into(), Value::Long(e.records)),
                ("file_size_in_bytes".into(), Value::Long(1234)),
                ("null_value_counts".into(), opt(None)),
                ("key_metadata".into(), opt(None)),
            ];
            let mut entry = vec![
                ("status".to_string(), Value::Int(e.status)),
                ("snapshot_id".into(), opt(None)),
            ];
            if !v1 {
                data_file.insert(0, ("content".into(), Value::Int(e.content)));
                data_file.push(("equality_ids".into(), opt(None)));
                let referenced = e.referenced.clone().map(Value::String);
                data_file.push(("referenced_data_file".into(), opt(referenced)));
                entry.push(("sequence_number".into(), opt(e.seq.map(Value::Long))));
                entry.push(("file_sequence_number".into(), opt(e.seq.map(Value::Long))));
            }
            entry.push(("data_file".into(), Value::Record(data_file)));
            w.append(Value::Record(entry))
                .expect("an entry fits the schema");
        }
        self.write(rel, &w.into_inner().expect("the manifest"))
    }

    /// Writes a manifest list naming `manifests` (URL, content, spec id, sequence number).
    fn manifest_list(&self, rel: &str, manifests: &[(&str, i32, i32, i64)]) -> String {
        let schema = Schema::parse_str(MANIFEST_FILE).expect("the manifest_file schema");
        let mut w = Writer::new(&schema, Vec::new());
        for &(path, content, spec, seq) in manifests {
            let long = Value::Long;
            let r = vec![
                ("manifest_path".to_string(), Value::String(path.into())),
                ("manifest_length".into(), long(100)),
                ("partition_spec_id".into(), Value::Int(spec)),
                ("content".into(), Value::Int(content)),
                ("sequence_number".into(), long(seq)),
                ("min_sequence_number".into(), long(seq)),
                ("added_snapshot_id".into(), long(1)),
                ("added_files_count".into(), Value::Int(1)),
                ("existing_files_count".into(), Value::Int(0)),
                ("deleted_files_count".into(), Value::Int(0)),
                ("added_rows_count".into(), long(10)),
                ("existing_rows_count".into(), long(0)),
                ("deleted_rows_count".into(), long(0)),
                ("partitions".into(), opt(None)),
                ("key_metadata".into(), opt(None)),
            ];
            w.append(Value::Record(r)).expect("a manifest_file record");
        }
        self.write(rel, &w.into_inner().expect("the manifest list"))
    }

    fn write(&self, rel: &str, bytes: &[u8]) -> String {
        std::fs::write(self.path(rel), bytes).expect("written");
        self.url(rel)
    }

    fn metadata(&self, rel: &str, json: &serde_json::Value) -> String {
        self.write(rel, json.to_string().as_bytes())
    }

    /// Reads the table through `rel` (a metadata file, or "" for the folder).
    fn read(&self, rel: &str, as_of: Option<AsOf>) -> Result<Snapshot, Error> {
        let url = match rel {
            "" => Url::from_directory_path(self.dir.path()).expect("a folder URL"),
            _ => Url::parse(&self.url(rel)).expect("a file URL"),
        };
        let arg = self.path(rel).display().to_string();
        sbbf_parquet::source::block_on(snapshot(
            &StoreRoot::local(),
            &arg,
            &url,
            as_of,
            Default::default(),
        ))
        .expect("a runtime")
    }
}

/// v2 table metadata with one spec (`region` identity on field 2, `ts_day` day of field 3),
/// an unpartitioned spec 1, and `snapshots` (id, ms, sequence number, manifest list URL).
fn metadata_v2(current: Option<i64>, snapshots: &[(i64, i64, i64, &str)]) -> serde_json::Value {
    json!({
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://bucket/somewhere/else",
        "last-sequence-number": 3,
        "last-updated-ms": 1_700_000_000_000_i64,
        "last-column-id": 3,
        "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "region", "required": false, "type": "string"},
            {"id": 3, "name": "ts", "required": false, "type": "timestamptz"}]}],
        "default-spec-id": 0,
        "partition-specs": [
            {"spec-id": 0, "fields": [
                {"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000},
                {"name": "ts_day", "transform": "day", "source-id": 3, "field-id": 1001}]},
            {"spec-id": 1, "fields": []}],
        "last-partition-id": 1001,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": current,
        "snapshots": snapshots.iter().map(|&(id, ms, seq, list)| json!({
            "snapshot-id": id, "timestamp-ms": ms, "sequence-number": seq,
            "summary": {"operation": "append"}, "manifest-list": list, "schema-id": 0
        })).collect::<Vec<_>>(),
        "snapshot-log": snapshots.iter().map(|&(id, ms, _, _)| json!({
            "snapshot-id": id, "timestamp-ms": ms
        })).collect::<Vec<_>>(),
        "metadata-log": [],
        "refs": current.map(|c| json!({"main": {"snapshot-id": c, "type": "branch"}})).unwrap_or(json!({})),
    })
}

/// The partition fields of spec 0, as Avro types.
fn spec0() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("region", json!("string")),
        ("ts_day", json!({"type": "int", "logicalType": "date"})),
    ]
}

fn part(region: &str, day: i32) -> Vec<Option<Value>> {
    vec![Some(Value::String(region.into())), Some(Value::Date(day))]
}

fn lake(e: Error) -> LakeError {
    match e {
        Error::Lake { source, .. } => *source.downcast::<LakeError>().expect("a LakeError"),
        other => panic!("not a lake error: {other}"),
    }
}

fn names(files: &[DataFile]) -> Vec<String> {
    files
        .iter()
        .map(|f| f.url.rsplit('/').next().unwrap_or_default().to_string())
        .collect()
}

/// A table whose one snapshot has live (ADDED, EXISTING) and DELETED entries.
fn simple_table() -> (Table, String) {
    let t = Table::new();
    let mut existing = E::data(&t.url("data/b.parquet"), 1, part("eu", 19_000));
    existing.status = 0;
    let mut deleted = E::data(&t.url("data/c.parquet"), 1, part("us", 19_000));
    deleted.status = 2;
    let m = t.manifest(
        "metadata/m1.avro",
        &spec0(),
        &[
            E::data(&t.url("data/a.parquet"), 1, part("us", 19_000)),
            existing,
            deleted,
        ],
        false,
    );
    let list = t.manifest_list("metadata/snap-1.avro", &[(&m, 0, 0, 1)]);
    let meta = t.metadata(
        "metadata/00001-abc.metadata.json",
        &metadata_v2(Some(11), &[(11, 1_000, 1, &list)]),
    );
    (t, meta)
}

#[test]
fn live_entries_are_listed_and_deleted_ones_are_not() {
    let (t, meta) = simple_table();
    let snap = t.read("metadata/00001-abc.metadata.json", None).unwrap();
    assert_eq!(names(&snap.files), ["a.parquet", "b.parquet"]);
    assert_eq!(snap.version, 11);
    assert_eq!(snap.timestamp_ms, Some(1_000));
    assert_eq!(snap.metadata.as_deref(), Some(meta.as_str()));
    assert_eq!(snap.partition_columns, ["region", "ts_day"]);
    let a = &snap.files[0];
    assert_eq!(a.url, t.url("data/a.parquet"));
    assert_eq!((a.size, a.rows), (1234, Some(10)));
    assert_eq!(
        a.partition,
        [
            ("region".to_string(), Some("us".to_string())),
            ("ts_day".to_string(), Some("2022-01-08".to_string())),
        ]
    );
    assert_eq!(a.deletes, Deletes::None);
    // A metadata file given directly, found in another folder than the `location` it
    // records: read where it is found (said in a note), its files named outside that location
    // read as written (`a.url` above); no note about a catalog.
    assert_eq!(snap.notes.len(), 1, "{:?}", snap.notes);
    assert!(snap.notes[0].contains("is read there"), "{:?}", snap.notes);
}

#[test]
fn time_travel_by_snapshot_id_and_by_time() {
    let t = Table::new();
    let m1 = t.manifest(
        "metadata/m1.avro",
        &spec0(),
        &[E::data(&t.url("data/a.parquet"), 1, part("us", 1))],
        false,
    );
    let m2 = t.manifest(
        "metadata/m2.avro",
        &spec0(),
        &[E::data(&t.url("data/b.parquet"), 2, part("us", 1))],
        false,
    );
    let l1 = t.manifest_list("metadata/snap-1.avro", &[(&m1, 0, 0, 1)]);
    let l2 = t.manifest_list("metadata/snap-2.avro", &[(&m2, 0, 0, 2), (&m1, 0, 0, 1)]);
    let rel = "metadata/00002-abc.metadata.json";
    t.metadata(
        rel,
        &metadata_v2(Some(22), &[(11, 1_000, 1, &l1), (22, 2_000, 2, &l2)]),
    );

    let current = t.read(rel, None).unwrap();
    assert_eq!((current.version, current.timestamp_ms), (22, Some(2_000)));
    assert_eq!(names(&current.files), ["b.parquet", "a.parquet"]);

    let first = t.read(rel, Some(AsOf::Version(11))).unwrap();
    assert_eq!((first.version, first.timestamp_ms), (11, Some(1_000)));
    assert_eq!(names(&first.files), ["a.parquet"]);

    for (ms, id) in [(1_000, 11), (1_999, 11), (2_000, 22), (9_999, 22)] {
        let s = t.read(rel, Some(AsOf::TimestampMs(ms))).unwrap();
        assert_eq!(s.version, id, "as of {ms}");
    }
    let early = lake(t.read(rel, Some(AsOf::TimestampMs(999))).unwrap_err());
    assert!(matches!(early, LakeError::NoSuchSnapshot { .. }), "{early}");
    let unknown = lake(t.read(rel, Some(AsOf::Version(33))).unwrap_err());
    let text = unknown.to_string();
    assert!(
        matches!(unknown, LakeError::NoSuchSnapshot { .. }),
        "{text}"
    );
    assert!(text.contains("33") && text.contains("11, 22"), "{text}");
}

#[test]
fn a_folder_is_read_through_its_version_hint() {
    let (t, _) = simple_table();
    let list = t.url("metadata/snap-1.avro");
    let one = metadata_v2(Some(11), &[(11, 1_000, 1, &list)]);
    t.metadata("metadata/v1.metadata.json", &one);
    t.metadata("metadata/v2.metadata.json", &metadata_v2(None, &[]));
    t.write("metadata/version-hint.text", b"1\n");
    let snap = t.read("", None).unwrap();
    assert_eq!(snap.version, 11);
    assert_eq!(
        snap.metadata.as_deref(),
        Some(t.url("metadata/v1.metadata.json").as_str())
    );
    let notes = snap.notes.join("\n");
    assert!(notes.contains("v1.metadata.json"), "{notes}");
    assert!(notes.contains("version-hint.text"), "{notes}");
    assert!(notes.contains("catalog"), "{notes}");
    // The metadata says the table lives in S3: read from a folder, that is worth a note.
    assert!(notes.contains("s3://bucket/somewhere/else"), "{notes}");

    // A hint naming the file in full works too.
    t.write("metadata/version-hint.text", b"v2.metadata.json");
    assert_eq!(t.read("", None).unwrap().version, -1);
    // A number names NNNNN-<uuid> files too, when there is no vN file.
    t.write("metadata/version-hint.text", b"00001");
    std::fs::remove_file(t.path("metadata/v1.metadata.json")).unwrap();
    let snap = t.read("", None).unwrap();
    assert!(snap
        .metadata
        .as_deref()
        .is_some_and(|m| m.ends_with("/00001-abc.metadata.json")));
    // A hint naming nothing there: the highest-numbered file, and the note says so.
    t.write("metadata/version-hint.text", b"7");
    let snap = t.read("", None).unwrap();
    let notes = snap.notes.join("\n");
    assert!(
        notes.contains("`7`") && notes.contains("highest-numbered"),
        "{notes}"
    );
}

#[test]
fn a_folder_without_hint_reads_the_highest_numbered_metadata_file() {
    let (t, _) = simple_table();
    let list = t.url("metadata/snap-1.avro");
    // 00001-abc (from simple_table) < 00009 < 00010: numbers, not text, decide.
    t.metadata("metadata/00009-def.metadata.json", &metadata_v2(None, &[]));
    t.metadata(
        "metadata/00010-fed.metadata.json",
        &metadata_v2(Some(11), &[(11, 1_000, 1, &list)]),
    );
    t.write("metadata/notes.txt", b"not metadata");
    let snap = t.read("", None).unwrap();
    assert_eq!(snap.version, 11);
    assert!(snap
        .metadata
        .as_deref()
        .is_some_and(|m| m.ends_with("/metadata/00010-fed.metadata.json")));
    let notes = snap.notes.join("\n");
    assert!(
        notes.contains("00010-fed.metadata.json") && notes.contains("highest-numbered"),
        "{notes}"
    );
    assert!(notes.contains("catalog"), "{notes}");

    // vN names are numbered too (v10 after v9).
    let t = Table::new();
    t.metadata("metadata/v9.metadata.json", &metadata_v2(None, &[]));
    t.metadata("metadata/v10.metadata.json", &metadata_v2(None, &[]));
    let snap = t.read("", None).unwrap();
    assert!(snap
        .metadata
        .as_deref()
        .is_some_and(|m| m.ends_with("/v10.metadata.json")));
}

#[test]
fn a_table_without_snapshots_is_empty() {
    let t = Table::new();
    let rel = "metadata/00000-abc.metadata.json";
    t.metadata(rel, &metadata_v2(None, &[]));
    let snap = t.read(rel, None).unwrap();
    assert_eq!((snap.version, snap.timestamp_ms), (-1, None));
    assert!(snap.files.is_empty());
    assert_eq!(snap.partition_columns, ["region", "ts_day"]);

    let mut minus_one = metadata_v2(None, &[]);
    minus_one["current-snapshot-id"] = json!(-1);
    t.metadata(rel, &minus_one);
    assert_eq!(t.read(rel, None).unwrap().version, -1);
}

#[test]
fn format_version_4_is_refused() {
    let t = Table::new();
    let rel = "metadata/00000-abc.metadata.json";
    let mut meta = metadata_v2(None, &[]);
    meta["format-version"] = json!(4);
    t.metadata(rel, &meta);
    let e = lake(t.read(rel, None).unwrap_err());
    assert!(
        matches!(&e, LakeError::Unsupported { feature, .. } if feature.contains("format version 4")),
        "{e}"
    );
}

#[test]
fn encrypted_and_gzip_metadata_are_refused() {
    let t = Table::new();
    let rel = "metadata/00000-abc.metadata.json";
    let mut meta = metadata_v2(None, &[]);
    meta["encryption-keys"] = json!([{"key-id": "k", "encrypted-key-metadata": "AA=="}]);
    t.metadata(rel, &meta);
    let e = lake(t.read(rel, None).unwrap_err());
    assert!(
        matches!(&e, LakeError::Unsupported { feature, .. } if feature == "encryption"),
        "{e}"
    );

    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(metadata_v2(None, &[]).to_string().as_bytes())
        .unwrap();
    let rel = "metadata/00001-abc.gz.metadata.json";
    t.write(rel, &gz.finish().unwrap());
    let e = lake(t.read(rel, None).unwrap_err());
    assert!(
        matches!(&e, LakeError::Unsupported { feature, .. } if feature.contains("gzip")),
        "{e}"
    );
}

#[test]
fn deletes_attach_by_sequence_number_partition_and_reference() {
    let t = Table::new();
    let a = t.url("data/a.parquet");
    let b = t.url("data/b.parquet");
    let c = t.url("data/c.parquet");
    let data = t.manifest(
        "metadata/data.avro",
        &spec0(),
        &[
            E::data(&a, 1, part("us", 1)),
            E::data(&b, 1, part("eu", 1)),
            E::data(&c, 3, part("us", 1)),
        ],
        false,
    );
    // Position deletes for partition us at sequence 2 (inherited from the manifest: null in
    // the entry, status ADDED): a (1 <= 2) but not c (3); and one naming b (1 <= 1).
    let mut pos = E::data(&t.url("data/pos.parquet"), 0, part("us", 1));
    pos.content = 1;
    pos.seq = None;
    let mut pos_b = E::data(&t.url("data/pos-b.parquet"), 1, part("eu", 1));
    pos_b.content = 1;
    pos_b.referenced = Some(b.clone());
    // A position delete in another partition applies to nothing.
    let mut pos_elsewhere = E::data(&t.url("data/pos-x.parquet"), 2, part("xx", 1));
    pos_elsewhere.content = 1;
    // Equality deletes for partition us at sequence 3: a (1 < 3) but not c (3 = 3).
    let mut eq = E::data(&t.url("data/eq.parquet"), 3, part("us", 1));
    eq.content = 2;
    // A deletion vector for c (3 <= 3), 5 rows.
    let mut dv = E::data(&t.url("data/dv.puffin"), 3, part("us", 1));
    dv.content = 1;
    dv.format = "puffin";
    dv.records = 5;
    dv.referenced = Some(c.clone());
    // A deleted delete file is not live.
    let mut gone = eq.clone();
    gone.status = 2;
    let deletes = t.manifest(
        "metadata/deletes.avro",
        &spec0(),
        &[pos, pos_b, pos_elsewhere, eq, dv, gone],
        false,
    );
    // A global equality delete (unpartitioned spec 1) at sequence 2: a and b, not c.
    let mut global = E::data(&t.url("data/eq-all.parquet"), 2, vec![]);
    global.content = 2;
    let global = t.manifest("metadata/global.avro", &[], &[global], false);
    let list = t.manifest_list(
        "metadata/snap-3.avro",
        &[(&data, 0, 0, 3), (&deletes, 1, 0, 2), (&global, 1, 1, 2)],
    );
    let rel = "metadata/00003-abc.metadata.json";
    t.metadata(rel, &metadata_v2(Some(33), &[(33, 3_000, 3, &list)]));

    let snap = t.read(rel, None).unwrap();
    assert_eq!(names(&snap.files), ["a.parquet", "b.parquet", "c.parquet"]);
    let deletes: Vec<Deletes> = snap.files.iter().map(|f| f.deletes).collect();
    assert_eq!(
        deletes,
        [
            Deletes::Files {
                position: 1,
                equality: 2
            },
            Deletes::Files {
                position: 1,
                equality: 1
            },
            Deletes::Vector { rows: Some(5) },
        ]
    );
    assert_eq!(snap.files_with_deletes().count(), 3);
}

#[test]
fn non_parquet_data_files_are_refused() {
    let t = Table::new();
    let mut orc = E::data(&t.url("data/a.orc"), 1, part("us", 1));
    orc.format = "ORC";
    let m = t.manifest(
        "metadata/m.avro",
        &spec0(),
        &[E::data(&t.url("data/a.parquet"), 1, part("us", 1)), orc],
        false,
    );
    let list = t.manifest_list("metadata/snap.avro", &[(&m, 0, 0, 1)]);
    let rel = "metadata/00001-abc.metadata.json";
    t.metadata(rel, &metadata_v2(Some(1), &[(1, 1, 1, &list)]));
    let e = lake(t.read(rel, None).unwrap_err());
    let text = e.to_string();
    assert!(matches!(e, LakeError::Unsupported { .. }), "{text}");
    assert!(text.contains("ORC") && text.contains("a.orc"), "{text}");

    // A deleted ORC entry is no matter.
    let mut orc = E::data(&t.url("data/a.orc"), 1, part("us", 1));
    orc.format = "ORC";
    orc.status = 2;
    t.manifest("metadata/m.avro", &spec0(), &[orc], false);
    assert!(t.read(rel, None).unwrap().files.is_empty());
}

#[test]
fn damaged_avro_is_an_error_not_a_panic() {
    let (t, _) = simple_table();
    let rel = "metadata/00001-abc.metadata.json";
    let good = std::fs::read(t.path("metadata/m1.avro")).unwrap();
    let mut damaged = vec![
        b"garbage, not Avro at all".to_vec(),
        Vec::new(),
        good[..good.len() / 2].to_vec(),
        good[..good.len() - 3].to_vec(),
    ];
    // Bytes flipped through the data block.
    let mut flipped = good.clone();
    let n = flipped.len();
    for i in (n.saturating_sub(60)..n - 16).step_by(3) {
        flipped[i] ^= 0xa5;
    }
    damaged.push(flipped);
    for (i, bytes) in damaged.iter().enumerate() {
        t.write("metadata/m1.avro", bytes);
        match t.read(rel, None) {
            Err(e @ Error::Lake { .. }) => {
                assert!(
                    matches!(LakeError::of(&e), Some(LakeError::Iceberg { .. })),
                    "{e}"
                );
                assert!(e.to_string().contains("m1.avro"), "{e}");
            }
            // Flipped bytes may still decode as some records; what matters is no panic.
            Ok(_) if i == 4 => {}
            Ok(s) => panic!("damage {i} read as {} files", s.files.len()),
            Err(other) => panic!("{other}"),
        }
    }
    // The manifest list damaged too.
    t.write("metadata/snap-1.avro", b"Obj\x01garbage");
    let e = lake(t.read(rel, None).unwrap_err());
    assert!(e.to_string().contains("snap-1.avro"), "{e}");
}

#[test]
fn a_missing_manifest_is_named() {
    let (t, _) = simple_table();
    std::fs::remove_file(t.path("metadata/m1.avro")).unwrap();
    let e = lake(
        t.read("metadata/00001-abc.metadata.json", None)
            .unwrap_err(),
    );
    let text = e.to_string();
    assert!(matches!(e, LakeError::Iceberg { .. }), "{text}");
    assert!(
        text.contains(&t.url("metadata/m1.avro")) && text.contains("does not have"),
        "{text}"
    );
    std::fs::remove_file(t.path("metadata/snap-1.avro")).unwrap();
    let e = lake(
        t.read("metadata/00001-abc.metadata.json", None)
            .unwrap_err(),
    );
    assert!(e.to_string().contains("snap-1.avro"), "{e}");
}

#[test]
fn malformed_metadata_is_an_error() {
    let t = Table::new();
    let rel = "metadata/00001-abc.metadata.json";
    for bad in [
        "{not json",
        "[]",
        r#"{"format-version": 2}"#,
        r#"{"format-version": "two", "location": "x"}"#,
    ] {
        t.write(rel, bad.as_bytes());
        let e = lake(t.read(rel, None).unwrap_err());
        assert!(matches!(e, LakeError::Iceberg { .. }), "{bad}: {e}");
    }
    // A current snapshot that is not among the snapshots.
    t.metadata(rel, &metadata_v2(Some(5), &[]));
    let e = lake(t.read(rel, None).unwrap_err());
    assert!(e.to_string().contains("snapshot 5"), "{e}");
    // A manifest entry without its required fields.
    let schema = Schema::parse_str(
        r#"{"type": "record", "name": "manifest_entry", "fields": [{"name": "status", "type": "int"}]}"#,
    )
    .unwrap();
    let mut w = Writer::new(&schema, Vec::new());
    w.append(Value::Record(vec![("status".into(), Value::Int(1))]))
        .unwrap();
    let m = t.write("metadata/m.avro", &w.into_inner().unwrap());
    let list = t.manifest_list("metadata/snap.avro", &[(&m, 0, 0, 1)]);
    t.metadata(rel, &metadata_v2(Some(1), &[(1, 1, 1, &list)]));
    let e = lake(t.read(rel, None).unwrap_err());
    assert!(e.to_string().contains("data_file"), "{e}");
}

#[test]
fn a_v1_table_names_its_manifests_in_the_metadata() {
    let t = Table::new();
    let m = t.manifest(
        "metadata/m1.avro",
        &[("region", json!("string"))],
        &[E::data(
            &t.url("data/a.parquet"),
            0,
            vec![Some(Value::String("us".into()))],
        )],
        true,
    );
    let rel = "metadata/v1.metadata.json";
    t.metadata(
        rel,
        &json!({
            "format-version": 1,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": t.url(""),
            "last-updated-ms": 1,
            "last-column-id": 2,
            "schema": {"type": "struct", "fields": [
                {"id": 1, "name": "id", "required": true, "type": "long"},
                {"id": 2, "name": "region", "required": false, "type": "string"}]},
            "partition-spec": [{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}],
            "current-snapshot-id": 7,
            "snapshots": [{"snapshot-id": 7, "timestamp-ms": 70, "manifests": [m]}],
        }),
    );
    let snap = t.read(rel, None).unwrap();
    assert_eq!(snap.version, 7);
    assert_eq!(snap.partition_columns, ["region"]);
    assert_eq!(names(&snap.files), ["a.parquet"]);
    assert_eq!(
        snap.files[0].partition,
        [("region".to_string(), Some("us".to_string()))]
    );
    // No snapshot log: time travel says so rather than guessing.
    let e = lake(t.read(rel, Some(AsOf::TimestampMs(100))).unwrap_err());
    assert!(e.to_string().contains("snapshot log"), "{e}");
}

#[test]
fn bare_absolute_paths_are_kept_as_written() {
    let t = Table::new();
    let bare = t.path("data/a.parquet").display().to_string();
    let m = t.manifest(
        "metadata/m1.avro",
        &spec0(),
        &[E::data(&bare, 1, part("us", 1))],
        false,
    );
    // The manifest list names the manifest by bare path too.
    let m_bare = m.strip_prefix("file://").unwrap().to_string();
    let list = t.manifest_list("metadata/snap.avro", &[(&m_bare, 0, 0, 1)]);
    let rel = "metadata/00001-abc.metadata.json";
    t.metadata(rel, &metadata_v2(Some(1), &[(1, 1, 1, &list)]));
    let snap = t.read(rel, None).unwrap();
    assert_eq!(snap.files[0].url, bare);
    assert!(Path::new(&snap.files[0].url).is_absolute());
}

#[test]
fn partition_values_render_as_iceberg_shows_them() {
    let field = |transform: &str, source: &str| SpecField {
        name: "p".into(),
        transform: transform.into(),
        source_type: Some(source.into()),
    };
    let r = |v: Value, f: &SpecField| render(&v, Some(f));
    assert_eq!(
        r(Value::Int(54), &field("year", "date")).as_deref(),
        Some("2024")
    );
    assert_eq!(
        r(Value::Int(649), &field("month", "timestamp")).as_deref(),
        Some("2024-02")
    );
    assert_eq!(
        r(Value::Int(-1), &field("month", "date")).as_deref(),
        Some("1969-12")
    );
    assert_eq!(
        r(Value::Int(1), &field("hour", "timestamptz")).as_deref(),
        Some("1970-01-01-01")
    );
    assert_eq!(
        r(Value::Int(0), &field("identity", "date")).as_deref(),
        Some("1970-01-01")
    );
    assert_eq!(
        r(Value::Long(1_500_000), &field("identity", "timestamptz")).as_deref(),
        Some("1970-01-01T00:00:01.500+00:00")
    );
    assert_eq!(
        r(Value::Long(3_600_000_000), &field("identity", "timestamp")).as_deref(),
        Some("1970-01-01T01:00:00")
    );
    assert_eq!(
        r(
            Value::Bytes(vec![0xff, 0x85]),
            &field("identity", "decimal(9, 2)")
        )
        .as_deref(),
        Some("-1.23")
    );
    assert_eq!(
        r(Value::Bytes(vec![0x05]), &field("identity", "decimal(9,3)")).as_deref(),
        Some("0.005")
    );
    assert_eq!(
        r(Value::Int(7), &field("bucket[16]", "string")).as_deref(),
        Some("7")
    );
    assert_eq!(
        r(opt(None), &field("identity", "string")),
        None,
        "null is None"
    );
    assert_eq!(
        render(&Value::Double(-0.0), None),
        Some("-0".to_string()),
        "-0.0 and 0.0 are different partitions"
    );
}

/// A record whose array claims 500 million items: refused by the allocation limit, where
/// apache-avro's default would reserve 28 GB and abort.
#[test]
fn hostile_avro_lengths_are_an_error() {
    let (t, _) = simple_table();
    let schema = Schema::parse_str(
        r#"{"type": "record", "name": "manifest_entry", "fields": [{"name": "a", "type": {"type": "array", "items": "long"}}]}"#,
    )
    .unwrap();
    let mut w = Writer::new(&schema, Vec::new());
    w.append(Value::Record(vec![(
        "a".into(),
        Value::Array(vec![Value::Long(1)]),
    )]))
    .unwrap();
    let mut bytes = w.into_inner().unwrap();
    let n = bytes.len();
    let sync = bytes[n - 16..].to_vec();
    assert_eq!(&bytes[n - 21..n - 16], &[0x02, 0x06, 0x02, 0x02, 0x00]);
    bytes.truncate(n - 21);
    // One record of 7 bytes: an array claiming 500,000,000 items (zigzag varint), one item.
    let mut count = Vec::new();
    let mut z: u64 = 500_000_000 << 1;
    while z >= 0x80 {
        count.push((z as u8) | 0x80);
        z >>= 7;
    }
    count.push(z as u8);
    let data: Vec<u8> = count.iter().copied().chain([0x02, 0x00]).collect();
    bytes.push(0x02);
    bytes.push((data.len() as u8) << 1);
    bytes.extend_from_slice(&data);
    bytes.extend_from_slice(&sync);
    t.write("metadata/m1.avro", &bytes);
    let e = lake(
        t.read("metadata/00001-abc.metadata.json", None)
            .unwrap_err(),
    );
    assert!(matches!(e, LakeError::Iceberg { .. }), "{e}");
    assert!(e.to_string().contains("m1.avro"), "{e}");
}

/// A field inside a struct renamed since files were written: files hold it under its old name,
/// so a path into that struct is found by the field ids from the column down (answering from
/// the path's name would find nothing in the old files: a false "absent"); a path the current
/// schema does not have is refused; the table's other columns are asked as before.
#[test]
fn a_path_into_a_struct_whose_fields_were_renamed_goes_by_field_ids() {
    let t = Table::new();
    let m = t.manifest(
        "metadata/m1.avro",
        &spec0(),
        &[E::data(&t.url("data/a.parquet"), 1, part("us", 19_000))],
        false,
    );
    let list = t.manifest_list("metadata/snap-1.avro", &[(&m, 0, 0, 1)]);
    let mut meta = metadata_v2(Some(11), &[(11, 1_000, 1, &list)]);
    let with_s = |id: i64, inner: &str| {
        json!({"type": "struct", "schema-id": id, "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "region", "required": false, "type": "string"},
            {"id": 3, "name": "ts", "required": false, "type": "timestamptz"},
            {"id": 4, "name": "s", "required": false, "type": {"type": "struct", "fields": [
                {"id": 5, "name": inner, "required": false, "type": "int"}]}}]})
    };
    meta["schemas"] = json!([with_s(0, "a"), with_s(1, "b")]);
    meta["current-schema-id"] = json!(1);
    t.metadata("metadata/00001-abc.metadata.json", &meta);
    let snap = t.read("metadata/00001-abc.metadata.json", None).unwrap();
    let by_ids = sbbf_parquet::read::file::by_field_ids(&[4, 5]);
    assert_eq!(snap.file_column("s.b").unwrap(), by_ids);
    match lake(snap.file_column("s.a").unwrap_err()) {
        LakeError::Unsupported { feature, .. } => assert!(feature.contains("`s`"), "{feature}"),
        other => panic!("{other}"),
    }
    assert_eq!(snap.file_column("region").unwrap(), "region");

    // Unrenamed, the same path is the files' own.
    meta["schemas"] = json!([with_s(0, "a"), with_s(1, "a")]);
    t.metadata("metadata/00001-abc.metadata.json", &meta);
    let snap = t.read("metadata/00001-abc.metadata.json", None).unwrap();
    assert_eq!(snap.file_column("s.a").unwrap(), "s.a");
}

/// Iceberg locations are used as written: pyiceberg and Java write the partition folder of
/// `x/y` as `p=x%2Fy`, those characters on disk. Decoding them as a URL's would name a file
/// that does not exist (`p=x/y`).
#[test]
fn locations_are_read_as_written_not_percent_decoded() {
    let t = Table::new();
    let raw = format!(
        "file://{}",
        t.path("data/p=x%2Fy/a%20b?c#d.parquet").display()
    );
    let m = t.manifest(
        "metadata/m1.avro",
        &spec0(),
        &[E::data(&raw, 1, part("us", 19_000))],
        false,
    );
    let list = t.manifest_list("metadata/snap-1.avro", &[(&m, 0, 0, 1)]);
    t.metadata(
        "metadata/00001-abc.metadata.json",
        &metadata_v2(Some(11), &[(11, 1_000, 1, &list)]),
    );
    let snap = t.read("metadata/00001-abc.metadata.json", None).unwrap();
    let local = crate::local_files(&snap).unwrap();
    assert_eq!(local.len(), 1);
    assert_eq!(local[0].1, t.path("data/p=x%2Fy/a%20b?c#d.parquet"));
    let root = crate::StoreRoot::local();
    let at = root.path_of(&snap.files[0].url).unwrap();
    let want =
        object_store::path::Path::from_absolute_path(t.path("data/p=x%2Fy/a%20b?c#d.parquet"))
            .unwrap();
    assert_eq!(at, want);
}

/// A reader's known snapshot ([`KnownSnapshot`]) stands for the snapshot's manifests only
/// when it is exactly the current one (same id, same manifest list) of a table no spec of
/// which partitions: its files are then the known ones and no manifest is read (here they
/// are gone). Another snapshot, another list, or a partitioned table: read from the
/// manifests as always.
#[test]
fn a_known_snapshot_stands_for_the_manifests_only_when_exact() {
    let t = Table::new();
    let m = t.manifest(
        "metadata/m1.avro",
        &[],
        &[E::data(&t.url("data/a.parquet"), 1, vec![])],
        false,
    );
    let list = t.manifest_list("metadata/snap-1.avro", &[(&m, 0, 0, 1)]);
    let mut meta = metadata_v2(Some(11), &[(11, 1_000, 1, &list)]);
    meta["partition-specs"] = json!([{"spec-id": 0, "fields": []}]);
    t.metadata("metadata/00001-abc.metadata.json", &meta);
    let url = Url::parse(&t.url("metadata/00001-abc.metadata.json")).unwrap();
    let read = |known: &KnownSnapshot| {
        let prior = Prior {
            known: Some(known),
            ..Prior::default()
        };
        sbbf_parquet::source::block_on(snapshot(&StoreRoot::local(), "t", &url, None, prior))
            .expect("a runtime")
    };
    let plain = t.read("metadata/00001-abc.metadata.json", None).unwrap();
    assert_eq!(plain.data_only_list(), Some(list.as_str()));
    let held = DataFile {
        url: t.url("data/held.parquet"),
        ..plain.files[0].clone()
    };
    let known = KnownSnapshot {
        metadata: plain.metadata.clone(),
        version: 11,
        manifest_list: list.clone(),
        data_manifests: vec![m.clone()],
        files: vec![held.clone()],
    };
    std::fs::remove_file(t.path("metadata/m1.avro")).unwrap();
    std::fs::remove_file(t.path("metadata/snap-1.avro")).unwrap();
    let snap = read(&known).unwrap();
    assert_eq!(snap.files, [held]);
    assert_eq!(snap.data_manifests(), Some(&[m.clone()][..]));
    assert_eq!(snap.data_only_list(), Some(list.as_str()));
    // Not this snapshot, or not its list: the manifests are asked for (and are gone).
    for other in [
        KnownSnapshot {
            version: 12,
            ..known.clone()
        },
        KnownSnapshot {
            manifest_list: format!("{list}.old"),
            ..known.clone()
        },
    ] {
        let e = read(&other).unwrap_err().to_string();
        assert!(e.contains("storage does not have"), "{e}");
    }
    // A table that partitions: its files need their partition tuples, which are not held.
    meta["partition-specs"] = metadata_v2(None, &[])["partition-specs"].clone();
    t.metadata("metadata/00001-abc.metadata.json", &meta);
    let e = read(&known).unwrap_err().to_string();
    assert!(e.contains("storage does not have"), "{e}");
    // What changed since a snapshot whose list is known: the snapshot itself (partitioned or
    // not) is unchanged without its list being read; with another list, the list is asked.
    let since_list = |list: &str| {
        sbbf_parquet::source::block_on(super::since(
            &StoreRoot::local(),
            "t",
            &url,
            None,
            None,
            11,
            std::slice::from_ref(&m),
            Some(list),
        ))
        .expect("a runtime")
    };
    match since_list(&list).unwrap() {
        crate::since::Tail::Read(tail) => {
            assert_eq!((tail.version, tail.commits), (11, 0));
            assert!(tail.added.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let e = since_list("elsewhere.avro").unwrap_err().to_string();
    assert!(e.contains("storage does not have"), "{e}");
}
