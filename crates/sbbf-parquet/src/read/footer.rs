//! Reading a file's footer: the 8-byte tail, then the metadata it announces (two ranged reads
//! at most, sync or async), decoded and, for an encrypted file, opened with its keys.
//! (The footer's bytes and their edits, for writers, are [`crate::format::footer`].)

use crate::io::{read_range, Range};
use crate::keys::KeySet;
use crate::{Error, FooterError, NotParquet, ParquetFile, ReadError};
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::reader::ChunkReader;
use std::sync::Arc;

/// An encrypted footer ("PARE") opens only with the footer key, and only in a build with the
/// `encryption` feature.
pub(crate) fn check_footer_key(keys: &KeySet) -> Result<(), Error> {
    if cfg!(not(feature = "encryption")) {
        Err(Error::EncryptionNotBuilt)
    } else if keys.footer().is_none() {
        Err(Error::Encrypted)
    } else {
        Ok(())
    }
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
        ParquetFile::open_with_keys(reader, &KeySet::new())
    }

    /// [`ParquetFile::open`] for a file with modular encryption: the footer decrypted (or
    /// its signature verified) with the footer key, each column's metadata and filters with
    /// its key. Columns whose key is not given answer "unknown" with the reason; an encrypted
    /// footer without the footer key is [`Error::Encrypted`]. Files without encryption open
    /// as with [`ParquetFile::open`].
    ///
    /// ```
    /// use sbbf_parquet::{ParquetFile, crypto::{Key, KeySet}};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"),
    /// #     "/../../testdata/encrypted/encrypt_columns_and_footer_bloom_filter.parquet.encrypted");
    /// let keys = KeySet::new()
    ///     .with_footer_key(Key::parse("0123456789012345")?)
    ///     .with_column_key("double_field", Key::parse("1234567890123450")?);
    /// let pq = ParquetFile::open_with_keys(std::fs::File::open(path)?, &keys)?;
    /// assert!(pq.encryption().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_with_keys(reader: R, keys: &KeySet) -> Result<Self, Error> {
        let file_len = reader.len();
        check_min_len(file_len)?;
        let started = std::time::Instant::now();
        let tail = read_range(
            &reader,
            Range {
                start: file_len - 8,
                end: file_len,
            },
        )?;
        let (footer_start, pare) = footer_start_any(&tail, file_len)?;
        if pare {
            check_footer_key(keys)?;
        }
        let meta = read_range(
            &reader,
            Range {
                start: footer_start,
                end: file_len - 8,
            },
        )?;
        let pq = ParquetFile::from_footer_keyed(reader, file_len, footer_start, &meta, pare, keys)?;
        pq.io.start_at(started);
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

/// Where the footer starts, and whether it is encrypted (`PARE`).
pub(crate) fn footer_start_any(tail: &[u8], file_len: u64) -> Result<(u64, bool), Error> {
    let Ok(tail) = <[u8; 8]>::try_from(tail) else {
        return Err(ReadError::Short {
            start: file_len.saturating_sub(8),
            wanted: 8,
            got: tail.len() as u64,
        }
        .into());
    };
    let pare = match &tail[4..8] {
        b"PAR1" => false,
        b"PARE" => true,
        _ => {
            return Err(NotParquet::BadMagic {
                found: [tail[4], tail[5], tail[6], tail[7]],
            }
            .into())
        }
    };
    let meta_len = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) as u64;
    if meta_len + 12 > file_len {
        return Err(NotParquet::FooterTooLong {
            footer_len: meta_len,
            file_len,
        }
        .into());
    }
    Ok((file_len - 8 - meta_len, pare))
}

impl<R> ParquetFile<R> {
    /// Builds the file from its footer bytes (between the data and the 8-byte tail), with the
    /// keys of an encrypted file; `pare`: the footer is encrypted (`meta` starts with
    /// `FileCryptoMetaData`).
    pub(crate) fn from_footer_keyed(
        reader: R,
        file_len: u64,
        footer_start: u64,
        meta: &[u8],
        pare: bool,
        keys: &KeySet,
    ) -> Result<Self, Error> {
        #[cfg(feature = "encryption")]
        {
            if !pare {
                crate::format::footer::check_schema_counts(meta)?;
            }
            let prepared = crate::crypto::prepare_footer(meta, pare, keys)?;
            if pare {
                crate::format::footer::check_schema_counts(&prepared.meta)?;
            }
            let metadata = ParquetMetaDataReader::decode_metadata(&prepared.meta).map_err(|e| {
                // A plaintext footer of an encrypted file may lack what an unencrypted one must
                // have: say why, rather than what is missing.
                if prepared.encryption.is_none()
                    && crate::format::footer::announces_encryption(meta)
                {
                    Error::Encrypted
                } else {
                    FooterError::Decode(e).into()
                }
            })?;
            Ok(ParquetFile::with_metadata(
                reader,
                Arc::new(metadata),
                file_len,
                footer_start,
                prepared.encryption.map(Arc::new),
            ))
        }
        #[cfg(not(feature = "encryption"))]
        {
            // Without the cipher, no part of an encrypted file is trusted: an error, so that
            // every caller keeps every row group.
            let _ = keys;
            if pare || crate::format::footer::announces_encryption(meta) {
                return Err(Error::EncryptionNotBuilt);
            }
            crate::format::footer::check_schema_counts(meta)?;
            let metadata =
                ParquetMetaDataReader::decode_metadata(meta).map_err(FooterError::Decode)?;
            Ok(ParquetFile::with_metadata(
                reader,
                Arc::new(metadata),
                file_len,
                footer_start,
                (),
            ))
        }
    }
}

#[cfg(feature = "async")]
impl<R: parquet::arrow::async_reader::AsyncFileReader> ParquetFile<R> {
    /// Opens a file through an async reader: one request for the last 64 KiB (or the whole
    /// file if smaller), a second only when the footer is larger. The filters within those
    /// bytes (most writers put them just before the footer) are later read from them, no
    /// request made.
    pub async fn open_async(reader: R, file_len: u64) -> Result<Self, Error> {
        ParquetFile::open_async_with_keys(reader, file_len, &KeySet::new()).await
    }

    /// [`ParquetFile::open_async`] for a file with modular encryption (see
    /// [`ParquetFile::open_with_keys`]).
    pub async fn open_async_with_keys(
        mut reader: R,
        file_len: u64,
        keys: &KeySet,
    ) -> Result<Self, Error> {
        check_min_len(file_len)?;
        let suffix = crate::read::async_driver::FOOTER_SUFFIX.min(file_len);
        let started = std::time::Instant::now();
        let tail = reader
            .get_bytes(file_len - suffix..file_len)
            .await
            .map_err(|e| Error::Read(ReadError::Parquet(e)))?;
        ParquetFile::open_with_tail_keyed(reader, file_len, tail, keys, started).await
    }

    /// Opens a file whose last bytes (`tail`, at most the whole file) were read already, in
    /// one request: a second only when the footer is larger than the tail.
    pub(crate) async fn open_with_tail_keyed(
        mut reader: R,
        file_len: u64,
        tail: bytes::Bytes,
        keys: &KeySet,
        started: std::time::Instant,
    ) -> Result<Self, Error> {
        check_min_len(file_len)?;
        // At least the suffix asked for (so at least the 12 bytes of any Parquet file), at
        // most the file.
        let suffix = tail.len() as u64;
        let wanted = crate::read::async_driver::FOOTER_SUFFIX.min(file_len);
        if suffix < wanted || suffix > file_len {
            return Err(Error::Read(ReadError::Short {
                start: file_len.saturating_sub(wanted),
                wanted,
                got: suffix,
            }));
        }
        let (start, pare) = footer_start_any(&tail[tail.len() - 8..], file_len)?;
        if pare {
            check_footer_key(keys)?;
        }
        let mut second = None;
        let meta = if start >= file_len - suffix {
            let from = (start - (file_len - suffix)) as usize;
            tail.slice(from..tail.len() - 8)
        } else {
            let b = reader
                .get_bytes(start..file_len - 8)
                .await
                .map_err(|e| Error::Read(ReadError::Parquet(e)))?;
            if b.len() as u64 != file_len - 8 - start {
                return Err(Error::Read(ReadError::Short {
                    start,
                    wanted: file_len - 8 - start,
                    got: b.len() as u64,
                }));
            }
            second = Some(b.len() as u64);
            b
        };
        let mut pq = ParquetFile::from_footer_keyed(reader, file_len, start, &meta, pare, keys)?;
        pq.tail = Some((file_len - suffix, tail.clone()));
        pq.io.start_at(started);
        pq.io.wave(1, tail.len() as u64);
        if let Some(bytes) = second {
            pq.io.wave(1, bytes);
        }
        Ok(pq)
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
            Err(Error::Encrypted | Error::EncryptionNotBuilt)
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
