//! `sbbf verify`'s report: every stored value tested against its filter, per chunk.

use crate::verify::ChunkReport;
use crate::FilterState;
use serde::Serialize;

/// One file's verification (`sbbf verify --format json`).
///
/// ```
/// use sbbf_parquet::{report::VerifyReport, IoPolicy, ParquetFile};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
/// let pq = ParquetFile::open(std::fs::File::open(path)?)?;
/// let data = parquet::file::serialized_reader::SerializedFileReader::new(std::fs::File::open(path)?)?;
/// let col = pq.column_index("i64")?;
/// let chunks = pq.verify(&data, &[col], 100, |_, _| {})?;
/// let report = VerifyReport::new("pa_ints.parquet", &chunks, Vec::new());
/// assert_eq!(report.false_negatives, 0);
/// assert!(report.unverified() == 0 && !report.chunks.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// One entry per verified (or not verifiable) chunk.
    pub chunks: Vec<VerifyChunk>,
    /// Chosen columns the file lacks.
    pub columns_not_in_file: Vec<String>,
    /// Stored values the filters call absent, all chunks together.
    pub false_negatives: u64,
    /// The file as shown.
    pub file: String,
}

/// One chunk of a [`VerifyReport`].
#[derive(Debug, Clone, Serialize)]
pub struct VerifyChunk {
    /// Random absent values probed.
    pub absent_probes: u64,
    /// Leaf column path.
    pub column: String,
    /// Distinct values in the chunk.
    pub distinct_values: u64,
    /// A few stored values the filter calls absent.
    pub false_negative_examples: Vec<String>,
    /// Stored values the filter calls absent.
    pub false_negatives: u64,
    /// `present`, `missing` or `invalid`.
    pub filter: &'static str,
    /// False-positive rate measured with the absent probes.
    pub measured_fpp: Option<f64>,
    /// Why the chunk could not be verified (encrypted, key not given); only on such chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_verified: Option<String>,
    /// False-positive rate the filter's fill predicts.
    pub predicted_fpp: Option<f64>,
    /// Why an `invalid` filter cannot be used.
    pub reason: Option<String>,
    /// Row group.
    pub row_group: usize,
    /// Values stored in the chunk.
    pub values: u64,
}

impl VerifyReport {
    /// Verifies the file at `path` (shown as `file`), opened with `keys`: every chosen column
    /// with a filter (`columns` empty: all of them), `samples` absent probes per chunk. An
    /// encrypted file is decrypted chunk by chunk; a chunk whose key is missing is reported not
    /// verified. With several files (`many`), a column the file lacks is listed apart.
    pub fn of_file(
        file: &str,
        path: &std::path::Path,
        keys: &crate::KeySet,
        columns: &[String],
        many: bool,
        samples: u64,
        progress: impl FnMut(usize, usize),
    ) -> Result<VerifyReport, crate::Error> {
        let io = |e| crate::Error::Read(crate::ReadError::Open(e));
        let pq = crate::ParquetFile::open_with_keys(std::fs::File::open(path).map_err(io)?, keys)?;
        VerifyReport::of(file, &pq, columns, many, samples, progress, || {
            std::fs::File::open(path).map_err(io)
        })
    }

    /// [`VerifyReport::of_file`] for a file in memory (an object read whole).
    pub fn of_bytes(
        file: &str,
        bytes: bytes::Bytes,
        keys: &crate::KeySet,
        columns: &[String],
        many: bool,
        samples: u64,
        progress: impl FnMut(usize, usize),
    ) -> Result<VerifyReport, crate::Error> {
        let pq = crate::ParquetFile::open_with_keys(bytes.clone(), keys)?;
        VerifyReport::of(file, &pq, columns, many, samples, progress, || Ok(bytes))
    }

    fn of<
        R: parquet::file::reader::ChunkReader,
        D: parquet::file::reader::ChunkReader + 'static,
    >(
        file: &str,
        pq: &crate::ParquetFile<R>,
        columns: &[String],
        many: bool,
        samples: u64,
        progress: impl FnMut(usize, usize),
        data: impl FnOnce() -> Result<D, crate::Error>,
    ) -> Result<VerifyReport, crate::Error> {
        let chosen = pq.choose_columns(columns, many)?;
        if !columns.is_empty() && chosen.columns.is_empty() {
            // No asked column here: an empty list would mean "every column".
            return Ok(VerifyReport::new(file, &[], chosen.not_in_file));
        }
        #[cfg(feature = "encryption")]
        if pq.is_encrypted() {
            // Decrypted chunk by chunk: the parquet crate's reader cannot open the file itself.
            let chunks = pq.verify_encrypted(&chosen.columns, samples, progress)?;
            return Ok(VerifyReport::new(file, &chunks, chosen.not_in_file));
        }
        let data = parquet::file::serialized_reader::SerializedFileReader::new(data()?)
            .map_err(|e| crate::Error::Read(crate::ReadError::Parquet(e)))?;
        let chunks = pq.verify(&data, &chosen.columns, samples, progress)?;
        Ok(VerifyReport::new(file, &chunks, chosen.not_in_file))
    }

    /// The report of `chunks`, verified in `file`.
    pub fn new(file: &str, chunks: &[ChunkReport], columns_not_in_file: Vec<String>) -> Self {
        VerifyReport {
            false_negatives: chunks.iter().map(|c| c.false_negatives).sum(),
            chunks: chunks.iter().map(VerifyChunk::of).collect(),
            columns_not_in_file,
            file: file.to_string(),
        }
    }

    /// Chunks whose values were not tested: their key was not given, or their filter cannot
    /// be used. A file with any is not verified whole.
    pub fn unverified(&self) -> usize {
        self.chunks
            .iter()
            .filter(|c| c.not_verified.is_some() || c.filter == "invalid")
            .count()
    }
}

impl VerifyChunk {
    fn of(r: &ChunkReport) -> VerifyChunk {
        let (filter, reason) = match &r.filter {
            FilterState::Present => ("present", None),
            FilterState::Missing => ("missing", None),
            FilterState::Invalid(why) => ("invalid", Some(why.clone())),
            FilterState::Partition(why) => ("partition", Some(why.clone())),
            FilterState::NotInFile(why) => ("not_in_file", Some(why.clone())),
        };
        VerifyChunk {
            absent_probes: r.absent_probes,
            column: r.column.clone(),
            distinct_values: r.distinct,
            false_negative_examples: r.false_negative_examples.clone(),
            false_negatives: r.false_negatives,
            filter,
            measured_fpp: r.measured_fpp,
            not_verified: r.not_verified.clone(),
            predicted_fpp: r.predicted_fpp,
            reason,
            row_group: r.row_group,
            values: r.values,
        }
    }
}
