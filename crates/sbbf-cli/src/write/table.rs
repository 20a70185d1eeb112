//! `sbbf add TABLE` and `sbbf resize TABLE`: the library's table write, rendered.

use crate::Format;
use sbbf_parquet::lake::backfill::{write_table, Rewrite, TableWrite};
use sbbf_parquet::report::TableWriteSummary;
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
        Format::Json => out!("{}", crate::to_json(&TableWriteSummary::new(cmd, &done))),
        Format::Text => text(&done),
    }
    0
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
