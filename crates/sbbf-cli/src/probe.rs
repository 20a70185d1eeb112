//! `sbbf probe FILE COLUMN VALUE...`

use crate::{files, Format};
use clap::Args;
use sbbf_parquet::column::ColumnType;
use sbbf_parquet::value::{encode_text, EncodeOptions, InputMode};
use sbbf_parquet::Encoded;
use sbbf_parquet::{Answer, FilterState, IoPolicy, ParquetFile, RowGroupAnswer};
use serde_json::json;
use std::ffi::OsString;

/// Ask which row groups may hold a value, reading only the footer and the filter bytes needed.
///
/// Each value is read by the column's type: integers, DATE as 2024-01-31, DECIMAL(9,2) as 12.34,
/// TIMESTAMP as 2024-01-31T12:00:00.123456Z (Z only for UTC-adjusted columns), TIME as
/// 23:59:59.999, UUID as f81d4fae-7dec-11d0-a765-00a0c91e6bf6, binary as 0x00ff, strings as they
/// are (exact bytes: no trimming or case folding). Values that start with '-' (-5, -0.0, -inf)
/// are values, not options.
///
/// Answers per row group: "maybe" (may hold the value), "absent" (definitely does not: skip it),
/// "unknown" (no usable filter: cannot skip). For floats the question is SQL equality: 0.0 also
/// matches -0.0 and NaN is never ruled out, unless --exact-bits.
///
/// Exit status: 0 when some value may be present somewhere, 1 when every value is definitely
/// absent everywhere, 2 on errors.
///
/// Examples:
///   sbbf probe data.parquet user_id 42 43
///   sbbf probe data/ event_date 2024-01-31 --format json
///   sbbf probe 'logs/*.parquet' s.b hello
///   sbbf probe s3://bucket/events/ user_id 42
///   sbbf probe --exact-bits -- data.parquet temperature -0.0
///   sbbf probe data.parquet user_id --values-from ids.txt     (one value per line; - is stdin)
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct ProbeArgs {
    /// A Parquet file, a directory (every *.parquet below it), a quoted glob, or an
    /// object-store URL: s3://bucket/prefix/ (every *.parquet below it) or s3://bucket/f.parquet;
    /// also gs://, az://, http(s)://. Credentials and endpoint come from the AWS_*, GOOGLE_* and
    /// AZURE_* environment variables (AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, AWS_REGION, ...).
    pub file: String,
    /// Leaf column by dotted path, e.g. `id`, `s.a`, `tags.list.element`.
    pub column: String,
    /// Values to probe.
    #[arg(
        required_unless_present = "values_from",
        allow_hyphen_values = true,
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
}

/// Values such as `-5` or `-inf` after `probe` would be taken for options: insert `--` before
/// the first one, unless the user did. Options after the values keep working when they are
/// spelled out (`--format json`).
pub fn protect_negative_values(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let args: Vec<OsString> = args.collect();
    let Some(cmd) = args.iter().position(|a| a == "probe") else {
        return args;
    };
    if args.iter().any(|a| a == "--") {
        return args;
    }
    // Every `--word` is an option (clap rejects unknown ones); a single `-` followed by
    // anything but h/V is a value (`-5`, `-0.0`, `-inf`, `-nan`).
    let takes_value = ["--format", "--values-from"];
    let mut out: Vec<OsString> = args[..=cmd].to_vec();
    let mut rest = args[cmd + 1..].iter();
    let mut values: Vec<OsString> = Vec::new();
    let mut flags: Vec<OsString> = Vec::new();
    while let Some(a) = rest.next() {
        let s = a.to_string_lossy();
        if s.starts_with("--") || s == "-h" || s == "-V" {
            flags.push(a.clone());
            if takes_value.contains(&s.as_ref()) {
                if let Some(v) = rest.next() {
                    flags.push(v.clone());
                }
            }
        } else {
            values.push(a.clone());
        }
    }
    out.extend(flags);
    out.push("--".into());
    out.extend(values);
    out
}

pub(crate) struct FileResult {
    pub(crate) json: serde_json::Value,
    pub(crate) any_not_absent: bool,
}

pub fn run(mut a: ProbeArgs) -> u8 {
    if let Some(from) = &a.values_from {
        match read_values(from) {
            Ok(v) => a.values.extend(v),
            Err(e) => {
                eprintln!("sbbf probe: --values-from {}: {e}", from.display());
                return 2;
            }
        }
        if a.values.is_empty() {
            eprintln!("sbbf probe: --values-from {}: no values", from.display());
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
    #[cfg(feature = "object_store")]
    if sbbf_parquet::remote::is_remote_url(&a.file) {
        return crate::remote::run(&a, opts);
    }
    let paths = match files::expand(&a.file) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sbbf probe: {e}");
            return 2;
        }
    };
    let mut outcome = Outcome::default();
    for path in &paths {
        let shown = path.display().to_string();
        outcome.add(&shown, probe_file(&shown, path, &a, opts), a.format);
    }
    outcome.exit_code()
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

/// What the files probed so far add up to, for the exit status.
#[derive(Default)]
pub(crate) struct Outcome {
    failed: bool,
    any_not_absent: bool,
}

impl Outcome {
    /// Takes one file's result: prints its JSON line, or its error on stderr.
    pub(crate) fn add(
        &mut self,
        shown: &str,
        result: Result<FileResult, impl std::fmt::Display>,
        format: Format,
    ) {
        match result {
            Ok(r) => {
                self.any_not_absent |= r.any_not_absent;
                if format == Format::Json {
                    out!("{}", r.json);
                }
            }
            Err(e) => {
                eprintln!("sbbf probe: {shown}: {e}");
                self.failed = true;
            }
        }
    }

    /// 2 when some file failed, else 0 when some value may be present somewhere, else 1.
    pub(crate) fn exit_code(&self) -> u8 {
        if self.failed {
            2
        } else if self.any_not_absent {
            0
        } else {
            1
        }
    }
}

fn probe_file(
    shown: &str,
    path: &std::path::Path,
    a: &ProbeArgs,
    opts: EncodeOptions,
) -> Result<FileResult, Box<dyn std::error::Error>> {
    let file = std::fs::File::open(path)?;
    let pq = ParquetFile::open(file)?;
    let col = pq.column_index(&a.column)?;
    let ty = &pq.columns()[col];
    let encoded: Vec<Encoded> = a
        .values
        .iter()
        .map(|v| encode_text(ty, v, opts))
        .collect::<Result<_, _>>()?;
    let answers = pq.probe(col, &encoded, IoPolicy::default());
    Ok(report(shown, ty, &encoded, &answers, a))
}

/// Prints one file's text lines (text format) and returns its JSON object.
pub(crate) fn report(
    shown: &str,
    ty: &ColumnType,
    encoded: &[Encoded],
    answers: &[RowGroupAnswer],
    a: &ProbeArgs,
) -> FileResult {
    let text = a.format == Format::Text;
    if text {
        out!(
            "{shown}: column `{}` ({}{}), {} row group(s)",
            ty.path,
            ty.physical_name(),
            ty.logical
                .as_deref()
                .map(|l| format!(" {l}"))
                .unwrap_or_default(),
            answers.len()
        );
        for (v, e) in a.values.iter().zip(encoded) {
            match e {
                Encoded::NeverStored(why) => out!("  note: {v:?} is absent everywhere: {why}"),
                Encoded::AlwaysMaybe(why) => out!("  note: {v:?}: {why}"),
                Encoded::Candidates(_) => {}
            }
        }
    }
    let width = a.values.iter().map(|v| v.len()).max().unwrap_or(0);
    let mut any_not_absent = false;
    let mut skippable = 0;
    let mut rgs = Vec::new();
    for rg in answers {
        let (filter, reason) = match &rg.filter {
            FilterState::Present => ("present", None),
            FilterState::Missing => ("missing", None),
            FilterState::Invalid(r) => ("invalid", Some(r.clone())),
        };
        if rg.answers.iter().all(|x| *x == Answer::Absent) {
            skippable += 1;
        }
        let mut vals = Vec::new();
        for (v, ans) in a.values.iter().zip(&rg.answers) {
            any_not_absent |= *ans != Answer::Absent;
            if text {
                let detail = match (ans, &rg.filter) {
                    (Answer::Unknown, FilterState::Missing) => " (no Bloom filter)".to_string(),
                    (Answer::Unknown, FilterState::Invalid(r)) => format!(" ({r})"),
                    (Answer::Unknown, _) => " (filters cannot decide)".to_string(),
                    _ => String::new(),
                };
                out!(
                    "  row group {:>3} ({:>8} rows)  {v:<width$}  {}{detail}",
                    rg.row_group,
                    rg.num_rows,
                    ans.as_str()
                );
            }
            vals.push(json!({"value": v, "result": ans.as_str()}));
        }
        rgs.push(json!({
            "row_group": rg.row_group,
            "num_rows": rg.num_rows,
            "filter": filter,
            "reason": reason,
            "values": vals,
        }));
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
    FileResult {
        json: json!({
            "file": shown,
            "column": ty.path,
            "physical_type": ty.physical_name(),
            "logical_type": ty.logical,
            "row_groups": rgs,
        }),
        any_not_absent,
    }
}
