//! `sbbf add` and `sbbf resize`: write filters into existing files without touching their data.

use crate::Format;
use clap::Args;
use sbbf_parquet::write::{add_filters, resize_filters, AddOptions, WriteReport};
use serde_json::json;
use std::path::PathBuf;

/// Where the result goes: a new file, or the input itself.
#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct Destination {
    /// Write the result to this file (written to a temporary file beside it, then renamed).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Replace the input file (atomically: an interrupted run leaves it untouched).
    #[arg(long)]
    pub in_place: bool,
}

impl Destination {
    fn target(&self, input: &std::path::Path) -> PathBuf {
        match &self.output {
            Some(o) => o.clone(),
            None => input.to_path_buf(),
        }
    }
}

/// Add Bloom filters to a Parquet file without rewriting its data: the bytes before the
/// footer stay exactly as they are; new filters and a new footer (in which only the chosen
/// column chunks' bloom_filter_offset/bloom_filter_length differ) are appended. Filters are
/// sized by each chunk's real contents: built for its value count, then folded as far as the
/// false-positive rate of the actual bits allows (powers of two, which every reader accepts).
///
/// Examples:
///   sbbf add data.parquet --column user_id -o data.bloom.parquet
///   sbbf add data.parquet -c user_id -c s.b --fpp 0.001 --in-place
///   sbbf add data.parquet -c user_id --replace --ndv 100000 -o out.parquet
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct AddArgs {
    /// The Parquet file.
    pub file: PathBuf,
    /// Leaf column to give filters (dotted path); repeatable.
    #[arg(long = "column", short = 'c', required = true)]
    pub columns: Vec<String>,
    /// Target false-positive rate.
    #[arg(long, default_value_t = 0.01)]
    pub fpp: f64,
    /// Size every filter for this many distinct values (default: by each chunk's contents).
    #[arg(long)]
    pub ndv: Option<u64>,
    /// Rebuild filters the columns already have.
    #[arg(long)]
    pub replace: bool,
    #[command(flatten)]
    pub dest: Destination,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Shrink oversized filters (parquet-java writes 1 MiB per chunk by default) by exact folding,
/// as far as the false-positive rate their fill implies stays at or below --fpp. When the
/// filters and page indexes follow the last data page, the space is given back; otherwise the
/// folded filters are appended.
///
/// Examples:
///   sbbf resize data.parquet --fpp 0.01 -o smaller.parquet
///   sbbf resize data.parquet --fpp 0.001 --in-place
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct ResizeArgs {
    /// The Parquet file.
    pub file: PathBuf,
    /// Target false-positive rate.
    #[arg(long)]
    pub fpp: f64,
    /// Only these columns (dotted paths); repeatable. Default: all.
    #[arg(long = "column", short = 'c')]
    pub columns: Vec<String>,
    #[command(flatten)]
    pub dest: Destination,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn report(
    cmd: &str,
    input: &std::path::Path,
    target: &std::path::Path,
    r: &WriteReport,
    format: Format,
) {
    let before: u64 = r.filters.iter().map(|f| f.bytes_before).sum();
    let after: u64 = r.filters.iter().map(|f| f.bytes_after).sum();
    if format == Format::Json {
        let filters: Vec<_> = r
            .filters
            .iter()
            .map(|f| {
                json!({"row_group": f.row_group, "column": f.column, "bytes_before": f.bytes_before,
                       "bytes_after": f.bytes_after, "distinct_values": f.distinct})
            })
            .collect();
        out!(
            "{}",
            json!({"command": cmd, "input": input.display().to_string(), "output": target.display().to_string(),
                   "filters": filters, "filter_bytes_before": before, "filter_bytes_after": after,
                   "file_bytes_before": r.input_len, "file_bytes_after": r.output_len,
                   "bytes_written": r.bytes_written, "compacted": r.compacted})
        );
        return;
    }
    for f in &r.filters {
        let distinct = f
            .distinct
            .map(|d| format!(", about {d} distinct values"))
            .unwrap_or_default();
        out!(
            "  row group {:>3}  {:<24} {:>10} -> {:>10} bytes{distinct}",
            f.row_group,
            f.column,
            f.bytes_before,
            f.bytes_after
        );
    }
    out!(
        "{}: {} filter(s); filter bytes {before} -> {after}; file {} -> {} bytes ({} bytes written){}",
        target.display(),
        r.filters.len(),
        r.input_len,
        r.output_len,
        r.bytes_written,
        if r.compacted { "; old filter space given back" } else { "" }
    );
}

/// The flag a library error is about: the library's messages do not know the CLI's words.
fn flag_hint(e: &sbbf_parquet::Error) -> &'static str {
    use sbbf_parquet::{BuildError, Error};
    match e {
        Error::Build(BuildError::HasFilters { .. }) => "; use --replace to rebuild them",
        Error::Build(BuildError::Filter(sbbf::Error::InvalidFpp(_))) => " (--fpp)",
        _ => "",
    }
}

pub fn run_add(a: AddArgs) -> u8 {
    let target = a.dest.target(&a.file);
    let opts = AddOptions {
        columns: a.columns.clone(),
        fpp: a.fpp,
        ndv: a.ndv,
        replace: a.replace,
    };
    match add_filters(
        &a.file,
        &target,
        &opts,
        &mut crate::progress::bar("building filters"),
    ) {
        Ok(r) => {
            report("add", &a.file, &target, &r, a.format);
            0
        }
        Err(e) => {
            eprintln!("sbbf add: {}: {e}{}", a.file.display(), flag_hint(&e));
            2
        }
    }
}

pub fn run_resize(a: ResizeArgs) -> u8 {
    let target = a.dest.target(&a.file);
    match resize_filters(
        &a.file,
        &target,
        a.fpp,
        &a.columns,
        &mut crate::progress::bar("reading filters"),
    ) {
        Ok(r) => {
            report("resize", &a.file, &target, &r, a.format);
            0
        }
        Err(e) => {
            eprintln!("sbbf resize: {}: {e}{}", a.file.display(), flag_hint(&e));
            2
        }
    }
}
