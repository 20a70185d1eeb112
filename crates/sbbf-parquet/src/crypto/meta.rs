//! The footer of an encrypted file: `FileCryptoMetaData` and the encrypted `FileMetaData`
//! (`PARE`), or the signed plaintext `FileMetaData`; each column chunk's `ColumnCryptoMetaData`
//! and `encrypted_column_metadata`. The result is a `FileMetaData` that the `parquet` crate's
//! decoder (built without its own encryption support) reads: the crypto fields dropped, each
//! decryptable column's `ColumnMetaData` put back in place, and a placeholder for the
//! `ColumnMetaData` of a chunk that cannot be decrypted (its filter answers "unknown").

use super::{
    decrypt_module, module, verify_signature, Algorithm, ChunkState, CryptoError, FileEncryption,
    KeyKind, KeySet, GCM_OVERHEAD,
};
use crate::{Error, FooterError, MalformedCrypto};
use std::collections::HashMap;
use std::io::Read;
use thrift::protocol::{
    TCompactInputProtocol, TCompactOutputProtocol, TFieldIdentifier, TInputProtocol,
    TListIdentifier, TOutputProtocol, TStructIdentifier, TType,
};

/// A footer ready for the decoder, and what the file's encryption is.
pub(crate) struct Prepared {
    /// `FileMetaData` bytes for `ParquetMetaDataReader::decode_metadata`.
    pub meta: Vec<u8>,
    /// `None` for a file without modular encryption.
    pub encryption: Option<FileEncryption>,
}

/// `EncryptionAlgorithm`, either member.
struct AlgorithmInfo {
    algorithm: Algorithm,
    aad_prefix: Option<Vec<u8>>,
    aad_file_unique: Vec<u8>,
    supply_aad_prefix: bool,
}

/// What a column chunk says about its encryption.
#[derive(Default)]
struct ChunkInfo {
    has_meta: bool,
    /// `None`: not encrypted; `Some(None)`: footer key; `Some(Some(path))`: column key.
    crypto: Option<Option<Vec<String>>>,
    encrypted_meta: Option<Vec<u8>>,
}

/// What the walk over a `FileMetaData` collects.
#[derive(Default)]
struct Scan {
    algorithm: Option<AlgorithmInfo>,
    rg_ordinals: Vec<Option<i16>>,
    chunks: Vec<Vec<ChunkInfo>>,
}

/// Turns the footer bytes (between the file's data and its 8-byte tail) into a footer the
/// decoder reads. `pare`: the file ends with `PARE`. A footer without encryption is returned
/// unchanged.
pub(crate) fn prepare_footer(footer: &[u8], pare: bool, keys: &KeySet) -> Result<Prepared, Error> {
    if !pare {
        if !crate::format::footer::announces_encryption(footer) {
            return Ok(Prepared {
                meta: footer.to_vec(),
                encryption: None,
            });
        }
        // Without keys, a plaintext footer that does not hold together is reported as what it
        // most likely is: an encrypted file.
        return plaintext_footer(footer, keys).map_err(|e| {
            if keys.is_empty() {
                Error::Encrypted
            } else {
                e
            }
        });
    }
    let Some(footer_key) = keys.footer() else {
        return Err(Error::Encrypted);
    };
    let (algo, used) = read_prefix(footer, read_file_crypto_metadata)
        .map_err(|e| malformed(MalformedCrypto::CryptoMetaData(std::sync::Arc::new(e))))?;
    let file_aad = file_aad(&algo, keys)?;
    let rest = &footer[used..];
    let module = length_prefixed(rest)
        .ok_or_else(|| malformed(MalformedCrypto::FooterLength { after: rest.len() }))?;
    let mut aad = file_aad.clone();
    aad.push(module::FOOTER);
    let fmd = decrypt_module(footer_key, module, &aad).ok_or(CryptoError::FooterAuth)?;
    let mut p = finish(&fmd, algo.algorithm, true, true, file_aad, keys)?;
    if let Some(e) = &mut p.encryption {
        e.crypto_metadata = Some(footer[..used].into());
    }
    Ok(p)
}

fn plaintext_footer(footer: &[u8], keys: &KeySet) -> Result<Prepared, Error> {
    let (scan, used) = read_prefix(footer, |i| {
        let mut s = Scan::default();
        walk_file_metadata(i, &mut s)?;
        Ok(s)
    })
    .map_err(|e| Error::Footer(FooterError::Schema(e)))?;
    let algo = scan
        .algorithm
        .ok_or_else(|| malformed(MalformedCrypto::NoAlgorithm))?;
    let signature = &footer[used..];
    if signature.len() as u64 != GCM_OVERHEAD {
        return Err(malformed(MalformedCrypto::SignatureLength {
            len: signature.len(),
        }));
    }
    let file_aad = file_aad(&algo, keys)?;
    let fmd = &footer[..used];
    let verified = match keys.footer() {
        Some(k) => {
            let mut aad = file_aad.clone();
            aad.push(module::FOOTER);
            if !verify_signature(k, fmd, &aad, signature) {
                return Err(CryptoError::FooterSignature.into());
            }
            true
        }
        None => false,
    };
    finish(fmd, algo.algorithm, false, verified, file_aad, keys)
}

/// Reads the chunks' crypto metadata, decrypts what the keys allow and rewrites the footer.
fn finish(
    fmd: &[u8],
    algorithm: Algorithm,
    footer_encrypted: bool,
    signature_verified: bool,
    file_aad: Vec<u8>,
    keys: &KeySet,
) -> Result<Prepared, Error> {
    let (scan, _) = read_prefix(fmd, |i| {
        let mut s = Scan::default();
        walk_file_metadata(i, &mut s)?;
        Ok(s)
    })
    .map_err(|e| Error::Footer(FooterError::Schema(e)))?;
    let mut chunks = HashMap::new();
    let mut replace: HashMap<(usize, usize), Vec<u8>> = HashMap::new();
    let ordinals: Vec<i16> = scan
        .rg_ordinals
        .iter()
        .enumerate()
        .map(|(r, o)| o.unwrap_or(r as i16))
        .collect();
    for (r, row) in scan.chunks.iter().enumerate() {
        for (c, chunk) in row.iter().enumerate() {
            let Some(crypto) = &chunk.crypto else {
                continue;
            };
            let (kind, key) = match crypto {
                None => (
                    KeyKind::Footer,
                    keys.footer()
                        .ok_or_else(|| "the footer key, which encrypts it, was not given".into()),
                ),
                Some(path) => (
                    KeyKind::Column,
                    keys.column_parts(path).ok_or_else(|| {
                        format!(
                            "the column key of `{}` was not given",
                            path.iter()
                                .map(|p| crate::format::column::escape_field(p))
                                .collect::<Vec<_>>()
                                .join(".")
                        )
                    }),
                ),
            };
            let mut key = key.cloned();
            if let (Ok(k), Some(enc)) = (&key, &chunk.encrypted_meta) {
                let aad =
                    super::module_aad(&file_aad, module::COLUMN_META_DATA, ordinals[r], c as i16);
                match length_prefixed(enc).and_then(|m| decrypt_module(k, m, &aad)) {
                    Some(plain) => {
                        replace.insert((r, c), plain);
                    }
                    None => {
                        key = Err(format!(
                            "its column metadata did not decrypt with the {} given (wrong key, or altered)",
                            kind.name()
                        ))
                    }
                }
            }
            if key.is_err() && !chunk.has_meta {
                replace.insert((r, c), placeholder_meta());
            }
            chunks.insert((r, c), ChunkState { kind, key });
        }
    }
    let meta = crate::format::footer::decoder_footer(fmd, &replace)?;
    Ok(Prepared {
        meta,
        encryption: Some(FileEncryption {
            algorithm,
            footer_encrypted,
            signature_verified,
            file_aad: file_aad.into(),
            rg_ordinals: ordinals,
            chunks,
            footer_key: keys.footer().cloned(),
            file_metadata: fmd.into(),
            crypto_metadata: None,
        }),
    })
}

fn malformed(why: MalformedCrypto) -> Error {
    CryptoError::Malformed(why).into()
}

/// A module with its 4-byte little-endian length prefix: the module, when the length fits.
fn length_prefixed(bytes: &[u8]) -> Option<&[u8]> {
    let len = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    bytes.get(4..4usize.checked_add(len)?)
}

/// File AAD: the prefix (given, else stored) then the file's unique part.
fn file_aad(algo: &AlgorithmInfo, keys: &KeySet) -> Result<Vec<u8>, Error> {
    let prefix = match (&keys.aad_prefix, &algo.aad_prefix) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => p.clone(),
        (None, None) if algo.supply_aad_prefix => return Err(CryptoError::NeedAadPrefix.into()),
        (None, None) => Vec::new(),
    };
    let mut aad = prefix;
    aad.extend_from_slice(&algo.aad_file_unique);
    Ok(aad)
}

/// A `ColumnMetaData` with its required fields and nothing else, for a chunk whose metadata
/// cannot be decrypted: the decoder needs one, and without a `bloom_filter_offset` nothing
/// reads from it (its filter is made "unknown" by the encryption state, not "missing").
fn placeholder_meta() -> Vec<u8> {
    let mut out = Vec::new();
    let mut o = TCompactOutputProtocol::new(&mut out);
    let mut write = || -> thrift::Result<()> {
        o.write_struct_begin(&TStructIdentifier::new("ColumnMetaData"))?;
        let field = |o: &mut TCompactOutputProtocol<&mut Vec<u8>>, t, id| {
            o.write_field_begin(&TFieldIdentifier::new("f", t, id))
        };
        for (id, t) in [(1, TType::I32), (4, TType::I32)] {
            field(&mut o, t, id)?;
            o.write_i32(0)?;
            o.write_field_end()?;
        }
        for (id, t) in [(2, TType::I32), (3, TType::String)] {
            field(&mut o, TType::List, id)?;
            o.write_list_begin(&TListIdentifier::new(t, 0))?;
            o.write_list_end()?;
            o.write_field_end()?;
        }
        for id in [5, 6, 7, 9] {
            field(&mut o, TType::I64, id)?;
            o.write_i64(0)?;
            o.write_field_end()?;
        }
        o.write_field_stop()?;
        o.write_struct_end()?;
        o.flush()
    };
    write().expect("writing to a Vec does not fail");
    drop(o);
    // Fields were written out of order (1, 4, 2, 3, ...): Thrift allows it and the decoder
    // takes any order.
    out
}

/// Runs `f` over a compact-protocol reader on `bytes` (bounded like every footer read);
/// returns its result and how many bytes it consumed.
fn read_prefix<T>(
    bytes: &[u8],
    f: impl FnOnce(&mut TCompactInputProtocol<&mut &[u8]>) -> thrift::Result<T>,
) -> thrift::Result<(T, usize)> {
    let config = crate::format::header::bounded_thrift(bytes.len().max(64), 64)?;
    let mut cursor: &[u8] = bytes;
    let t = {
        let mut i = TCompactInputProtocol::with_config(&mut cursor, config);
        f(&mut i)?
    };
    Ok((t, bytes.len() - cursor.len()))
}

fn read_file_crypto_metadata(
    i: &mut TCompactInputProtocol<&mut &[u8]>,
) -> thrift::Result<AlgorithmInfo> {
    let mut algo = None;
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::Struct, Some(1)) => algo = Some(read_algorithm(i)?),
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    algo.ok_or_else(|| bad("no encryption_algorithm"))
}

/// `EncryptionAlgorithm` (a union of two structs with the same fields).
fn read_algorithm<R: Read>(i: &mut TCompactInputProtocol<R>) -> thrift::Result<AlgorithmInfo> {
    let mut out = None;
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::Struct, Some(id @ (1 | 2))) => {
                let mut a = AlgorithmInfo {
                    algorithm: if id == 1 {
                        Algorithm::AesGcmV1
                    } else {
                        Algorithm::AesGcmCtrV1
                    },
                    aad_prefix: None,
                    aad_file_unique: Vec::new(),
                    supply_aad_prefix: false,
                };
                i.read_struct_begin()?;
                loop {
                    let g = i.read_field_begin()?;
                    match (g.field_type, g.id) {
                        (TType::Stop, _) => break,
                        (TType::String, Some(1)) => a.aad_prefix = Some(i.read_bytes()?),
                        (TType::String, Some(2)) => a.aad_file_unique = i.read_bytes()?,
                        (TType::Bool, Some(3)) => a.supply_aad_prefix = i.read_bool()?,
                        (t, _) => i.skip(t)?,
                    }
                    i.read_field_end()?;
                }
                i.read_struct_end()?;
                out = Some(a);
            }
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    out.ok_or_else(|| bad("an EncryptionAlgorithm this reader does not know"))
}

fn walk_file_metadata<R: Read>(
    i: &mut TCompactInputProtocol<R>,
    s: &mut Scan,
) -> thrift::Result<()> {
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::Struct, Some(8)) => s.algorithm = Some(read_algorithm(i)?),
            (TType::List, Some(4)) => {
                let l = i.read_list_begin()?;
                for _ in 0..l.size.max(0) {
                    walk_row_group(i, s)?;
                }
                i.read_list_end()?;
            }
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()
}

fn walk_row_group<R: Read>(i: &mut TCompactInputProtocol<R>, s: &mut Scan) -> thrift::Result<()> {
    let mut ordinal = None;
    let mut chunks = Vec::new();
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::I16, Some(7)) => ordinal = Some(i.read_i16()?),
            (TType::List, Some(1)) => {
                let l = i.read_list_begin()?;
                for _ in 0..l.size.max(0) {
                    chunks.push(walk_column_chunk(i)?);
                }
                i.read_list_end()?;
            }
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    s.rg_ordinals.push(ordinal);
    s.chunks.push(chunks);
    Ok(())
}

fn walk_column_chunk<R: Read>(i: &mut TCompactInputProtocol<R>) -> thrift::Result<ChunkInfo> {
    let mut c = ChunkInfo::default();
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::Struct, Some(3)) => {
                c.has_meta = true;
                i.skip(TType::Struct)?;
            }
            (TType::Struct, Some(8)) => c.crypto = Some(read_column_crypto(i)?),
            (TType::String, Some(9)) => c.encrypted_meta = Some(i.read_bytes()?),
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    Ok(c)
}

/// `ColumnCryptoMetaData`: `None` for the footer key, the column's path for its own key.
fn read_column_crypto<R: Read>(
    i: &mut TCompactInputProtocol<R>,
) -> thrift::Result<Option<Vec<String>>> {
    let mut out = Err(bad("ColumnCryptoMetaData without a known member"));
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        match (f.field_type, f.id) {
            (TType::Stop, _) => break,
            (TType::Struct, Some(1)) => {
                i.skip(TType::Struct)?;
                out = Ok(None);
            }
            (TType::Struct, Some(2)) => {
                let mut path = Vec::new();
                i.read_struct_begin()?;
                loop {
                    let g = i.read_field_begin()?;
                    match (g.field_type, g.id) {
                        (TType::Stop, _) => break,
                        (TType::List, Some(1)) => {
                            let l = i.read_list_begin()?;
                            for _ in 0..l.size.max(0) {
                                path.push(i.read_string()?);
                            }
                            i.read_list_end()?;
                        }
                        (t, _) => i.skip(t)?,
                    }
                    i.read_field_end()?;
                }
                i.read_struct_end()?;
                out = Ok(Some(path));
            }
            (t, _) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    out
}

fn bad(msg: &str) -> thrift::Error {
    thrift::Error::Protocol(thrift::ProtocolError::new(
        thrift::ProtocolErrorKind::InvalidData,
        msg,
    ))
}
