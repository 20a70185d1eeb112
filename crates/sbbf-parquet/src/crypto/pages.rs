//! The data pages of an encrypted file: one column chunk decrypted into a *plaintext image*, an
//! ordinary Parquet file in memory holding that chunk alone, which the `parquet` crate's
//! readers (built without encryption: the column reader of `verify`, the Arrow reader of
//! `build`) decode unchanged.
//!
//! In the file each page is two modules (`Encryption.md` 5.1): its Thrift `PageHeader`, always
//! AES-GCM (module type 5 for a dictionary page, 4 for a data page), then the page itself
//! (type 3 or 2), AES-GCM in `AES_GCM_V1` and AES-CTR in `AES_GCM_CTR_V1`. Data pages and their
//! headers add the page ordinal to the AAD (data pages only, counted from 0; a dictionary page
//! and its header have none). A header's `compressed_page_size` counts the whole page module as
//! stored: its 4-byte length, the nonce, the ciphertext and (GCM) the tag. Which kind a header
//! is shows only once it is decrypted; as parquet-java and arrow-rs do, the first page is taken
//! for a dictionary page when the chunk's metadata has `dictionary_page_offset` (and, should
//! that not authenticate, for a data page: only the right AAD authenticates).
//!
//! In the image each header gives the plaintext page's size, and the footer gives the chunk's
//! offsets and size in the image; the chunk's other metadata (encodings, statistics, value
//! counts) is the file's, decrypted.
//!
//! **Cost.** A chunk is read whole (one read of its `total_compressed_size` bytes) and the image
//! holds it again in plaintext: about twice the chunk's size in memory, one chunk at a time.
//! CTR pages are not authenticated (the specification's trade for speed): an altered CTR page
//! decrypts to other bytes, which the decoder rejects or reads as other values; an altered
//! header, or an altered GCM page, is an error.

use super::{
    decrypt_ctr, decrypt_module, module, Algorithm, ChunkEncryption, CryptoError, FileEncryption,
    Key,
};
use crate::io::{read_range, Range};
use crate::{Error, MalformedCrypto, ReadError};
use bytes::Bytes;
use parquet::errors::ParquetError;
use parquet::file::metadata::{FileMetaData, ParquetMetaData, ParquetMetaDataWriter};
use parquet::file::reader::ChunkReader;
use parquet::file::serialized_reader::SerializedFileReader;
use std::sync::Arc;
use thrift::protocol::{
    TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol,
    TOutputProtocol, TStructIdentifier, TType,
};

/// `PageType` (parquet.thrift) values the image treats apart.
const INDEX_PAGE: i32 = 1;
const DICTIONARY_PAGE: i32 = 2;

/// Where the chunk starts in the image: after the leading magic.
const BASE: i64 = 4;

/// One column chunk of an encrypted file, decrypted: an ordinary Parquet file in memory (no
/// encryption), whose one row group holds the chunk's pages in plaintext. The other chunks of
/// that row group are empty (no pages): only the chunk's leaf column can be read.
#[derive(Debug, Clone)]
pub struct PlainImage {
    /// The image: `PAR1`, the chunk's pages, the footer, its length, `PAR1`.
    pub bytes: Bytes,
    /// Its footer: the file's schema, and one row group (index 0) with the chunk's metadata.
    pub metadata: Arc<ParquetMetaData>,
}

impl PlainImage {
    /// The `parquet` crate's reader over the image (row group 0).
    pub fn reader(&self) -> Result<SerializedFileReader<Bytes>, Error> {
        SerializedFileReader::new(self.bytes.clone()).map_err(parquet_err)
    }
}

fn parquet_err(e: ParquetError) -> Error {
    Error::Read(ReadError::Parquet(e))
}

/// Column chunk `(row_group, column)` of an encrypted file as a [`PlainImage`]
/// ([`ParquetFile::plaintext_image`](crate::ParquetFile::plaintext_image) documents it): `path`
/// is the chunk's leaf column path, `footer_start` where the data area ends.
pub(crate) fn plaintext_image<R: ChunkReader>(
    encryption: Option<&FileEncryption>,
    metadata: &ParquetMetaData,
    path: &str,
    footer_start: u64,
    reader: &R,
    row_group: usize,
    column: usize,
) -> Result<PlainImage, Error> {
    let not_here = |what: MalformedCrypto| Error::from(CryptoError::Malformed(what));
    let enc = encryption.ok_or_else(|| not_here(MalformedCrypto::NotEncrypted))?;
    let rg = metadata
        .row_groups()
        .get(row_group)
        .ok_or_else(|| not_here(MalformedCrypto::NoRowGroup(row_group)))?;
    let chunk = rg
        .columns()
        .get(column)
        .ok_or_else(|| not_here(MalformedCrypto::NoColumn(column)))?;
    let path = path.to_string();
    let page_err = |(page, reason): (usize, String)| {
        Error::from(CryptoError::Page {
            row_group,
            column: path.clone(),
            page,
            reason,
        })
    };
    if let ChunkEncryption::Unreadable { reason, .. } = enc.chunk(row_group, column) {
        // Checked first: such a chunk's metadata is a placeholder, its offsets zero.
        return Err(CryptoError::ChunkUnreadable {
            row_group,
            column: path,
            reason,
        }
        .into());
    }
    let (start, len) = chunk.byte_range();
    let footer = footer_start;
    let end = start
        .checked_add(len)
        .filter(|&end| start >= 4 && end <= footer)
        .ok_or_else(|| {
            page_err((
                0,
                format!(
                    "the chunk's bytes ({len} at offset {start}) are not inside the data area (4..{footer})"
                ),
            ))
        })?;
    let pages = match enc.chunk(row_group, column) {
        ChunkEncryption::Unreadable { .. } => {
            return Err(not_here(MalformedCrypto::UnreadableChunk))
        }
        ChunkEncryption::Plaintext => {
            let at = |o: i64| u64::try_from(o).ok().and_then(|o| o.checked_sub(start));
            Pages {
                bytes: read_range(reader, Range { start, end })?.to_vec(),
                dictionary: chunk.dictionary_page_offset().and_then(at),
                data: at(chunk.data_page_offset()),
            }
        }
        ChunkEncryption::Readable { .. } => {
            let key = enc
                .chunk_key(row_group, column)
                .ok_or_else(|| not_here(MalformedCrypto::NoChunkKey))?;
            let raw = read_range(reader, Range { start, end })?;
            let chunk_ref = ChunkRef {
                enc,
                key,
                row_group,
                column,
            };
            chunk_ref
                .decrypt(&raw, chunk.dictionary_page_offset().is_some())
                .map_err(page_err)?
        }
    };
    image(metadata, row_group, column, pages)
}

/// A chunk's pages in plaintext, and where its first dictionary and data page start in them.
struct Pages {
    bytes: Vec<u8>,
    dictionary: Option<u64>,
    data: Option<u64>,
}

/// An encrypted chunk: its key and what its AADs are made of.
struct ChunkRef<'a> {
    enc: &'a FileEncryption,
    key: &'a Key,
    row_group: usize,
    column: usize,
}

/// The page (counted from 0, dictionary included) and what is wrong with it.
type PageError = (usize, String);

impl ChunkRef<'_> {
    /// Decrypts every page of `raw` (the chunk's bytes as stored) into plaintext pages with
    /// rewritten headers. `dictionary_first`: the metadata announces a dictionary page.
    fn decrypt(&self, raw: &[u8], dictionary_first: bool) -> Result<Pages, PageError> {
        let mut out = Pages {
            bytes: Vec::with_capacity(raw.len()),
            dictionary: None,
            data: None,
        };
        let (mut pos, mut page, mut ordinal) = (0usize, 0usize, 0u32);
        while pos < raw.len() {
            let err = |why: String| (page, why);
            let (header_module, after) = length_prefixed_at(raw, pos).ok_or_else(|| {
                err(format!(
                    "the header's length prefix at byte {pos} of the chunk runs past its end ({} bytes)",
                    raw.len()
                ))
            })?;
            let data_ordinal = i16::try_from(ordinal).map_err(|_| {
                err(
                    "more than 32767 data pages: the AAD's page ordinal (i16) cannot count them"
                        .into(),
                )
            })?;
            // A dictionary page can only come first (its AAD has no ordinal to place it).
            let kinds: &[bool] = match (page, dictionary_first) {
                (0, true) => &[true, false],
                (0, false) => &[false, true],
                _ => &[false],
            };
            let (is_dict, header) = kinds
                .iter()
                .find_map(|&dict| {
                    let aad = if dict {
                        self.aad(module::DICTIONARY_PAGE_HEADER, None)
                    } else {
                        self.aad(module::DATA_PAGE_HEADER, Some(data_ordinal))
                    };
                    decrypt_module(self.key, header_module, &aad).map(|h| (dict, h))
                })
                .ok_or_else(|| {
                    err("its header did not decrypt: wrong key, or the file was altered".into())
                })?;
            let info = read_page_header(&header)
                .map_err(|e| err(format!("its decrypted header is not a PageHeader: {e}")))?;
            if (info.page_type == DICTIONARY_PAGE) != is_dict {
                return Err(err(format!(
                    "its header (page type {}) was encrypted as a {} page header",
                    info.page_type,
                    if is_dict { "dictionary" } else { "data" }
                )));
            }
            let size = usize::try_from(info.compressed_page_size)
                .ok()
                .filter(|s| after.checked_add(*s).is_some_and(|e| e <= raw.len()))
                .ok_or_else(|| {
                    err(format!(
                        "its compressed_page_size {} does not fit the chunk",
                        info.compressed_page_size
                    ))
                })?;
            // compressed_page_size counts the module with its length prefix: they must agree.
            let body = length_prefixed_at(&raw[after..after + size], 0)
                .filter(|(_, end)| *end == size)
                .map(|(body, _)| body)
                .ok_or_else(|| {
                    err(format!(
                        "its module's length prefix does not match compressed_page_size {size}"
                    ))
                })?;
            // The CRC covers the page as written, the encrypted module (parquet.thrift; parquet-java
            // 1.17 writes it so): the one check a CTR page has against accidental damage.
            if let Some(crc) = info.crc {
                if crc32fast::hash(&raw[after..after + size]) != crc as u32 {
                    return Err(err(format!(
                        "its CRC ({:08x}) does not match the page as stored: the file was altered or damaged",
                        crc as u32
                    )));
                }
            }
            pos = after + size;
            page += 1;
            if info.page_type == INDEX_PAGE {
                continue; // never written by known writers; the parquet crate skips them too
            }
            let plain = match self.enc.algorithm {
                Algorithm::AesGcmCtrV1 => decrypt_ctr(self.key, body),
                Algorithm::AesGcmV1 if is_dict => {
                    decrypt_module(self.key, body, &self.aad(module::DICTIONARY_PAGE, None))
                }
                Algorithm::AesGcmV1 => decrypt_module(
                    self.key,
                    body,
                    &self.aad(module::DATA_PAGE, Some(data_ordinal)),
                ),
            }
            .ok_or_else(|| {
                (
                    page - 1,
                    "it did not decrypt: wrong key, or the file was altered".to_string(),
                )
            })?;
            let at = out.bytes.len() as u64;
            if is_dict {
                out.dictionary.get_or_insert(at);
            } else {
                out.data.get_or_insert(at);
                ordinal += 1;
            }
            let header = plaintext_header(&header, &plain).map_err(|e| {
                (
                    page - 1,
                    format!("its header could not be written again: {e}"),
                )
            })?;
            out.bytes.extend_from_slice(&header);
            out.bytes.extend_from_slice(&plain);
        }
        Ok(out)
    }

    fn aad(&self, kind: u8, page: Option<i16>) -> Vec<u8> {
        self.enc.page_aad(kind, self.row_group, self.column, page)
    }
}

/// The module after the 4-byte little-endian length at `pos`, and where it ends.
fn length_prefixed_at(bytes: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let len = u32::from_le_bytes(bytes.get(pos..pos.checked_add(4)?)?.try_into().ok()?) as usize;
    let end = (pos + 4).checked_add(len)?;
    Some((bytes.get(pos + 4..end)?, end))
}

/// What the image needs of a `PageHeader`.
struct PageInfo {
    page_type: i32,
    compressed_page_size: i32,
    crc: Option<i32>,
}

/// Reads fields 1 (`type`), 3 (`compressed_page_size`) and 4 (`crc`) of a `PageHeader`; bytes
/// after its stop field are ignored.
fn read_page_header(bytes: &[u8]) -> thrift::Result<PageInfo> {
    let config = crate::format::header::bounded_thrift(bytes.len().max(64), 64)?;
    let mut cursor: &[u8] = bytes;
    let mut i = TCompactInputProtocol::with_config(&mut cursor, config);
    let (mut page_type, mut size, mut crc) = (None, None, None);
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::I32, Some(1)) => page_type = Some(i.read_i32()?),
            (TType::I32, Some(3)) => size = Some(i.read_i32()?),
            (TType::I32, Some(4)) => crc = Some(i.read_i32()?),
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    match (page_type, size) {
        (Some(page_type), Some(compressed_page_size)) => Ok(PageInfo {
            page_type,
            compressed_page_size,
            crc,
        }),
        _ => Err(thrift::Error::Protocol(thrift::ProtocolError::new(
            thrift::ProtocolErrorKind::InvalidData,
            "a PageHeader without type or compressed_page_size",
        ))),
    }
}

/// The `PageHeader` of a plaintext page: `compressed_page_size` set to the page's size, a `crc`
/// computed again over it (the stored one covers the encrypted module), every other field as
/// it was.
fn plaintext_header(bytes: &[u8], page: &[u8]) -> thrift::Result<Vec<u8>> {
    // A page module is at most i32::MAX bytes (compressed_page_size), so is its plaintext.
    let size = page.len() as i32;
    let config = crate::format::header::bounded_thrift(bytes.len().max(64), 64)?;
    let mut cursor: &[u8] = bytes;
    let mut i = TCompactInputProtocol::with_config(&mut cursor, config);
    let mut out = Vec::with_capacity(bytes.len());
    {
        let mut o = TCompactOutputProtocol::new(&mut out);
        i.read_struct_begin()?;
        o.write_struct_begin(&TStructIdentifier::new("PageHeader"))?;
        loop {
            let f = i.read_field_begin()?;
            if f.field_type == TType::Stop {
                break;
            }
            let id = f.id.unwrap_or(0);
            o.write_field_begin(&TFieldIdentifier::new("f", f.field_type, id))?;
            if (f.field_type, id) == (TType::I32, 3) {
                i.read_i32()?;
                o.write_i32(size)?;
            } else if (f.field_type, id) == (TType::I32, 4) {
                i.read_i32()?;
                o.write_i32(crc32fast::hash(page) as i32)?;
            } else {
                crate::format::footer::copy_thrift_value(&mut i, &mut o, f.field_type)?;
            }
            o.write_field_end()?;
            i.read_field_end()?;
        }
        i.read_struct_end()?;
        o.write_field_stop()?;
        o.write_struct_end()?;
        o.flush()?;
    }
    Ok(out)
}

/// The image of `pages`, chunk `(row_group, column)` of the file `meta` describes.
fn image(
    meta: &ParquetMetaData,
    row_group: usize,
    column: usize,
    pages: Pages,
) -> Result<PlainImage, Error> {
    let rg = meta.row_group(row_group);
    let len = pages.bytes.len() as i64;
    let columns = rg
        .columns()
        .iter()
        .enumerate()
        .map(|(c, chunk)| {
            // Nothing but the pages is in the image: no page index, no filter.
            let b = chunk
                .clone()
                .into_builder()
                .set_index_page_offset(None)
                .set_bloom_filter_offset(None)
                .set_bloom_filter_length(None)
                .set_offset_index_offset(None)
                .set_offset_index_length(None)
                .set_column_index_offset(None)
                .set_column_index_length(None);
            let b = if c == column {
                let data = pages.data.or(pages.dictionary).unwrap_or(0) as i64;
                b.set_data_page_offset(BASE + data)
                    .set_dictionary_page_offset(pages.dictionary.map(|d| BASE + d as i64))
                    .set_total_compressed_size(len)
            } else {
                b.set_data_page_offset(BASE)
                    .set_dictionary_page_offset(None)
                    .set_total_compressed_size(0)
            };
            b.build().map_err(parquet_err)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let row_group = rg
        .clone()
        .into_builder()
        .set_column_metadata(columns)
        .set_ordinal(0)
        .set_file_offset(BASE)
        .build()
        .map_err(parquet_err)?;
    let fm = meta.file_metadata();
    let file_meta = FileMetaData::new(
        fm.version(),
        row_group.num_rows(),
        fm.created_by().map(str::to_string),
        fm.key_value_metadata().cloned(),
        fm.schema_descr_ptr(),
        fm.column_orders().cloned(),
    );
    let metadata = ParquetMetaData::new(file_meta, vec![row_group]);
    let mut bytes = Vec::with_capacity(4 + pages.bytes.len() + 1024);
    bytes.extend_from_slice(b"PAR1");
    bytes.extend_from_slice(&pages.bytes);
    drop(pages);
    ParquetMetaDataWriter::new(&mut bytes, &metadata)
        .finish()
        .map_err(parquet_err)?;
    Ok(PlainImage {
        bytes: bytes.into(),
        metadata: Arc::new(metadata),
    })
}
