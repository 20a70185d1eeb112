//! Building filters for column chunks: from the chunk's stored values, or from Arrow arrays
//! converted exactly as arrow-rs' writer stores them.

use crate::column::{ColumnType, Unit, ValueKind};
use crate::decode::for_each_value;
use crate::{BuildError, Error, ReadError};
use parquet::basic::Type as PhysicalType;
use parquet::file::reader::FileReader;
use sbbf::Sbbf;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A set of XXH64 hashes. They are uniformly distributed already, so the set uses them as
/// their own hash instead of hashing them again with SipHash.
pub type HashSet64 = HashSet<u64, BuildHasherDefault<PassThrough>>;

/// The hasher behind [`HashSet64`]: returns the `u64` it is given.
#[derive(Default, Clone, Copy)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed; fold anything else in for completeness.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ *b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The distinct hashes of one column chunk's non-null values, and how many values it has.
pub fn chunk_hashes(
    data: &dyn FileReader,
    row_group: usize,
    column: usize,
) -> Result<(Vec<u64>, u64), Error> {
    let mut seen = HashSet64::default();
    let values = for_each_value(data, row_group, column, |v| {
        seen.insert(sbbf::hash(v));
    })?;
    Ok((sorted(seen), values))
}

fn sorted(seen: HashSet64) -> Vec<u64> {
    let mut hashes: Vec<u64> = seen.into_iter().collect();
    hashes.sort_unstable();
    hashes
}

/// Whether Arrow decoding gives back exactly the stored bytes of this column (through
/// [`for_each_arrow_value`]): not for INT96 (Arrow normalizes it to nanoseconds) nor for
/// BYTE_ARRAY decimals (writers differ in width), nor for nested leaves (Arrow nests them).
pub fn arrow_round_trips(col: &ColumnType) -> bool {
    !col.path.contains('.')
        && col.physical != PhysicalType::INT96
        && col.physical != PhysicalType::BOOLEAN
        && !(col.physical == PhysicalType::BYTE_ARRAY
            && matches!(col.kind, ValueKind::Decimal { .. }))
        && col.logical.as_deref() != Some("INTERVAL")
}

/// Calls `f` with the hash of every non-null value of a column chunk, decoding through
/// arrow-rs' vectorized readers where they give back the stored bytes ([`arrow_round_trips`])
/// and through the column reader elsewhere; returns the number of values.
pub fn for_each_chunk_hash<R: parquet::file::reader::ChunkReader + 'static>(
    reader: R,
    metadata: &std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
    data: &dyn FileReader,
    col: &ColumnType,
    (row_group, column): (usize, usize),
    mut f: impl FnMut(u64),
) -> Result<u64, Error> {
    use parquet::arrow::arrow_reader::{
        ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    };
    if !arrow_round_trips(col) {
        return for_each_value(data, row_group, column, |v| f(sbbf::hash(v)));
    }
    let err = |e: parquet::errors::ParquetError| Error::Read(ReadError::Parquet(e));
    // Types from the Parquet schema alone: an embedded Arrow schema could ask for casts.
    let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
    let meta = ArrowReaderMetadata::try_new(metadata.clone(), options).map_err(err)?;
    let schema = metadata.file_metadata().schema_descr();
    let batches = ParquetRecordBatchReaderBuilder::new_with_metadata(reader, meta)
        .with_row_groups(vec![row_group])
        .with_projection(parquet::arrow::ProjectionMask::leaves(schema, [column]))
        .with_batch_size(64 * 1024)
        .build()
        .map_err(err)?;
    let mut values = 0u64;
    for batch in batches {
        let batch = batch.map_err(|e| Error::Read(ReadError::Arrow(e)))?;
        for_each_arrow_value(batch.column(0).as_ref(), col, |b| {
            values += 1;
            f(sbbf::hash(b));
        })?;
    }
    Ok(values)
}

/// [`chunk_hashes`] through [`for_each_chunk_hash`]'s faster decoding.
pub fn chunk_hashes_fast<R: parquet::file::reader::ChunkReader + 'static>(
    reader: R,
    metadata: &std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
    data: &dyn FileReader,
    col: &ColumnType,
    row_group: usize,
    column: usize,
) -> Result<(Vec<u64>, u64), Error> {
    let mut seen = HashSet64::default();
    let values = for_each_chunk_hash(reader, metadata, data, col, (row_group, column), |h| {
        seen.insert(h);
    })?;
    Ok((sorted(seen), values))
}

/// A column chunk's filter, built in one pass without collecting its values.
///
/// With `ndv`, the filter is sized for it. Without, it starts at the size `num_values` (an
/// upper bound of the distinct count) calls for and is then folded as far as the
/// false-positive rate of its actual bits stays at or below `fpp`: exact folding makes that
/// the filter the smaller size would have given, so the size follows the real number of
/// distinct values without counting them in a hash set (which cost two thirds of the time).
/// Returns the filter and the distinct count (estimated from the unfolded fill when sizing by
/// folding).
pub fn chunk_filter<R: parquet::file::reader::ChunkReader + 'static>(
    reader: R,
    metadata: &std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
    data: &dyn FileReader,
    col: &ColumnType,
    chunk: (usize, usize),
    ndv: Option<u64>,
    fpp: f64,
) -> Result<(Sbbf, u64), Error> {
    let sizing = |e: sbbf::Error| Error::Build(BuildError::Filter(e));
    let upper = metadata
        .row_group(chunk.0)
        .column(chunk.1)
        .num_values()
        .max(1) as u64;
    let mut f = Sbbf::with_ndv_fpp(ndv.unwrap_or(upper).max(1), fpp).map_err(sizing)?;
    let mut batch = Vec::with_capacity(4096);
    for_each_chunk_hash(reader, metadata, data, col, chunk, |h| {
        batch.push(h);
        if batch.len() == batch.capacity() {
            f.insert_hashes(&batch);
            batch.clear();
        }
    })?;
    f.insert_hashes(&batch);
    // Each insert sets one bit per word in one block: fill = 1 - (1 - 8/m)^n for m bits.
    let m = f.num_bytes() as f64 * 8.0;
    let fill = f.fill_ratio().min(1.0 - 1e-12);
    let distinct = ((1.0 - fill).ln() / (1.0 - 8.0 / m).ln()).round() as u64;
    if ndv.is_none() {
        f.fold_to_target_fpp(fpp).map_err(sizing)?;
    }
    Ok((f, distinct))
}

/// A filter holding `hashes`, sized for `ndv` distinct values (default: the number of hashes)
/// at false-positive rate `fpp` with the accurate SBBF sizing: a power of two within
/// [32 B, 128 MiB], which every reader accepts.
///
/// ```
/// let hashes: Vec<u64> = (0..1000u64).map(|i| sbbf::hash(&i.to_le_bytes())).collect();
/// let f = sbbf_parquet::build::filter_for(&hashes, None, 0.01).unwrap();
/// assert!(f.num_bytes().is_power_of_two());
/// assert!(hashes.iter().all(|h| f.contains_hash(*h)));
/// ```
pub fn filter_for(hashes: &[u64], ndv: Option<u64>, fpp: f64) -> Result<Sbbf, Error> {
    let n = ndv.unwrap_or(hashes.len() as u64).max(1);
    let mut f = Sbbf::with_ndv_fpp(n, fpp).map_err(|e| Error::Build(BuildError::Filter(e)))?;
    f.insert_hashes(hashes);
    Ok(f)
}

/// Calls `f` with the PLAIN bytes of every non-null element of `array` as arrow-rs' writer
/// stores them in a column of type `col`: Int8/Int16/UInt8/UInt16/UInt32 widened to INT32
/// (unsigned by bit pattern), Date64 as INT32 days, timestamps in the column's unit (INT96 as
/// nanoseconds of day and Julian day), Time32/Time64, decimals by the column's physical type
/// (FLBA big-endian at the column's length), Float16 as 2 little-endian bytes, strings and
/// binaries (also views and large variants) as their bytes, dictionaries through their values.
///
/// ```
/// use arrow_array::Int8Array;
/// # use sbbf_parquet::column::{ColumnType, ValueKind};
/// # let col = ColumnType { path: "x".into(), physical: parquet::basic::Type::INT32,
/// #     type_length: 0, kind: ValueKind::Int { bits: 8, signed: true }, logical: None };
/// let mut out = Vec::new();
/// sbbf_parquet::build::for_each_arrow_value(&Int8Array::from(vec![Some(-1), None]), &col, |b| out.push(b.to_vec())).unwrap();
/// assert_eq!(out, vec![(-1i32).to_le_bytes().to_vec()]);
/// ```
pub fn for_each_arrow_value(
    array: &dyn arrow_array::Array,
    col: &ColumnType,
    mut f: impl FnMut(&[u8]),
) -> Result<(), Error> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    use arrow_schema::{DataType as D, TimeUnit as T};
    let unsupported = || {
        Error::Build(BuildError::ArrowType {
            data_type: array.data_type().to_string(),
            column: col.path.clone(),
            physical: col.physical_name().to_string(),
        })
    };
    let phys = col.physical;
    // Integers go to the column's width; signed and unsigned by bit pattern.
    let int = |v: i128, f: &mut dyn FnMut(&[u8])| match phys {
        PhysicalType::INT32 => f(&(v as u32).to_le_bytes()),
        _ => f(&(v as u64).to_le_bytes()),
    };
    let col_unit = match col.kind {
        ValueKind::Timestamp { unit, .. } | ValueKind::Time(unit) => Some(unit),
        ValueKind::Int96 => Some(Unit::Nanos),
        _ => None,
    };
    let ticks = |v: i64, unit: Unit, f: &mut dyn FnMut(&[u8])| {
        let ns = v as i128 * unit.nanos();
        if col.kind == ValueKind::Int96 {
            const DAY: i128 = 86_400_000_000_000;
            let mut b = [0u8; 12];
            b[..8].copy_from_slice(&(ns.rem_euclid(DAY) as i64).to_le_bytes());
            b[8..].copy_from_slice(&((ns.div_euclid(DAY) + 2_440_588) as i32).to_le_bytes());
            f(&b);
        } else {
            let cu = col_unit.unwrap_or(unit);
            int(ns / cu.nanos(), f);
        }
    };
    let decimal = |v: i128, f: &mut dyn FnMut(&[u8])| match phys {
        PhysicalType::INT32 | PhysicalType::INT64 => int(v, f),
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            let n = col.type_length.clamp(0, 64) as usize;
            let be = v.to_be_bytes();
            let sign = if v < 0 { 0xff } else { 0 };
            let mut out = vec![sign; n];
            let k = n.min(16);
            out[n - k..].copy_from_slice(&be[16 - k..]);
            f(&out);
        }
        _ => {
            // Minimal big-endian two's complement, as parquet-java writes BYTE_ARRAY decimals.
            let be = v.to_be_bytes();
            let sign = if v < 0 { 0xff } else { 0 };
            let mut start = 0;
            while start < 15 && be[start] == sign && (be[start + 1] & 0x80 == sign & 0x80) {
                start += 1;
            }
            f(&be[start..]);
        }
    };
    let n = array.len();
    let valid = |i: usize| array.is_valid(i);
    macro_rules! each {
        ($arr:expr, |$v:ident| $body:expr) => {{
            let a = $arr;
            for i in 0..n {
                if valid(i) {
                    let $v = a.value(i);
                    $body;
                }
            }
        }};
    }
    let g: &mut dyn FnMut(&[u8]) = &mut f;
    match array.data_type() {
        D::Boolean => {
            return Err(Error::Build(BuildError::Boolean {
                column: col.path.clone(),
            }))
        }
        D::Int8 => each!(array.as_primitive::<Int8Type>(), |v| int(v as i128, g)),
        D::Int16 => each!(array.as_primitive::<Int16Type>(), |v| int(v as i128, g)),
        D::Int32 => each!(array.as_primitive::<Int32Type>(), |v| int(v as i128, g)),
        D::Int64 => each!(array.as_primitive::<Int64Type>(), |v| int(v as i128, g)),
        D::UInt8 => each!(array.as_primitive::<UInt8Type>(), |v| int(v as i128, g)),
        D::UInt16 => each!(array.as_primitive::<UInt16Type>(), |v| int(v as i128, g)),
        D::UInt32 => each!(array.as_primitive::<UInt32Type>(), |v| int(v as i128, g)),
        D::UInt64 => each!(array.as_primitive::<UInt64Type>(), |v| int(v as i128, g)),
        D::Float16 => each!(array.as_primitive::<Float16Type>(), |v| g(&v.to_le_bytes())),
        D::Float32 => each!(array.as_primitive::<Float32Type>(), |v| g(&v.to_le_bytes())),
        D::Float64 => each!(array.as_primitive::<Float64Type>(), |v| g(&v.to_le_bytes())),
        D::Date32 => each!(array.as_primitive::<Date32Type>(), |v| int(v as i128, g)),
        D::Date64 => match phys {
            PhysicalType::INT32 => each!(array.as_primitive::<Date64Type>(), |v| int(
                (v / 86_400_000) as i128,
                g
            )),
            _ => each!(array.as_primitive::<Date64Type>(), |v| int(v as i128, g)),
        },
        D::Timestamp(t, _) => match t {
            T::Second => each!(array.as_primitive::<TimestampSecondType>(), |v| ticks(
                v.saturating_mul(1000),
                Unit::Millis,
                g
            )),
            T::Millisecond => each!(array.as_primitive::<TimestampMillisecondType>(), |v| ticks(
                v,
                Unit::Millis,
                g
            )),
            T::Microsecond => each!(array.as_primitive::<TimestampMicrosecondType>(), |v| ticks(
                v,
                Unit::Micros,
                g
            )),
            T::Nanosecond => each!(array.as_primitive::<TimestampNanosecondType>(), |v| ticks(
                v,
                Unit::Nanos,
                g
            )),
        },
        D::Time32(t) => match t {
            T::Second => each!(array.as_primitive::<Time32SecondType>(), |v| ticks(
                v as i64 * 1000,
                Unit::Millis,
                g
            )),
            _ => each!(array.as_primitive::<Time32MillisecondType>(), |v| ticks(
                v as i64,
                Unit::Millis,
                g
            )),
        },
        D::Time64(t) => match t {
            T::Microsecond => each!(array.as_primitive::<Time64MicrosecondType>(), |v| ticks(
                v,
                Unit::Micros,
                g
            )),
            _ => each!(array.as_primitive::<Time64NanosecondType>(), |v| ticks(
                v,
                Unit::Nanos,
                g
            )),
        },
        D::Decimal32(_, _) => each!(array.as_primitive::<Decimal32Type>(), |v| decimal(
            v as i128, g
        )),
        D::Decimal64(_, _) => each!(array.as_primitive::<Decimal64Type>(), |v| decimal(
            v as i128, g
        )),
        D::Decimal128(_, _) => each!(array.as_primitive::<Decimal128Type>(), |v| decimal(v, g)),
        D::Decimal256(_, _) => {
            let a = array.as_primitive::<Decimal256Type>();
            for i in 0..n {
                if valid(i) {
                    let v = a.value(i).to_i128().ok_or_else(unsupported)?;
                    decimal(v, g);
                }
            }
        }
        D::Utf8 => each!(array.as_string::<i32>(), |v| g(v.as_bytes())),
        D::LargeUtf8 => each!(array.as_string::<i64>(), |v| g(v.as_bytes())),
        D::Utf8View => each!(array.as_string_view(), |v| g(v.as_bytes())),
        D::Binary => each!(array.as_binary::<i32>(), |v| g(v)),
        D::LargeBinary => each!(array.as_binary::<i64>(), |v| g(v)),
        D::BinaryView => each!(array.as_binary_view(), |v| g(v)),
        D::FixedSizeBinary(_) => each!(array.as_fixed_size_binary(), |v| g(v)),
        D::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            // Encode each dictionary value once, then emit it for every valid key.
            let mut encoded: Vec<Option<Vec<u8>>> = vec![None; dict.values().len()];
            let mut all = Vec::new();
            for_each_arrow_value_indexed(dict.values().as_ref(), col, &mut all)?;
            for (i, v) in all {
                encoded[i] = Some(v);
            }
            let keys = dict.normalized_keys();
            for (i, k) in keys.iter().enumerate() {
                if valid(i) {
                    if let Some(Some(v)) = encoded.get(*k) {
                        g(v);
                    }
                }
            }
        }
        _ => return Err(unsupported()),
    }
    Ok(())
}

/// Like [`for_each_arrow_value`], remembering each value's index (for dictionaries).
fn for_each_arrow_value_indexed(
    array: &dyn arrow_array::Array,
    col: &ColumnType,
    out: &mut Vec<(usize, Vec<u8>)>,
) -> Result<(), Error> {
    let valid: Vec<usize> = (0..array.len()).filter(|i| array.is_valid(*i)).collect();
    let mut k = 0;
    for_each_arrow_value(array, col, |b| {
        out.push((valid[k], b.to_vec()));
        k += 1;
    })
}

/// The distinct hashes of an Arrow array's values stored in column `col`.
pub fn arrow_hashes(array: &dyn arrow_array::Array, col: &ColumnType) -> Result<Vec<u64>, Error> {
    let mut seen = HashSet64::default();
    for_each_arrow_value(array, col, |b| {
        seen.insert(sbbf::hash(b));
    })?;
    Ok(sorted(seen))
}
