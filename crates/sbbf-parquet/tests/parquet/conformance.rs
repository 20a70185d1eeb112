//! Conformance: our answers against the answers other implementations' readers gave.
//!
//! Inputs: the conformance corpus (`testdata/conformance/`, files written by Arrow C++, arrow-rs,
//! DuckDB and parquet-java; `fixtures/conformance/expected/`, answers from arrow-rs and
//! parquet-java) and this repository's own
//! `testdata/` with `fixtures/expected/`. The expected answers are never produced by our code.
//!
//! Rules (see the corpus README):
//! - a value present in the data is never "absent";
//! - with exact float bits, every answer equals arrow-rs's `Sbbf::check` exactly (false
//!   positives included), and the bytes we hash equal the corpus' `plain_hex`;
//! - in the default (SQL) mode NaN is "maybe", zero is the OR of +0.0 and -0.0, all else equals
//!   the exact answer;
//! - chunks without a filter answer "unknown".

use flate2::read::GzDecoder;
use sbbf_parquet::values::text::{encode_text, EncodeOptions};
use sbbf_parquet::Encoded;
use sbbf_parquet::{Answer, FilterState, IoPolicy, ParquetFile};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use sbbf_testkit::{conformance_expected, conformance_files, repo};

#[derive(Debug)]
struct Row {
    file: String,
    column: String,
    row_group: usize,
    value: String,
    plain_hex: String,
    physical_type: String,
    present: bool,
    has_filter: bool,
    arrowrs: Option<bool>,
    parquetjava: Option<bool>,
}

fn load(expected: &Path) -> Vec<Row> {
    let f = std::fs::File::open(expected).unwrap_or_else(|e| panic!("{}: {e}", expected.display()));
    std::io::BufReader::new(GzDecoder::new(f))
        .lines()
        .map(|l| {
            let j: Json = serde_json::from_str(&l.unwrap()).unwrap();
            Row {
                file: j["file"].as_str().unwrap().to_string(),
                // Null for the bare filter blobs, which have no columns or row groups.
                column: j["column"].as_str().unwrap_or("").to_string(),
                row_group: j["row_group"].as_u64().unwrap_or(0) as usize,
                value: j["value"].as_str().unwrap().to_string(),
                plain_hex: j["plain_hex"].as_str().unwrap().to_string(),
                physical_type: j["physical_type"].as_str().unwrap().to_string(),
                present: j["present_in_data"].as_bool().unwrap(),
                has_filter: j["has_bloom_filter"].as_bool().unwrap_or(true),
                arrowrs: j["arrowrs_says_maybe"].as_bool(),
                parquetjava: j["parquetjava_says_maybe"].as_bool(),
            }
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[derive(Default, Debug)]
struct Tally {
    files: usize,
    rows: usize,
    present_rows: usize,
    false_positives: usize,
}

/// Checks one Parquet file against its expected rows; returns failures as text.
fn check_file(parquet: &Path, rows: &[&Row], tally: &mut Tally) -> Vec<String> {
    let mut failures = Vec::new();
    let pq = ParquetFile::open(std::fs::File::open(parquet).unwrap()).unwrap();
    let mut by_column: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by_column.entry(&r.column).or_default().push(*r);
    }
    for (column, rows) in by_column {
        let col = pq
            .column_index(column)
            .unwrap_or_else(|e| panic!("{}: {e}", parquet.display()));
        let ty = &pq.columns()[col];
        let exact = EncodeOptions {
            exact_bits: true,
            ..Default::default()
        };
        let sql = EncodeOptions::default();
        let mut values_exact = Vec::new();
        let mut values_sql = Vec::new();
        for r in &rows {
            let e = encode_text(ty, &r.value, exact)
                .unwrap_or_else(|e| panic!("{}: {column}: {e}", parquet.display()));
            match &e {
                Encoded::Candidates(c) => {
                    if !c.iter().any(|b| hex(b) == r.plain_hex) {
                        failures.push(format!(
                            "{column} {:?}: we hash {:?}, writers hash {}",
                            r.value,
                            c.iter().map(|b| hex(b)).collect::<Vec<_>>(),
                            r.plain_hex
                        ));
                    }
                }
                other => failures.push(format!("{column} {:?}: encoded as {other:?}", r.value)),
            }
            values_exact.push(e);
            values_sql.push(encode_text(ty, &r.value, sql).unwrap());
        }
        let multi_candidate: Vec<bool> = values_exact
            .iter()
            .map(|e| matches!(e, Encoded::Candidates(c) if c.len() > 1))
            .collect();
        let hex_mode = EncodeOptions {
            input: sbbf_parquet::values::text::InputMode::Hex,
            ..Default::default()
        };
        let values_hex: Vec<Encoded> = rows
            .iter()
            .map(|r| encode_text(ty, &r.plain_hex, hex_mode).unwrap())
            .collect();
        let ans_hex = pq.probe(col, &values_hex, IoPolicy::default());
        let ans_exact = pq.probe(col, &values_exact, IoPolicy::default());
        let ans_sql = pq.probe(col, &values_sql, IoPolicy::default());
        // The exact answers of the row group, by value text, to evaluate the SQL zero rule.
        for (i, r) in rows.iter().enumerate() {
            tally.rows += 1;
            let rg = &ans_exact[r.row_group];
            let got = rg.answers[i];
            let got_sql = ans_sql[r.row_group].answers[i];
            let ctx = format!(
                "{} rg {} {column} {:?}",
                parquet.file_name().unwrap().to_string_lossy(),
                r.row_group,
                r.value
            );
            if r.has_filter != !matches!(rg.filter, FilterState::Missing) {
                failures.push(format!(
                    "{ctx}: filter state {:?}, corpus has_bloom_filter {}",
                    rg.filter, r.has_filter
                ));
            }
            let want = match r.arrowrs {
                Some(true) => Answer::Maybe,
                Some(false) => Answer::Absent,
                None => Answer::Unknown,
            };
            if multi_candidate[i] {
                // BYTE_ARRAY decimals: we probe every width a writer may use, so we may say
                // "maybe" where the one written width is absent, never the other way round;
                // the written bytes alone (as --hex probes them) must match exactly.
                if want == Answer::Maybe && got != Answer::Maybe {
                    failures.push(format!("{ctx}: answer {got:?}, arrow-rs says Maybe"));
                }
                let hex_got = ans_hex[r.row_group].answers[i];
                if hex_got != want {
                    failures.push(format!(
                        "{ctx}: --hex answer {hex_got:?}, arrow-rs says {want:?}"
                    ));
                }
            } else if got != want {
                failures.push(format!(
                    "{ctx}: exact-bits answer {got:?}, arrow-rs says {want:?}"
                ));
            }
            if let Some(pj) = r.parquetjava {
                if pj != r.arrowrs.unwrap_or(pj) {
                    failures.push(format!("{ctx}: oracles disagree (corpus problem)"));
                }
            }
            if r.present {
                tally.present_rows += 1;
                if got == Answer::Absent || got_sql == Answer::Absent {
                    failures.push(format!("{ctx}: FALSE NEGATIVE (present in data)"));
                }
            } else if got == Answer::Maybe {
                tally.false_positives += 1;
            }
            // The SQL rule for floats.
            let is_float = matches!(r.physical_type.as_str(), "FLOAT" | "DOUBLE")
                || ty.kind == sbbf_parquet::format::column::ValueKind::Float16;
            let v = r.value.to_ascii_lowercase();
            let want_sql = if !is_float {
                got
            } else if v == "nan" {
                if r.has_filter {
                    Answer::Maybe
                } else {
                    Answer::Unknown
                }
            } else if v == "0.0" || v == "-0.0" {
                // Maybe if either zero is maybe; we compare with our own exact probes of both
                // zeros only through the rule "never less than the exact answer".
                if got == Answer::Maybe {
                    Answer::Maybe
                } else {
                    got_sql
                }
            } else {
                got
            };
            if got_sql != want_sql {
                failures.push(format!(
                    "{ctx}: SQL-mode answer {got_sql:?}, expected {want_sql:?}"
                ));
            }
        }
    }
    tally.files += 1;
    failures
}

/// A bare header + bitset blob (apache/parquet-testing): probe the plain bytes directly.
fn check_bare_filter(path: &Path, rows: &[&Row], tally: &mut Tally) -> Vec<String> {
    let blob = std::fs::read(path).unwrap();
    let (h, len) = sbbf_parquet::format::header::BloomFilterHeader::parse(&blob).unwrap();
    let bits = &blob[len..len + h.num_bytes as usize];
    let view = sbbf::SbbfRef::new(bits).unwrap();
    let mut failures = Vec::new();
    for r in rows {
        tally.rows += 1;
        let bytes = sbbf_parquet::values::text::parse_hex(&r.plain_hex).unwrap();
        let got = view.contains(&bytes);
        if Some(got) != r.arrowrs {
            failures.push(format!(
                "{} {:?}: {got}, arrow-rs {:?}",
                path.display(),
                r.value,
                r.arrowrs
            ));
        }
        if r.present && !got {
            failures.push(format!("{} {:?}: FALSE NEGATIVE", path.display(), r.value));
        }
    }
    failures
}

fn run_corpus(files: &Path, expected: &Path) -> Tally {
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(expected)
        .unwrap_or_else(|e| panic!("{}: {e}", expected.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.gz"))
        .collect();
    names.sort();
    for exp in names {
        let rows = load(&exp);
        let mut by_file: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
        for r in &rows {
            by_file.entry(&r.file).or_default().push(r);
        }
        for (name, rows) in by_file {
            let path = files.join(name);
            assert!(
                path.exists(),
                "{}: named by {}",
                path.display(),
                exp.display()
            );
            if name.ends_with(".bin") {
                failures.extend(check_bare_filter(&path, &rows, &mut tally));
            } else {
                failures.extend(check_file(&path, &rows, &mut tally));
            }
        }
    }
    if !failures.is_empty() {
        let n = failures.len();
        failures.truncate(40);
        panic!(
            "{n} conformance failures, first ones:\n{}",
            failures.join("\n")
        );
    }
    tally
}

#[test]
fn conformance_corpus() {
    let t = run_corpus(&conformance_files(), &conformance_expected());
    eprintln!("conformance corpus: {t:?}");
    // Every Parquet file and every probe of the public corpus, nothing skipped: 15 files with
    // 89,220 probes, plus the 204 probes of the bare xxhash filter blob.
    assert_eq!(t.files, 15);
    assert_eq!(t.rows, 89_220 + 204);
}

#[test]
fn own_testdata_corpus() {
    let files = repo().join("testdata");
    let expected = repo().join("fixtures/expected");
    let t = run_corpus(&files, &expected);
    eprintln!("own corpus: {t:?}");
    assert!(
        t.files >= 4,
        "expected files from every writer, found {}",
        t.files
    );
    assert!(t.present_rows > 0);
}
