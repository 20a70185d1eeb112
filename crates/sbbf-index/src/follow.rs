//! The index follows the table's log: a probe of a Delta version later than the one an index
//! was built from reads only the commits since (never the checkpoint or the snapshot), answers
//! from the index the files that version still has, probes the files added since directly,
//! and never names a file the table removed.
//!
//! The commits go out beside the index's file table, columns and stripes: one round trip
//! after the one that found the table and read the index's head (two when the log must be
//! listed from the index's version first: a local table, or a log longer than one listing
//! page). The column is named as the index's version named it
//! ([`sbbf_parquet::lake::TableNames`], kept in the index). Whatever this path cannot follow
//! (an index without names or commit mark, a commit that changes the table's metadata, commits
//! cleaned from the log, a time-travel read before the index's version) is read from the
//! snapshot instead, with the reason kept for `--stats`.

use crate::format::Head;
use crate::probe::{decide, fetch, finish, prepare, IndexStats, ProbePlan};
use crate::table::{Loaded, ReadStats, Root};
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::lake::since::Tail;
use sbbf_parquet::lake::{Found, TableNames};
use sbbf_parquet::source::{SourceOptions, TableVersion};
use sbbf_parquet::Encoded;

/// A probe planned from the commits since the index's version, or why the snapshot must be
/// read instead.
pub(crate) enum Followed {
    /// The plan, and the column path as files hold it.
    Plan(Box<ProbePlan>, String),
    /// Why not.
    Snapshot(String),
}

/// The column names and commit the index recorded, when it can follow a Delta log.
fn followable(
    head: &Head,
) -> Result<(i64, TableNames, &sbbf_parquet::lake::since::CommitMark), String> {
    let Some(t) = &head.table else {
        return Err("the index records no table version".into());
    };
    if t.format != "delta" {
        return Err(format!("the index is of an {} table", t.format));
    }
    let (Some(names), Some(mark)) = (&t.names, &t.mark) else {
        return Err("the index records no column names or commit to follow the log from".into());
    };
    let names = TableNames::from_json(names)
        .ok_or_else(|| "the index's column names do not read".to_string())?;
    Ok((t.version, names, mark))
}

/// Plans a probe of `column` in the table `found` (given as `path`) from the index at `root`
/// (its head, and the reads that took beside finding the table) and the commits since its
/// version.
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
    let (since, names, mark) = match followable(&loaded.head) {
        Ok(x) => x,
        Err(why) => return Followed::Snapshot(why),
    };
    // A column these names cannot say is the snapshot's to say (or to refuse).
    let Ok(file_column) = names.file_column(path, column) else {
        return Followed::Snapshot(format!("the index's names do not find `{column}`"));
    };
    let ask = prepare(&loaded.head, &file_column, encode);
    let mut reads = ReadStats::default();
    let asks = [ask];
    let (tail, fetched) = futures::future::join(
        found.delta_since(since, mark),
        fetch(root, loaded, &asks, true, &mut reads),
    )
    .await;
    let tail = match tail {
        Ok(Tail::Read(t)) => t,
        Ok(Tail::Snapshot(why)) => return Followed::Snapshot(why),
        Err(e) => return Followed::Snapshot(format!("reading the commits since: {e}")),
    };
    let Ok(fetched) = fetched else {
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
    // Finding the table and the index's head shared the first round trip; the commits and
    // the index's sections the next (the log's listing, when needed, came before them).
    stats.waves_before_direct = 1 + tail.waves.max(reads.waves);
    let table = TableVersion {
        format: "delta".into(),
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
