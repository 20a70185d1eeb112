//! Reading a column chunk's stored values back as the exact bytes writers hash (for `verify`
//! and for building filters). Decoding is the `parquet` crate's: every encoding and
//! compression it reads; nulls are skipped, as writers never insert them.

use crate::{Error, ReadError};
use parquet::column::reader::ColumnReader;
use parquet::data_type::AsBytes;
use parquet::file::reader::FileReader;

/// Values decoded per call into the column reader.
const BATCH: usize = 8192;

/// Calls `f` with the PLAIN bytes (no length prefix) of every non-null value of leaf `column`
/// in row group `row_group`, in stored order; returns how many values there were.
pub fn for_each_value(
    file: &dyn FileReader,
    row_group: usize,
    column: usize,
    mut f: impl FnMut(&[u8]),
) -> Result<u64, Error> {
    let err = |e: parquet::errors::ParquetError| Error::Read(ReadError::Parquet(e));
    let rg = file.get_row_group(row_group).map_err(err)?;
    let reader = rg.get_column_reader(column).map_err(err)?;
    let mut def = Vec::new();
    let mut rep = Vec::new();
    let mut count = 0u64;
    macro_rules! drain {
        ($r:expr, $vals:expr) => {{
            let mut r = $r;
            let mut vals = $vals;
            loop {
                def.clear();
                rep.clear();
                vals.clear();
                let (records, _, levels) = r
                    .read_records(BATCH, Some(&mut def), Some(&mut rep), &mut vals)
                    .map_err(err)?;
                for v in vals.iter() {
                    // AsBytes is the PLAIN form: little-endian numbers, a byte array's data.
                    f(v.as_bytes());
                    count += 1;
                }
                if records == 0 && levels == 0 && vals.is_empty() {
                    break;
                }
            }
        }};
    }
    match reader {
        // One byte per value (0x00, 0x01), as arrow-rs and ClickHouse hash them for the
        // BOOLEAN filters they write (`verify`; building BOOLEAN filters stays refused).
        ColumnReader::BoolColumnReader(r) => drain!(r, Vec::<bool>::new()),
        ColumnReader::Int32ColumnReader(r) => drain!(r, Vec::<i32>::new()),
        ColumnReader::Int64ColumnReader(r) => drain!(r, Vec::<i64>::new()),
        ColumnReader::Int96ColumnReader(r) => drain!(r, Vec::<parquet::data_type::Int96>::new()),
        ColumnReader::FloatColumnReader(r) => drain!(r, Vec::<f32>::new()),
        ColumnReader::DoubleColumnReader(r) => drain!(r, Vec::<f64>::new()),
        ColumnReader::ByteArrayColumnReader(r) => {
            drain!(r, Vec::<parquet::data_type::ByteArray>::new())
        }
        ColumnReader::FixedLenByteArrayColumnReader(r) => {
            drain!(r, Vec::<parquet::data_type::FixedLenByteArray>::new())
        }
    }
    Ok(count)
}
