//! Parquet modular encryption (apache/parquet-format `Encryption.md`), as far as Bloom filters
//! need it: keys ([`KeySet`]), the footer (encrypted, `PARE`, or plaintext and signed), the
//! column metadata encrypted with column keys, the two modules of an encrypted filter (header,
//! module type 8; bitset, module type 9), and the data pages (to verify and build filters).
//!
//! Both algorithms are read. `AES_GCM_CTR_V1` differs from `AES_GCM_V1` only for data and
//! dictionary pages (CTR instead of GCM): the footer, the column metadata, the page headers and
//! the filter modules are AES-GCM in both, so a filter is read the same way in either.
//!
//! Every module is authenticated with its AAD: the file AAD (AAD prefix, stored or given, then
//! the file's unique part) followed by the module type, and for column modules the row group
//! ordinal and the column ordinal (each a little-endian `i16`). An authentication failure makes
//! the chunk "unknown" with the reason, never "absent".
//!
//! **Cost.** A GCM module is authenticated as a whole, so an encrypted filter cannot be probed
//! block by block: a probe reads the header module and the whole bitset module (28 bytes of
//! nonce and tag each, plus a 4-byte length), where a plaintext filter needs one 32-byte block
//! per value. With `bloom_filter_length` in the footer both modules come in one read.
//!
//! **Data pages** ([`ParquetFile::plaintext_image`](crate::ParquetFile::plaintext_image),
//! `pages.rs`): a column chunk's page headers (AES-GCM, module types 4 and 5) and pages
//! (types 2 and 3; AES-GCM, or AES-CTR in `AES_GCM_CTR_V1`) are decrypted into an ordinary
//! Parquet file in memory that the `parquet` crate's readers decode as they are.
//! [`ParquetFile::verify_encrypted`](crate::ParquetFile::verify_encrypted) checks filters
//! against the values decoded so, and [`add_encrypted`](crate::write::add_encrypted) builds new filters from them. The cost:
//! each chunk is read whole and held twice (encrypted and decrypted), one chunk at a time; CTR
//! pages are not authenticated (only their CRC, when the writer stored one, catches damage).
//!
//! The ciphers are RustCrypto's `aes-gcm` (AES-128, -192 and -256) and `ctr` (AES-CTR for the
//! pages of `AES_GCM_CTR_V1`).

mod filter;
mod meta;
mod pages;
pub(crate) mod scan;

use aes_gcm::aead::consts::U12;
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::aes::Aes192;
use aes_gcm::{Aes128Gcm, Aes256Gcm, AesGcm, Nonce, Tag};
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) use filter::{OpenFilter, SealedFilter, Step, SEALED_BITSET_OVERHEAD};
pub(crate) use meta::prepare_footer;
pub(crate) use pages::plaintext_image;
pub use pages::PlainImage;
pub use scan::{scan_data_area, StrayHeader};

/// Module types of the AAD suffix (`Encryption.md` 4.4.2).
pub(crate) mod module {
    /// The footer (`FileMetaData`).
    pub const FOOTER: u8 = 0;
    /// A column chunk's `ColumnMetaData`, encrypted with a column key.
    pub const COLUMN_META_DATA: u8 = 1;
    /// A data page (AES-GCM in `AES_GCM_V1`, AES-CTR in `AES_GCM_CTR_V1`).
    pub const DATA_PAGE: u8 = 2;
    /// A dictionary page (encrypted as data pages are).
    pub const DICTIONARY_PAGE: u8 = 3;
    /// A data page's `PageHeader` (always AES-GCM).
    pub const DATA_PAGE_HEADER: u8 = 4;
    /// A dictionary page's `PageHeader` (always AES-GCM).
    pub const DICTIONARY_PAGE_HEADER: u8 = 5;
    /// A Bloom filter header.
    pub const BLOOM_FILTER_HEADER: u8 = 8;
    /// A Bloom filter bitset.
    pub const BLOOM_FILTER_BITSET: u8 = 9;
}

/// Bytes a GCM module adds to its plaintext: 12 of nonce and 16 of tag (its 4-byte length
/// prefix comes on top).
pub(crate) const GCM_OVERHEAD: u64 = 28;

pub use crate::CryptoError;

pub use crate::keys::{ChunkEncryption, Key, KeyKind, KeySet};

/// The AES-GCM cipher of a key (its length was checked when the key was made).
fn cipher(key: &Key) -> Cipher {
    let bytes = key.bytes();
    // The length was checked when the key was made; each arm only takes its own length.
    match bytes.len() {
        16 => Cipher::A128(Box::new(
            Aes128Gcm::new_from_slice(bytes).expect("16-byte key"),
        )),
        24 => Cipher::A192(Box::new(
            AesGcm::<Aes192, U12>::new_from_slice(bytes).expect("24-byte key"),
        )),
        _ => Cipher::A256(Box::new(
            Aes256Gcm::new_from_slice(bytes).expect("32-byte key"),
        )),
    }
}

enum Cipher {
    A128(Box<Aes128Gcm>),
    A192(Box<AesGcm<Aes192, U12>>),
    A256(Box<Aes256Gcm>),
}

impl Cipher {
    fn decrypt(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> bool {
        let (n, t) = (Nonce::<U12>::from_slice(nonce), Tag::from_slice(tag));
        match self {
            Cipher::A128(c) => c.decrypt_in_place_detached(n, aad, buf, t),
            Cipher::A192(c) => c.decrypt_in_place_detached(n, aad, buf, t),
            Cipher::A256(c) => c.decrypt_in_place_detached(n, aad, buf, t),
        }
        .is_ok()
    }

    fn encrypt(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Option<Tag> {
        let n = Nonce::<U12>::from_slice(nonce);
        match self {
            Cipher::A128(c) => c.encrypt_in_place_detached(n, aad, buf),
            Cipher::A192(c) => c.encrypt_in_place_detached(n, aad, buf),
            Cipher::A256(c) => c.encrypt_in_place_detached(n, aad, buf),
        }
        .ok()
    }
}

/// Decrypts one GCM module given without its length prefix (nonce, ciphertext, tag); `None`
/// when it is too short or does not authenticate.
pub(crate) fn decrypt_module(key: &Key, module: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
    if (module.len() as u64) < GCM_OVERHEAD {
        return None;
    }
    let (nonce, rest) = module.split_at(12);
    let (ct, tag) = rest.split_at(rest.len() - 16);
    let mut buf = ct.to_vec();
    cipher(key)
        .decrypt(nonce, aad, &mut buf, tag)
        .then_some(buf)
}

/// Decrypts one AES-CTR page module given without its length prefix (nonce, ciphertext):
/// `AES_GCM_CTR_V1` pages. The counter block is the 12-byte nonce then a 32-bit big-endian
/// counter starting at 1 (`Encryption.md` 4.2.2). CTR authenticates nothing: `None` only when
/// the module is shorter than its nonce.
pub(crate) fn decrypt_ctr(key: &Key, module: &[u8]) -> Option<Vec<u8>> {
    use aes_gcm::aes::{Aes128, Aes256};
    use ctr::cipher::{KeyIvInit, StreamCipher};
    fn apply<C: KeyIvInit + StreamCipher>(key: &[u8], iv: &[u8; 16], buf: &mut [u8]) -> bool {
        match C::new_from_slices(key, iv) {
            Ok(mut c) => {
                c.apply_keystream(buf);
                true
            }
            Err(_) => false,
        }
    }
    let (nonce, ct) = (module.get(..12)?, &module[12..]);
    let mut iv = [0u8; 16];
    iv[..12].copy_from_slice(nonce);
    iv[15] = 1;
    let mut buf = ct.to_vec();
    let ok = match key.bytes().len() {
        16 => apply::<ctr::Ctr32BE<Aes128>>(key.bytes(), &iv, &mut buf),
        24 => apply::<ctr::Ctr32BE<Aes192>>(key.bytes(), &iv, &mut buf),
        _ => apply::<ctr::Ctr32BE<Aes256>>(key.bytes(), &iv, &mut buf),
    };
    ok.then_some(buf)
}

/// Encrypts `plaintext` as one GCM module with a fresh random nonce, length prefix included:
/// `len (4, LE) | nonce (12) | ciphertext | tag (16)`.
pub(crate) fn seal_module(key: &Key, plaintext: &[u8], aad: &[u8]) -> Vec<u8> {
    use aes_gcm::aead::rand_core::RngCore;
    let mut nonce = [0u8; 12];
    aes_gcm::aead::OsRng.fill_bytes(&mut nonce);
    let mut buf = plaintext.to_vec();
    let tag = cipher(key)
        .encrypt(&nonce, aad, &mut buf)
        .expect("a module is far below GCM's size limit");
    let len = (12 + buf.len() + 16) as u32;
    let mut out = Vec::with_capacity(4 + len as usize);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&buf);
    out.extend_from_slice(&tag);
    out
}

/// The 28-byte signature (nonce, tag) of a plaintext footer, with a fresh random nonce.
pub(crate) fn sign(key: &Key, plaintext: &[u8], aad: &[u8]) -> Vec<u8> {
    let module = seal_module(key, plaintext, aad);
    let mut out = module[4..16].to_vec();
    out.extend_from_slice(&module[module.len() - 16..]);
    out
}

/// Whether `signature` (nonce and tag, 28 bytes) is the GCM tag of `plaintext` under `key` and
/// `aad`: how a plaintext footer is signed (the ciphertext is not stored).
pub(crate) fn verify_signature(key: &Key, plaintext: &[u8], aad: &[u8], signature: &[u8]) -> bool {
    if signature.len() != GCM_OVERHEAD as usize {
        return false;
    }
    let mut buf = plaintext.to_vec();
    match cipher(key).encrypt(&signature[..12], aad, &mut buf) {
        Some(tag) => tag.as_slice() == &signature[12..],
        None => false,
    }
}

/// The encryption algorithm of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// Every module AES-GCM.
    AesGcmV1,
    /// Pages AES-CTR, every other module (filters included) AES-GCM.
    AesGcmCtrV1,
}

impl Algorithm {
    /// `AES_GCM_V1` or `AES_GCM_CTR_V1`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::AesGcmV1 => "AES_GCM_V1",
            Algorithm::AesGcmCtrV1 => "AES_GCM_CTR_V1",
        }
    }
}

/// What an encrypted file's footer says about its encryption, after decryption.
#[derive(Debug, Clone)]
pub struct FileEncryption {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// `PARE` (encrypted footer) or a plaintext footer.
    pub footer_encrypted: bool,
    /// For a plaintext footer: whether its signature was verified (it needs the footer key).
    pub signature_verified: bool,
    file_aad: Arc<[u8]>,
    rg_ordinals: Vec<i16>,
    chunks: HashMap<(usize, usize), ChunkState>,
    /// What rewriting needs: the footer key, the `FileMetaData` as stored (decrypted, without
    /// signature) and, for an encrypted footer, the `FileCryptoMetaData` bytes.
    pub(crate) footer_key: Option<Key>,
    pub(crate) file_metadata: Arc<[u8]>,
    pub(crate) crypto_metadata: Option<Arc<[u8]>>,
}

#[derive(Debug, Clone)]
struct ChunkState {
    kind: KeyKind,
    key: Result<Key, String>,
}

/// The footer code's hook for encrypted column metadata: opened and sealed with the chunk's
/// key and its module AAD.
impl crate::format::footer::ColumnMetaCipher for FileEncryption {
    fn open(&self, r: usize, c: usize, sealed: &[u8]) -> Result<Vec<u8>, String> {
        let key = self
            .chunk_key(r, c)
            .ok_or("no key for an encrypted column chunk being rewritten")?;
        let aad = self.aad(module::COLUMN_META_DATA, r, c);
        sealed
            .get(4..)
            .and_then(|m| decrypt_module(key, m, &aad))
            .ok_or_else(|| "encrypted column metadata does not decrypt".to_string())
    }

    fn seal(&self, r: usize, c: usize, plain: &[u8]) -> Result<Vec<u8>, String> {
        let key = self
            .chunk_key(r, c)
            .ok_or("no key for an encrypted column chunk being rewritten")?;
        let aad = self.aad(module::COLUMN_META_DATA, r, c);
        Ok(seal_module(key, plain, &aad))
    }
}

impl FileEncryption {
    /// How chunk `(row_group, column)` is protected.
    pub fn chunk(&self, row_group: usize, column: usize) -> ChunkEncryption {
        match self.chunks.get(&(row_group, column)) {
            None => ChunkEncryption::Plaintext,
            Some(ChunkState { kind, key: Ok(_) }) => ChunkEncryption::Readable { key: *kind },
            Some(ChunkState {
                kind,
                key: Err(reason),
            }) => ChunkEncryption::Unreadable {
                key: *kind,
                reason: reason.clone(),
            },
        }
    }

    /// The key of an encrypted chunk, when it was given and its metadata authenticated.
    pub(crate) fn chunk_key(&self, row_group: usize, column: usize) -> Option<&Key> {
        self.chunks.get(&(row_group, column))?.key.as_ref().ok()
    }

    /// The AAD of a module of chunk `(row_group, column)`.
    pub(crate) fn aad(&self, kind: u8, row_group: usize, column: usize) -> Vec<u8> {
        let rg = self
            .rg_ordinals
            .get(row_group)
            .copied()
            .unwrap_or(row_group as i16);
        module_aad(&self.file_aad, kind, rg, column as i16)
    }

    /// The AAD of a page or page header module (data pages and their headers carry the page
    /// ordinal, dictionary pages and theirs do not).
    pub(crate) fn page_aad(
        &self,
        kind: u8,
        row_group: usize,
        column: usize,
        page: Option<i16>,
    ) -> Vec<u8> {
        let mut aad = self.aad(kind, row_group, column);
        if let Some(p) = page {
            aad.extend_from_slice(&p.to_le_bytes());
        }
        aad
    }

    /// The AAD of the footer.
    pub(crate) fn footer_aad(&self) -> Vec<u8> {
        let mut aad = self.file_aad.to_vec();
        aad.push(module::FOOTER);
        aad
    }

    /// How a column's filters are read, per row group.
    pub(crate) fn filter_keys(&self, column: usize, row_groups: usize) -> Vec<FilterCrypto> {
        (0..row_groups)
            .map(|rg| match self.chunks.get(&(rg, column)) {
                None => FilterCrypto::Plain,
                Some(ChunkState { key: Ok(k), .. }) => FilterCrypto::Sealed(ModuleKey {
                    key: k.clone(),
                    file_aad: self.file_aad.clone(),
                    row_group: self.rg_ordinals.get(rg).copied().unwrap_or(rg as i16),
                    column: column as i16,
                }),
                Some(ChunkState { key: Err(why), .. }) => FilterCrypto::Unreadable(why.clone()),
            })
            .collect()
    }
}

/// How one chunk's filter is read.
#[derive(Debug, Clone)]
pub(crate) enum FilterCrypto {
    /// Plaintext header and bitset.
    Plain,
    /// Two GCM modules under this key.
    Sealed(ModuleKey),
    /// Encrypted and unreadable: the reason.
    Unreadable(String),
}

/// A column chunk's key and AAD parts: decrypts its modules.
#[derive(Debug, Clone)]
pub(crate) struct ModuleKey {
    key: Key,
    file_aad: Arc<[u8]>,
    row_group: i16,
    column: i16,
}

impl ModuleKey {
    /// The key of one column chunk's modules, for tests that seal modules themselves.
    #[cfg(test)]
    pub(crate) fn for_chunk(key: Key, file_aad: &[u8], row_group: i16, column: i16) -> ModuleKey {
        ModuleKey {
            key,
            file_aad: Arc::from(file_aad),
            row_group,
            column,
        }
    }

    /// The AAD of this chunk's module of type `kind`.
    #[cfg(test)]
    pub(crate) fn aad(&self, kind: u8) -> Vec<u8> {
        module_aad(&self.file_aad, kind, self.row_group, self.column)
    }

    /// Decrypts a module of type `kind` (without its length prefix).
    pub(crate) fn open(&self, kind: u8, module: &[u8]) -> Option<Vec<u8>> {
        let aad = module_aad(&self.file_aad, kind, self.row_group, self.column);
        decrypt_module(&self.key, module, &aad)
    }
}

/// The AAD of a column module: file AAD, module type, row group and column ordinals (LE).
pub(crate) fn module_aad(file_aad: &[u8], kind: u8, row_group: i16, column: i16) -> Vec<u8> {
    let mut aad = Vec::with_capacity(file_aad.len() + 5);
    aad.extend_from_slice(file_aad);
    aad.push(kind);
    aad.extend_from_slice(&row_group.to_le_bytes());
    aad.extend_from_slice(&column.to_le_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_as_text_or_hex() {
        let a = Key::parse("0123456789012345").unwrap();
        assert_eq!(a.bytes(), b"0123456789012345");
        assert_eq!(Key::parse("0x30313233343536373839303132333435").unwrap(), a);
        assert_eq!(
            Key::parse("0x00").unwrap_err(),
            CryptoError::KeyLength { len: 1 }
        );
        assert!(matches!(
            Key::parse("0x0g"),
            Err(CryptoError::KeyHex { len: 4 })
        ));
        assert_eq!(Key::new(&[7; 24]).unwrap().bytes().len(), 24);
        assert_eq!(format!("{a:?}"), "Key(128 bits)");
    }

    #[test]
    fn aad_layout() {
        assert_eq!(
            module_aad(b"ab", module::BLOOM_FILTER_BITSET, 1, 258),
            [b'a', b'b', 9, 1, 0, 2, 1]
        );
    }

    #[test]
    fn gcm_round_trip_and_tamper() {
        for len in [16, 24, 32] {
            let key = Key::new(&vec![3u8; len]).unwrap();
            let nonce = [9u8; 12];
            let mut buf = b"hello filter".to_vec();
            let tag = cipher(&key).encrypt(&nonce, b"aad", &mut buf).unwrap();
            let mut module = nonce.to_vec();
            module.extend_from_slice(&buf);
            module.extend_from_slice(&tag);
            assert_eq!(
                decrypt_module(&key, &module, b"aad").as_deref(),
                Some(&b"hello filter"[..])
            );
            assert_eq!(decrypt_module(&key, &module, b"aae"), None);
            module[14] ^= 1;
            assert_eq!(decrypt_module(&key, &module, b"aad"), None);
            assert_eq!(decrypt_module(&key, &module[..27], b"aad"), None);
        }
    }
}
