//! The index follows the table's log: a probe of a Delta version later than the one an index
//! was built from reads only the commits since (never the checkpoint or the snapshot), answers
//! from the index the files that version still has, probes the files added since directly,
//! and never names a file the table removed. An Iceberg snapshot later than the index's is
//! read as its metadata, manifest list and the data manifests added since, when it still
//! lists every data manifest of the index's snapshot (no file removed).
//!
//! The commits go out beside the index's file table, columns and stripes: one round trip
//! after the one that found the table and read the index's head (two when the log must be
//! listed from the index's version first: a local table, or a log longer than one listing
//! page). The column is named as the index's version named it
//! ([`sbbf_lake::TableNames`], kept in the index). Whatever this path cannot follow
//! (an index without names or commit mark, a commit that changes the table's metadata, commits
//! cleaned from the log, a time-travel read before the index's version) is read from the
//! snapshot instead, with the reason kept for `--stats`.

use crate::format::Head;
use crate::probe::{decide, fetch, finish, prepare, IndexStats, ProbePlan};
use crate::table::{Loaded, ReadStats, Root};
use sbbf_lake::since::{CommitMark, Tail};
use sbbf_lake::TableVersion;
use sbbf_lake::{Found, TableNames};
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::source::SourceOptions;
use sbbf_parquet::Encoded;

/// A probe planned from the commits since the index's version, or why the snapshot must be
/// read instead.
pub(crate) enum Followed {
    /// The plan, and the column path as files hold it.
    Plan(Box<ProbePlan>, String),
    /// Why not.
    Snapshot(String),
}

/// What the index recorded to follow its table with.
enum Follow<'a> {
    /// A Delta table: the version, its column names, and the mark of its commit.
    Delta(i64, TableNames, &'a CommitMark),
    /// An Iceberg table: the snapshot, its data manifests and (when recorded) its manifest
    /// list.
    Iceberg(i64, &'a [String], Option<&'a str>),
}

/// What the index recorded to follow its table with, or why it cannot.
fn followable(head: &Head) -> Result<Follow<'_>, String> {
    let Some(t) = &head.table else {
        return Err("the index records no table version".into());
    };
    match t.format.as_str() {
        "iceberg" => match &t.manifests {
            Some(m) => Ok(Follow::Iceberg(t.version, m, t.list.as_deref())),
            None => Err("the index records no manifests to follow the table from".into()),
        },
        _ => {
            let (Some(names), Some(mark)) = (&t.names, &t.mark) else {
                return Err(
                    "the index records no column names or commit to follow the log from".into(),
                );
            };
            let names = TableNames::from_json(names)
                .ok_or_else(|| "the index's column names do not read".to_string())?;
            Ok(Follow::Delta(t.version, names, mark))
        }
    }
}

/// Plans a probe of `column` in the table `found` (given as `path`) from the index at `root`
/// (its head, and the reads that took beside finding the table) and what changed since its
/// version: for Delta the commits since (read beside the index's sections, the column named
/// as the index's version named it: a commit that renames would have sent the probe to the
/// snapshot), for Iceberg the manifests added since (read first: the column is named as the
/// read snapshot's metadata names it).
pub(crate) async fn plan<F>(
    found: &Found,
    path: &str,
    root: &Root,
    (loaded, head_reads): (&Loaded, ReadStats),
    column: &str,
    encode: F,
    options: SourceOptions,
) -> Followed
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error>,
{
    let follow = match followable(&loaded.head) {
        Ok(f) => f,
        Err(why) => return Followed::Snapshot(why),
    };
    // The column as the files name it: for Delta by the index's names (a commit that renames
    // sends the probe to the snapshot), for Iceberg by the read snapshot's metadata.
    let (since, format, file_column, iceberg) = match &follow {
        // A partition column's values are the log's: the snapshot answers for it.
        Follow::Delta(_, names, _) if names.is_partition_column(column) != Some(false) => {
            return Followed::Snapshot(match names.is_partition_column(column) {
                Some(_) => {
                    format!("`{column}` is a partition column: answered from the log's values")
                }
                None => "the index records no partition columns".into(),
            })
        }
        Follow::Delta(since, names, _) => match names.file_column(path, column) {
            Ok(c) => (*since, "delta", c, None),
            // A column these names cannot say is the snapshot's to say (or to refuse).
            Err(_) => {
                return Followed::Snapshot(format!("the index's names do not find `{column}`"))
            }
        },
        Follow::Iceberg(since, manifests, list) => {
            let tail = found.iceberg_since(*since, manifests, *list).await;
            let names = match &tail {
                Ok(Tail::Read(t)) => t.names.clone().unwrap_or_default(),
                _ => TableNames::default(),
            };
            let Ok(c) = names.file_column(path, column) else {
                return Followed::Snapshot(format!("the table's names do not find `{column}`"));
            };
            // A file's lack of it proves nothing: the snapshot's probe says so file by file.
            if let Some(why) = names.lacking_holds_values(column) {
                return Followed::Snapshot(why);
            }
            (*since, "iceberg", c, Some(tail))
        }
    };
    let asks = [prepare(&loaded.head, &file_column, encode)];
    let mut reads = ReadStats::default();
    let (tail, fetched, sequential) = match (&follow, iceberg) {
        (_, Some(tail)) => {
            let fetched = match &tail {
                Ok(Tail::Read(_)) => fetch(root, loaded, &asks, true, &mut reads).await.ok(),
                _ => None,
            };
            (tail, fetched, true)
        }
        (Follow::Delta(_, _, mark), None) => {
            let (tail, fetched) = futures::future::join(
                found.delta_since(since, mark),
                fetch(root, loaded, &asks, true, &mut reads),
            )
            .await;
            (tail, fetched.ok(), false)
        }
        (Follow::Iceberg(..), None) => return Followed::Snapshot("nothing read".into()),
    };
    let tail = match tail {
        Ok(Tail::Read(t)) => t,
        Ok(Tail::Snapshot(why)) => return Followed::Snapshot(why),
        Err(e) => return Followed::Snapshot(format!("reading what changed since: {e}")),
    };
    let Some(fetched) = fetched else {
        // The snapshot's path reads the index again and says why it is ignored.
        return Followed::Snapshot("the index could not be read".into());
    };
    let listing = match root.listed_since(path, &fetched.directory.files, &tail) {
        Ok(l) => l,
        Err(e) => return Followed::Snapshot(format!("naming the files: {e}")),
    };
    let Ok(decisions) = decide(&fetched, 0, &asks[0], &listing) else {
        return Followed::Snapshot("the index could not be read".into());
    };
    let log = found.log_reads();
    let mut stats = IndexStats {
        files: listing.len(),
        listing: ReadStats {
            requests: log.gets + log.lists,
            bytes: log.bytes,
            waves: 1 + tail.waves,
        },
        used: true,
        index_version: Some(since),
        commits_since: Some(tail.commits as u64),
        ..IndexStats::default()
    };
    stats.index.add(head_reads);
    stats.index.add(reads);
    // Finding the table and the index's head shared the first round trip; a Delta log's
    // commits went out beside the index's sections, an Iceberg table's manifests before them.
    stats.waves_before_direct = 1 + match sequential {
        true => tail.waves + reads.waves,
        false => tail.waves.max(reads.waves),
    };
    let table = TableVersion {
        format: format.into(),
        location: path.to_string(),
        version: tail.version,
        timestamp_ms: tail.timestamp_ms,
        files: listing.len(),
        log_reads: log,
        log_since: Some(since),
    };
    let plan = finish(root, &listing, decisions, stats, None, Some(table), options);
    Followed::Plan(Box::new(plan), file_column)
}
