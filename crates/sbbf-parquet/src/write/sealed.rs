//! Sealing plaintext filters of encrypted columns (arrow-rs 60 writes them): each becomes the
//! two encrypted modules the specification asks for, written after the data with the column's
//! key, its location set inside the column's encrypted metadata, the footer encrypted again
//! (or signed again, for a plaintext footer), and the old plaintext bytes overwritten with
//! zeros (left in place they would still reveal the column's values). The filter's bits are
//! kept as they are; nothing else changes: data pages byte-identical, every other footer field
//! kept.

use crate::crypto::{module, seal_module, sign, ChunkEncryption, CryptoError, KeySet};
use crate::format::footer::{encrypted_footer_edit, FilterEdits};
use crate::format::header::{BloomFilterHeader, MAX_HEADER_BYTES};
use crate::io::{read_range, Range};
use crate::write::{
    atomic_write, check_fpp, chosen_columns, read_err, write_err, AddOptions, WriteReport,
    WrittenFilter,
};
use crate::{BuildError, Error, ParquetFile, WriteError};
use parquet::basic::Type as PhysicalType;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

/// One plaintext filter to seal.
struct Leak {
    row_group: usize,
    column: usize,
    offset: u64,
    len: u64,
    bitset: bytes::Bytes,
}

/// Rewrites `input` into `output` (which may be `input`) with every plaintext filter of an
/// encrypted column of `columns` (dotted paths; all columns when empty) whose key is in `keys`
/// sealed (see the module documentation). Needs the footer key (to encrypt or sign the
/// footer). [`CryptoError::NothingToSeal`] when there is no such filter (nothing is written).
pub fn seal_plaintext_filters(
    input: &Path,
    output: &Path,
    keys: &KeySet,
    columns: &[String],
) -> Result<WriteReport, Error> {
    let pq = ParquetFile::open_with_keys(File::open(input).map_err(read_err(input))?, keys)?;
    let chosen: Vec<usize> = columns
        .iter()
        .map(|c| pq.column_index(c))
        .collect::<Result<_, _>>()?;
    let Some(enc) = pq.encryption() else {
        return Err(CryptoError::NothingToSeal.into());
    };
    if enc.footer_key.is_none() {
        return Err(CryptoError::NoFooterKey.into());
    }
    let footer = pq.footer_start();
    let mut leaks = Vec::new();
    for (r, rg) in pq.metadata().row_groups().iter().enumerate() {
        for (c, chunk) in rg.columns().iter().enumerate() {
            if !matches!(enc.chunk(r, c), ChunkEncryption::Readable { .. })
                || !(chosen.is_empty() || chosen.contains(&c))
            {
                continue;
            }
            let Some(offset) = chunk
                .bloom_filter_offset()
                .and_then(|o| u64::try_from(o).ok())
            else {
                continue;
            };
            if offset < 4 || offset >= footer {
                continue;
            }
            let head = read_range(
                pq.reader(),
                Range {
                    start: offset,
                    end: (offset + MAX_HEADER_BYTES as u64).min(footer),
                },
            )?;
            let Ok((header, header_len)) = BloomFilterHeader::parse(&head) else {
                continue; // not plaintext: an encrypted filter, or none usable
            };
            let start = offset + header_len as u64;
            let end = start + header.num_bytes as u64;
            if end > footer {
                continue;
            }
            let bitset = read_range(pq.reader(), Range { start, end })?;
            leaks.push(Leak {
                row_group: r,
                column: c,
                offset,
                len: end - offset,
                bitset,
            });
        }
    }
    if leaks.is_empty() {
        return Err(CryptoError::NothingToSeal.into());
    }
    let zero: Vec<(u64, u64)> = leaks.iter().map(|l| (l.offset, l.offset + l.len)).collect();
    let filters = leaks
        .into_iter()
        .map(|l| NewFilter {
            row_group: l.row_group,
            column: l.column,
            bytes_before: l.len,
            bitset: l.bitset,
            distinct: None,
        })
        .collect();
    rewrite(&pq, input, output, &zero, filters)
}

/// A filter to write into an encrypted file.
struct NewFilter {
    row_group: usize,
    column: usize,
    /// Bytes the chunk's filter took before.
    bytes_before: u64,
    bitset: bytes::Bytes,
    /// Distinct values, estimated from the fill (new filters only).
    distinct: Option<u64>,
}

/// Adds filters for `opts.columns` to every row group of an encrypted file read with `keys`,
/// writing `output` (which may be `input`): each built from the chunk's values, decrypted
/// through a [`crate::crypto::PlainImage`] (one chunk in memory at a time, built one after another),
/// sized as [`crate::write::add_filters`] sizes them; written after the data as two encrypted
/// modules (header, module type 8; bitset, type 9) with the column's key where the column is
/// encrypted, in plaintext where it is not; the locations set in the metadata (inside the
/// column's encrypted metadata where it has that), the footer encrypted again (`PARE`) or
/// signed again (plaintext footer) with the footer key. The bytes before the old footer are
/// copied unchanged.
///
/// Needs the footer key and the key of every chosen encrypted column
/// ([`CryptoError::ChunkUnreadable`] otherwise). A column that has filters already is refused
/// ([`crate::BuildError::HasFilters`]), `opts.replace` or not: rebuilding filters in an
/// encrypted file is not supported ([`seal_plaintext_filters`] seals leaking ones).
pub fn add_encrypted(
    input: &Path,
    output: &Path,
    keys: &KeySet,
    opts: &AddOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<WriteReport, Error> {
    check_fpp(opts.fpp)?;
    let pq = ParquetFile::open_with_keys(File::open(input).map_err(read_err(input))?, keys)?;
    let Some(enc) = pq.encryption() else {
        return Err(CryptoError::Malformed(crate::MalformedCrypto::NotEncrypted).into());
    };
    if enc.footer_key.is_none() {
        return Err(CryptoError::NoFooterKey.into());
    }
    let rgs = pq.metadata().num_row_groups();
    let mut cols: Vec<usize> = Vec::new();
    for name in &opts.columns {
        let c = pq.column_index(name)?;
        if pq.columns()[c].physical == PhysicalType::BOOLEAN {
            return Err(BuildError::Boolean {
                column: name.clone(),
            }
            .into());
        }
        // Checked before anything is built: a chunk without its key can get no filter (a
        // plaintext one would reveal its values).
        for rg in 0..rgs {
            if let ChunkEncryption::Unreadable { reason, .. } = enc.chunk(rg, c) {
                return Err(CryptoError::ChunkUnreadable {
                    row_group: rg,
                    column: pq.columns()[c].path.clone(),
                    reason,
                }
                .into());
            }
        }
        if pq.filter_locations(c).iter().any(|l| l.offset.is_some()) {
            return Err(BuildError::HasFilters {
                column: name.clone(),
            }
            .into());
        }
        if !cols.contains(&c) {
            cols.push(c);
        }
    }
    let total = rgs * cols.len();
    let mut filters = Vec::with_capacity(total);
    for rg in 0..rgs {
        for &c in &cols {
            let image = pq.plaintext_image(rg, c)?;
            let (f, distinct) = crate::write::build::chunk_filter(
                image.bytes.clone(),
                &image.metadata,
                &image.reader()?,
                &pq.columns()[c],
                (0, c),
                opts.ndv,
                opts.fpp,
            )?;
            filters.push(NewFilter {
                row_group: rg,
                column: c,
                bytes_before: 0,
                bitset: bytes::Bytes::copy_from_slice(f.as_bytes()),
                distinct: Some(distinct),
            });
            progress(filters.len(), total);
        }
    }
    rewrite(&pq, input, output, &[], filters)
}

/// Folds the filters of `columns` (dotted paths; all when empty) of an encrypted file, read
/// with `keys`, as far as their fill keeps the false-positive rate at or below `fpp` (exact
/// folding, as `resize` does), and appends them: sealed as encrypted modules for encrypted
/// columns, plaintext for the others; the locations are set in the metadata (re-encrypted
/// where it is encrypted) and the footer is encrypted or signed again. The old filters stay
/// where they were (encrypted ones reveal nothing). Chunks whose key was not given, or whose
/// filter cannot be read, are left as they are.
pub fn resize_encrypted(
    input: &Path,
    output: &Path,
    keys: &KeySet,
    fpp: f64,
    columns: &[String],
) -> Result<WriteReport, Error> {
    check_fpp(fpp)?;
    let pq = ParquetFile::open_with_keys(File::open(input).map_err(read_err(input))?, keys)?;
    if pq.encryption().is_none() {
        return Err(CryptoError::Malformed(crate::MalformedCrypto::NotEncrypted).into());
    }
    let chosen = chosen_columns(&pq, columns)?;
    let mut filters = Vec::new();
    for c in chosen {
        for (rg, span) in pq
            .read_filters(c, crate::IoPolicy::default())
            .into_iter()
            .enumerate()
        {
            let Ok(span) = span else { continue };
            let mut f = sbbf::Sbbf::from_bitset(&span.bitset)
                .map_err(|e| Error::Build(crate::BuildError::Filter(e)))?;
            if !f.num_blocks().is_power_of_two() {
                continue;
            }
            let folds = f
                .fold_to_target_fpp(fpp)
                .map_err(|e| Error::Build(crate::BuildError::Filter(e)))?;
            if folds > 0 {
                filters.push(NewFilter {
                    row_group: rg,
                    column: c,
                    bytes_before: span.end() - span.offset,
                    bitset: bytes::Bytes::copy_from_slice(f.as_bytes()),
                    distinct: None,
                });
            }
        }
    }
    rewrite(&pq, input, output, &[], filters)
}

/// Writes `output`: the input's bytes before the footer (the `zero` ranges as zeros), then
/// `filters` (sealed with their chunk's key where the chunk is encrypted), then the footer
/// with their locations, encrypted or signed with the footer key.
fn rewrite(
    pq: &ParquetFile<File>,
    input: &Path,
    output: &Path,
    zero: &[(u64, u64)],
    new: Vec<NewFilter>,
) -> Result<WriteReport, Error> {
    let Some(enc) = pq.encryption() else {
        return Err(CryptoError::NothingToSeal.into());
    };
    let Some(footer_key) = enc.footer_key.clone() else {
        return Err(CryptoError::NoFooterKey.into());
    };
    let footer = pq.footer_start();
    let mut edits = FilterEdits::new();
    let mut filters = Vec::new();
    let mut bytes_written = 0u64;
    let output_len = atomic_write(output, input, |w| {
        copy_zeroing(input, output, footer, zero, w)?;
        let mut pos = footer;
        let io_err = write_err(output);
        for l in &new {
            let header = BloomFilterHeader {
                num_bytes: l.bitset.len() as i32,
            }
            .to_bytes();
            let (head, bits) = match enc.chunk_key(l.row_group, l.column) {
                Some(key) => {
                    let aad = |kind| enc.aad(kind, l.row_group, l.column);
                    (
                        seal_module(key, &header, &aad(module::BLOOM_FILTER_HEADER)),
                        seal_module(key, &l.bitset, &aad(module::BLOOM_FILTER_BITSET)),
                    )
                }
                None => (header, l.bitset.to_vec()),
            };
            w.write_all(&head).map_err(&io_err)?;
            w.write_all(&bits).map_err(&io_err)?;
            let len = (head.len() + bits.len()) as u64;
            edits.insert((l.row_group, l.column), (pos as i64, len as i32));
            filters.push(WrittenFilter {
                row_group: l.row_group,
                column: pq.columns()[l.column].path.clone(),
                bytes_before: l.bytes_before,
                bytes_after: len,
                distinct: l.distinct,
            });
            pos += len;
            bytes_written += len;
        }
        let fmd = encrypted_footer_edit(&enc.file_metadata, enc, &edits)?;
        let (tail, magic) = if enc.footer_encrypted {
            let mut t = enc.crypto_metadata.as_deref().unwrap_or_default().to_vec();
            t.extend(seal_module(&footer_key, &fmd, &enc.footer_aad()));
            (t, b"PARE")
        } else {
            let mut t = fmd.clone();
            t.extend(sign(&footer_key, &fmd, &enc.footer_aad()));
            (t, b"PAR1")
        };
        w.write_all(&tail).map_err(&io_err)?;
        w.write_all(&(tail.len() as u32).to_le_bytes())
            .map_err(&io_err)?;
        w.write_all(magic).map_err(&io_err)?;
        bytes_written += tail.len() as u64 + 8;
        Ok(())
    })?;
    Ok(WriteReport {
        filters,
        input_len: pq.file_len(),
        output_len,
        bytes_written,
        compacted: false,
    })
}

/// Copies the first `len` bytes of `input`, with the bytes of the `zero` ranges as zeros.
fn copy_zeroing(
    input: &Path,
    target: &Path,
    len: u64,
    zero: &[(u64, u64)],
    w: &mut impl Write,
) -> Result<(), Error> {
    let mut zero = zero.to_vec();
    zero.sort_unstable();
    let mut f = File::open(input).map_err(read_err(input))?;
    let io_err = write_err(target);
    let mut at = 0u64;
    let copy = |f: &mut File, w: &mut dyn Write, n: u64, zeros: bool| -> Result<(), Error> {
        let got = if zeros {
            let skipped = std::io::copy(&mut f.take(n), &mut std::io::sink()).map_err(&io_err)?;
            std::io::copy(&mut std::io::repeat(0).take(skipped), w).map_err(&io_err)?
        } else {
            std::io::copy(&mut f.take(n), w).map_err(&io_err)?
        };
        if got != n {
            return Err(WriteError::InputShrank {
                copied: got,
                len: n,
            }
            .into());
        }
        Ok(())
    };
    for (start, end) in zero {
        let start = start.max(at);
        if end <= start {
            continue;
        }
        copy(&mut f, w, start - at, false)?;
        copy(&mut f, w, end - start, true)?;
        at = end;
    }
    copy(&mut f, w, len - at, false)
}
