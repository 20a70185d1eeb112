//! `sbbf verify FILE`

use crate::Format;
use clap::Args;
use sbbf_parquet::{FilterState, ParquetFile};
use serde_json::json;

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
    /// A Parquet file, a directory (every *.parquet below it) or a quoted glob.
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
}

pub fn run(a: VerifyArgs) -> u8 {
    if let Err(e) = a.keys.key_set() {
        err!("sbbf verify: {e}");
        return 2;
    }
    let paths = match sbbf_parquet::source::local_files(&a.file) {
        Ok(p) => p,
        Err(e) => {
            err!("sbbf verify: {e}");
            return 2;
        }
    };
    let mut failed = false;
    let mut broken = false;
    let many = paths.len() > 1;
    for path in &paths {
        let shown = path.display().to_string();
        match verify_file(&shown, path, &a, many) {
            Ok(Outcome {
                false_negatives,
                not_verified,
            }) => {
                broken |= false_negatives;
                if not_verified > 0 {
                    err!("sbbf verify: {shown}: {not_verified} column chunk(s) not verified (encrypted, key not given)");
                    failed = true;
                }
            }
            Err(e) => {
                err!("sbbf verify: {shown}: {e}");
                if a.format == Format::Json {
                    out!("{}", json!({"file": shown, "error": e.to_string()}));
                }
                failed = true;
            }
        }
    }
    if failed {
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

/// With several files (`many`), a --column a file lacks is reported as "not in this file"
/// instead of failing the file; a file with none of them is not verified.
fn verify_file(
    shown: &str,
    path: &std::path::Path,
    a: &VerifyArgs,
    many: bool,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    let pq = ParquetFile::open_with_keys(std::fs::File::open(path)?, &a.keys.key_set()?)?;
    let mut columns = Vec::new();
    let mut not_in_file = Vec::new();
    for c in &a.columns {
        match pq.column_index(c) {
            Ok(i) => columns.push(i),
            Err(e @ sbbf_parquet::Error::UnknownColumn { .. }) if !many => return Err(e.into()),
            Err(sbbf_parquet::Error::UnknownColumn { .. }) => not_in_file.push(c.clone()),
            Err(e) => return Err(e.into()),
        }
    }
    if !a.columns.is_empty() && columns.is_empty() {
        // No requested column here: an empty list would mean "every column".
        if a.format == Format::Json {
            out!(
                "{}",
                json!({"file": shown, "false_negatives": 0, "chunks": [],
                       "columns_not_in_file": not_in_file})
            );
        } else {
            out!(
                "{shown}: column(s) not in this file: {}",
                not_in_file.join(", ")
            );
        }
        return Ok(Outcome {
            false_negatives: false,
            not_verified: 0,
        });
    }
    let reports = if pq.encryption().is_some() {
        // Decrypted chunk by chunk: the parquet crate's reader cannot open the file itself.
        pq.verify_encrypted(&columns, a.samples, crate::progress::bar("verifying"))?
    } else {
        let data = parquet::file::serialized_reader::SerializedFileReader::new(
            std::fs::File::open(path)?,
        )?;
        pq.verify(
            &data,
            &columns,
            a.samples,
            crate::progress::bar("verifying"),
        )?
    };
    let not_verified = reports.iter().filter(|r| r.not_verified.is_some()).count();
    let false_negatives: u64 = reports.iter().map(|r| r.false_negatives).sum();
    if a.format == Format::Json {
        let chunks: Vec<_> = reports
            .iter()
            .map(|r| {
                let (filter, reason) = match &r.filter {
                    FilterState::Present => ("present", None),
                    FilterState::Missing => ("missing", None),
                    FilterState::Invalid(why) => ("invalid", Some(why.clone())),
                };
                let mut chunk = json!({
                    "row_group": r.row_group,
                    "column": r.column,
                    "filter": filter,
                    "reason": reason,
                    "values": r.values,
                    "distinct_values": r.distinct,
                    "false_negatives": r.false_negatives,
                    "false_negative_examples": r.false_negative_examples,
                    "absent_probes": r.absent_probes,
                    "measured_fpp": r.measured_fpp,
                    "predicted_fpp": r.predicted_fpp,
                });
                // Only encrypted chunks without their key have it: the shape of every other
                // report stays as it was (and as the Python package's `verify` gives it).
                if let Some(why) = &r.not_verified {
                    chunk["not_verified"] = json!(why);
                }
                chunk
            })
            .collect();
        out!(
            "{}",
            json!({"file": shown, "false_negatives": false_negatives, "chunks": chunks,
                   "columns_not_in_file": not_in_file})
        );
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
        for r in &reports {
            let filter = match (&r.not_verified, &r.filter) {
                (Some(why), _) => format!("  NOT VERIFIED: {why}"),
                (None, FilterState::Present) => String::new(),
                (None, FilterState::Missing) => "  (no filter)".into(),
                (None, FilterState::Invalid(why)) => format!("  (unusable filter: {why})"),
            };
            out!(
                "  {:>3}  {:<24} {:>9} {:>9} {:>8} {:>10} {:>10}{filter}",
                r.row_group,
                r.column,
                r.values,
                r.distinct,
                r.false_negatives,
                pct(r.measured_fpp),
                pct(r.predicted_fpp)
            );
            for v in &r.false_negative_examples {
                out!("       FALSE NEGATIVE: {v} is stored but the filter says absent");
            }
        }
        for c in &not_in_file {
            out!("  column `{c}` not in this file");
        }
        if false_negatives > 0 {
            out!("  {false_negatives} false negative(s): the writer's filters are broken");
        } else if not_verified > 0 {
            out!(
                "  no false negatives in {} column chunk(s); {not_verified} not verified",
                reports.len() - not_verified
            );
        } else {
            out!("  no false negatives in {} column chunk(s)", reports.len());
        }
    }
    Ok(Outcome {
        false_negatives: false_negatives > 0,
        not_verified,
    })
}
