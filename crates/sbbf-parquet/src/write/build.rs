//! Building filters for column chunks: from the chunk's stored values, or from Arrow arrays
//! converted exactly as arrow-rs' writer stores them.

use crate::format::column::{ColumnType, ValueKind};
use crate::values::arrow::for_each_arrow_value;
use crate::values::decode::for_each_value;
use crate::{BuildError, Error, ReadError};
use parquet::basic::Type as PhysicalType;
use parquet::file::reader::FileReader;
use sbbf::Sbbf;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A set of XXH64 hashes. They are uniformly distributed already, so the set uses them as
/// their own hash instead of hashing them again with SipHash.
pub(crate) type HashSet64 = HashSet<u64, BuildHasherDefault<PassThrough>>;

/// The hasher behind [`HashSet64`]: returns the `u64` it is given.
#[derive(Default, Clone, Copy)]
pub(crate) struct PassThrough(u64);

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
    crate::format::column::split_path(&col.path).len() == 1
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
/// let f = sbbf_parquet::write::build::filter_for(&hashes, None, 0.01).unwrap();
/// assert!(f.num_bytes().is_power_of_two());
/// assert!(hashes.iter().all(|h| f.contains_hash(*h)));
/// ```
pub fn filter_for(hashes: &[u64], ndv: Option<u64>, fpp: f64) -> Result<Sbbf, Error> {
    let n = ndv.unwrap_or(hashes.len() as u64).max(1);
    let mut f = Sbbf::with_ndv_fpp(n, fpp).map_err(|e| Error::Build(BuildError::Filter(e)))?;
    f.insert_hashes(hashes);
    Ok(f)
}

/// The distinct hashes of an Arrow array's values stored in column `col`.
pub fn arrow_hashes(array: &dyn arrow_array::Array, col: &ColumnType) -> Result<Vec<u64>, Error> {
    let mut seen = HashSet64::default();
    for_each_arrow_value(array, col, |b| {
        seen.insert(sbbf::hash(b));
    })?;
    Ok(sorted(seen))
}

/// The bytes of one column chunk (its pages, from the dictionary page on) at their offset in
/// the file: a [`parquet::file::reader::ChunkReader`] that has nothing else, so that building
/// a filter from them reads no other column and no other row group. A read outside them is an
/// error, never a guess.
#[derive(Debug, Clone)]
struct OneChunk {
    start: u64,
    bytes: bytes::Bytes,
    file_len: u64,
}

impl OneChunk {
    fn slice(&self, start: u64, len: u64) -> parquet::errors::Result<bytes::Bytes> {
        let end = start.checked_add(len);
        let inside =
            start >= self.start && end.is_some_and(|e| e <= self.start + self.bytes.len() as u64);
        if !inside {
            return Err(parquet::errors::ParquetError::General(format!(
                "a read of {len} byte(s) at {start} is outside the column chunk ({} byte(s) at {})",
                self.bytes.len(),
                self.start
            )));
        }
        let from = (start - self.start) as usize;
        Ok(self.bytes.slice(from..from + len as usize))
    }
}

impl parquet::file::reader::Length for OneChunk {
    fn len(&self) -> u64 {
        self.file_len
    }
}

impl parquet::file::reader::ChunkReader for OneChunk {
    type T = bytes::buf::Reader<bytes::Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        use bytes::Buf;
        let left = (self.start + self.bytes.len() as u64).saturating_sub(start);
        Ok(self.slice(start, left)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        self.slice(start, length as u64)
    }
}

/// A [`FileReader`] over one column chunk's bytes and the file's footer, as decoded already.
struct ChunkFile {
    metadata: std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
    chunk: std::sync::Arc<OneChunk>,
    props: parquet::file::properties::ReaderPropertiesPtr,
}

impl FileReader for ChunkFile {
    fn metadata(&self) -> &parquet::file::metadata::ParquetMetaData {
        &self.metadata
    }

    fn num_row_groups(&self) -> usize {
        self.metadata.num_row_groups()
    }

    fn get_row_group(
        &self,
        i: usize,
    ) -> parquet::errors::Result<Box<dyn parquet::file::reader::RowGroupReader + '_>> {
        if i >= self.metadata.num_row_groups() {
            return Err(parquet::errors::ParquetError::General(format!(
                "no row group {i}"
            )));
        }
        Ok(Box::new(
            parquet::file::serialized_reader::SerializedRowGroupReader::new(
                std::sync::Arc::clone(&self.chunk),
                self.metadata.row_group(i),
                None,
                std::sync::Arc::clone(&self.props),
            )?,
        ))
    }

    fn get_row_iter(
        &self,
        projection: Option<parquet::schema::types::Type>,
    ) -> parquet::errors::Result<parquet::record::reader::RowIter<'_>> {
        parquet::record::reader::RowIter::from_file(projection, self)
    }
}

/// The byte range of column chunk `(row_group, column)` by the footer (from its dictionary
/// page, if any, to the end of its last page), checked against the file's length.
///
/// ```
/// # use std::sync::Arc;
/// # let batch = arrow_array::RecordBatch::try_from_iter([(
/// #     "id",
/// #     Arc::new(arrow_array::Int64Array::from_iter_values(0..100)) as arrow_array::ArrayRef,
/// # )]).unwrap();
/// # let mut file = Vec::new();
/// # let mut w = parquet::arrow::ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
/// # w.write(&batch).unwrap();
/// let metadata = w.close().unwrap(); // the footer of a file of one int64 column
/// let r = sbbf_parquet::write::build::chunk_range(&metadata, (0, 0), file.len() as u64).unwrap();
/// assert!(r.start >= 4 && r.end <= file.len() as u64 - 8);
/// // A footer naming bytes past the end of the file is an error, not a read.
/// assert!(sbbf_parquet::write::build::chunk_range(&metadata, (0, 0), 16).is_err());
/// ```
pub fn chunk_range(
    metadata: &parquet::file::metadata::ParquetMetaData,
    (row_group, column): (usize, usize),
    file_len: u64,
) -> Result<std::ops::Range<u64>, Error> {
    let bad = |why: String| {
        Error::Read(ReadError::Parquet(parquet::errors::ParquetError::General(
            why,
        )))
    };
    let rg = metadata
        .row_groups()
        .get(row_group)
        .ok_or_else(|| bad(format!("no row group {row_group}")))?;
    let col = rg
        .columns()
        .get(column)
        .ok_or_else(|| bad(format!("no column {column} in row group {row_group}")))?;
    let (start, len) = col.byte_range();
    match start.checked_add(len) {
        Some(end) if len > 0 && end <= file_len => Ok(start..end),
        _ => Err(bad(format!(
            "row group {row_group} column {column}: pages at {start} of {len} byte(s) do not fit the file's {file_len} byte(s)"
        ))),
    }
}

/// [`chunk_filter`] from the bytes of the column chunk alone (`chunk_bytes`, read from
/// [`chunk_range`]) and the file's decoded footer: what a build over an object store or a
/// table index needs, where reading only these bytes is the point.
///
/// ```
/// # use std::sync::Arc;
/// use sbbf_parquet::write::build::{chunk_filter_from_bytes, chunk_range};
/// let batch = arrow_array::RecordBatch::try_from_iter([(
///     "id",
///     Arc::new(arrow_array::Int64Array::from_iter_values(0..1000)) as arrow_array::ArrayRef,
/// )])
/// .unwrap();
/// let mut file = Vec::new();
/// let mut w = parquet::arrow::ArrowWriter::try_new(&mut file, batch.schema(), None).unwrap();
/// w.write(&batch).unwrap();
/// w.close().unwrap();
/// let file = bytes::Bytes::from(file);
/// let pq = sbbf_parquet::ParquetFile::open(file.clone()).unwrap();
/// let r = chunk_range(pq.metadata(), (0, 0), file.len() as u64).unwrap();
/// let pages = file.slice(r.start as usize..r.end as usize);
/// let (filter, _) = chunk_filter_from_bytes(
///     pq.metadata(), &pq.columns()[0], (0, 0), (r.start, pages), file.len() as u64, None, 0.01,
/// )
/// .unwrap();
/// assert!((0..1000i64).all(|v| filter.contains(&v.to_le_bytes())));
/// ```
pub fn chunk_filter_from_bytes(
    metadata: &std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
    col: &ColumnType,
    chunk: (usize, usize),
    (chunk_start, chunk_bytes): (u64, bytes::Bytes),
    file_len: u64,
    ndv: Option<u64>,
    fpp: f64,
) -> Result<(Sbbf, u64), Error> {
    let reader = OneChunk {
        start: chunk_start,
        bytes: chunk_bytes,
        file_len,
    };
    let data = ChunkFile {
        metadata: std::sync::Arc::clone(metadata),
        chunk: std::sync::Arc::new(reader.clone()),
        props: std::sync::Arc::new(parquet::file::properties::ReaderProperties::builder().build()),
    };
    chunk_filter(reader, metadata, &data, col, chunk, ndv, fpp)
}
