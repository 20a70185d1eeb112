//! `sbbf add` and `sbbf resize`: write filters into existing files without touching their data.

use crate::Format;
use clap::Args;
use sbbf_lake::backfill::Rewrite;
use sbbf_lake::TableRef;
use sbbf_parquet::report::{NothingToDo, WriteSummary};
use sbbf_parquet::write::output::{self, Refusal, WritePlan};
use sbbf_parquet::write::{add_filters, resize_filters, AddOptions, WriteReport};
use std::path::{Path, PathBuf};

mod table;

/// Where the result goes: a new file, or the input itself (for a file; a table's new files
/// go in through a commit).
#[derive(Args, Debug)]
#[group(required = false, multiple = false)]
pub struct Destination {
    /// Write the result to this file (written to a temporary file beside it, then renamed).
    /// An existing file is replaced only with --force.
    #[arg(short = 'o', long = "output", value_parser = crate::store_url::location_path)]
    pub output: Option<PathBuf>,
    /// Replace the input file (atomically: an interrupted run leaves it untouched; Ctrl-C or
    /// SIGTERM also removes the unfinished `.sbbf-*.tmp` beside it, while a `kill -9` can
    /// leave one, safe to delete). A symbolic link is followed: the file it points to is
    /// replaced, keeping its mode and owner. The file is locked (advisory lock) while the run
    /// lasts: a second run on the same file fails instead of losing the first one's work.
    /// Refused for a data file of a Delta, Iceberg or Hudi table (their metadata records the
    /// file's size: write a new file with -o and commit it through the table), and, unless
    /// --force, for a read-only file or one with other hard links (they would keep the old
    /// contents).
    #[arg(long)]
    pub in_place: bool,
}

/// One worker's share of a table write (`sbbf commit` completes it).
#[derive(Args, Debug, Default)]
pub struct Share {
    /// For a table: write copies only for the data files LIST names (one per line,
    /// paths below the table as `sbbf inspect` shows them, or their URLs; `-` reads standard
    /// input), and instead of committing, record them in the part file OUT (`*.sbbfcopies`):
    /// one worker's share that `sbbf commit TABLE PARTS...` commits with the others'.
    #[arg(long, value_name = "LIST", requires = "part")]
    pub files_from: Option<String>,
    /// Where to write the part (with --files-from): a local file, written atomically.
    #[arg(long, value_name = "OUT", requires = "files_from")]
    pub part: Option<PathBuf>,
}

/// An Iceberg table of a catalog, written through the catalog.
#[derive(Args, Debug, Default)]
pub struct InCatalog {
    /// PATH is an Iceberg table NAMESPACE.TABLE of this catalog, and the new snapshot is
    /// committed through it: `sqlite:///PATH` (a SQL catalog in SQLite, as pyiceberg's
    /// SqlCatalog and Java's JdbcCatalog write it) or `http(s)://HOST/...` (a REST catalog:
    /// the snapshot is sent to its commit endpoint; a bearer token from SBBF_CATALOG_TOKEN).
    #[arg(long, value_name = "URI")]
    pub catalog: Option<String>,
    /// Which catalog of several in one SQL database (its `catalog_name`); for a REST
    /// catalog, the warehouse to ask for.
    #[arg(long, value_name = "NAME", requires = "catalog")]
    pub catalog_name: Option<String>,
}

impl InCatalog {
    /// The table PATH names, in the catalog when one is given.
    pub fn table_at(&self, path: &str) -> TableRef {
        match &self.catalog {
            Some(uri) => TableRef::Catalog {
                catalog: sbbf_lake::catalog::Catalog::new(uri, self.catalog_name.as_deref()),
                table: path.to_string(),
            },
            None => TableRef::Path(path.to_string()),
        }
    }
}

/// The library's plan for this write: the checks, the in-place rules and lock, as every
/// front end gets them.
fn plan(input: &Path, dest: &Destination, force: bool) -> Result<WritePlan, String> {
    let dest = match &dest.output {
        Some(o) => output::Destination::File {
            path: o.clone(),
            force,
        },
        None => output::Destination::InPlace { force },
    };
    WritePlan::new(input, &dest).map_err(|e| {
        let hint = match e {
            Refusal::OutputExists(_) => "; use --force to replace it",
            Refusal::ReadOnly | Refusal::HardLinks { .. } => "; --force replaces it anyway",
            Refusal::TableFile { .. } => " (-o NEW_FILE)",
            _ => "",
        };
        match e {
            Refusal::OutputExists(_) | Refusal::OutputIsDirectory(_) => format!("{e}{hint}"),
            _ => format!("{}: {e}{hint}", input.display()),
        }
    })
}

/// Add Bloom filters to a Parquet file without rewriting its data: the bytes before the
/// footer stay exactly as they are (with --replace, old filters of the chosen columns that end
/// them, as a previous add leaves them, are overwritten instead); new filters and a new footer
/// (in which only the chosen column chunks' bloom_filter_offset/bloom_filter_length differ)
/// are appended. Filters are
/// sized by each chunk's real contents: built for its value count, then folded as far as the
/// false-positive rate of the actual bits allows (powers of two, which every reader accepts).
///
/// Examples:
///   sbbf add data.parquet --column user_id -o data.bloom.parquet
///   sbbf add data.parquet -c user_id -c s.b --fpp 0.001 --in-place
///   sbbf add data.parquet -c user_id --replace --ndv 100000 -o out.parquet
///
/// Encrypted files (Parquet modular encryption), with the keys (--footer-key, --column-key,
/// --keys): new filters are built from the decrypted values (each column chunk decrypted in
/// memory, one at a time) and written as the two encrypted modules the specification asks for,
/// with the column's key (in plaintext for a column that is not encrypted); the footer is
/// encrypted (or signed) again. The footer key and the key of every chosen encrypted column
/// are needed. With --replace, add instead seals the plaintext filters of encrypted columns
/// (arrow-rs 60 writes them, revealing the column's values; `sbbf inspect` reports them): each
/// is written again as encrypted modules with its bits unchanged, and the old plaintext bytes
/// are overwritten with zeros. Rebuilding existing filters of an encrypted file is not
/// supported.
///   sbbf add enc.parquet -c secret --keys keys.json -o with-filters.parquet
///   sbbf add enc.parquet -c secret --replace --keys keys.json -o sealed.parquet
///
/// Lake tables (no -o or --in-place): each current data file that lacks the filter gets a
/// copy with it beside the original, and one new table version swaps them, through the
/// table's own commit protocol (rows, order, deletes and statistics unchanged; the old
/// version still reads the old files). Delta: a new log entry (`dataChange: false`). Iceberg
/// (format 1 or 2): a `replace` snapshot through a SQL catalog (--catalog) or a folder's
/// next vN.metadata.json; files that position deletes name are kept. A file another writer
/// replaces or removes while its copy is written is left out of the commit (its copy deleted);
/// the exit status is then 1, with a line on stderr saying to run again (the files now in
/// its place may lack the filters). Columns are checked against the table's schema first.
///   sbbf add events/ -c user_id                                   (a Delta table)
///   sbbf add --catalog sqlite:///wh/catalog.db ns.events -c user_id (an Iceberg table)
///   sbbf add events/ -c user_id --files-from share.txt --part parts/0.sbbfcopies
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct AddArgs {
    /// The Parquet file; or a Delta or Iceberg table (its folder or object-store prefix, or
    /// NAMESPACE.TABLE with --catalog).
    #[arg(value_parser = crate::store_url::location_path)]
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
    /// Rebuild filters the columns already have. Old filters at the end of the file's body
    /// (where a previous `add` put them) are overwritten, so repeated runs do not grow the
    /// file; others stay, unreferenced.
    #[arg(long)]
    pub replace: bool,
    #[command(flatten)]
    pub dest: Destination,
    /// With -o: replace the output file if it exists. With --in-place: replace a read-only
    /// file, or split a hard link.
    #[arg(long)]
    pub force: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub keys: crate::keys::KeyArgs,
    #[command(flatten)]
    pub share: Share,
    #[command(flatten)]
    pub in_catalog: InCatalog,
}

/// Shrink oversized filters (parquet-java writes 1 MiB per chunk by default) by exact folding,
/// as far as the false-positive rate their fill implies stays at or below --fpp. When the
/// filters and page indexes follow the last data page, the space is given back; otherwise the
/// folded filters are appended.
///
/// Examples:
///   sbbf resize data.parquet --fpp 0.01 -o smaller.parquet
///   sbbf resize data.parquet --fpp 0.001 --in-place
///
/// Encrypted files: with the keys (--footer-key, --column-key, --keys), the filters that can be
/// read are folded and appended (sealed again with their column's key), and the footer is
/// encrypted or signed again; the old filters stay in place.
///   sbbf resize enc.parquet --fpp 0.01 --keys keys.json -o smaller.parquet
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct ResizeArgs {
    /// The Parquet file; or a Delta or Iceberg table, as for `sbbf add`.
    #[arg(value_parser = crate::store_url::location_path)]
    pub file: PathBuf,
    /// Target false-positive rate.
    #[arg(long)]
    pub fpp: f64,
    /// Only these columns (dotted paths); repeatable. Default: all.
    #[arg(long = "column", short = 'c')]
    pub columns: Vec<String>,
    #[command(flatten)]
    pub dest: Destination,
    /// With -o: replace the output file if it exists. With --in-place: replace a read-only
    /// file, or split a hard link.
    #[arg(long)]
    pub force: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub keys: crate::keys::KeyArgs,
    #[command(flatten)]
    pub share: Share,
    #[command(flatten)]
    pub in_catalog: InCatalog,
}

/// Commit the copies workers wrote for a table (`sbbf add TABLE --files-from LIST --part
/// OUT`, or `sbbf resize` likewise) in one new table version, as `sbbf add TABLE` commits its
/// own. Every part is checked first (its format, its copies beside their originals and in
/// storage with the sizes it says), and the parts against each other and the table (the same
/// table and operation, no file in two parts): any mismatch refuses the commit with the reason
/// and commits nothing (exit 2). A file removed from the table since its part was written is
/// left out (exit status 1: run the add again for the files now in its place), and its copy
/// deleted unless an entry of the Delta log names it (the same parts committed before: an
/// older version reads it); an Iceberg table's is left to its cleanup of unnamed files. A PART that is a directory stands for every *.sbbfcopies file
/// in it.
///
/// Example (examples/spark_add_filters_table.py does the same with one part per Spark task):
///   sbbf add events/ -c user_id --files-from share1.txt --part parts/1.sbbfcopies
///   sbbf add events/ -c user_id --files-from share2.txt --part parts/2.sbbfcopies
///   sbbf commit events/ parts/ --format json
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct CommitArgs {
    /// The table (a Delta or Iceberg table's folder or object-store prefix; NAMESPACE.TABLE
    /// with --catalog).
    #[arg(value_parser = crate::store_url::location)]
    pub table: String,
    /// Part files, or directories of *.sbbfcopies files.
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
    #[command(flatten)]
    pub in_catalog: InCatalog,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// `sbbf commit TABLE PARTS...`.
pub fn run_commit(a: CommitArgs) -> u8 {
    table::commit(a.in_catalog.table_at(&a.table), &a.parts, a.format)
}

fn report(
    cmd: &str,
    input: &std::path::Path,
    target: &std::path::Path,
    r: &WriteReport,
    format: Format,
) {
    let summary = WriteSummary::new(
        cmd,
        &input.display().to_string(),
        &target.display().to_string(),
        r,
    );
    if format == Format::Json {
        out!("{}", crate::to_json(&summary));
        return;
    }
    let (before, after) = (summary.filter_bytes_before, summary.filter_bytes_after);
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

/// The Delta or Iceberg table PATH names (written through a commit: no -o, --in-place or
/// keys), found once and handed to the write; `None` for a file (which needs -o or
/// --in-place). A local path that does not exist, a folder that is no table, or a misuse is
/// said and its exit code returned.
fn table_or_file(
    cmd: &str,
    path: &Path,
    dest: &Destination,
    keys: bool,
    share: &Share,
    in_catalog: &InCatalog,
) -> Result<Option<sbbf_lake::Table>, u8> {
    let arg = path.to_string_lossy();
    if in_catalog.catalog.is_some() && (dest.output.is_some() || dest.in_place || keys) {
        err!(
            "sbbf {cmd}: {arg} is a table of the catalog: its files get filters through a \
             new snapshot, so -o, --in-place and keys do not apply"
        );
        return Err(2);
    }
    let lake = sbbf_lake::LakeOptions::default();
    let located = sbbf_lake::Table::locate(in_catalog.table_at(&arg), &lake);
    let located = match sbbf_parquet::source::block_on(located) {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            err!("sbbf {cmd}: {arg}: {e}");
            return Err(2);
        }
        Err(e) => {
            err!("sbbf {cmd}: {e}");
            return Err(2);
        }
    };
    let given = dest.output.is_some() || dest.in_place;
    match located.format() {
        Some(format) if given => {
            err!(
                "sbbf {cmd}: {arg} is a {} table: its files get filters through a new table \
                 version, so -o and --in-place do not apply (leave them out; for one data file \
                 of it, give the file with -o NEW_FILE)",
                format.name()
            );
            Err(2)
        }
        Some(format) if keys => {
            err!(
                "sbbf {cmd}: {arg} is a {} table; encrypted tables are not written yet",
                format.name()
            );
            Err(2)
        }
        Some(_) => Ok(Some(located)),
        None if !sbbf_parquet::source::object::is_remote_url(&arg) => {
            match std::fs::metadata(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    err!("sbbf {cmd}: {arg}: no such file or directory");
                    Err(2)
                }
                Ok(m) if m.is_dir() => {
                    err!(
                        "sbbf {cmd}: {arg} is a directory but not a Delta or Iceberg table \
                         (no _delta_log/, no metadata/ with Iceberg metadata files); {cmd} takes \
                         one Parquet file (with -o NEW_FILE or --in-place), the folder of a \
                         Delta or Iceberg table, or NS.TABLE with --catalog"
                    );
                    Err(2)
                }
                _ => file_args(cmd, &arg, given, share),
            }
        }
        None => file_args(cmd, &arg, given, share),
    }
}

/// For PATH a file (or a URL that is no table): what a file's write still needs.
fn file_args(
    cmd: &str,
    arg: &str,
    given: bool,
    share: &Share,
) -> Result<Option<sbbf_lake::Table>, u8> {
    if share.files_from.is_some() {
        err!("sbbf {cmd}: {arg}: --files-from and --part are for a table's workers");
        return Err(2);
    }
    if !given {
        err!("sbbf {cmd}: {arg}: say where the result goes: -o NEW_FILE or --in-place");
        return Err(2);
    }
    Ok(None)
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

/// The file a run writes, for the interrupt handler's message.
static TARGET: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// On Ctrl-C or SIGTERM: if the write is unfinished, stop it, remove its temporary output and
/// exit 130 (as a shell reports an interrupted command): the input is untouched until the
/// rename. If the output was already renamed into place, the work is done: say so and let the
/// run print its report and exit 0 (a second signal ends it at once, still with 0).
fn clean_up_on_interrupt() {
    let mut told = false;
    let _ = ctrlc::set_handler(move || {
        let stopped = sbbf_parquet::write::output::interrupt();
        for p in &stopped.removed {
            err!(
                "sbbf: interrupted; removed the unfinished {}; nothing was replaced",
                p.display()
            );
        }
        if !stopped.removed.is_empty() || stopped.finished == 0 {
            if stopped.removed.is_empty() {
                err!("sbbf: interrupted; nothing was written");
            }
            std::process::exit(130);
        }
        if told {
            std::process::exit(0);
        }
        told = true;
        let target = TARGET
            .get()
            .map(|t| format!(" {}", t.display()))
            .unwrap_or_default();
        err!("sbbf: interrupted after the write had finished: the output{target} is complete");
    });
}

pub fn run_add(a: AddArgs) -> u8 {
    clean_up_on_interrupt();
    match table_or_file(
        "add",
        &a.file,
        &a.dest,
        a.keys.any(),
        &a.share,
        &a.in_catalog,
    ) {
        Err(code) => return code,
        Ok(Some(located)) => {
            let rewrite = Rewrite::Add(AddOptions {
                columns: a.columns.clone(),
                fpp: a.fpp,
                ndv: a.ndv,
                replace: a.replace,
            });
            return table::run("add", &located, &rewrite, &a.share, a.format);
        }
        Ok(None) => {}
    }
    let plan = match plan(&a.file, &a.dest, a.force) {
        Ok(p) => p,
        Err(e) => {
            err!("sbbf add: {e}");
            return 2;
        }
    };
    let target = plan.target().to_path_buf();
    let _ = TARGET.set(target.clone());
    if a.keys.any() {
        return seal(&a, plan.input(), &target);
    }
    let opts = AddOptions {
        columns: a.columns.clone(),
        fpp: a.fpp,
        ndv: a.ndv,
        replace: a.replace,
    };
    match add_filters(
        plan.input(),
        &target,
        &opts,
        &mut crate::progress::bar("building filters"),
    ) {
        Ok(r) => {
            report("add", &a.file, &target, &r, a.format);
            0
        }
        Err(e) => {
            err!("sbbf add: {}: {e}{}", a.file.display(), flag_hint(&e));
            2
        }
    }
}

/// `add` with keys: builds new filters in an encrypted file, or (--replace) seals the
/// plaintext filters of encrypted columns.
fn seal(a: &AddArgs, input: &Path, target: &Path) -> u8 {
    let keys = match a.keys.key_set() {
        Ok(k) => k,
        Err(e) => {
            err!("sbbf add: {e}");
            return 2;
        }
    };
    let result = if a.replace {
        sbbf_parquet::write::seal_plaintext_filters(input, target, &keys, &a.columns)
    } else {
        let opts = AddOptions {
            columns: a.columns.clone(),
            fpp: a.fpp,
            ndv: a.ndv,
            replace: false,
        };
        sbbf_parquet::write::add_encrypted(
            input,
            target,
            &keys,
            &opts,
            &mut crate::progress::bar("building filters"),
        )
    };
    match result {
        Ok(r) => {
            report("add", &a.file, target, &r, a.format);
            0
        }
        Err(e) => {
            let hint = match &e {
                sbbf_parquet::Error::Build(sbbf_parquet::BuildError::HasFilters { .. }) => {
                    "; rebuilding filters of an encrypted file is not supported (--replace only seals plaintext filters of encrypted columns)"
                }
                _ => flag_hint(&e),
            };
            err!("sbbf add: {}: {e}{hint}", a.file.display());
            2
        }
    }
}

pub fn run_resize(a: ResizeArgs) -> u8 {
    clean_up_on_interrupt();
    match table_or_file(
        "resize",
        &a.file,
        &a.dest,
        a.keys.any(),
        &a.share,
        &a.in_catalog,
    ) {
        Err(code) => return code,
        Ok(Some(located)) => {
            let rewrite = Rewrite::Resize {
                fpp: a.fpp,
                columns: a.columns.clone(),
            };
            return table::run("resize", &located, &rewrite, &a.share, a.format);
        }
        Ok(None) => {}
    }
    let plan = match plan(&a.file, &a.dest, a.force) {
        Ok(p) => p,
        Err(e) => {
            err!("sbbf resize: {e}");
            return 2;
        }
    };
    let target = plan.target().to_path_buf();
    let _ = TARGET.set(target.clone());
    if a.keys.any() {
        let result = a
            .keys
            .key_set()
            .map_err(|e| e.to_string())
            .and_then(|keys| {
                sbbf_parquet::write::resize_encrypted(
                    plan.input(),
                    &target,
                    &keys,
                    a.fpp,
                    &a.columns,
                )
                .map_err(|e| format!("{}: {e}{}", a.file.display(), flag_hint(&e)))
            });
        return match result {
            Ok(r) => {
                report("resize", &a.file, &target, &r, a.format);
                0
            }
            Err(e) => {
                err!("sbbf resize: {e}");
                2
            }
        };
    }
    if nothing_to_fold(plan.input(), a.fpp, &a.columns) {
        if a.format == Format::Json {
            let report = NothingToDo::new("resize", &a.file.display().to_string());
            out!("{}", crate::to_json(&report));
        } else {
            out!(
                "{}: nothing to do: no filter can shrink while keeping its false-positive rate at or below {}; nothing written",
                a.file.display(),
                a.fpp
            );
        }
        return 0;
    }
    match resize_filters(
        plan.input(),
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
            err!("sbbf resize: {}: {e}{}", a.file.display(), flag_hint(&e));
            2
        }
    }
}

/// Whether resizing is known to change nothing: every chosen filter is healthy and none can
/// fold once within `fpp`. Anything unusual (a bad column name or --fpp, a broken filter) is
/// left to the library, which reports it.
fn nothing_to_fold(input: &Path, fpp: f64, columns: &[String]) -> bool {
    use std::io::{Read as _, Seek as _};
    if !(fpp > 0.0 && fpp < 1.0) {
        return false;
    }
    let Ok(file) = std::fs::File::open(input) else {
        return false;
    };
    let Ok(pq) = sbbf_parquet::ParquetFile::open(file) else {
        return false;
    };
    if pq.encryption().is_some() {
        // Left to the library, which refuses encrypted files.
        return false;
    }
    let mut chosen = Vec::new();
    for c in columns {
        match pq.column_index(c) {
            Ok(i) => chosen.push(pq.columns()[i].path.clone()),
            Err(_) => return false,
        }
    }
    for r in pq.inspect() {
        if !chosen.is_empty() && !chosen.contains(&r.column) {
            continue;
        }
        let Some(offset) = r.offset else { continue };
        let (Some(h), Some(n)) = (r.header_len, r.num_bytes) else {
            return false;
        };
        if !r.problems.is_empty() || n <= 0 {
            return false;
        }
        let mut bits = vec![0u8; n as usize];
        let mut reader = pq.reader();
        if reader
            .seek(std::io::SeekFrom::Start(offset as u64 + h))
            .and_then(|_| reader.read_exact(&mut bits))
            .is_err()
        {
            return false;
        }
        let Ok(mut f) = sbbf::Sbbf::from_bitset(&bits) else {
            return false;
        };
        if f.num_blocks().is_power_of_two() && !matches!(f.fold_to_target_fpp(fpp), Ok(0)) {
            return false;
        }
    }
    true
}
