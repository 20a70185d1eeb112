//! A part's own bytes (`docs/index-format.md`): a complete index of its files, then its
//! manifest ([`Manifest`]: the root, columns, FPP target and files it was built with) and a
//! 24-byte part trailer ending in [`PART_MAGIC`], so that a part copied over an index is
//! foreign there. Building and merging parts is `crate::part`.

use super::read::In;
use super::write::Out;
use crate::IndexError;

/// The last eight bytes of a part.
pub const PART_MAGIC: &[u8; 8] = b"SBBFPRT\0";
/// The part format version this crate writes and reads.
pub const PART_VERSION: u32 = 1;
/// Bytes of a part's trailer: manifest length, its CRC, version, magic.
pub const PART_TRAILER_LEN: u64 = 24;
/// The largest manifest a reader accepts.
const MAX_MANIFEST: u64 = 1 << 30;

/// What a part says of itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The table root as given to the part's build.
    pub root: String,
    /// Whether the columns were chosen (`-c`).
    pub explicit_columns: bool,
    /// The columns chosen, sorted (empty without `-c`).
    pub columns: Vec<String>,
    /// The `--fpp` target, if any.
    pub target_fpp: Option<f64>,
    /// The files the part was given (relative to the root), sorted, no repeats.
    pub files: Vec<String>,
}

impl Manifest {
    /// The manifest's bytes followed by the part trailer.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut o = Out::default();
        o.str(&self.root);
        o.flag(self.explicit_columns);
        o.var(self.columns.len() as u64);
        for c in &self.columns {
            o.str(c);
        }
        match self.target_fpp {
            Some(p) => {
                o.flag(true);
                o.u64(p.to_bits());
            }
            None => o.flag(false),
        }
        o.var(self.files.len() as u64);
        for f in &self.files {
            o.str(f);
        }
        let body = o.0;
        let mut t = Out::default();
        t.u64(body.len() as u64);
        t.u32(crc32fast::hash(&body));
        t.u32(PART_VERSION);
        let mut all = body;
        all.extend_from_slice(&t.0);
        all.extend_from_slice(PART_MAGIC);
        all
    }

    fn decode(bytes: &[u8]) -> Result<Manifest, IndexError> {
        let mut i = In::new(bytes);
        let root = i.str()?;
        let explicit_columns = i.flag()?;
        let n = i.count(1)?;
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            columns.push(i.str()?);
        }
        let target_fpp = if i.flag()? {
            let p = f64::from_bits(i.u64()?);
            if !(p > 0.0 && p < 1.0) {
                return Err(IndexError::Damaged(format!("target FPP {p}")));
            }
            Some(p)
        } else {
            None
        };
        let n = i.count(1)?;
        let mut files = Vec::with_capacity(n);
        for _ in 0..n {
            files.push(i.str()?);
        }
        if i.left() != 0 {
            return Err(IndexError::Damaged(
                "bytes after the part's manifest".into(),
            ));
        }
        if files.windows(2).any(|w| w[0] >= w[1]) || columns.windows(2).any(|w| w[0] >= w[1]) {
            return Err(IndexError::Damaged(
                "the manifest's lists are not sorted, or repeat".into(),
            ));
        }
        Ok(Manifest {
            root,
            explicit_columns,
            columns,
            target_fpp,
            files,
        })
    }
}

/// Checks a part's trailer and manifest (version, bounds, checksum) and decodes the
/// manifest; the index before it is `all[..index_len]`, still unchecked.
pub(crate) fn split_part(all: &[u8]) -> Result<(Manifest, u64), IndexError> {
    let n = all.len() as u64;
    if n < PART_TRAILER_LEN || &all[all.len() - 8..] != PART_MAGIC {
        return Err(IndexError::Foreign);
    }
    let t = &all[all.len() - PART_TRAILER_LEN as usize..];
    let manifest_len = u64::from_le_bytes(t[0..8].try_into().unwrap_or([0; 8]));
    let crc = u32::from_le_bytes(t[8..12].try_into().unwrap_or([0; 4]));
    let version = u32::from_le_bytes(t[12..16].try_into().unwrap_or([0; 4]));
    if version != PART_VERSION {
        return Err(IndexError::Damaged(format!(
            "part format version {version}; this build reads version {PART_VERSION}"
        )));
    }
    if manifest_len > MAX_MANIFEST || manifest_len > n - PART_TRAILER_LEN {
        return Err(IndexError::Damaged(format!(
            "a manifest of {manifest_len} bytes does not fit a part of {n} bytes"
        )));
    }
    let index_len = n - PART_TRAILER_LEN - manifest_len;
    let body = &all[index_len as usize..(index_len + manifest_len) as usize];
    if crc32fast::hash(body) != crc {
        return Err(IndexError::Damaged(
            "the manifest's checksum does not match".into(),
        ));
    }
    Ok((Manifest::decode(body)?, index_len))
}
