//! `sbbf inspect FILE`

use crate::{files, Format};
use clap::Args;
use sbbf_parquet::ParquetFile;
use serde_json::json;

/// Show every column chunk's Bloom filter: where it is, how big, how full, the false-positive
/// rate its fill implies, and anything wrong with it (bad header, offsets outside the data area,
/// overlap with other structures, sizes other readers reject). Two column chunks pointing at
/// the same filter bytes are both flagged.
///
/// In a directory or glob, a --column that a file lacks (schema evolution) is reported as "not
/// in this file" for that file.
///
/// Exit status: 0 when no problem is found, 1 when some filter has a problem, 2 when some file
/// cannot be read (with --format json, such a file is {"file": ..., "error": ...}).
///
/// Examples:
///   sbbf inspect data.parquet
///   sbbf inspect data/ --format json
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct InspectArgs {
    /// A Parquet file, a directory (every *.parquet below it) or a quoted glob.
    pub file: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Only these columns (dotted paths); repeatable.
    #[arg(long = "column", short = 'c')]
    pub columns: Vec<String>,
}

pub fn run(a: InspectArgs) -> u8 {
    let paths = match files::expand(&a.file) {
        Ok(p) => p,
        Err(e) => {
            err!("sbbf inspect: {e}");
            return 2;
        }
    };
    let mut failed = false;
    let mut problems = 0;
    let many = paths.len() > 1;
    for path in &paths {
        let shown = path.display().to_string();
        match inspect_file(&shown, path, &a, many) {
            Ok(n) => problems += n,
            Err(e) => {
                err!("sbbf inspect: {shown}: {e}");
                if a.format == Format::Json {
                    out!("{}", json!({"file": shown, "error": e.to_string()}));
                }
                failed = true;
            }
        }
    }
    if failed {
        2
    } else if problems > 0 {
        1
    } else {
        0
    }
}

/// Prints one file's report; returns how many problems it found.
/// With several files (`many`), a --column a file lacks is listed as "not in this file"
/// (JSON: `columns_not_in_file`) instead of failing the file.
fn inspect_file(
    shown: &str,
    path: &std::path::Path,
    a: &InspectArgs,
    many: bool,
) -> Result<usize, Box<dyn std::error::Error>> {
    let pq = ParquetFile::open(std::fs::File::open(path)?)?;
    let mut columns = Vec::new();
    let mut not_in_file = Vec::new();
    for c in &a.columns {
        match pq.column_index(c) {
            Ok(i) => columns.push(pq.columns()[i].path.clone()),
            Err(e @ sbbf_parquet::Error::UnknownColumn { .. }) if !many => return Err(e.into()),
            Err(sbbf_parquet::Error::UnknownColumn { .. }) => not_in_file.push(c.clone()),
            Err(e) => return Err(e.into()),
        }
    }
    let created_by = pq
        .metadata()
        .file_metadata()
        .created_by()
        .map(str::to_string);
    let reports: Vec<_> = pq
        .inspect()
        .into_iter()
        .filter(|r| a.columns.is_empty() || columns.contains(&r.column))
        .collect();
    let problems: usize = reports.iter().map(|r| r.problems.len()).sum();
    if a.format == Format::Json {
        let chunks: Vec<_> = reports
            .iter()
            .map(|r| {
                let ty = pq.columns().iter().find(|c| c.path == r.column);
                json!({
                    "row_group": r.row_group,
                    "column": r.column,
                    "physical_type": ty.map(|t| t.physical_name()),
                    "logical_type": ty.and_then(|t| t.logical.clone()),
                    "has_filter": r.offset.is_some(),
                    "offset": r.offset,
                    "length": r.length,
                    "header_bytes": r.header_len,
                    "bitset_bytes": r.num_bytes,
                    "bits_set": r.bits_set,
                    "fill_ratio": r.fill,
                    "estimated_fpp": r.fpp,
                    "problems": r.problems,
                })
            })
            .collect();
        out!(
            "{}",
            json!({
                "file": shown,
                "created_by": created_by,
                "file_size": pq.file_len(),
                "num_row_groups": pq.metadata().num_row_groups(),
                "chunks": chunks,
                "problems": problems,
                "columns_not_in_file": not_in_file,
            })
        );
        return Ok(problems);
    }
    out!(
        "{shown}: {} bytes, {} row group(s), written by {}",
        pq.file_len(),
        pq.metadata().num_row_groups(),
        created_by.as_deref().unwrap_or("(unknown writer)")
    );
    out!(
        "  {:>3}  {:<24} {:>10} {:>8} {:>10} {:>9} {:>7} {:>10}",
        "rg",
        "column",
        "offset",
        "length",
        "bitset",
        "bits set",
        "fill",
        "fpp"
    );
    for r in &reports {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_string());
        match r.offset {
            None => out!("  {:>3}  {:<24} no Bloom filter", r.row_group, r.column),
            Some(o) => out!(
                "  {:>3}  {:<24} {:>10} {:>8} {:>10} {:>9} {:>7} {:>10}",
                r.row_group,
                r.column,
                o,
                r.length
                    .map(|l| l.to_string())
                    .unwrap_or_else(|| "absent".into()),
                opt(r.num_bytes.map(|n| n.to_string())),
                opt(r.bits_set.map(|n| n.to_string())),
                opt(r.fill.map(|f| format!("{:.1}%", f * 100.0))),
                opt(r.fpp.map(|f| format!("{f:.2e}"))),
            ),
        }
        for p in &r.problems {
            out!("       problem: {p}");
        }
    }
    for c in &not_in_file {
        out!("  column `{c}` not in this file");
    }
    out!("  {problems} problem(s) found");
    Ok(problems)
}
