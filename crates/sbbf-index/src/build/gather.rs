//! What one file gives a build: its row counts, schema fingerprint, and per column its type
//! and each row group's filter, read from the file (folded to a target FPP) or built from
//! its pages (`build_missing`).

use super::spool::{Spool, Spooled};
use sbbf::Sbbf;
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::source::SourceFile;
use sbbf_parquet::IoPolicy;
use std::sync::Arc;

/// The false-positive rate of filters built from data (`build_missing`) without `--fpp`:
/// `sbbf add`'s default.
pub const BUILT_FPP: f64 = 0.01;

/// The largest column chunk a build reads to build a filter (`build_missing`); a larger one
/// stays not covered.
const MAX_BUILT_CHUNK: u64 = 1 << 30;

/// Per row group, a filter (`B`: its bitset, or where the spool holds it) and how many times
/// it was folded, if it has one.
pub(super) type RowGroupFilters<B> = Vec<Option<(B, u8)>>;

/// What one file gave: its row counts, and per column its type and per row group the filter,
/// if any.
pub(super) struct Gathered<B> {
    pub(super) row_counts: Vec<i64>,
    /// [`schema_fingerprint`] of the file (`None`: not known, e.g. kept from an index that
    /// did not record it).
    pub(super) schema: Option<u64>,
    pub(super) columns: Vec<(ColumnType, RowGroupFilters<B>)>,
    /// What building missing filters from data did.
    pub(super) built: Built,
    /// Per column asked for (`-c`, in order): the leaf it names in this file and whether a
    /// row group has a filter (or got one built), or why the file has no such column.
    pub(super) asked: Vec<Result<(String, bool), sbbf_parquet::Error>>,
}

/// Filters built from data for one file, what it read, and what failed (row group, column,
/// why).
#[derive(Debug, Default)]
pub(super) struct Built {
    pub(super) filters: usize,
    /// Of `filters`, those that replaced a filter looser than the target (`tighten`).
    pub(super) tightened: usize,
    pub(super) requests: u64,
    pub(super) bytes: u64,
    pub(super) failed: Vec<(usize, String, String)>,
}

impl Gathered<Vec<u8>> {
    /// Moves the bitsets to the spool: only their places stay in memory.
    pub(super) fn spool(self, spool: &mut Spool) -> std::io::Result<Gathered<Spooled>> {
        let mut columns = Vec::with_capacity(self.columns.len());
        for (ty, rgs) in self.columns {
            let mut out = Vec::with_capacity(rgs.len());
            for f in rgs {
                out.push(match f {
                    Some((bits, folds)) => Some((spool.put(&bits)?, folds)),
                    None => None,
                });
            }
            columns.push((ty, out));
        }
        Ok(Gathered {
            row_counts: self.row_counts,
            schema: self.schema,
            columns,
            built: self.built,
            asked: self.asked,
        })
    }
}

/// A fingerprint of what a file's footer says of its schema: the schema tree (names,
/// repetitions, physical, logical and converted types, field ids) and the key-value metadata
/// (where the Arrow schema a writer stored lives). Files of one fingerprint give a query
/// engine the same table schema, so one footer of them tells it; files of different ones may
/// differ. A later crate version may fingerprint the same footer differently: then more
/// footers are read, never fewer.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let data = std::fs::read("../../testdata/pa_ints.parquet")?;
/// let md = parquet::file::metadata::ParquetMetaDataReader::new()
///     .parse_and_finish(&bytes::Bytes::from(data))?;
/// let a = sbbf_index::build::schema_fingerprint(&md);
/// assert_eq!(a, sbbf_index::build::schema_fingerprint(&md));
/// # Ok(()) }
/// ```
pub fn schema_fingerprint(md: &parquet::file::metadata::ParquetMetaData) -> u64 {
    let f = md.file_metadata();
    sbbf::hash(format!("{:?}\n{:?}", f.schema(), f.key_value_metadata()).as_bytes())
}

/// Reads one file's filters of the wanted columns (every column with a filter when none is
/// named), folding them to `fpp` when given; with `tighten` (and `fpp`), a filter whose bits
/// give more than `fpp` is replaced by one built from its chunk's data at `fpp`.
pub(super) async fn gather(
    mut pq: SourceFile,
    wanted: &[String],
    fpp: Option<f64>,
    (build_missing, tighten): (bool, bool),
    policy: IoPolicy,
) -> (Gathered<Vec<u8>>, sbbf_parquet::IoStats) {
    let row_counts: Vec<i64> = pq
        .metadata()
        .row_groups()
        .iter()
        .map(|r| r.num_rows())
        .collect();
    // Every leaf (or every chosen one) is recorded, with or without filters: a file that
    // has the column but no filter must be "not covered" (probed directly), never "no such
    // column".
    let cols: Vec<usize> = if wanted.is_empty() {
        (0..pq.columns().len()).collect()
    } else {
        let mut v: Vec<usize> = wanted
            .iter()
            .filter_map(|w| pq.column_index(w).ok())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut columns = Vec::with_capacity(cols.len());
    let with_filters: Vec<usize> = cols
        .iter()
        .copied()
        .filter(|&c| pq.filter_locations(c).iter().any(|l| l.offset.is_some()))
        .collect();
    // Every column's filters in the same waves.
    let mut all = pq
        .read_filters_of_columns_async(&with_filters, policy)
        .await
        .into_iter();
    for c in cols {
        let ty = pq.columns()[c].clone();
        let spans = if with_filters.contains(&c) {
            all.next().unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut rgs: RowGroupFilters<Vec<u8>> = spans
            .into_iter()
            .map(|s| {
                let span = s.ok()?;
                let mut bits = span.bitset.to_vec();
                let mut folds = 0u8;
                if let Some(p) = fpp {
                    let mut f = Sbbf::from_bitset(&bits).ok()?;
                    folds = f.fold_to_target_fpp(p).ok()?.min(30) as u8;
                    if folds > 0 {
                        bits = f.as_bytes().to_vec();
                    }
                }
                // A bitset the filter crate would refuse is no entry (the file is then probed
                // directly, and says why).
                sbbf::SbbfRef::new(&bits).ok()?;
                Some((bits, folds))
            })
            .collect();
        rgs.resize(row_counts.len(), None);
        columns.push((c, ty, rgs));
    }
    // The io of footers and filters, before any data page.
    let io = pq.io_stats();
    let mut built = Built::default();
    // Filters built from data: where a row group has none (`build_missing`), and where its
    // own is looser than the target (`tighten`).
    let target = fpp.filter(|_| tighten);
    if (build_missing || target.is_some()) && !wanted.is_empty() {
        for (c, ty, rgs) in columns.iter_mut() {
            for (rg, slot) in rgs.iter_mut().enumerate() {
                let missing = build_missing && slot.is_none();
                let loose = match (target, slot.as_ref()) {
                    (Some(p), Some((bits, _))) => {
                        sbbf::SbbfRef::new(bits).is_ok_and(|f| f.estimated_fpp() > p)
                    }
                    _ => false,
                };
                if !(missing || loose) {
                    continue;
                }
                match build_from_data(&mut pq, *c, ty, rg, fpp, &mut built).await {
                    Ok(bits) => {
                        built.filters += 1;
                        built.tightened += usize::from(loose);
                        *slot = Some((bits, 0));
                    }
                    Err(why) if missing => built.failed.push((rg, ty.path.clone(), why)),
                    // A loose filter whose chunk cannot be built keeps the file's own as its
                    // entry: looser, never wrong.
                    Err(_) => {}
                }
            }
        }
    }
    let asked = wanted
        .iter()
        .map(|w| {
            let c = pq.column_index(w)?;
            let filtered = columns
                .iter()
                .any(|(k, _, rgs)| *k == c && rgs.iter().any(Option::is_some));
            Ok((pq.columns()[c].path.clone(), filtered))
        })
        .collect();
    (
        Gathered {
            row_counts,
            schema: Some(schema_fingerprint(pq.metadata())),
            columns: columns.into_iter().map(|(_, t, r)| (t, r)).collect(),
            built,
            asked,
        },
        io,
    )
}

/// Builds the filter of column chunk `(rg, c)` from its pages (read here, and only they), as
/// `sbbf add` builds one; counts the read in `built`.
async fn build_from_data(
    pq: &mut SourceFile,
    c: usize,
    ty: &ColumnType,
    rg: usize,
    fpp: Option<f64>,
    built: &mut Built,
) -> Result<Vec<u8>, String> {
    use parquet::arrow::async_reader::AsyncFileReader;
    if ty.physical == parquet::basic::Type::BOOLEAN {
        // Parquet's writers define no filter for BOOLEAN: none is made up here.
        return Err("BOOLEAN columns get no filter built".into());
    }
    let range = sbbf_parquet::write::build::chunk_range(pq.metadata(), (rg, c), pq.file_len())
        .map_err(|e| e.to_string())?;
    if range.end - range.start > MAX_BUILT_CHUNK {
        return Err(format!(
            "a column chunk of {} bytes is larger than a build reads",
            range.end - range.start
        ));
    }
    let got = pq
        .reader_mut()
        .get_byte_ranges(vec![range.clone()])
        .await
        .map_err(|e| e.to_string())?;
    let bytes = got.into_iter().next().unwrap_or_default();
    built.requests += 1;
    built.bytes += bytes.len() as u64;
    let (metadata, ty, len) = (Arc::clone(pq.metadata()), ty.clone(), pq.file_len());
    let p = fpp.unwrap_or(BUILT_FPP);
    let work = move || {
        sbbf_parquet::write::build::chunk_filter_from_bytes(
            &metadata,
            &ty,
            (rg, c),
            (range.start, bytes),
            len,
            None,
            p,
        )
    };
    let made = match tokio::runtime::Handle::try_current() {
        Ok(h) => h.spawn_blocking(work).await.map_err(|e| e.to_string())?,
        Err(_) => work(),
    };
    let (f, _) = made.map_err(|e| e.to_string())?;
    Ok(f.as_bytes().to_vec())
}
