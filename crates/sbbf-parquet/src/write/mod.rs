//! Writing filters into existing files without touching their data: `add` appends new
//! filters and a new footer after the original bytes; `resize` folds oversized filters.
//!
//! Output always goes to a temporary file beside the target, is synced, then renamed over the
//! target: an interrupted run leaves the input untouched and no partial output.

use crate::format::footer::{edit_footer, FilterEdits, IndexMoves};
use crate::format::header::BloomFilterHeader;
use crate::format::layout::{Layout, Region, RegionKind};
use crate::io::IoPolicy;
use crate::read::plan::FilterSpan;
use crate::{BuildError, Error, NoFilter, ParquetFile, ReadError, WriteError};
use parquet::basic::Type as PhysicalType;
use parquet::file::serialized_reader::SerializedFileReader;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

pub mod build;
pub mod output;
#[cfg(feature = "encryption")]
mod sealed;

pub use output::{atomic_write, write_err};
#[cfg(feature = "encryption")]
pub use sealed::{add_encrypted, resize_encrypted, seal_plaintext_filters};

/// What `add` builds.
#[derive(Debug, Clone, PartialEq)]
pub struct AddOptions {
    /// Leaf columns (dotted paths).
    pub columns: Vec<String>,
    /// Target false-positive rate.
    pub fpp: f64,
    /// Size every filter for this many distinct values instead of folding it to `fpp` by its
    /// real fill.
    pub ndv: Option<u64>,
    /// Replace filters the columns already have. Old filters that end the file's body (as a
    /// previous `add` leaves them, just before the footer) are overwritten by the new ones;
    /// any others stay, unreferenced.
    pub replace: bool,
}

/// One filter written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFilter {
    /// Row group.
    pub row_group: usize,
    /// Column path.
    pub column: String,
    /// Bytes of the bitset before (0 when there was no filter).
    pub bytes_before: u64,
    /// Bytes of the bitset written.
    pub bytes_after: u64,
    /// Distinct values the filter holds, estimated from its fill (`add` only).
    pub distinct: Option<u64>,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReport {
    /// Filters written or rewritten.
    pub filters: Vec<WrittenFilter>,
    /// Size of the input.
    pub input_len: u64,
    /// Size of the output.
    pub output_len: u64,
    /// Bytes of the output that differ from the input's layout: new filters and footer.
    pub bytes_written: u64,
    /// Whether old filter space was given back (only when every filter and page index sits
    /// after the last data page).
    pub compacted: bool,
}

pub(crate) fn check_fpp(fpp: f64) -> Result<(), Error> {
    if fpp > 0.0 && fpp < 1.0 {
        Ok(())
    } else {
        Err(BuildError::Filter(sbbf::Error::InvalidFpp(fpp)).into())
    }
}

/// An error reading the input file.
pub(crate) fn read_err(input: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| {
        ReadError::Io {
            path: input.to_path_buf(),
            source,
        }
        .into()
    }
}

/// Copies the first `len` bytes of `input` to `w` (the output for `target`). A failure of the
/// copy is reported as a write error: reading a file that was just opened rarely fails,
/// writing (a full disk) does.
fn copy_prefix(input: &Path, target: &Path, len: u64, w: &mut impl Write) -> Result<(), Error> {
    let mut f = File::open(input).map_err(read_err(input))?;
    let copied = std::io::copy(&mut (&mut f).take(len), w).map_err(write_err(target))?;
    if copied != len {
        return Err(WriteError::InputShrank { copied, len }.into());
    }
    Ok(())
}

/// The leaf indexes of `columns` (dotted paths); every leaf when empty.
pub(crate) fn chosen_columns<R>(
    pq: &ParquetFile<R>,
    columns: &[String],
) -> Result<Vec<usize>, Error> {
    if columns.is_empty() {
        return Ok((0..pq.columns().len()).collect());
    }
    columns.iter().map(|c| pq.column_index(c)).collect()
}

/// Opens the input of a rewrite. An encrypted file is refused, its footer plaintext or not:
/// filters are not yet written as encrypted modules, nor its metadata re-encrypted (a plaintext
/// filter written for an encrypted column would reveal its values).
fn open_unencrypted(input: &Path) -> Result<ParquetFile<File>, Error> {
    let pq = ParquetFile::open(File::open(input).map_err(read_err(input))?)?;
    #[cfg(feature = "encryption")]
    if pq.encryption().is_some() {
        return Err(Error::Encrypted);
    }
    Ok(pq)
}

fn read_footer(input: &Path, start: u64, len: u64) -> Result<Vec<u8>, Error> {
    let io_err = read_err(input);
    let mut f = File::open(input).map_err(&io_err)?;
    f.seek(SeekFrom::Start(start)).map_err(&io_err)?;
    let mut footer = vec![0u8; (len - 8 - start) as usize];
    f.read_exact(&mut footer).map_err(&io_err)?;
    Ok(footer)
}

pub(crate) fn write_tail(w: &mut impl Write, target: &Path, footer: &[u8]) -> Result<(), Error> {
    let io_err = write_err(target);
    w.write_all(footer).map_err(&io_err)?;
    w.write_all(&(footer.len() as u32).to_le_bytes())
        .map_err(&io_err)?;
    w.write_all(b"PAR1").map_err(&io_err)
}
/// Adds filters as [`add_filters`] does, or, for a file with modular encryption and its
/// `keys`, as [`add_encrypted`] does (with `replace`: seals the plaintext filters of encrypted
/// columns, [`seal_plaintext_filters`]). Without keys an encrypted file is refused.
pub fn add_with_keys(
    input: &Path,
    output: &Path,
    keys: &crate::KeySet,
    opts: &AddOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<WriteReport, Error> {
    if keys.is_empty() {
        return add_filters(input, output, opts, progress);
    }
    #[cfg(feature = "encryption")]
    {
        if opts.replace {
            seal_plaintext_filters(input, output, keys, &opts.columns)
        } else {
            add_encrypted(input, output, keys, opts, progress)
        }
    }
    #[cfg(not(feature = "encryption"))]
    Err(Error::EncryptionNotBuilt)
}

/// Adds filters for `opts.columns` to every row group of `input`, writing `output` (which may
/// be `input` itself). The bytes before the footer are copied unchanged; the new filters and
/// a new footer follow. `progress(done, total)` is called after each filter.
pub fn add_filters(
    input: &Path,
    output: &Path,
    opts: &AddOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<WriteReport, Error> {
    check_fpp(opts.fpp)?;
    let pq = open_unencrypted(input)?;
    let mut cols = Vec::new();
    for name in &opts.columns {
        let c = pq.column_index(name)?;
        if pq.columns()[c].physical == PhysicalType::BOOLEAN {
            return Err(BuildError::Boolean {
                column: name.clone(),
            }
            .into());
        }
        if !opts.replace && pq.filter_locations(c).iter().any(|l| l.offset.is_some()) {
            return Err(BuildError::HasFilters {
                column: name.clone(),
            }
            .into());
        }
        if !cols.contains(&c) {
            cols.push(c);
        }
    }
    let footer = read_footer(input, pq.footer_start(), pq.file_len())?;
    let items: Vec<(usize, usize)> = (0..pq.metadata().num_row_groups())
        .flat_map(|rg| cols.iter().map(move |&c| (rg, c)))
        .collect();
    // Replacing: the old filters the run replaces that end the file's body are not copied
    // (the new ones take their place), so repeated runs do not pile up dead filters.
    let keep = if opts.replace {
        reusable_tail(&pq, &cols)
    } else {
        pq.footer_start()
    };
    let mut filters = Vec::new();
    let mut edits = FilterEdits::new();
    let mut bytes_written = 0u64;
    let output_len = atomic_write(output, input, |w| {
        copy_prefix(input, output, keep, w)?;
        let mut pos = keep;
        // Chunks are built in parallel and written in order as they arrive.
        for_each_built(input, &pq, &items, opts, |(rg, c), f, distinct| {
            let header = BloomFilterHeader {
                num_bytes: f.num_bytes() as i32,
            }
            .to_bytes();
            w.write_all(&header).map_err(write_err(output))?;
            w.write_all(f.as_bytes()).map_err(write_err(output))?;
            let len = (header.len() + f.num_bytes()) as u64;
            edits.insert((rg, c), (pos as i64, len as i32));
            // A replaced filter's size, by the footer (0 when the chunk had none).
            let before = pq.metadata().row_group(rg).column(c).bloom_filter_length();
            filters.push(WrittenFilter {
                row_group: rg,
                column: pq.columns()[c].path.clone(),
                bytes_before: before.map(|l| l.max(0) as u64).unwrap_or(0),
                bytes_after: f.num_bytes() as u64,
                distinct: Some(distinct),
            });
            pos += len;
            bytes_written += len;
            progress(filters.len(), items.len());
            Ok(())
        })?;
        let new_footer = edit_footer(&footer, &edits, &IndexMoves::new())?;
        bytes_written += new_footer.len() as u64 + 8;
        write_tail(w, output, &new_footer)
    })?;
    Ok(WriteReport {
        filters,
        input_len: pq.file_len(),
        output_len,
        bytes_written,
        compacted: keep < pq.footer_start(),
    })
}

/// Where the copy of a file whose filters of `replaced` columns are rebuilt may stop: before
/// the run of those old filters that ends the body (just before the footer), the way a
/// previous `add` left them. Only bytes they alone own are left out: the cut stops at a gap,
/// at a filter whose length the footer does not give, and is dropped altogether when
/// anything else the footer names (data pages, page indexes, another chunk's filter) has a
/// byte past it. Returns the footer's start when nothing can be reused.
fn reusable_tail<R>(pq: &ParquetFile<R>, replaced: &[usize]) -> u64 {
    let meta = pq.metadata();
    let body_end = pq.footer_start();
    let mut old = Vec::new();
    let mut others: Vec<(u64, u64)> = Layout::of(meta)
        .regions
        .iter()
        .map(|r| (r.start, r.end))
        .collect();
    for rg in meta.row_groups() {
        for (c, chunk) in rg.columns().iter().enumerate() {
            let Some(start) = chunk
                .bloom_filter_offset()
                .and_then(|o| u64::try_from(o).ok())
            else {
                continue;
            };
            let len = chunk
                .bloom_filter_length()
                .and_then(|l| u64::try_from(l).ok())
                .filter(|l| *l > 0);
            match len {
                Some(len) if replaced.contains(&c) => old.push((start, start.saturating_add(len))),
                Some(len) => others.push((start, start.saturating_add(len))),
                // A filter of unknown length may reach the footer.
                None => others.push((start, body_end)),
            }
        }
    }
    let mut cut = body_end;
    while let Some(&(start, _)) = old.iter().find(|(s, e)| *e == cut && *s < cut) {
        cut = start;
    }
    // Never into the leading magic, and never over bytes someone else owns.
    if cut < 4
        || others
            .iter()
            .any(|(s, e)| *s < body_end && cut < *e && s < e)
    {
        return body_end;
    }
    cut
}

/// Builds the filter of every `(row group, column)` of `items` on all cores and hands them to
/// `sink` in the order of `items`.
fn for_each_built(
    input: &Path,
    pq: &ParquetFile<File>,
    items: &[(usize, usize)],
    opts: &AddOptions,
    mut sink: impl FnMut((usize, usize), sbbf::Sbbf, u64) -> Result<(), Error>,
) -> Result<(), Error> {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| -> Result<(), Error> {
        let (tx, rx) = std::sync::mpsc::sync_channel(2 * workers);
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                let build = |i: usize, data: &dyn parquet::file::reader::FileReader| {
                    let (rg, c) = items[i];
                    let file = File::open(input).map_err(read_err(input))?;
                    crate::write::build::chunk_filter(
                        file,
                        pq.metadata(),
                        data,
                        &pq.columns()[c],
                        (rg, c),
                        opts.ndv,
                        opts.fpp,
                    )
                };
                let data = File::open(input).map_err(read_err(input)).and_then(|f| {
                    SerializedFileReader::new(f).map_err(|e| ReadError::Parquet(e).into())
                });
                let data = match data {
                    Ok(d) => d,
                    Err(e) => {
                        // Reported once, in place of the next item.
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i < items.len() {
                            let _ = tx.send((i, Err(e)));
                        }
                        return;
                    }
                };
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= items.len() {
                        break;
                    }
                    if tx.send((i, build(i, &data))).is_err() {
                        break; // the writer stopped on an error
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&want) {
                let (f, distinct) = r?;
                sink(items[want], f, distinct)?;
                want += 1;
            }
        }
        if want == items.len() {
            Ok(())
        } else {
            Err(BuildError::WorkerStopped.into())
        }
    })
}

/// A structure after the last data page that `resize` may move: a filter (maybe folded) or a
/// page index, and where the input has it.
enum TailItem {
    Filter {
        span: FilterSpan,
        folded: Option<sbbf::Sbbf>,
    },
    Index {
        /// Which index, of which chunk (page index regions only).
        region: Region,
    },
}

/// A column chunk: `(row group, leaf column)`.
type Chunk = (usize, usize);

impl TailItem {
    fn start(&self) -> u64 {
        match self {
            TailItem::Filter { span, .. } => span.offset,
            TailItem::Index { region } => region.start,
        }
    }
}

/// What `resize` writes, decided from the footer and the filters alone: no file is touched.
struct ResizePlan {
    /// Filters and page indexes, by the chunk they belong to, in input order.
    items: Vec<(Chunk, TailItem)>,
    /// The report's entries: the filters that shrink.
    filters: Vec<WrittenFilter>,
    /// Whether the region after the last data page is rewritten (filters and page indexes
    /// moved, the file shrinks) rather than folded filters appended after the footer's start.
    compact: bool,
    /// Bytes of the input copied unchanged: up to the first filter or page index when
    /// compacting, up to the footer otherwise.
    prefix: u64,
}

/// Folds the filters of `chosen` columns to `fpp` and decides the layout of the output.
/// `spans` holds every readable filter of the file as `((row group, column), span)`.
fn plan_resize(
    meta: &parquet::file::metadata::ParquetMetaData,
    footer_start: u64,
    column_paths: &[String],
    spans: Vec<(Chunk, FilterSpan)>,
    chosen: &[usize],
    fpp: f64,
) -> Result<ResizePlan, Error> {
    let mut items = Vec::new();
    let mut filters = Vec::new();
    for ((rg, c), span) in spans {
        let mut folded = None;
        if chosen.contains(&c) {
            let mut f = sbbf::Sbbf::from_bitset(&span.bitset).map_err(BuildError::Filter)?;
            if f.num_blocks().is_power_of_two()
                && f.fold_to_target_fpp(fpp).map_err(BuildError::Filter)? > 0
            {
                filters.push(WrittenFilter {
                    row_group: rg,
                    column: column_paths[c].clone(),
                    bytes_before: span.bitset.len() as u64,
                    bytes_after: f.num_bytes() as u64,
                    distinct: None,
                });
                folded = Some(f);
            }
        }
        items.push(((rg, c), TailItem::Filter { span, folded }));
    }
    // The region after the last data page can be rewritten when only filters and page
    // indexes live there, and every page index lies before the footer.
    let tail_start = items
        .iter()
        .map(|(_, i)| i.start())
        .min()
        .unwrap_or(footer_start);
    let layout = Layout::of(meta);
    let mut compact = layout.malformed.is_empty();
    for region in layout.regions {
        match region.kind {
            RegionKind::Data => compact &= region.end <= tail_start,
            RegionKind::ColumnIndex | RegionKind::OffsetIndex => {
                // A page index outside the data area is not moved, and then nothing is.
                if region.end > footer_start {
                    compact = false;
                } else if region.start >= tail_start {
                    items.push((
                        (region.row_group, region.column),
                        TailItem::Index { region },
                    ));
                }
            }
            RegionKind::Filter => {}
        }
    }
    items.sort_by_key(|(_, i)| i.start());
    Ok(ResizePlan {
        items,
        filters,
        compact,
        prefix: if compact { tail_start } else { footer_start },
    })
}

/// Writes the output of `plan` into `w` (the temporary file for `output`): the input's first
/// `plan.prefix` bytes, then the moved and folded structures, then the new footer. Returns the
/// bytes of new filters and footer.
fn write_resized(
    input: &Path,
    output: &Path,
    footer: &[u8],
    plan: &ResizePlan,
    w: &mut BufWriter<&File>,
) -> Result<u64, Error> {
    let mut edits = FilterEdits::new();
    let mut moves = IndexMoves::new();
    let read = read_err(input);
    let mut src = File::open(input).map_err(&read)?;
    let mut copy = |start: u64, len: u64| -> Result<Vec<u8>, Error> {
        let mut raw = vec![0u8; len as usize];
        src.seek(SeekFrom::Start(start)).map_err(&read)?;
        src.read_exact(&mut raw).map_err(&read)?;
        Ok(raw)
    };
    copy_prefix(input, output, plan.prefix, w)?;
    let mut pos = plan.prefix;
    let mut bytes_written = 0u64;
    let mut put = |w: &mut BufWriter<&File>, bytes: &[u8]| -> Result<u64, Error> {
        let at = pos;
        w.write_all(bytes).map_err(write_err(output))?;
        pos += bytes.len() as u64;
        Ok(at)
    };
    for ((rg, col), item) in &plan.items {
        match item {
            TailItem::Filter {
                folded: Some(f), ..
            } => {
                let header = BloomFilterHeader {
                    num_bytes: f.num_bytes() as i32,
                }
                .to_bytes();
                let at = put(w, &header)?;
                put(w, f.as_bytes())?;
                let len = (header.len() + f.num_bytes()) as u64;
                bytes_written += len;
                edits.insert((*rg, *col), (at as i64, len as i32));
            }
            TailItem::Filter { span, folded: None } if plan.compact => {
                let raw = copy(span.offset, span.end() - span.offset)?;
                let at = put(w, &raw)?;
                edits.insert((*rg, *col), (at as i64, raw.len() as i32));
            }
            TailItem::Index { region } if plan.compact => {
                let raw = copy(region.start, region.end - region.start)?;
                let at = put(w, &raw)? as i64;
                let e = moves.entry((*rg, *col)).or_insert((None, None));
                if region.kind == RegionKind::OffsetIndex {
                    e.0 = Some(at);
                } else {
                    e.1 = Some(at);
                }
            }
            // Not compacting: unchanged filters and page indexes stay where they are.
            _ => {}
        }
    }
    let new_footer = edit_footer(footer, &edits, &moves)?;
    bytes_written += new_footer.len() as u64 + 8;
    write_tail(w, output, &new_footer)?;
    Ok(bytes_written)
}

/// Every readable filter of the file, whole, as `((row group, column), span)`: unchosen ones
/// move too when the tail is compacted. An unusable filter is an error (it cannot be moved
/// safely); `progress` is called after each column.
fn read_spans(
    pq: &ParquetFile<File>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<(Chunk, FilterSpan)>, Error> {
    let ncols = pq.columns().len();
    let mut spans = Vec::new();
    for c in 0..ncols {
        let filters = pq.read_filters(c, IoPolicy::default());
        for (rg, span) in filters.into_iter().enumerate() {
            match span {
                Ok(s) => spans.push(((rg, c), s)),
                Err(NoFilter::Invalid(why)) => {
                    return Err(BuildError::Unusable {
                        row_group: rg,
                        column: pq.columns()[c].path.clone(),
                        reason: why,
                    }
                    .into())
                }
                Err(NoFilter::Missing) => {}
            }
        }
        progress(c + 1, ncols);
    }
    Ok(spans)
}

/// Folds every filter (of `columns`, or all) whose fill allows it down to the smallest size
/// whose fill-implied false-positive rate stays at or below `fpp`, writing `output`. When all
/// filters and page indexes follow the last data page, that region is rewritten compactly and
/// the file shrinks; otherwise the folded filters are appended and the old ones left
/// unreferenced. Nothing is written when no filter can shrink and `output` is `input`.
pub fn resize_filters(
    input: &Path,
    output: &Path,
    fpp: f64,
    columns: &[String],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<WriteReport, Error> {
    check_fpp(fpp)?;
    let pq = open_unencrypted(input)?;
    let chosen = chosen_columns(&pq, columns)?;
    let spans = read_spans(&pq, progress)?;
    let paths: Vec<String> = pq.columns().iter().map(|c| c.path.clone()).collect();
    let plan = plan_resize(
        pq.metadata(),
        pq.footer_start(),
        &paths,
        spans,
        &chosen,
        fpp,
    )?;
    if plan.filters.is_empty() && output == input {
        return Ok(WriteReport {
            filters: plan.filters,
            input_len: pq.file_len(),
            output_len: pq.file_len(),
            bytes_written: 0,
            compacted: false,
        });
    }
    let footer = read_footer(input, pq.footer_start(), pq.file_len())?;
    let mut bytes_written = 0;
    let output_len = atomic_write(output, input, |w| {
        bytes_written = write_resized(input, output, &footer, &plan, w)?;
        Ok(())
    })?;
    Ok(WriteReport {
        filters: plan.filters,
        input_len: pq.file_len(),
        output_len,
        bytes_written,
        compacted: plan.compact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_their_cause() {
        let missing = Path::new("/nonexistent/sbbf-test/in.parquet");
        let e = resize_filters(missing, missing, 0.01, &[], &mut |_, _| {}).unwrap_err();
        let io = std::error::Error::source(&e)
            .and_then(|kind| kind.source())
            .and_then(|cause| cause.downcast_ref::<std::io::Error>())
            .expect("an io::Error under Read");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert!(e.to_string().contains("in.parquet"), "{e}");
        let e = resize_filters(missing, missing, 1.5, &[], &mut |_, _| {}).unwrap_err();
        assert!(matches!(
            e,
            Error::Build(BuildError::Filter(sbbf::Error::InvalidFpp(f))) if f == 1.5
        ));
        assert!(!e.to_string().contains("--"), "{e}");
    }

    #[test]
    fn plan_moves_what_follows_the_data() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/pa_ints.parquet"
        ));
        let pq = ParquetFile::open(File::open(path).unwrap()).unwrap();
        let paths: Vec<String> = pq.columns().iter().map(|c| c.path.clone()).collect();
        let spans = read_spans(&pq, &mut |_, _| {}).unwrap();
        assert!(!spans.is_empty());
        let plan = |spans, chosen: &[usize]| {
            plan_resize(
                pq.metadata(),
                pq.footer_start(),
                &paths,
                spans,
                chosen,
                0.01,
            )
            .unwrap()
        };
        // Nothing chosen: nothing folds; the filters still move when the tail is compacted.
        let p = plan(spans.clone(), &[]);
        assert!(p.filters.is_empty());
        assert!(
            p.compact,
            "pyarrow puts filters and page indexes after the data"
        );
        let filters = p
            .items
            .iter()
            .filter(|(_, i)| matches!(i, TailItem::Filter { .. }))
            .count();
        assert_eq!(filters, spans.len());
        assert!(p.items.windows(2).all(|w| w[0].1.start() <= w[1].1.start()));
        assert_eq!(p.prefix, p.items[0].1.start());
        // A filter the footer places inside the data: the tail holds data, nothing moves.
        let mut inside = spans.clone();
        inside[0].1.offset = 4;
        let p = plan(inside, &[]);
        assert!(!p.compact);
        assert_eq!(p.prefix, pq.footer_start());
    }
}
