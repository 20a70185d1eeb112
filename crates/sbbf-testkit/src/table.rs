//! The small table the tests write for themselves: a file of ids and their names, in row
//! groups of a chosen size, with arrow-rs' Bloom filters on the columns asked for.

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use std::path::Path;
use std::sync::Arc;

/// The Bloom filter arrow-rs writes for one column of an [`Ids`] file, in every row group.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Filter {
    /// The distinct values the filter is sized for (arrow-rs folds it down afterwards).
    pub ndv: u64,
    /// The false-positive probability it is sized for; `None` leaves it unset (arrow-rs'
    /// default, 5 %).
    pub fpp: Option<f64>,
}

/// A file of two required columns, `id` (INT64) and `name` (a string), one row per id.
#[derive(Clone, Copy, Debug)]
pub struct Ids<'a> {
    /// The first id: the file holds ids `first .. first + rows`, in order.
    pub first: i64,
    /// How many rows.
    pub rows: usize,
    /// Rows per row group (arrow-rs' maximum row group size; the last group may hold fewer).
    pub row_group_rows: usize,
    /// Each row's name: this prefix followed by its id (`"n"`: id 1005 is named `n1005`).
    pub name_prefix: &'a str,
    /// The filter on `id`, or none.
    pub id_filter: Option<Filter>,
    /// The filter on `name`, or none.
    pub name_filter: Option<Filter>,
}

/// Writes `table` to `path` (created or replaced) with arrow-rs' `ArrowWriter`, in one batch.
///
/// Filters are enabled per column, never as the default for all columns (a column's own setting
/// falls back to the default when it disables, so a column without a filter is one that is
/// never enabled). The same arguments always give the same bytes.
///
/// A table index covers a file only once its change time is 2 s old:
/// [`settle`](crate::settle) waits for that.
///
/// # Panics
///
/// When the file cannot be written, or `row_group_rows` is 0.
pub fn write_ids(path: &Path, table: &Ids) {
    let ids: Vec<i64> = (0..table.rows as i64).map(|i| table.first + i).collect();
    let names: Vec<String> = ids
        .iter()
        .map(|i| format!("{}{i}", table.name_prefix))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(StringArray::from(names)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
    let mut props =
        WriterProperties::builder().set_max_row_group_row_count(Some(table.row_group_rows));
    for (col, filter) in [("id", table.id_filter), ("name", table.name_filter)] {
        let Some(filter) = filter else {
            continue;
        };
        props = props
            .set_column_bloom_filter_enabled(col.into(), true)
            .set_column_bloom_filter_max_ndv(col.into(), filter.ndv);
        if let Some(fpp) = filter.fpp {
            props = props.set_column_bloom_filter_fpp(col.into(), fpp);
        }
    }
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut w = ArrowWriter::try_new(file, schema, Some(props.build())).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}
