//! A snapshot's Avro files: its manifest list (spec "Manifest Lists", records `manifest_file`)
//! and its manifests (spec "Manifests", records `manifest_entry` holding a `data_file`).
//! Fields are read by name from generic Avro values, as each file's own schema gives them, so
//! v1, v2 and v3 files (with optional fields present or absent) read alike.

use super::metadata::Spec;
use super::partition::{render, unwrap};
use super::Context;
use apache_avro::types::Value;
use apache_avro::Reader;
use sbbf_parquet::Error;

/// Entry status: the file was removed by the manifest's snapshot ("informational only").
const DELETED: i32 = 2;
/// Entry status: the file was added by the manifest's snapshot.
const ADDED: i32 = 1;

/// One manifest of a manifest list.
#[derive(Debug, Clone)]
pub(super) struct ManifestRef {
    /// Its location.
    pub path: String,
    /// 0: data files; 1: delete files (v1 lists have no such field: data).
    pub content: i32,
    /// The partition spec its files were written with.
    pub spec_id: Option<i32>,
    /// The sequence number of the snapshot that added it, which its ADDED entries inherit
    /// (v1: 0).
    pub sequence_number: i64,
}

impl ManifestRef {
    /// A v1 snapshot's manifest named in the metadata (no manifest list): data files, with
    /// the snapshot's sequence number (v1: none, so 0).
    pub fn v1(path: String, sequence_number: i64) -> ManifestRef {
        ManifestRef {
            path,
            content: 0,
            spec_id: None,
            sequence_number,
        }
    }
}

/// A live (ADDED or EXISTING) file of a manifest.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    /// 0: data; 1: position deletes (or a deletion vector); 2: equality deletes.
    pub content: i32,
    /// Its location, as written.
    pub path: String,
    /// `PARQUET`, `AVRO`, `ORC`, `PUFFIN` (any case).
    pub format: String,
    /// The partition spec id of the manifest it came from.
    pub spec_id: Option<i32>,
    /// Partition values by partition field name.
    pub partition: Vec<(String, Option<String>)>,
    /// Rows (for a delete file: deleted rows or positions).
    pub record_count: u64,
    /// Bytes.
    pub size: u64,
    /// The data sequence number, after inheritance.
    pub sequence_number: i64,
    /// The one data file a position delete file or deletion vector applies to, when set.
    pub referenced_data_file: Option<String>,
    /// The field ids an equality delete file's rows are matched on (empty when absent).
    pub equality_ids: Vec<i32>,
    /// Lower and upper bounds by field id, in Iceberg's single-value binary form (empty
    /// when absent or not in the shape the spec gives them: nothing is ruled out then).
    pub lower_bounds: Vec<(i32, Vec<u8>)>,
    pub upper_bounds: Vec<(i32, Vec<u8>)>,
}

/// One Avro record's fields, read by name, with errors naming the file they come from.
struct Record<'a> {
    fields: &'a [(String, Value)],
    cx: &'a Context,
    /// "manifest list file:///…/snap-1.avro", for messages.
    file: &'a str,
}

impl<'a> Record<'a> {
    fn new(value: &'a Value, what: &str, cx: &'a Context, file: &'a str) -> Result<Self, Error> {
        match unwrap(value) {
            Value::Record(fields) => Ok(Record { fields, cx, file }),
            other => Err(cx.error(format!(
                "{file}: {what} is {}, not a record",
                type_name(other)
            ))),
        }
    }

    /// The field's value, `None` when absent or null.
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| unwrap(v))
            .filter(|v| !matches!(v, Value::Null))
    }

    fn wrong(&self, name: &str, want: &str, got: &Value) -> Error {
        self.cx.error(format!(
            "{}: field `{name}` is {}, not {want}",
            self.file,
            type_name(got)
        ))
    }

    fn missing(&self, name: &str) -> Error {
        self.cx
            .error(format!("{}: required field `{name}` is missing", self.file))
    }

    fn long(&self, name: &str) -> Result<Option<i64>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Long(n)) => Ok(Some(*n)),
            Some(Value::Int(n)) => Ok(Some(i64::from(*n))),
            Some(other) => Err(self.wrong(name, "a long", other)),
        }
    }

    fn int(&self, name: &str) -> Result<Option<i32>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Int(n)) => Ok(Some(*n)),
            Some(other) => Err(self.wrong(name, "an int", other)),
        }
    }

    fn string(&self, name: &str) -> Result<Option<&'a str>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(self.wrong(name, "a string", other)),
        }
    }

    /// A count or size: a long that is not negative.
    fn count(&self, name: &str) -> Result<u64, Error> {
        let n = self.long(name)?.ok_or_else(|| self.missing(name))?;
        u64::try_from(n).map_err(|_| {
            self.cx
                .error(format!("{}: field `{name}` is negative ({n})", self.file))
        })
    }

    /// Refuses encrypted files: key metadata means the file (or manifest) is encrypted.
    fn refuse_key_metadata(&self) -> Result<(), Error> {
        match self.get("key_metadata") {
            Some(_) => Err(self.cx.unsupported("encryption")),
            None => Ok(()),
        }
    }
}

/// The most apache-avro may allocate for one length it reads (a block, a string, an array's
/// item count). Its default, 512 MiB, lets a 7-byte record that claims 500 million array items
/// reserve 28 GB for their values and abort the process. Iceberg writers keep blocks far
/// smaller (Java flushes every 64 kB, pyiceberg writes a block per entry), and 16 Mi items
/// reserve under 1 GB of address space, which is not touched before the decoding fails.
pub(super) const AVRO_MAX_ALLOCATION: usize = 16 << 20;

/// Calls `each` with every record of the Avro file `bytes` (`file` names it in messages).
fn for_each_record(
    bytes: &[u8],
    cx: &Context,
    file: &str,
    mut each: impl FnMut(&Value) -> Result<(), Error>,
) -> Result<(), Error> {
    // Process-wide and set once: the first call in the process decides (this crate is the
    // only Avro reader in it, unless a host set its own limit first).
    apache_avro::util::max_allocation_bytes(AVRO_MAX_ALLOCATION);
    super::container::check(bytes, cx, file, super::container::MAX_BLOCK)?;
    let reader = Reader::new(bytes)
        .map_err(|e| cx.error_from(format!("{file} is not a readable Avro file ({e})"), e))?;
    for (i, value) in reader.enumerate() {
        let value = value.map_err(|e| {
            cx.error_from(format!("{file}: record {} cannot be read ({e})", i + 1), e)
        })?;
        each(&value)?;
    }
    Ok(())
}

/// The manifests a manifest list names, in its order.
pub(super) fn read_manifest_list(
    bytes: &[u8],
    cx: &Context,
    url: &str,
) -> Result<Vec<ManifestRef>, Error> {
    let file = format!("manifest list {url}");
    let mut manifests = Vec::new();
    for_each_record(bytes, cx, &file, |value| {
        let r = Record::new(value, "a manifest_file", cx, &file)?;
        r.refuse_key_metadata()?;
        let path = r
            .string("manifest_path")?
            .ok_or_else(|| r.missing("manifest_path"))?;
        let content = r.int("content")?.unwrap_or(0);
        if !(0..=1).contains(&content) {
            return Err(cx.error(format!(
                "{file}: manifest {path} has content {content}, neither 0 (data) nor 1 (deletes)"
            )));
        }
        manifests.push(ManifestRef {
            path: path.to_string(),
            content,
            spec_id: r.int("partition_spec_id")?,
            sequence_number: r.long("sequence_number")?.unwrap_or(0),
        });
        Ok(())
    })?;
    Ok(manifests)
}

/// The live entries of a manifest (status ADDED or EXISTING), in its order, with data
/// sequence numbers inherited as the spec says ("Sequence Number Inheritance").
pub(super) fn read_manifest(
    bytes: &[u8],
    cx: &Context,
    manifest: &ManifestRef,
    spec: Option<&Spec>,
) -> Result<Vec<Entry>, Error> {
    let file = format!("manifest {}", manifest.path);
    let mut entries = Vec::new();
    for_each_record(bytes, cx, &file, |value| {
        let r = Record::new(value, "a manifest_entry", cx, &file)?;
        let status = r.int("status")?.ok_or_else(|| r.missing("status"))?;
        if !(0..=2).contains(&status) {
            return Err(cx.error(format!(
                "{file}: entry status {status} is none of 0 (existing), 1 (added), 2 (deleted)"
            )));
        }
        if status == DELETED {
            return Ok(());
        }
        let data_file = r.get("data_file").ok_or_else(|| r.missing("data_file"))?;
        let d = Record::new(data_file, "data_file", cx, &file)?;
        d.refuse_key_metadata()?;
        let content = d.int("content")?.unwrap_or(0);
        if !(0..=2).contains(&content) {
            return Err(cx.error(format!(
                "{file}: data_file content {content} is none of 0 (data), 1 (position deletes), 2 (equality deletes)"
            )));
        }
        let path = d
            .string("file_path")?
            .ok_or_else(|| d.missing("file_path"))?;
        let format = d
            .string("file_format")?
            .ok_or_else(|| d.missing("file_format"))?;
        // A null sequence number is inherited from the manifest for ADDED entries, and for
        // every entry of a manifest written before sequence numbers (sequence 0, as Iceberg's
        // own reader does). Otherwise it is unknown, and taken as the one that makes the most
        // deletes apply: the oldest for data, the newest for deletes.
        let sequence_number = match r.long("sequence_number")? {
            Some(n) => n,
            None if status == ADDED || manifest.sequence_number == 0 => manifest.sequence_number,
            None if content == 0 => i64::MIN,
            None => i64::MAX,
        };
        entries.push(Entry {
            content,
            path: path.to_string(),
            format: format.to_string(),
            spec_id: manifest.spec_id,
            partition: partition(&d, spec)?,
            record_count: d.count("record_count")?,
            size: d.count("file_size_in_bytes")?,
            sequence_number,
            referenced_data_file: d.string("referenced_data_file")?.map(str::to_string),
            equality_ids: ints(&d, "equality_ids")?,
            lower_bounds: bounds(&d, "lower_bounds"),
            upper_bounds: bounds(&d, "upper_bounds"),
        });
        Ok(())
    })?;
    Ok(entries)
}

/// A manifest entry's list of ints (`equality_ids`; empty when absent). Longs that fit are
/// taken too: pyiceberg 0.12 writes `equality_ids` items as Avro longs.
fn ints(d: &Record<'_>, name: &str) -> Result<Vec<i32>, Error> {
    let items = match d.get(name) {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(d.wrong(name, "an array", other)),
    };
    items
        .iter()
        .map(|v| match unwrap(v) {
            Value::Int(n) => Ok(*n),
            Value::Long(n) => i32::try_from(*n).map_err(|_| d.wrong(name, "an array of ints", v)),
            other => Err(d.wrong(name, "an array of ints", other)),
        })
        .collect()
}

/// A manifest entry's map from field id to bound (Avro: an array of `key`/`value` records).
fn bounds(d: &Record<'_>, name: &str) -> Vec<(i32, Vec<u8>)> {
    let Some(Value::Array(items)) = d.get(name) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let Value::Record(kv) = unwrap(item) else {
                return None;
            };
            let field = |n: &str| kv.iter().find(|(k, _)| k == n).map(|(_, v)| unwrap(v));
            match (field("key")?, field("value")?) {
                (Value::Int(k), Value::Bytes(b)) => Some((*k, b.clone())),
                _ => None,
            }
        })
        .collect()
}

/// A data file's partition tuple by partition field name. The tuple holds the spec's fields
/// in order, so the spec names them; when the spec is unknown or its field count differs, the
/// Avro record's own field names (the same names, as the writer spelled them) stand in.
fn partition(d: &Record<'_>, spec: Option<&Spec>) -> Result<Vec<(String, Option<String>)>, Error> {
    let Some(value) = d.get("partition") else {
        return Ok(Vec::new());
    };
    let Value::Record(fields) = value else {
        return Err(d.wrong("partition", "a record", value));
    };
    let spec = spec.filter(|s| s.fields.len() == fields.len());
    Ok(fields
        .iter()
        .enumerate()
        .map(|(i, (avro_name, v))| {
            let field = spec.map(|s| &s.fields[i]);
            let name = field.map_or(avro_name.as_str(), |f| f.name.as_str());
            (name.to_string(), render(v, field))
        })
        .collect())
}

/// An Avro value's type in words, for messages.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Boolean(_) => "a boolean",
        Value::Int(_) => "an int",
        Value::Long(_) => "a long",
        Value::Float(_) => "a float",
        Value::Double(_) => "a double",
        Value::Bytes(_) => "bytes",
        Value::String(_) => "a string",
        Value::Fixed(..) => "a fixed",
        Value::Enum(..) => "an enum",
        Value::Union(..) => "a union",
        Value::Array(_) => "an array",
        Value::Map(_) => "a map",
        Value::Record(_) => "a record",
        _ => "a logical-type value",
    }
}
