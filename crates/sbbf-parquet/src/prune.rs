//! Row-group pruning for query engines: which row groups can a predicate skip?
//!
//! A row group is skipped only when the filters prove the predicate false for it: `col = v`
//! when `v` is absent; `col IN (...)` when every element is absent; AND when any child is
//! proven false; OR when every child is. Anything the filters cannot decide keeps the row
//! group.

use crate::format::column::ColumnType;
use crate::io::IoPolicy;
use crate::read::answer::{Answer, FilterState, RowGroupAnswer};
use crate::read::plan::AnyOf;
use crate::values::stored::{coerce, Encoded, Literal};
use crate::{Error, NoFilter, ParquetFile};
use bytes::Bytes;
use parquet::file::reader::ChunkReader;
use sbbf::SbbfRef;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A predicate over leaf columns (dotted paths).
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// `column = literal`.
    Eq(String, Literal),
    /// `column IN (literals)`.
    In(String, Vec<Literal>),
    /// All children hold.
    And(Vec<Predicate>),
    /// Some child holds.
    Or(Vec<Predicate>),
}

impl Predicate {
    /// `column = literal`.
    pub fn eq(column: impl Into<String>, literal: Literal) -> Predicate {
        Predicate::Eq(column.into(), literal)
    }

    /// `column IN (literals)`, the literals taken from an Arrow array (nulls ignored: they
    /// never compare equal).
    pub fn in_arrow(column: impl Into<String>, array: &dyn arrow_array::Array) -> Predicate {
        Predicate::In(column.into(), Literal::all_from_arrow(array))
    }
}

/// A filter in disjunctive normal form (an OR of ANDs of column tests), as pyarrow's
/// `filters` and other engines' pushed-down filters give it, before the columns of any file
/// are known. [`Dnf::predicate_for`] turns it into the [`Predicate`] one file can be pruned
/// by: a test of a column the file lacks (a partition column, one added to later files) is
/// true there.
///
/// ```
/// use sbbf_parquet::prune::{Dnf, Leaf, Predicate, Test};
/// use sbbf_parquet::Literal;
/// let dnf = Dnf(vec![vec![
///     Leaf { column: Some("id".into()), test: Test::Eq(Literal::Int(7)) },
///     Leaf { column: Some("year".into()), test: Test::Eq(Literal::Int(2024)) },
/// ]]);
/// // A file with `id` only: the test of `year` is true there.
/// let mut missing = Vec::new();
/// let p = dnf.predicate_for(
///     |c| if c == "id" { Ok(0) } else { Err(sbbf_parquet::Error::UnknownColumn { column: c.into(), candidates: vec![] }) },
///     &mut missing,
/// );
/// assert_eq!(p, Some(Predicate::Or(vec![Predicate::And(vec![Predicate::eq("id", Literal::Int(7))])])));
/// assert_eq!(missing.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dnf(pub Vec<Vec<Leaf>>);

/// One test of a [`Dnf`].
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// The leaf column's escaped dotted path, when the test names one (else it is true).
    pub column: Option<String>,
    /// What is tested of it.
    pub test: Test,
}

/// What a [`Leaf`] tests.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// `column = literal`.
    Eq(Literal),
    /// `column IN (literals)`.
    In(Vec<Literal>),
    /// Anything the filters cannot decide (another operator, a null): true in every row group.
    Keep,
}

impl Dnf {
    /// The predicate these tests make for a file whose columns `column_index` finds, or `None`
    /// when they cannot skip anything; the columns the file lacks go to `missing` with the
    /// file's error (their tests are true there).
    pub fn predicate_for(
        &self,
        column_index: impl Fn(&str) -> Result<usize, Error>,
        missing: &mut Vec<(String, Error)>,
    ) -> Option<Predicate> {
        let mut branches = Vec::with_capacity(self.0.len());
        for conjunction in &self.0 {
            let mut leaves = Vec::new();
            for leaf in conjunction {
                let Some(path) = &leaf.column else {
                    continue;
                };
                if let Err(e) = column_index(path) {
                    missing.push((path.clone(), e));
                    continue;
                }
                match &leaf.test {
                    Test::Eq(l) => leaves.push(Predicate::Eq(path.clone(), l.clone())),
                    Test::In(ls) => leaves.push(Predicate::In(path.clone(), ls.clone())),
                    Test::Keep => {}
                }
            }
            if leaves.is_empty() {
                // A branch the filters cannot decide is true everywhere, and so is the OR.
                return None;
            }
            branches.push(Predicate::And(leaves));
        }
        (!branches.is_empty()).then_some(Predicate::Or(branches))
    }

    /// Every column a test names, in order, with repeats.
    pub fn columns(&self) -> impl Iterator<Item = &str> {
        self.0.iter().flatten().filter_map(|l| l.column.as_deref())
    }
}

/// The outcome of pruning one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// Row groups to read, ascending: pass to arrow-rs'
    /// `ParquetRecordBatchReaderBuilder::with_row_groups`.
    pub row_groups: Vec<usize>,
    /// Why each row group was kept or skipped, indexed by row group.
    pub reasons: Vec<Reason>,
}

impl Pruned {
    /// Row groups that can be skipped.
    pub fn skipped(&self) -> Vec<usize> {
        (0..self.reasons.len())
            .filter(|i| !self.row_groups.contains(i))
            .collect()
    }
}

/// Why a row group is skipped or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The filters prove the predicate false for the row group: what proves it.
    Skip(String),
    /// The filters cannot prove it false: why not.
    Read(String),
}

impl Reason {
    /// Whether the row group can be skipped.
    pub fn is_skip(&self) -> bool {
        matches!(self, Reason::Skip(_))
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Skip(why) => write!(f, "skip: {why}"),
            Reason::Read(why) => write!(f, "read: {why}"),
        }
    }
}

/// The leaves of a predicate (column, literals), in the pre-order [`evaluate`] visits them.
pub(crate) fn leaves(p: &Predicate) -> Vec<(&str, &[Literal])> {
    fn walk<'a>(p: &'a Predicate, out: &mut Vec<(&'a str, &'a [Literal])>) {
        match p {
            Predicate::Eq(c, v) => out.push((c, std::slice::from_ref(v))),
            Predicate::In(c, vs) => out.push((c, vs)),
            Predicate::And(ps) | Predicate::Or(ps) => ps.iter().for_each(|p| walk(p, out)),
        }
    }
    let mut out = Vec::new();
    walk(p, &mut out);
    out
}

/// The one evaluation path: `answers` holds one probe result per leaf, in [`leaves`] order
/// (whatever read them: a file, an async reader, cached filters).
pub(crate) fn decide(
    p: &Predicate,
    num_row_groups: usize,
    answers: Vec<Vec<RowGroupAnswer>>,
) -> Pruned {
    let mut next = answers.into_iter();
    let reasons = evaluate(p, num_row_groups, &mut next);
    Pruned {
        row_groups: (0..reasons.len())
            .filter(|i| !reasons[*i].is_skip())
            .collect(),
        reasons,
    }
}

fn evaluate(
    p: &Predicate,
    num_row_groups: usize,
    answers: &mut impl Iterator<Item = Vec<RowGroupAnswer>>,
) -> Vec<Reason> {
    match p {
        Predicate::Eq(c, v) => leaf(c, std::slice::from_ref(v), answers.next()),
        Predicate::In(c, vs) => leaf(c, vs, answers.next()),
        Predicate::And(ps) => {
            let mut acc = vec![Reason::Read("AND of nothing".into()); num_row_groups];
            for child in ps {
                for (a, v) in acc.iter_mut().zip(evaluate(child, num_row_groups, answers)) {
                    // A proof of false wins; otherwise the last child's reason stands.
                    if !a.is_skip() {
                        *a = v;
                    }
                }
            }
            acc
        }
        Predicate::Or(ps) => {
            let mut acc: Vec<Option<Reason>> = vec![None; num_row_groups];
            for child in ps {
                for (a, v) in acc.iter_mut().zip(evaluate(child, num_row_groups, answers)) {
                    *a = Some(match (a.take(), v) {
                        (None, v) => v,
                        (Some(m @ Reason::Read(_)), _) => m,
                        (Some(Reason::Skip(_)), m @ Reason::Read(_)) => m,
                        (Some(Reason::Skip(x)), Reason::Skip(y)) => {
                            Reason::Skip(format!("{x}; {y}"))
                        }
                    });
                }
            }
            acc.into_iter()
                .map(|v| v.unwrap_or_else(|| Reason::Skip("an empty OR is false".into())))
                .collect()
        }
    }
}

fn leaf(column: &str, values: &[Literal], answers: Option<Vec<RowGroupAnswer>>) -> Vec<Reason> {
    // `decide` is handed one answer per leaf; a missing one keeps every row group.
    let Some(rgs) = answers else {
        return Vec::new();
    };
    rgs.into_iter()
        .map(|rg| {
            if !rg.answers.is_empty() && rg.answers.iter().all(|a| *a == Answer::Absent) {
                Reason::Skip(format!("`{column}`: every value is absent"))
            } else if values.is_empty() {
                Reason::Skip(format!("`{column}` IN () is false"))
            } else {
                Reason::Read(match &rg.filter {
                    FilterState::Missing => format!("`{column}` has no Bloom filter"),
                    FilterState::Invalid(r) => format!("`{column}` filter unusable: {r}"),
                    FilterState::Partition(r) | FilterState::NotInFile(r) => {
                        format!("`{column}`: {r}")
                    }
                    FilterState::Present => format!("`{column}` may hold a value"),
                })
            }
        })
        .collect()
}

/// A leaf's column (leaf index) and its literals converted to the column's stored bytes.
pub(crate) fn leaf_values(
    columns: &[ColumnType],
    index: impl Fn(&str) -> Result<usize, Error>,
    (column, literals): (&str, &[Literal]),
) -> Result<(usize, Vec<Encoded>), Error> {
    let col = index(column)?;
    let ty = &columns[col];
    Ok((col, literals.iter().map(|l| coerce(ty, l)).collect()))
}

impl<R> ParquetFile<R> {
    /// One probe job per leaf of `predicate` (in [`leaves`] order), to be driven together.
    /// A leaf only needs to know whether any of its values may be present, so each job holds
    /// the values' hashes alone (each hashed once, whatever the number of row groups) and
    /// answers once per row group, with the batch kernel when a filter is read whole.
    pub(crate) fn leaf_jobs(
        &self,
        predicate: &Predicate,
        policy: IoPolicy,
    ) -> Result<Vec<crate::read::plan::ProbeJob>, Error> {
        self.jobs_for(leaves(predicate), policy, |_, ty, literals| {
            hash_leaf(ty, literals)
        })
    }

    /// [`ParquetFile::leaf_jobs`] with the key sets hashed by `hashed(leaf, column type,
    /// literals)`.
    fn jobs_for(
        &self,
        leaves: Vec<(&str, &[Literal])>,
        policy: IoPolicy,
        hashed: impl Fn(usize, &ColumnType, &[Literal]) -> (Arc<[u64]>, AnyOf),
    ) -> Result<Vec<crate::read::plan::ProbeJob>, Error> {
        leaves
            .into_iter()
            .enumerate()
            .map(|(i, (column, literals))| {
                let col = self.column_index(column)?;
                let (hashes, any) = hashed(i, &self.columns()[col], literals);
                Ok(self.any_job(col, hashes, any, policy))
            })
            .collect()
    }

    /// [`ParquetFile::leaf_jobs`] for a prepared predicate: its key sets hashed once per
    /// column type, for every file that shares it.
    fn prepared_jobs(
        &self,
        prepared: &PreparedPredicate,
        policy: IoPolicy,
    ) -> Result<Vec<crate::read::plan::ProbeJob>, Error> {
        self.jobs_for(leaves(&prepared.predicate), policy, |i, ty, literals| {
            prepared.hashed(i, ty, literals)
        })
    }
}

/// A leaf's literals coerced to column type `ty` and hashed: the sorted distinct hashes and
/// their summary.
fn hash_leaf(ty: &ColumnType, literals: &[Literal]) -> (Arc<[u64]>, AnyOf) {
    let (hashes, any) = AnyOf::encode(literals.iter().map(|l| coerce(ty, l)));
    (hashes.into(), any)
}

/// Key sets of a leaf kept at most this many bytes of hashes in all ([`PreparedPredicate`]):
/// one million keys are 8 MB per column type, so a scan whose files disagree on a column's
/// type keeps a few; past the budget a key set is hashed for each file again.
const PREPARED_BUDGET: usize = 128 << 20;

/// A leaf's key set as hashed for one column type: the sorted hashes and their summary.
type HashedKeys = (ColumnType, Arc<[u64]>, AnyOf);

/// A predicate whose key sets are coerced to each column type and hashed once, then shared by
/// every file pruned with it: a join's million keys over a directory of 10,000 files are
/// hashed once per column type, not once per file. Thread-safe; the cache is bounded
/// (128 MiB of hashes), so a predicate over files of many column types costs time, not memory.
///
/// ```
/// use sbbf_parquet::{ParquetFile, prune::{Predicate, PreparedPredicate}, values::stored::Literal};
/// # let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/conformance/");
/// let keys = (0..1000).map(Literal::Int).collect();
/// let prepared = PreparedPredicate::new(Predicate::In("i64".into(), keys));
/// for _file in 0..2 {
///     # let path = format!("{dir}pyarrow_int_types.parquet");
///     let pq = ParquetFile::open(std::fs::File::open(&path)?)?;
///     let pruned = pq.prune_prepared(&prepared)?;
///     assert_eq!(pruned.reasons.len(), pq.metadata().num_row_groups());
/// }
/// assert_eq!(prepared.key_sets_hashed(), 1); // the second file reused the hashes
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PreparedPredicate {
    predicate: Predicate,
    /// Per leaf (in [`leaves`] order): the column types its key set was hashed for.
    hashed: Vec<Mutex<Vec<HashedKeys>>>,
    kept: AtomicUsize,
    count: AtomicUsize,
}

impl PreparedPredicate {
    /// Prepares `predicate`; nothing is hashed until a file asks.
    pub fn new(predicate: Predicate) -> PreparedPredicate {
        let n = leaves(&predicate).len();
        PreparedPredicate {
            predicate,
            hashed: (0..n).map(|_| Mutex::new(Vec::new())).collect(),
            kept: AtomicUsize::new(0),
            count: AtomicUsize::new(0),
        }
    }

    /// The predicate.
    pub fn predicate(&self) -> &Predicate {
        &self.predicate
    }

    /// How many times a leaf's key set was coerced and hashed (once per leaf and column type
    /// while the cache has room).
    pub fn key_sets_hashed(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    fn hashed(&self, leaf: usize, ty: &ColumnType, literals: &[Literal]) -> (Arc<[u64]>, AnyOf) {
        let encode = || {
            self.count.fetch_add(1, Ordering::Relaxed);
            hash_leaf(ty, literals)
        };
        let Some(slot) = self.hashed.get(leaf) else {
            return encode();
        };
        // Held while hashing: files of one scan opened together wait for one hashing instead
        // of each doing it.
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, h, a)) = slot.iter().find(|(t, _, _)| t == ty) {
            return (Arc::clone(h), *a);
        }
        let (hashes, any) = encode();
        let bytes = hashes.len() * std::mem::size_of::<u64>();
        if self.kept.fetch_add(bytes, Ordering::Relaxed) + bytes <= PREPARED_BUDGET {
            slot.push((ty.clone(), Arc::clone(&hashes), any));
        } else {
            self.kept.fetch_sub(bytes, Ordering::Relaxed);
        }
        (hashes, any)
    }
}

impl From<Predicate> for PreparedPredicate {
    fn from(p: Predicate) -> PreparedPredicate {
        PreparedPredicate::new(p)
    }
}

impl<R: ChunkReader> ParquetFile<R> {
    /// Which row groups `predicate` needs, reading only footer and filter bytes.
    ///
    /// ```
    /// use sbbf_parquet::{ParquetFile, prune::Predicate, values::stored::Literal};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/conformance/pyarrow_int_types.parquet");
    /// let pq = ParquetFile::open(std::fs::File::open(path)?)?;
    /// let p = Predicate::Or(vec![
    ///     Predicate::eq("i64", Literal::Int(-1234567)),
    ///     Predicate::In("i16".into(), vec![Literal::Int(70000)]), // out of INT(16) range
    /// ]);
    /// let pruned = pq.prune(&p)?;
    /// assert_eq!(pruned.reasons.len(), pq.metadata().num_row_groups());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prune(&self, predicate: &Predicate) -> Result<Pruned, Error> {
        let jobs = self.leaf_jobs(predicate, IoPolicy::default())?;
        Ok(self.prune_jobs(predicate, jobs))
    }

    /// [`ParquetFile::prune`] with a [`PreparedPredicate`]: its key sets hashed once for
    /// every file pruned with it.
    pub fn prune_prepared(&self, prepared: &PreparedPredicate) -> Result<Pruned, Error> {
        let jobs = self.prepared_jobs(prepared, IoPolicy::default())?;
        Ok(self.prune_jobs(&prepared.predicate, jobs))
    }

    fn prune_jobs(
        &self,
        predicate: &Predicate,
        mut jobs: Vec<crate::read::plan::ProbeJob>,
    ) -> Pruned {
        crate::read::plan::run(self.reader(), &self.io, &mut jobs);
        let answers = jobs
            .into_iter()
            .map(crate::read::plan::ProbeJob::finish)
            .collect();
        decide(predicate, self.metadata().num_row_groups(), answers)
    }

    /// Reads the whole filters of the columns `predicate` mentions, once, to prune many
    /// predicates from memory.
    pub fn load_filters(&self, columns: &[&str]) -> Result<Filters, Error> {
        let mut by_column = BTreeMap::new();
        for c in columns {
            let col = self.column_index(c)?;
            let filters = self
                .read_filters(col, IoPolicy::default())
                .into_iter()
                .map(|f| f.map(|span| span.bitset))
                .collect();
            by_column.insert(c.to_string(), (col, filters));
        }
        Ok(Filters {
            columns: self.columns().to_vec(),
            num_rows: self
                .metadata()
                .row_groups()
                .iter()
                .map(|rg| rg.num_rows())
                .collect(),
            by_column,
        })
    }
}

/// Whole filters held in memory for repeated pruning ([`ParquetFile::load_filters`]).
#[derive(Debug, Clone)]
pub struct Filters {
    columns: Vec<crate::format::column::ColumnType>,
    num_rows: Vec<i64>,
    by_column: BTreeMap<String, (usize, Vec<Result<Bytes, NoFilter>>)>,
}

impl Filters {
    /// Prunes with the cached filters; a column that was not loaded is an error.
    pub fn prune(&self, predicate: &Predicate) -> Result<Pruned, Error> {
        let index = |column: &str| {
            self.by_column
                .get(column)
                .map(|(col, _)| *col)
                .ok_or_else(|| Error::UnknownColumn {
                    column: column.to_string(),
                    candidates: self.by_column.keys().cloned().collect(),
                })
        };
        let mut answers = Vec::new();
        for leaf in leaves(predicate) {
            let (_, encoded) = leaf_values(&self.columns, index, leaf)?;
            let filters = &self.by_column[leaf.0].1;
            answers.push(
                filters
                    .iter()
                    .enumerate()
                    .map(|(rg, f)| {
                        let view = f.as_ref().ok().and_then(|b| SbbfRef::new(b).ok());
                        let state = match (f, view) {
                            (Ok(_), Some(_)) => FilterState::Present,
                            (Ok(_), None) => FilterState::Invalid("not a valid bitset".into()),
                            (Err(no), _) => no.clone().into(),
                        };
                        RowGroupAnswer {
                            row_group: rg,
                            num_rows: self.num_rows[rg],
                            answers: encoded
                                .iter()
                                .map(|v| {
                                    crate::read::answer::decide(v, &state, |h| {
                                        view.is_none_or(|v| v.contains_hash(h))
                                    })
                                })
                                .collect(),
                            filter: state,
                        }
                    })
                    .collect(),
            );
        }
        Ok(decide(predicate, self.num_rows.len(), answers))
    }

    /// The columns these filters cover.
    pub fn columns(&self) -> Vec<&str> {
        self.by_column.keys().map(|s| s.as_str()).collect()
    }
}

/// The leaf columns a predicate mentions, each once.
pub fn predicate_columns(p: &Predicate) -> Vec<&str> {
    let mut out: Vec<&str> = leaves(p).into_iter().map(|(c, _)| c).collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(feature = "async")]
impl<R: parquet::arrow::async_reader::AsyncFileReader> ParquetFile<R> {
    /// [`ParquetFile::prune`], asynchronously, with the given I/O policy (see
    /// [`REMOTE_POLICY`](crate::read::async_driver::REMOTE_POLICY) for object stores).
    pub async fn prune_async(
        &mut self,
        predicate: &Predicate,
        policy: IoPolicy,
    ) -> Result<Pruned, Error> {
        // Every leaf's reads go out in the same waves: an AND/OR over k columns costs the round
        // trips of one column.
        let jobs = self.leaf_jobs(predicate, policy)?;
        let all = vec![true; self.metadata().num_row_groups()];
        Ok(self.drive_among(predicate, jobs, &all).await)
    }

    /// [`ParquetFile::prune_async`] for the row groups `wanted` marks (`wanted[rg]`) only:
    /// the filters of the others are not read, and they are kept ("not probed"). For an
    /// engine that has already ruled row groups out by other means (min/max statistics) and
    /// should not pay for their filters. Row groups past the end of `wanted` are not probed.
    pub async fn prune_async_among(
        &mut self,
        predicate: &Predicate,
        policy: IoPolicy,
        wanted: &[bool],
    ) -> Result<Pruned, Error> {
        let jobs = self.leaf_jobs(predicate, policy)?;
        Ok(self.drive_among(predicate, jobs, wanted).await)
    }

    /// [`ParquetFile::prune_async_among`] with a [`PreparedPredicate`]: its key sets hashed
    /// once for every file pruned with it (a scan's files, opened concurrently, share it).
    pub async fn prune_prepared_among(
        &mut self,
        prepared: &PreparedPredicate,
        policy: IoPolicy,
        wanted: &[bool],
    ) -> Result<Pruned, Error> {
        let jobs = self.prepared_jobs(prepared, policy)?;
        Ok(self.drive_among(&prepared.predicate, jobs, wanted).await)
    }

    async fn drive_among(
        &mut self,
        predicate: &Predicate,
        mut jobs: Vec<crate::read::plan::ProbeJob>,
        wanted: &[bool],
    ) -> Pruned {
        let n = self.metadata().num_row_groups();
        for job in &mut jobs {
            for rg in (0..n).filter(|&rg| !wanted.get(rg).copied().unwrap_or(false)) {
                job.invalidate(rg, "not probed: ruled out before the filters".into());
            }
        }
        self.drive(&mut jobs).await;
        let answers = jobs
            .into_iter()
            .map(crate::read::plan::ProbeJob::finish)
            .collect();
        decide(predicate, n, answers)
    }
}
