//! A lake table's rows as Arrow: the one rule every reader of a table follows, written once.
//!
//! A table's data files do not hold its rows as the table gives them: a Delta table's
//! partition values are in its log, not in the files; deletes (Delta deletion vectors,
//! Iceberg position and equality deletes) remove rows the files still hold; a file names a
//! column by field id (Iceberg, Delta column mapping's `id` mode), by physical name (Delta
//! column mapping), or by a name the table has since changed; fields inside a nested column
//! are named likewise; and a column added after a file was written is not in that file.
//!
//! The pieces, each used by the DataFusion scan (which plans its files with them) and by
//! [`read_rows`] (Python's `read_table`, and any reader that wants the rows without a query
//! engine):
//! - [`LakeColumn::held_in`]: which field of a file's schema holds a column;
//! - [`Snapshot::partition_values`]: a Delta file's partition values from the log, as Arrow;
//! - [`rows_left`]: what a file's deletes leave of each of its row groups;
//! - [`unheld_type`]: the Arrow type of a column no file holds (the table's schema types it).

use crate::arrow_types::arrow_type;
use crate::LakeError;
use crate::{DataFile, Format, LakeColumn, Snapshot, StoreRoot};
use arrow_array::{new_null_array, ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use arrow_cast::cast::{cast_with_options, CastOptions};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use futures::{StreamExt, TryStreamExt};
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::arrow::async_reader::ParquetRecordBatchStreamBuilder;
use parquet::arrow::{ProjectionMask, PARQUET_FIELD_ID_META_KEY};
use sbbf_parquet::source::object::ObjectReader;
use sbbf_parquet::Error;
use std::collections::HashMap;
use std::sync::Arc;

/// Rows per batch of a file read for the log's values alone (no column of the file asked).
const LOG_ONLY_BATCH: usize = 64 << 10;

/// Files whose footers and rows are read at once by [`read_rows`] (each a request or two on
/// an object store).
const FILES_IN_FLIGHT: usize = 16;

/// The field id a file's field carries (`PARQUET:field_id`), if any.
pub fn field_id(f: &Field) -> Option<i64> {
    f.metadata().get(PARQUET_FIELD_ID_META_KEY)?.parse().ok()
}

impl LakeColumn {
    /// The top-level field of a data file's Arrow schema that holds this column, with its
    /// index: the one with the column's field id where the file's fields carry ids, else the
    /// one with its physical name (Delta column mapping), else the one with its name. `None`:
    /// the file does not hold the column (written before it was added). Matching by name
    /// alone would read a renamed column as null in older files, or another column's values
    /// where a name was dropped and used again.
    ///
    /// ```
    /// use arrow_schema::{ArrowError, DataType, Field, Schema};
    /// use sbbf_lake::LakeColumn;
    /// use std::collections::HashMap;
    /// let id = |i: i64| HashMap::from([("PARQUET:field_id".to_string(), i.to_string())]);
    /// // The file was written when column 2 was still called `old`.
    /// let file = Schema::new(vec![
    ///     Field::new("id", DataType::Int64, false).with_metadata(id(1)),
    ///     Field::new("old", DataType::Utf8, true).with_metadata(id(2)),
    /// ]);
    /// let renamed = LakeColumn { name: "new".into(), field_id: Some(2), ..Default::default() };
    /// assert_eq!(renamed.held_in(&file).map(|(i, f)| (i, f.name().as_str())), Some((1, "old")));
    /// let added = LakeColumn { name: "old".into(), field_id: Some(3), ..Default::default() };
    /// assert!(added.held_in(&file).is_none());
    /// ```
    pub fn held_in<'a>(&self, file: &'a Schema) -> Option<(usize, &'a Field)> {
        let has_ids = file.fields().iter().any(|f| field_id(f).is_some());
        if let (Some(id), true) = (self.field_id, has_ids) {
            return file
                .fields()
                .iter()
                .enumerate()
                .find(|(_, f)| field_id(f) == Some(id))
                .map(|(i, f)| (i, f.as_ref()));
        }
        let name = self.physical.as_deref().unwrap_or(&self.name);
        let i = file.index_of(name).ok()?;
        Some((i, file.field(i)))
    }
}

impl Snapshot {
    /// Whether the data files hold column `c`: all but a Delta table's partition columns,
    /// whose values are in the log. (Iceberg's partition fields are computed from columns
    /// the files hold, and may share their names.)
    pub fn in_files(&self, c: &LakeColumn) -> bool {
        !(self.format == Format::Delta && self.partition_columns.contains(&c.name))
    }

    /// `rows` copies of `file`'s value of the Delta partition column `column` (the log's
    /// text), typed `ty`: a null where the log has none, or an empty string (Delta writes a
    /// null, an empty string and empty binary alike as null). A value that is no `ty` is an
    /// error, never a null.
    pub fn partition_values(
        &self,
        file: &DataFile,
        column: &str,
        ty: &DataType,
        rows: usize,
    ) -> Result<ArrayRef, Error> {
        let text = file
            .partition
            .iter()
            .find(|(k, _)| k == column)
            .and_then(|(_, v)| v.as_deref());
        typed_values(text, ty, rows).map_err(|e| {
            self.data_file_error(
                file,
                format!("partition value {text:?} of column `{column}` is no {ty}"),
                e,
            )
        })
    }

    fn data_file_error(
        &self,
        file: &DataFile,
        reason: String,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error::from(LakeError::DataFile {
            format: self.format.name(),
            table: self.location.clone(),
            file: file.url.clone(),
            reason,
            source: Some(Box::new(source)),
        })
    }

    fn data_file_refusal(&self, file: &DataFile, reason: String) -> Error {
        Error::from(LakeError::DataFile {
            format: self.format.name(),
            table: self.location.clone(),
            file: file.url.clone(),
            reason,
            source: None,
        })
    }

    fn unsupported(&self, feature: String) -> Error {
        Error::from(LakeError::Unsupported {
            format: self.format.name(),
            table: self.location.clone(),
            feature,
        })
    }
}

/// `rows` copies of a value given as text (Delta's partition values), typed `ty`: null for
/// none or an empty text.
fn typed_values(text: Option<&str>, ty: &DataType, rows: usize) -> Result<ArrayRef, ArrowError> {
    let text = match text {
        None | Some("") => return Ok(new_null_array(ty, rows)),
        Some(t) => t,
    };
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(&StringArray::from(vec![text; rows]), ty, &strict)
}

/// The Arrow type of column `c` of `format`'s table `table` where no data file says how it is held (a Delta
/// partition column, a column added after every file was written): the table's schema
/// types it ([`arrow_type`]). A type that rule does not give (a nested type no file holds
/// yet) is refused, never guessed.
pub fn unheld_type(format: Format, table: &str, c: &LakeColumn) -> Result<DataType, Error> {
    c.data_type
        .as_deref()
        .and_then(|t| arrow_type(format, t))
        .ok_or_else(|| {
            Error::from(LakeError::Unsupported {
                format: format.name(),
                table: table.to_string(),
                feature: format!(
                    "column `{}` of type {}, which no data file holds yet",
                    c.name,
                    c.data_type.as_deref().unwrap_or("unknown")
                ),
            })
        })
}

/// What a file's deletes leave of one of its row groups.
#[derive(Debug, Clone, PartialEq)]
pub enum RowsLeft {
    /// Every row.
    All,
    /// No row: the row group need not be read.
    None,
    /// These rows (counted from the row group's first).
    Some(RowSelection),
}

/// What deleting the rows at file positions `deleted` (ascending) leaves of each row group,
/// the row groups holding `row_groups[i]` rows each, in file order.
///
/// ```
/// use sbbf_lake::rows::{rows_left, RowsLeft};
/// let left = rows_left(&[3, 2, 4], &[3, 4, 6]);
/// assert_eq!(left[0], RowsLeft::All);
/// assert_eq!(left[1], RowsLeft::None);
/// assert!(matches!(&left[2], RowsLeft::Some(s) if s.row_count() == 3));
/// ```
pub fn rows_left(row_groups: &[u64], deleted: &[u64]) -> Vec<RowsLeft> {
    let mut rest = deleted;
    let mut start = 0u64;
    row_groups
        .iter()
        .map(|&rows| {
            let end = start.saturating_add(rows);
            let here = rest.partition_point(|&d| d < end);
            let (gone, after) = rest.split_at(here);
            rest = after;
            let gone: Vec<u64> = gone.iter().filter(|&&d| d >= start).copied().collect();
            let left = match gone.len() as u64 {
                0 => RowsLeft::All,
                n if n >= rows => RowsLeft::None,
                _ => RowsLeft::Some(kept_rows(start, end, &gone)),
            };
            start = end;
            left
        })
        .collect()
}

/// The selection of the rows `start..end` without those in `gone` (ascending, distinct, all
/// in that range), counted from `start`.
fn kept_rows(start: u64, end: u64, gone: &[u64]) -> RowSelection {
    let mut selectors = Vec::with_capacity(gone.len() * 2 + 1);
    let mut at = start;
    for &d in gone {
        if d < at {
            continue;
        }
        if d > at {
            selectors.push(RowSelector::select((d - at) as usize));
        }
        selectors.push(RowSelector::skip(1));
        at = d + 1;
    }
    if at < end {
        selectors.push(RowSelector::select((end - at) as usize));
    }
    RowSelection::from(selectors)
}

/// What [`read_rows`] reads.
#[derive(Debug, Clone, Default)]
pub struct RowsAsked {
    /// The table's columns to read, by the table's names (`None`: every column). They come
    /// back in the table's order.
    pub columns: Option<Vec<String>>,
    /// The row groups to read of a file, by its URL ([`DataFile::url`]): a file not named is
    /// read whole, a file named with no row group is not read at all (its footer neither).
    /// A pruning's answer (Bloom filters, the table's index) goes here.
    pub row_groups: HashMap<String, Vec<usize>>,
}

/// A table's rows as [`read_rows`] gives them.
#[derive(Debug, Clone)]
pub struct RowsRead {
    /// The columns read, as the table types them.
    pub schema: SchemaRef,
    /// The rows, file after file in the snapshot's order.
    pub batches: Vec<RecordBatch>,
}

/// How a file holds a column of the table.
struct Held {
    /// The index of its top-level field in the file's schema.
    at: usize,
    /// That field's name in the file.
    file_name: String,
    /// The field as the table names it and what is inside it.
    as_table: Field,
}

/// One data file opened: its footer read, how it holds each column asked.
struct Opened {
    file: usize,
    builder: ParquetRecordBatchStreamBuilder<ObjectReader>,
    /// For each column asked, how the file holds it (`None`: it does not).
    held: Vec<Option<Held>>,
    relabels: Vec<Option<crate::Relabel>>,
}

/// The rows of `snap`'s data files (in `root`, the table's store) as the table gives them:
/// the columns asked in the table's order and under its names, matched in each file by
/// [`LakeColumn::held_in`] (nested fields relabelled to the table's names), Delta partition
/// columns from the log, a column a file does not hold as nulls, strings and binaries as
/// their plain types whichever layout a writer chose, and without the rows the table's
/// deletes delete. Files are read 16 at a time; rows come back in the
/// snapshot's file order.
///
/// Refused, never read as nulls: a file without a column whose values the table keeps
/// elsewhere (an Iceberg identity partition's source column, or a column with an initial
/// default), and deletes this build does not read.
///
/// ```no_run
/// # async fn demo() -> Result<(), sbbf_parquet::Error> {
/// use sbbf_lake::rows::{read_rows, RowsAsked};
/// use sbbf_lake::{StoreRoot, Table};
/// let table = Table::open("events/", &Default::default()).await?;
/// let snap = table.snapshot().expect("a Delta or Iceberg table");
/// let asked = RowsAsked { columns: Some(vec!["id".into()]), ..Default::default() };
/// let read = read_rows(snap, &StoreRoot::local(), &asked).await?;
/// println!("{} rows", read.batches.iter().map(|b| b.num_rows()).sum::<usize>());
/// # Ok(()) }
/// ```
pub async fn read_rows(
    snap: &Snapshot,
    root: &StoreRoot,
    asked: &RowsAsked,
) -> Result<RowsRead, Error> {
    let columns = asked_columns(snap, asked.columns.as_deref())?;
    let wanted: Vec<usize> = snap
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| asked.row_groups.get(&f.url).is_none_or(|g| !g.is_empty()))
        .map(|(i, _)| i)
        .collect();
    let opened: Vec<Opened> = futures::stream::iter(wanted)
        .map(|i| open(snap, root, i, &columns))
        .buffered(FILES_IN_FLIGHT)
        .try_collect()
        .await?;
    // Every file ruled out: a nested column (which the table's schema does not type as
    // Arrow) is typed by a footer all the same, so that no match reads as an empty table.
    let typing = match opened.is_empty() && !snap.files.is_empty() {
        true if columns
            .iter()
            .any(|c| snap.in_files(c) && unheld_type(snap.format, &snap.location, c).is_err()) =>
        {
            vec![open(snap, root, 0, &columns).await?]
        }
        _ => Vec::new(),
    };
    let typed_by = if opened.is_empty() { &typing } else { &opened };
    let schema = Arc::new(table_schema(snap, &columns, typed_by)?);
    let batches: Vec<Vec<RecordBatch>> = futures::stream::iter(opened)
        .map(|o| read_file(snap, root, asked, &columns, &schema, o))
        .buffered(FILES_IN_FLIGHT)
        .try_collect()
        .await?;
    Ok(RowsRead {
        schema,
        batches: batches.into_iter().flatten().collect(),
    })
}

/// The table's columns asked (every column for `None`), in the table's order; a name the
/// table does not have is refused with its columns.
fn asked_columns<'a>(
    snap: &'a Snapshot,
    asked: Option<&[String]>,
) -> Result<Vec<&'a LakeColumn>, Error> {
    let Some(asked) = asked else {
        return Ok(snap.columns.iter().collect());
    };
    if let Some(missing) = asked
        .iter()
        .find(|n| !snap.columns.iter().any(|c| &c.name == *n))
    {
        let names: Vec<&str> = snap.columns.iter().map(|c| c.name.as_str()).collect();
        return Err(Error::from(LakeError::NoSuchColumn {
            format: snap.format.name(),
            table: snap.location.clone(),
            reason: format!(
                "no column `{missing}`; its columns are {}",
                names.join(", ")
            ),
        }));
    }
    Ok(snap
        .columns
        .iter()
        .filter(|c| asked.contains(&c.name))
        .collect())
}

/// File `i` of `snap` with its footer read, and how it holds `columns`.
async fn open(
    snap: &Snapshot,
    root: &StoreRoot,
    i: usize,
    columns: &[&LakeColumn],
) -> Result<Opened, Error> {
    let f = &snap.files[i];
    let reader = ObjectReader::new(root.store(), root.path_of(&f.url)?, f.size);
    let builder = ParquetRecordBatchStreamBuilder::new(reader)
        .await
        .map_err(|e| snap.data_file_error(f, "cannot read its footer".into(), e))?;
    let file_schema = Arc::clone(builder.schema());
    let mut held = Vec::with_capacity(columns.len());
    let mut relabels = Vec::with_capacity(columns.len());
    for c in columns {
        let found = snap.in_files(c).then(|| c.held_in(&file_schema)).flatten();
        let Some((at, field)) = found else {
            if snap.in_files(c) && c.missing_not_null {
                return Err(snap.unsupported(format!(
                    "data file {} that does not hold column '{}', whose values for its rows the \
                     table keeps elsewhere (an Iceberg identity partition's source column, in the \
                     file's partition tuple; or the column's initial default): reading the \
                     column as null would be wrong",
                    f.url, c.name
                )));
            }
            held.push(None);
            relabels.push(None);
            continue;
        };
        let relabel = c.relabel(field).map_err(|e| {
            snap.data_file_error(f, format!("column `{}` as it holds it", c.name), e)
        })?;
        let as_table = match &relabel {
            Some(r) => r.field().as_ref().clone(),
            None => field.clone(),
        };
        held.push(Some(Held {
            at,
            file_name: field.name().clone(),
            as_table: as_table.with_name(c.name.clone()),
        }));
        relabels.push(relabel);
    }
    Ok(Opened {
        file: i,
        builder,
        held,
        relabels,
    })
}

/// The Arrow schema of `columns`, typed as the table's schema types them: a primitive
/// column by [`unheld_type`] whichever type or layout its files hold it as (a `long` read
/// from a file written when it was an `int` is a `long`; a string a writer held as a large
/// or view string is a string), so that every reader of the table gives the same types; a
/// nested column (which that rule does not type) as the files hold it, merged across files
/// (a struct with a field more in later files has it), strings and binaries plain.
fn table_schema(
    snap: &Snapshot,
    columns: &[&LakeColumn],
    opened: &[Opened],
) -> Result<Schema, Error> {
    let mut fields = Vec::with_capacity(columns.len());
    for (k, c) in columns.iter().enumerate() {
        let typed = unheld_type(snap.format, &snap.location, c);
        let mut merged: Option<Field> = None;
        for h in opened.iter().filter_map(|o| o.held[k].as_ref()) {
            if typed.is_ok() {
                break;
            }
            let f = h
                .as_table
                .clone()
                .with_data_type(plain(h.as_table.data_type()));
            match &mut merged {
                None => merged = Some(f),
                Some(m) => {
                    // Layouts that do not merge: the first file's, the others cast to it.
                    let _ = m.try_merge(&f);
                }
            }
        }
        let t = match (typed, merged) {
            (Ok(t), _) => t,
            (Err(_), Some(m)) => m.data_type().clone(),
            (Err(e), None) => return Err(e),
        };
        fields.push(Field::new(c.name.clone(), t, true));
    }
    Ok(Schema::new(fields))
}

/// A string or binary view type as the plain type.
fn plain(t: &DataType) -> DataType {
    match t {
        DataType::Utf8View => DataType::Utf8,
        DataType::BinaryView => DataType::Binary,
        t => t.clone(),
    }
}

/// The rows of one opened file, as `schema` gives the table's.
async fn read_file(
    snap: &Snapshot,
    root: &StoreRoot,
    asked: &RowsAsked,
    columns: &[&LakeColumn],
    schema: &SchemaRef,
    o: Opened,
) -> Result<Vec<RecordBatch>, Error> {
    let f = &snap.files[o.file];
    let meta = Arc::clone(o.builder.metadata());
    let sizes: Vec<u64> = meta
        .row_groups()
        .iter()
        .map(|g| u64::try_from(g.num_rows()).unwrap_or(0))
        .collect();
    let total = sizes
        .iter()
        .try_fold(0u64, |a, &n| a.checked_add(n))
        .ok_or_else(|| snap.data_file_refusal(f, "its footer counts more rows than fit".into()))?;
    let mut groups: Vec<usize> = match asked.row_groups.get(&f.url) {
        Some(g) => {
            // Each row group once, in file order; one the file does not have is an error,
            // never a row group less.
            if let Some(&bad) = g.iter().find(|&&g| g >= sizes.len()) {
                return Err(snap.data_file_refusal(
                    f,
                    format!("row group {bad} asked; it has {}", sizes.len()),
                ));
            }
            let mut g = g.clone();
            g.sort_unstable();
            g.dedup();
            g
        }
        None => (0..sizes.len()).collect(),
    };
    let deleted = match f.deletes.any() {
        // Deletes apply and none were read: refused, never read as if there were none.
        true => snap
            .deleted_rows(root, &f.url, Some(total))
            .await?
            .ok_or_else(|| {
                snap.unsupported(format!("deletes of data file {} that were not read", f.url))
            })?,
        false => Vec::new(),
    };
    let left = rows_left(&sizes, &deleted);
    groups.retain(|&g| left[g] != RowsLeft::None);
    let mut selectors: Vec<RowSelector> = Vec::new();
    for &g in &groups {
        match &left[g] {
            RowsLeft::Some(s) => selectors.extend(s.iter().copied()),
            _ => selectors.push(RowSelector::select(sizes[g] as usize)),
        }
    }
    let selection = RowSelection::from(selectors);
    let rows: usize = selection.row_count();
    let roots: Vec<usize> = o.held.iter().flatten().map(|h| h.at).collect();
    let file_batches = match (roots.is_empty(), groups.is_empty()) {
        (_, true) => return Ok(Vec::new()),
        // Only the log's values and nulls: the footer told how many rows there are (in
        // batches of a bounded size, whatever a file holds).
        (true, false) => (0..rows)
            .step_by(LOG_ONLY_BATCH)
            .map(|at| {
                RecordBatch::try_new_with_options(
                    Arc::new(Schema::empty()),
                    vec![],
                    &RecordBatchOptions::new().with_row_count(Some(LOG_ONLY_BATCH.min(rows - at))),
                )
                .map_err(|e| snap.data_file_error(f, "empty batch".into(), e))
            })
            .collect::<Result<Vec<_>, _>>()?,
        (false, false) => {
            let mask = ProjectionMask::roots(o.builder.parquet_schema(), roots);
            o.builder
                .with_projection(mask)
                .with_row_groups(groups)
                .with_row_selection(selection)
                .build()
                .map_err(|e| snap.data_file_error(f, "cannot plan its read".into(), e))?
                .try_collect()
                .await
                .map_err(|e| snap.data_file_error(f, "cannot read its rows".into(), e))?
        }
    };
    file_batches
        .into_iter()
        .map(|b| table_batch(snap, f, columns, schema, &o.held, &o.relabels, &b))
        .collect()
}

/// One batch of a file's (its projected columns) as the table's: each column found by the
/// name the file gives it, relabelled and cast to the table's type; the log's partition
/// values; nulls for what the file does not hold.
fn table_batch(
    snap: &Snapshot,
    f: &DataFile,
    columns: &[&LakeColumn],
    schema: &SchemaRef,
    held: &[Option<Held>],
    relabels: &[Option<crate::Relabel>],
    b: &RecordBatch,
) -> Result<RecordBatch, Error> {
    let n = b.num_rows();
    let mut arrays = Vec::with_capacity(columns.len());
    for (k, c) in columns.iter().enumerate() {
        let ty = schema.field(k).data_type();
        let array = match &held[k] {
            _ if !snap.in_files(c) => snap.partition_values(f, &c.name, ty, n)?,
            None => new_null_array(ty, n),
            Some(h) => {
                let i = b.schema().index_of(&h.file_name).map_err(|e| {
                    snap.data_file_error(f, format!("column `{}` not read", c.name), e)
                })?;
                let mut a = Arc::clone(b.column(i));
                if let Some(r) = &relabels[k] {
                    let mut r = r.clone();
                    r.fit_to(ty);
                    a = r.apply(&a).map_err(|e| {
                        snap.data_file_error(f, format!("column `{}` relabelled", c.name), e)
                    })?;
                }
                if a.data_type() != ty {
                    // A value the table's type cannot hold is an error, never a null.
                    let strict = CastOptions {
                        safe: false,
                        ..Default::default()
                    };
                    a = cast_with_options(&a, ty, &strict).map_err(|e| {
                        snap.data_file_error(
                            f,
                            format!("column `{}` held as {} read as {ty}", c.name, a.data_type()),
                            e,
                        )
                    })?;
                }
                a
            }
        };
        arrays.push(array);
    }
    RecordBatch::try_new_with_options(
        Arc::clone(schema),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(n)),
    )
    .map_err(|e| snap.data_file_error(f, "rows as the table's".into(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which rows of `left` (row groups of `sizes` rows) are kept, row by row.
    fn kept(sizes: &[u64], left: &[RowsLeft]) -> Vec<bool> {
        sizes
            .iter()
            .zip(left)
            .flat_map(|(&n, l)| match l {
                RowsLeft::All => vec![true; n as usize],
                RowsLeft::None => vec![false; n as usize],
                RowsLeft::Some(s) => s
                    .iter()
                    .flat_map(|s| std::iter::repeat_n(!s.skip, s.row_count))
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn deleted_rows_become_each_row_groups_selection() {
        let sizes = [10, 10, 5, 7];
        let gone = [10, 11, 15, 19, 20, 21, 22, 23, 24];
        let left = rows_left(&sizes, &gone);
        assert_eq!(left[0], RowsLeft::All);
        assert!(matches!(left[1], RowsLeft::Some(_)));
        assert_eq!(left[2], RowsLeft::None);
        assert_eq!(left[3], RowsLeft::All);
        let want: Vec<bool> = (0..32).map(|r| !gone.contains(&r)).collect();
        assert_eq!(kept(&sizes, &left), want);
        // Each selection covers its row group's rows exactly.
        for (l, n) in left.iter().zip(sizes) {
            if let RowsLeft::Some(s) = l {
                assert_eq!(s.iter().map(|s| s.row_count as u64).sum::<u64>(), n);
            }
        }
    }

    #[test]
    fn a_partition_value_is_typed_and_an_empty_one_is_null() {
        let d = typed_values(Some("2024-02-29"), &DataType::Date32, 2).unwrap();
        assert_eq!((d.len(), d.null_count()), (2, 0));
        let t = DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("+00:00".into()));
        let ts = typed_values(Some("2024-02-29 10:00:00"), &t, 1).unwrap();
        assert_eq!(ts.null_count(), 0);
        assert_eq!(
            typed_values(Some(""), &DataType::Utf8, 2)
                .unwrap()
                .null_count(),
            2
        );
        assert_eq!(
            typed_values(None, &DataType::Int64, 1)
                .unwrap()
                .null_count(),
            1
        );
        // A value that is no such number is an error, never a null.
        assert!(typed_values(Some("x1"), &DataType::Int64, 1).is_err());
        assert!(typed_values(Some("2024-02-30"), &DataType::Date32, 1).is_err());
    }
}
