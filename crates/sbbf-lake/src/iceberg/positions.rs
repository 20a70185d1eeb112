//! Iceberg v2 position deletes, read when asked: which position delete files apply to each
//! data file (from scan planning, `plan`), and the positions they delete in it. A delete file
//! is a Parquet file of (`file_path`, `pos`) rows for any number of data files: each is read
//! once per snapshot and kept.

use super::damaged;
use super::read_once::ReadOnce;
use crate::StoreRoot;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use sbbf_parquet::Error;
use std::collections::HashMap;

/// The positions one delete file deletes, by the data file path it names.
type Parsed = HashMap<String, Vec<u64>>;

/// The position delete files of a snapshot's data files.
#[derive(Debug, Clone, Default)]
pub(crate) struct Positions {
    /// Delete file paths by the data file path they may apply to (as the manifests write
    /// both).
    pub(crate) files: HashMap<String, Vec<String>>,
    /// Delete files read so far.
    read: ReadOnce<Parsed>,
    /// A table read in another folder than its metadata names: delete files name data files
    /// where it was written, and are keyed where they are read.
    pub(crate) moved: Option<super::moved::Moved>,
}

impl Positions {
    /// The positions the delete files of `file` delete in it, ascending; `None` when none
    /// applies. A position at or past `rows` (the file's row count, when given) is an error.
    pub(crate) async fn deleted_rows(
        &self,
        root: &StoreRoot,
        table: &str,
        file: &str,
        rows: Option<u64>,
    ) -> Result<Option<Vec<u64>>, Error> {
        let Some(deletes) = self.files.get(file) else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for d in deletes {
            let moved = self.moved.as_ref();
            let read = async { read_positions(root.get(d).await?, table, d, moved) };
            let parsed = self.read.get(d, read).await?;
            if let Some(p) = parsed.get(file) {
                out.extend_from_slice(p);
            }
        }
        out.sort_unstable();
        out.dedup();
        if let (Some(rows), Some(&last)) = (rows, out.last()) {
            if last >= rows {
                return Err(damaged(
                    table,
                    format!(
                        "a position delete deletes row {last} of {file}, which has {rows} rows"
                    ),
                ));
            }
        }
        Ok(Some(out))
    }
}

/// The (`file_path`, `pos`) rows of a position delete file, grouped by data file path.
fn read_positions(
    bytes: bytes::Bytes,
    table: &str,
    url: &str,
    moved: Option<&super::moved::Moved>,
) -> Result<HashMap<String, Vec<u64>>, Error> {
    let bad = |reason: String| damaged(table, format!("position delete file {url}: {reason}"));
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| bad(e.to_string()))?;
    let schema = builder.parquet_schema();
    let leaf = |name: &str| {
        (0..schema.num_columns())
            .find(|&i| schema.column(i).path().parts() == [name])
            .ok_or_else(|| bad(format!("no top-level column `{name}`")))
    };
    let (path_leaf, pos_leaf) = (leaf("file_path")?, leaf("pos")?);
    let mask = ProjectionMask::leaves(schema, [path_leaf, pos_leaf]);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| bad(e.to_string()))?;
    let mut out: HashMap<String, Vec<u64>> = HashMap::new();
    for batch in reader {
        let batch = batch.map_err(|e| bad(e.to_string()))?;
        let (Some(paths), Some(pos)) = (
            batch.column_by_name("file_path"),
            batch.column_by_name("pos"),
        ) else {
            return Err(bad("its columns could not be read".into()));
        };
        let pos = pos
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| bad(format!("`pos` is {}, not a long", pos.data_type())))?;
        let path_at = |i: usize| -> Option<&str> {
            if paths.is_null(i) {
                return None;
            }
            if let Some(a) = paths.as_string_opt::<i32>() {
                return Some(a.value(i));
            }
            if let Some(a) = paths.as_string_opt::<i64>() {
                return Some(a.value(i));
            }
            paths.as_string_view_opt().map(|a| a.value(i))
        };
        for i in 0..batch.num_rows() {
            let (Some(p), false) = (path_at(i), pos.is_null(i)) else {
                return Err(bad(format!("row {i} has no file_path or no pos")));
            };
            let n = u64::try_from(pos.value(i))
                .map_err(|_| bad(format!("negative position {}", pos.value(i))))?;
            // Keyed as the data files' URLs are (`plan::location_url`).
            let p = super::moved::at(moved, p);
            out.entry(super::plan::location_url(&p))
                .or_default()
                .push(n);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use std::sync::Arc;

    fn delete_file(paths: &[&str], pos: &[i64]) -> bytes::Bytes {
        let batch = RecordBatch::try_from_iter([
            (
                "file_path",
                Arc::new(StringArray::from(paths.to_vec())) as ArrayRef,
            ),
            ("pos", Arc::new(Int64Array::from(pos.to_vec())) as ArrayRef),
        ])
        .unwrap();
        let mut out = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        out.into()
    }

    #[test]
    fn positions_by_data_file() {
        let got =
            read_positions(delete_file(&["a", "a", "b"], &[0, 7, 3]), "t", "d", None).unwrap();
        assert_eq!(got["a"], [0, 7]);
        assert_eq!(got["b"], [3]);
        let e = read_positions(delete_file(&["a"], &[-1]), "t", "d", None).unwrap_err();
        assert!(e.to_string().contains("negative position"), "{e}");
        let e = read_positions(
            bytes::Bytes::from_static(b"PAR1 not parquet"),
            "t",
            "d",
            None,
        );
        assert!(e.is_err());
    }
}
