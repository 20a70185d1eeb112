//! Which delete files apply to which data files (spec "Scan Planning"), by data sequence
//! number, partition and `referenced_data_file`. Deletes are counted (to report them and
//! refuse what cannot be applied), and position delete files are listed per data file for
//! `positions` to read; where the rules cannot be decided (an unknown spec, an unknown
//! sequence number) a delete is taken as applying.

use super::equality::EqualityFile;
use super::manifest::Entry;
use super::metadata::Spec;
use crate::{bounds, DataFile, Deletes, LakeColumn};
use std::collections::HashMap;
use std::sync::Arc;

/// An Iceberg location (a data or delete file's `file_path`) as a URL. Iceberg locations are
/// used as written, not percent-decoded: Java's and pyiceberg's file IO write a partition
/// folder `p=x%2Fy` as those very characters on disk and in an object key. So `%`, `?` and `#`
/// are escaped here, and reading the URL back (a local path, a store path) gives the
/// location's own characters. An absolute local path is already read as written.
pub(crate) fn location_url(location: &str) -> String {
    if location.starts_with('/') || !location.contains(['%', '?', '#']) {
        return location.to_string();
    }
    let mut out = String::with_capacity(location.len() + 8);
    for c in location.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3F"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// A partition as deletes are matched on: the spec id and the values' text.
type PartitionKey = (Option<i32>, Vec<Option<String>>);

fn key(e: &Entry) -> PartitionKey {
    (
        e.spec_id,
        e.partition.iter().map(|(_, v)| v.clone()).collect(),
    )
}

/// Sequence numbers, sorted, to count those above a data file's quickly.
#[derive(Default)]
struct Seqs(Vec<i64>);

impl Seqs {
    /// How many are at least `seq` (`strict`: above it).
    fn from(&self, seq: i64, strict: bool) -> u32 {
        let start = self
            .0
            .partition_point(|&s| if strict { s <= seq } else { s < seq });
        u32::try_from(self.0.len() - start).unwrap_or(u32::MAX)
    }
}

/// The deletes of a snapshot, indexed for matching.
#[derive(Default)]
struct Index {
    /// Deletion vectors by the data file they reference: (sequence number, deleted rows).
    vectors: HashMap<String, Vec<(i64, u64)>>,
    /// Position delete files that name their one data file.
    position_by_file: HashMap<String, Seqs>,
    /// Position delete files for a whole partition.
    position_by_partition: HashMap<PartitionKey, Seqs>,
    /// Equality delete files of a partition.
    equality_by_partition: HashMap<PartitionKey, Seqs>,
    /// Equality delete files of an unpartitioned spec: they apply to every partition.
    equality_global: Seqs,
    /// Position delete files by the data file they name, and by partition: (sequence
    /// number, path).
    position_paths_by_file: HashMap<String, Vec<(i64, String)>>,
    position_paths_by_partition: HashMap<PartitionKey, Vec<(i64, String)>>,
    /// Equality delete files by partition, and global: (sequence number, file).
    equality_files_by_partition: HashMap<PartitionKey, Vec<(i64, Arc<EqualityFile>)>>,
    equality_files_global: Vec<(i64, Arc<EqualityFile>)>,
}

/// What planning gives: the data files, and by data file URL the position delete files and
/// the equality delete files that apply to it.
pub(super) struct Planned {
    pub files: Vec<DataFile>,
    pub positions: HashMap<String, Vec<String>>,
    pub equalities: HashMap<String, Vec<Arc<EqualityFile>>>,
}

/// The snapshot's data files with the deletes that apply to each, in the order given.
/// `specs` tells which delete files were written unpartitioned; `columns` (the table's)
/// which field ids the manifests' bounds are of. Also the position and equality delete files
/// that may apply to each data file, by its URL.
pub(super) fn attach(
    data: Vec<Entry>,
    deletes: Vec<Entry>,
    specs: &HashMap<i32, Spec>,
    columns: &[LakeColumn],
) -> Planned {
    let mut ix = Index::default();
    for d in deletes {
        let seq = d.sequence_number;
        let is_vector = d.format.eq_ignore_ascii_case("puffin");
        match (d.content, d.referenced_data_file.clone()) {
            (1, Some(file)) if is_vector => {
                ix.vectors
                    .entry(file)
                    .or_default()
                    .push((seq, d.record_count));
            }
            (1, Some(file)) => {
                ix.position_paths_by_file
                    .entry(file.clone())
                    .or_default()
                    .push((seq, d.path.clone()));
                ix.position_by_file.entry(file).or_default().0.push(seq)
            }
            (1, None) => {
                ix.position_paths_by_partition
                    .entry(key(&d))
                    .or_default()
                    .push((seq, d.path.clone()));
                ix.position_by_partition
                    .entry(key(&d))
                    .or_default()
                    .0
                    .push(seq)
            }
            _ => {
                // An unknown spec might be unpartitioned: counted as global, to be safe.
                let global = d
                    .spec_id
                    .and_then(|id| specs.get(&id))
                    .is_none_or(Spec::is_unpartitioned);
                let file = Arc::new(EqualityFile {
                    url: location_url(&d.path),
                    ids: d.equality_ids.clone(),
                });
                match global {
                    true => {
                        ix.equality_global.0.push(seq);
                        ix.equality_files_global.push((seq, file));
                    }
                    false => {
                        ix.equality_by_partition
                            .entry(key(&d))
                            .or_default()
                            .0
                            .push(seq);
                        ix.equality_files_by_partition
                            .entry(key(&d))
                            .or_default()
                            .push((seq, file));
                    }
                }
            }
        }
    }
    fn sort<K>(m: &mut HashMap<K, Seqs>) {
        m.values_mut().for_each(|s| s.0.sort_unstable());
    }
    sort(&mut ix.position_by_file);
    sort(&mut ix.position_by_partition);
    sort(&mut ix.equality_by_partition);
    ix.equality_global.0.sort_unstable();

    let mut positions = HashMap::new();
    let mut equalities = HashMap::new();
    let files = data
        .into_iter()
        .map(|f| {
            let deletes = ix.deletes_of(&f);
            let paths: Vec<String> = ix
                .position_paths_of(&f)
                .iter()
                .map(|p| location_url(p))
                .collect();
            let url = location_url(&f.path);
            if !paths.is_empty() {
                positions.insert(url.clone(), paths);
            }
            let equal = ix.equality_files_of(&f);
            if !equal.is_empty() {
                equalities.insert(url.clone(), equal);
            }
            DataFile {
                bounds: bounds::iceberg(&f.lower_bounds, &f.upper_bounds, columns),
                url,
                size: f.size,
                rows: Some(f.record_count),
                partition: f.partition,
                deletes,
            }
        })
        .collect();
    Planned {
        files,
        positions,
        equalities,
    }
}

impl Index {
    /// The position delete files that apply to `f`: those naming it or its partition, of a
    /// sequence number at least its own.
    fn position_paths_of(&self, f: &Entry) -> Vec<String> {
        let seq = f.sequence_number;
        let named = self.position_paths_by_file.get(&f.path);
        let partition = self.position_paths_by_partition.get(&key(f));
        named
            .into_iter()
            .chain(partition)
            .flatten()
            .filter(|(s, _)| *s >= seq)
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// The equality delete files that apply to `f`: those of its partition or of an
    /// unpartitioned spec, of a sequence number above its own.
    fn equality_files_of(&self, f: &Entry) -> Vec<Arc<EqualityFile>> {
        let seq = f.sequence_number;
        self.equality_files_by_partition
            .get(&key(f))
            .into_iter()
            .flatten()
            .chain(&self.equality_files_global)
            .filter(|(s, _)| *s > seq)
            .map(|(_, file)| Arc::clone(file))
            .collect()
    }

    fn deletes_of(&self, f: &Entry) -> Deletes {
        let seq = f.sequence_number;
        let k = key(f);
        let count = |m: &HashMap<_, Seqs>, key, strict| {
            m.get(key).map_or(0, |s: &Seqs| s.from(seq, strict))
        };
        let equality = count(&self.equality_by_partition, &k, true)
            .saturating_add(self.equality_global.from(seq, true));
        // The newest vector that applies holds every earlier position delete of the file
        // (the spec requires it), so position delete files are not counted beside it.
        let vector = self
            .vectors
            .get(&f.path)
            .and_then(|v| v.iter().filter(|(s, _)| *s >= seq).max_by_key(|(s, _)| *s));
        // A vector is reported (and refused where rows are read) whatever equality deletes
        // also apply: counted as a position delete file, it would be left unread.
        if let Some(&(_, rows)) = vector {
            return Deletes::Vector { rows: Some(rows) };
        }
        let position = count(&self.position_by_partition, &k, false).saturating_add(
            self.position_by_file
                .get(&f.path)
                .map_or(0, |s| s.from(seq, false)),
        );
        match (position, equality) {
            (0, 0) => Deletes::None,
            (position, equality) => Deletes::Files { position, equality },
        }
    }
}
