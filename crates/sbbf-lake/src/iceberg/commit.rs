//! New snapshots of an Iceberg table that swap data files for copies holding the same rows
//! (the copies carry Bloom filters the originals lack), committed as the Iceberg spec says: a
//! `replace` snapshot ("data and delete files were added and removed without changing table
//! data"), its manifests and manifest list, a new metadata file, and the table's pointer moved
//! to it only if it still points where it did (a folder table's next `vN.metadata.json` put
//! only if absent; a SQL catalog's row updated only if unchanged). Of two writers racing, one
//! wins and the other learns it.
//!
//! What is kept, file by file: a manifest holding none of the swapped files is named again as
//! it is. One that holds some is written again, its own schema and metadata byte for byte,
//! with the others EXISTING, the originals DELETED and the copies ADDED: a copy has its
//! original's partition, metrics and split offsets (the filters are written after the data
//! pages), and its original's data sequence number, explicitly, so that equality deletes
//! older than the swap still apply to it (spec "Sequence Number Inheritance": data that
//! logically belongs to an older sequence number carries it).
//!
//! A data file that position deletes or a deletion vector name is not swapped: they name it
//! by its path, which a copy does not have. Format version 3 (row lineage) is refused.

use super::{container, get_named, plan::location_url, Context, FORMAT};
use crate::catalog::Catalog;
use crate::delta::commit::{About, Swap};
use crate::LakeError;
use crate::{catalog, Deletes, Snapshot, StoreRoot};
use apache_avro::schema::Schema;
use apache_avro::types::Value;
use object_store::{ObjectStoreExt as _, PutMode, PutOptions, PutPayload};
use sbbf_parquet::Error;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use url::Url;

/// Where the table's current metadata file is named, and how a commit moves it.
#[derive(Debug, Clone)]
pub(crate) enum Pointer {
    /// A table folder (URL ending in `/`) whose `metadata/` holds `vN.metadata.json` files
    /// and `version-hint.text`.
    Folder(Url),
    /// A table of a catalog (SQL in SQLite, or REST), by its identifier.
    Catalog { catalog: Catalog, table: String },
}

/// One live data file of the base snapshot.
#[derive(Debug, Clone)]
pub(crate) struct LiveFile {
    /// Its location as the manifest writes it.
    pub(crate) path: String,
    pub(crate) size: i64,
    /// Why it is not swapped, when it is not (position deletes name it, it is no Parquet file).
    pub(crate) keep: Option<String>,
    /// Its manifest (index into [`Base::manifests`]).
    manifest: usize,
}

/// An Avro file as read: its metadata (byte for byte), its schema and its records.
#[derive(Debug, Clone)]
struct Avro {
    meta: Vec<(String, Vec<u8>)>,
    schema: Schema,
    records: Vec<Value>,
}

/// A data manifest of the base snapshot.
#[derive(Debug, Clone)]
struct Manifest {
    /// Its record's index in the manifest list.
    record: usize,
    avro: Avro,
    /// The sequence number and snapshot id its entries inherit.
    sequence_number: i64,
    added_snapshot_id: i64,
}

/// The snapshot a commit is based on.
#[derive(Debug, Clone)]
pub(crate) struct Base {
    /// The current snapshot's id (-1: none).
    pub(crate) version: i64,
    /// The current metadata file, as the pointer names it.
    location: String,
    metadata: Json,
    format_version: i64,
    list: Option<Avro>,
    manifests: Vec<Manifest>,
    /// Its live data files, in manifest order.
    pub(crate) files: Vec<LiveFile>,
    /// The snapshot as the reader reads it (its columns name the rewrite's columns; its
    /// deletes say which files to keep).
    pub(crate) snapshot: Box<Snapshot>,
}

impl Base {
    /// The live data file at `path`.
    pub(crate) fn file(&self, path: &str) -> Option<&LiveFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

fn refused(table: &str, reason: impl Into<String>) -> Error {
    LakeError::WriteRefused {
        format: FORMAT,
        table: table.to_string(),
        reason: reason.into(),
    }
    .into()
}

/// The URL of a location the table writes (a URL, or an absolute local path).
fn url_of(location: &str, cx: &Context) -> Result<Url, Error> {
    let parsed = match location.starts_with('/') {
        true => Url::from_file_path(location).ok(),
        false => Url::parse(&location_url(location)).ok(),
    };
    parsed.ok_or_else(|| cx.error(format!("`{location}` is not a location this reads")))
}

/// The current metadata file's location as the pointer names it.
async fn current(root: &StoreRoot, pointer: &Pointer, table: &str) -> Result<String, Error> {
    match pointer {
        Pointer::Catalog { catalog, table } => catalog::current(catalog, table).await,
        Pointer::Folder(folder) => {
            let cx = Context {
                table: table.to_string(),
            };
            let dir = folder
                .join("metadata/")
                .map_err(|e| cx.error_from(format!("{folder} has no metadata folder URL"), e))?;
            let (_, names) = root.list_dir(dir.as_str()).await?;
            let plain = |n: &String| {
                n.strip_prefix('v')
                    .and_then(|n| n.strip_suffix(".metadata.json"))
                    .and_then(|n| n.parse::<u64>().ok())
            };
            if names.iter().any(|n| n.ends_with(".gz.metadata.json")) {
                return Err(refused(table, "its metadata files are gzip-compressed"));
            }
            let mut version = names.iter().filter_map(plain).max();
            if names.iter().any(|n| n == super::HINT) {
                let hint =
                    get_named(root, &cx, &format!("{dir}{}", super::HINT), "version hint").await?;
                let hint = String::from_utf8_lossy(&hint).trim().parse::<u64>().ok();
                // The hint may lag (it is written after the metadata file): the newest wins.
                version =
                    version.max(hint.filter(|v| names.contains(&format!("v{v}.metadata.json"))));
            }
            match version {
                Some(v) => Ok(format!("{dir}v{v}.metadata.json")),
                None if names.iter().any(|n| n.ends_with(".metadata.json")) => Err(refused(
                    table,
                    "its metadata files are named as a catalog names them (NNNNN-<uuid>.metadata.json): \
                     its catalog is the authority on which is current, so commit through it \
                     (--catalog URI NAMESPACE.TABLE)",
                )),
                None => Err(cx.error(format!("{dir} holds no metadata file"))),
            }
        }
    }
}

/// Reads the current snapshot of the table behind `pointer` (`table`: as the user named
/// it) for a commit; refused, with the reason, where this module cannot commit.
pub(crate) async fn base(root: &StoreRoot, pointer: &Pointer, table: &str) -> Result<Base, Error> {
    let location = current(root, pointer, table).await?;
    refuse_relocated(pointer, table, &location)?;
    let cx = Context {
        table: location.clone(),
    };
    let url = url_of(&location, &cx)?;
    let bytes = get_named(root, &cx, url.as_str(), "metadata file").await?;
    let (metadata, format_version) = writable_metadata(&bytes, pointer, table, &cx)?;
    // The reader's view of the same metadata file: the columns, and the deletes attached.
    let snapshot = Box::new(super::snapshot(root, table, &url, None, Default::default()).await?);
    let mut base = Base {
        version: -1,
        location,
        metadata,
        format_version,
        list: None,
        manifests: Vec::new(),
        files: Vec::new(),
        snapshot,
    };
    let id = match base.metadata["current-snapshot-id"].as_i64() {
        Some(id) if id >= 0 => id,
        _ => return Ok(base),
    };
    let snapshot = snapshot_json(&base.metadata, id).ok_or_else(|| {
        cx.error(format!(
            "the current snapshot {id} is not among its snapshots"
        ))
    })?;
    let Some(list_location) = snapshot["manifest-list"].as_str().map(str::to_string) else {
        return Err(refused(
            table,
            "its current snapshot names its manifests without a manifest list (format version 1's \
             older form)",
        ));
    };
    base.version = id;
    read_live_files(root, &cx, table, &mut base, &list_location).await?;
    mark_kept(&mut base, &cx)?;
    Ok(base)
}

/// Refuses a commit through a SQL catalog whose metadata file is not where it says, when a
/// copy of the warehouse holds it below the catalog file's folder: that copy is read where
/// it is found, but the catalog names the place it was written, where a commit would go.
fn refuse_relocated(pointer: &Pointer, table: &str, location: &str) -> Result<(), Error> {
    if let Pointer::Catalog { catalog, .. } = pointer {
        let local = url::Url::parse(location)
            .ok()
            .and_then(|u| u.to_file_path().ok());
        if let Some(found) = local
            .as_deref()
            .and_then(|p| catalog::relocated(catalog, p))
        {
            return Err(refused(
                table,
                format!(
                    "its catalog names {location}, which is not there; the copy found at {} is \
                     read where it is found, but committed to only where it lives",
                    found.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The metadata file's JSON and format version, refused (with why) where this module cannot
/// commit: gzip-compressed, a format version other than 1 and 2, encrypted, or a table read
/// from a folder other than the one it lives in.
fn writable_metadata(
    bytes: &[u8],
    pointer: &Pointer,
    table: &str,
    cx: &Context,
) -> Result<(Json, i64), Error> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(refused(table, "its metadata file is gzip-compressed"));
    }
    let metadata: Json = serde_json::from_slice(bytes)
        .map_err(|e| cx.error_from(format!("{} is not a metadata file", cx.table), e))?;
    let format_version = metadata["format-version"].as_i64().unwrap_or(0);
    if !(1..=2).contains(&format_version) {
        return Err(refused(
            table,
            format!(
                "format version {format_version}: only versions 1 and 2 are committed to here \
                 (version 3's row lineage and deletion vectors are not carried over yet)"
            ),
        ));
    }
    if metadata["encryption-keys"]
        .as_array()
        .is_some_and(|k| !k.is_empty())
    {
        return Err(refused(table, "it is encrypted"));
    }
    // A table found in a folder its metadata does not name (copied or moved) is read there;
    // a commit would name files below the recorded folder, which is another table's or none.
    if let Pointer::Folder(folder) = pointer {
        let recorded = metadata["location"].as_str().unwrap_or_default();
        if let Some(m) = super::moved::Moved::of(recorded, folder) {
            return Err(refused(
                table,
                format!(
                    "its metadata says it lives at {}, not in this folder (a copied or moved \
                     table is read where it is found, but committed to only where it lives)",
                    m.said
                ),
            ));
        }
    }
    Ok((metadata, format_version))
}

/// Reads the manifest list at `list_location` and its data manifests into `base`: each live
/// data file with its manifest, and why it must be kept as it is where it must (another
/// table's file, a data sequence number not written down).
async fn read_live_files(
    root: &StoreRoot,
    cx: &Context,
    table: &str,
    base: &mut Base,
    list_location: &str,
) -> Result<(), Error> {
    let (id, format_version) = (base.version, base.format_version);
    // Data files are copied beside themselves only inside the table's own folder: a file of
    // another table (migrated or snapshot tables point into their source's) is kept.
    let table_location = base.metadata["location"]
        .as_str()
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_string();
    if table_location.is_empty() {
        return Err(cx.error("its metadata has no table location"));
    }
    let list_file = format!("manifest list {list_location}");
    let list_url = url_of(list_location, cx)?;
    let list = read_avro(
        &get_named(root, cx, list_url.as_str(), "manifest list").await?,
        cx,
        &list_file,
    )?;
    writable_codec(&list, table, &list_file)?;
    let mut seen_manifests = std::collections::HashSet::new();
    for (i, record) in list.records.iter().enumerate() {
        if long(record, "content").unwrap_or(0) != 0 {
            continue;
        }
        let path = string(record, "manifest_path")
            .ok_or_else(|| cx.error(format!("{list_file}: a manifest without manifest_path")))?;
        if !seen_manifests.insert(path.clone()) {
            return Err(cx.error(format!("{list_file} names the manifest {path} twice")));
        }
        let file = format!("manifest {path}");
        let bytes = get_named(root, cx, url_of(&path, cx)?.as_str(), "data manifest").await?;
        let avro = read_avro(&bytes, cx, &file)?;
        writable_codec(&avro, table, &file)?;
        let m = Manifest {
            record: i,
            sequence_number: long(record, "sequence_number").unwrap_or(0),
            added_snapshot_id: long(record, "added_snapshot_id").unwrap_or(id),
            avro,
        };
        if format_version >= 2 && !has_field(&m.avro.schema, "sequence_number") {
            return Err(refused(
                table,
                format!("its manifest {path} is in format version 1's form in a version 2 table"),
            ));
        }
        for entry in &m.avro.records {
            if long(entry, "status") == Some(DELETED) {
                continue;
            }
            let Some(data) = field(entry, "data_file") else {
                return Err(cx.error(format!("{file}: an entry without data_file")));
            };
            let path = string(data, "file_path")
                .ok_or_else(|| cx.error(format!("{file}: a data file without file_path")))?;
            let size = long(data, "file_size_in_bytes").unwrap_or(-1);
            // The data sequence number a copy must carry: explicit, or inherited by an ADDED
            // entry (or by any entry of a manifest of sequence number 0, as readers do).
            let known_seq = format_version < 2
                || long(entry, "sequence_number").is_some()
                || long(entry, "status") == Some(ADDED)
                || m.sequence_number == 0;
            let outside = !path.starts_with(&format!("{table_location}/"));
            let keep = if outside {
                Some(format!(
                    "it lies outside the table's folder {table_location} (another table's file)"
                ))
            } else if !known_seq {
                Some("its data sequence number is not written in its manifest".to_string())
            } else {
                None
            };
            base.files.push(LiveFile {
                path,
                size,
                keep,
                manifest: base.manifests.len(),
            });
        }
        base.manifests.push(m);
    }
    base.list = Some(list);
    Ok(())
}

/// Marks the files a copy would break as kept: a file live in two manifests (its copy would
/// be added twice), and a file position deletes or a deletion vector name by its path.
fn mark_kept(base: &mut Base, cx: &Context) -> Result<(), Error> {
    let id = base.version;
    // A file live twice (in two manifests) is left alone: a copy would be added twice.
    let mut count: HashMap<&str, usize> = HashMap::new();
    for f in &base.files {
        *count.entry(f.path.as_str()).or_default() += 1;
    }
    let twice: std::collections::HashSet<String> = count
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(p, _)| p.to_string())
        .collect();
    for f in &mut base.files {
        if twice.contains(&f.path) {
            f.keep = Some("more than one manifest names it live".to_string());
        }
    }
    // Which files position deletes or deletion vectors name: as the reader attaches them.
    if base.snapshot.version != id {
        return Err(cx.error(format!(
            "its metadata file changed while it was read (snapshot {} then {id})",
            base.snapshot.version
        )));
    }
    let named: HashMap<String, Deletes> = base
        .snapshot
        .files
        .iter()
        .map(|f| (f.url.clone(), f.deletes))
        .collect();
    for f in &mut base.files {
        let deletes = named.get(location_url(&f.path).as_str());
        let by_path = match deletes {
            Some(Deletes::Vector { .. }) => true,
            Some(Deletes::Files { position, .. }) => *position > 0,
            _ => false,
        };
        if by_path && f.keep.is_none() {
            f.keep = Some(
                "position deletes name it by its path, which a copy would not have (its deleted \
                 rows would come back)"
                    .to_string(),
            );
        }
    }
    Ok(())
}

/// Refuses, before any copy is written, an Avro file whose codec a rewrite cannot write.
fn writable_codec(avro: &Avro, table: &str, file: &str) -> Result<(), Error> {
    let codec = avro
        .meta
        .iter()
        .find(|(k, _)| k == "avro.codec")
        .map_or(&b"null"[..], |(_, v)| v.as_slice());
    match codec {
        b"null" | b"deflate" | b"zstandard" => Ok(()),
        other => Err(refused(
            table,
            format!(
                "{file} is compressed with the Avro codec `{}`, which is not written here",
                String::from_utf8_lossy(other)
            ),
        )),
    }
}

/// Entry status: removed by the manifest's snapshot.
const DELETED: i64 = 2;
const ADDED: i64 = 1;
const EXISTING: i64 = 0;

fn snapshot_json(metadata: &Json, id: i64) -> Option<&Json> {
    metadata["snapshots"]
        .as_array()?
        .iter()
        .find(|s| s["snapshot-id"].as_i64() == Some(id))
}

fn read_avro(bytes: &[u8], cx: &Context, file: &str) -> Result<Avro, Error> {
    apache_avro::util::max_allocation_bytes(super::manifest::AVRO_MAX_ALLOCATION);
    container::check(bytes, cx, file, container::MAX_BLOCK)?;
    let meta = container::header(bytes)
        .ok_or_else(|| cx.error(format!("{file} has no readable header")))?;
    let reader = apache_avro::Reader::new(bytes)
        .map_err(|e| cx.error_from(format!("{file} is not a readable Avro file ({e})"), e))?;
    let schema = reader.writer_schema().clone();
    let mut records = Vec::new();
    for r in reader {
        records.push(
            r.map_err(|e| cx.error_from(format!("{file}: a record cannot be read ({e})"), e))?,
        );
    }
    Ok(Avro {
        meta,
        schema,
        records,
    })
}

/// A record's field, unions unwrapped.
fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    let Value::Record(fields) = v else {
        return None;
    };
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| super::partition::unwrap(v))
}

fn long(v: &Value, name: &str) -> Option<i64> {
    match field(v, name)? {
        Value::Long(n) => Some(*n),
        Value::Int(n) => Some(i64::from(*n)),
        _ => None,
    }
}

fn string(v: &Value, name: &str) -> Option<String> {
    match field(v, name)? {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// The schema of field `name` of the record schema `schema`.
fn field_schema<'a>(schema: &'a Schema, name: &str) -> Option<&'a Schema> {
    let Schema::Record(r) = schema else {
        return None;
    };
    r.lookup
        .get(name)
        .and_then(|i| r.fields.get(*i))
        .map(|f| &f.schema)
}

fn has_field(schema: &Schema, name: &str) -> bool {
    field_schema(schema, name).is_some()
}

/// Sets the number field `name` of `record` (`schema`: the record's) to `n`, or to null,
/// typed as the schema types it; a field the schema lacks (a v1 file's sequence numbers) is
/// left out.
fn set_number(
    record: &mut Value,
    schema: &Schema,
    name: &str,
    n: Option<i64>,
) -> Result<(), String> {
    let Some(s) = field_schema(schema, name) else {
        return Ok(());
    };
    let typed = |s: &Schema, n: i64| match s {
        Schema::Int => i32::try_from(n).ok().map(Value::Int),
        Schema::Long => Some(Value::Long(n)),
        _ => None,
    };
    let value = match (s, n) {
        (Schema::Union(u), n) => {
            let pick = u.variants().iter().enumerate().find_map(|(i, v)| match n {
                None => matches!(v, Schema::Null).then_some((i, Value::Null)),
                Some(n) => typed(v, n).map(|t| (i, t)),
            });
            let (i, v) = pick.ok_or_else(|| format!("field {name} takes no such value"))?;
            Value::Union(i as u32, Box::new(v))
        }
        (s, Some(n)) => typed(s, n).ok_or_else(|| format!("field {name} is no number"))?,
        (_, None) => return Err(format!("field {name} cannot be null")),
    };
    set(record, name, value)
}

fn set(record: &mut Value, name: &str, value: Value) -> Result<(), String> {
    let Value::Record(fields) = record else {
        return Err("not a record".into());
    };
    match fields.iter_mut().find(|(n, _)| n == name) {
        Some((_, v)) => *v = value,
        None => fields.push((name.to_string(), value)),
    }
    Ok(())
}

/// What a commit wrote: the metadata file and the Avro files, for removal if it lost.
struct Wrote {
    locations: Vec<String>,
    /// Whether the commit may have been made although an error says otherwise.
    uncertain: bool,
}

/// One try at a commit: the table, the snapshot it is based on, and what it swaps.
pub(crate) struct Attempt<'a> {
    pub(crate) root: &'a StoreRoot,
    pub(crate) pointer: &'a Pointer,
    /// The table as the user named it.
    pub(crate) table: &'a str,
    pub(crate) base: &'a Base,
    /// The originals by their manifest locations, each still live and without a reason to
    /// keep it in `base`.
    pub(crate) swaps: &'a [Swap],
    pub(crate) about: &'a About,
    pub(crate) now_ms: i64,
}

/// Commits `a.swaps` as one `replace` snapshot on `a.base`: `Ok(Some(id))` the new
/// snapshot's id, `Ok(None)` when another writer moved the table's pointer first (nothing of
/// this try is left).
pub(crate) async fn commit(a: &Attempt<'_>) -> Result<Option<i64>, Error> {
    let mut wrote = Wrote {
        locations: Vec::new(),
        uncertain: false,
    };
    let result = try_commit(a, &mut wrote).await;
    if !matches!(result, Ok(Some(_))) && !wrote.uncertain {
        for l in wrote.locations.iter().filter_map(|l| location_to_url(l)) {
            if let Ok(p) = a.root.path_of(&l) {
                let _ = a.root.store().delete(&p).await;
            }
        }
    }
    result
}

async fn try_commit(a: &Attempt<'_>, wrote: &mut Wrote) -> Result<Option<i64>, Error> {
    let Attempt {
        root,
        pointer,
        table,
        base,
        swaps,
        about,
        now_ms,
    } = *a;
    let cx = Context {
        table: base.location.clone(),
    };
    let (Some(list), true) = (&base.list, base.version >= 0) else {
        return Err(refused(
            table,
            "it has no snapshot, so no data file to swap",
        ));
    };
    let ids = Ids::new(base, &cx)?;
    let (records, totals) = rewrite_manifests(root, &cx, base, list, swaps, &ids, wrote).await?;
    let list_location = write_manifest_list(root, &cx, base, list, &records, &ids, wrote).await?;
    let (text, snapshot) = new_metadata(
        base,
        swaps,
        about,
        now_ms,
        &ids,
        &totals,
        list_location,
        &cx,
    )?;
    let swapped = swap_pointer(root, &cx, pointer, base, text, snapshot, &ids, wrote).await?;
    Ok(swapped.then_some(ids.id))
}

/// What one try names its commit by: the new snapshot's id (unused in the table) and
/// sequence number, the folder its metadata files go to, and the name its new files share.
struct Ids {
    id: i64,
    sequence: i64,
    /// Format version 2 on (sequence numbers, inherited values) rather than 1.
    v2: bool,
    dir: String,
    commit_uuid: uuid::Uuid,
}

impl Ids {
    fn new(base: &Base, cx: &Context) -> Result<Ids, Error> {
        let meta = &base.metadata;
        let v2 = base.format_version >= 2;
        let taken: Vec<i64> = meta["snapshots"]
            .as_array()
            .map(|a| a.iter().filter_map(|s| s["snapshot-id"].as_i64()).collect())
            .unwrap_or_default();
        let id = loop {
            let (hi, lo) = uuid::Uuid::new_v4().as_u64_pair();
            let id = ((hi ^ lo) & (i64::MAX as u64)) as i64;
            if id > 0 && !taken.contains(&id) {
                break id;
            }
        };
        let sequence = match v2 {
            true => meta["last-sequence-number"]
                .as_i64()
                .unwrap_or(0)
                .checked_add(1)
                .ok_or_else(|| {
                    cannot_write(
                        cx,
                        "its last sequence number is the largest there is".into(),
                    )
                })?,
            false => 0,
        };
        let location = meta["location"]
            .as_str()
            .unwrap_or_default()
            .trim_end_matches('/')
            .to_string();
        let dir = meta["properties"]["write.metadata.path"]
            .as_str()
            .map(|d| d.trim_end_matches('/').to_string())
            .unwrap_or_else(|| format!("{location}/metadata"));
        Ok(Ids {
            id,
            sequence,
            v2,
            dir,
            commit_uuid: uuid::Uuid::new_v4(),
        })
    }
}

/// What the rewritten manifests add and remove, for the snapshot's summary.
#[derive(Debug, Default)]
struct Totals {
    added_rows: i64,
    added_size: i64,
    removed_size: i64,
}

fn cannot_write(cx: &Context, reason: String) -> Error {
    cx.error(format!("the commit cannot be written: {reason}"))
}

/// New objects are created, never written over.
fn create() -> PutOptions {
    PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    }
}

/// Rewrites each manifest that lists a swapped file (its original DELETED, its copy ADDED by
/// this snapshot, every other entry EXISTING with what it inherited written out) and gives
/// the manifest list's records with those manifests' records updated.
async fn rewrite_manifests(
    root: &StoreRoot,
    cx: &Context,
    base: &Base,
    list: &Avro,
    swaps: &[Swap],
    ids: &Ids,
    wrote: &mut Wrote,
) -> Result<(Vec<Value>, Totals), Error> {
    let bad = |reason: String| cannot_write(cx, reason);
    // The swaps by original, and which manifests they touch.
    let by_path: HashMap<&str, &Swap> = swaps.iter().map(|s| (s.old_path.as_str(), s)).collect();
    let mut touched: Vec<usize> = base
        .files
        .iter()
        .filter(|f| by_path.contains_key(f.path.as_str()))
        .map(|f| f.manifest)
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let mut records = list.records.clone();
    let mut totals = Totals::default();
    for (n, &mi) in touched.iter().enumerate() {
        let m = &base.manifests[mi];
        let schema = &m.avro.schema;
        let data_schema = field_schema(schema, "data_file")
            .cloned()
            .ok_or_else(|| bad("a manifest's entries have no data_file".into()))?;
        let mut entries = Vec::new();
        let mut copies = Vec::new();
        let (mut existing, mut deleted, mut added) = ((0i64, 0i64), (0i64, 0i64), (0i64, 0i64));
        let mut min_seq = i64::MAX;
        for e in &m.avro.records {
            let status = long(e, "status").unwrap_or(EXISTING);
            if status == DELETED {
                continue;
            }
            let data =
                field(e, "data_file").ok_or_else(|| bad("an entry without data_file".into()))?;
            let path = string(data, "file_path").unwrap_or_default();
            let rows = long(data, "record_count").unwrap_or(0);
            // Inherited values written out: a rewritten entry no longer sits in the manifest
            // it inherited them from.
            let snapshot_id = long(e, "snapshot_id").unwrap_or(m.added_snapshot_id);
            let inherit = |name| match long(e, name) {
                Some(s) => Some(s),
                None if status == ADDED || !ids.v2 => Some(m.sequence_number),
                None => None,
            };
            let (data_seq, file_seq) =
                (inherit("sequence_number"), inherit("file_sequence_number"));
            let mut kept = e.clone();
            set_number(&mut kept, schema, "snapshot_id", Some(snapshot_id)).map_err(bad)?;
            set_number(&mut kept, schema, "sequence_number", data_seq).map_err(bad)?;
            set_number(&mut kept, schema, "file_sequence_number", file_seq).map_err(bad)?;
            match by_path.get(path.as_str()) {
                None => {
                    set_number(&mut kept, schema, "status", Some(EXISTING)).map_err(bad)?;
                    existing = (existing.0 + 1, existing.1.saturating_add(rows));
                    min_seq = min_seq.min(data_seq.unwrap_or(0));
                    entries.push(kept);
                }
                Some(swap) => {
                    let mut copy = kept.clone();
                    set_number(&mut kept, schema, "status", Some(DELETED)).map_err(bad)?;
                    set_number(&mut kept, schema, "snapshot_id", Some(ids.id)).map_err(bad)?;
                    deleted = (deleted.0 + 1, deleted.1.saturating_add(rows));
                    totals.removed_size = totals
                        .removed_size
                        .saturating_add(long(data, "file_size_in_bytes").unwrap_or(0));
                    entries.push(kept);
                    // The copy: ADDED by this snapshot, its original's data sequence number
                    // kept, its file sequence number this snapshot's (inherited).
                    set_number(&mut copy, schema, "status", Some(ADDED)).map_err(bad)?;
                    set_number(&mut copy, schema, "snapshot_id", Some(ids.id)).map_err(bad)?;
                    set_number(&mut copy, schema, "file_sequence_number", None).map_err(bad)?;
                    let mut data = data.clone();
                    let new_location = sibling(&path, &swap.new_path);
                    set(&mut data, "file_path", Value::String(new_location)).map_err(bad)?;
                    let size = i64::try_from(swap.new_size).unwrap_or(i64::MAX);
                    set_number(&mut data, &data_schema, "file_size_in_bytes", Some(size))
                        .map_err(bad)?;
                    let data = match field_schema(schema, "data_file") {
                        Some(Schema::Union(_)) => {
                            return Err(bad("an optional data_file is not written here".into()))
                        }
                        _ => data,
                    };
                    set(&mut copy, "data_file", data).map_err(bad)?;
                    added = (added.0 + 1, added.1.saturating_add(rows));
                    totals.added_rows = totals.added_rows.saturating_add(rows);
                    totals.added_size = totals.added_size.saturating_add(size);
                    min_seq = min_seq.min(data_seq.unwrap_or(0));
                    copies.push(copy);
                }
            }
        }
        entries.extend(copies);
        let mut encoded = Vec::new();
        for e in &entries {
            encoded.push(
                apache_avro::to_avro_datum(schema, e.clone())
                    .map_err(|e| bad(format!("an entry: {e}")))?,
            );
        }
        let bytes = container::write(&m.avro.meta, &encoded).map_err(bad)?;
        let manifest_location = format!("{}/{}-m{n}.avro", ids.dir, ids.commit_uuid);
        put(
            root,
            cx,
            &manifest_location,
            bytes.clone(),
            &create(),
            wrote,
        )
        .await?;
        // Its record in the list: the old one with what changed.
        let counts = Counts {
            existing,
            deleted,
            added,
            min_seq,
        };
        let r = &mut records[m.record];
        update_record(
            r,
            &list.schema,
            manifest_location,
            bytes.len(),
            ids,
            &counts,
        )
        .map_err(bad)?;
    }
    Ok((records, totals))
}

/// A rewritten manifest's entries by status (files, rows), and the least data sequence
/// number among its live ones (`i64::MAX`: none).
struct Counts {
    existing: (i64, i64),
    deleted: (i64, i64),
    added: (i64, i64),
    min_seq: i64,
}

/// The manifest list's record `r` of a manifest rewritten to `location` (`length` bytes) by
/// this commit: the old record with what changed.
fn update_record(
    r: &mut Value,
    ls: &Schema,
    location: String,
    length: usize,
    ids: &Ids,
    c: &Counts,
) -> Result<(), String> {
    set(r, "manifest_path", Value::String(location))?;
    set_number(r, ls, "manifest_length", Some(length as i64))?;
    set_number(r, ls, "added_snapshot_id", Some(ids.id))?;
    set_number(r, ls, "sequence_number", Some(ids.sequence))?;
    let min_seq = match c.min_seq {
        i64::MAX => ids.sequence,
        m => m,
    };
    set_number(r, ls, "min_sequence_number", Some(min_seq))?;
    for (names, value) in [
        (["added_files_count", "added_data_files_count"], c.added.0),
        (
            ["existing_files_count", "existing_data_files_count"],
            c.existing.0,
        ),
        (
            ["deleted_files_count", "deleted_data_files_count"],
            c.deleted.0,
        ),
        (["added_rows_count", "added_rows_count"], c.added.1),
        (["existing_rows_count", "existing_rows_count"], c.existing.1),
        (["deleted_rows_count", "deleted_rows_count"], c.deleted.1),
    ] {
        for name in names {
            set_number(r, ls, name, Some(value))?;
        }
    }
    Ok(())
}

/// Writes the manifest list (every manifest named again as it was, the rewritten ones by
/// their new records) and gives its location.
async fn write_manifest_list(
    root: &StoreRoot,
    cx: &Context,
    base: &Base,
    list: &Avro,
    records: &[Value],
    ids: &Ids,
    wrote: &mut Wrote,
) -> Result<String, Error> {
    let bad = |reason: String| cannot_write(cx, reason);
    let parent = base.version;
    let mut list_meta = list.meta.clone();
    for (k, v) in [
        ("snapshot-id", ids.id.to_string()),
        ("parent-snapshot-id", parent.to_string()),
        ("sequence-number", ids.sequence.to_string()),
    ] {
        if let Some(slot) = list_meta.iter_mut().find(|(key, _)| key == k) {
            slot.1 = v.into_bytes();
        } else if k != "sequence-number" || ids.v2 {
            list_meta.push((k.to_string(), v.into_bytes()));
        }
    }
    let mut encoded = Vec::new();
    for r in records {
        encoded.push(
            apache_avro::to_avro_datum(&list.schema, r.clone())
                .map_err(|e| bad(format!("a manifest record: {e}")))?,
        );
    }
    let list_bytes = container::write(&list_meta, &encoded).map_err(bad)?;
    let list_location = format!("{}/snap-{}-1-{}.avro", ids.dir, ids.id, ids.commit_uuid);
    put(root, cx, &list_location, list_bytes, &create(), wrote).await?;
    Ok(list_location)
}

/// The new metadata file's text (every field kept, the snapshot added and made current) and
/// the snapshot's JSON.
#[allow(clippy::too_many_arguments)]
fn new_metadata(
    base: &Base,
    swaps: &[Swap],
    about: &About,
    now_ms: i64,
    ids: &Ids,
    totals: &Totals,
    list_location: String,
    cx: &Context,
) -> Result<(Vec<u8>, Json), Error> {
    let bad = |reason: String| cannot_write(cx, reason);
    let mut meta = base.metadata.clone();
    let parent = base.version;
    let last_updated = meta["last-updated-ms"].as_i64().unwrap_or(0);
    let now = now_ms.max(last_updated + 1);
    let parent_summary = snapshot_json(&base.metadata, parent).map(|s| s["summary"].clone());
    let mut summary = serde_json::Map::new();
    summary.insert("operation".into(), json!("replace"));
    let n = swaps.len().to_string();
    for (k, v) in [
        ("added-data-files", n.clone()),
        ("deleted-data-files", n),
        ("added-records", totals.added_rows.to_string()),
        ("deleted-records", totals.added_rows.to_string()),
        ("added-files-size", totals.added_size.to_string()),
        ("removed-files-size", totals.removed_size.to_string()),
        ("engine-name", "sbbf".to_string()),
        ("engine-version", env!("CARGO_PKG_VERSION").to_string()),
        ("sbbf.operation", about.operation.clone()),
    ] {
        summary.insert(k.into(), json!(v));
    }
    for (k, v) in &about.parameters {
        summary.insert(format!("sbbf.{k}"), json!(v));
    }
    if let Some(Json::Object(p)) = parent_summary {
        // The totals carry over: the rows and files are the same, only the bytes change.
        for (k, v) in p {
            if !k.starts_with("total-") {
                continue;
            }
            let v = match (k.as_str(), v.as_str().and_then(|s| s.parse::<i64>().ok())) {
                ("total-files-size", Some(t)) => json!(t
                    .saturating_add(totals.added_size)
                    .saturating_sub(totals.removed_size)
                    .to_string()),
                _ => v,
            };
            summary.insert(k, v);
        }
    }
    let mut snapshot = json!({
        "snapshot-id": ids.id,
        "parent-snapshot-id": parent,
        "timestamp-ms": now,
        "manifest-list": list_location,
        "summary": summary,
    });
    if ids.v2 {
        snapshot["sequence-number"] = json!(ids.sequence);
        meta["last-sequence-number"] = json!(ids.sequence);
    }
    if let Some(schema_id) = meta["current-schema-id"].as_i64() {
        snapshot["schema-id"] = json!(schema_id);
    }
    push(&mut meta, "snapshots", snapshot.clone());
    push(
        &mut meta,
        "snapshot-log",
        json!({"timestamp-ms": now, "snapshot-id": ids.id}),
    );
    push(
        &mut meta,
        "metadata-log",
        json!({"metadata-file": base.location, "timestamp-ms": last_updated}),
    );
    meta["current-snapshot-id"] = json!(ids.id);
    meta["last-updated-ms"] = json!(now);
    let mut main = match &meta["refs"]["main"] {
        Json::Object(m) => Json::Object(m.clone()),
        _ => json!({"type": "branch"}),
    };
    main["snapshot-id"] = json!(ids.id);
    if !meta["refs"].is_object() {
        meta["refs"] = json!({});
    }
    meta["refs"]["main"] = main;
    let text = serde_json::to_vec_pretty(&meta).map_err(|e| bad(e.to_string()))?;
    Ok((text, snapshot))
}

/// Moves the table's pointer from the base's metadata file to the new one, as the table
/// keeps it: a new `vN.metadata.json` in its folder (put if absent), a REST catalog's commit,
/// or a SQL catalog's row swapped. `Ok(false)`: another writer moved it first.
#[allow(clippy::too_many_arguments)]
async fn swap_pointer(
    root: &StoreRoot,
    cx: &Context,
    pointer: &Pointer,
    base: &Base,
    text: Vec<u8>,
    snapshot: Json,
    ids: &Ids,
    wrote: &mut Wrote,
) -> Result<bool, Error> {
    let bad = |reason: String| cannot_write(cx, reason);
    let number = current_number(&base.location)
        .checked_add(1)
        .ok_or_else(|| bad("its metadata file's number is the largest there is".into()))?;
    let swapped = match pointer {
        Pointer::Folder(_) => {
            let new = sibling(&base.location, &format!("v{number}.metadata.json"));
            // From here an error may hide a commit made (a put that landed and then timed
            // out): nothing this try wrote is removed then.
            wrote.uncertain = true;
            if !put_if_absent(root, cx, &new, text, wrote).await? {
                // Taken: by another writer, or by this put retried by the store client.
                let there =
                    get_named(root, cx, url_of(&new, cx)?.as_str(), "metadata file").await?;
                let ours = serde_json::from_slice::<Json>(&there)
                    .is_ok_and(|m| m["current-snapshot-id"].as_i64() == Some(ids.id));
                if !ours {
                    wrote.uncertain = false;
                    return Ok(false);
                }
            }
            // The hint follows (readers also look for newer vN files); a failed hint leaves
            // the commit made.
            let hint = sibling(&base.location, super::HINT);
            if let Ok(u) = url_of(&hint, cx) {
                if let Ok(p) = root.path_of(u.as_str()) {
                    let _ = root
                        .store()
                        .put(&p, PutPayload::from(number.to_string().into_bytes()))
                        .await;
                }
            }
            true
        }
        Pointer::Catalog { catalog, table } if !catalog::is_sql(catalog) => {
            // A REST catalog writes the metadata file itself, from the changes asked of it,
            // if the table is still the one read and `main` still names the base.
            let mut requirements = vec![json!({
                "type": "assert-ref-snapshot-id",
                "ref": "main",
                "snapshot-id": base.version,
            })];
            if let Some(uuid) = base.metadata["table-uuid"].as_str() {
                requirements.insert(0, json!({"type": "assert-table-uuid", "uuid": uuid}));
            }
            // `main` keeps the retention it has (the catalog builds the ref from what is
            // sent, so fields left out would be dropped).
            let mut main = json!({"action": "set-snapshot-ref", "ref-name": "main",
                "type": "branch", "snapshot-id": ids.id});
            for k in [
                "min-snapshots-to-keep",
                "max-snapshot-age-ms",
                "max-ref-age-ms",
            ] {
                if let Some(v) = base.metadata["refs"]["main"].get(k) {
                    main[k] = v.clone();
                }
            }
            let updates = json!([{"action": "add-snapshot", "snapshot": snapshot}, main]);
            // Whether the table, read again, holds our snapshot: then the commit was made,
            // whatever the answer to it said.
            let made = || async {
                let now = catalog::current(catalog, table).await?;
                let bytes =
                    get_named(root, cx, url_of(&now, cx)?.as_str(), "metadata file").await?;
                Ok::<bool, Error>(
                    serde_json::from_slice::<Json>(&bytes)
                        .is_ok_and(|m| snapshot_json(&m, ids.id).is_some()),
                )
            };
            wrote.uncertain = true;
            match catalog::rest_commit(catalog, table, json!(requirements), updates).await? {
                catalog::RestCommit::Committed => true,
                // A 409 to a request a proxy sent again after the first one was applied
                // looks like a lost race: the table says which.
                catalog::RestCommit::Conflict => match made().await? {
                    true => true,
                    false => {
                        wrote.uncertain = false;
                        false
                    }
                },
                catalog::RestCommit::Unknown(why) => {
                    // Read the table again: our snapshot in it is a commit made.
                    match made().await {
                        Ok(true) => true,
                        Ok(false) | Err(_) => {
                            return Err(cx.error(format!(
                                "{why}, and the table read again does not show the snapshot \
                                 {}: the commit may still be made, so the files it names are \
                                 left in place ({})",
                                ids.id,
                                wrote.locations.join(", ")
                            )))
                        }
                    }
                }
            }
        }
        Pointer::Catalog { catalog, table } => {
            let name = format!("{number:05}-{}.metadata.json", uuid::Uuid::new_v4());
            let new = sibling(&base.location, &name);
            put(root, cx, &new, text, &create(), wrote).await?;
            catalog::swap(catalog, table, &base.location, &new).await?
        }
    };
    Ok(swapped)
}

/// The version number of the metadata file at `location` (`vN` or `NNNNN-`; 0 for another
/// name).
fn current_number(location: &str) -> u64 {
    let name = location.rsplit('/').next().unwrap_or(location);
    super::metadata_number(name).unwrap_or(0)
}

/// The location of the file `name` (a name, or a path whose last segment is one) beside the
/// file at `location`.
fn sibling(location: &str, name: &str) -> String {
    let name = name.rsplit('/').next().unwrap_or(name);
    match location.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{name}"),
        None => name.to_string(),
    }
}

/// The location a copy of the data file at `location` is written to: beside it, named
/// `name`.
pub(crate) fn copy_location(location: &str, name: &str) -> String {
    sibling(location, name)
}

/// The URL of the Iceberg location `location` (a URL, or an absolute local path).
pub(crate) fn location_to_url(location: &str) -> Option<String> {
    let cx = Context {
        table: String::new(),
    };
    url_of(location, &cx).ok().map(|u| u.to_string())
}

fn push(meta: &mut Json, key: &str, value: Json) {
    match meta[key].as_array_mut() {
        Some(a) => a.push(value),
        None => meta[key] = json!([value]),
    }
}

async fn put(
    root: &StoreRoot,
    cx: &Context,
    location: &str,
    bytes: Vec<u8>,
    opts: &PutOptions,
    wrote: &mut Wrote,
) -> Result<(), Error> {
    let url = url_of(location, cx)?;
    let path = root.path_of(url.as_str())?;
    root.store()
        .put_opts(&path, PutPayload::from(bytes), opts.clone())
        .await
        .map_err(|source| sbbf_parquet::WriteError::Store {
            location: location.to_string(),
            source,
        })?;
    wrote.locations.push(location.to_string());
    Ok(())
}

/// Puts `bytes` at `location` only if nothing is there: `false` when something is.
async fn put_if_absent(
    root: &StoreRoot,
    cx: &Context,
    location: &str,
    bytes: Vec<u8>,
    wrote: &mut Wrote,
) -> Result<bool, Error> {
    let opts = PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    };
    match put(root, cx, location, bytes, &opts, wrote).await {
        Ok(()) => Ok(true),
        Err(Error::Write(sbbf_parquet::WriteError::Store {
            source: object_store::Error::AlreadyExists { .. },
            ..
        })) => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_lies_beside_its_original_in_the_same_notation() {
        assert_eq!(
            copy_location("file:///w/t/data/a.parquet", "a-sbbf-1.parquet"),
            "file:///w/t/data/a-sbbf-1.parquet"
        );
        assert_eq!(
            copy_location("/w/t/data/x=1/a.parquet", "d/a-sbbf-1.parquet"),
            "/w/t/data/x=1/a-sbbf-1.parquet"
        );
        assert_eq!(
            copy_location("s3://b/t/a.parquet", "a-sbbf-1.parquet"),
            "s3://b/t/a-sbbf-1.parquet"
        );
    }

    #[test]
    fn numbers_are_set_as_the_schema_types_them() {
        let schema = Schema::parse_str(
            r#"{"type": "record", "name": "e", "fields": [
                {"name": "status", "type": "int"},
                {"name": "snapshot_id", "type": ["null", "long"]}]}"#,
        )
        .unwrap();
        let mut r = Value::Record(vec![
            ("status".into(), Value::Int(1)),
            ("snapshot_id".into(), Value::Union(0, Box::new(Value::Null))),
        ]);
        set_number(&mut r, &schema, "status", Some(2)).unwrap();
        set_number(&mut r, &schema, "snapshot_id", Some(7)).unwrap();
        set_number(&mut r, &schema, "sequence_number", Some(7)).unwrap();
        assert_eq!(long(&r, "status"), Some(2));
        assert_eq!(long(&r, "snapshot_id"), Some(7));
        assert!(apache_avro::to_avro_datum(&schema, r.clone()).is_ok());
        set_number(&mut r, &schema, "snapshot_id", None).unwrap();
        assert_eq!(long(&r, "snapshot_id"), None);
        assert!(set_number(&mut r, &schema, "status", None).is_err());
    }
}
