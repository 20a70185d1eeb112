//! A Delta log's listing: what finding a table on a store asks of its log (the first page of
//! `_delta_log/`, and `_last_checkpoint` when that page is not all), what a log object's name
//! says (its version and kind), and which objects a snapshot's replay reads. No kernel here:
//! finding a table needs this in every build.

use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path as StorePath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt as _};
use std::collections::HashMap;
use std::sync::Arc;

/// The first page of a Delta log's listing (and its `_last_checkpoint` when the page is not
/// the whole log), asked when a table on a store is found.
#[derive(Debug, Clone)]
pub(crate) struct LogLook {
    /// The log folder's path in the store.
    pub(crate) log: StorePath,
    /// The objects under it, as far as the first page went.
    pub(crate) entries: Vec<ObjectMeta>,
    /// Whether `entries` is every object under it.
    pub(crate) complete: bool,
    /// `_last_checkpoint`: `Some(None)` when the store has none, `None` when it was not read
    /// (a whole listing needs none) or failed.
    pub(crate) last_checkpoint: Option<Option<(ObjectMeta, Bytes)>>,
}

/// Objects listed in one request (S3's page); a first page this full may not be all.
pub(crate) const FIRST_PAGE: usize = 1000;

/// The largest `_last_checkpoint` read while finding the table (real ones are a few hundred
/// bytes of JSON; the read must not allocate what a hostile store claims).
const HINT_LIMIT: u64 = 1 << 20;

/// Asks the store for the first page of `log`, and for its `_last_checkpoint` only when that
/// page is not the whole log: a whole listing already names the newest checkpoint (the hint
/// only tells a reader where to start listing), so a log of up to a page costs one request;
/// a longer one a second round trip for the hint. An error of the listing is the caller's;
/// the hint's is left to the kernel.
pub(crate) async fn look(
    store: &Arc<dyn ObjectStore>,
    log: StorePath,
) -> object_store::Result<LogLook> {
    let mut entries = Vec::new();
    // `take` stops before a second page is asked for.
    let mut listed = store.list(Some(&log)).take(FIRST_PAGE);
    while let Some(m) = listed.next().await {
        entries.push(m?);
    }
    let complete = entries.len() < FIRST_PAGE;
    let last_checkpoint = match complete {
        true => None,
        false => read_hint(store, &log).await,
    };
    Ok(LogLook {
        complete,
        log,
        entries,
        last_checkpoint,
    })
}

/// `_last_checkpoint` of `log`: `Some(None)` when the store has none, `None` when it could
/// not be read here (or is too large to be a hint).
async fn read_hint(
    store: &Arc<dyn ObjectStore>,
    log: &StorePath,
) -> Option<Option<(ObjectMeta, Bytes)>> {
    match store.get(&log.clone().join("_last_checkpoint")).await {
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
pub(crate) fn to_read(
    log: &StorePath,
    listed: &[ObjectMeta],
    target: Option<u64>,
) -> Vec<ObjectMeta> {
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
