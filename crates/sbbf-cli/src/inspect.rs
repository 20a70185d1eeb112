//! `sbbf inspect FILE`

use crate::Format;
use clap::Args;
use sbbf_lake::each::inspect_each;
use sbbf_parquet::report::{ErrorLine, FileReport, InspectReport};

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
    /// A Parquet file, a directory (every *.parquet below it) or a quoted glob. Below a
    /// directory, files and folders whose names start with `_` or `.` are skipped (a job's
    /// `_temporary/` output, `.hidden` files), as Spark, Hive and pyarrow skip them; a file
    /// or glob named explicitly is read.
    #[arg(value_parser = crate::store_url::location)]
    pub file: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Only these columns (dotted paths); repeatable.
    #[arg(long = "column", short = 'c')]
    pub columns: Vec<String>,
    #[command(flatten)]
    pub keys: crate::keys::KeyArgs,
    #[command(flatten)]
    pub table: crate::lake::TableArgs,
}

pub fn run(a: InspectArgs) -> u8 {
    let at = match a.table.table_ref_or_exit("inspect", &a.file) {
        Ok(at) => at,
        Err(code) => return code,
    };
    let keys = match a.keys.key_set() {
        Ok(k) => k,
        Err(e) => {
            err!("sbbf inspect: {e}");
            return 2;
        }
    };
    let mut problems = 0;
    let each = |f: FileReport<InspectReport>| match f.report {
        Ok(r) => problems += print(&f.file, &r, a.format),
        Err(e) => {
            err!("sbbf inspect: {}: {e}", f.file);
            for w in &f.warnings {
                err!("sbbf inspect: {}: warning: {w}", f.file);
            }
            // The error object stays {file, error}: the warnings are on stderr only.
            if a.format == Format::Json {
                out!(
                    "{}",
                    crate::to_json(&ErrorLine {
                        error: e.to_string(),
                        file: &f.file
                    })
                );
            }
        }
    };
    let (tally, table) = match inspect_each(at, &a.table.options(), &keys, &a.columns, each) {
        Ok(t) => t,
        Err(e) => {
            err!("sbbf inspect: {}", crate::path_error(&a.file, &e));
            return 2;
        }
    };
    // Text: said on stderr, every time (stdout holds the reports); JSON: a last line.
    crate::lake::say_version("sbbf inspect", table.as_ref(), a.format, true);
    if let Some(e) = tally.no_file_has_column() {
        err!("sbbf inspect: {e}");
    }
    if tally.failed > 0 || tally.column_in_no_file.is_some() {
        2
    } else if problems > 0 {
        1
    } else {
        0
    }
}

/// Prints one file's report; returns how many problems it found.
fn print(shown: &str, r: &InspectReport, format: Format) -> usize {
    if format == Format::Json {
        out!("{}", crate::to_json(r));
        return r.problems;
    }
    out!(
        "{shown}: {} bytes, {} row group(s), written by {}",
        r.file_size,
        r.num_row_groups,
        r.created_by.as_deref().unwrap_or("(unknown writer)")
    );
    if let Some(e) = &r.encryption {
        out!(
            "  encrypted: {}, {} footer{}",
            e.algorithm,
            e.footer,
            if e.footer == "plaintext" && !e.footer_verified {
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
    for c in &r.chunks {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_string());
        match c.offset {
            // Its encryption hides whether it has a filter.
            None if c.has_filter.is_none() => {
                out!("  {:>3}  {:<24} unknown (encrypted)", c.row_group, c.column)
            }
            None => out!("  {:>3}  {:<24} no Bloom filter", c.row_group, c.column),
            Some(o) => out!(
                "  {:>3}  {:<24} {:>10} {:>8} {:>10} {:>9} {:>7} {:>10}",
                c.row_group,
                c.column,
                o,
                c.length
                    .map(|l| l.to_string())
                    .unwrap_or_else(|| "absent".into()),
                opt(c.bitset_bytes.map(|n| n.to_string())),
                opt(c.bits_set.map(|n| n.to_string())),
                opt(c.fill_ratio.map(|f| format!("{:.1}%", f * 100.0))),
                opt(c.estimated_fpp.map(|f| format!("{f:.2e}"))),
            ),
        }
        if let Some(e) = &c.encryption {
            out!("       encrypted with the {e}");
        }
        for p in &c.problems {
            out!("       problem: {p}");
        }
    }
    for w in &r.warnings {
        out!("  warning: {w}");
    }
    for c in &r.columns_not_in_file {
        out!("  column `{c}` not in this file");
    }
    out!("  {} problem(s) found", r.problems);
    r.problems
}
