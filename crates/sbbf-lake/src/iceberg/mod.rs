//! Apache Iceberg tables read from their metadata: the metadata JSON file, the snapshot's
//! manifest list and its manifests (Avro), as the Iceberg spec defines them (format versions
//! 1 to 3). Read by us rather than through the `iceberg` crate, which would build a second
//! arrow and parquet beside ours.
//!
//! This file finds the metadata file and chooses the snapshot; `metadata` holds the JSON
//! fields, `manifest` the Avro records, `partition` how partition values become text and
//! `plan` which deletes apply to which data files.

pub(crate) mod commit;
mod container;
pub(crate) mod equality;
mod manifest;
mod metadata;
pub(crate) mod moved;
mod partition;
mod plan;
pub(crate) mod positions;
mod read_once;
#[cfg(test)]
mod tests;

use super::{AsOf, Format, Snapshot, StoreRoot};
use crate::since::KnownSnapshot;
use crate::LakeError;
use futures::StreamExt as _;
use manifest::ManifestRef;
use metadata::TableMetadata;
use sbbf_parquet::{Error, ReadError};
use url::Url;

/// The format's name in errors.
const FORMAT: &str = "Iceberg";

/// How many manifests are fetched at once: enough to hide an object store's latency (a
/// table appended to 10 times has 10 manifests: with 8 at once they took two round trips on
/// the S3 test server, now one), few enough not to hold many manifests in memory (each is
/// kilobytes to a few megabytes, and capped).
const CONCURRENT_MANIFESTS: usize = 32;

/// Something in the table `table`'s files (a delete file, a data file) is malformed.
fn damaged(table: &str, reason: String) -> Error {
    LakeError::Iceberg {
        table: table.to_string(),
        reason,
        source: None,
    }
    .into()
}

/// Builds this table's errors: each names the table (its metadata file once known).
pub(super) struct Context {
    table: String,
}

impl Context {
    /// Something in the table's files is malformed or missing.
    fn error(&self, reason: impl Into<String>) -> Error {
        LakeError::Iceberg {
            table: self.table.clone(),
            reason: reason.into(),
            source: None,
        }
        .into()
    }

    /// As [`Context::error`], with the error that revealed it.
    fn error_from(
        &self,
        reason: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        LakeError::Iceberg {
            table: self.table.clone(),
            reason: reason.into(),
            source: Some(Box::new(source)),
        }
        .into()
    }

    /// The table uses `feature`, which this reader refuses.
    fn unsupported(&self, feature: impl Into<String>) -> Error {
        LakeError::Unsupported {
            format: FORMAT,
            table: self.table.clone(),
            feature: feature.into(),
        }
        .into()
    }

    /// No snapshot fits what was asked.
    fn no_snapshot(&self, asked: String) -> Error {
        LakeError::NoSuchSnapshot {
            format: FORMAT,
            table: self.table.clone(),
            asked,
        }
        .into()
    }
}

/// What finding an Iceberg table learnt, and what its reader already holds, before its
/// snapshot is read: each spares a request or a round trip.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Prior<'a> {
    /// The names directly in the folder's `metadata/`, all of them, when finding the table
    /// listed them (the folder is then not listed again).
    pub(crate) listed: Option<&'a [String]>,
    /// A metadata file's URL and bytes, fetched beside that listing: used when it is the one
    /// the listing makes current.
    pub(crate) fetched: Option<&'a (String, bytes::Bytes)>,
    /// A snapshot's files a reader holds (see [`KnownSnapshot`]).
    pub(crate) known: Option<&'a KnownSnapshot>,
    /// A snapshot (id, manifest list as the metadata names it) whose files a reader holds
    /// and asks only what changed since: when it is the one chosen, its manifest list is not
    /// read ([`Opened::unchanged`]). Never set to read a snapshot's files.
    pub(crate) unchanged: Option<(i64, &'a str)>,
}

/// Reads the snapshot of the Iceberg table `url` names (a metadata file, or a table folder),
/// `arg` being how the user named it.
pub(crate) async fn snapshot(
    root: &StoreRoot,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
    prior: Prior<'_>,
) -> Result<Snapshot, Error> {
    // Its files are read: a snapshot left unread for being unchanged would have none.
    let prior = Prior {
        unchanged: None,
        ..prior
    };
    let Opened {
        mut snap,
        manifests,
        specs,
        cx,
        default_spec,
        moved,
        known_files,
        ..
    } = open(root, arg, url, as_of, prior).await?;
    if let Some(files) = known_files {
        snap.files = files;
        snap.positions.moved = moved;
        return Ok(snap);
    }
    let (data, deletes) =
        read_manifests(root, &cx, manifests, &specs, default_spec, moved.as_ref()).await?;
    let planned = plan::attach(data, deletes, &specs, &snap.columns);
    snap.files = planned.files;
    snap.positions.files = planned.positions;
    snap.positions.moved = moved;
    snap.equalities.files = planned.equalities;
    Ok(snap)
}

/// A table's metadata read and its snapshot chosen: the snapshot without its files yet, and
/// the manifests that list them.
struct Opened {
    snap: Snapshot,
    manifests: Vec<ManifestRef>,
    specs: std::collections::HashMap<i32, metadata::Spec>,
    cx: Context,
    /// The spec of manifests that name none.
    default_spec: i32,
    /// Sequential reads it took (the folder's listing and version hint, the metadata file,
    /// the manifest list).
    waves: u64,
    /// Where a table found in another folder than its metadata names reads its files.
    moved: Option<moved::Moved>,
    /// The snapshot's files as a reader held them ([`Prior::known`]): its manifests are
    /// then not read (`manifests` is empty).
    known_files: Option<Vec<crate::DataFile>>,
    /// The snapshot is [`Prior::unchanged`]'s: nothing of it was read past the metadata
    /// file (`manifests` is empty).
    unchanged: bool,
}

async fn open(
    root: &StoreRoot,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
    prior: Prior<'_>,
) -> Result<Opened, Error> {
    let mut notes = Vec::new();
    let mut waves = 1;
    let metadata_url = match url.path().ends_with('/') {
        true => find_metadata(root, arg, url, prior.listed, &mut notes).await?,
        false => url.clone(),
    };
    let cx = Context {
        table: metadata_url.to_string(),
    };
    let bytes = match prior.fetched {
        // Fetched in the listing's round trip.
        Some((at, bytes)) if at == metadata_url.as_str() => bytes.clone(),
        _ => {
            if url.path().ends_with('/') {
                waves += 1;
            }
            get_named(root, &cx, metadata_url.as_str(), "metadata file").await?
        }
    };
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(cx.unsupported("gzip-compressed metadata"));
    }
    let meta = metadata::parse(&bytes, &cx)?;
    if !(1..=3).contains(&meta.format_version) {
        return Err(cx.unsupported(format!("format version {}", meta.format_version)));
    }
    if meta.encryption_keys.as_ref().is_some_and(|k| !k.is_empty()) {
        return Err(cx.unsupported("encryption"));
    }
    // A table found in a folder its metadata does not name (copied or moved) is read
    // there, every location below its recorded one taken below the folder found: the folder
    // given, or the one holding the `metadata/` folder of the metadata file given (unless
    // the table writes its metadata files elsewhere than there).
    let own_metadata_folder = meta
        .properties
        .as_ref()
        .is_none_or(|p| !p.contains_key("write.metadata.path"));
    let found = match url.path().ends_with('/') {
        true => Some(url.clone()),
        false if own_metadata_folder => moved::table_folder_of(&metadata_url),
        false => None,
    };
    let moved = found
        .as_ref()
        .and_then(|f| moved::Moved::of(&meta.location, f));
    if let (Some(m), Some(found)) = (&moved, &found) {
        notes.push(format!(
            "the table's metadata says it lives at {}; it was found at {found} and is read \
             there (its files at the same paths below that folder)",
            m.said
        ));
    }
    let specs = meta.specs();
    let partition_columns = specs
        .get(&meta.default_spec_id())
        .map(|s| s.fields.iter().map(|f| f.name.clone()).collect())
        .unwrap_or_default();
    let mut snap = Snapshot {
        format: Format::Iceberg,
        location: arg.to_string(),
        version: -1,
        timestamp_ms: None,
        metadata: Some(cx.table.clone()),
        partition_columns,
        files: Vec::new(),
        columns: meta.columns(),
        notes,
        vectors: Default::default(),
        positions: Default::default(),
        equalities: Default::default(),
        inner_physical: Default::default(),
        log_reads: Default::default(),
        data_manifests: Some(Vec::new()),
        data_only_list: None,
    };
    let default_spec = meta.default_spec_id();
    let Some(id) = choose(&meta, as_of, &cx)? else {
        return Ok(Opened {
            snap,
            manifests: Vec::new(),
            specs,
            cx,
            default_spec,
            waves,
            moved,
            known_files: None,
            unchanged: false,
        });
    };
    let Some(chosen) = meta.snapshot(id) else {
        return Err(cx.error(format!(
            "the current snapshot {id} is not among the table's snapshots"
        )));
    };
    if chosen.key_id.is_some() {
        return Err(cx.unsupported("encryption"));
    }
    snap.version = id;
    snap.timestamp_ms = Some(chosen.timestamp_ms);
    // An older snapshot is read with the schema it was written with (its columns as they
    // were named then, dropped ones included), as the format's readers read it; the current
    // one with the current schema.
    if as_of.is_some() && chosen.schema_id.is_some() {
        snap.columns = meta.columns_of(chosen.schema_id);
    }
    // The snapshot a reader holds, when it is this one and its files are all it needs.
    let known = prior.known.filter(|k| {
        k.version == id
            && chosen.manifest_list.as_deref() == Some(k.manifest_list.as_str())
            && specs.values().all(|s| s.fields.is_empty())
    });
    let unchanged = prior
        .unchanged
        .is_some_and(|(s, list)| s == id && chosen.manifest_list.as_deref() == Some(list));
    let (manifests, known_files) = match known {
        Some(k) => {
            snap.data_manifests = Some(k.data_manifests.clone());
            snap.data_only_list = Some(k.manifest_list.clone());
            (Vec::new(), Some(k.files.clone()))
        }
        None if unchanged => (Vec::new(), None),
        None => {
            let manifests = manifests_of(root, &cx, chosen, moved.as_ref()).await?;
            waves += u64::from(chosen.manifest_list.is_some());
            snap.data_manifests = Some(
                manifests
                    .iter()
                    .filter(|m| m.content == 0)
                    .map(|m| m.path.clone())
                    .collect(),
            );
            snap.data_only_list = chosen
                .manifest_list
                .clone()
                .filter(|_| manifests.iter().all(|m| m.content == 0));
            (manifests, None)
        }
    };
    Ok(Opened {
        snap,
        manifests,
        specs,
        cx,
        default_spec,
        waves,
        moved,
        known_files,
        unchanged,
    })
}

/// The manifests snapshot `chosen` lists: its manifest list's (one read), or a v1 snapshot's
/// own list.
async fn manifests_of(
    root: &StoreRoot,
    cx: &Context,
    chosen: &metadata::SnapshotEntry,
    moved: Option<&moved::Moved>,
) -> Result<Vec<ManifestRef>, Error> {
    let id = chosen.snapshot_id;
    Ok(match (&chosen.manifest_list, &chosen.manifests) {
        (Some(list), _) => {
            let what = format!("manifest list of snapshot {id}");
            let list = moved::at(moved, list);
            let bytes = get_named(root, cx, &list, &what).await?;
            let mut refs = manifest::read_manifest_list(&bytes, cx, &list)?;
            for r in &mut refs {
                r.path = moved::at(moved, &r.path);
            }
            refs
        }
        (None, Some(paths)) => {
            let seq = chosen.sequence_number.unwrap_or(0);
            paths
                .iter()
                .map(|p| ManifestRef::v1(moved::at(moved, p), seq))
                .collect()
        }
        (None, None) => {
            return Err(cx.error(format!(
                "snapshot {id} has neither `manifest-list` nor `manifests`"
            )))
        }
    })
}

/// The live entries of `manifests`, data files and delete files apart. Manifests are fetched
/// a few at a time and read in list order, so the files keep the order the manifests give
/// them.
async fn read_manifests(
    root: &StoreRoot,
    cx: &Context,
    manifests: Vec<ManifestRef>,
    specs: &std::collections::HashMap<i32, metadata::Spec>,
    default_spec: i32,
    moved: Option<&moved::Moved>,
) -> Result<(Vec<manifest::Entry>, Vec<manifest::Entry>), Error> {
    let mut fetched = futures::stream::iter(manifests)
        .map(|m| async move {
            let what = match m.content {
                0 => "data manifest",
                _ => "delete manifest",
            };
            let bytes = get_named(root, cx, &m.path, what).await?;
            Ok::<_, Error>((m, bytes))
        })
        .buffered(CONCURRENT_MANIFESTS);
    let mut data = Vec::new();
    let mut deletes = Vec::new();
    while let Some(got) = fetched.next().await {
        let (m, bytes) = got?;
        let spec = m
            .spec_id
            .or(Some(default_spec))
            .and_then(|id| specs.get(&id));
        for mut entry in manifest::read_manifest(&bytes, cx, &m, spec)? {
            entry.path = moved::at(moved, &entry.path);
            match entry.content {
                0 if is_parquet(&entry.format) => data.push(entry),
                0 => {
                    return Err(cx.unsupported(format!(
                        "{} data files ({}); only Parquet data files are read",
                        entry.format, entry.path
                    )))
                }
                _ => deletes.push(entry),
            }
        }
    }
    Ok((data, deletes))
}

/// The data files an Iceberg table's snapshot has beyond those of an earlier snapshot
/// `since` whose data manifests were `known`: when every one of those is still in the
/// snapshot's manifest list (manifests are immutable, so their live files are still live),
/// the files of the manifests added since; else why the snapshot must be read whole (files
/// were removed, or manifests rewritten). `list`: snapshot `since`'s manifest list when
/// known: a snapshot that still has it is `since` itself, and its list is not read.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn since(
    root: &StoreRoot,
    arg: &str,
    url: &Url,
    as_of: Option<AsOf>,
    listed: Option<&[String]>,
    since: i64,
    known: &[String],
    list: Option<&str>,
) -> Result<super::since::Tail, Error> {
    use super::since::{LogTail, Tail};
    let Opened {
        snap,
        manifests,
        specs,
        cx,
        default_spec,
        mut waves,
        moved,
        unchanged,
        ..
    } = open(
        root,
        arg,
        url,
        as_of,
        Prior {
            listed,
            unchanged: list.map(|l| (since, l)),
            ..Prior::default()
        },
    )
    .await?;
    let in_list: std::collections::HashSet<&str> = manifests
        .iter()
        .filter(|m| m.content == 0)
        .map(|m| m.path.as_str())
        .collect();
    let gone = known.iter().find(|k| !in_list.contains(k.as_str()));
    if let Some(gone) = gone.filter(|_| !unchanged) {
        return Ok(Tail::Snapshot(format!(
            "snapshot {} no longer lists manifest {gone} of snapshot {since} (files removed, or \
             manifests rewritten)",
            snap.version
        )));
    }
    let known: std::collections::HashSet<&str> = known.iter().map(String::as_str).collect();
    let new: Vec<ManifestRef> = manifests
        .into_iter()
        .filter(|m| m.content == 0 && !known.contains(m.path.as_str()))
        .collect();
    let count = new.len();
    if count > 0 {
        waves += 1;
    }
    let (data, _) = read_manifests(root, &cx, new, &specs, default_spec, moved.as_ref()).await?;
    Ok(Tail::Read(LogTail {
        since,
        version: snap.version,
        timestamp_ms: snap.timestamp_ms,
        commits: count,
        added: data
            .into_iter()
            .map(|e| (plan::location_url(&e.path), e.size))
            .collect(),
        removed: Default::default(),
        waves,
        names: Some(snap.names()),
    }))
}

fn is_parquet(format: &str) -> bool {
    format.eq_ignore_ascii_case("parquet")
}

/// Which snapshot to read: the current one, the one with the asked id, or the one the
/// snapshot log says was current at the asked time (spec "Point in Time Reads"). `None`: the
/// table has no snapshot yet (and none was asked for).
fn choose(meta: &TableMetadata, as_of: Option<AsOf>, cx: &Context) -> Result<Option<i64>, Error> {
    match as_of {
        None => Ok(meta.current_snapshot_id()),
        Some(AsOf::Version(id)) => match meta.snapshot(id) {
            Some(_) => Ok(Some(id)),
            None => Err(cx.no_snapshot(format!("{id} ({})", known(&meta.snapshot_ids())))),
        },
        Some(AsOf::TimestampMs(t)) => {
            let when = chrono::DateTime::from_timestamp_millis(t)
                .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
                .unwrap_or_else(|| format!("{t} ms"));
            let Some(log) = meta.snapshot_log.as_ref().filter(|l| !l.is_empty()) else {
                return Err(cx.no_snapshot(format!(
                    "at or before {when} (its metadata has no snapshot log to tell)"
                )));
            };
            // The log is in commit order; the last entry at or before the time is the
            // snapshot that was current then.
            let Some(entry) = log.iter().rev().find(|e| e.timestamp_ms <= t) else {
                return Err(cx.no_snapshot(format!(
                    "at or before {when} (its first logged snapshot is later)"
                )));
            };
            match meta.snapshot(entry.snapshot_id) {
                Some(_) => Ok(Some(entry.snapshot_id)),
                None => Err(cx.no_snapshot(format!(
                    "at or before {when}: snapshot {} was current then but has expired",
                    entry.snapshot_id
                ))),
            }
        }
    }
}

/// "its snapshots are 1, 2 and 3" (at most ten shown), for messages.
fn known(ids: &[i64]) -> String {
    const SHOWN: usize = 10;
    if ids.is_empty() {
        return "it has no snapshots".to_string();
    }
    let mut text = ids
        .iter()
        .take(SHOWN)
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    format!("its snapshots: {text}")
}

/// Reads the object at `url`, which the table names as `what`: when storage does not have it
/// the error says the table is broken and names it; other failures are the store's.
async fn get_named(
    root: &StoreRoot,
    cx: &Context,
    url: &str,
    what: &str,
) -> Result<bytes::Bytes, Error> {
    match root.get(url).await {
        Err(Error::Read(ReadError::Store {
            source: source @ object_store::Error::NotFound { .. },
            ..
        })) => Err(cx.error_from(
            format!("the table names {what} {url}, which storage does not have"),
            source,
        )),
        other => other,
    }
}

/// The metadata file of the table folder `url`: the one `metadata/version-hint.text` names,
/// else the highest-numbered one. Either way the folder was read without its catalog, which
/// `notes` says. `listed`: the names in `metadata/`, when known (else it is listed).
async fn find_metadata(
    root: &StoreRoot,
    arg: &str,
    url: &Url,
    listed: Option<&[String]>,
    notes: &mut Vec<String>,
) -> Result<Url, Error> {
    let cx = Context {
        table: arg.to_string(),
    };
    let folder = url
        .join("metadata/")
        .map_err(|e| cx.error_from(format!("{url} has no metadata folder URL"), e))?;
    let read_now: Vec<String>;
    let names: &[String] = match listed {
        Some(names) => names,
        None => {
            read_now = root.list_dir(folder.as_str()).await?.1;
            &read_now
        }
    };
    let mut hint_note = String::new();
    if names.iter().any(|n| n == HINT) {
        let hint_url = format!("{folder}{HINT}");
        let text = get_named(root, &cx, &hint_url, "version hint").await?;
        let hint = String::from_utf8_lossy(&text).trim().to_string();
        match hinted(&hint, names) {
            Some(name) => {
                notes.push(format!(
                    "{arg} was read without its catalog, from metadata/{name} (which metadata/{HINT} names); \
                     a catalog, where the table has one, is authoritative and may name a newer metadata file"
                ));
                return join(&cx, &folder, name);
            }
            None => {
                hint_note = format!(
                    " (metadata/{HINT} says `{}`, which names no metadata file there)",
                    hint.chars().take(100).collect::<String>()
                );
            }
        }
    }
    let newest = names
        .iter()
        .filter_map(|n| metadata_number(n).map(|v| (v, n)))
        .max()
        .map(|(_, n)| n);
    let Some(name) = newest else {
        return Err(cx.error(format!(
            "{folder} holds no metadata file (NNNNN-<uuid>.metadata.json or vN.metadata.json){hint_note}"
        )));
    };
    notes.push(format!(
        "{arg} was read without its catalog, from metadata/{name}, the highest-numbered metadata file{hint_note}; \
         a catalog, where the table has one, is authoritative and may name another metadata file"
    ));
    join(&cx, &folder, name)
}

/// The Hadoop-style pointer to the current metadata file.
const HINT: &str = "version-hint.text";

/// The metadata file a version hint names among `names`: a version N (`vN.metadata.json`
/// or its gzip form; else the one numbered N, `0000N-<uuid>.metadata.json`), or a file name
/// (or a path ending in one).
fn hinted<'a>(hint: &str, names: &'a [String]) -> Option<&'a String> {
    match hint.parse::<u64>() {
        Ok(n) => {
            let plain = [
                format!("v{n}.metadata.json"),
                format!("v{n}.gz.metadata.json"),
            ];
            let numbered = || names.iter().find(|name| metadata_number(name) == Some(n));
            names
                .iter()
                .find(|name| plain.contains(name))
                .or_else(numbered)
        }
        Err(_) => {
            let file = hint.rsplit('/').next().unwrap_or(hint);
            names.iter().find(|name| *name == file)
        }
    }
}

/// The number of a metadata file's name: `NNNNN-<uuid>.metadata.json` or
/// `vN.metadata.json` (either possibly `.gz.metadata.json`); `None` for other names.
fn metadata_number(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".metadata.json")?;
    let stem = stem.strip_suffix(".gz").unwrap_or(stem);
    if let Some(n) = stem.strip_prefix('v') {
        return n.parse().ok();
    }
    let (n, _uuid) = stem.split_once('-')?;
    match !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
        true => n.parse().ok(),
        false => None,
    }
}

fn join(cx: &Context, folder: &Url, name: &str) -> Result<Url, Error> {
    folder
        .join(name)
        .map_err(|e| cx.error_from(format!("metadata file name `{name}` is not usable"), e))
}
