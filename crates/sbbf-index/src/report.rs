//! The reports `sbbf index` prints (`--format json`) and front ends return: one `Serialize`
//! type each, so the command and other front ends give the same objects. Fields are declared
//! in sorted order.

use crate::format::{self, Directory};
use crate::table::{is_fresh, Listed, WholeIndex};
use serde::Serialize;
use std::collections::HashSet;

/// What an index covers of a table now (`sbbf index inspect`): files covered, stale (changed
/// since the build), missing (new) and gone, and per column its groups.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    /// The index's size in bytes.
    pub bytes: u64,
    /// Per indexed column.
    pub columns: Vec<ColumnCoverage>,
    /// Files the index answers for (listed, and unchanged since the build).
    pub covered: usize,
    /// When the index was written, milliseconds since 1970.
    pub created_ms: u64,
    /// Files in the index: the filters were read.
    pub files_indexed: usize,
    /// Indexed files no longer listed.
    pub gone: Vec<String>,
    /// Where the index is.
    pub index: String,
    /// Listed files the index does not hold (new since the build).
    pub missing: Vec<String>,
    /// Listed files changed since the build (size, ETag, inode or times).
    pub stale: Vec<String>,
    /// The Delta version or Iceberg snapshot id the index was built from (format 4, on a
    /// table read as its snapshot).
    pub table_version: Option<i64>,
    /// The FPP the build folded to, if any.
    pub target_fpp: Option<f64>,
    /// Indexed files the build did not cover: their footer could not be read, or they had
    /// changed just before it (always probed directly; `update` reads them again).
    pub unreadable: usize,
}

/// One column of a [`Coverage`].
#[derive(Debug, Clone, Serialize)]
pub struct ColumnCoverage {
    /// Leaf column path (a table's: by the table's name).
    pub column: String,
    /// The path the table's files hold the column by, where it is not `column` (Delta
    /// column mapping's physical names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_in_file: Option<String>,
    /// (file, row group) entries, all groups together.
    pub entries: usize,
    /// Indexed files that have the column.
    pub files_with_column: usize,
    /// Its groups: entries of one filter size.
    pub groups: Vec<GroupCoverage>,
}

/// One group of a [`ColumnCoverage`].
#[derive(Debug, Clone, Serialize)]
pub struct GroupCoverage {
    /// Bytes the group takes in the index.
    pub bytes: u64,
    /// Entries in the group.
    pub entries: usize,
    /// Bytes of each entry's filter.
    pub filter_bytes: u64,
    /// Entries folded to this size from a larger filter.
    pub folded: usize,
    /// The largest FPP an entry of the group has, estimated from its bits.
    pub max_fpp: f64,
}

impl Coverage {
    /// The coverage of `loaded` (the index at `index`) over the table as `listing` lists it.
    pub fn of(index: String, loaded: &WholeIndex, listing: &[Listed]) -> Coverage {
        let d: &Directory = &loaded.directory;
        let by_path = d.by_path();
        let (mut covered, mut stale, mut missing) = (0, Vec::new(), Vec::new());
        for l in listing {
            match by_path.get(l.rel.as_str()) {
                Some(&i) if is_fresh(&d.files[i], l) => covered += 1,
                // Recorded unreadable and listed as it was (a link to nothing): counted in
                // `unreadable`, not as changed.
                Some(&i)
                    if d.files[i].row_counts.is_none()
                        && d.files[i].stamp == l.stamp
                        && d.files[i].size == l.size => {}
                Some(_) => stale.push(l.rel.clone()),
                None => missing.push(l.rel.clone()),
            }
        }
        let listed: HashSet<&str> = listing.iter().map(|l| l.rel.as_str()).collect();
        let gone = d
            .files
            .iter()
            .map(|f| f.path.clone())
            .filter(|p| !listed.contains(p.as_str()))
            .collect();
        let names = d.table.as_ref().and_then(format::TableAt::table_names);
        let columns = d
            .columns
            .iter()
            .map(|c| (c, by_table_name(names.as_ref(), &c.path)))
            .map(|(c, (column, column_in_file))| ColumnCoverage {
                column,
                column_in_file,
                entries: c.groups.iter().map(|g| g.entries.len()).sum(),
                files_with_column: c.file_types.iter().filter(|t| t.is_some()).count(),
                groups: c
                    .groups
                    .iter()
                    .map(|g| GroupCoverage {
                        bytes: g.len,
                        entries: g.entries.len(),
                        filter_bytes: g.blocks as u64 * 32,
                        folded: g.entries.iter().filter(|e| e.folds > 0).count(),
                        max_fpp: g.max_fpp(),
                    })
                    .collect(),
            })
            .collect();
        Coverage {
            bytes: loaded.len,
            columns,
            covered,
            created_ms: d.created_ms,
            files_indexed: d.files.len(),
            gone,
            index,
            missing,
            stale,
            table_version: d.table.as_ref().map(|t| t.version),
            target_fpp: d.target_fpp,
            unreadable: d.files.iter().filter(|f| f.row_counts.is_none()).count(),
        }
    }
}

/// What a build or update did. Fields are declared in sorted order (the JSON report's).
#[derive(Debug, Clone, Default, Serialize)]
pub struct BuildReport {
    /// Column chunks whose filter could not be built (left not covered), with the reason.
    pub build_failed: Vec<(String, String)>,
    /// Bytes read of the table's files (summed over files).
    pub bytes_read: u64,
    /// Per column: entries, groups.
    pub columns: Vec<ColumnReport>,
    /// Bytes of column chunks' pages read to build filters (included in `bytes_read`).
    pub data_bytes: u64,
    /// Requests made to read column chunks' pages to build filters (included in
    /// `requests`).
    pub data_requests: u64,
    /// Files that could not be read, with the reason (they are always probed directly).
    pub failed: Vec<(String, String)>,
    /// Files in the table (the listing).
    pub files: usize,
    /// Files the old index had that are gone (update).
    pub files_gone: usize,
    /// Files whose entries were kept from the old index (update).
    pub files_kept: usize,
    /// Files whose footers and filters were read.
    pub files_read: usize,
    /// Filters built from data (`--build-missing`, `--tighten`).
    pub filters_built: usize,
    /// Of those, the ones that replaced a file's filter looser than the target (`--tighten`).
    pub filters_tightened: usize,
    /// Where the index was written.
    pub index: String,
    /// Bytes of the index written.
    pub index_bytes: u64,
    /// Local files changed less than 2 s before the listing, and objects listed without an ETag:
    /// not covered, since a change within the clock's tick would not show (`update` reads
    /// them again).
    pub racy: usize,
    /// Requests made to read the table's files (summed over files).
    pub requests: u64,
    /// The Delta version or Iceberg snapshot id the index now covers, when the root is a
    /// table read as its snapshot.
    pub table_version: Option<i64>,
}

/// A column's path as a report shows it: the table's name for it (by `names`, how the
/// table's files name its columns), and the files' path beside it where the two differ.
pub(crate) fn by_table_name(
    names: Option<&sbbf_lake::TableNames>,
    path: &str,
) -> (String, Option<String>) {
    match names.and_then(|n| n.table_column(path)) {
        Some(table) => (table, Some(path.to_string())),
        None => (path.to_string(), None),
    }
}

/// One column of a [`BuildReport`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct ColumnReport {
    /// The column's path (a table's: by the table's name).
    pub column: String,
    /// The path the table's files hold the column by, where it is not `column` (Delta
    /// column mapping's physical names).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_in_file: Option<String>,
    /// (file, row group) entries with a filter.
    pub entries: usize,
    /// Entries folded to a smaller size.
    pub folded: usize,
    /// Per group: blocks, entries, bytes, largest FPP.
    pub groups: Vec<GroupReport>,
}

/// One group of a [`ColumnReport`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupReport {
    /// Blocks (32 bytes each) of every entry.
    pub blocks: u32,
    /// Bytes of the group's section.
    pub bytes: u64,
    /// Entries.
    pub entries: usize,
    /// The largest estimated FPP of an entry.
    pub max_fpp: f64,
}

/// What `sbbf index merge` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MergeReport {
    /// Per column of the merged index: entries, groups.
    pub columns: Vec<ColumnReport>,
    /// Listed files the merged index covers.
    pub files_covered: usize,
    /// Files of the parts no longer listed (dropped).
    pub files_gone: usize,
    /// Files in the table (the listing).
    pub files_listed: usize,
    /// Listed files no part was given (left out: probed directly until `sbbf index update`).
    pub files_missing: usize,
    /// Files a part could not read, or saw modified just before its listing (left out).
    pub files_not_covered: usize,
    /// Files changed since their part was built (left out).
    pub files_stale: usize,
    /// Where the index was written.
    pub index: String,
    /// Bytes of the merged index.
    pub index_bytes: u64,
    /// Bytes of the parts read.
    pub part_bytes: u64,
    /// Parts merged.
    pub parts: usize,
}

/// `sbbf index merge --format json`: the merge's report and its wall time.
#[derive(Debug, Clone, Serialize)]
pub struct MergeLine<'a> {
    /// What the merge did.
    #[serde(flatten)]
    pub report: &'a MergeReport,
    /// Wall time of the whole command.
    pub elapsed_ms: f64,
}

/// `sbbf index build/update --format json`: the build's report and its wall time.
#[derive(Debug, Clone, Serialize)]
pub struct BuildLine<'a> {
    /// What the build did.
    #[serde(flatten)]
    pub report: &'a BuildReport,
    /// Wall time of the whole command.
    pub elapsed_ms: f64,
}

/// `sbbf probe --stats --format json` on a table root: what the index did, on standard error.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeStatsLine {
    /// The index's part of the probe.
    pub index: IndexStatsLine,
}

/// The figures of a [`ProbeStatsLine`].
#[derive(Debug, Clone, Serialize)]
pub struct IndexStatsLine {
    /// Files probed directly.
    pub direct: usize,
    /// The direct probes' reads.
    pub direct_reads: DirectReads,
    /// Wall time of the whole probe.
    pub elapsed_ms: f64,
    /// Files listed.
    pub files: usize,
    /// Files the index answered.
    pub from_index: usize,
    /// The table version the index was built from (Delta version, Iceberg snapshot id).
    pub index_version: Option<i64>,
    /// When the Delta version read was read as the commits since the index's version (not as
    /// its snapshot): how many commits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits_since: Option<u64>,
    /// Reads of the index itself.
    pub index_reads: crate::table::ReadStats,
    /// The listing.
    pub listing: crate::table::ReadStats,
    /// Files the index says may hold a value.
    pub maybe: usize,
    /// Files new since the build.
    pub new: usize,
    /// Files the index does not cover for the column.
    pub not_covered: usize,
    /// Files changed since the build.
    pub stale: usize,
    /// Whether an index was used.
    pub used: bool,
    /// Sequential waves in all.
    pub waves: u64,
}

/// Requests, bytes and waves of the direct probes.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DirectReads {
    /// Bytes read.
    pub bytes: u64,
    /// Requests made.
    pub requests: u64,
    /// Sequential waves.
    pub waves: u64,
}

impl IndexStatsLine {
    /// The figures of `stats`, with the direct probes' reads and the probe's wall time.
    pub fn new(
        stats: &crate::probe::IndexStats,
        direct: &sbbf_parquet::IoStats,
        elapsed: std::time::Duration,
    ) -> IndexStatsLine {
        IndexStatsLine {
            direct: stats.direct,
            direct_reads: DirectReads {
                bytes: direct.bytes,
                requests: direct.requests,
                waves: direct.waves,
            },
            elapsed_ms: elapsed.as_secs_f64() * 1000.0,
            files: stats.files,
            from_index: stats.from_index,
            index_version: stats.index_version,
            commits_since: stats.commits_since,
            index_reads: stats.index,
            listing: stats.listing,
            maybe: stats.maybe,
            new: stats.new,
            not_covered: stats.not_covered,
            stale: stats.stale,
            used: stats.used,
            waves: stats.waves_before_direct + direct.waves,
        }
    }
}
