//! `sbbf inspect FILE`

use crate::Format;
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
/// Encrypted files (Parquet modular encryption) are read with their keys (--footer-key,
/// --column-key, --keys). A plaintext filter on an encrypted column is a problem: it reveals
/// the column's values to anyone with the file. Without the keys, the filters of encrypted
/// columns cannot be located; inspect then warns about plaintext filter headers found in bytes
/// that no visible column chunk accounts for (warnings do not change the exit status).
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
    #[command(flatten)]
    pub keys: crate::keys::KeyArgs,
}

pub fn run(a: InspectArgs) -> u8 {
    if let Err(e) = a.keys.key_set() {
        err!("sbbf inspect: {e}");
        return 2;
    }
    let paths = match sbbf_parquet::source::local_files(&a.file) {
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
                let warnings = match e.downcast_ref::<sbbf_parquet::Error>() {
                    Some(sbbf_parquet::Error::Encrypted) => stray_warnings_unopened(path),
                    _ => Vec::new(),
                };
                err!("sbbf inspect: {shown}: {e}");
                for w in &warnings {
                    err!("sbbf inspect: {shown}: warning: {w}");
                }
                // The error object stays {file, error}: the warnings are on stderr only.
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
    let pq = ParquetFile::open_with_keys(std::fs::File::open(path)?, &a.keys.key_set()?)?;
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
    let warnings: Vec<String> = pq.stray_filter_headers()?.iter().map(stray_text).collect();
    let encryption = pq.encryption().map(|e| {
        json!({
            "algorithm": e.algorithm.name(),
            "footer": if e.footer_encrypted { "encrypted" } else { "plaintext" },
            "footer_verified": e.signature_verified,
        })
    });
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
                    "has_filter": match &r.encryption {
                        Some(e) if e.contains("not readable") => None,
                        _ => Some(r.offset.is_some()),
                    },
                    "offset": r.offset,
                    "length": r.length,
                    "header_bytes": r.header_len,
                    "bitset_bytes": r.num_bytes,
                    "bits_set": r.bits_set,
                    "fill_ratio": r.fill,
                    "estimated_fpp": r.fpp,
                    "problems": r.problems,
                    "encryption": r.encryption,
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
                "encryption": encryption,
                "warnings": warnings,
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
    if let Some(e) = pq.encryption() {
        out!(
            "  encrypted: {}, {} footer{}",
            e.algorithm.name(),
            if e.footer_encrypted {
                "encrypted"
            } else {
                "plaintext"
            },
            if !e.footer_encrypted && !e.signature_verified {
                " (signature not verified: no footer key)"
            } else {
                ""
            }
        );
    }
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
        let unreadable = r
            .encryption
            .as_deref()
            .is_some_and(|e| e.contains("not readable"));
        match r.offset {
            None if unreadable => {
                out!("  {:>3}  {:<24} unknown (encrypted)", r.row_group, r.column)
            }
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
        if let Some(e) = &r.encryption {
            out!("       encrypted with the {e}");
        }
        for p in &r.problems {
            out!("       problem: {p}");
        }
    }
    for w in &warnings {
        out!("  warning: {w}");
    }
    for c in &not_in_file {
        out!("  column `{c}` not in this file");
    }
    out!("  {problems} problem(s) found");
    Ok(problems)
}

/// A stray plaintext header, in words.
fn stray_text(h: &sbbf_parquet::crypto::StrayHeader) -> String {
    h.to_string()
}

/// The stray plaintext filter headers of a file whose footer cannot be read (encrypted, no
/// footer key): the whole data area is scanned.
fn stray_warnings_unopened(path: &std::path::Path) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let Ok(meta) = file.metadata() else {
        return Vec::new();
    };
    let len = meta.len();
    let tail = {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = &file;
        let mut t = [0u8; 8];
        if len < 12 || f.seek(SeekFrom::Start(len - 8)).is_err() || f.read_exact(&mut t).is_err() {
            return Vec::new();
        }
        t
    };
    let footer_len = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) as u64;
    let Some(footer_start) = len.checked_sub(8 + footer_len) else {
        return Vec::new();
    };
    match sbbf_parquet::crypto::scan_data_area(&file, footer_start) {
        Ok(found) => found
            .iter()
            .map(|h| {
                format!(
                    "plaintext Bloom filter header at offset {} ({}-byte bitset); the footer is encrypted, so its column is not known: if it is an encrypted column's, it reveals that column's values",
                    h.offset, h.num_bytes
                )
            })
            .collect(),
        Err(e) => vec![format!("cannot scan for plaintext filter headers: {e}")],
    }
}
