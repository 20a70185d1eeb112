//! `sbbf::PlainValue` hashes Arrow's native values exactly as writers hashed the stored ones:
//! every value of every integer, float and string column of every writer's files is found by the
//! batch API in the filter that writer wrote (no false negatives), widening 8- and 16-bit
//! integers to the INT32 Parquet stores them as, and floats by their exact bits.

use crate::{IoPolicy, ParquetFile};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use sbbf::{PlainValue, SbbfRef};

/// The non-null values of a primitive array.
fn prim<T: arrow_array::ArrowPrimitiveType>(a: &ArrayRef) -> Vec<T::Native> {
    a.as_primitive::<T>().iter().flatten().collect()
}

/// Tests `values` against `filter`; returns how many were tested.
fn all_found<V: PlainValue>(filter: SbbfRef<'_>, values: &[V], what: &str) -> usize {
    let mut out = vec![false; values.len()];
    filter.contains_values(values, &mut out);
    let missing = out.iter().filter(|o| !**o).count();
    assert_eq!(
        missing,
        0,
        "{what}: {missing} of {} values not found",
        values.len()
    );
    values.len()
}

#[test]
fn native_arrow_values_find_what_writers_stored() {
    let mut tested = std::collections::BTreeMap::<String, usize>::new();
    for path in sbbf_testkit::corpus_files() {
        let pq = ParquetFile::open(std::fs::File::open(&path).unwrap()).unwrap();
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap()).unwrap();
        let schema = builder.parquet_schema().clone();
        for (c, col) in pq.columns().iter().enumerate() {
            // Top-level primitive columns only: their Arrow array is the leaf's values.
            if col.path.contains('.') {
                continue;
            }
            for (rg, filter) in pq
                .read_filters(c, IoPolicy::default())
                .into_iter()
                .enumerate()
            {
                let Ok(bytes) = filter.map(|span| span.bitset) else {
                    continue;
                };
                let Ok(filter) = SbbfRef::new(&bytes) else {
                    continue;
                };
                let reader =
                    ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
                        .unwrap()
                        .with_projection(ProjectionMask::leaves(&schema, [c]))
                        .with_row_groups(vec![rg])
                        .build()
                        .unwrap();
                for batch in reader {
                    let batch = batch.unwrap();
                    let a = batch.column(0);
                    let what = format!("{} {} rg {rg}", path.display(), col.path);
                    let n = match a.data_type() {
                        DataType::Int8 => all_found(filter, &prim::<Int8Type>(a), &what),
                        DataType::Int16 => all_found(filter, &prim::<Int16Type>(a), &what),
                        DataType::Int32 => all_found(filter, &prim::<Int32Type>(a), &what),
                        DataType::Int64 => all_found(filter, &prim::<Int64Type>(a), &what),
                        DataType::UInt8 => all_found(filter, &prim::<UInt8Type>(a), &what),
                        DataType::UInt16 => all_found(filter, &prim::<UInt16Type>(a), &what),
                        DataType::UInt32 => all_found(filter, &prim::<UInt32Type>(a), &what),
                        DataType::UInt64 => all_found(filter, &prim::<UInt64Type>(a), &what),
                        DataType::Float32 => all_found(filter, &prim::<Float32Type>(a), &what),
                        DataType::Float64 => all_found(filter, &prim::<Float64Type>(a), &what),
                        DataType::Utf8 => {
                            let v: Vec<&str> = a.as_string::<i32>().iter().flatten().collect();
                            all_found(filter, &v, &what)
                        }
                        DataType::Binary => {
                            let v: Vec<&[u8]> = a.as_binary::<i32>().iter().flatten().collect();
                            all_found(filter, &v, &what)
                        }
                        _ => 0,
                    };
                    *tested.entry(format!("{:?}", a.data_type())).or_default() += n;
                }
            }
        }
    }
    // Every type was met, with real numbers of values.
    for ty in [
        "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32",
        "Float64", "Utf8", "Binary",
    ] {
        assert!(
            tested.get(ty).copied().unwrap_or(0) > 100,
            "{ty}: {tested:?}"
        );
    }
    eprintln!("values tested by type: {tested:?}");
}
