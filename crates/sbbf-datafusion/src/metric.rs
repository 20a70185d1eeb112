//! Names of the metrics the scan shows in `EXPLAIN ANALYZE` (on its `DataSourceExec`).

/// Row groups skipped because our filters prove the predicate false for them.
pub const PRUNED: &str = "row_groups_pruned_sbbf";
/// Row groups whose filters were consulted (every row group of every file tested).
pub const TESTED: &str = "row_groups_tested_sbbf";
/// Read requests made for filter bytes.
pub const REQUESTS: &str = "sbbf_requests";
/// Filter bytes read.
pub const BYTES: &str = "sbbf_bytes";
/// Files whose filters could not be used (unreadable metadata or filters): all their row
/// groups were kept.
pub const FILE_ERRORS: &str = "sbbf_file_errors";
/// Row groups skipped by a join's keys (the join filters DataFusion pushes into the scan
/// while the query runs); also counted in [`PRUNED`].
pub const PRUNED_DYNAMIC: &str = "row_groups_pruned_sbbf_join";
/// Files whose filters were probed for a join's keys when the file was opened.
pub const DYNAMIC_FILES: &str = "sbbf_join_files";
/// Files opened while a join filter pushed into the scan was not yet complete (its
/// state then was used, which is sound; DataFusion 55's hash join finishes its filter
/// before it reads the probe side, so this stays 0 for hash joins).
pub const DYNAMIC_INCOMPLETE: &str = "sbbf_join_filters_incomplete";
/// The most keys a join filter brought to one column's filters (a gauge: the K of the
/// survival bound `1 - (1 - p)^K`).
pub const JOIN_KEYS: &str = "sbbf_join_keys";
/// How many times a join's key set was coerced to a column type and hashed: once per
/// update of the join filter and column type, whatever the number of files and
/// partitions of the scan.
pub const KEY_SETS_HASHED: &str = "sbbf_key_sets_hashed";
/// Files the table's index ruled out for a join's keys: dropped when the scan came to
/// them, before their filters were read (DataFusion read their footers while planning;
/// their row groups count in [`PRUNED`] and [`PRUNED_DYNAMIC`]).
pub const JOIN_FILES_PRUNED_INDEX: &str = "sbbf_join_files_pruned_index";
/// Files whose filters a join step left unread: judged from their sizes, the row groups'
/// values and the bytes the scan reads of them, reading the filters would cost more bytes
/// than the row groups they are expected to rule out for that many keys.
pub const JOIN_FILES_UNPROBED: &str = "sbbf_join_files_unprobed";
/// A marker (always 0) on the scans of a named table ([`crate::SbbfTable::with_name`]),
/// labelled [`TABLE_LABEL`]`=name`.
pub const TABLE: &str = "sbbf_table";
/// The label of [`TABLE`] that holds the table's name.
pub const TABLE_LABEL: &str = "table";
/// Row groups of the files handed to the scan (after the listing's partition pruning),
/// counted once each when the scan is planned.
pub const ROW_GROUPS: &str = "sbbf_row_groups";
/// Row groups skipped by min/max statistics before our filters are read (DataFusion's
/// own statistics pruning, run first so those row groups cost no filter read).
pub const PRUNED_STATISTICS: &str = "row_groups_pruned_statistics_sbbf";
/// Files left out of the scan because none of their row groups can match (never
/// opened by DataFusion).
pub const FILES_PRUNED: &str = "sbbf_files_pruned";
/// Files of a lake table whose snapshot's statistics (Delta `stats`, Iceberg manifest bounds)
/// rule the scan's filters out: left out of the scan, their footers never read.
pub const FILES_PRUNED_TABLE_STATS: &str = "sbbf_files_pruned_table_stats";
/// Files the table's index ruled out: left out of the listing, their footers never read.
pub const FILES_PRUNED_INDEX: &str = "sbbf_files_pruned_index";
/// The row groups of those files (as the index recorded them).
pub const PRUNED_INDEX: &str = "row_groups_pruned_index";
