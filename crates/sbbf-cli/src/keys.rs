//! `--footer-key`, `--column-key COLUMN=KEY`, `--keys FILE`, `--aad-prefix`: the keys of files
//! with Parquet modular encryption, for every command that reads filters.

use clap::Args;
use sbbf_parquet::crypto::{Key, KeySet};
use std::path::PathBuf;

/// Keys for encrypted files. A KEY is text (its UTF-8 bytes: `0123456789012345`) or `0x`
/// then hex digits; 16, 24 or 32 bytes (AES-128, -192, -256).
#[derive(Args, Debug, Clone, Default)]
pub struct KeyArgs {
    /// Encrypted files: the footer key (decrypts an encrypted footer, verifies a plaintext
    /// footer's signature, decrypts columns encrypted with the footer key).
    #[arg(long, value_name = "KEY", help_heading = "Encryption")]
    pub footer_key: Option<String>,
    /// Encrypted files: the key of a column encrypted with its own key; repeatable.
    #[arg(long, value_name = "COLUMN=KEY", help_heading = "Encryption")]
    pub column_key: Vec<String>,
    /// Encrypted files: keys from a JSON file {"footer": KEY, "columns": {COLUMN: KEY},
    /// "aad_prefix": TEXT} (each member optional); --footer-key and --column-key override it.
    #[arg(long, value_name = "FILE", help_heading = "Encryption")]
    pub keys: Option<PathBuf>,
    /// Encrypted files: the AAD prefix, for files written with one they do not store.
    #[arg(long, value_name = "TEXT", help_heading = "Encryption")]
    pub aad_prefix: Option<String>,
}

impl KeyArgs {
    /// The keys given, checked; an error names the flag at fault.
    pub fn key_set(&self) -> Result<KeySet, String> {
        let mut set = KeySet::new();
        if let Some(path) = &self.keys {
            set = from_json(path).map_err(|e| format!("--keys {}: {e}", path.display()))?;
        }
        if let Some(k) = &self.footer_key {
            set = set.with_footer_key(Key::parse(k).map_err(|e| format!("--footer-key: {e}"))?);
        }
        for ck in &self.column_key {
            let Some((column, key)) = ck.split_once('=') else {
                return Err(format!("--column-key {ck:?}: expected COLUMN=KEY"));
            };
            if column.is_empty() {
                return Err(format!("--column-key {ck:?}: no column before `=`"));
            }
            let key = Key::parse(key).map_err(|e| format!("--column-key {column}: {e}"))?;
            set = set.with_column_key(column, key);
        }
        if let Some(p) = &self.aad_prefix {
            set = set.with_aad_prefix(p.as_bytes().to_vec());
        }
        Ok(set)
    }

    /// Whether any key option was given.
    pub fn any(&self) -> bool {
        self.footer_key.is_some()
            || !self.column_key.is_empty()
            || self.keys.is_some()
            || self.aad_prefix.is_some()
    }
}

fn from_json(path: &std::path::Path) -> Result<KeySet, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let mut set = KeySet::new();
    for (name, value) in obj {
        match name.as_str() {
            "footer" => {
                let k = value.as_str().ok_or("\"footer\" is not a string")?;
                set = set.with_footer_key(Key::parse(k).map_err(|e| format!("footer: {e}"))?);
            }
            "columns" => {
                let cols = value.as_object().ok_or("\"columns\" is not an object")?;
                for (column, k) in cols {
                    let k = k
                        .as_str()
                        .ok_or_else(|| format!("the key of `{column}` is not a string"))?;
                    let key = Key::parse(k).map_err(|e| format!("`{column}`: {e}"))?;
                    set = set.with_column_key(column.clone(), key);
                }
            }
            "aad_prefix" => {
                let p = value.as_str().ok_or("\"aad_prefix\" is not a string")?;
                set = set.with_aad_prefix(p.as_bytes().to_vec());
            }
            other => {
                return Err(format!(
                    "unknown member \"{other}\" (expected footer, columns, aad_prefix)"
                ))
            }
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("keys.json");
        std::fs::write(
            &f,
            r#"{"footer": "0x30313233343536373839303132333435", "columns": {"a": "1234567890123450", "b": "1234567890123451"}}"#,
        )
        .unwrap();
        let a = KeyArgs {
            keys: Some(f.clone()),
            column_key: vec!["b=abcdefabcdefabcd".into()],
            ..Default::default()
        };
        let set = a.key_set().unwrap();
        assert_eq!(set.footer().unwrap().bytes(), b"0123456789012345");
        assert_eq!(set.column("a").unwrap().bytes(), b"1234567890123450");
        assert_eq!(set.column("b").unwrap().bytes(), b"abcdefabcdefabcd");
        for bad in ["b", "=1234567890123450", "b=short"] {
            let a = KeyArgs {
                column_key: vec![bad.into()],
                ..Default::default()
            };
            assert!(
                a.key_set().unwrap_err().starts_with("--column-key"),
                "{bad}"
            );
        }
        std::fs::write(&f, r#"{"footr": "0123456789012345"}"#).unwrap();
        let a = KeyArgs {
            keys: Some(f),
            ..Default::default()
        };
        assert!(a.key_set().unwrap_err().contains("unknown member"));
    }
}
