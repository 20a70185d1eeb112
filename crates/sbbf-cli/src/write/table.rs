//! `sbbf add TABLE` and `sbbf resize TABLE`: the library's table write, rendered.

use super::Share;
use crate::Format;
use sbbf_lake::backfill::TableWriteSummary;
use sbbf_lake::backfill::{commit_parts, write_part, write_table, Rewrite, TableWrite};
use sbbf_lake::TableRef;

/// Runs the table write (or one worker's share of it) and prints what it did; the exit code.
pub fn run(
    cmd: &str,
    table: &sbbf_lake::Table,
    rewrite: &Rewrite,
    share: &Share,
    format: Format,
) -> u8 {
    let mut bar = crate::progress::bar("writing copies");
    let folder = folder_of(table.at());
    let work = async {
        match (&share.files_from, &share.part) {
            (Some(list), Some(out)) => {
                let files = crate::index::read_list(list).map_err(|e| {
                    sbbf_parquet::Error::from(sbbf_parquet::ReadError::Io {
                        path: list.into(),
                        source: e,
                    })
                })?;
                write_part(table, rewrite, &files, out, &mut bar).await
            }
            _ => write_table(table, rewrite, &mut bar).await,
        }
    };
    let result = sbbf_parquet::source::block_on(work);
    follow_index(cmd, folder.as_deref(), &result);
    render(cmd, result, format)
}

/// The table's folder or URL, when named so (a catalog's table has no index of ours).
fn folder_of(at: &TableRef) -> Option<String> {
    match at {
        TableRef::Path(p) => Some(p.clone()),
        TableRef::Catalog { .. } => None,
    }
}

/// After a commit: the table's index (when it has one) follows the swapped files to their
/// copies, said on stderr; an index that cannot follow is left as it is (stale entries are
/// never trusted: the copies are then read directly), with a warning.
fn follow_index(
    cmd: &str,
    folder: Option<&str>,
    result: &Result<Result<TableWrite, sbbf_parquet::Error>, sbbf_parquet::Error>,
) {
    let (Some(folder), Ok(Ok(done))) = (folder, result) else {
        return;
    };
    let followed =
        sbbf_parquet::source::block_on(sbbf_index::build::follow_table_write(folder, done));
    match followed {
        Ok(Ok(Some((r, _)))) => err!(
            "sbbf {cmd}: the table's index {} follows the commit: {} of {} file(s) kept from it \
             (copies take their originals' entries), {} read",
            r.index,
            r.files_kept,
            r.files,
            r.files_read
        ),
        Ok(Ok(None)) => {}
        Ok(Err(e)) => err!(
            "sbbf {cmd}: warning: the table's index was not updated ({e}): run `sbbf index \
             update {folder}`"
        ),
        Err(e) => err!("sbbf {cmd}: warning: the table's index was not updated ({e})"),
    }
}

/// `sbbf commit TABLE PARTS...`: the exit code.
pub fn commit(at: TableRef, parts: &[std::path::PathBuf], format: Format) -> u8 {
    let folder = folder_of(&at);
    let result = sbbf_parquet::source::block_on(async {
        let table = sbbf_lake::Table::locate(at, &Default::default()).await?;
        commit_parts(&table, parts).await
    });
    follow_index("commit", folder.as_deref(), &result);
    render("commit", result, format)
}

fn render(
    cmd: &str,
    result: Result<Result<TableWrite, sbbf_parquet::Error>, sbbf_parquet::Error>,
    format: Format,
) -> u8 {
    let done = match result {
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
        Format::Text => text(cmd, &done),
    }
    // Files that needed a copy and were replaced by another writer meanwhile: the files now
    // in their place may lack what was asked, and a script must know the job is not done.
    if done.withdrawn.is_empty() {
        0
    } else {
        err!(
            "sbbf {cmd}: {} data file(s) were left out: another commit replaced or removed them \
             while their copies were written; the files now in their place may lack what was \
             asked: run {} again",
            done.withdrawn.len(),
            match cmd {
                "commit" => "the workers' `sbbf add` or `sbbf resize`".to_string(),
                _ => format!("`sbbf {cmd}`"),
            }
        );
        1
    }
}

fn text(cmd: &str, d: &TableWrite) {
    // What each copy has: `commit` commits parts of either.
    let (filters, copies) = match cmd {
        "add" => ("filter(s)", "copies with filters"),
        "resize" => ("filter(s) resized", "copies with resized filters"),
        _ => ("filter(s) written", "their copies"),
    };
    for s in &d.swapped {
        out!(
            "  {} -> {}: {} {filters}, {} -> {} bytes",
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
    for l in &d.leftovers_removed {
        out!("  {l} removed: an unfinished copy's temporary file, left by a killed run");
    }
    let files = d.swapped.len() + d.kept.len() + d.withdrawn.len();
    // Delta numbers versions and VACUUM removes old files; Iceberg names snapshots and
    // expiring them does.
    let (version, until) = match d.format {
        sbbf_lake::Format::Delta => ("version", "the table's VACUUM"),
        sbbf_lake::Format::Iceberg => ("snapshot", "its snapshot expires"),
    };
    match d.committed_version {
        Some(v) => out!(
            "{}: {} table {version} {v} committed ({} tr{}): {} of {files} data file(s) swapped \
             for {copies}; {} bytes read, {} written; {version} {} still reads the \
             old files until {until}",
            d.table,
            d.format.name(),
            d.tries,
            if d.tries == 1 { "y" } else { "ies" },
            d.swapped.len(),
            d.bytes_read,
            d.bytes_written,
            d.read_version,
        ),
        None if d.tries == 0 && !d.swapped.is_empty() => out!(
            "{}: {} copies written for {} table {version} {}, not committed: `sbbf commit` \
             commits them with the other workers' parts",
            d.table,
            d.swapped.len(),
            d.format.name(),
            d.read_version
        ),
        None if !d.withdrawn.is_empty() => out!(
            "{}: nothing committed at {} table {version} {}: every file that needed a copy was \
             replaced or removed by another commit meanwhile",
            d.table,
            d.format.name(),
            d.read_version
        ),
        None => out!(
            "{}: nothing to do at {} table {version} {}: no data file needs a copy; nothing written",
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
