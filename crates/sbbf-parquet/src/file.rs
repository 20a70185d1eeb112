//! Opening a file: the footer, read once with exactly two ranged reads.

use crate::column::ColumnType;
use crate::io::{read_range, IoCounters, IoStats, Range};
use crate::{Error, FooterError, NotParquet, ReadError};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::reader::ChunkReader;
use std::sync::Arc;

/// A Parquet file whose footer has been read: the reader, the metadata and where the footer
/// starts (filters must lie before it).
pub struct ParquetFile<R> {
    reader: R,
    metadata: Arc<ParquetMetaData>,
    file_len: u64,
    footer_start: u64,
    columns: Vec<ColumnType>,
    /// Filters the footer itself shows to be unusable, by (row group, column); computed on
    /// first use.
    pub(crate) conflicts: std::sync::OnceLock<std::collections::HashMap<(usize, usize), String>>,
    /// Every read made through this file.
    pub(crate) io: IoCounters,
}

impl<R: ChunkReader> ParquetFile<R> {
    /// Reads and decodes the footer: the last 8 bytes, then the metadata they announce.
    ///
    /// ```no_run
    /// let file = std::fs::File::open("data.parquet")?;
    /// let pq = sbbf_parquet::ParquetFile::open(file)?;
    /// println!("{} row groups", pq.metadata().num_row_groups());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(reader: R) -> Result<Self, Error> {
        let file_len = reader.len();
        check_min_len(file_len)?;
        let tail = read_range(
            &reader,
            Range {
                start: file_len - 8,
                end: file_len,
            },
        )?;
        let footer_start = footer_start(&tail, file_len)?;
        let meta = read_range(
            &reader,
            Range {
                start: footer_start,
                end: file_len - 8,
            },
        )?;
        let pq = ParquetFile::from_footer(reader, file_len, footer_start, &meta)?;
        pq.io.wave(1, tail.len() as u64);
        pq.io.wave(1, meta.len() as u64);
        Ok(pq)
    }
}

pub(crate) fn check_min_len(file_len: u64) -> Result<(), Error> {
    if file_len < 12 {
        return Err(NotParquet::TooShort { len: file_len }.into());
    }
    Ok(())
}

/// Where the footer starts, from the file's last 8 bytes (metadata length and magic).
pub(crate) fn footer_start(tail: &[u8], file_len: u64) -> Result<u64, Error> {
    let Ok(tail) = <[u8; 8]>::try_from(tail) else {
        return Err(ReadError::Short {
            start: file_len.saturating_sub(8),
            wanted: 8,
            got: tail.len() as u64,
        }
        .into());
    };
    match &tail[4..8] {
        b"PAR1" => {}
        b"PARE" => return Err(Error::Encrypted),
        _ => {
            return Err(NotParquet::BadMagic {
                found: [tail[4], tail[5], tail[6], tail[7]],
            }
            .into())
        }
    }
    let meta_len = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) as u64;
    if meta_len + 12 > file_len {
        return Err(NotParquet::FooterTooLong {
            footer_len: meta_len,
            file_len,
        }
        .into());
    }
    Ok(file_len - 8 - meta_len)
}

impl<R> ParquetFile<R> {
    /// Builds the file from its decoded-to-be footer bytes (`FileMetaData`, without the tail).
    pub(crate) fn from_footer(
        reader: R,
        file_len: u64,
        footer_start: u64,
        meta: &[u8],
    ) -> Result<Self, Error> {
        crate::footer::check_schema_counts(meta)?;
        let metadata = ParquetMetaDataReader::decode_metadata(meta).map_err(|e| {
            // A plaintext footer of an encrypted file may lack what an unencrypted one must
            // have: say why, rather than what is missing.
            if crate::footer::announces_encryption(meta) {
                Error::Encrypted
            } else {
                FooterError::Decode(e).into()
            }
        })?;
        let columns = metadata
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| ColumnType::from_descriptor(c))
            .collect();
        Ok(ParquetFile {
            reader,
            metadata: Arc::new(metadata),
            file_len,
            footer_start,
            columns,
            conflicts: std::sync::OnceLock::new(),
            io: IoCounters::default(),
        })
    }

    /// The reads made since the file was opened (the footer's included): requests, bytes and
    /// sequential waves.
    pub fn io_stats(&self) -> IoStats {
        self.io.get()
    }

    /// The reader, mutably (async readers need it).
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }
}

impl<R> ParquetFile<R> {
    /// The decoded footer.
    pub fn metadata(&self) -> &Arc<ParquetMetaData> {
        &self.metadata
    }

    /// The reader the file was opened with.
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Offset of the first footer byte (the Thrift `FileMetaData`).
    pub fn footer_start(&self) -> u64 {
        self.footer_start
    }

    /// Every leaf column, in schema order.
    pub fn columns(&self) -> &[ColumnType] {
        &self.columns
    }

    /// The index of the leaf column with this dotted path. When there is none, the error lists
    /// the leaves that look related (same last name, or under the given prefix), or all leaves.
    pub fn column_index(&self, path: &str) -> Result<usize, Error> {
        if let Some(i) = self.columns.iter().position(|c| c.path == path) {
            return Ok(i);
        }
        let prefix = format!("{path}.");
        let suffix = format!(".{path}");
        let mut candidates: Vec<String> = self
            .columns
            .iter()
            .map(|c| c.path.clone())
            .filter(|p| {
                p.starts_with(&prefix) || p.ends_with(&suffix) || p.eq_ignore_ascii_case(path)
            })
            .collect();
        if candidates.is_empty() {
            candidates = self.columns.iter().map(|c| c.path.clone()).collect();
        }
        Err(Error::UnknownColumn {
            column: path.to_string(),
            candidates,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with_footer(meta: &[u8]) -> bytes::Bytes {
        let mut file = b"PAR1".to_vec();
        file.extend_from_slice(meta);
        file.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        file.extend_from_slice(b"PAR1");
        file.into()
    }

    #[test]
    fn plaintext_footer_of_an_encrypted_file() {
        // FileMetaData { 8: encryption_algorithm = AES_GCM_V1 {} } and nothing else: parquet's
        // decoder misses the required fields; the reason is the encryption.
        let meta = [0x8c, 0x1c, 0x00, 0x00, 0x00];
        assert!(matches!(
            ParquetFile::open(file_with_footer(&meta)),
            Err(Error::Encrypted)
        ));
        // The same failure without field 8 is the decoder's.
        assert!(matches!(
            ParquetFile::open(file_with_footer(&[0x00])),
            Err(Error::Footer(FooterError::Decode(_)))
        ));
    }

    #[test]
    fn not_parquet_reasons() {
        assert!(matches!(
            ParquetFile::open(bytes::Bytes::from_static(b"PAR1")),
            Err(Error::NotParquet(NotParquet::TooShort { len: 4 }))
        ));
        assert!(matches!(
            ParquetFile::open(bytes::Bytes::from_static(b"PAR1\0\0\0\0\0\0\0\0ABCD")),
            Err(Error::NotParquet(NotParquet::BadMagic {
                found: [b'A', b'B', b'C', b'D']
            }))
        ));
        assert!(matches!(
            ParquetFile::open(bytes::Bytes::from_static(b"PAR1\0\0\0\0\x10\0\0\0PAR1")),
            Err(Error::NotParquet(NotParquet::FooterTooLong {
                footer_len: 16,
                file_len: 16
            }))
        ));
    }
}
