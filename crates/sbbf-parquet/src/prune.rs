//! Row-group pruning for query engines: which row groups can a predicate skip?
//!
//! A row group is skipped only when the filters prove the predicate false for it: `col = v`
//! when `v` is absent; `col IN (...)` when every element is absent; AND when any child is
//! proven false; OR when every child is. Anything the filters cannot decide keeps the row
//! group.

use crate::io::IoPolicy;
use crate::probe::{Answer, FilterState, RowGroupAnswer};
use crate::stored::Encoded;
use crate::stored::{coerce, Literal};
use crate::{Error, ParquetFile};
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

    fn columns<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Predicate::Eq(c, _) | Predicate::In(c, _) => out.push(c),
            Predicate::And(ps) | Predicate::Or(ps) => ps.iter().for_each(|p| p.columns(out)),
        }
    }
}

/// The outcome of pruning one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// Row groups to read, ascending: pass to arrow-rs'
    /// `ParquetRecordBatchReaderBuilder::with_row_groups`.
    pub row_groups: Vec<usize>,
    /// Why each row group was kept or skipped, indexed by row group.
    pub reasons: Vec<String>,
}

impl Pruned {
    /// Row groups that can be skipped.
    pub fn skipped(&self) -> Vec<usize> {
        (0..self.reasons.len())
            .filter(|i| !self.row_groups.contains(i))
            .collect()
    }
}

/// Per row group: proven false (with why), or possibly true (with why not provable).
#[derive(Debug, Clone)]
enum Verdict {
    False(String),
    Maybe(String),
}

/// Answers one leaf (`column`, literals) for every row group.
type LeafAnswers<'a> = dyn Fn(&str, &[Literal]) -> Result<Vec<RowGroupAnswer>, Error> + 'a;

/// Evaluates leaves with answers from any source (file reads or cached filters).
fn evaluate(
    p: &Predicate,
    num_row_groups: usize,
    answers: &LeafAnswers<'_>,
) -> Result<Vec<Verdict>, Error> {
    match p {
        Predicate::Eq(c, v) => leaf(c, std::slice::from_ref(v), answers),
        Predicate::In(c, vs) => leaf(c, vs, answers),
        Predicate::And(ps) => {
            let mut acc = vec![Verdict::Maybe("AND of nothing".into()); num_row_groups];
            for child in ps {
                for (a, v) in acc
                    .iter_mut()
                    .zip(evaluate(child, num_row_groups, answers)?)
                {
                    if let (Verdict::Maybe(_), Verdict::False(_)) = (&*a, &v) {
                        *a = v;
                    } else if let (Verdict::Maybe(_), Verdict::Maybe(_)) = (&*a, &v) {
                        *a = v;
                    }
                }
            }
            Ok(acc)
        }
        Predicate::Or(ps) => {
            let mut acc: Vec<Option<Verdict>> = vec![None; num_row_groups];
            for child in ps {
                for (a, v) in acc
                    .iter_mut()
                    .zip(evaluate(child, num_row_groups, answers)?)
                {
                    *a = Some(match (a.take(), v) {
                        (None, v) => v,
                        (Some(m @ Verdict::Maybe(_)), _) => m,
                        (Some(Verdict::False(_)), m @ Verdict::Maybe(_)) => m,
                        (Some(Verdict::False(x)), Verdict::False(y)) => {
                            Verdict::False(format!("{x}; {y}"))
                        }
                    });
                }
            }
            Ok(acc
                .into_iter()
                .map(|v| v.unwrap_or_else(|| Verdict::False("an empty OR is false".into())))
                .collect())
        }
    }
}

fn leaf(
    column: &str,
    values: &[Literal],
    answers: &LeafAnswers<'_>,
) -> Result<Vec<Verdict>, Error> {
    let rgs = answers(column, values)?;
    Ok(rgs
        .into_iter()
        .map(|rg| {
            if !rg.answers.is_empty() && rg.answers.iter().all(|a| *a == Answer::Absent) {
                Verdict::False(format!("`{column}`: every value is absent"))
            } else if values.is_empty() {
                Verdict::False(format!("`{column}` IN () is false"))
            } else {
                let why = match &rg.filter {
                    FilterState::Missing => format!("`{column}` has no Bloom filter"),
                    FilterState::Invalid(r) => format!("`{column}` filter unusable: {r}"),
                    FilterState::Present => format!("`{column}` may hold a value"),
                };
                Verdict::Maybe(why)
            }
        })
        .collect())
}

/// Evaluates `p` with leaf answers from `answers` (called once per leaf, in pre-order).
#[cfg(feature = "async")]
pub(crate) fn evaluate_with(
    p: &Predicate,
    num_row_groups: usize,
    answers: &LeafAnswers<'_>,
) -> Result<Pruned, Error> {
    Ok(finish(evaluate(p, num_row_groups, answers)?))
}

fn finish(verdicts: Vec<Verdict>) -> Pruned {
    let mut row_groups = Vec::new();
    let mut reasons = Vec::new();
    for (i, v) in verdicts.into_iter().enumerate() {
        match v {
            Verdict::False(why) => reasons.push(format!("skip: {why}")),
            Verdict::Maybe(why) => {
                row_groups.push(i);
                reasons.push(format!("read: {why}"));
            }
        }
    }
    Pruned {
        row_groups,
        reasons,
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
        let n = self.metadata().num_row_groups();
        let answers = |column: &str, values: &[Literal]| -> Result<Vec<RowGroupAnswer>, Error> {
            let col = self.column_index(column)?;
            let ty = &self.columns()[col];
            let encoded: Vec<Encoded> = values.iter().map(|l| coerce(ty, l)).collect();
            Ok(self.probe(col, &encoded, IoPolicy::default()))
        };
        Ok(finish(evaluate(predicate, n, &answers)?))
    }

    /// Reads the whole filters of the columns `predicate` mentions, once, to prune many
    /// predicates from memory.
    pub fn load_filters(&self, columns: &[&str]) -> Result<Filters, Error> {
        let mut by_column = BTreeMap::new();
        for c in columns {
            let col = self.column_index(c)?;
            let mut job = self.whole_job(col, IoPolicy::default());
            while let Some(ranges) = job.next_reads() {
                job.supply(crate::io::Fetched::read(self.reader(), &ranges));
            }
            by_column.insert(c.to_string(), (col, job.into_filters()));
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
    columns: Vec<crate::column::ColumnType>,
    num_rows: Vec<i64>,
    by_column: BTreeMap<String, (usize, Vec<Result<Bytes, FilterState>>)>,
}

impl Filters {
    /// Prunes with the cached filters; a column that was not loaded is an error.
    pub fn prune(&self, predicate: &Predicate) -> Result<Pruned, Error> {
        let answers = |column: &str, values: &[Literal]| -> Result<Vec<RowGroupAnswer>, Error> {
            let (col, filters) =
                self.by_column
                    .get(column)
                    .ok_or_else(|| Error::UnknownColumn {
                        column: column.to_string(),
                        candidates: self.by_column.keys().cloned().collect(),
                    })?;
            let ty = &self.columns[*col];
            let encoded: Vec<Encoded> = values.iter().map(|l| coerce(ty, l)).collect();
            Ok(filters
                .iter()
                .enumerate()
                .map(|(rg, f)| {
                    let state = match f {
                        Ok(_) => FilterState::Present,
                        Err(s) => s.clone(),
                    };
                    let view = f.as_ref().ok().and_then(|b| SbbfRef::new(b).ok());
                    RowGroupAnswer {
                        row_group: rg,
                        num_rows: self.num_rows[rg],
                        answers: encoded
                            .iter()
                            .map(|v| {
                                crate::probe::decide(v, &state, |h| {
                                    view.map(|v| v.contains_hash(h)).unwrap_or(true)
                                })
                            })
                            .collect(),
                        filter: state,
                    }
                })
                .collect())
        };
        Ok(finish(evaluate(predicate, self.num_rows.len(), &answers)?))
    }

    /// The columns these filters cover.
    pub fn columns(&self) -> Vec<&str> {
        self.by_column.keys().map(|s| s.as_str()).collect()
    }
}

/// The leaf columns a predicate mentions, each once.
pub fn predicate_columns(p: &Predicate) -> Vec<&str> {
    let mut out = Vec::new();
    p.columns(&mut out);
    out.sort();
    out.dedup();
    out
}
