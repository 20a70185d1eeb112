//! The table metadata file (JSON; spec "Table Metadata", "Appendix C"): the fields a
//! snapshot's data files are found with. Fields this reader does not use are left to serde to
//! skip, so a newer writer's additions do not break it.

use super::Context;
use sbbf_parquet::Error;
use serde::Deserialize;
use std::collections::HashMap;

/// The metadata fields read, as written (kebab-case names; v1 and v2/v3 spellings both).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) struct TableMetadata {
    /// 1, 2 or 3; a newer version may change what the fields below mean, so it is refused.
    pub format_version: i64,
    /// Where the table says it lives (required by every version).
    pub location: String,
    /// The current snapshot: absent, null or -1 when the table has none yet.
    pub current_snapshot_id: Option<i64>,
    /// Every snapshot kept.
    pub snapshots: Option<Vec<SnapshotEntry>>,
    /// Which snapshot was current when: the history time travel reads.
    pub snapshot_log: Option<Vec<LogEntry>>,
    /// The partition specs (v2 on; v1 writers may write them too).
    pub partition_specs: Option<Vec<PartitionSpec>>,
    /// The spec new data is written with.
    pub default_spec_id: Option<i32>,
    /// v1: the one partition spec (its fields).
    pub partition_spec: Option<Vec<PartitionField>>,
    /// The schemas (v2 on), as JSON: only field ids and types are looked at.
    pub schemas: Option<Vec<serde_json::Value>>,
    /// The current schema's id.
    pub current_schema_id: Option<i32>,
    /// v1: the one schema.
    pub schema: Option<serde_json::Value>,
    /// Branches and tags: `main` stands for the current snapshot when the id is absent.
    pub refs: Option<HashMap<String, SnapshotRef>>,
    /// Keys of an encrypted table (v3).
    pub encryption_keys: Option<Vec<serde_json::Value>>,
    /// The table's properties (`write.metadata.path` moves its metadata files elsewhere).
    pub properties: Option<HashMap<String, serde_json::Value>>,
}

/// One snapshot in `snapshots`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) struct SnapshotEntry {
    /// Its id: what a version asks for.
    pub snapshot_id: i64,
    /// When it was committed.
    pub timestamp_ms: i64,
    /// Its sequence number (v2 on; v1: 0).
    pub sequence_number: Option<i64>,
    /// Its manifest list (v2 on; v1 may name manifests instead).
    pub manifest_list: Option<String>,
    /// v1: its manifests, when it has no manifest list.
    pub manifests: Option<Vec<String>>,
    /// v3: the key that encrypts the manifest list's key metadata.
    pub key_id: Option<String>,
    /// The schema current when it was committed (v2 on; optional in v1).
    pub schema_id: Option<i32>,
}

/// One entry of `snapshot-log`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) struct LogEntry {
    /// When the snapshot became current.
    pub timestamp_ms: i64,
    /// The snapshot.
    pub snapshot_id: i64,
}

/// A branch or tag.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) struct SnapshotRef {
    /// The snapshot it points at.
    pub snapshot_id: i64,
}

/// A partition spec.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) struct PartitionSpec {
    /// Its id, which manifests name.
    pub spec_id: i32,
    /// Its fields, in the order data files' partition tuples hold them.
    pub fields: Vec<PartitionField>,
}

/// A partition field.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) struct PartitionField {
    /// Its name, as the partition tuple names it.
    pub name: String,
    /// `identity`, `bucket[N]`, `truncate[W]`, `year`, `month`, `day`, `hour`, `void`.
    pub transform: String,
    /// The source column's field id.
    pub source_id: Option<i32>,
}

/// A partition spec as manifests are read with it: each field's name, transform and source
/// type (for rendering values as text).
#[derive(Debug, Clone)]
pub(super) struct Spec {
    /// The fields.
    pub fields: Vec<SpecField>,
}

/// One field of a [`Spec`].
#[derive(Debug, Clone)]
pub(super) struct SpecField {
    /// The partition field's name.
    pub name: String,
    /// Its transform.
    pub transform: String,
    /// The source column's Iceberg type (`date`, `decimal(9,2)`, ...), when the schema has it.
    pub source_type: Option<String>,
}

impl Spec {
    /// Whether no field partitions anything: equality deletes in such a spec are global.
    pub fn is_unpartitioned(&self) -> bool {
        self.fields.iter().all(|f| f.transform == "void")
    }
}

/// Parses the metadata file's bytes.
pub(super) fn parse(bytes: &[u8], cx: &Context) -> Result<TableMetadata, Error> {
    serde_json::from_slice(bytes).map_err(|e| {
        cx.error_from(
            format!("the metadata file is not valid table metadata JSON ({e})"),
            e,
        )
    })
}

impl TableMetadata {
    /// The partition specs by id, with their source columns' types from the current schema.
    pub fn specs(&self) -> HashMap<i32, Spec> {
        let types = self.current_schema().map(field_types).unwrap_or_default();
        let resolve = |fields: &[PartitionField]| Spec {
            fields: fields
                .iter()
                .map(|f| SpecField {
                    name: f.name.clone(),
                    transform: f.transform.clone(),
                    source_type: f.source_id.and_then(|s| types.get(&s).cloned()),
                })
                .collect(),
        };
        let mut specs = HashMap::new();
        if let Some(fields) = &self.partition_spec {
            specs.insert(0, resolve(fields));
        }
        for s in self.partition_specs.iter().flatten() {
            specs.insert(s.spec_id, resolve(&s.fields));
        }
        specs
    }

    /// The spec new data is written with: `default-spec-id`, or v1's only spec.
    pub fn default_spec_id(&self) -> i32 {
        self.default_spec_id.unwrap_or(0)
    }

    /// The current schema's top-level columns by field id, each with the other names its
    /// id had in earlier schemas (a rename: files written before it hold the old name).
    pub(crate) fn columns(&self) -> Vec<crate::LakeColumn> {
        self.columns_of(self.current_schema_id)
    }

    /// [`TableMetadata::columns`] of the schema `schema_id` (a snapshot's, read as of it:
    /// its columns as they were named then); the current schema when there is no such id.
    pub(crate) fn columns_of(&self, schema_id: Option<i32>) -> Vec<crate::LakeColumn> {
        // (id, name, type: the primitive's name, or `struct`/`list`/`map`).
        let fields = |schema: &serde_json::Value| -> Vec<(i64, String, Option<String>)> {
            schema
                .get("fields")
                .and_then(|f| f.as_array())
                .map(|fs| {
                    fs.iter()
                        .filter_map(|f| {
                            let ty = match f.get("type") {
                                Some(serde_json::Value::String(t)) => Some(t.clone()),
                                Some(t) => {
                                    t.get("type").and_then(|t| t.as_str()).map(str::to_string)
                                }
                                None => None,
                            };
                            Some((
                                f.get("id")?.as_i64()?,
                                f.get("name")?.as_str()?.to_string(),
                                ty,
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let Some(current) = self
            .schema_by_id(schema_id)
            .or_else(|| self.current_schema())
        else {
            return Vec::new();
        };
        let all: Vec<(i64, String, Option<String>)> = self
            .schemas
            .iter()
            .flatten()
            .chain(self.schema.iter())
            .flat_map(fields)
            .collect();
        let inner = inner_fields_by_column(self.schemas.iter().flatten().chain(self.schema.iter()));
        let types: HashMap<i64, &serde_json::Value> = current
            .get("fields")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
            .filter_map(|f| Some((f.get("id")?.as_i64()?, f.get("type")?)))
            .collect();
        let identity = self.identity_sources();
        // Top-level fields with a default for files written before them (format v3).
        let defaulted: std::collections::HashSet<i64> = current
            .get("fields")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
            .filter(|f| f.get("initial-default").is_some_and(|d| !d.is_null()))
            .filter_map(|f| f.get("id")?.as_i64())
            .collect();
        fields(current)
            .into_iter()
            .map(|(id, name, data_type)| {
                let mut leaves = Vec::new();
                let mut inner_names = Vec::new();
                if let Some(ty) = types.get(&id) {
                    parquet_leaves(ty, "", &[id], &mut leaves, 0);
                    struct_names(ty, &mut inner_names, 0);
                }
                let mut earlier: Vec<String> = all
                    .iter()
                    .filter(|(i, n, _)| *i == id && *n != name)
                    .map(|(_, n, _)| n.clone())
                    .collect();
                earlier.sort();
                earlier.dedup();
                crate::LakeColumn {
                    name,
                    physical: None,
                    field_id: Some(id),
                    earlier_names: earlier,
                    inner_renamed: inner.get(&id).is_some_and(|f| names_changed(f)),
                    inner: leaves,
                    inner_names,
                    data_type,
                    missing_not_null: identity.contains(&id) || defaulted.contains(&id),
                }
            })
            .collect()
    }

    /// The field ids of every identity partition's source column, in any spec.
    fn identity_sources(&self) -> std::collections::HashSet<i64> {
        self.partition_spec
            .iter()
            .flatten()
            .chain(
                self.partition_specs
                    .iter()
                    .flatten()
                    .flat_map(|s| &s.fields),
            )
            .filter(|f| f.transform == "identity")
            .filter_map(|f| f.source_id.map(i64::from))
            .collect()
    }

    fn current_schema(&self) -> Option<&serde_json::Value> {
        self.schema_by_id(self.current_schema_id)
            .or(self.schema.as_ref())
    }

    /// The schema of `schemas` with the id `id`.
    fn schema_by_id(&self, id: Option<i32>) -> Option<&serde_json::Value> {
        let id = i64::from(id?);
        self.schemas
            .iter()
            .flatten()
            .find(|s| s.get("schema-id").and_then(|v| v.as_i64()) == Some(id))
    }

    /// The current snapshot's id: `current-snapshot-id`, else the `main` branch; `None` when
    /// the table has no snapshot (-1 is how v1 and v2 writers say so).
    pub fn current_snapshot_id(&self) -> Option<i64> {
        let id = self.current_snapshot_id.or_else(|| {
            self.refs
                .as_ref()
                .and_then(|r| r.get("main"))
                .map(|r| r.snapshot_id)
        });
        id.filter(|&id| id != -1)
    }

    /// The snapshot with id `id`.
    pub fn snapshot(&self, id: i64) -> Option<&SnapshotEntry> {
        self.snapshots
            .iter()
            .flatten()
            .find(|s| s.snapshot_id == id)
    }

    /// The ids of the snapshots kept, for messages.
    pub fn snapshot_ids(&self) -> Vec<i64> {
        self.snapshots
            .iter()
            .flatten()
            .map(|s| s.snapshot_id)
            .collect()
    }
}

/// Every field inside each top-level column (struct fields, list elements, map keys and
/// values, at any depth), as (field id, dotted path below the column) over all `schemas`,
/// by the column's field id.
fn inner_fields_by_column<'a>(
    schemas: impl Iterator<Item = &'a serde_json::Value>,
) -> HashMap<i64, Vec<(i64, String)>> {
    let mut by_column: HashMap<i64, Vec<(i64, String)>> = HashMap::new();
    for schema in schemas {
        for f in schema
            .get("fields")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
        {
            let (Some(id), Some(ty)) = (f.get("id").and_then(|i| i.as_i64()), f.get("type")) else {
                continue;
            };
            let found = by_column.entry(id).or_default();
            collect_inner(ty, "", found, 0);
        }
    }
    by_column
}

/// The fields directly below the nested type `ty`, as (field id, name, type): a struct's
/// fields, a list's `element`, a map's `key` and `value`; nothing for a primitive.
fn children(ty: &serde_json::Value) -> Vec<(Option<i64>, &str, Option<&serde_json::Value>)> {
    let id = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_i64());
    match ty.get("type").and_then(|t| t.as_str()) {
        Some("struct") => ty
            .get("fields")
            .and_then(|f| f.as_array())
            .into_iter()
            .flatten()
            .map(|f| {
                let name = f.get("name").and_then(|n| n.as_str()).unwrap_or("");
                (id(f.get("id")), name, f.get("type"))
            })
            .collect(),
        Some("list") => vec![(id(ty.get("element-id")), "element", ty.get("element"))],
        Some("map") => vec![
            (id(ty.get("key-id")), "key", ty.get("key")),
            (id(ty.get("value-id")), "value", ty.get("value")),
        ],
        _ => Vec::new(),
    }
}

/// The deepest nesting walked: deeper types (hostile input) are not looked into.
const MAX_DEPTH: usize = 64;

/// Notes (id, path) of every field below the nested type `ty` (paths below `prefix`).
fn collect_inner(ty: &serde_json::Value, prefix: &str, out: &mut Vec<(i64, String)>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for (id, name, t) in children(ty) {
        let path = match prefix {
            "" => name.to_string(),
            p => format!("{p}.{name}"),
        };
        if let Some(id) = id {
            out.push((id, path.clone()));
        }
        if let Some(t @ serde_json::Value::Object(_)) = t {
            collect_inner(t, &path, out, depth + 1);
        }
    }
}

/// Notes every struct field below the nested type `ty` (at any depth: inside list elements
/// and map values too) by its field id and current name.
fn struct_names(ty: &serde_json::Value, out: &mut Vec<crate::InnerName>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let is_struct = ty.get("type").and_then(|t| t.as_str()) == Some("struct");
    for (id, name, t) in children(ty) {
        if is_struct {
            out.push(crate::InnerName {
                id,
                physical: Vec::new(),
                name: name.to_string(),
            });
        }
        if let Some(t @ serde_json::Value::Object(_)) = t {
            struct_names(t, out, depth + 1);
        }
    }
}

/// Notes each leaf below the nested type `ty` as its Parquet path below the column (a
/// struct's field by its name, a list's element as `list.element`, a map's key and value as
/// `key_value.key` and `key_value.value`: the layout the Iceberg spec gives Parquet files)
/// and the field ids from the column (`ids`) down to it.
fn parquet_leaves(
    ty: &serde_json::Value,
    prefix: &str,
    ids: &[i64],
    out: &mut Vec<(String, Vec<i64>)>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let kind = ty.get("type").and_then(|t| t.as_str());
    for (id, name, t) in children(ty) {
        let Some(id) = id else {
            continue;
        };
        let step = match kind {
            Some("list") => "list.element".to_string(),
            Some("map") => format!("key_value.{name}"),
            _ => name.replace('\\', "\\\\").replace('.', "\\."),
        };
        let path = match prefix {
            "" => step,
            p => format!("{p}.{step}"),
        };
        let mut chain = ids.to_vec();
        chain.push(id);
        match t {
            Some(t @ serde_json::Value::Object(_)) => {
                parquet_leaves(t, &path, &chain, out, depth + 1)
            }
            _ => out.push((path, chain)),
        }
    }
}

/// Whether some inner field had two paths over the schemas (renamed, or moved), or some path
/// named two fields (dropped and added again under its name).
fn names_changed(fields: &[(i64, String)]) -> bool {
    let mut path_of: HashMap<i64, &str> = HashMap::new();
    let mut id_of: HashMap<&str, i64> = HashMap::new();
    fields.iter().any(|(id, path)| {
        let other_path = *path_of.entry(*id).or_insert(path) != path.as_str();
        let other_id = *id_of.entry(path).or_insert(*id) != *id;
        other_path || other_id
    })
}

/// The primitive types of a schema's fields by field id (nested structs, list elements and
/// map keys and values included: a partition may take its source from any of them).
fn field_types(schema: &serde_json::Value) -> HashMap<i32, String> {
    let mut types = HashMap::new();
    collect_types(schema, &mut types, 0);
    types
}

/// Walks a struct/list/map type, noting each primitive field's type.
fn collect_types(ty: &serde_json::Value, out: &mut HashMap<i32, String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for (id, _, t) in children(ty) {
        match t {
            Some(serde_json::Value::String(s)) => {
                if let Some(id) = id.and_then(|v| i32::try_from(v).ok()) {
                    out.insert(id, s.clone());
                }
            }
            Some(t @ serde_json::Value::Object(_)) => collect_types(t, out, depth + 1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Metadata whose schemas are `structs` in order (the last is current): each the type of
    /// top-level column `s` (id 2), beside a plain column `t` (id 1).
    fn with_s(structs: &[serde_json::Value]) -> TableMetadata {
        let schemas: Vec<serde_json::Value> = structs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                json!({"type": "struct", "schema-id": i, "fields": [
                    {"id": 1, "name": "t", "required": false, "type": "long"},
                    {"id": 2, "name": "s", "required": false, "type": s},
                ]})
            })
            .collect();
        serde_json::from_value(json!({
            "format-version": 2,
            "location": "/t",
            "schemas": schemas,
            "current-schema-id": structs.len() - 1,
        }))
        .unwrap()
    }

    fn st(fields: &[(i64, &str)]) -> serde_json::Value {
        let fields: Vec<_> = fields
            .iter()
            .map(|(id, n)| json!({"id": id, "name": n, "required": false, "type": "int"}))
            .collect();
        json!({"type": "struct", "fields": fields})
    }

    fn inner_renamed(meta: &TableMetadata) -> Vec<(String, bool)> {
        meta.columns()
            .into_iter()
            .map(|c| (c.name, c.inner_renamed))
            .collect()
    }

    #[test]
    fn inner_fields_renamed_or_replaced_are_noticed() {
        let flags = |m| inner_renamed(&m);
        let no = vec![("t".to_string(), false), ("s".to_string(), false)];
        let yes = vec![("t".to_string(), false), ("s".to_string(), true)];
        // Unchanged, and a field added: names still mean what they meant.
        assert_eq!(flags(with_s(&[st(&[(3, "a")])])), no);
        assert_eq!(
            flags(with_s(&[st(&[(3, "a")]), st(&[(3, "a"), (4, "d")])])),
            no
        );
        // `a` renamed to `b`.
        assert_eq!(flags(with_s(&[st(&[(3, "a")]), st(&[(3, "b")])])), yes);
        // `a` dropped and added again: another field under the same name.
        assert_eq!(flags(with_s(&[st(&[(3, "a")]), st(&[(5, "a")])])), yes);
        // Inside a list's element and a map's value.
        let list = |inner| json!({"type": "list", "element-id": 6, "element": inner, "element-required": false});
        assert_eq!(
            flags(with_s(&[list(st(&[(3, "a")])), list(st(&[(3, "a")]))])),
            no
        );
        assert_eq!(
            flags(with_s(&[list(st(&[(3, "a")])), list(st(&[(3, "z")]))])),
            yes
        );
        let map = |inner| json!({"type": "map", "key-id": 7, "key": "string", "value-id": 8, "value": inner, "value-required": false});
        assert_eq!(
            flags(with_s(&[map(st(&[(3, "a")])), map(st(&[(3, "b")]))])),
            yes
        );
    }

    #[test]
    fn identity_sources_and_defaulted_columns_may_be_missing_from_files() {
        let meta: TableMetadata = serde_json::from_value(json!({
            "format-version": 3,
            "location": "/t",
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "required": false, "type": "long"},
                {"id": 2, "name": "region", "required": false, "type": "string"},
                {"id": 3, "name": "ts", "required": false, "type": "timestamp"},
                {"id": 4, "name": "flag", "required": false, "type": "boolean",
                 "initial-default": true},
                {"id": 5, "name": "old", "required": false, "type": "string"},
            ]}],
            "current-schema-id": 0,
            "default-spec-id": 1,
            "partition-specs": [
                {"spec-id": 0, "fields": [
                    {"name": "old", "transform": "identity", "source-id": 5, "field-id": 1000}]},
                {"spec-id": 1, "fields": [
                    {"name": "region", "transform": "identity", "source-id": 2, "field-id": 1001},
                    {"name": "ts_day", "transform": "day", "source-id": 3, "field-id": 1002}]},
            ],
        }))
        .unwrap();
        let flagged: Vec<(String, bool)> = meta
            .columns()
            .into_iter()
            .map(|c| (c.name, c.missing_not_null))
            .collect();
        let want = [
            ("id", false),
            ("region", true),
            ("ts", false),
            ("flag", true),
            ("old", true),
        ];
        let want: Vec<(String, bool)> = want.iter().map(|(n, b)| (n.to_string(), *b)).collect();
        assert_eq!(flagged, want);
    }

    #[test]
    fn inner_leaves_carry_parquet_paths_and_id_chains() {
        let s = json!({"type": "struct", "fields": [
            {"id": 3, "name": "a.b", "required": false, "type": "long"},
            {"id": 4, "name": "l", "required": false, "type": {
                "type": "list", "element-id": 5, "element-required": false,
                "element": {"type": "struct", "fields": [
                    {"id": 6, "name": "x", "required": false, "type": "string"}]}}},
            {"id": 7, "name": "m", "required": false, "type": {
                "type": "map", "key-id": 8, "key": "string", "value-id": 9, "value": "long"}},
        ]});
        let inner = &with_s(&[s]).columns()[1].inner;
        let want: Vec<(String, Vec<i64>)> = vec![
            ("a\\.b".into(), vec![2, 3]),
            ("l.list.element.x".into(), vec![2, 4, 5, 6]),
            ("m.key_value.key".into(), vec![2, 7, 8]),
            ("m.key_value.value".into(), vec![2, 7, 9]),
        ];
        assert_eq!(inner, &want);
    }
}
