//! Iceberg equality deletes, read when asked: which equality delete files apply to each data
//! file (from scan planning, `plan`), and which rows of a data file they delete. A delete file
//! holds values of some of the table's columns (its `equality_ids`, by field id); a data row
//! is deleted when its values in those columns equal one of the delete file's rows, a null
//! equal to a null (spec "Equality Delete Files").
//!
//! Each delete file is read whole, once per snapshot, into a set of keys (arrow's row form,
//! which compares nulls as equal). A data file is read for the delete columns only, by field
//! id; a column the file lacks (added to the table after the file was written) reads as
//! nulls, as Iceberg reads it. The rows found become positions, so the scan applies them as
//! it applies position deletes: a row selection, never a filter that a `LIMIT` could pass.

use super::damaged;
use super::read_once::ReadOnce;
use crate::LakeError;
use crate::StoreRoot;
use arrow_array::{new_null_array, ArrayRef, RecordBatch};
use arrow_cast::cast::{cast_with_options, CastOptions};
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;
use futures::TryStreamExt as _;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::async_reader::ParquetRecordBatchStreamBuilder;
use parquet::arrow::ProjectionMask;
use parquet::schema::types::{SchemaDescriptor, Type};
use sbbf_parquet::source::object::ObjectReader;
use sbbf_parquet::Error;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// One equality delete file: where it is and the field ids its rows are matched on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EqualityFile {
    /// Its location, as a URL (`plan::location_url`).
    pub(crate) url: String,
    /// Its `equality_ids`, in the manifest's order (empty: the manifest gave none).
    pub(crate) ids: Vec<i32>,
}

/// A delete file read: its delete columns' types and its rows as keys.
struct Keys {
    types: Vec<DataType>,
    converter: RowConverter,
    keys: HashSet<Box<[u8]>>,
}

/// The equality delete files of a snapshot's data files.
#[derive(Debug, Clone, Default)]
pub(crate) struct Equalities {
    /// The delete files that apply to each data file, by its URL.
    pub(crate) files: HashMap<String, Vec<Arc<EqualityFile>>>,
    /// Delete files read so far.
    read: ReadOnce<Keys>,
}

impl Equalities {
    /// The rows of the data file `file` (`size` bytes, as the manifest says) its equality
    /// deletes delete: positions, ascending; `None` when none applies.
    pub(crate) async fn deleted_rows(
        &self,
        root: &StoreRoot,
        table: &str,
        file: &str,
        size: u64,
    ) -> Result<Option<Vec<u64>>, Error> {
        let Some(deletes) = self.files.get(file) else {
            return Ok(None);
        };
        let mut keyed = Vec::with_capacity(deletes.len());
        for d in deletes {
            let read = async { read_keys(root.get(&d.url).await?, table, d) };
            keyed.push((d, self.read.get(&d.url, read).await?));
        }
        let mut ids: Vec<i32> = deletes.iter().flat_map(|d| d.ids.iter().copied()).collect();
        ids.sort_unstable();
        ids.dedup();

        let bad = |reason: String| damaged(table, format!("data file {file}: {reason}"));
        let path = root.path_of(file)?;
        let reader = ObjectReader::new(root.store(), path, size)
            .with_coalesce(object_store::OBJECT_STORE_COALESCE_DEFAULT);
        let builder = ParquetRecordBatchStreamBuilder::new(reader)
            .await
            .map_err(|e| bad(e.to_string()))?;
        let schema = builder.parquet_schema();
        if !schema
            .root_schema()
            .get_fields()
            .iter()
            .any(|f| f.get_basic_info().has_id())
        {
            return Err(unsupported(
                table,
                format!("equality deletes on a data file without field ids ({file})"),
            ));
        }
        let at = roots_of(schema, &ids)
            .map_err(|id| nested(table, file, id))?
            .into_iter()
            .zip(&ids)
            .filter_map(|(r, &id)| Some((id, r?)))
            .collect::<Vec<_>>();
        let mut roots: Vec<usize> = at.iter().map(|&(_, r)| r).collect();
        roots.sort_unstable();
        let mask = ProjectionMask::roots(schema, roots.iter().copied());
        let mut stream = builder
            .with_projection(mask)
            .build()
            .map_err(|e| bad(e.to_string()))?;

        let mut out = Vec::new();
        let mut start = 0u64;
        while let Some(batch) = stream.try_next().await.map_err(|e| bad(e.to_string()))? {
            let n = batch.num_rows();
            // The batch holds the projected roots in file order.
            let column = |id: i32| -> Option<ArrayRef> {
                let root = at.iter().find(|&&(i, _)| i == id)?.1;
                let k = roots.binary_search(&root).ok()?;
                Some(Arc::clone(batch.column(k)))
            };
            let mut gone = vec![false; n];
            for (d, keys) in &keyed {
                let arrays = d
                    .ids
                    .iter()
                    .zip(&keys.types)
                    .map(|(&id, t)| match column(id) {
                        Some(a) => cast_to(&a, t).map_err(|e| {
                            bad(format!(
                                "its field {id} ({}) does not compare with the delete file {}'s \
                                 ({t}): {e}",
                                a.data_type(),
                                d.url
                            ))
                        }),
                        None => Ok(new_null_array(t, n)),
                    })
                    .collect::<Result<Vec<_>, Error>>()?;
                let rows = keys
                    .converter
                    .convert_columns(&arrays)
                    .map_err(|e| bad(e.to_string()))?;
                for (i, g) in gone.iter_mut().enumerate() {
                    if !*g && keys.keys.contains(rows.row(i).as_ref()) {
                        *g = true;
                    }
                }
            }
            out.extend(
                gone.iter()
                    .enumerate()
                    .filter(|(_, g)| **g)
                    .map(|(i, _)| start + i as u64),
            );
            start += n as u64;
        }
        Ok(Some(out))
    }
}

fn unsupported(table: &str, feature: String) -> Error {
    LakeError::Unsupported {
        format: super::FORMAT,
        table: table.to_string(),
        feature,
    }
    .into()
}

fn nested(table: &str, file: &str, id: i32) -> Error {
    unsupported(
        table,
        format!("equality deletes on field {id}, a nested field ({file})"),
    )
}

/// `a` as `to`, failing rather than turning a value that does not fit into a null (a null
/// would match a delete row's null).
fn cast_to(a: &ArrayRef, to: &DataType) -> Result<ArrayRef, arrow_schema::ArrowError> {
    if a.data_type() == to {
        return Ok(Arc::clone(a));
    }
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(a, to, &options)
}

/// For each of `ids`, the top-level column of `schema` with that field id (`None`: the file
/// has no such field). An id found only below the top level is an error carrying it.
fn roots_of(schema: &SchemaDescriptor, ids: &[i32]) -> Result<Vec<Option<usize>>, i32> {
    let fields = schema.root_schema().get_fields();
    ids.iter()
        .map(|&id| {
            let top = fields.iter().position(|f| field_id(f) == Some(id));
            match top {
                Some(r) => Ok(Some(r)),
                None if fields.iter().any(|f| holds_id(f, id)) => Err(id),
                None => Ok(None),
            }
        })
        .collect()
}

fn field_id(t: &Type) -> Option<i32> {
    let info = t.get_basic_info();
    info.has_id().then(|| info.id())
}

/// Whether a field below `t` (not `t` itself) has field id `id`.
fn holds_id(t: &Type, id: i32) -> bool {
    match t {
        Type::GroupType { fields, .. } => fields
            .iter()
            .any(|f| field_id(f) == Some(id) || holds_id(f, id)),
        Type::PrimitiveType { .. } => false,
    }
}

/// The rows of an equality delete file's delete columns, as keys.
fn read_keys(bytes: bytes::Bytes, table: &str, file: &EqualityFile) -> Result<Keys, Error> {
    let url = &file.url;
    let bad = |reason: String| damaged(table, format!("equality delete file {url}: {reason}"));
    if file.ids.is_empty() {
        return Err(bad("its manifest entry has no equality_ids".into()));
    }
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| bad(e.to_string()))?;
    let roots = roots_of(builder.parquet_schema(), &file.ids)
        .map_err(|id| nested(table, url, id))?
        .into_iter()
        .zip(&file.ids)
        .map(|(r, id)| r.ok_or_else(|| bad(format!("it has no column with field id {id}"))))
        .collect::<Result<Vec<usize>, Error>>()?;
    let types: Vec<DataType> = roots
        .iter()
        .map(|&r| builder.schema().field(r).data_type().clone())
        .collect();
    let converter = RowConverter::new(types.iter().cloned().map(SortField::new).collect())
        .map_err(|e| bad(e.to_string()))?;
    let mut sorted = roots.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let mask = ProjectionMask::roots(builder.parquet_schema(), sorted.iter().copied());
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| bad(e.to_string()))?;
    let mut keys = HashSet::new();
    for batch in reader {
        let batch: RecordBatch = batch.map_err(|e| bad(e.to_string()))?;
        let arrays: Vec<ArrayRef> = roots
            .iter()
            .map(|r| {
                let k = sorted.binary_search(r).unwrap_or_default();
                Arc::clone(batch.column(k))
            })
            .collect();
        let rows = converter
            .convert_columns(&arrays)
            .map_err(|e| bad(e.to_string()))?;
        keys.extend(rows.iter().map(|r| Box::<[u8]>::from(r.as_ref())));
    }
    Ok(Keys {
        types,
        converter,
        keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    fn with_id(name: &str, t: DataType, id: i32) -> Field {
        Field::new(name, t, true).with_metadata(HashMap::from([(
            "PARQUET:field_id".to_string(),
            id.to_string(),
        )]))
    }

    fn parquet(fields: Vec<Field>, columns: Vec<ArrayRef>) -> bytes::Bytes {
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        let mut out = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        out.into()
    }

    /// Writes `bytes` to a temporary folder and asks for the rows `deletes` delete in it.
    async fn deleted(data: bytes::Bytes, deletes: Vec<(Vec<i32>, bytes::Bytes)>) -> Vec<u64> {
        let dir = tempfile::tempdir().unwrap();
        let url = |name: &str| format!("file://{}/{name}", dir.path().display());
        std::fs::write(dir.path().join("data.parquet"), &data).unwrap();
        let mut files = Vec::new();
        for (i, (ids, bytes)) in deletes.into_iter().enumerate() {
            let name = format!("eq{i}.parquet");
            std::fs::write(dir.path().join(&name), bytes).unwrap();
            files.push(Arc::new(EqualityFile {
                url: url(&name),
                ids,
            }));
        }
        let data_url = url("data.parquet");
        let eq = Equalities {
            files: HashMap::from([(data_url.clone(), files)]),
            ..Default::default()
        };
        let size = data.len() as u64;
        eq.deleted_rows(&StoreRoot::local(), "t", &data_url, size)
            .await
            .unwrap()
            .unwrap()
    }

    fn data() -> bytes::Bytes {
        parquet(
            vec![
                with_id("id", DataType::Int32, 1),
                with_id("s", DataType::Utf8, 2),
            ],
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5])),
                Arc::new(StringArray::from(vec![
                    Some("a"),
                    None,
                    Some("c"),
                    None,
                    Some("e"),
                ])),
            ],
        )
    }

    #[tokio::test]
    async fn rows_equal_to_a_delete_row_are_deleted_nulls_matching_nulls() {
        // By `id`, a long in the delete file (the column was promoted from int since).
        let by_id = parquet(
            vec![with_id("id", DataType::Int64, 1)],
            vec![Arc::new(Int64Array::from(vec![2, 5, 99]))],
        );
        assert_eq!(deleted(data(), vec![(vec![1], by_id)]).await, [1, 4]);
        // By (`s`, `id`): a null `s` matches a null; (c, 4) matches no row.
        let pairs = parquet(
            vec![
                with_id("s", DataType::Utf8, 2),
                with_id("id", DataType::Int64, 1),
            ],
            vec![
                Arc::new(StringArray::from(vec![None, Some("c")])),
                Arc::new(Int64Array::from(vec![4, 4])),
            ],
        );
        assert_eq!(deleted(data(), vec![(vec![2, 1], pairs)]).await, [3]);
    }

    #[tokio::test]
    async fn a_column_the_data_file_lacks_reads_as_nulls() {
        // Field 7 was added after the data file was written: every row holds null there.
        let by_new = parquet(
            vec![with_id("n", DataType::Int64, 7)],
            vec![Arc::new(Int64Array::from(vec![None, Some(3)]))],
        );
        assert_eq!(
            deleted(data(), vec![(vec![7], by_new)]).await,
            [0, 1, 2, 3, 4]
        );
        let not_null = parquet(
            vec![with_id("n", DataType::Int64, 7)],
            vec![Arc::new(Int64Array::from(vec![3]))],
        );
        assert!(deleted(data(), vec![(vec![7], not_null)]).await.is_empty());
    }

    #[test]
    fn a_delete_file_without_the_column_or_ids_is_an_error() {
        let f = |ids: Vec<i32>| EqualityFile {
            url: "file:///d.parquet".into(),
            ids,
        };
        let by_id = parquet(
            vec![with_id("id", DataType::Int64, 1)],
            vec![Arc::new(Int64Array::from(vec![2]))],
        );
        let e = read_keys(by_id.clone(), "t", &f(vec![3])).err().unwrap();
        assert!(e.to_string().contains("no column with field id 3"), "{e}");
        let e = read_keys(by_id, "t", &f(vec![])).err().unwrap();
        assert!(e.to_string().contains("no equality_ids"), "{e}");
        let e = read_keys(bytes::Bytes::from_static(b"PAR1 no"), "t", &f(vec![1]));
        assert!(e.is_err());
    }
}
