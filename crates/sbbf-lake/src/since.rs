//! What the log after a version says, for a reader that keeps what version V held (an index
//! built from it): the data files added and removed since, or why it must read the snapshot
//! instead. A Delta table's commits after V are read by `delta::since`, an Iceberg table's
//! manifests added since a snapshot by `iceberg::since`.

use std::collections::HashSet;

/// The most commits followed: past this many, the snapshot (a checkpoint and the commits
/// after it) is read instead. All of them are asked for at once, in one round trip.
pub const MAX_COMMITS: usize = 64;

/// What identifies a Delta commit's log entry: its size and the store's ETag for it (a local
/// file's ETag is made of its inode, modification time and size). A log deleted and written
/// again holds other entries under the same names, with other tags.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommitMark {
    /// Bytes of the entry.
    pub size: u64,
    /// The store's ETag of it.
    pub etag: String,
}

/// What the commits after a version say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogTail {
    /// The version the commits follow.
    pub since: i64,
    /// The version they lead to.
    pub version: i64,
    /// When `version` was committed (ms since the epoch): its in-commit timestamp, else its
    /// log entry's modification time, as the kernel says it.
    pub timestamp_ms: Option<i64>,
    /// Commits read (`version - since`); for Iceberg, manifests read.
    pub commits: usize,
    /// Data files added since and still in the table at `version`: (URL, size), in the order
    /// the log adds them.
    pub added: Vec<(String, u64)>,
    /// Data files removed since (URLs): in the table at `since`, gone at `version` unless
    /// `added` has them again.
    pub removed: HashSet<String>,
    /// Sequential round trips it took after finding the table: the log's listing (when what
    /// finding it listed did not hold it all), then the commits (when there are any); for
    /// Iceberg the metadata, manifest list and new manifests.
    pub waves: u64,
    /// The table's column names at `version`, when reading learnt them (Iceberg: its
    /// metadata; a Delta commit that would change them sends the reader to the snapshot).
    pub names: Option<crate::TableNames>,
}

/// The log after a version, or why the snapshot must be read instead.
#[derive(Debug, Clone, PartialEq)]
pub enum Tail {
    /// The commits since.
    Read(LogTail),
    /// The snapshot must be read: why.
    Snapshot(String),
}

/// What a reader already holds of one Iceberg snapshot (an index built from it): given to
/// [`crate::Table::open_known`], it spares the store the snapshot's manifest list and
/// manifests when the table's current snapshot is this one, and its metadata file is asked
/// for beside the folder's listing instead of after it.
///
/// It is taken only when it can be exact: the snapshot id and its manifest list are the
/// ones the table's metadata names (both are written once and never changed), that list
/// named no delete manifest, and no partition spec of the table has a field (`files` carry
/// no partition tuple). Else the snapshot is read as without it.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownSnapshot {
    /// The metadata file the snapshot was read from, as a URL.
    pub metadata: Option<String>,
    /// The snapshot id.
    pub version: i64,
    /// Its manifest list, as the metadata file names it.
    pub manifest_list: String,
    /// Its data manifests.
    pub data_manifests: Vec<String>,
    /// Every data file of it: location, size and rows (no partition tuple, no bounds).
    pub files: Vec<crate::DataFile>,
}

/// A [`KnownSnapshot`] on its way (the index's read, beside finding the table), awaited by
/// whichever reader needs it first.
pub(crate) type KnownLater = futures::future::Shared<
    futures::future::BoxFuture<'static, Option<std::sync::Arc<KnownSnapshot>>>,
>;
