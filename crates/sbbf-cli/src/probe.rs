//! `sbbf probe FILE COLUMN VALUE...`

use crate::Format;
use clap::Args;
use sbbf_index::each::ProbeEach;
use sbbf_index::probe::IndexStats;
use sbbf_index::report::{IndexStatsLine, ProbeStatsLine};
use sbbf_parquet::crypto::KeySet;
use sbbf_parquet::format::column::ColumnType;
use sbbf_parquet::report::{Counted, ErrorLine, ProbeLine, ProbeTally};
use sbbf_parquet::source::object::FileProbe;
use sbbf_parquet::source::{SourceOptions, DEFAULT_CONCURRENCY};
use sbbf_parquet::values::text::{encode_text, EncodeOptions, InputMode};
use sbbf_parquet::{Answer, FilterState, IoStats, RowGroupAnswer};
use sbbf_parquet::{Encoded, MaybeWhy};

/// Ask which row groups may hold a value, reading only the footer and the filter bytes needed.
///
/// Each value is read by the column's type: integers, DATE as 2024-01-31, DECIMAL(9,2) as 12.34,
/// TIMESTAMP as 2024-01-31T12:00:00.123456Z (Z only for UTC-adjusted columns), TIME as
/// 23:59:59.999, UUID as f81d4fae-7dec-11d0-a765-00a0c91e6bf6, binary as 0x00ff, strings as they
/// are (exact bytes: no trimming or case folding). Negative numbers (-5, -0.0, -12.5, -1e5) are
/// values, not options; any other value that starts with '-' (-inf, -1e-5, -abc) goes after
/// `--`, which ends the options: sbbf probe --format json -- data.parquet temperature -inf.
///
/// Answers per row group: "maybe" (may hold the value), "absent" (definitely does not: skip it),
/// "unknown" (no usable filter: cannot skip). For floats the question is SQL equality: 0.0 also
/// matches -0.0 and NaN is never ruled out, unless --exact-bits. Text output gives one line per
/// value (`42`: maybe in row group(s) 9, 37; absent in 62), --row-groups one per row group and
/// value, and totals follow when several files were probed. Values that are empty, have spaces
/// at either end or hold control characters are shown quoted and escaped ("", " x", "a\tb").
/// With --format json, one object per file; a file that cannot be probed is
/// {"file": ..., "error": ...} and the run goes on. A table's column that its files name
/// otherwise (Delta column mapping, an Iceberg column renamed since) is "column" by the
/// table's name and "column_in_file" by the file's. Over several files, a bar of the files done
/// shows on stderr when it is a terminal.
///
/// Columns are named by their dotted path; a `.` inside a field name is written `\.` (a column
/// named "a.b" is `a\.b`, field b of a struct a is `a.b`). In a directory or glob, a file
/// without the column is reported as "column not in this file" (no row group of it can hold
/// the value; JSON: no row groups, types null). A Delta table's partition column, which its
/// files do not hold, is answered from each file's partition value in the table's log: every
/// row group "maybe" where it equals the value, "absent" elsewhere (JSON: "filter":
/// "partition", the value as "reason"). A table's files are printed in the order of their
/// names. A `file:///PATH` URL is PATH.
///
/// Exit status: 0 when some value may be present somewhere, 1 when every value is definitely
/// absent everywhere, 2 when some file could not be probed (or no file has the column). A
/// value that does not fit the column's type (sbbf probe DIR int_col abc) is an error said
/// once, status 2, however many files have that column.
///
/// Examples:
///   sbbf probe data.parquet user_id 42 43
///   sbbf probe data/ event_date 2024-01-31 --format json
///   sbbf probe 'logs/*.parquet' s.b hello
///   sbbf probe -l data/ user_id 42                           (only the files that may hold 42)
///   sbbf probe s3://bucket/events/ user_id 42
///   sbbf probe --exact-bits -- data.parquet temperature -0.0 -inf
///   sbbf probe data.parquet user_id --values-from ids.txt     (one value per line; - is stdin)
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct ProbeArgs {
    /// A Parquet file, a directory (every *.parquet below it), a quoted glob, or an
    /// object-store URL: s3://bucket/prefix/ (every *.parquet below it) or s3://bucket/f.parquet;
    /// also gs://, az://, http(s)://. Credentials and endpoint come from the AWS_*, GOOGLE_* and
    /// AZURE_* environment variables (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, AWS_REGION, ...); an
    /// http:// endpoint (a local S3 server) also needs AWS_ALLOW_HTTP=true. An http(s):// URL
    /// names one file (one ending in / is listed with WebDAV). Below a directory or prefix,
    /// files and folders whose names start with `_` or `.` are skipped (a job's `_temporary/`
    /// output, `.hidden` files), as Spark, Hive and pyarrow skip them; a file or glob named
    /// explicitly is read.
    #[arg(value_parser = crate::store_url::location)]
    pub file: String,
    /// Leaf column by dotted path, e.g. `id`, `s.a`, `tags.list.element`; `a\.b` for a column
    /// whose name contains a dot.
    pub column: String,
    /// Values to probe.
    #[arg(
        required_unless_present = "values_from",
        allow_negative_numbers = true,
        num_args = 1..
    )]
    pub values: Vec<String>,
    /// Also probe the values in this file, one per line (`-` reads standard input). Lines are
    /// taken exactly, without trimming; only the line break ("\n" or "\r\n") is removed, so an
    /// empty line is the empty string.
    #[arg(long, value_name = "FILE")]
    pub values_from: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Probe the exact float bits given (no 0.0/-0.0 merging; NaN probes its bit pattern).
    #[arg(long)]
    pub exact_bits: bool,
    /// Read values as the stored INT32/INT64 integer, ignoring the logical type.
    #[arg(long, conflicts_with_all = ["hex", "string"])]
    pub raw_int: bool,
    /// Read values as hex of the exact bytes that are hashed (PLAIN encoding).
    #[arg(long, conflicts_with = "string")]
    pub hex: bool,
    /// Read values as the UTF-8 bytes of the text (binary columns), even if they start with 0x.
    #[arg(long)]
    pub string: bool,
    /// Text output: one line per row group and value (the default is one line per value,
    /// naming the row groups that may hold it).
    #[arg(long)]
    pub row_groups: bool,
    /// Print only the names of the files that may hold a value (maybe or unknown in some row
    /// group), one per line, as `rg -l` does; nothing else goes to stdout. A file that could
    /// not be read may hold one too: it is listed as `PATH<tab>(unreadable: REASON)`, and the
    /// exit status is 2. Otherwise 0 when some file is listed, 1 when none is.
    #[arg(
        short = 'l',
        long,
        conflicts_with_all = ["format", "row_groups"]
    )]
    pub files_with_matches: bool,
    /// Report the reads each file took (footer included): requests, bytes and waves
    /// (sequential round trips, what an object store makes you wait for). JSON: a `stats`
    /// object in each file's line; text: totals and the wall time at the end.
    #[arg(long)]
    pub stats: bool,
    /// Files probed at once (local files on every core), and on object stores the most
    /// requests in flight across all files. Each file's reads of one wave go out together;
    /// the output is the same for every N.
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_CONCURRENCY as u64,
        value_parser = clap::value_parser!(u64).range(1..=1024)
    )]
    pub concurrency: u64,
    /// Probe every file, ignoring the table's index (PATH/_sbbf_index/, see `sbbf index`).
    /// With an index, the files it covers are reported from it without being read (the same
    /// lines as a direct probe); --stats then adds the index's figures.
    #[arg(long)]
    pub no_index: bool,
    #[command(flatten)]
    pub keys: crate::keys::KeyArgs,
    #[command(flatten)]
    pub table: crate::lake::TableArgs,
}

pub fn run(mut a: ProbeArgs) -> u8 {
    if let Some(from) = &a.values_from {
        match read_values(from) {
            Ok(v) => a.values.extend(v),
            Err(e) => {
                err!("sbbf probe: --values-from {}: {e}", from.display());
                return 2;
            }
        }
        if a.values.is_empty() {
            err!("sbbf probe: --values-from {}: no values", from.display());
            return 2;
        }
    }
    let opts = EncodeOptions {
        exact_bits: a.exact_bits,
        input: if a.raw_int {
            InputMode::RawInt
        } else if a.hex {
            InputMode::Hex
        } else if a.string {
            InputMode::Utf8
        } else {
            InputMode::Typed
        },
    };
    let keys = match a.keys.key_set() {
        Ok(k) => k,
        Err(e) => {
            err!("sbbf probe: {e}");
            return 2;
        }
    };
    let work = sbbf_parquet::source::block_on(probe_source(&a, opts, keys));
    work.unwrap_or_else(|e| {
        err!("sbbf probe: {e}");
        2
    })
}

/// Local files, object stores and indexed tables alike: the library's one table-level loop
/// ([`ProbeEach`]) and tally ([`ProbeTally`]); this only renders.
async fn probe_source(a: &ProbeArgs, opts: EncodeOptions, keys: KeySet) -> u8 {
    let at = match a.table.table_ref_or_exit("probe", &a.file) {
        Ok(at) => at,
        Err(code) => return code,
    };
    let arg = a.file.as_str();
    let options = sbbf_lake::TableOptions {
        source: SourceOptions {
            concurrency: a.concurrency as usize,
            keys,
            policy: None,
        },
        lake: a.table.options(),
    };
    let values = std::sync::Arc::new(a.values.clone());
    let encode = move |ty: &ColumnType| {
        values
            .iter()
            .map(|v| encode_text(ty, v, opts).map_err(sbbf_parquet::Error::from))
            .collect::<Result<Vec<_>, _>>()
    };
    let started = std::time::Instant::now();
    let probe = match ProbeEach::open(at, &a.column, encode, options, !a.no_index).await {
        Ok(p) => p,
        Err(e) => {
            err!("sbbf probe: {}", crate::path_error(arg, &e));
            return 2;
        }
    };
    if let Some(w) = probe.warning() {
        err!("sbbf probe: warning: {w}");
    }
    crate::lake::say_version("sbbf probe", probe.table(), a.format, a.stats);
    if let (Some(why), true, Format::Text) = (probe.log_note(), a.stats, a.format) {
        err!("sbbf probe: read the snapshot, not the commits since the index's version: {why}");
    }
    let mut outcome = Outcome::new(a, probe.is_many());
    outcome.show_progress(probe.len());
    let run = probe.run(|p| {
        if let Ok(f) = &p.result {
            outcome.note_other_readings(&a.column, &f.column.path, &f.other_readings);
            report(&p.file, &f.column, &f.encoded, &f.answers, f.io, a);
        }
        outcome.add(&p.file, &p.result, a);
    });
    let summary = match run.await {
        Ok(s) => s,
        Err(e) => {
            err!("sbbf probe: {e}");
            return 2;
        }
    };
    let code = outcome.finish(a);
    if let (true, Some(stats)) = (a.stats, &summary.index) {
        index_stats(a, stats, &summary.direct, started);
    }
    code
}

/// The lines of `path` (`-`: standard input) as values, line breaks removed, nothing trimmed.
fn read_values(path: &std::path::Path) -> std::io::Result<Vec<String>> {
    use std::io::Read;
    let mut text = String::new();
    if path.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text)?;
    } else {
        std::fs::File::open(path)?.read_to_string(&mut text)?;
    }
    // `lines` removes "\n" or "\r\n" and nothing else.
    Ok(text.lines().map(str::to_string).collect())
}

/// The library's tally of the files probed so far, and what rendering it needs beside.
pub(crate) struct Outcome {
    tally: ProbeTally,
    noted_readings: bool,
    started: std::time::Instant,
    /// Files done, over several files ([`Outcome::show_progress`]).
    progress: Option<crate::progress::Counter>,
}

impl Outcome {
    pub(crate) fn new(a: &ProbeArgs, many: bool) -> Outcome {
        Outcome {
            tally: ProbeTally::new(&a.column, a.values.len(), many),
            noted_readings: false,
            started: std::time::Instant::now(),
            progress: None,
        }
    }

    /// Shows the files done out of `files` on stderr when it is a terminal (over several
    /// files: a long run otherwise shows nothing until its end, with -l or JSON to a pipe).
    pub(crate) fn show_progress(&mut self, files: usize) {
        if self.tally.many {
            self.progress = Some(crate::progress::counter("probing files", files));
        }
    }

    /// Says once that the column path also fits other leaves (`a.b` and `a\.b`).
    pub(crate) fn note_other_readings(&mut self, column: &str, chosen: &str, others: &[String]) {
        if others.is_empty() || self.noted_readings {
            return;
        }
        self.noted_readings = true;
        err!(
            "sbbf probe: note: `{column}` is read as the path `{chosen}`; other columns whose names contain dots: {} (a `.` inside a field name is written `\\.`)",
            others
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    /// Takes one file's result (its output was printed by [`report`]): counts it, or prints its
    /// error on stderr (and, in JSON, as an error object). With several files, a file without
    /// the column is a result of its own.
    pub(crate) fn add(
        &mut self,
        shown: &str,
        result: &Result<FileProbe, sbbf_parquet::Error>,
        a: &ProbeArgs,
    ) {
        if let Some(p) = &self.progress {
            p.inc();
        }
        let e = match result {
            Ok(f) => {
                self.tally.add_answers(&f.answers, f.io);
                return;
            }
            Err(e) => e,
        };
        match self.tally.add_error(e) {
            Counted::WithoutColumn => {
                if a.format == Format::Json {
                    out!("{}", to_json(&ProbeLine::missing_column(shown, &a.column)));
                } else if !a.files_with_matches {
                    out!(
                        "{shown}: column `{}` not in this file (none of its rows holds a value of it)",
                        a.column
                    );
                }
            }
            Counted::BadValue { first } => {
                // The value, not the file: said once (the message names value, column and
                // type), not once per file. No row of this column can equal it, so -l does
                // not list the file; the exit status says the run failed.
                if first {
                    if self.tally.many {
                        err!("sbbf probe: {e} (in {shown}, and alike in every file whose column has this type)");
                    } else {
                        err!("sbbf probe: {shown}: {e}");
                    }
                }
                if a.format == Format::Json {
                    let line = ErrorLine {
                        error: e.to_string(),
                        file: shown,
                    };
                    out!("{}", to_json(&line));
                }
            }
            _ => {
                err!("sbbf probe: {shown}: {e}");
                if a.files_with_matches {
                    // A file that could not be read may hold the value: a script reading the
                    // list must see it, marked, not only the exit status.
                    let why: String = e
                        .to_string()
                        .chars()
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .collect();
                    out!("{shown}\t(unreadable: {why})");
                }
                if a.format == Format::Json {
                    let line = ErrorLine {
                        error: e.to_string(),
                        file: shown,
                    };
                    out!("{}", to_json(&line));
                }
            }
        }
    }

    /// Prints the totals (text, several files) and returns the exit status: 2 when some file
    /// failed or no file has the column, else 0 when some value may be present somewhere,
    /// else 1.
    pub(crate) fn finish(&mut self, a: &ProbeArgs) -> u8 {
        // Cleared before the totals.
        self.progress = None;
        let t = &self.tally;
        if let Some(e) = t.no_file_has_column() {
            err!("sbbf probe: {e}");
            return t.exit_status();
        }
        // Totals of nothing (every file failed, e.g. a value no file's column type can hold)
        // would read as "absent in all 0 row group(s)".
        if a.format == Format::Text && t.many && !a.files_with_matches && t.files > 0 {
            let with = t.files - t.without_column;
            let rgs = t.row_groups();
            let mut head = format!(
                "total: {} file(s), {rgs} row group(s) with column `{}`",
                t.files, a.column
            );
            if t.without_column > 0 {
                head.push_str(&format!("; {} file(s) without it", t.without_column));
            }
            if t.unprobed > 0 {
                head.push_str(&format!(
                    "; {} file(s) could not be probed (not counted)",
                    t.unprobed
                ));
            }
            out!("{head}");
            for (v, c) in a.values.iter().zip(&t.values) {
                let mut parts = Vec::new();
                if c.maybe > 0 || c.unknown > 0 {
                    parts.push(format!(
                        "maybe in {} row group(s), unknown in {}, in {} of {with} file(s)",
                        c.maybe, c.unknown, c.files_hit
                    ));
                }
                parts.push(if c.absent == rgs {
                    format!("absent in all {rgs} row group(s)")
                } else {
                    format!("absent in {}", c.absent)
                });
                out!("  {}: {}", show_value(v), parts.join("; "));
            }
        }
        if a.stats && a.format == Format::Text {
            // With -l, stdout holds file names only: the figures go to stderr.
            let line = format!(
                "reads: {} request(s), {} byte(s), {} wave(s){} in {} ms",
                t.io.requests,
                t.io.bytes,
                t.io.waves,
                if t.files > 1 {
                    " (summed over files)"
                } else {
                    ""
                },
                self.started.elapsed().as_millis()
            );
            if a.files_with_matches {
                err!("{line}");
            } else {
                out!("{line}");
            }
        }
        t.exit_status()
    }
}

use crate::to_json;

/// A value as text output shows it: as it is when that is unambiguous, else quoted with
/// escapes (empty, spaces at either end, control or invisible characters, quotes, backquotes).
pub(crate) fn show_value(v: &str) -> String {
    let plain = !v.is_empty()
        && !v.starts_with(char::is_whitespace)
        && !v.ends_with(char::is_whitespace)
        && !v.starts_with('"')
        && v.chars().all(|c| {
            !c.is_control()
                && c != '`'
                && c != '\u{feff}'
                && !(c.is_whitespace() && c != ' ')
                && !('\u{200b}'..='\u{200f}').contains(&c)
        });
    if plain {
        format!("`{v}`")
    } else {
        format!("\"{}\"", v.escape_debug())
    }
}

/// `0-3, 9, 37`: row group numbers, runs as ranges.
fn ranges(rgs: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < rgs.len() {
        let mut j = i;
        while j + 1 < rgs.len() && rgs[j + 1] == rgs[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => rgs[i].to_string(),
            1 => format!("{}, {}", rgs[i], rgs[j]),
            _ => format!("{}-{}", rgs[i], rgs[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// Why a row group cannot answer, in words.
fn unknown_reason(state: &FilterState) -> String {
    match state {
        FilterState::Missing => "no Bloom filter".to_string(),
        FilterState::Invalid(r) | FilterState::Partition(r) | FilterState::NotInFile(r) => {
            r.clone()
        }
        FilterState::Present => "filters cannot decide".to_string(),
    }
}

/// Prints one file's text lines (text format) and returns its JSON object.
pub(crate) fn report(
    shown: &str,
    ty: &ColumnType,
    encoded: &[Encoded],
    answers: &[RowGroupAnswer],
    io: IoStats,
    a: &ProbeArgs,
) {
    let text = a.format == Format::Text && !a.files_with_matches;
    let json = a.format == Format::Json;
    if text {
        // A table's column under another name in this file (Delta column mapping's
        // `col-<uuid>`, an Iceberg column's name before a rename): the table's name, and the
        // file's beside it.
        let column = match ty.path == a.column {
            true => format!("`{}`", ty.path),
            false => format!("`{}` (`{}` in this file)", a.column, ty.path),
        };
        out!(
            "{shown}: column {column} ({}{}), {} row group(s)",
            ty.physical_name(),
            ty.logical
                .as_deref()
                .map(|l| format!(" {l}"))
                .unwrap_or_default(),
            answers.len()
        );
        // A partition column: every row group was answered from the file's one value.
        if let Some(FilterState::Partition(why)) = answers.first().map(|rg| &rg.filter) {
            out!("  note: {why} in the table's log (its files do not hold the column)");
        }
        for (v, e) in a.values.iter().zip(encoded) {
            match e {
                Encoded::NeverStored(why) => {
                    out!("  note: {} is absent everywhere: {why}", show_value(v))
                }
                Encoded::AlwaysMaybe(why) => {
                    // The library's reason names no flag; ours is said here.
                    let hint = match why {
                        MaybeWhy::NaN => " (--exact-bits tests one bit pattern)",
                        _ => "",
                    };
                    out!("  note: {}: {why}{hint}", show_value(v))
                }
                Encoded::Candidates(_) => {}
            }
        }
    }
    // Only text shows values (JSON writes them itself, -l not at all): with many values over
    // many files, quoting each for every file would be most of the work.
    let shown_values: Vec<String> = if text {
        a.values.iter().map(|v| show_value(v)).collect()
    } else {
        Vec::new()
    };
    let width = shown_values
        .iter()
        .map(|v| v.chars().count())
        .max()
        .unwrap_or(0);
    let mut any_not_absent = false;
    let mut skippable = 0;
    // Per value, row groups that definitely lack it.
    let mut absent = vec![0usize; a.values.len()];
    // Row groups by value, for the one-line-per-value text only.
    let per_value = text && !a.row_groups;
    let mut by_value: Vec<(Vec<usize>, Vec<usize>, Vec<String>)> =
        vec![Default::default(); if per_value { a.values.len() } else { 0 }];
    for rg in answers {
        if rg.answers.iter().all(|x| *x == Answer::Absent) {
            skippable += 1;
        }
        for (i, ans) in rg.answers.iter().enumerate() {
            any_not_absent |= *ans != Answer::Absent;
            if *ans == Answer::Absent {
                absent[i] += 1;
            }
            if let Some((maybe, unknown, why)) = by_value.get_mut(i) {
                match ans {
                    Answer::Maybe => maybe.push(rg.row_group),
                    Answer::Unknown => {
                        unknown.push(rg.row_group);
                        let r = unknown_reason(&rg.filter);
                        if !why.contains(&r) {
                            why.push(r);
                        }
                    }
                    Answer::Absent => {}
                }
            }
            if text && a.row_groups {
                let detail = match ans {
                    Answer::Unknown => format!(" ({})", unknown_reason(&rg.filter)),
                    _ => String::new(),
                };
                out!(
                    "  row group {:>3} ({:>8} rows)  {:<width$}  {}{detail}",
                    rg.row_group,
                    rg.num_rows,
                    shown_values[i],
                    ans.as_str()
                );
            }
        }
    }
    if per_value {
        for (i, (maybe, unknown, why)) in by_value.iter().enumerate() {
            let mut parts = Vec::new();
            if !maybe.is_empty() {
                parts.push(format!("maybe in row group(s) {}", ranges(maybe)));
            }
            if !unknown.is_empty() {
                let why = match why.as_slice() {
                    [one] => one.clone(),
                    _ => "various reasons: --row-groups shows them".to_string(),
                };
                parts.push(format!(
                    "unknown in row group(s) {} ({why})",
                    ranges(unknown)
                ));
            }
            let absent = absent[i];
            if absent == answers.len() {
                parts.push(format!("absent in all {absent}"));
            } else if absent > 0 {
                parts.push(format!("absent in {absent}"));
            }
            out!("  {}: {}", shown_values[i], parts.join("; "));
        }
    }
    if text {
        out!(
            "  summary: {skippable} of {} row group(s) can be skipped for {}",
            answers.len(),
            if a.values.len() == 1 {
                "this value".to_string()
            } else {
                format!("these {} values", a.values.len())
            }
        );
    }
    if a.files_with_matches && any_not_absent {
        out!("{shown}");
    }
    if json {
        // Streamed to stdout as it is serialized: a million values make a line of gigabytes.
        let line = ProbeLine::new(shown, ty, answers, &a.values, a.stats.then_some(io))
            .as_asked(&a.column);
        let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let written = serde_json::to_writer(&mut w, &line)
            .map_err(std::io::Error::from)
            .and_then(|()| {
                use std::io::Write as _;
                w.write_all(b"\n")?;
                w.flush()
            });
        if let Err(e) = written {
            crate::output_failed(e);
        }
    }
}

/// The index's figures of a probe of a table root (`--stats`): JSON on stderr, text where the
/// totals go.
fn index_stats(
    a: &ProbeArgs,
    stats: &IndexStats,
    direct_io: &IoStats,
    started: std::time::Instant,
) {
    let waves = stats.waves_before_direct + direct_io.waves;
    if a.format == Format::Json {
        let index = IndexStatsLine::new(stats, direct_io, started.elapsed());
        err!("{}", crate::to_json(&ProbeStatsLine { index }));
    } else {
        let line = format!(
            "index: {} of {} file(s) answered by the index, {} read directly ({} new, {} changed, {} not covered, {} maybe); listing {} request(s); index {} request(s), {} byte(s), {} wave(s); direct {} request(s), {} byte(s); {} wave(s) in all",
            stats.from_index,
            stats.files,
            stats.direct,
            stats.new,
            stats.stale,
            stats.not_covered,
            stats.maybe,
            stats.listing.requests,
            stats.index.requests,
            stats.index.bytes,
            stats.index.waves,
            direct_io.requests,
            direct_io.bytes,
            waves
        );
        let line = match stats.index_version {
            Some(v) => format!("{line}; the index covers table version {v}"),
            None => line,
        };
        // With -l, stdout holds file names only.
        if a.files_with_matches {
            err!("{line}");
        } else {
            out!("{line}");
        }
    }
}
