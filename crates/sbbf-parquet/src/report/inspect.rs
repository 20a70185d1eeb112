//! `sbbf inspect`'s report: every filter of a file, its encryption and its problems.

use crate::inspect::FilterReport;
use crate::keys::ChunkEncryption;
use crate::ParquetFile;
use parquet::file::reader::ChunkReader;
use serde::Serialize;

/// One file's filters (`sbbf inspect --format json`).
///
/// ```
/// use sbbf_parquet::{report::InspectReport, ParquetFile};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pa_ints.parquet");
/// let pq = ParquetFile::open(std::fs::File::open(path)?)?;
/// let report = InspectReport::of("pa_ints.parquet", &pq, &["i64".to_string()], false)?;
/// assert!(report.chunks.iter().all(|c| c.column == "i64" && c.has_filter == Some(true)));
/// assert_eq!(report.problems, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    /// Every chosen column chunk, with or without a filter.
    pub chunks: Vec<InspectChunk>,
    /// Chosen columns the file lacks (with several files, where a column may be missing).
    pub columns_not_in_file: Vec<String>,
    /// The writer (`created_by`).
    pub created_by: Option<String>,
    /// The file's modular encryption, if any.
    pub encryption: Option<EncryptionSummary>,
    /// The file as shown.
    pub file: String,
    /// The file's size in bytes.
    pub file_size: u64,
    /// Row groups in the file.
    pub num_row_groups: usize,
    /// Problems found, all chunks together.
    pub problems: usize,
    /// What is not a problem of one filter but worth saying (plaintext filter headers that no
    /// chunk accounts for, in an encrypted file).
    pub warnings: Vec<String>,
}

/// One column chunk of an [`InspectReport`].
#[derive(Debug, Clone, Serialize)]
pub struct InspectChunk {
    /// Bits set in the bitset.
    pub bits_set: Option<u64>,
    /// Size of the bitset.
    pub bitset_bytes: Option<i32>,
    /// Leaf column path.
    pub column: String,
    /// How the chunk is encrypted: `column key` or `footer key`, and why it cannot be read.
    pub encryption: Option<String>,
    /// False-positive rate its bits give a random absent value.
    pub estimated_fpp: Option<f64>,
    /// Share of bits set.
    pub fill_ratio: Option<f64>,
    /// Whether the chunk has a filter; `null` when its encryption hides it (no key given, or
    /// it did not authenticate).
    pub has_filter: Option<bool>,
    /// Bytes of the filter header.
    pub header_bytes: Option<u64>,
    /// `bloom_filter_length`.
    pub length: Option<i32>,
    /// The logical type in compact text.
    pub logical_type: Option<String>,
    /// `bloom_filter_offset`.
    pub offset: Option<i64>,
    /// The physical type.
    pub physical_type: Option<&'static str>,
    /// Problems found; empty for a healthy filter.
    pub problems: Vec<String>,
    /// Row group.
    pub row_group: usize,
}

/// How a file is encrypted, as `inspect` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct EncryptionSummary {
    /// `AES_GCM_V1` or `AES_GCM_CTR_V1`.
    pub algorithm: &'static str,
    /// `encrypted` or `plaintext`.
    pub footer: &'static str,
    /// Whether a plaintext footer's signature was verified (or the footer decrypted).
    pub footer_verified: bool,
}

impl InspectReport {
    /// [`InspectReport::of`] the file at `path`, opened with `keys`.
    pub fn of_file(
        file: &str,
        path: &std::path::Path,
        keys: &crate::KeySet,
        columns: &[String],
        many: bool,
    ) -> Result<InspectReport, crate::Error> {
        let f =
            std::fs::File::open(path).map_err(|e| crate::Error::Read(crate::ReadError::Open(e)))?;
        InspectReport::of(file, &ParquetFile::open_with_keys(f, keys)?, columns, many)
    }

    /// The report on `pq`'s filters, for the `columns` asked for (none: every column). With
    /// several files (`many`), a column the file lacks is listed in `columns_not_in_file`
    /// instead of failing.
    pub fn of<R: ChunkReader>(
        file: &str,
        pq: &ParquetFile<R>,
        columns: &[String],
        many: bool,
    ) -> Result<InspectReport, crate::Error> {
        let chosen = pq.choose_columns(columns, many)?;
        let paths: Vec<&str> = chosen
            .columns
            .iter()
            .map(|&c| pq.columns()[c].path.as_str())
            .collect();
        let chunks: Vec<InspectChunk> = pq
            .inspect()
            .into_iter()
            .filter(|r| columns.is_empty() || paths.contains(&r.column.as_str()))
            .map(|r| chunk(pq, r))
            .collect();
        #[cfg(feature = "encryption")]
        let warnings: Vec<String> = pq
            .stray_filter_headers()?
            .iter()
            .map(|h| h.to_string())
            .collect();
        #[cfg(not(feature = "encryption"))]
        let warnings = Vec::new();
        Ok(InspectReport {
            problems: chunks.iter().map(|c| c.problems.len()).sum(),
            chunks,
            columns_not_in_file: chosen.not_in_file,
            created_by: pq
                .metadata()
                .file_metadata()
                .created_by()
                .map(str::to_string),
            encryption: encryption_of(pq),
            file: file.to_string(),
            file_size: pq.file_len(),
            num_row_groups: pq.metadata().num_row_groups(),
            warnings,
        })
    }
}

fn chunk<R>(pq: &ParquetFile<R>, r: FilterReport) -> InspectChunk {
    let index = pq.columns().iter().position(|c| c.path == r.column);
    let ty = index.map(|i| &pq.columns()[i]);
    let hidden = index.is_some_and(|c| {
        matches!(
            pq.chunk_encryption(r.row_group, c),
            ChunkEncryption::Unreadable { .. }
        )
    });
    InspectChunk {
        bits_set: r.bits_set,
        bitset_bytes: r.num_bytes,
        encryption: r.encryption,
        estimated_fpp: r.fpp,
        fill_ratio: r.fill,
        has_filter: if hidden {
            None
        } else {
            Some(r.offset.is_some())
        },
        header_bytes: r.header_len,
        length: r.length,
        logical_type: ty.and_then(|t| t.logical.clone()),
        offset: r.offset,
        physical_type: ty.map(|t| t.physical_name()),
        problems: r.problems,
        row_group: r.row_group,
        column: r.column,
    }
}

#[cfg(feature = "encryption")]
fn encryption_of<R>(pq: &ParquetFile<R>) -> Option<EncryptionSummary> {
    pq.encryption().map(|e| EncryptionSummary {
        algorithm: e.algorithm.name(),
        footer: if e.footer_encrypted {
            "encrypted"
        } else {
            "plaintext"
        },
        footer_verified: e.signature_verified,
    })
}

#[cfg(not(feature = "encryption"))]
fn encryption_of<R>(_pq: &ParquetFile<R>) -> Option<EncryptionSummary> {
    None
}
