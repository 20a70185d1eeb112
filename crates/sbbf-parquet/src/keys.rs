//! Keys for files with Parquet modular encryption, and how each chunk is protected: plain data
//! (no cipher), so that every API
//! that takes keys exists whether or not the `encryption` feature is built. Without it, a file
//! that uses encryption fails to open with [`Error::Encrypted`](crate::Error::Encrypted).

use crate::CryptoError;
use std::collections::BTreeMap;
use std::sync::Arc;

/// An AES key: 16, 24 or 32 bytes. Its `Debug` output shows the size, never the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Key(Arc<[u8]>);

impl Key {
    /// A key from its bytes.
    pub fn new(bytes: &[u8]) -> Result<Key, CryptoError> {
        match bytes.len() {
            16 | 24 | 32 => Ok(Key(bytes.into())),
            len => Err(CryptoError::KeyLength { len }),
        }
    }

    /// A key from text: `0x` then hexadecimal digits, or else the text's UTF-8 bytes
    /// (parquet-testing's keys are ASCII text such as `0123456789012345`).
    ///
    /// ```
    /// use sbbf_parquet::keys::Key;
    /// assert_eq!(Key::parse("0123456789012345")?, Key::parse("0x30313233343536373839303132333435")?);
    /// assert!(Key::parse("short").is_err());
    /// # Ok::<(), sbbf_parquet::CryptoError>(())
    /// ```
    pub fn parse(text: &str) -> Result<Key, CryptoError> {
        if text.starts_with("0x") || text.starts_with("0X") {
            let bytes = crate::values::text::parse_hex(text)
                .ok_or(CryptoError::KeyHex { len: text.len() })?;
            return Key::new(&bytes);
        }
        Key::new(text.as_bytes())
    }

    /// The key's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({} bits)", self.0.len() * 8)
    }
}

/// The keys to read an encrypted file with: the footer key, keys of columns encrypted with
/// their own key (by dotted column path), and the AAD prefix when the file does not store it.
///
/// ```
/// use sbbf_parquet::keys::{Key, KeySet};
/// let keys = KeySet::new()
///     .with_footer_key(Key::parse("0123456789012345")?)
///     .with_column_key("double_field", Key::parse("1234567890123450")?);
/// assert!(keys.column("double_field").is_some());
/// # Ok::<(), sbbf_parquet::CryptoError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySet {
    footer: Option<Key>,
    columns: BTreeMap<String, Key>,
    pub(crate) aad_prefix: Option<Vec<u8>>,
}

impl KeySet {
    /// No keys.
    pub fn new() -> KeySet {
        KeySet::default()
    }

    /// With the footer key (which also decrypts columns encrypted with the footer key, and
    /// verifies a plaintext footer's signature).
    pub fn with_footer_key(mut self, key: Key) -> KeySet {
        self.footer = Some(key);
        self
    }

    /// With the key of a column encrypted with its own key. The column is its dotted path
    /// (`a.b.c`; [`crate::format::column::ColumnType::path`], or the plain names joined by `.`).
    pub fn with_column_key(mut self, column: impl Into<String>, key: Key) -> KeySet {
        self.columns.insert(column.into(), key);
        self
    }

    /// With the AAD prefix (for files written with a prefix they do not store; a given prefix
    /// takes precedence over a stored one).
    pub fn with_aad_prefix(mut self, prefix: impl Into<Vec<u8>>) -> KeySet {
        self.aad_prefix = Some(prefix.into());
        self
    }

    /// Whether no key at all is given.
    pub fn is_empty(&self) -> bool {
        self.footer.is_none() && self.columns.is_empty()
    }

    /// The footer key.
    pub fn footer(&self) -> Option<&Key> {
        self.footer.as_ref()
    }

    /// The key given for a column path.
    pub fn column(&self, path: &str) -> Option<&Key> {
        self.columns.get(path)
    }

    /// The column paths keys were given for.
    pub fn column_names(&self) -> impl Iterator<Item = &str> {
        self.columns.keys().map(String::as_str)
    }

    /// The key of the column whose `path_in_schema` is `parts`, by its escaped path or by its
    /// names joined with `.`.
    #[cfg_attr(not(feature = "encryption"), allow(dead_code))]
    pub(crate) fn column_parts(&self, parts: &[String]) -> Option<&Key> {
        let escaped: Vec<String> = parts
            .iter()
            .map(|p| crate::format::column::escape_field(p))
            .collect();
        self.columns
            .get(&escaped.join("."))
            .or_else(|| self.columns.get(&parts.join(".")))
    }
}

/// How a column chunk is protected, as the footer says and the keys allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkEncryption {
    /// Not encrypted: its filter, if any, is plaintext.
    Plaintext,
    /// Encrypted, and the key that decrypts it was given (its metadata authenticated).
    Readable {
        /// `footer key` or `column key`.
        key: KeyKind,
    },
    /// Encrypted, and it cannot be read: the reason (no key given, or authentication failed).
    Unreadable {
        /// `footer key` or `column key`.
        key: KeyKind,
        /// Why.
        reason: String,
    },
}

/// Which key a column is encrypted with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// The footer key (`ENCRYPTION_WITH_FOOTER_KEY`).
    Footer,
    /// A key of the column's own (`ENCRYPTION_WITH_COLUMN_KEY`).
    Column,
}

impl KeyKind {
    /// `footer key` or `column key`.
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Footer => "footer key",
            KeyKind::Column => "column key",
        }
    }
}
