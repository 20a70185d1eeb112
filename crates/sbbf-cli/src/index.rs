//! `sbbf index build|update|inspect|merge PATH`.

use crate::store_url::check_http_endpoint;
use crate::Format;
use clap::{Args, Subcommand};
use sbbf_index::build::{BuildOptions, BuildReport};
use sbbf_index::report::{BuildLine, Coverage, MergeLine};
use sbbf_index::PartMismatch;
use sbbf_index::Root;
use sbbf_parquet::source::DEFAULT_CONCURRENCY;

/// Build, update or inspect a table's index: the Bloom filters its files already carry,
/// gathered under PATH/_sbbf_index/ so that `sbbf probe PATH COLUMN VALUE` answers the files
/// the index covers in a few reads instead of reading every file: a file whose entries are its
/// own filters is answered from the index, "maybe" included, and not read; a "maybe" from a
/// folded entry (--fpp) is checked against the file's own filter.
///
/// The index reads footers and filters only, never data pages (with --build-missing: also
/// the pages of the chunks it builds filters for). Entries keep each row group's filter at
/// its size (the index answers exactly as the files do) unless --fpp lets them be folded to a
/// smaller size whose estimated false-positive rate stays at or below it. Files added,
/// changed or removed after the build are never answered from the index: they are probed
/// directly (`sbbf index update` brings it up to date, reading only those files). A local
/// file counts as changed when its size, inode, modification or change time differ (a file
/// restored with its old time by `cp -p`, `rsync -a` or `tar x` has a new change time); an
/// object when its size or ETag differ. One writer at a time: build, update and merge of a
/// local table take a lock and refuse to run beside another (exit 2). A `-c` column that no
/// file has, or that no file has a filter for, is refused and the old index kept.
/// `sbbf probe` uses the index when its PATH is the table root itself: the directory, or the
/// object-store prefix ending in / (`--no-index` reads every file). The table is every
/// *.parquet file below its root except those under names that start with `_` or `.`
/// (a job's `_temporary/` output, `.hidden` files, the index's own folder), as Spark, Hive
/// and pyarrow read a folder, and as `sbbf probe` and `sbbf query` read it.
///
/// Examples:
///   sbbf index build data/
///   sbbf index build s3://bucket/events/ -c user_id --fpp 0.01
///   sbbf index build data/ -c user_id --build-missing
///   sbbf index build s3://bucket/events/ -c user_id --fpp 0.0001 --tighten
///   sbbf index update data/
///   sbbf index inspect data/ --format json
///
/// On many machines (each worker indexes some of the files, then one step merges):
///   sbbf index build data/ --files-from task1.txt --part task1.sbbfpart
///   sbbf index build data/ --files-from task2.txt --part task2.sbbfpart
///   sbbf index merge data/ task1.sbbfpart task2.sbbfpart
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct IndexArgs {
    #[command(subcommand)]
    command: IndexCommand,
}

#[derive(Subcommand, Debug)]
enum IndexCommand {
    /// Build the index of a table root (a directory, or an object-store prefix ending in /).
    Build(BuildArgs),
    /// Bring the index up to date: read new and changed files only, drop gone ones.
    Update(UpdateArgs),
    /// Show what the index covers (covered, stale, missing files), and per column and group
    /// the entries, sizes and false-positive rates.
    Inspect(InspectArgs),
    /// Merge parts (built with `sbbf index build --part`) into the index of PATH.
    ///
    /// Writes PATH/_sbbf_index/index.sbbfi from the parts, reading no data file: PATH is listed
    /// once, and each part's entries are kept for the files still as the part saw them.
    /// Every part is checked first (checksums, format version), and the parts against each other:
    /// the same PATH, -c and --fpp, and no file given to two parts; any mismatch refuses the merge
    /// with the reason and writes nothing (exit 2). Files changed since their part was built, and
    /// files no part was given, are left out: probes read them directly, `sbbf index update`
    /// indexes them.
    ///
    /// A PART that is a directory stands for every *.sbbfpart file in it.
    ///
    /// Example (examples/spark_build_index.py does the same with one part per Spark task):
    ///   sbbf index build data/ --files-from share1.txt --part parts/1.sbbfpart
    ///   sbbf index build data/ --files-from share2.txt --part parts/2.sbbfpart
    ///   sbbf index merge data/ parts/ --format json
    #[command(verbatim_doc_comment)]
    Merge(MergeArgs),
}

/// A table of a catalog, whose index is at its folder.
#[derive(Args, Debug, Default)]
struct InCatalog {
    /// PATH is an Iceberg table NAMESPACE.TABLE of this catalog (`sqlite:///PATH`, or
    /// `http(s)://HOST/...` for a REST catalog): the index is built from the snapshot the
    /// catalog names, at the table's folder, where probes and queries of the table (through
    /// the catalog or by its folder) find it.
    #[arg(long, value_name = "URI")]
    catalog: Option<String>,
    /// Which catalog of several in one SQL database (its `catalog_name`); for a REST
    /// catalog, the warehouse to ask for.
    #[arg(long, value_name = "NAME", requires = "catalog")]
    catalog_name: Option<String>,
}

#[derive(Args, Debug)]
struct BuildArgs {
    /// A directory or an object-store prefix (s3://bucket/prefix/); with --catalog, a table
    /// NAMESPACE.TABLE.
    #[arg(value_parser = crate::store_url::location)]
    path: String,
    #[command(flatten)]
    in_catalog: InCatalog,
    /// Columns to index (dotted paths), repeatable; by default every column with a filter.
    #[arg(long = "column", short = 'c')]
    columns: Vec<String>,
    /// Fold filters to smaller shared sizes while their estimated false-positive rate stays at
    /// or below P (default: keep every filter's own size).
    #[arg(long, value_name = "P")]
    fpp: Option<f64>,
    /// Output format: `json` prints the report as one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Files read at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    concurrency: u64,
    /// Index only the files LIST names (one per line, relative to PATH as
    /// `sbbf index inspect` shows them; `-` reads standard input) and write a part to OUT
    /// instead of the index: one worker's share of a build that `sbbf index merge` completes.
    /// The worker lists PATH once (the sizes, inodes and times or ETags a probe compares are
    /// the listing's) and reads only the files named.
    #[arg(long, value_name = "LIST", requires = "part")]
    files_from: Option<String>,
    /// Build the filters row groups lack for the -c columns from their data (as `sbbf add`
    /// builds them, at --fpp or 0.01) and index them, instead of leaving those row groups to
    /// direct probes. Only those column chunks' pages are read; files that have the filters
    /// are read no further than their footers and filters. The files are not changed.
    #[arg(long)]
    build_missing: bool,
    /// With -c and --fpp P: a row group whose filter gives a false-positive rate above P (a
    /// writer's default of 1% or 5%) gets its entry built from its column chunk's data at P
    /// instead, so that a lookup over many files reads almost none it does not need (at 1%
    /// over 10,000 files, a value is "maybe" in about 100 files; at 0.0001, in about one).
    /// Only those chunks' pages are read, once, at build time; the files are not changed. A
    /// chunk whose filter cannot be built again keeps its file's filter as its entry.
    #[arg(long, requires = "fpp")]
    tighten: bool,
    /// Where to write the part (with --files-from): a local file, written atomically. Give
    /// every worker the same PATH, -c and --fpp; `merge` refuses parts that differ.
    #[arg(long, value_name = "OUT", requires = "files_from")]
    part: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
struct MergeArgs {
    /// The table root the parts were built for (a directory or an object-store prefix).
    #[arg(value_parser = crate::store_url::location)]
    path: String,
    /// Part files, or directories of *.sbbfpart files.
    #[arg(required = true)]
    parts: Vec<std::path::PathBuf>,
    /// Output format: `json` prints the report as one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Args, Debug)]
struct UpdateArgs {
    /// A directory or an object-store prefix with an index; with --catalog, a table
    /// NAMESPACE.TABLE.
    #[arg(value_parser = crate::store_url::location)]
    path: String,
    #[command(flatten)]
    in_catalog: InCatalog,
    /// As `sbbf index build --build-missing`, for the index's -c columns: files whose row
    /// groups still lack an entry are read again for those filters.
    #[arg(long)]
    build_missing: bool,
    /// As `sbbf index build --tighten`, for the files the update reads (new and changed
    /// ones), at the index's own --fpp.
    #[arg(long)]
    tighten: bool,
    /// Output format: `json` prints the report as one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Files read at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    concurrency: u64,
}

#[derive(Args, Debug)]
struct InspectArgs {
    /// A directory or an object-store prefix with an index.
    #[arg(value_parser = crate::store_url::location)]
    path: String,
    /// Output format: `json` prints the report as one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Runs `sbbf index ...`: 0 on success, 2 on failure (inspect: 2 when there is no usable
/// index).
pub fn run(a: IndexArgs) -> u8 {
    let work = sbbf_parquet::source::block_on(async {
        match a.command {
            IndexCommand::Build(b) => build(b).await,
            IndexCommand::Update(u) => update(u).await,
            IndexCommand::Inspect(i) => inspect(i).await,
            IndexCommand::Merge(m) => merge(m).await,
        }
    });
    work.unwrap_or_else(|e| {
        err!("sbbf index: {e}");
        2
    })
}

fn open_root(cmd: &str, path: &str) -> Result<Root, u8> {
    if let Err(e) = check_http_endpoint(path) {
        err!("sbbf index {cmd}: {path}: {e}");
        return Err(2);
    }
    match Root::open_table(path) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => {
            err!(
                "sbbf index {cmd}: {}",
                sbbf_index::Error::NotATable(path.to_string())
            );
            Err(2)
        }
        Err(e) => {
            err!("sbbf index {cmd}: {path}: {e}");
            Err(2)
        }
    }
}

/// The root of PATH, or with --catalog of the table the catalog names (its snapshot read
/// once, from the metadata file the catalog names).
async fn open_root_in(cmd: &str, path: &str, in_catalog: &InCatalog) -> Result<Root, u8> {
    let Some(uri) = &in_catalog.catalog else {
        return open_root(cmd, path);
    };
    let at = sbbf_lake::TableRef::Catalog {
        catalog: sbbf_lake::catalog::Catalog::new(uri, in_catalog.catalog_name.as_deref()),
        table: path.to_string(),
    };
    let table = sbbf_lake::Table::open(at, &Default::default())
        .await
        .map_err(|e| {
            err!("sbbf index {cmd}: {path}: {e}");
            2
        })?;
    match Root::of_table(&table) {
        Ok(Some(root)) => Ok(root),
        Ok(None) => open_root(cmd, table.location()),
        Err(e) => {
            err!("sbbf index {cmd}: {path}: {e}");
            Err(2)
        }
    }
}

async fn build(a: BuildArgs) -> u8 {
    let root = match open_root_in("build", &a.path, &a.in_catalog).await {
        Ok(r) => r,
        Err(c) => return c,
    };
    let options = BuildOptions {
        columns: a.columns.clone(),
        fpp: a.fpp,
        concurrency: a.concurrency as usize,
        build_missing: a.build_missing,
        tighten: a.tighten,
        progress: Some(sbbf_index::build::Progress(crate::progress::shared_bar(
            "indexing files",
        ))),
    };
    let started = std::time::Instant::now();
    let built = match (&a.files_from, &a.part) {
        (Some(list), Some(out)) => {
            let files = match read_list(list) {
                Ok(f) => f,
                Err(e) => {
                    err!("sbbf index build: --files-from {list}: {e}");
                    return 2;
                }
            };
            sbbf_index::part::build_part(&root, &files, &options, out).await
        }
        _ => sbbf_index::build::build(&root, &options).await,
    };
    match built {
        Ok(r) => {
            let what = if a.part.is_some() {
                "built the part"
            } else {
                "built"
            };
            print_build(what, &r, a.format, started);
            0
        }
        Err(e) => {
            let hint = match &e {
                sbbf_index::Error::NoFilters { .. } => {
                    " (`--build-missing` indexes filters built from the data without changing the files; `sbbf add` adds them to the files)"
                }
                sbbf_index::Error::UnknownColumn { .. } => " (`sbbf inspect` lists the columns with filters)",
                _ => "",
            };
            err!("sbbf index build: {}: {}{hint}", a.path, error_text(&e));
            2
        }
    }
}

/// What `sbbf index` says of a build, update or merge error: the library's text, except for
/// a bad option or parts built with other options, which are said in the command's own flags
/// (`--fpp`, `--build-missing`, `-c`).
fn error_text(e: &sbbf_index::Error) -> String {
    match e {
        sbbf_index::Error::FppOutOfRange(p) => {
            format!("--fpp {p}: a false-positive probability is between 0 and 1")
        }
        sbbf_index::Error::BuildMissingWithoutColumns => "--build-missing needs the columns to build filters for (-c COLUMN; an update takes the index's own -c)".to_string(),
        sbbf_index::Error::TightenWithout => "--tighten needs the columns and the target rate (-c COLUMN --fpp P; an update takes the index's own, so its index must have been built with them)".to_string(),
        sbbf_index::Error::PartsDiffer {
            first,
            other,
            mismatch: PartMismatch::Columns(a, b),
        } => {
            let flags = |c: &Option<Vec<String>>| match c {
                Some(c) => format!("-c {}", c.join(" -c ")),
                None => "every column with filters".to_string(),
            };
            format!("parts refused: {first} indexes {}, {other} {}", flags(a), flags(b))
        }
        sbbf_index::Error::PartsDiffer {
            first,
            other,
            mismatch: PartMismatch::Fpp(a, b),
        } => {
            let flag = |p: &Option<f64>| p.map_or("no --fpp".to_string(), |p| format!("--fpp {p}"));
            format!("parts refused: {first} was built with {}, {other} with {}", flag(a), flag(b))
        }
        e => e.to_string(),
    }
}

/// The lines of LIST (`-`: standard input), empty ones skipped.
pub(crate) fn read_list(list: &str) -> std::io::Result<Vec<String>> {
    let text = if list == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        std::fs::read_to_string(list)?
    };
    // Names are taken as they are (a name may end in a space); only a CR of CRLF lines goes.
    Ok(text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

async fn merge(a: MergeArgs) -> u8 {
    let root = match open_root("merge", &a.path) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let mut parts = Vec::new();
    for p in &a.parts {
        if p.is_dir() {
            let listed = std::fs::read_dir(p).and_then(|d| {
                d.map(|e| e.map(|e| e.path()))
                    .collect::<std::io::Result<Vec<_>>>()
            });
            match listed {
                Ok(mut v) => {
                    v.retain(|f| f.extension().is_some_and(|x| x == "sbbfpart"));
                    v.sort();
                    if v.is_empty() {
                        err!(
                            "sbbf index merge: {}: no *.sbbfpart file in it",
                            p.display()
                        );
                        return 2;
                    }
                    parts.extend(v);
                }
                Err(e) => {
                    err!("sbbf index merge: {}: {e}", p.display());
                    return 2;
                }
            }
        } else {
            parts.push(p.clone());
        }
    }
    let started = std::time::Instant::now();
    match sbbf_index::part::merge(&root, &parts).await {
        Ok(r) => {
            if a.format == Format::Json {
                let line = MergeLine {
                    report: &r,
                    elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
                };
                out!("{}", crate::to_json(&line));
                return 0;
            }
            out!(
                "merged {} part(s) ({} byte(s)) into {}: {} file(s) listed, {} covered, {} changed since their part, {} in no part, {} not covered, {} gone; {} byte(s) of index in {} ms",
                r.parts,
                r.part_bytes,
                r.index,
                r.files_listed,
                r.files_covered,
                r.files_stale,
                r.files_missing,
                r.files_not_covered,
                r.files_gone,
                r.index_bytes,
                started.elapsed().as_millis()
            );
            print_columns(&r.columns);
            0
        }
        Err(e) => {
            err!("sbbf index merge: {}: {}", a.path, error_text(&e));
            2
        }
    }
}

async fn update(a: UpdateArgs) -> u8 {
    let root = match open_root_in("update", &a.path, &a.in_catalog).await {
        Ok(r) => r,
        Err(c) => return c,
    };
    let started = std::time::Instant::now();
    let options = sbbf_index::build::UpdateOptions {
        concurrency: a.concurrency as usize,
        build_missing: a.build_missing,
        tighten: a.tighten,
        progress: Some(sbbf_index::build::Progress(crate::progress::shared_bar(
            "reading new and changed files",
        ))),
        swapped: Vec::new(),
    };
    match sbbf_index::build::update_with(&root, &options).await {
        Ok((r, rebuilt)) => {
            if let Some(why) = rebuilt {
                err!("sbbf index update: warning: the old index was unusable ({why}); rebuilt it from every file");
            }
            print_build("updated", &r, a.format, started);
            0
        }
        Err(e) => {
            err!("sbbf index update: {}: {}", a.path, error_text(&e));
            2
        }
    }
}

fn print_build(what: &str, r: &BuildReport, format: Format, started: std::time::Instant) {
    for (f, e) in &r.failed {
        err!("sbbf index: {f}: not indexed (it is probed directly): {e}");
    }
    for (f, e) in &r.build_failed {
        err!("sbbf index: {f}: no filter built (probed directly): {e}");
    }
    if format == Format::Json {
        let line = BuildLine {
            report: r,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        };
        out!("{}", crate::to_json(&line));
        return;
    }
    out!(
        "{what} {}: {} file(s) listed, {} read, {} kept, {} gone, {} not readable; {} byte(s) of index in {} ms",
        r.index,
        r.files,
        r.files_read,
        r.files_kept,
        r.files_gone,
        r.failed.len(),
        r.index_bytes,
        started.elapsed().as_millis()
    );
    if let Some(v) = r.table_version {
        out!("  covers the table's files at version {v} (its snapshot, not its folder)");
    }
    if r.racy > 0 {
        out!(
            "  {} file(s) changed less than 2 s before the build are not covered (run `sbbf index update` later)",
            r.racy
        );
    }
    out!(
        "  reads of the table's files: {} request(s), {} byte(s)",
        r.requests,
        r.bytes_read
    );
    if r.filters_built > 0 || !r.build_failed.is_empty() {
        out!(
            "  filters built from data: {} ({} in place of looser ones), {} request(s), {} byte(s) of pages; {} could not be built",
            r.filters_built,
            r.filters_tightened,
            r.data_requests,
            r.data_bytes,
            r.build_failed.len()
        );
    }
    print_columns(&r.columns);
}

fn print_columns(columns: &[sbbf_index::build::ColumnReport]) {
    for c in columns {
        out!(
            "  column `{}`: {} entr(ies), {} folded, {} group(s)",
            c.column,
            c.entries,
            c.folded,
            c.groups.len()
        );
        for g in &c.groups {
            out!(
                "    {} byte(s) per filter: {} entr(ies), {} byte(s), FPP at most {:.3e}",
                g.blocks as u64 * 32,
                g.entries,
                g.bytes,
                g.max_fpp
            );
        }
    }
}

async fn inspect(a: InspectArgs) -> u8 {
    let root = match open_root("inspect", &a.path) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let (listing, loaded) = futures::future::join(root.list(), root.load_whole()).await;
    let listing = match listing {
        Ok(l) => l,
        Err(e) => {
            err!("sbbf index inspect: {}: {e}", a.path);
            return 2;
        }
    };
    let (loaded, _) = match loaded {
        Ok(Some(l)) => l,
        Ok(None) => {
            err!("sbbf index inspect: no index at {}", root.index_location());
            return 2;
        }
        Err(e) => {
            err!(
                "sbbf index inspect: {}: unusable: {e}",
                root.index_location()
            );
            return 2;
        }
    };
    let c = Coverage::of(root.index_location(), &loaded, &listing);
    if a.format == Format::Json {
        out!("{}", crate::to_json(&c));
        return 0;
    }
    out!(
        "{}: {} byte(s), {} file(s) indexed{}{}",
        c.index,
        c.bytes,
        c.files_indexed,
        c.target_fpp
            .map(|p| format!(", folded to FPP {p}"))
            .unwrap_or_default(),
        c.table_version
            .map(|v| format!(", built from table version {v}"))
            .unwrap_or_default()
    );
    out!(
        "  coverage: {} covered, {} stale (changed since the build), {} missing (new), {} gone, {} not covered (unreadable at the build, or changed just before it: probed directly)",
        c.covered,
        c.stale.len(),
        c.missing.len(),
        c.gone.len(),
        c.unreadable
    );
    for s in &c.stale {
        out!("  stale: {s}");
    }
    for m in &c.missing {
        out!("  missing: {m}");
    }
    for g in &c.gone {
        out!("  gone: {g}");
    }
    for col in &c.columns {
        out!(
            "  column `{}`: {} entr(ies) in {} group(s), in {} file(s)",
            col.column,
            col.entries,
            col.groups.len(),
            col.files_with_column
        );
        for g in &col.groups {
            out!(
                "    {} byte(s) per filter: {} entr(ies) ({} folded), {} byte(s), FPP at most {:.3e}",
                g.filter_bytes,
                g.entries,
                g.folded,
                g.bytes,
                g.max_fpp
            );
        }
    }
    0
}
