//! `sbbf verify FILE`

use crate::Format;
use clap::Args;
use sbbf_lake::each::verify_each;
use sbbf_parquet::report::{ErrorLine, FileReport, VerifyReport};

/// Check a writer's filters against its data: decode every column chunk that has a filter and
/// test each stored value ("definitely absent" for a stored value means the writer is broken),
/// then probe random absent values to measure the real false-positive rate next to the one the
/// filter's fill predicts.
///
/// In a directory or glob, a --column that a file lacks (schema evolution) is reported as "not
/// in this file" for that file.
///
/// Encrypted files (Parquet modular encryption, either algorithm, encrypted or plaintext
/// footer) are verified with their keys (--footer-key, --column-key, --keys): each column
/// chunk is read whole and its pages decrypted in memory (one chunk at a time, about twice
/// its size) before decoding. A chunk whose key is not given is listed as not verified, with
/// the reason, and makes the exit status 2; a page that does not decrypt is an error.
///
/// Exit status: 0 when every stored value tests "maybe", 1 when a false negative is found, 2 on
/// errors (and when a chunk could not be verified).
///
/// Examples:
///   sbbf verify data.parquet
///   sbbf verify data.parquet --column user_id --column s.b --format json
///   sbbf verify enc.parquet.encrypted --keys keys.json
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct VerifyArgs {
    /// A Parquet file, a directory (every *.parquet below it) or a quoted glob. Below a
    /// directory, files and folders whose names start with `_` or `.` are skipped (a job's
    /// `_temporary/` output, `.hidden` files), as Spark, Hive and pyarrow skip them; a file
    /// or glob named explicitly is read.
    #[arg(value_parser = crate::store_url::location)]
    pub file: String,
    /// Only these columns (dotted paths); repeatable. Default: every column with a filter.
    #[arg(long = "column", short = 'c')]
    pub columns: Vec<String>,
    /// Random absent values probed per column chunk to measure the false-positive rate.
    #[arg(long, default_value_t = 10_000)]
    pub samples: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub keys: crate::keys::KeyArgs,
    #[command(flatten)]
    pub table: crate::lake::TableArgs,
}

pub fn run(a: VerifyArgs) -> u8 {
    let at = match a.table.table_ref_or_exit("verify", &a.file) {
        Ok(at) => at,
        Err(code) => return code,
    };
    let keys = match a.keys.key_set() {
        Ok(k) => k,
        Err(e) => {
            err!("sbbf verify: {e}");
            return 2;
        }
    };
    let mut unverified = false;
    let mut broken = false;
    let each = |f: FileReport<VerifyReport>| match f.report {
        Ok(r) => {
            let Outcome {
                false_negatives,
                not_verified,
            } = print(&f.file, &r, &a);
            broken |= false_negatives;
            if not_verified > 0 {
                err!("sbbf verify: {}: {not_verified} column chunk(s) not verified (an unusable filter, or encrypted without its key)", f.file);
                unverified = true;
            }
        }
        Err(e) => {
            err!("sbbf verify: {}: {e}", f.file);
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
    let bar = |_: &str| crate::progress::bar("verifying");
    let (tally, table) = match verify_each(
        at,
        &a.table.options(),
        &keys,
        &a.columns,
        a.samples,
        bar,
        each,
    ) {
        Ok(t) => t,
        Err(e) => {
            err!("sbbf verify: {}", crate::path_error(&a.file, &e));
            return 2;
        }
    };
    // Text: said on stderr, every time (stdout holds the reports); JSON: a last line.
    crate::lake::say_version("sbbf verify", table.as_ref(), a.format, true);
    if let Some(e) = tally.no_file_has_column() {
        err!("sbbf verify: {e}");
    }
    if tally.failed > 0 || tally.column_in_no_file.is_some() || unverified {
        2
    } else if broken {
        1
    } else {
        0
    }
}

fn pct(p: Option<f64>) -> String {
    p.map(|p| format!("{:.3}%", p * 100.0))
        .unwrap_or_else(|| "-".into())
}

/// What verifying a file found.
struct Outcome {
    /// Some stored value tests "absent".
    false_negatives: bool,
    /// Chunks whose values could not be read (encrypted, key not given).
    not_verified: usize,
}

/// Prints one file's report. With several files, a --column a file lacks is reported as "not
/// in this file" instead of failing the file; a file with none of them is not verified.
fn print(shown: &str, report: &VerifyReport, a: &VerifyArgs) -> Outcome {
    if !a.columns.is_empty() && report.chunks.is_empty() && !report.columns_not_in_file.is_empty() {
        // No requested column in this file.
        if a.format == Format::Json {
            out!("{}", crate::to_json(report));
        } else {
            out!(
                "{shown}: column(s) not in this file: {}",
                report.columns_not_in_file.join(", ")
            );
        }
        return Outcome {
            false_negatives: false,
            not_verified: 0,
        };
    }
    // A chunk whose filter cannot be used was not verified either: nothing was tested.
    let not_verified = report.unverified();
    let false_negatives = report.false_negatives;
    if a.format == Format::Json {
        out!("{}", crate::to_json(report));
    } else {
        out!("{shown}:");
        out!(
            "  {:>3}  {:<24} {:>9} {:>9} {:>8} {:>10} {:>10}",
            "rg",
            "column",
            "values",
            "distinct",
            "false -",
            "fpp real",
            "fpp fill"
        );
        for r in &report.chunks {
            let filter = match (&r.not_verified, r.filter) {
                (Some(why), _) => format!("  NOT VERIFIED: {why}"),
                (None, "present") => String::new(),
                (None, "missing") => "  (no filter)".into(),
                (None, _) => format!(
                    "  (unusable filter: {})",
                    r.reason.as_deref().unwrap_or("?")
                ),
            };
            out!(
                "  {:>3}  {:<24} {:>9} {:>9} {:>8} {:>10} {:>10}{filter}",
                r.row_group,
                r.column,
                r.values,
                r.distinct_values,
                r.false_negatives,
                pct(r.measured_fpp),
                pct(r.predicted_fpp)
            );
            for v in &r.false_negative_examples {
                out!("       FALSE NEGATIVE: {v} is stored but the filter says absent");
            }
        }
        for c in &report.columns_not_in_file {
            out!("  column `{c}` not in this file");
        }
        if false_negatives > 0 {
            out!("  {false_negatives} false negative(s): the writer's filters are broken");
        } else if not_verified > 0 {
            out!(
                "  no false negatives in {} column chunk(s); {not_verified} not verified",
                report.chunks.len() - not_verified
            );
        } else {
            out!(
                "  no false negatives in {} column chunk(s)",
                report.chunks.len()
            );
        }
    }
    Outcome {
        false_negatives: false_negatives > 0,
        not_verified,
    }
}
