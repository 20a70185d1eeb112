//! Prune row groups with Bloom filters, then read only the survivors with arrow-rs.
//!
//! ```sh
//! cargo run -p sbbf-parquet --example prune_and_read -- testdata/duckdb_ints.parquet i64 42
//! ```
//!
//! Without arguments it picks, among values really stored in the last row group of
//! `testdata/pa_ints.parquet`, the one that lets the filters skip the most row groups.

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use sbbf_parquet::prune::Predicate;
use sbbf_parquet::Literal;
use sbbf_parquet::ParquetFile;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, column, value) = match args.as_slice() {
        [p, c, v] => (p.clone(), c.clone(), v.clone()),
        _ => (
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../testdata/pa_ints.parquet"
            )
            .to_string(),
            "i64".to_string(),
            first_value(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../testdata/pa_ints.parquet"
            ))?,
        ),
    };

    // 1. Prune: footer and filter bytes only.
    let pq = ParquetFile::open(std::fs::File::open(&path)?)?;
    // Text literals are read by the column's type; typed ones (Literal::Int, ...) work too.
    let predicate = Predicate::eq(column.clone(), Literal::Utf8(value.clone()));
    let pruned = pq.prune(&predicate)?;
    for (rg, why) in pruned.reasons.iter().enumerate() {
        println!("row group {rg}: {why}");
    }

    // 2. Read the surviving row groups only.
    let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path)?)?
        .with_row_groups(pruned.row_groups.clone());
    let mut rows = 0;
    for batch in builder.build()? {
        rows += batch?.num_rows();
    }
    println!(
        "{column} = {value}: read {} of {} row groups ({rows} rows) instead of {}",
        pruned.row_groups.len(),
        pq.metadata().num_row_groups(),
        pq.metadata().file_metadata().num_rows()
    );
    Ok(())
}

/// Of the first 100 stored values of column `i64` in the last row group, the one whose
/// equality predicate prunes the most row groups.
fn first_value(path: &str) -> Result<String, Box<dyn std::error::Error>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::Array;
    let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path)?)?;
    let last = builder.metadata().num_row_groups() - 1;
    let batch = builder
        .with_row_groups(vec![last])
        .build()?
        .next()
        .ok_or("empty")??;
    let col = batch.column_by_name("i64").ok_or("no column i64")?;
    let ints = col.as_primitive::<Int64Type>();
    let pq = ParquetFile::open(std::fs::File::open(path)?)?;
    let mut best = (usize::MAX, String::new());
    for i in (0..ints.len()).filter(|i| ints.is_valid(*i)).take(100) {
        let text = ints.value(i).to_string();
        let kept = pq
            .prune(&Predicate::eq("i64", Literal::Utf8(text.clone())))?
            .row_groups
            .len();
        if kept < best.0 {
            best = (kept, text);
        }
    }
    Ok(best.1)
}
