//! `sbbf add TABLE` and `sbbf resize TABLE`: the library's table write, rendered.

use crate::Format;
use sbbf_parquet::lake::backfill::{write_table, Rewrite, TableWrite};
use serde_json::json;
use std::path::Path;

/// Runs the table write and prints what it did; the exit code.
pub fn run(cmd: &str, path: &Path, rewrite: &Rewrite, format: Format) -> u8 {
    let arg = path.to_string_lossy().to_string();
    let mut bar = crate::progress::bar("writing copies");
    let done = match sbbf_parquet::source::block_on(write_table(&arg, rewrite, &mut bar)) {
        Ok(Ok(done)) => done,
        Ok(Err(e)) => {
            err!("sbbf {cmd}: {e}");
            return 2;
        }
        Err(e) => {
            err!("sbbf {cmd}: {e}");
            return 2;
        }
    };
    match format {
        Format::Json => out!("{}", json_of(cmd, &done)),
        Format::Text => text(&done),
    }
    0
}

fn json_of(cmd: &str, d: &TableWrite) -> serde_json::Value {
    json!({
        "command": cmd,
        "table": d.table,
        "format": d.format.to_string(),
        "read_version": d.read_version,
        "committed_version": d.committed_version,
        "tries": d.tries,
        "bytes_read": d.bytes_read,
        "bytes_written": d.bytes_written,
        "swapped": d.swapped.iter().map(|s| json!({
            "from": s.from,
            "to": s.to,
            "filters": s.report.filters.len(),
            "filter_bytes": s.report.filters.iter().map(|f| f.bytes_after).sum::<u64>(),
            "input_len": s.report.input_len,
            "output_len": s.report.output_len,
        })).collect::<Vec<_>>(),
        "kept": d.kept.iter().map(|k| json!({"file": k.url, "why": k.why})).collect::<Vec<_>>(),
        "withdrawn": d.withdrawn,
    })
}

fn text(d: &TableWrite) {
    for s in &d.swapped {
        out!(
            "  {} -> {}: {} filter(s), {} -> {} bytes",
            short(&s.from),
            short(&s.to),
            s.report.filters.len(),
            s.report.input_len,
            s.report.output_len
        );
    }
    for k in &d.kept {
        out!("  {} kept: {}", short(&k.url), k.why);
    }
    for w in &d.withdrawn {
        out!(
            "  {} left out: another commit removed it meanwhile",
            short(w)
        );
    }
    let files = d.swapped.len() + d.kept.len() + d.withdrawn.len();
    match d.committed_version {
        Some(v) => out!(
            "{}: {} table version {v} committed ({} tr{}): {} of {files} data file(s) swapped \
             for copies with filters; {} bytes read, {} written; version {} still reads the \
             old files until the table's VACUUM",
            d.table,
            d.format.name(),
            d.tries,
            if d.tries == 1 { "y" } else { "ies" },
            d.swapped.len(),
            d.bytes_read,
            d.bytes_written,
            d.read_version
        ),
        None => out!(
            "{}: nothing to do at {} table version {}: no data file needs a copy; nothing written",
            d.table,
            d.format.name(),
            d.read_version
        ),
    }
}

/// A file's URL as a reader wants to see it: a local path without its scheme.
fn short(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) if u.scheme() == "file" => u
            .to_file_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| url.to_string()),
        _ => url.to_string(),
    }
}
