//! A Delta table's log from a version on: the commits after version V, read without the
//! checkpoint or any commit before them (see [`crate::since`]).
//!
//! Only commits that change data files are followed. A commit with a `metaData` action (a
//! schema or column-mapping change) or a `protocol` action, a commit the log no longer holds
//! (cleaned up after a checkpoint), a commit V that is not the one the reader knew (a log
//! written again under the same names), or more than [`MAX_COMMITS`] commits send the reader
//! to the snapshot ([`Tail::Snapshot`], with the reason).

use super::{log_name, LogLook, LogName};
use crate::location::StoreRoot;
use crate::since::{CommitMark, LogTail, Tail, MAX_COMMITS};
use crate::AsOf;
use futures::{StreamExt as _, TryStreamExt as _};
use object_store::path::Path as StorePath;
use object_store::{ObjectMeta, ObjectStoreExt as _};
use sbbf_parquet::Error;
use std::collections::{BTreeMap, HashMap};
use url::Url;

/// The most log entries listed after V before giving up on following (commits, checksum
/// files and checkpoints, at most a few per version).
const MAX_LISTED: usize = 16 * MAX_COMMITS;

/// The most bytes of commits read (all at once): a few hundred thousand file actions.
const MAX_BYTES: u64 = 64 << 20;

/// The mark of commit `version` of the table at `url` (`None`: no such entry, no ETag, or
/// one written less than 2 s ago).
pub(crate) async fn mark(
    root: &StoreRoot,
    url: &Url,
    version: i64,
) -> Result<Option<CommitMark>, Error> {
    let Ok(v) = u64::try_from(version) else {
        return Ok(None);
    };
    let path = log_path(root, url)?.join(format!("{v:020}.json").as_str());
    match root.store().head(&path).await {
        // An entry written in the last moments may have been written again in the same tick
        // of the clock its tag is made of (a table deleted and created anew while the index
        // was built): no mark, as a data file that recent is not covered.
        Ok(meta) if meta.last_modified > chrono::Utc::now() - chrono::Duration::seconds(2) => {
            Ok(None)
        }
        Ok(meta) => Ok(meta.e_tag.map(|etag| CommitMark {
            size: meta.size,
            etag,
        })),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(source) => Err(sbbf_parquet::ReadError::Store {
            location: path.to_string(),
            source,
        }
        .into()),
    }
}

fn log_path(root: &StoreRoot, url: &Url) -> Result<StorePath, Error> {
    let log = url
        .join("_delta_log")
        .map_err(|_| crate::LakeError::BadLocation {
            location: format!("{url}_delta_log"),
        })?;
    root.path_of(log.as_str())
}

/// Reads the commits after `since` of the table at `url` (see [`Tail`]): the log listed from
/// `since` on (or what finding the table listed), the commits chosen and checked, read at
/// once, and their actions applied in order.
pub(crate) async fn read(
    root: &StoreRoot,
    url: &Url,
    look: Option<&LogLook>,
    since: i64,
    mark: &CommitMark,
    as_of: Option<AsOf>,
) -> Result<Tail, Error> {
    let snapshot = |why: String| Ok(Tail::Snapshot(why));
    let Ok(from) = u64::try_from(since) else {
        return snapshot(format!("version {since} is no Delta version"));
    };
    let target = match as_of {
        None => None,
        Some(AsOf::Version(v)) if v >= since => u64::try_from(v).ok(),
        Some(AsOf::Version(v)) => {
            return snapshot(format!("version {v} is older than version {since}"));
        }
        Some(AsOf::TimestampMs(_)) => return snapshot("a version was asked by time".into()),
    };
    let log = log_path(root, url)?;
    let mut waves = 0;
    let listed = match look {
        // What finding the table listed, when that is the whole log.
        Some(l) if l.complete && l.log == log => l.entries.clone(),
        _ => {
            waves += 1;
            match list_from(root, &log, from).await? {
                Some(listed) => listed,
                None => return snapshot(format!("more than {MAX_LISTED} log entries since")),
            }
        }
    };
    let (commits, wanted, to) = match choose(&log, &listed, since, mark, target) {
        Ok(chosen) => chosen,
        Err(why) => return snapshot(why),
    };
    if !wanted.is_empty() {
        waves += 1;
    }
    let bodies: Vec<bytes::Bytes> = futures::stream::iter(wanted.iter().map(|v| {
        let location = url
            .join(&format!("_delta_log/{v:020}.json"))
            .map(|u| u.to_string());
        async move {
            match location {
                Ok(l) => root.get(&l).await,
                Err(_) => Err(crate::LakeError::BadLocation {
                    location: format!("{url}_delta_log/{v:020}.json"),
                }
                .into()),
            }
        }
    }))
    .buffered(MAX_COMMITS)
    .try_collect()
    .await?;
    let mut tail = LogTail {
        since,
        version: i64::try_from(to).unwrap_or(i64::MAX),
        commits: wanted.len(),
        waves,
        ..Default::default()
    };
    if let Err(why) = apply(url, &wanted, &bodies, to, &mut tail) {
        return snapshot(why);
    }
    if tail.timestamp_ms.is_none() {
        tail.timestamp_ms = commits.get(&to).map(|m| m.last_modified.timestamp_millis());
    }
    Ok(Tail::Read(tail))
}

/// The log's entries from version `from` on; `None` past [`MAX_LISTED`] of them.
async fn list_from(
    root: &StoreRoot,
    log: &StorePath,
    from: u64,
) -> Result<Option<Vec<ObjectMeta>>, Error> {
    let offset = log.clone().join(format!("{from:020}").as_str());
    let mut listing = root
        .store()
        .list_with_offset(Some(log), &offset)
        .take(MAX_LISTED + 1);
    let mut listed = Vec::new();
    while let Some(m) = listing.next().await {
        listed.push(m.map_err(|source| sbbf_parquet::ReadError::Store {
            location: log.to_string(),
            source,
        })?);
    }
    Ok((listed.len() <= MAX_LISTED).then_some(listed))
}

/// The commits `listed` holds from `since` on, the versions to read (after `since`, up to
/// `target` or the latest) and the last of them; or why the snapshot must be read (commit
/// `since` is not the one `mark` names, a commit is missing, too many or too large).
#[allow(clippy::type_complexity)]
fn choose(
    log: &StorePath,
    listed: &[ObjectMeta],
    since: i64,
    mark: &CommitMark,
    target: Option<u64>,
) -> Result<(BTreeMap<u64, ObjectMeta>, Vec<u64>, u64), String> {
    let from = u64::try_from(since).map_err(|_| format!("version {since} is no Delta version"))?;
    let prefix = format!("{log}/");
    let mut commits: BTreeMap<u64, ObjectMeta> = BTreeMap::new();
    for m in listed {
        let Some(name) = m.location.as_ref().strip_prefix(&prefix) else {
            continue;
        };
        if let Some((v, LogName::Commit)) = log_name(name) {
            if v >= from && name.len() == 25 {
                commits.insert(v, m.clone());
            }
        }
    }
    match commits.get(&from) {
        Some(m) if m.size == mark.size && m.e_tag.as_deref() == Some(mark.etag.as_str()) => {}
        Some(_) => {
            return Err(format!(
                "the log's commit {since} is not the one the index was built from"
            ))
        }
        None => return Err(format!("the log no longer holds commit {since}")),
    }
    let latest = commits.keys().next_back().copied().unwrap_or(from);
    let to = match target {
        Some(t) if t > latest => return Err(format!("the log has no version {t}")),
        Some(t) => t,
        None => latest,
    };
    // (Checked before anything is allocated for them: a stray name far ahead in the log
    // must not make a list of billions.)
    if to - from > MAX_COMMITS as u64 {
        return Err(format!("{} commits since version {since}", to - from));
    }
    let wanted: Vec<u64> = (from + 1..=to).collect();
    if let Some(v) = wanted.iter().find(|v| !commits.contains_key(v)) {
        return Err(format!("the log lacks commit {v}"));
    }
    // Their sizes are listed: more than this many bytes of commits is the snapshot's to read.
    let bytes: u64 = wanted
        .iter()
        .filter_map(|v| commits.get(v))
        .map(|m| m.size)
        .sum();
    if bytes > MAX_BYTES {
        return Err(format!("{bytes} bytes of commits since version {since}"));
    }
    Ok((commits, wanted, to))
}

/// Applies the actions of the commits `wanted` (their `bodies`) to `tail`: the files added
/// and still there, the files removed, and commit `to`'s in-commit timestamp; or why the
/// snapshot must be read (a line that is no action, a metadata or protocol change).
fn apply(
    url: &Url,
    wanted: &[u64],
    bodies: &[bytes::Bytes],
    to: u64,
    tail: &mut LogTail,
) -> Result<(), String> {
    // Files added since, by URL: their place in `added` (`None` once removed again).
    let mut live: HashMap<String, usize> = HashMap::new();
    let mut added: Vec<Option<(String, u64)>> = Vec::new();
    for (v, body) in wanted.iter().zip(bodies) {
        // A commit's actions are not ordered (the protocol says so): one commit may remove a
        // path and add it again (a deletion vector updated), in either order. Its removes are
        // applied first, then its adds.
        let mut adds: Vec<(String, u64)> = Vec::new();
        let mut removes: Vec<String> = Vec::new();
        for line in body.split(|b| *b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(action) = serde_json::from_slice::<serde_json::Value>(line) else {
                return Err(format!("commit {v} holds a line that is no JSON"));
            };
            let Some(action) = action.as_object() else {
                return Err(format!("commit {v} holds a line that is no action"));
            };
            if action.contains_key("metaData") || action.contains_key("protocol") {
                return Err(format!(
                    "commit {v} changes the table's metadata or protocol"
                ));
            }
            if let Some(add) = action.get("add") {
                let (Some(path), Some(size)) = (
                    add.get("path").and_then(|p| p.as_str()),
                    add.get("size").and_then(|s| s.as_u64()),
                ) else {
                    return Err(format!("commit {v} adds a file without a path or size"));
                };
                let Ok(file) = url.join(path) else {
                    return Err(format!("commit {v} adds a file at `{path}`"));
                };
                adds.push((file.to_string(), size));
            }
            if let Some(remove) = action.get("remove") {
                let Some(path) = remove.get("path").and_then(|p| p.as_str()) else {
                    return Err(format!("commit {v} removes a file without a path"));
                };
                let Ok(file) = url.join(path) else {
                    return Err(format!("commit {v} removes a file at `{path}`"));
                };
                removes.push(file.to_string());
            }
            if *v == to {
                if let Some(t) = action
                    .get("commitInfo")
                    .and_then(|c| c.get("inCommitTimestamp"))
                    .and_then(|t| t.as_i64())
                {
                    tail.timestamp_ms = Some(t);
                }
            }
        }
        for file in removes {
            if let Some(i) = live.remove(&file) {
                added[i] = None;
            }
            tail.removed.insert(file);
        }
        for (file, size) in adds {
            match live.get(&file) {
                Some(&i) => added[i] = Some((file, size)),
                None => {
                    live.insert(file.clone(), added.len());
                    added.push(Some((file, size)));
                }
            }
        }
    }
    tail.added = added.into_iter().flatten().collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A log of `commits` (each a list of action lines) under a temporary table folder.
    fn log(commits: &[&[&str]]) -> (tempfile::TempDir, Url) {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("_delta_log");
        std::fs::create_dir(&log).unwrap();
        for (v, actions) in commits.iter().enumerate() {
            let body: String = actions.iter().map(|a| format!("{a}\n")).collect();
            let entry = log.join(format!("{v:020}.json"));
            std::fs::write(&entry, body).unwrap();
            // Older than the 2 s in which an entry gets no mark.
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
            std::fs::File::options()
                .write(true)
                .open(&entry)
                .and_then(|f| f.set_modified(then))
                .unwrap();
        }
        let url = Url::from_directory_path(std::fs::canonicalize(dir.path()).unwrap()).unwrap();
        (dir, url)
    }

    fn add(path: &str, size: u64) -> String {
        format!(r#"{{"add":{{"path":"{path}","size":{size},"dataChange":true}}}}"#)
    }

    fn remove(path: &str) -> String {
        format!(r#"{{"remove":{{"path":"{path}","dataChange":true}}}}"#)
    }

    async fn tail(url: &Url, since: i64, as_of: Option<AsOf>) -> Tail {
        let root = StoreRoot::local();
        let m = mark(&root, url, since).await.unwrap().unwrap();
        read(&root, url, None, since, &m, as_of).await.unwrap()
    }

    const META: &str = r#"{"metaData":{"id":"x"}}"#;

    #[tokio::test]
    async fn commits_since_say_what_was_added_and_removed() {
        let (a, b, c) = (
            add("a.parquet", 10),
            add("p=x%20y/b.parquet", 20),
            add("c.parquet", 30),
        );
        let (ra, rc) = (remove("a.parquet"), remove("c.parquet"));
        let (_d, url) = log(&[
            &[META, &a],
            // c added then removed again; b added; a removed; a (rewritten) added again.
            &[&b, &c],
            &[&rc, &ra],
            &[&add("a.parquet", 11)],
        ]);
        let Tail::Read(t) = tail(&url, 0, None).await else {
            panic!("followed")
        };
        assert_eq!((t.since, t.version, t.commits), (0, 3, 3));
        let u = |p: &str| url.join(p).unwrap().to_string();
        assert_eq!(
            t.added,
            vec![(u("p=x%20y/b.parquet"), 20), (u("a.parquet"), 11)]
        );
        let removed: HashSet<String> = [u("a.parquet"), u("c.parquet")].into();
        assert_eq!(t.removed, removed);
        // Up to a version asked for; none since the latest.
        let Tail::Read(t) = tail(&url, 0, Some(AsOf::Version(1))).await else {
            panic!("followed")
        };
        assert_eq!((t.version, t.added.len(), t.removed.len()), (1, 2, 0));
        let Tail::Read(t) = tail(&url, 3, None).await else {
            panic!("followed")
        };
        assert_eq!((t.commits, t.added.len(), t.removed.len()), (0, 0, 0));
    }

    /// A deletion vector updated: the same path removed and added in one commit, the add
    /// written first. The file stays (with its new size), and is among the removed too (so
    /// the reader takes it as added, not as the version it knew).
    #[tokio::test]
    async fn a_commit_applies_its_removes_before_its_adds() {
        let (_d, url) = log(&[
            &[META, &add("a.parquet", 10)],
            &[&add("a.parquet", 10), &remove("a.parquet")],
        ]);
        let Tail::Read(t) = tail(&url, 0, None).await else {
            panic!("followed")
        };
        let a = url.join("a.parquet").unwrap().to_string();
        assert_eq!(t.added, vec![(a.clone(), 10)]);
        assert!(t.removed.contains(&a));
    }

    #[tokio::test]
    async fn what_cannot_be_followed_says_why() {
        let a = add("a.parquet", 10);
        let (dir, url) = log(&[&[META, &a], &[&a], &[META], &[&a]]);
        let why = |t: Tail| match t {
            Tail::Snapshot(why) => why,
            Tail::Read(t) => panic!("followed: {t:?}"),
        };
        assert!(why(tail(&url, 1, None).await).contains("commit 2 changes the table's metadata"));
        assert!(why(tail(&url, 1, Some(AsOf::Version(0))).await).contains("older"));
        assert!(why(tail(&url, 1, Some(AsOf::TimestampMs(0))).await).contains("by time"));
        assert!(why(tail(&url, 3, Some(AsOf::Version(9))).await).contains("no version 9"));
        // A commit written again (another entry under the same name) is not the one known.
        let root = StoreRoot::local();
        let known = mark(&root, &url, 3).await.unwrap().unwrap();
        let entry = dir
            .path()
            .join("_delta_log")
            .join(format!("{:020}.json", 3));
        std::fs::write(&entry, format!("{}\n", add("other.parquet", 10))).unwrap();
        let t = read(&root, &url, None, 3, &known, None).await.unwrap();
        assert!(why(t).contains("not the one the index was built from"));
        // A commit missing from the log.
        std::fs::remove_file(
            dir.path()
                .join("_delta_log")
                .join(format!("{:020}.json", 2)),
        )
        .unwrap();
        let known = mark(&root, &url, 1).await.unwrap().unwrap();
        let t = read(&root, &url, None, 1, &known, None).await.unwrap();
        assert!(why(t).contains("lacks commit 2"));
        // An entry written just now gets no mark (it could be written again within its tick).
        let fresh = dir
            .path()
            .join("_delta_log")
            .join(format!("{:020}.json", 4));
        std::fs::write(fresh, format!("{}\n", add("a.parquet", 10))).unwrap();
        assert_eq!(mark(&root, &url, 4).await.unwrap(), None);
        // A stray name far ahead: no list of ten billion versions is made.
        let (d4, url) = log(&[&[META]]);
        let far = d4
            .path()
            .join("_delta_log")
            .join(format!("{:020}.json", 10_000_000_000u64));
        std::fs::write(far, "{}\n").unwrap();
        assert!(why(tail(&url, 0, None).await).contains("10000000000 commits since"));
        // Lines that are no actions.
        let (_d2, url) = log(&[&[META], &["{not json"]]);
        assert!(why(tail(&url, 0, None).await).contains("no JSON"));
        let (_d3, url) = log(&[&[META], &[r#"{"add":{"path":"x.parquet"}}"#]]);
        assert!(why(tail(&url, 0, None).await).contains("without a path or size"));
    }
}
