//! Building and updating an index: footers and filters only, never data pages.
//!
//! `build` reads every file; `update` reads only files that are new or changed since the
//! index was written (the rest keep their entries' bytes, taken from the old index) and
//! drops files that are gone.

use crate::format::{self, ColumnEntry, Directory, Entry, FileEntry, Group, Stamp, HEADER_LEN};
use crate::table::{is_fresh, write_all, Listed, Root};
use crate::Error;
use futures::{FutureExt, StreamExt};
use sbbf::Sbbf;
use sbbf_parquet::column::ColumnType;
use sbbf_parquet::source::{SourceFile, SourceOptions, DEFAULT_CONCURRENCY};
use sbbf_parquet::IoPolicy;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::Arc;

/// What to index.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Columns by dotted path; empty: every column that has a filter in some file.
    pub columns: Vec<String>,
    /// Fold filters down while their estimated FPP stays at or below this (`None`: keep every
    /// filter at its own size, so the index answers exactly as the files do).
    pub fpp: Option<f64>,
    /// Files read at once.
    pub concurrency: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            columns: Vec::new(),
            fpp: None,
            concurrency: DEFAULT_CONCURRENCY,
        }
    }
}

/// What a build or update did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct BuildReport {
    /// Where the index was written.
    pub index: String,
    /// Files in the table (the listing).
    pub files: usize,
    /// Files whose footers and filters were read.
    pub files_read: usize,
    /// Files whose entries were kept from the old index (update).
    pub files_kept: usize,
    /// Files the old index had that are gone (update).
    pub files_gone: usize,
    /// Files that could not be read, with the reason (they are always probed directly).
    pub failed: Vec<(String, String)>,
    /// Local files modified less than 2 s before the listing: not covered, since a change
    /// within the file system's clock tick would not show (`update` reads them again).
    pub racy: usize,
    /// Requests, bytes and waves (summed over files) of reading the table's files.
    pub requests: u64,
    /// See `requests`.
    pub bytes_read: u64,
    /// Bytes of the index written.
    pub index_bytes: u64,
    /// Per column: entries, groups.
    pub columns: Vec<ColumnReport>,
}

/// One column of a [`BuildReport`].
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ColumnReport {
    /// The column's path.
    pub column: String,
    /// (file, row group) entries with a filter.
    pub entries: usize,
    /// Entries folded to a smaller size.
    pub folded: usize,
    /// Per group: blocks, entries, bytes, largest FPP.
    pub groups: Vec<GroupReport>,
}

/// One group of a [`ColumnReport`].
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GroupReport {
    /// Blocks (32 bytes each) of every entry.
    pub blocks: u32,
    /// Entries.
    pub entries: usize,
    /// Bytes of the group's section.
    pub bytes: u64,
    /// The largest estimated FPP of an entry.
    pub max_fpp: f64,
}

/// Per row group, a filter's bitset and how many times it was folded, if it has one.
type RowGroupFilters = Vec<Option<(Vec<u8>, u8)>>;

/// What one file gave: its row counts, and per column its type and per row group the filter
/// (bitset, times folded), if any.
struct Gathered {
    row_counts: Vec<i64>,
    columns: Vec<(ColumnType, RowGroupFilters)>,
}

/// Builds the index of the table at `root` from every file.
pub async fn build(root: &Root, options: &BuildOptions) -> Result<BuildReport, Error> {
    check_fpp(options.fpp)?;
    let listed_at = now_ns();
    let listing = root.list().await?;
    assemble(root, listing, listed_at, None, options).await
}

/// Updates the index at `root`: reads only new and changed files, keeps the others' entries,
/// drops the gone ones. The columns and FPP target are the old index's. Without a usable old
/// index it builds (`rebuilt` says why).
pub async fn update(
    root: &Root,
    concurrency: usize,
) -> Result<(BuildReport, Option<String>), Error> {
    let listed_at = now_ns();
    let (listing, old) = futures::future::join(root.list(), root.load_whole()).await;
    let listing = listing?;
    let old = match old {
        Ok(Some((loaded, bytes))) => Some((loaded.directory, bytes)),
        Ok(None) => return Err(Error::NoIndex(root.index_location())),
        Err(e) => {
            let why = e.to_string();
            let r = assemble(
                root,
                listing,
                listed_at,
                None,
                &BuildOptions {
                    concurrency,
                    ..BuildOptions::default()
                },
            )
            .await?;
            return Ok((r, Some(why)));
        }
    };
    let options = old
        .as_ref()
        .map(|(d, _)| BuildOptions {
            columns: if d.explicit_columns {
                d.columns.iter().map(|c| c.path.clone()).collect()
            } else {
                Vec::new()
            },
            fpp: d.target_fpp,
            concurrency,
        })
        .unwrap_or_default();
    Ok((
        assemble(root, listing, listed_at, old, &options).await?,
        None,
    ))
}

fn check_fpp(fpp: Option<f64>) -> Result<(), Error> {
    match fpp {
        Some(p) if !(p > 0.0 && p < 1.0) => Err(Error::Invalid(format!(
            "--fpp {p}: a false-positive probability is between 0 and 1"
        ))),
        _ => Ok(()),
    }
}

/// Reads what it must, then writes the index.
async fn assemble(
    root: &Root,
    listing: Vec<Listed>,
    listed_at: i64,
    old: Option<(Directory, bytes::Bytes)>,
    options: &BuildOptions,
) -> Result<BuildReport, Error> {
    let mut report = BuildReport {
        index: root.index_location(),
        files: listing.len(),
        ..BuildReport::default()
    };
    // Which listed files the old index still describes.
    let mut kept: HashMap<usize, usize> = HashMap::new();
    if let Some((d, _)) = &old {
        let by_path: HashMap<&str, usize> = d
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.as_str(), i))
            .collect();
        for (li, l) in listing.iter().enumerate() {
            if let Some(&fi) = by_path.get(l.rel.as_str()) {
                if is_fresh(&d.files[fi], l) && d.files[fi].row_counts.is_some() {
                    kept.insert(li, fi);
                }
            }
        }
        let listed: std::collections::HashSet<&str> =
            listing.iter().map(|l| l.rel.as_str()).collect();
        report.files_gone = d
            .files
            .iter()
            .filter(|f| !listed.contains(f.path.as_str()))
            .count();
    }
    report.files_kept = kept.len();

    // Read the other files: footers, then the filters of the chosen columns.
    let to_read: Vec<usize> = (0..listing.len())
        .filter(|i| !kept.contains_key(i))
        .collect();
    let source = root.source(
        to_read.iter().map(|&i| &listing[i]),
        SourceOptions {
            concurrency: options.concurrency.max(1),
            ..SourceOptions::default()
        },
    );
    let policy = source.policy();
    let wanted: Arc<Vec<String>> = Arc::new(options.columns.clone());
    let fpp = options.fpp;
    let mut results = source.run(move |pq| {
        let wanted = Arc::clone(&wanted);
        async move { Ok(gather(pq, &wanted, fpp, policy).await) }.boxed()
    });
    let mut gathered: Vec<Option<Result<Gathered, String>>> =
        (0..listing.len()).map(|_| None).collect();
    let mut k = 0;
    while let Some((_, r)) = results.next().await {
        let li = to_read[k];
        k += 1;
        report.files_read += 1;
        gathered[li] = Some(match r {
            Ok((g, io)) => {
                report.requests += io.requests;
                report.bytes_read += io.bytes;
                Ok(g)
            }
            Err(e) => Err(e.to_string()),
        });
    }

    // The old index's entries of kept files, by file: their bitsets, as stored.
    if let Some((d, bytes)) = &old {
        let mut per_file: HashMap<usize, Gathered> = HashMap::new();
        let kept_files: HashMap<usize, usize> = kept.iter().map(|(l, f)| (*f, *l)).collect();
        for &fi in kept_files.keys() {
            per_file.insert(
                fi,
                Gathered {
                    row_counts: d.files[fi].row_counts.clone().unwrap_or_default(),
                    columns: Vec::new(),
                },
            );
        }
        for c in &d.columns {
            let mut of_file: HashMap<usize, RowGroupFilters> = HashMap::new();
            for (fi, t) in c.file_types.iter().enumerate() {
                if t.is_some() && kept_files.contains_key(&fi) {
                    let n = d.files[fi].row_counts.as_ref().map_or(0, Vec::len);
                    of_file.insert(fi, vec![None; n]);
                }
            }
            for g in &c.groups {
                for (e, entry) in g.entries.iter().enumerate() {
                    if let Some(rgs) = of_file.get_mut(&(entry.file as usize)) {
                        let bits = extract(bytes, g, e);
                        if let Some(slot) = rgs.get_mut(entry.row_group as usize) {
                            *slot = Some((bits, entry.folds));
                        }
                    }
                }
            }
            for (fi, rgs) in of_file {
                if let (Some(g), Some(Some(t))) = (per_file.get_mut(&fi), c.file_types.get(fi)) {
                    if let Some(ty) = d.types.get(*t as usize) {
                        g.columns.push((ty.clone(), rgs));
                    }
                }
            }
        }
        for (fi, g) in per_file {
            gathered[kept_files[&fi]] = Some(Ok(g));
        }
    }

    // The directory: files, types, and per column its entries.
    let mut files = Vec::with_capacity(listing.len());
    let mut types: Vec<ColumnType> = Vec::new();
    let mut type_ids: HashMap<ColumnTypeKey, u32> = HashMap::new();
    // Column path -> per file type, and entries (file, rg, folds, bits).
    type Col = (BTreeMap<usize, u32>, Vec<(usize, usize, u8, Vec<u8>)>);
    let mut cols: BTreeMap<String, Col> = BTreeMap::new();
    let explicit = !options.columns.is_empty();
    // Listing order is path order already; the index keeps files sorted by relative path.
    let mut order: Vec<usize> = (0..listing.len()).collect();
    order.sort_by(|&a, &b| listing[a].rel.cmp(&listing[b].rel));
    order.dedup_by(|a, b| listing[*a].rel == listing[*b].rel);
    for &li in &order {
        let l = &listing[li];
        let fi = files.len();
        let g = gathered[li].take();
        // A local file modified shortly before the listing may be modified again within the
        // same tick of the file system's clock (coarse: milliseconds, FAT 2 s) without its
        // time changing: such a change would be invisible, so the file is not covered (the
        // next update reads it again).
        let racy = !kept.contains_key(&li)
            && matches!(l.stamp, Stamp::Mtime(t) if t > listed_at.saturating_sub(RACY_NS));
        if racy && matches!(g, Some(Ok(_))) {
            report.racy += 1;
        }
        let row_counts = match &g {
            Some(Ok(_)) if racy => None,
            Some(Ok(g)) => Some(g.row_counts.clone()),
            Some(Err(e)) => {
                report.failed.push((l.name.clone(), e.clone()));
                None
            }
            None => None,
        };
        files.push(FileEntry {
            path: l.rel.clone(),
            size: l.size,
            stamp: l.stamp.clone(),
            row_counts,
        });
        let Some(Ok(g)) = g else { continue };
        if racy {
            continue;
        }
        for (ty, rgs) in g.columns {
            let key = ColumnTypeKey::of(&ty);
            let next = types.len() as u32;
            let t = *type_ids.entry(key).or_insert_with(|| {
                types.push(ty.clone());
                next
            });
            let col = cols.entry(ty.path.clone()).or_default();
            col.0.insert(fi, t);
            for (rg, f) in rgs.into_iter().enumerate() {
                if let Some((bits, folds)) = f {
                    col.1.push((fi, rg, folds, bits));
                }
            }
        }
    }
    // Write: header, groups, directory, trailer.
    let tmp = root.temp_file()?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file());
    let io = |source| Error::Io {
        what: "writing the index".into(),
        source,
    };
    w.write_all(&format::header()).map_err(io)?;
    let mut at = HEADER_LEN;
    let mut columns = Vec::with_capacity(cols.len());
    for (path, (file_types, mut entries)) in cols {
        entries.sort_by_key(|e| (e.3.len(), e.0, e.1));
        let mut groups = Vec::new();
        let mut rep = ColumnReport {
            column: path.clone(),
            entries: entries.len(),
            ..ColumnReport::default()
        };
        let mut start = 0;
        while start < entries.len() {
            let size = entries[start].3.len();
            let end = start
                + entries[start..]
                    .iter()
                    .take_while(|e| e.3.len() == size)
                    .count();
            let members = &entries[start..end];
            let blocks = size / 32;
            let mut crc = crc32fast::Hasher::new();
            let mut stripe = vec![0u8; 32 * members.len()];
            for j in 0..blocks {
                for (e, m) in members.iter().enumerate() {
                    stripe[e * 32..e * 32 + 32].copy_from_slice(&m.3[j * 32..j * 32 + 32]);
                }
                let sc = crc32fast::hash(&stripe);
                write_all(&mut w, &mut crc, &stripe).map_err(io)?;
                write_all(&mut w, &mut crc, &sc.to_le_bytes()).map_err(io)?;
            }
            let len = blocks as u64 * (32 * members.len() as u64 + 4);
            let group = Group {
                blocks: blocks as u32,
                entries: members
                    .iter()
                    .map(|m| Entry {
                        file: m.0 as u32,
                        row_group: m.1 as u32,
                        folds: m.2,
                        fpp: sbbf::SbbfRef::new(&m.3)
                            .map(|v| v.estimated_fpp() as f32)
                            .unwrap_or(1.0),
                    })
                    .collect(),
                offset: at,
                len,
                crc: crc.finalize(),
            };
            rep.folded += members.iter().filter(|m| m.2 > 0).count();
            rep.groups.push(GroupReport {
                blocks: group.blocks,
                entries: members.len(),
                bytes: len,
                max_fpp: group.max_fpp(),
            });
            at += len;
            groups.push(group);
            start = end;
        }
        report.columns.push(rep);
        columns.push(ColumnEntry {
            path,
            file_types: (0..files.len())
                .map(|f| file_types.get(&f).copied())
                .collect(),
            groups,
        });
    }
    let directory = Directory {
        created_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
        root: match root {
            Root::Local { arg, .. } => arg.clone(),
            Root::Store { url, .. } => url.clone(),
        },
        target_fpp: options.fpp,
        explicit_columns: explicit,
        files,
        types,
        columns,
    };
    let dir = format::encode_directory(&directory);
    w.write_all(&dir).map_err(io)?;
    w.write_all(&format::trailer(
        at,
        dir.len() as u64,
        crc32fast::hash(&dir),
    ))
    .map_err(io)?;
    w.flush().map_err(io)?;
    drop(w);
    let len = at + dir.len() as u64 + format::TRAILER_LEN;
    report.index_bytes = len;
    root.commit(tmp, len).await?;
    Ok(report)
}

/// How recent a modification time must be (before the listing) for the file not to be
/// covered: 2 s, the coarsest clock of a common file system.
const RACY_NS: i64 = 2_000_000_000;

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Entry `e`'s bitset, gathered from the stripes of group `g` in the index bytes `all`
/// (checked whole by the caller).
fn extract(all: &[u8], g: &Group, e: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(g.blocks as usize * 32);
    for j in 0..g.blocks as u64 {
        let s = g.stripe(j);
        let at = s.start as usize + e * 32;
        out.extend_from_slice(&all[at..at + 32]);
    }
    out
}

/// Types are shared between files when every field agrees.
#[derive(Hash, PartialEq, Eq)]
struct ColumnTypeKey(String);

impl ColumnTypeKey {
    fn of(t: &ColumnType) -> ColumnTypeKey {
        ColumnTypeKey(format!("{t:?}"))
    }
}

/// Reads one file's filters of the wanted columns (every column with a filter when none is
/// named), folding them to `fpp` when given.
async fn gather(
    mut pq: SourceFile,
    wanted: &[String],
    fpp: Option<f64>,
    policy: IoPolicy,
) -> (Gathered, sbbf_parquet::IoStats) {
    let row_counts: Vec<i64> = pq
        .metadata()
        .row_groups()
        .iter()
        .map(|r| r.num_rows())
        .collect();
    let cols: Vec<usize> = if wanted.is_empty() {
        (0..pq.columns().len())
            .filter(|&c| pq.filter_locations(c).iter().any(|l| l.offset.is_some()))
            .collect()
    } else {
        let mut v: Vec<usize> = wanted
            .iter()
            .filter_map(|w| pq.column_index(w).ok())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut columns = Vec::with_capacity(cols.len());
    for c in cols {
        let ty = pq.columns()[c].clone();
        let spans = pq.read_filters_async(c, policy).await;
        let rgs = spans
            .into_iter()
            .map(|s| {
                let span = s.ok()?;
                let mut bits = span.bitset.to_vec();
                let mut folds = 0u8;
                if let Some(p) = fpp {
                    let mut f = Sbbf::from_bitset(&bits).ok()?;
                    folds = f.fold_to_target_fpp(p).ok()?.min(30) as u8;
                    if folds > 0 {
                        bits = f.as_bytes().to_vec();
                    }
                }
                // A bitset the filter crate would refuse is no entry (the file is then probed
                // directly, and says why).
                sbbf::SbbfRef::new(&bits).ok()?;
                Some((bits, folds))
            })
            .collect();
        columns.push((ty, rgs));
    }
    let io = pq.io_stats();
    (
        Gathered {
            row_counts,
            columns,
        },
        io,
    )
}
