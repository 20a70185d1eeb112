//! Checking a writer's filters against its data: every stored value must test "maybe" (a
//! "definitely absent" for a stored value is a broken writer), and the real false-positive
//! rate on random absent values is measured next to the rate the filter's fill predicts.

use crate::format::column::ColumnType;
use crate::io::IoPolicy;
use crate::values::decode::for_each_value;
use crate::{Error, FilterState, ParquetFile};
use parquet::basic::Type as PhysicalType;
use parquet::file::reader::{ChunkReader, FileReader};
use sbbf::SbbfRef;
use std::collections::HashSet;

/// False negatives kept per chunk for the report (all are counted).
pub(crate) const MAX_REPORTED: usize = 20;

/// The verdict on one column chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkReport {
    /// Row group index.
    pub row_group: usize,
    /// Leaf column path.
    pub column: String,
    /// The chunk's filter.
    pub filter: FilterState,
    /// Non-null values decoded.
    pub values: u64,
    /// Distinct values (by hash).
    pub distinct: u64,
    /// Stored values the filter says are absent.
    pub false_negatives: u64,
    /// The first few of them, as text.
    pub false_negative_examples: Vec<String>,
    /// Random absent values probed.
    pub absent_probes: u64,
    /// Share of them the filter called "maybe".
    pub measured_fpp: Option<f64>,
    /// What the filter's fill predicts.
    pub predicted_fpp: Option<f64>,
    /// Why the chunk's values could not be read (an encrypted chunk whose key was not given):
    /// nothing was verified, and the counts are zero.
    pub not_verified: Option<String>,
}

impl<R: ChunkReader> ParquetFile<R> {
    /// Verifies the filters of `columns` (leaf indices; all leaves with any filter when empty)
    /// against the data decoded through `data`, probing `absent_probes` random absent values per
    /// chunk. `progress` is called after each chunk with (done, total).
    ///
    /// For an encrypted file (opened with [`ParquetFile::open_with_keys`]) `data` is not used:
    /// this is [`ParquetFile::verify_encrypted`].
    pub fn verify(
        &self,
        data: &dyn FileReader,
        columns: &[usize],
        absent_probes: u64,
        progress: impl FnMut(usize, usize),
    ) -> Result<Vec<ChunkReport>, Error> {
        self.verify_from(Some(data), columns, absent_probes, progress)
    }

    /// [`ParquetFile::verify`] for a file with modular encryption, opened with its keys: each
    /// chunk's pages are decrypted into a [`crate::crypto::PlainImage`] (one chunk in memory
    /// at a time) and decoded from there. A chunk whose key was not given is not verified:
    /// its report says why (the `not_verified` field of [`ChunkReport`]); without columns chosen, every
    /// column with a filter or with such a chunk is verified. A page that does not decrypt is
    /// an error. On a file without encryption, [`crate::crypto::CryptoError::Malformed`].
    #[cfg(feature = "encryption")]
    pub fn verify_encrypted(
        &self,
        columns: &[usize],
        absent_probes: u64,
        progress: impl FnMut(usize, usize),
    ) -> Result<Vec<ChunkReport>, Error> {
        if self.encryption().is_none() {
            return Err(crate::crypto::CryptoError::Malformed(
                crate::MalformedCrypto::NotEncrypted,
            )
            .into());
        }
        self.verify_from(None, columns, absent_probes, progress)
    }

    fn verify_from(
        &self,
        data: Option<&dyn FileReader>,
        columns: &[usize],
        absent_probes: u64,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Vec<ChunkReport>, Error> {
        let encrypted = self.is_encrypted();
        let unreadable = |c: usize| {
            (0..self.metadata().num_row_groups()).any(|rg| {
                matches!(
                    self.chunk_encryption(rg, c),
                    crate::keys::ChunkEncryption::Unreadable { .. }
                )
            })
        };
        let chosen: Vec<usize> = if columns.is_empty() {
            // A chunk that cannot be decrypted may have a filter nobody can see: it is
            // reported (not verified), never left out silently.
            (0..self.columns().len())
                .filter(|c| {
                    // BOOLEAN filters of writers not known to fill them (parquet-java's are
                    // empty) are never used, so there is nothing of ours to verify; `-c`
                    // still reports them, with the reason.
                    (self.filter_locations(*c).iter().any(|l| l.offset.is_some())
                        && self.untrusted_boolean_filters(*c).is_none())
                        || unreadable(*c)
                })
                .collect()
        } else {
            columns.to_vec()
        };
        let total = chosen.len() * self.metadata().num_row_groups();
        let mut reports = Vec::new();
        for c in chosen {
            let ty = self.columns()[c].clone();
            let filters = self.read_filters(c, IoPolicy::default());
            for (rg, filter) in filters.into_iter().enumerate() {
                let filter = filter.map(|span| span.bitset);
                let report = match (encrypted, data) {
                    (false, Some(data)) => {
                        verify_chunk(data, (rg, rg), c, &ty, filter, absent_probes)?
                    }
                    (false, None) => {
                        return Err(crate::CryptoError::Malformed(
                            crate::MalformedCrypto::NotEncrypted,
                        )
                        .into())
                    }
                    (true, _) => self.verify_sealed_chunk(rg, c, &ty, filter, absent_probes)?,
                };
                reports.push(report);
                progress(reports.len(), total);
            }
        }
        Ok(reports)
    }
}

impl<R: ChunkReader> ParquetFile<R> {
    /// One chunk of an encrypted file, decoded from its plaintext image.
    #[cfg(feature = "encryption")]
    fn verify_sealed_chunk(
        &self,
        rg: usize,
        c: usize,
        ty: &ColumnType,
        filter: Result<bytes::Bytes, crate::NoFilter>,
        absent_probes: u64,
    ) -> Result<ChunkReport, Error> {
        match self.plaintext_image(rg, c) {
            Ok(image) => verify_chunk(&image.reader()?, (0, rg), c, ty, filter, absent_probes),
            Err(Error::Crypto(crate::CryptoError::ChunkUnreadable { reason, .. })) => Ok(
                ChunkReport::not_verified(rg, ty, filter, format!("encrypted, and {reason}")),
            ),
            Err(e) => Err(e),
        }
    }

    /// Without the `encryption` feature no encrypted file opens, so no chunk comes here.
    #[cfg(not(feature = "encryption"))]
    fn verify_sealed_chunk(
        &self,
        _rg: usize,
        _c: usize,
        _ty: &ColumnType,
        _filter: Result<bytes::Bytes, crate::NoFilter>,
        _absent_probes: u64,
    ) -> Result<ChunkReport, Error> {
        Err(Error::EncryptionNotBuilt)
    }
}

impl ChunkReport {
    #[cfg_attr(not(feature = "encryption"), allow(dead_code))]
    fn not_verified(
        row_group: usize,
        ty: &ColumnType,
        filter: Result<bytes::Bytes, crate::NoFilter>,
        why: String,
    ) -> ChunkReport {
        ChunkReport {
            row_group,
            column: ty.path.clone(),
            filter: match filter {
                Ok(_) => FilterState::Present,
                Err(no) => no.into(),
            },
            values: 0,
            distinct: 0,
            false_negatives: 0,
            false_negative_examples: Vec::new(),
            absent_probes: 0,
            measured_fpp: None,
            predicted_fpp: None,
            not_verified: Some(why),
        }
    }
}

/// Verifies one chunk, decoded from row group `data_rg` of `data` (the file's own row group
/// `rg`, or 0 in a plaintext image).
fn verify_chunk(
    data: &dyn FileReader,
    (data_rg, rg): (usize, usize),
    c: usize,
    ty: &ColumnType,
    filter: Result<bytes::Bytes, crate::NoFilter>,
    absent_probes: u64,
) -> Result<ChunkReport, Error> {
    let (state, bits) = match filter {
        Ok(b) => (FilterState::Present, Some(b)),
        Err(no) => (no.into(), None),
    };
    let view = bits.as_ref().and_then(|b| SbbfRef::new(b).ok());
    let mut seen = HashSet::new();
    let mut false_negatives = 0u64;
    let mut examples = Vec::new();
    let values = for_each_value(data, data_rg, c, |v| {
        let h = sbbf::hash(v);
        if seen.insert(h) {
            if let Some(view) = view {
                if !view.contains_hash(h) {
                    false_negatives += 1;
                    if examples.len() < MAX_REPORTED {
                        examples.push(display_plain(ty, v));
                    }
                }
            }
        }
    })?;
    let (mut measured, mut predicted, mut probes) = (None, None, 0);
    if let Some(view) = view {
        let mut hits = 0u64;
        let mut rng = 0x5bbf_u64 ^ ((rg as u64) << 32) ^ c as u64;
        let width = match ty.physical {
            PhysicalType::INT32 | PhysicalType::FLOAT => 4,
            PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
            PhysicalType::INT96 => 12,
            PhysicalType::FIXED_LEN_BYTE_ARRAY => ty.type_length.clamp(1, 64) as usize,
            _ => 16,
        };
        let mut buf = vec![0u8; width];
        while probes < absent_probes {
            for chunk in buf.chunks_mut(8) {
                let r = splitmix(&mut rng).to_le_bytes();
                chunk.copy_from_slice(&r[..chunk.len()]);
            }
            let h = sbbf::hash(&buf);
            if seen.contains(&h) {
                continue;
            }
            probes += 1;
            hits += view.contains_hash(h) as u64;
        }
        if probes > 0 {
            measured = Some(hits as f64 / probes as f64);
        }
        predicted = Some(view.estimated_fpp());
    }
    Ok(ChunkReport {
        row_group: rg,
        column: ty.path.clone(),
        filter: state,
        values,
        distinct: seen.len() as u64,
        false_negatives,
        false_negative_examples: examples,
        absent_probes: probes,
        measured_fpp: measured,
        predicted_fpp: predicted,
        not_verified: None,
    })
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stored value as readable text: numbers for numeric types, UTF-8 for strings, hex else.
pub(crate) fn display_plain(ty: &ColumnType, v: &[u8]) -> String {
    use crate::format::column::ValueKind;
    let hex = || {
        format!(
            "0x{}",
            v.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    };
    match (ty.physical, v.len()) {
        (PhysicalType::INT32, 4) => i32::from_le_bytes(v.try_into().unwrap()).to_string(),
        (PhysicalType::INT64, 8) => i64::from_le_bytes(v.try_into().unwrap()).to_string(),
        (PhysicalType::FLOAT, 4) => format!("{:?}", f32::from_le_bytes(v.try_into().unwrap())),
        (PhysicalType::DOUBLE, 8) => format!("{:?}", f64::from_le_bytes(v.try_into().unwrap())),
        _ if ty.kind == ValueKind::String => match std::str::from_utf8(v) {
            Ok(s) => format!("{s:?}"),
            Err(_) => hex(),
        },
        _ => hex(),
    }
}
