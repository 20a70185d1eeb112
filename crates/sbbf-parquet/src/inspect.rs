//! A full report on every filter of a file: where it is, what it holds, what is wrong with it.

#[cfg(feature = "encryption")]
use crate::crypto::StrayHeader;
use crate::format::header::BloomFilterHeader;
use crate::format::layout::{Layout, Region, RegionKind};
use crate::io::{read_range, IoPolicy, Range};
use crate::keys::ChunkEncryption;
use crate::read::answer::NoFilter;
use crate::read::plan::FilterSpan;
use crate::ParquetFile;
use parquet::file::reader::ChunkReader;
use sbbf::SbbfRef;

/// What `sbbf inspect` says about one column chunk's filter.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterReport {
    /// Row group index.
    pub row_group: usize,
    /// Leaf column path.
    pub column: String,
    /// `bloom_filter_offset`, if any.
    pub offset: Option<i64>,
    /// `bloom_filter_length`, if the footer has it.
    pub length: Option<i32>,
    /// Bytes of the header, when it could be decoded.
    pub header_len: Option<u64>,
    /// Bitset size the header announces.
    pub num_bytes: Option<i32>,
    /// Bits set in the bitset.
    pub bits_set: Option<u64>,
    /// Share of bits set.
    pub fill: Option<f64>,
    /// False-positive rate these bits give a random absent value.
    pub fpp: Option<f64>,
    /// Problems found; empty for a healthy filter.
    pub problems: Vec<String>,
    /// How the chunk is encrypted (`None`: not encrypted): `column key` or `footer key`, then
    /// `, not readable: ` and the reason when its key was not given or did not authenticate
    /// (its filter is then not read, and nothing is known of it).
    pub encryption: Option<String>,
}

/// The problem of an encrypted column whose filter is stored in plaintext.
pub fn plaintext_leak(column: &str) -> String {
    format!("plaintext Bloom filter on encrypted column `{column}`: reveals its values")
}

impl<R: ChunkReader> ParquetFile<R> {
    /// Reads every filter of the file (one at a time, each bounded by the file size) and reports
    /// on it. Chunks without a filter are listed too, with no offset.
    pub fn inspect(&self) -> Vec<FilterReport> {
        let meta = self.metadata();
        let mut layout = Layout::of(meta);
        let mut reports: Vec<FilterReport> = Vec::new();
        let mut index = std::collections::HashMap::new();
        let mut sealed: std::collections::HashMap<usize, Vec<Result<FilterSpan, NoFilter>>> =
            Default::default();
        for (r, rg) in meta.row_groups().iter().enumerate() {
            for (c, col) in rg.columns().iter().enumerate() {
                let enc = self.chunk_encryption(r, c);
                let mut rep = FilterReport {
                    row_group: r,
                    column: self.columns()[c].path.clone(),
                    offset: col.bloom_filter_offset(),
                    length: col.bloom_filter_length(),
                    header_len: None,
                    num_bytes: None,
                    bits_set: None,
                    fill: None,
                    fpp: None,
                    problems: Vec::new(),
                    encryption: match &enc {
                        ChunkEncryption::Plaintext => None,
                        ChunkEncryption::Readable { key } => Some(key.name().to_string()),
                        ChunkEncryption::Unreadable { key, reason } => {
                            Some(format!("{}, not readable: {reason}", key.name()))
                        }
                    },
                };
                if matches!(enc, ChunkEncryption::Unreadable { .. }) {
                    // The footer's location (a stripped plaintext copy, or none) is not
                    // the filter's to trust: nothing is read.
                    rep.offset = None;
                    rep.length = None;
                }
                if rep.offset.is_some() {
                    let end = if matches!(enc, ChunkEncryption::Readable { .. }) {
                        let spans = sealed
                            .entry(c)
                            .or_insert_with(|| self.read_filters(c, IoPolicy::default()));
                        self.read_sealed(&mut rep, &spans[r])
                    } else {
                        self.read_one(&mut rep)
                    };
                    if let (Some(o), Some(end)) = (rep.offset, end) {
                        let me = Region::filter(r, c, o as u64, end);
                        for other in layout.overlapping(&me) {
                            let path = self.columns().get(other.column).map_or("?", |t| &t.path);
                            rep.problems
                                .push(format!("overlaps {}", other.describe(path)));
                            // Both filters of an overlapping pair are suspect (probing calls
                            // both unusable): flag the earlier one too.
                            if other.kind == RegionKind::Filter {
                                if let Some(&i) = index.get(&(other.row_group, other.column)) {
                                    let mine = self.columns().get(c).map_or("?", |t| &t.path);
                                    let note = format!("overlaps {}", me.describe(mine));
                                    let earlier: &mut FilterReport = &mut reports[i];
                                    earlier.problems.push(note);
                                }
                            }
                        }
                        layout.regions.push(me);
                    }
                }
                if rep.bits_set == Some(0) && non_null_values(col) > 0 {
                    let boolean = col.column_type() == parquet::basic::Type::BOOLEAN;
                    rep.problems
                        .push(empty_filter(non_null_values(col), boolean));
                }
                index.insert((r, c), reports.len());
                reports.push(rep);
            }
        }
        reports
    }

    /// Fills in the facts of an encrypted chunk's filter, read and decrypted by the probe job
    /// (`span`); returns its end. A plaintext filter there is the problem of its own kind.
    fn read_sealed(
        &self,
        rep: &mut FilterReport,
        span: &Result<FilterSpan, NoFilter>,
    ) -> Option<u64> {
        let offset = rep.offset?;
        let plaintext = u64::try_from(offset)
            .ok()
            .filter(|o| *o < self.footer_start())
            .and_then(|o| {
                let end =
                    (o + crate::format::header::MAX_HEADER_BYTES as u64).min(self.footer_start());
                read_range(self.reader(), Range { start: o, end }).ok()
            })
            .is_some_and(|b| BloomFilterHeader::parse(&b).is_ok());
        if plaintext {
            let end = self.read_one(rep);
            rep.problems.push(plaintext_leak(&rep.column));
            return end;
        }
        match span {
            Ok(s) => {
                rep.header_len = Some(s.header_len);
                rep.num_bytes = i32::try_from(s.bitset.len()).ok();
                if let Ok(v) = SbbfRef::new(&s.bitset) {
                    rep.bits_set = Some(v.count_ones());
                    rep.fill = Some(v.fill_ratio());
                    rep.fpp = Some(v.estimated_fpp());
                }
                Some(s.end())
            }
            Err(NoFilter::Invalid(why)) => {
                rep.problems.push(why.clone());
                None
            }
            Err(NoFilter::Missing) => None,
        }
    }

    /// Plaintext filter headers in bytes that no column chunk the footer shows accounts for
    /// (data pages, page indexes, the filters it locates): in an encrypted file, most likely
    /// the filters of encrypted columns written in plaintext, which reveal their values. Reads
    /// every such gap of the data area; empty for a file without encryption (nothing read).
    #[cfg(feature = "encryption")]
    pub fn stray_filter_headers(&self) -> Result<Vec<StrayHeader>, crate::Error> {
        if self.encryption().is_none() {
            return Ok(Vec::new());
        }
        let layout = Layout::of(self.metadata());
        let mut known = std::collections::HashSet::new();
        for rg in self.metadata().row_groups() {
            for c in rg.columns() {
                if let Some(o) = c.bloom_filter_offset() {
                    known.insert(o as u64);
                }
            }
        }
        let footer = self.footer_start();
        let mut covered: Vec<(u64, u64)> = layout
            .regions
            .iter()
            .map(|r| (r.start.min(footer), r.end.min(footer)))
            .collect();
        covered.sort_unstable();
        let mut out = Vec::new();
        let mut at = 4.min(footer);
        for (start, end) in covered.into_iter().chain([(footer, footer)]) {
            if start > at {
                let found = crate::crypto::scan::scan_range(
                    self.reader(),
                    Range {
                        start: at,
                        end: start,
                    },
                    footer,
                )?;
                out.extend(found.into_iter().filter(|h| !known.contains(&h.offset)));
            }
            at = at.max(end);
        }
        Ok(out)
    }

    /// Fills in header and bitset facts; returns the filter's end offset when it is known.
    fn read_one(&self, rep: &mut FilterReport) -> Option<u64> {
        let offset = rep.offset?;
        let footer = self.footer_start();
        if offset < 4 || offset as u64 >= footer {
            rep.problems.push(format!(
                "offset {offset} is outside the data area [4, {footer})"
            ));
            return None;
        }
        let offset = offset as u64;
        if let Some(l) = rep.length {
            if l <= 0 {
                rep.problems
                    .push(format!("bloom_filter_length {l} is not positive"));
            } else if offset + l as u64 > footer {
                rep.problems.push(format!(
                    "bloom_filter_length {l} runs past the data area (footer at {footer})"
                ));
            }
        }
        let head = Range {
            start: offset,
            end: (offset + crate::format::header::MAX_HEADER_BYTES as u64).min(footer),
        };
        let (header, header_len) = match read_range(self.reader(), head)
            .map_err(|e| format!("cannot read the header: {e}"))
            .and_then(|b| BloomFilterHeader::parse(&b).map_err(|e| e.to_string()))
        {
            Ok(h) => h,
            Err(e) => {
                rep.problems.push(e);
                return None;
            }
        };
        rep.header_len = Some(header_len as u64);
        rep.num_bytes = Some(header.num_bytes);
        let n = header.num_bytes as u64;
        if !n.is_power_of_two() {
            rep.problems.push(format!(
                "bitset size {n} is not a power of two (Arrow C++ and parquet-java writers never write one; some readers reject it)"
            ));
        }
        if let Some(l) = rep.length {
            if l > 0 && l as u64 != header_len as u64 + n {
                rep.problems.push(format!(
                    "bloom_filter_length {l} disagrees with the header ({header_len} + {n} bytes)"
                ));
            }
        }
        let bits = Range {
            start: offset + header_len as u64,
            end: offset + header_len as u64 + n,
        };
        if bits.end > footer {
            rep.problems.push(format!(
                "the bitset runs past the data area (ends at {}, footer at {footer})",
                bits.end
            ));
            return None;
        }
        match read_range(self.reader(), bits) {
            Ok(b) => {
                if let Ok(v) = SbbfRef::new(&b) {
                    rep.bits_set = Some(v.count_ones());
                    rep.fill = Some(v.fill_ratio());
                    rep.fpp = Some(v.estimated_fpp());
                }
            }
            Err(e) => rep.problems.push(format!("cannot read the bitset: {e}")),
        }
        Some(bits.end)
    }
}

/// Values a chunk holds that are not null, as far as its metadata tells: 0 when it cannot
/// tell (a nullable column without a null count).
fn non_null_values(col: &parquet::file::metadata::ColumnChunkMetaData) -> i64 {
    let nulls = col.statistics().and_then(|s| s.null_count_opt());
    match nulls {
        Some(n) => col.num_values() - n as i64,
        None if col.column_descr().max_def_level() == 0 => col.num_values(),
        None => 0,
    }
}

/// The problem of a filter without one bit set in a chunk of `values` non-null values.
fn empty_filter(values: i64, boolean: bool) -> String {
    let why = if boolean {
        "parquet-java writes BOOLEAN filters so; sbbf probes answer unknown for BOOLEAN filters \
         of writers other than ClickHouse and arrow-rs, other readers (arrow-rs) drop rows"
    } else {
        "a broken filter: rebuild it, replacing the old one"
    };
    format!(
        "no bit is set, yet the chunk holds {values} non-null value(s): read as written, the \
         filter says every value is absent ({why})"
    )
}
