//! Row-group pruning for query engines: which row groups can a predicate skip?
//!
//! A row group is skipped only when the filters prove the predicate false for it: `col = v`
//! when `v` is absent; `col IN (...)` when every element is absent; AND when any child is
//! proven false; OR when every child is. Anything the filters cannot decide keeps the row
//! group.

use crate::format::column::ColumnType;
use crate::io::IoPolicy;
use crate::read::answer::{Answer, FilterState, RowGroupAnswer};
use crate::values::stored::{coerce, Encoded, Literal};
use crate::{Error, NoFilter, ParquetFile};
use bytes::Bytes;
use parquet::file::reader::ChunkReader;
use sbbf::SbbfRef;
use std::collections::BTreeMap;

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
        leaves(predicate)
            .into_iter()
            .map(|(column, literals)| {
                let col = self.column_index(column)?;
                let ty = &self.columns()[col];
                let (hashes, any) =
                    crate::read::plan::AnyOf::encode(literals.iter().map(|l| coerce(ty, l)));
                Ok(self.any_job(col, hashes, any, policy))
            })
            .collect()
    }
}

impl<R: ChunkReader> ParquetFile<R> {
    /// Which row groups `predicate` needs, reading only footer and filter bytes.
    ///
    /// ```
    /// use sbbf_parquet::{ParquetFile, prune::Predicate, stored::Literal};
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
        let mut jobs = self.leaf_jobs(predicate, IoPolicy::default())?;
        crate::read::plan::run(self.reader(), &self.io, &mut jobs);
        let answers = jobs
            .into_iter()
            .map(crate::read::plan::ProbeJob::finish)
            .collect();
        Ok(decide(predicate, self.metadata().num_row_groups(), answers))
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
        let mut jobs = self.leaf_jobs(predicate, policy)?;
        self.drive(&mut jobs).await;
        let answers = jobs
            .into_iter()
            .map(crate::read::plan::ProbeJob::finish)
            .collect();
        let n = self.metadata().num_row_groups();
        Ok(decide(predicate, n, answers))
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
        let n = self.metadata().num_row_groups();
        let mut jobs = self.leaf_jobs(predicate, policy)?;
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
        Ok(decide(predicate, n, answers))
    }
}
