//! Probing a table with its index: which files the index rules out (every row group
//! definitely lacks every value), and which must be probed directly (new, changed, not
//! covered, or possibly holding a value).
//!
//! The listing and the index's trailer and head are read at once (one wave); then the file
//! table, the sections of the columns asked about and one stripe per (group, block) the
//! values hash to, all in one wave. Only the files left are opened.

use crate::format::{self, check_stripe, Directory, Head};
use crate::table::{is_fresh, Listed, Loaded, ReadStats, Root};
use crate::{Error, IndexError};
use bytes::Bytes;
use sbbf_lake::TableVersion;
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::source::{Source, SourceOptions};
use sbbf_parquet::{Answer, Encoded, FilterState, ReadError, RowGroupAnswer};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Why a file must be probed directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// There is no usable index.
    NoIndex,
    /// The index does not know the file (added after the build).
    New,
    /// The file changed since the build (size, inode, times or ETag differ).
    Stale,
    /// The index has no filter for some row group of it for this column (no filter, an
    /// unreadable one, no such column, values that do not encode for its type).
    NotCovered,
    /// The index says these row groups may hold a value, and some of them are answered by a
    /// folded entry (coarser than the file's own filter, which may still rule them out).
    Maybe(Vec<usize>),
}

/// A file the index rules out: its answers are what a direct probe gives (every row group
/// has a filter and answers "absent" for every value).
#[derive(Debug, Clone)]
pub struct IndexAnswer {
    /// The column in this file, as the index recorded it.
    pub column: ColumnType,
    /// The values, encoded for it (shared by every file whose column has this type).
    pub encoded: Arc<[Encoded]>,
    /// One per row group.
    pub answers: Vec<RowGroupAnswer>,
}

/// What the index says of a file it answers.
#[derive(Debug, Clone)]
pub enum Ruled {
    /// Every row group definitely lacks every value.
    Absent(IndexAnswer),
    /// Some row group may hold a value, and the index holds the file's own filters for them
    /// bit for bit (not folded): its answers are exactly what a direct probe of the file gives,
    /// so the file is not read. (Where an entry was folded to a smaller size, its "maybe" is
    /// sound but coarser than the file's own filter: that file is read, see [`Why::Maybe`].)
    Answered(IndexAnswer),
    /// The file has no such column (no row of it holds a value of it), as a direct probe of a
    /// table reports it. Only said when the column path has no `.` or `\` (which a direct
    /// probe may also read as another leaf) and some other file the index covers has it.
    NoColumn,
}

/// One listed file's fate.
#[derive(Debug, Clone)]
pub enum Planned {
    /// Answered by the index.
    Index {
        /// The name a report shows.
        name: String,
        /// The answers.
        answer: Ruled,
    },
    /// To be probed directly (it is in [`ProbePlan::source`]).
    Direct {
        /// The name a report shows.
        name: String,
        /// Why.
        why: Why,
    },
}

/// What the index did for one probe.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct IndexStats {
    /// Files listed.
    pub files: usize,
    /// Files the index answered (ruled out).
    pub from_index: usize,
    /// Files left to probe directly.
    pub direct: usize,
    /// Of those: new since the build.
    pub new: usize,
    /// Changed since the build.
    pub stale: usize,
    /// Not covered by the index for this column.
    pub not_covered: usize,
    /// Possibly holding a value by the index.
    pub maybe: usize,
    /// Whether an index was used.
    pub used: bool,
    /// The listing (counted as one request and one wave: a store's listing pages are not
    /// counted by the store client).
    pub listing: ReadStats,
    /// Reads of the index: trailer and directory, then stripes. Its first read goes out with
    /// the listing, in the same wave.
    pub index: ReadStats,
    /// Sequential waves before the direct probes start: the listing's (with the index's first
    /// read beside it) plus the index's later ones.
    pub waves_before_direct: u64,
    /// The table version the index was built from (a Delta version or Iceberg snapshot id),
    /// when it records one; the files of the version read that it does not know as they are
    /// (added since) are among `new` and probed directly.
    pub index_version: Option<i64>,
    /// When a Delta table's later version was read as the commits since the index's version
    /// (not as its snapshot): how many commits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits_since: Option<u64>,
}

/// A probe of a table root, split by the index.
pub struct ProbePlan {
    /// Several files (as [`Source::is_many`] says of the same location).
    pub many: bool,
    /// Every listed file, in the order a [`Source`] of the location yields them.
    pub files: Vec<Planned>,
    /// The files to probe directly, in the same order.
    pub source: Source,
    /// The index's figures.
    pub stats: IndexStats,
    /// Why the index was ignored, when it exists but is unusable: show it once.
    pub warning: Option<String>,
    /// The table version read, when the root is a Delta or Iceberg table.
    pub table: Option<TableVersion>,
}

/// Lists the table at `root` and reads its index at once, answers what the index can for
/// `column` and the values `encode` gives per column type (as [`Source::probe`] takes them),
/// and returns the rest as a [`Source`] to probe as without an index.
pub async fn plan<F>(
    root: &Root,
    column: &str,
    encode: F,
    options: SourceOptions,
) -> Result<ProbePlan, Error>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error>,
{
    plan_loaded(root, None, column, encode, options).await
}

/// What [`Root::load`] read, handed to [`plan_loaded`] by a caller that read it beside
/// something else (a table's log).
pub type Preloaded = Result<Option<(Loaded, ReadStats)>, Error>;

/// [`plan`], with the index already read (`Some`) by the caller, in the same round trip as
/// the table's snapshot: a table's probe then needs no wave of its own for the index's head.
pub async fn plan_loaded<F>(
    root: &Root,
    preloaded: Option<Preloaded>,
    column: &str,
    encode: F,
    options: SourceOptions,
) -> Result<ProbePlan, Error>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error>,
{
    // The index's sections for the column and the values need no listing: they are asked
    // as soon as the head is known, while the listing goes on (a prefix's LIST pages, a
    // table's log), so the index costs no wave after the listing.
    let load = async {
        let loaded = match preloaded {
            Some(p) => p,
            None => root.load().await,
        };
        let Ok(Some((l, st))) = loaded else {
            return loaded.map(|_| None);
        };
        let asks = [prepare(&l.head, column, &encode)];
        let mut fetch_st = ReadStats::default();
        let fetched = fetch(root, &l, &asks, false, &mut fetch_st).await;
        let [asked] = asks;
        Ok(Some((l, st, fetched.map(|f| (f, fetch_st, asked)))))
    };
    let (listing, loaded) = futures::future::join(root.list_table(), load).await;
    let (listing, table) = listing?;
    if listing.is_empty() && table.is_none() {
        if let Root::Store { prefix, .. } = root {
            return Err(sbbf_parquet::Error::from(ReadError::NoObjects {
                location: if prefix.as_ref().is_empty() {
                    "/".to_string()
                } else {
                    prefix.to_string()
                },
            })
            .into());
        }
    }
    let mut stats = IndexStats {
        files: listing.len(),
        listing: ReadStats {
            requests: 1,
            bytes: 0,
            waves: 1,
        },
        waves_before_direct: 1,
        ..IndexStats::default()
    };
    let mut warning = None;
    let ignore = |e: &Error| format!("ignoring the index {}: {e}", root.index_location());
    let decisions: Vec<Result<Ruled, Why>> = match loaded {
        Ok(None) => listing.iter().map(|_| Err(Why::NoIndex)).collect(),
        Ok(Some((loaded, st, fetched))) => {
            stats.index.add(st);
            let answered = fetched.and_then(|(f, st, asked)| {
                decide(&f, 0, &asked, &listing)
                    .map(|d| (d, st))
                    .map_err(Error::from)
            });
            match answered {
                Ok((d, st)) => {
                    stats.index.add(st);
                    stats.used = true;
                    stats.index_version = loaded.head.table.as_ref().map(|t| t.version);
                    d
                }
                Err(e) => {
                    warning = Some(ignore(&e));
                    listing.iter().map(|_| Err(Why::NoIndex)).collect()
                }
            }
        }
        Err(e) => {
            warning = Some(ignore(&e));
            listing.iter().map(|_| Err(Why::NoIndex)).collect()
        }
    };
    // The first index read went out beside the listing.
    stats.waves_before_direct += stats.index.waves.saturating_sub(1);
    Ok(finish(
        root, &listing, decisions, stats, warning, table, options,
    ))
}

/// The plan of `listing` with each file's decision.
pub(crate) fn finish(
    root: &Root,
    listing: &[Listed],
    decisions: Vec<Result<Ruled, Why>>,
    mut stats: IndexStats,
    warning: Option<String>,
    table: Option<TableVersion>,
    options: SourceOptions,
) -> ProbePlan {
    let mut files = Vec::with_capacity(listing.len());
    let mut direct = Vec::new();
    let mut planned: Vec<(&Listed, Result<Ruled, Why>)> = listing.iter().zip(decisions).collect();
    // A table's files in the order of their names, as a probe without the index gives them
    // (the log's order, or the index's with the commits since, would differ).
    if table.is_some() {
        planned.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    }
    for (l, d) in planned {
        match d {
            Ok(answer) => {
                stats.from_index += 1;
                files.push(Planned::Index {
                    name: l.name.clone(),
                    answer,
                });
            }
            Err(why) => {
                stats.direct += 1;
                match &why {
                    Why::New => stats.new += 1,
                    Why::Stale => stats.stale += 1,
                    Why::NotCovered => stats.not_covered += 1,
                    Why::Maybe(_) => stats.maybe += 1,
                    Why::NoIndex => {}
                }
                direct.push(l);
                files.push(Planned::Direct {
                    name: l.name.clone(),
                    why,
                });
            }
        }
    }
    let many = match root {
        _ if table.is_some() => true,
        Root::Local { .. } => listing.len() > 1,
        Root::Store { .. } => true,
    };
    ProbePlan {
        many,
        source: root.source(direct, options),
        files,
        stats,
        warning,
        table,
    }
}

/// Values encoded for one type, and each one's candidate hashes.
type Hashed = (Arc<[Encoded]>, Vec<Vec<u64>>);

/// One column asked about: its values encoded for every type its files have, and the stripes
/// (group, block) their hashes pick.
pub(crate) struct Ask<'a> {
    column: &'a str,
    /// Position in the head's columns; `None`: the index does not have the column.
    at: Option<usize>,
    /// Per type number: the encoded values and each one's candidate hashes, or `None` when
    /// they do not encode for it.
    encoded: HashMap<u32, Option<Hashed>>,
    need: BTreeSet<(usize, u64)>,
}

pub(crate) fn prepare<'a, F>(head: &Head, column: &'a str, encode: F) -> Ask<'a>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error>,
{
    let at = head.columns.iter().position(|c| c.path == column);
    let mut ask = Ask {
        column,
        at,
        encoded: HashMap::new(),
        need: BTreeSet::new(),
    };
    let Some(c) = at.map(|i| &head.columns[i]) else {
        return ask;
    };
    for &t in &c.types {
        let e = head.types.get(t as usize).and_then(|ty| {
            let enc = encode(ty).ok()?;
            let hashes: Vec<Vec<u64>> = enc
                .iter()
                .map(|v| match v {
                    Encoded::Candidates(c) => c.iter().map(|b| sbbf::hash(b)).collect(),
                    _ => Vec::new(),
                })
                .collect();
            Some((Arc::from(enc), hashes))
        });
        if let Some((_, hashes)) = &e {
            for (g, group) in c.groups.iter().enumerate() {
                for h in hashes.iter().flatten() {
                    ask.need
                        .insert((g, sbbf::block_index(*h, group.blocks as usize) as u64));
                }
            }
        }
        ask.encoded.insert(t, e);
    }
    ask
}

/// What one read of the index brought for some asks: the files, each ask's column (when the
/// index has it) and its stripes, checked.
pub(crate) struct Fetched {
    pub(crate) directory: Directory,
    /// Per ask: position in `directory.columns`.
    columns: Vec<Option<usize>>,
    /// Per ask: its stripes.
    stripes: Vec<HashMap<(usize, u64), Bytes>>,
}

/// Reads, in one wave, the file table, the columns of `asks` and their stripes (nothing when
/// the index has none of the columns, unless `files`).
pub(crate) async fn fetch(
    root: &Root,
    loaded: &Loaded,
    asks: &[Ask<'_>],
    files: bool,
    st: &mut ReadStats,
) -> Result<Fetched, Error> {
    let head = &loaded.head;
    let mut cols: Vec<usize> = asks.iter().filter_map(|a| a.at).collect();
    cols.sort_unstable();
    cols.dedup();
    let mut ranges = vec![head.files.range()];
    ranges.extend(cols.iter().map(|&c| head.columns[c].section.range()));
    let mut wanted: Vec<(usize, usize, u64)> = Vec::new();
    for (k, a) in asks.iter().enumerate() {
        if let Some(c) = a.at {
            for &(g, j) in &a.need {
                wanted.push((k, g, j));
                ranges.push(head.columns[c].groups[g].stripe(j));
            }
        }
    }
    if cols.is_empty() && !files {
        // No column asked about is indexed: nothing to read.
        return Ok(Fetched {
            directory: Directory::of(head, Vec::new(), Vec::new()),
            columns: vec![None; asks.len()],
            stripes: vec![HashMap::new(); asks.len()],
        });
    }
    let got = loaded.read(root, &ranges, st).await?;
    let check = |b: &Bytes, s: &crate::format::Section| -> Result<(), IndexError> {
        format::section_bytes(b, s.offset, s).map(|_| ())
    };
    check(&got[0], &head.files)?;
    let files = format::parse_files(&got[0], head)?;
    let mut columns = Vec::with_capacity(cols.len());
    for (k, &c) in cols.iter().enumerate() {
        let ch = &head.columns[c];
        check(&got[1 + k], &ch.section)?;
        columns.push(format::parse_column(&got[1 + k], ch, &files)?);
    }
    let mut stripes = vec![HashMap::new(); asks.len()];
    for (&(k, g, j), b) in wanted.iter().zip(&got[1 + cols.len()..]) {
        check_stripe(b)?;
        stripes[k].insert((g, j), b.clone());
    }
    Ok(Fetched {
        columns: asks
            .iter()
            .map(|a| a.at.and_then(|c| cols.binary_search(&c).ok()))
            .collect(),
        directory: Directory::of(head, files, columns),
        stripes,
    })
}

/// Per listed file, the index's answer, or why the file must be probed directly; and the
/// reads it took. An error means the index is unusable (a section or stripe failed its
/// checksum, a read failed): then probe every file directly.
pub async fn answer<F>(
    root: &Root,
    loaded: &Loaded,
    listing: &[Listed],
    column: &str,
    encode: F,
) -> Result<(Vec<Result<Ruled, Why>>, ReadStats), Error>
where
    F: Fn(&ColumnType) -> Result<Vec<Encoded>, sbbf_parquet::Error>,
{
    let mut st = ReadStats::default();
    let asks = [prepare(&loaded.head, column, encode)];
    let f = fetch(root, loaded, &asks, false, &mut st).await?;
    let out = decide(&f, 0, &asks[0], listing)?;
    Ok((out, st))
}

/// The answers for ask `k` of what `f` holds.
pub(crate) fn decide(
    f: &Fetched,
    k: usize,
    ask: &Ask<'_>,
    listing: &[Listed],
) -> Result<Vec<Result<Ruled, Why>>, IndexError> {
    let d = &f.directory;
    let Some(col) = f.columns[k].map(|c| &d.columns[c]) else {
        return Ok(listing.iter().map(|_| Err(Why::NotCovered)).collect());
    };
    let stripes = &f.stripes[k];
    let by_path = d.by_path();
    // Where each (file, row group) of the column is: (group, entry).
    let mut at: HashMap<(u32, u32), (usize, usize)> = HashMap::new();
    for (g, group) in col.groups.iter().enumerate() {
        for (e, entry) in group.entries.iter().enumerate() {
            at.insert((entry.file, entry.row_group), (g, e));
        }
    }
    // Per listed file: the index file and type, or why not.
    let mut status: Vec<Result<(usize, u32), Why>> = Vec::with_capacity(listing.len());
    // Fresh files without the column, and whether a fresh file has it.
    let mut no_column = vec![false; listing.len()];
    let mut some_has_it = false;
    for (li, l) in listing.iter().enumerate() {
        if let Some(&fi) = by_path.get(l.rel.as_str()) {
            if is_fresh(&d.files[fi], l) && d.files[fi].row_counts.is_some() {
                match col.file_types[fi] {
                    Some(_) => some_has_it = true,
                    None => no_column[li] = true,
                }
            }
        }
        let s = match by_path.get(l.rel.as_str()) {
            None => Err(Why::New),
            // A file recorded unreadable and listed as it was (a link to nothing): not
            // covered, rather than changed.
            Some(&fi)
                if d.files[fi].row_counts.is_none()
                    && d.files[fi].stamp == l.stamp
                    && d.files[fi].size == l.size =>
            {
                Err(Why::NotCovered)
            }
            Some(&fi) if !is_fresh(&d.files[fi], l) => Err(Why::Stale),
            Some(&fi) => match (&d.files[fi].row_counts, col.file_types[fi]) {
                (Some(rows), Some(t))
                    if (0..rows.len() as u32).all(|rg| at.contains_key(&(fi as u32, rg)))
                        && matches!(ask.encoded.get(&t), Some(Some(_))) =>
                {
                    Ok((fi, t))
                }
                _ => Err(Why::NotCovered),
            },
        };
        status.push(s);
    }
    // The answers.
    let mut out = Vec::with_capacity(listing.len());
    let simple = !ask.column.contains(['.', '\\']);
    for (li, s) in status.into_iter().enumerate() {
        let (fi, t) = match s {
            Ok(x) => x,
            Err(_) if no_column[li] && simple && some_has_it => {
                out.push(Ok(Ruled::NoColumn));
                continue;
            }
            Err(why) => {
                out.push(Err(why));
                continue;
            }
        };
        let Some(Some((enc, hashes))) = ask.encoded.get(&t) else {
            out.push(Err(Why::NotCovered));
            continue;
        };
        let rows = d.files[fi].row_counts.clone().unwrap_or_default();
        let mut maybe = Vec::new();
        // Whether a row group that may hold a value was answered by a folded entry.
        let mut folded = false;
        let mut answers = Vec::with_capacity(rows.len());
        for (rg, n) in rows.iter().enumerate() {
            let &(g, e) = at
                .get(&(fi as u32, rg as u32))
                .ok_or_else(|| IndexError::Damaged("an entry went missing".into()))?;
            let blocks = col.groups[g].blocks as usize;
            let mut row = Vec::with_capacity(enc.len());
            for (v, hs) in enc.iter().zip(hashes) {
                let a = match v {
                    Encoded::NeverStored(_) => Answer::Absent,
                    Encoded::AlwaysMaybe(_) => Answer::Maybe,
                    Encoded::Candidates(_) => {
                        let mut any = false;
                        for &h in hs {
                            let j = sbbf::block_index(h, blocks) as u64;
                            let stripe = stripes.get(&(g, j)).ok_or_else(|| {
                                IndexError::Damaged("a stripe was not read".into())
                            })?;
                            let block = stripe.get(e * 32..e * 32 + 32).ok_or_else(|| {
                                IndexError::Damaged("an entry lies outside its stripe".into())
                            })?;
                            any |= sbbf::SbbfRef::new(block)
                                .map_err(|e| IndexError::Damaged(e.to_string()))?
                                .contains_hash(h);
                        }
                        if any {
                            Answer::Maybe
                        } else {
                            Answer::Absent
                        }
                    }
                };
                row.push(a);
            }
            if row.iter().any(|a| *a != Answer::Absent) {
                maybe.push(rg);
                folded |= col.groups[g].entries.get(e).is_none_or(|x| x.folds > 0);
            }
            answers.push(RowGroupAnswer {
                row_group: rg,
                num_rows: *n,
                filter: FilterState::Present,
                answers: row,
            });
        }
        let answer = IndexAnswer {
            column: d.types[t as usize].clone(),
            // A count bumped, not the values copied: many files, many values.
            encoded: Arc::clone(enc),
            answers,
        };
        // "Absent" holds however an entry was folded (a folded filter keeps every bit the
        // file's had); "maybe" is the file's own answer only from an entry kept as written.
        out.push(if maybe.is_empty() {
            Ok(Ruled::Absent(answer))
        } else if !folded {
            Ok(Ruled::Answered(answer))
        } else {
            Err(Why::Maybe(maybe))
        });
    }
    Ok(out)
}

/// For each listed file, whether the index proves `predicate` false in every row group of it
/// (so a reader may leave the file out unread): `Some(row groups of the file)` when it does.
/// `=` and `IN` leaves are asked of the index, `AND` is false where any part is, `OR` where
/// every part is. A file the index does not know as it is now (new, changed), a column or row
/// group it does not cover, values that do not encode: not proven. A file without the column
/// at all holds no row where the column equals a value. An error means the index is
/// unusable: leave nothing out.
///
/// ```no_run
/// # async fn run() -> Result<(), sbbf_index::Error> {
/// use sbbf_index::{probe::ruled_out, Root};
/// use sbbf_parquet::{prune::Predicate, Literal};
/// let root = Root::open("events/")?.expect("a directory is a table root");
/// let (listing, loaded) = (root.list().await?, root.load().await?);
/// if let Some((loaded, _)) = loaded {
///     let pred = Predicate::Eq("user_id".into(), Literal::Int(42));
///     let out = ruled_out(&root, &loaded, &listing, &pred).await?;
///     let read: Vec<_> = listing.iter().zip(&out).filter(|(_, o)| o.is_none()).collect();
///     println!("{} of {} files to read", read.len(), listing.len());
/// }
/// # Ok(()) }
/// ```
pub async fn ruled_out(
    root: &Root,
    loaded: &Loaded,
    listing: &[Listed],
    predicate: &sbbf_parquet::prune::Predicate,
) -> Result<Vec<Option<usize>>, Error> {
    let mut st = ReadStats::default();
    Ok(
        row_groups_ruled_out(root, loaded, listing, predicate, &mut st)
            .await?
            .into_iter()
            .map(|k| {
                let k = k?;
                let n = k.row_counts.len();
                (n > 0 && k.ruled_out.iter().all(|&r| r)).then_some(n)
            })
            .collect(),
    )
}

/// A listed file the index knows as it is now (same size, inode and times, or ETag, as at
/// the build): what it says of the file's row groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFile {
    /// Rows per row group, from the file's footer when the index was built.
    pub row_counts: Vec<i64>,
    /// Per row group: the predicate asked is definitely false for every row of it (all
    /// `false` when nothing was asked).
    pub ruled_out: Vec<bool>,
    /// Per row group: the index's answer is the one the file's own filters give (every
    /// entry asked covers it and is the file's filter bit for bit, not folded), so reading
    /// them would rule out nothing more (all `true` when nothing was asked).
    pub exact: Vec<bool>,
}

/// [`ruled_out`] row group by row group: for each listed file (in `listing`'s order) the
/// index knows as it is now, its row counts and the row groups it proves `predicate` false
/// in; `None` for a file it does not know so (new, changed, built without its footer). A
/// reader may plan such a file without reading its footer: it has these row groups, and
/// those ruled out need no read at all.
///
/// What the index's reads cost is added to `st` (requests, bytes, waves).
pub async fn row_groups_ruled_out(
    root: &Root,
    loaded: &Loaded,
    listing: &[Listed],
    predicate: &sbbf_parquet::prune::Predicate,
    st: &mut ReadStats,
) -> Result<Vec<Option<KnownFile>>, Error> {
    use sbbf_parquet::prune::Predicate;
    fn leaves<'a>(p: &'a Predicate, out: &mut Vec<(&'a str, Vec<sbbf_parquet::Literal>)>) {
        match p {
            Predicate::Eq(c, v) => out.push((c, vec![v.clone()])),
            Predicate::In(c, vs) => out.push((c, vs.clone())),
            Predicate::And(ps) | Predicate::Or(ps) => ps.iter().for_each(|p| leaves(p, out)),
        }
    }
    let mut asked = Vec::new();
    leaves(predicate, &mut asked);
    // Every leaf's sections and stripes in one read: an OR over k columns costs the index's
    // waves of one.
    let asks: Vec<Ask<'_>> = asked
        .iter()
        .map(|(column, literals)| {
            let encode = |ty: &ColumnType| {
                Ok(literals
                    .iter()
                    .map(|l| sbbf_parquet::values::stored::coerce(ty, l))
                    .collect())
            };
            prepare(&loaded.head, column, encode)
        })
        .collect();
    let f = fetch(root, loaded, &asks, false, st).await?;
    let d = &f.directory;
    let by_path = d.by_path();
    // Row counts of each listed file the index knows as it is now, and their row groups.
    let counts: Vec<Option<Vec<i64>>> = listing
        .iter()
        .map(|l| fresh_row_counts(d, &by_path, l))
        .collect();
    let groups: Vec<Option<usize>> = counts.iter().map(|c| c.as_ref().map(Vec::len)).collect();
    // Per leaf, per listed file, per row group: definitely holds none of the leaf's values.
    // And whether that answer is the file's own filters' (not coarser: not folded, covered).
    let mut absent: Vec<Vec<Vec<bool>>> = Vec::with_capacity(asks.len());
    let mut exact: Vec<Vec<Vec<bool>>> = Vec::with_capacity(asks.len());
    for (k, ask) in asks.iter().enumerate() {
        let decided = decide(&f, k, ask, listing)?;
        let (a, e): (Vec<Vec<bool>>, Vec<Vec<bool>>) = decided
            .iter()
            .zip(&groups)
            .map(|(d, n)| {
                let n = n.unwrap_or(0);
                match d {
                    Ok(Ruled::Absent(a)) if a.answers.len() == n => (vec![true; n], vec![true; n]),
                    Ok(Ruled::NoColumn) => (vec![true; n], vec![true; n]),
                    Ok(Ruled::Answered(a)) if a.answers.len() == n => (
                        a.answers
                            .iter()
                            .map(|rg| rg.answers.iter().all(|x| *x == Answer::Absent))
                            .collect(),
                        vec![true; n],
                    ),
                    // The row groups in `maybe` were answered by folded entries.
                    Err(Why::Maybe(maybe)) => {
                        let definite: Vec<bool> = (0..n).map(|rg| !maybe.contains(&rg)).collect();
                        (definite.clone(), definite)
                    }
                    _ => (vec![false; n], vec![false; n]),
                }
            })
            .unzip();
        absent.push(a);
        exact.push(e);
    }
    /// Whether `p` is proven false in row group `rg` of file `f`; leaves are numbered in
    /// `leaves` order through `next`, so every child is visited.
    fn proven(
        p: &Predicate,
        absent: &[Vec<Vec<bool>>],
        f: usize,
        rg: usize,
        next: &mut usize,
    ) -> bool {
        match p {
            Predicate::Eq(..) | Predicate::In(..) => {
                let i = *next;
                *next += 1;
                absent
                    .get(i)
                    .and_then(|files| files.get(f)?.get(rg))
                    .copied()
                    .unwrap_or(false)
            }
            Predicate::And(ps) => ps
                .iter()
                .map(|c| proven(c, absent, f, rg, next))
                .fold(false, |a, b| a | b),
            Predicate::Or(ps) => ps
                .iter()
                .map(|c| proven(c, absent, f, rg, next))
                .fold(true, |a, b| a & b),
        }
    }
    Ok(counts
        .into_iter()
        .enumerate()
        .map(|(f, row_counts)| {
            let row_counts = row_counts?;
            let ruled_out = (0..row_counts.len())
                .map(|rg| proven(predicate, &absent, f, rg, &mut 0))
                .collect();
            let exact = (0..row_counts.len())
                .map(|rg| {
                    exact.iter().all(|leaf| {
                        leaf.get(f)
                            .and_then(|g| g.get(rg))
                            .copied()
                            .unwrap_or(false)
                    })
                })
                .collect();
            Some(KnownFile {
                row_counts,
                ruled_out,
                exact,
            })
        })
        .collect())
}

/// The row counts the index recorded for listed file `l`, when it knows it as it is now.
fn fresh_row_counts(d: &Directory, by_path: &HashMap<&str, usize>, l: &Listed) -> Option<Vec<i64>> {
    let file = &d.files[*by_path.get(l.rel.as_str())?];
    is_fresh(file, l).then_some(())?;
    file.row_counts.clone()
}

/// Of the files a query engine listed (`listing`, in its order), the ones whose footers tell
/// the table's schema: the first file of each schema fingerprint among those the index knows
/// as they are now, and every file it does not know so (new, changed, unread at build time).
/// Merging the schemas of these gives what merging all of them would, since a schema merged a
/// second time adds nothing. One read of the index's file table. An error means the index
/// is unusable: read every footer.
///
/// ```no_run
/// # async fn run() -> Result<(), sbbf_index::Error> {
/// use sbbf_index::{probe::schema_files, Root};
/// let root = Root::open("events/")?.expect("a directory is a table root");
/// let (listing, loaded) = (root.list().await?, root.load().await?);
/// if let Some((loaded, _)) = loaded {
///     let read = schema_files(&root, &loaded, &listing).await?;
///     println!("{} footers of {} tell the schema", read.len(), listing.len());
/// }
/// # Ok(()) }
/// ```
pub async fn schema_files(
    root: &Root,
    loaded: &Loaded,
    listing: &[Listed],
) -> Result<Vec<usize>, Error> {
    let mut st = ReadStats::default();
    Ok(known_files(root, loaded, listing, &mut st)
        .await?
        .schema_files)
}

/// What one read of the index's file table tells a query engine about the files it listed:
/// see [`known_files`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownFiles {
    /// The files whose footers tell the table's schema, as [`schema_files`] gives them.
    pub schema_files: Vec<usize>,
    /// Per listed file (in the listing's order): its rows per row group, when the index
    /// knows it as it is now; `None` when not (new, changed, built without its footer).
    pub row_counts: Vec<Option<Vec<i64>>>,
}

/// [`schema_files`], and the row counts of every listed file the index knows as it is now
/// (so that a query engine can plan it, and count its rows, without reading its footer), from
/// one read of the index's file table (its cost added to `st`). An error means the index is
/// unusable: read every footer.
///
/// ```no_run
/// # async fn run() -> Result<(), sbbf_index::Error> {
/// use sbbf_index::{probe::known_files, Root};
/// let root = Root::open("events/")?.expect("a directory is a table root");
/// let (listing, loaded) = (root.list().await?, root.load().await?);
/// if let Some((loaded, _)) = loaded {
///     let mut reads = Default::default();
///     let known = known_files(&root, &loaded, &listing, &mut reads).await?;
///     let rows: i64 = known.row_counts.iter().flatten().flatten().sum();
///     println!("{rows} rows in the files the index knows as they are now");
/// }
/// # Ok(()) }
/// ```
pub async fn known_files(
    root: &Root,
    loaded: &Loaded,
    listing: &[Listed],
    st: &mut ReadStats,
) -> Result<KnownFiles, Error> {
    let head = &loaded.head;
    let got = loaded.read(root, &[head.files.range()], st).await?;
    let bytes = got
        .first()
        .ok_or_else(|| IndexError::Damaged("the file table was not read".into()))?;
    format::section_bytes(bytes, head.files.offset, &head.files)?;
    let files = format::parse_files(bytes, head)?;
    let d = Directory::of(head, files, Vec::new());
    let by_path = d.by_path();
    let mut seen = std::collections::HashSet::new();
    let schema_files = listing
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let known = by_path
                .get(l.rel.as_str())
                .map(|&i| &d.files[i])
                .filter(|f| is_fresh(f, l) && f.row_counts.is_some())
                .and_then(|f| f.schema);
            match known {
                Some(h) => seen.insert(h),
                None => true,
            }
        })
        .map(|(i, _)| i)
        .collect();
    let row_counts = listing
        .iter()
        .map(|l| fresh_row_counts(&d, &by_path, l))
        .collect();
    Ok(KnownFiles {
        schema_files,
        row_counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{ColumnEntry, Entry, FileEntry, Group, Stamp};
    use parquet::basic::Type as PhysicalType;
    use sbbf_parquet::format::column::ValueKind;

    const STAMP: Stamp = Stamp::Local {
        ino: 1,
        mtime_ns: 1,
        ctime_ns: 1,
    };

    fn int64(path: &str) -> ColumnType {
        ColumnType {
            path: path.into(),
            physical: PhysicalType::INT64,
            type_length: -1,
            kind: ValueKind::Int {
                bits: 64,
                signed: true,
            },
            logical: None,
        }
    }

    fn file(path: &str, row_counts: Option<Vec<i64>>) -> FileEntry {
        FileEntry {
            path: path.into(),
            size: 100,
            stamp: STAMP,
            row_counts,
            schema: None,
        }
    }

    fn entry(file: u32, row_group: u32) -> Entry {
        Entry {
            file,
            row_group,
            folds: 0,
            fpp: 0.0,
        }
    }

    /// An index of one column `id` in one group of one-block filters. Files, by path:
    /// a (rows 10, 20; `x` in row group 0 only), b (rows 5; empty filter), c (no column),
    /// d (unreadable at build time), e (listed changed), f (row group 1 has no entry),
    /// g (a type the value does not encode for).
    fn fetched(x_hash: u64) -> Fetched {
        let files = vec![
            file("a", Some(vec![10, 20])),
            file("b", Some(vec![5])),
            file("c", Some(vec![7])),
            file("d", None),
            file("e", Some(vec![1])),
            file("f", Some(vec![1, 2])),
            file("g", Some(vec![3])),
        ];
        let entries = vec![
            entry(0, 0),
            entry(0, 1),
            entry(1, 0),
            entry(4, 0),
            entry(5, 0),
            entry(6, 0),
        ];
        let mut with_x = sbbf::Sbbf::with_num_bytes(32);
        with_x.insert_hash(x_hash);
        let empty = sbbf::Sbbf::with_num_bytes(32);
        let mut stripe = Vec::new();
        for (i, _) in entries.iter().enumerate() {
            let block = if i == 0 { &with_x } else { &empty };
            stripe.extend_from_slice(block.as_bytes());
        }
        let column = ColumnEntry {
            path: "id".into(),
            file_types: vec![Some(0), Some(0), None, None, Some(0), Some(0), Some(1)],
            groups: vec![Group {
                blocks: 1,
                entries,
                offset: 0,
                len: 0,
                crc: 0,
            }],
        };
        Fetched {
            directory: Directory {
                created_ms: 0,
                root: "t/".into(),
                target_fpp: None,
                explicit_columns: false,
                files,
                types: vec![int64("id"), int64("id")],
                columns: vec![column],
                table: None,
            },
            columns: vec![Some(0)],
            stripes: vec![HashMap::from([((0, 0), Bytes::from(stripe))])],
        }
    }

    fn listing() -> Vec<Listed> {
        let mut l: Vec<Listed> = ["a", "b", "c", "d", "f", "g", "new"]
            .iter()
            .map(|p| Listed::for_test(p, 100, STAMP))
            .collect();
        l.insert(4, Listed::for_test("e", 101, STAMP));
        l
    }

    /// An ask for `column` with the values `encoded` for type 0 (type 1 does not encode).
    fn ask(column: &str, encoded: Vec<Encoded>) -> Ask<'_> {
        let hashes = encoded
            .iter()
            .map(|v| match v {
                Encoded::Candidates(c) => c.iter().map(|b| sbbf::hash(b)).collect(),
                _ => Vec::new(),
            })
            .collect();
        Ask {
            column,
            at: Some(0),
            encoded: HashMap::from([(0, Some((encoded.into(), hashes))), (1, None)]),
            need: BTreeSet::new(),
        }
    }

    fn x() -> Vec<Encoded> {
        vec![Encoded::Candidates(vec![b"x".to_vec()])]
    }

    /// Each listed file's answer, short: `absent`, `no column`, or the `Why` as text.
    fn short(out: &[Result<Ruled, Why>]) -> Vec<String> {
        out.iter()
            .map(|r| match r {
                Ok(Ruled::Absent(_)) => "absent".to_string(),
                Ok(Ruled::NoColumn) => "no column".to_string(),
                Ok(Ruled::Answered(a)) => format!(
                    "answered {:?}",
                    a.answers
                        .iter()
                        .filter(|rg| rg.answers.iter().any(|x| *x != Answer::Absent))
                        .map(|rg| rg.row_group)
                        .collect::<Vec<_>>()
                ),
                Err(why) => format!("{why:?}"),
            })
            .collect()
    }

    #[test]
    fn decide_answers_each_listed_file_by_what_the_index_knows_of_it() {
        let f = fetched(sbbf::hash(b"x"));
        let out = decide(&f, 0, &ask("id", x()), &listing()).unwrap();
        assert_eq!(
            short(&out),
            [
                "answered [0]", // a: its own filter (not folded) says row group 0 may hold x
                "absent",       // b: every row group's filter rules x out
                "no column",    // c: fresh, readable, without the column; a has it
                "NotCovered",   // d: recorded unreadable and listed as it was
                "Stale",        // e: its size changed
                "NotCovered",   // f: row group 1 has no filter in the index
                "NotCovered",   // g: the value does not encode for its type
                "New",          // new: not in the index
            ]
        );
        let Ok(Ruled::Absent(b)) = &out[1] else {
            unreachable!()
        };
        assert_eq!(b.column, int64("id"));
        assert_eq!(*b.encoded, *x());
        assert_eq!(
            b.answers,
            [RowGroupAnswer {
                row_group: 0,
                num_rows: 5,
                filter: FilterState::Present,
                answers: vec![Answer::Absent],
            }]
        );
    }

    #[test]
    fn a_column_the_index_lacks_leaves_every_file_not_covered() {
        let mut f = fetched(sbbf::hash(b"x"));
        f.columns = vec![None];
        let out = decide(&f, 0, &ask("id", x()), &listing()).unwrap();
        assert!(short(&out).iter().all(|s| s == "NotCovered"), "{out:?}");
    }

    #[test]
    fn no_column_is_said_only_of_a_plain_path_that_another_fresh_file_has() {
        let f = fetched(sbbf::hash(b"x"));
        // A path with `.` or `\` may be another leaf to a direct probe.
        for column in ["s.id", "s\\id"] {
            let out = decide(&f, 0, &ask(column, x()), &listing()).unwrap();
            assert_eq!(short(&out)[2], "NotCovered", "{column}");
        }
        // Only c is listed: no fresh file has the column.
        let only_c = vec![Listed::for_test("c", 100, STAMP)];
        let out = decide(&f, 0, &ask("id", x()), &only_c).unwrap();
        assert_eq!(short(&out), ["NotCovered"]);
        // A listed a that changed does not count as having it.
        let l = vec![
            Listed::for_test("a", 99, STAMP),
            Listed::for_test("c", 100, STAMP),
        ];
        let out = decide(&f, 0, &ask("id", x()), &l).unwrap();
        assert_eq!(short(&out), ["Stale", "NotCovered"]);
    }

    #[test]
    fn values_never_stored_are_absent_and_values_always_maybe_are_kept() {
        let f = fetched(sbbf::hash(b"x"));
        let never = vec![Encoded::NeverStored("out of range".into())];
        let out = decide(&f, 0, &ask("id", never), &listing()).unwrap();
        assert_eq!(short(&out)[..2], ["absent", "absent"]);
        let Ok(Ruled::Absent(a)) = &out[0] else {
            unreachable!()
        };
        assert_eq!(a.answers.len(), 2);
        assert_eq!(a.answers[1].num_rows, 20);
        let always = vec![Encoded::AlwaysMaybe(sbbf_parquet::MaybeWhy::NaN)];
        let out = decide(&f, 0, &ask("id", always), &listing()).unwrap();
        assert_eq!(short(&out)[..2], ["answered [0, 1]", "answered [0]"]);
        // One value that may be there keeps the row group, whatever the others say.
        let both = vec![
            Encoded::NeverStored("out of range".into()),
            Encoded::Candidates(vec![b"y".to_vec(), b"x".to_vec()]),
        ];
        let out = decide(&f, 0, &ask("id", both), &listing()).unwrap();
        assert_eq!(short(&out)[..2], ["answered [0]", "absent"]);
    }

    #[test]
    fn a_maybe_from_a_folded_entry_is_read_directly_and_an_absent_one_is_not() {
        let mut f = fetched(sbbf::hash(b"x"));
        // a's row group 0 (where x may be) and b's only row group were folded.
        f.directory.columns[0].groups[0].entries[0].folds = 1;
        f.directory.columns[0].groups[0].entries[2].folds = 1;
        let out = decide(&f, 0, &ask("id", x()), &listing()).unwrap();
        // A folded filter keeps every bit the file's had: its "absent" is the file's too; its
        // "maybe" may be the fold's, which the file's own filter could still rule out.
        assert_eq!(short(&out)[..2], ["Maybe([0])", "absent"]);
        // A folded entry answering "absent" beside an unfolded "maybe": answered.
        let mut f = fetched(sbbf::hash(b"x"));
        f.directory.columns[0].groups[0].entries[1].folds = 2;
        let out = decide(&f, 0, &ask("id", x()), &listing()).unwrap();
        assert_eq!(short(&out)[0], "answered [0]");
    }

    #[test]
    fn a_stripe_not_read_or_too_short_is_damage() {
        let mut f = fetched(sbbf::hash(b"x"));
        f.stripes = vec![HashMap::new()];
        let e = decide(&f, 0, &ask("id", x()), &listing()).unwrap_err();
        assert!(e.to_string().contains("a stripe was not read"), "{e}");
        let mut f = fetched(sbbf::hash(b"x"));
        f.stripes = vec![HashMap::from([((0, 0), Bytes::from(vec![0u8; 64]))])];
        let e = decide(&f, 0, &ask("id", x()), &listing()).unwrap_err();
        assert!(
            e.to_string().contains("an entry lies outside its stripe"),
            "{e}"
        );
    }
}
