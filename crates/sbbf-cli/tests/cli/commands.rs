//! The `sbbf` binary as a user runs it.

use flate2::read::GzDecoder;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::Output;

use crate::common::{conformance_expected, conformance_files, sbbf};

fn file(name: &str) -> String {
    conformance_files()
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_lines(o: &Output) -> Vec<Json> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn json_output_has_exactly_the_documented_shape() {
    let o = sbbf(&[
        "probe",
        &file("pyarrow_int_types.parquet"),
        "i8",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 1);
    let j = &lines[0];
    let keys: Vec<&str> = j.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "column",
            "file",
            "logical_type",
            "physical_type",
            "row_groups"
        ]
    );
    assert_eq!(j["physical_type"], "INT32");
    assert_eq!(j["logical_type"], "INT(8,true)");
    let rgs = j["row_groups"].as_array().unwrap();
    assert_eq!(rgs.len(), 4);
    for rg in rgs {
        let keys: Vec<&str> = rg.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            ["filter", "num_rows", "reason", "row_group", "values"]
        );
        assert_eq!(rg["filter"], "present");
        assert_eq!(rg["reason"], Json::Null);
        assert_eq!(rg["num_rows"], 1500);
        assert_eq!(rg["values"][0]["value"], "1");
        assert!(["maybe", "absent"].contains(&rg["values"][0]["result"].as_str().unwrap()));
    }
    // A plain INT32 column has no logical type: null.
    let o = sbbf(&[
        "probe",
        &file("pyarrow_int_types.parquet"),
        "i32",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(json_lines(&o)[0]["logical_type"], Json::Null);
}

#[test]
fn exit_status_tells_maybe_absent_and_errors() {
    // "hello" is in the parquet-testing file; a value never written is absent everywhere.
    let f = file("pt_data_index_bloom_encoding_with_length.parquet");
    let absent = "definitely-not-a-value-in-this-file-0123456789";
    assert_eq!(
        sbbf(&["probe", &f, "String", "Hello"]).status.code(),
        Some(0)
    );
    let o = sbbf(&["probe", &f, "String", absent]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("1 of 1 row group(s) can be skipped"));
    // Unknown column: exit 2 and the candidates.
    let o = sbbf(&["probe", &file("pyarrow_nested.parquet"), "b", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("s.b"), "{}", stderr(&o));
    // A value that does not parse: exit 2, says what was expected.
    let o = sbbf(&[
        "probe",
        &file("pyarrow_int_types.parquet"),
        "date",
        "31/01/2024",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("YYYY-MM-DD"), "{}", stderr(&o));
    // Not a Parquet file.
    let o = sbbf(&["probe", &file("bloom_filter.bin"), "x", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a Parquet file"), "{}", stderr(&o));
    // No such file.
    assert_eq!(
        sbbf(&["probe", "/no/such/file.parquet", "x", "1"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn values_that_look_like_options_are_values() {
    let f = file("pyarrow_float_bytes.parquet");
    // Negative numbers need nothing; other values that start with '-' go after `--`.
    for args in [
        vec!["probe", f.as_str(), "f64", "-0.0", "-1e5", "-1.5"],
        vec!["probe", "--", f.as_str(), "f64", "-0.0", "-inf", "-1.5"],
        vec![
            "probe",
            "--format",
            "json",
            "--",
            f.as_str(),
            "f64",
            "-0.0",
            "-inf",
            "-1.5",
        ],
        vec![
            "probe",
            f.as_str(),
            "f64",
            "-0.0",
            "-1e5",
            "-1.5",
            "--format",
            "json",
        ],
    ] {
        let o = sbbf(&args);
        assert!(
            o.status.code() == Some(0) || o.status.code() == Some(1),
            "{args:?}: {}",
            stderr(&o)
        );
        let out = stdout(&o);
        let third = if args.contains(&"-inf") {
            "-inf"
        } else {
            "-1e5"
        };
        assert!(
            out.contains(third) && out.contains("-1.5"),
            "{args:?}: {out}"
        );
    }
    // Without `--`, clap says how to pass it.
    let o = sbbf(&["probe", f.as_str(), "f64", "-inf"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--"), "{}", stderr(&o));
    let o = sbbf(&["probe", &file("pyarrow_int_types.parquet"), "i8", "-7"]);
    assert!(stdout(&o).contains("-7"), "{}", stderr(&o));
}

#[test]
fn a_nan_note_says_why_and_names_the_flag_that_tests_its_bits() {
    let f = file("pyarrow_float_bytes.parquet");
    let o = sbbf(&["probe", f.as_str(), "f64", "NaN"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let note = out
        .lines()
        .find(|l| l.trim_start().starts_with("note: `NaN`: NaN: "))
        .unwrap_or_else(|| panic!("no NaN note: {out}"));
    // The library's reason, then the command line's own hint, once.
    assert!(
        note.contains("filters cannot rule it out")
            && note.ends_with("(--exact-bits tests one bit pattern)")
            && note.matches("--exact-bits").count() == 1,
        "{note}"
    );
    // With the flag, the bits are probed: no note.
    let o = sbbf(&["probe", f.as_str(), "f64", "NaN", "--exact-bits"]);
    assert!(!stdout(&o).contains("note:"), "{}", stdout(&o));
}

#[test]
fn directories_and_globs() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    for name in ["pyarrow_v2_zstd.parquet", "duckdb_five_rowgroups.parquet"] {
        std::fs::copy(file(name), sub.join(name)).unwrap();
    }
    std::fs::write(dir.path().join("notes.txt"), "not parquet").unwrap();
    let o = sbbf(&[
        "probe",
        dir.path().to_str().unwrap(),
        "str",
        "x",
        "--format",
        "json",
    ]);
    assert_eq!(json_lines(&o).len(), 2, "{}", stderr(&o));
    let pattern = format!("{}/sub/*.parquet", dir.path().display());
    let o = sbbf(&["probe", &pattern, "str", "x", "--format", "json"]);
    assert_eq!(json_lines(&o).len(), 2, "{}", stderr(&o));
    let o = sbbf(&[
        "probe",
        &format!("{}/nothing*.parquet", dir.path().display()),
        "str",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn chunks_without_a_filter_are_unknown() {
    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    // arrow-rs writes no filters unless asked: two row groups, no filter anywhere.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.parquet");
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(10))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        schema.clone(),
        Some(props),
    )
    .unwrap();
    let batch = arrow::record_batch::RecordBatch::try_new(
        schema,
        vec![Arc::new(Int64Array::from((0..20).collect::<Vec<i64>>()))],
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let p = path.to_str().unwrap();
    let o = sbbf(&["probe", p, "id", "12345", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "no filter is never 'absent': {}",
        stdout(&o)
    );
    let j = &json_lines(&o)[0];
    let rgs = j["row_groups"].as_array().unwrap();
    assert_eq!(rgs.len(), 2);
    for rg in rgs {
        assert_eq!(rg["filter"], "missing");
        assert_eq!(rg["reason"], Json::Null);
        assert_eq!(rg["values"][0]["result"], "unknown");
    }
    let text = stdout(&sbbf(&["probe", p, "id", "12345"]));
    assert!(
        text.contains("`12345`: unknown in row group(s) 0, 1 (no Bloom filter)"),
        "{text}"
    );
    assert!(
        text.contains("0 of 2 row group(s) can be skipped"),
        "{text}"
    );
    // Out-of-range for INT64 is provably absent even without a filter.
    let o = sbbf(&["probe", p, "id", "99999999999999999999"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&sbbf(&["inspect", p]));
    assert!(text.contains("no Bloom filter"), "{text}");
}

#[test]
fn corrupt_filter_makes_its_row_group_unknown_and_inspect_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.parquet");
    let mut bytes = std::fs::read(file("pyarrow_v2_zstd.parquet")).unwrap();
    // Find the first filter of `i64` through inspect's JSON, then break its header.
    let o = sbbf(&[
        "inspect",
        &file("pyarrow_v2_zstd.parquet"),
        "--format",
        "json",
    ]);
    let j = &json_lines(&o)[0];
    assert_eq!(j["problems"], 0);
    assert_eq!(j["created_by"], "parquet-cpp-arrow version 26.0.1");
    let chunk = j["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["column"] == "i64" && c["row_group"] == 0)
        .unwrap();
    let offset = chunk["offset"].as_u64().unwrap() as usize;
    bytes[offset] = 0x16; // num_bytes as i64: wrong Thrift type
    std::fs::write(&path, &bytes).unwrap();
    let o = sbbf(&[
        "probe",
        path.to_str().unwrap(),
        "i64",
        "1",
        "--format",
        "json",
    ]);
    let j = &json_lines(&o)[0];
    let rgs = j["row_groups"].as_array().unwrap();
    assert_eq!(rgs[0]["filter"], "invalid");
    assert_eq!(rgs[0]["values"][0]["result"], "unknown");
    assert!(rgs[0]["reason"].as_str().unwrap().contains("num_bytes"));
    for rg in &rgs[1..] {
        assert_eq!(rg["filter"], "present");
    }
    let o = sbbf(&["inspect", path.to_str().unwrap()]);
    assert!(
        stdout(&o).contains("problem: field `num_bytes`"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn help_teaches() {
    let o = sbbf(&["probe", "--help"]);
    let h = stdout(&o);
    for needle in [
        "Examples:",
        "Exit status",
        "2024-01-31",
        "--exact-bits",
        "--format",
    ] {
        assert!(h.contains(needle), "probe --help lacks {needle}");
    }
    assert!(stdout(&sbbf(&["--help"])).contains("inspect"));
}

/// The CLI agrees with the reference readers: for every Parquet file of the conformance corpus and
/// every column, a sample of rows is probed through the binary with --exact-bits.
#[test]
fn cli_matches_reference_answers_on_a_sample() {
    let expected = conformance_expected();
    let mut checked = 0;
    for entry in std::fs::read_dir(&expected).unwrap() {
        let p = entry.unwrap().path();
        let f = std::fs::File::open(&p).unwrap();
        let mut by_col: BTreeMap<(String, String), Vec<Json>> = BTreeMap::new();
        for line in std::io::BufReader::new(GzDecoder::new(f)).lines() {
            let j: Json = serde_json::from_str(&line.unwrap()).unwrap();
            let Some(col) = j["column"].as_str() else {
                continue;
            };
            let key = (j["file"].as_str().unwrap().to_string(), col.to_string());
            let rows = by_col.entry(key).or_default();
            if rows.len() < 12 && !rows.iter().any(|r| r["value"] == j["value"]) {
                rows.push(j);
            }
        }
        for ((name, col), rows) in by_col {
            let mut args = vec![
                "probe".to_string(),
                "--exact-bits".into(),
                "--format".into(),
                "json".into(),
                "--".into(),
                file(&name),
                col.clone(),
            ];
            args.extend(
                rows.iter()
                    .map(|r| r["value"].as_str().unwrap().to_string()),
            );
            let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            let o = sbbf(&argv);
            assert!(o.status.code() != Some(2), "{name} {col}: {}", stderr(&o));
            let j = &json_lines(&o)[0];
            for (i, r) in rows.iter().enumerate() {
                let rg = &j["row_groups"][r["row_group"].as_u64().unwrap() as usize];
                let got = rg["values"][i]["result"].as_str().unwrap();
                let want = match r["arrowrs_says_maybe"].as_bool() {
                    Some(true) => "maybe",
                    Some(false) => "absent",
                    None => "unknown",
                };
                assert_eq!(got, want, "{name} {col} {:?}", r["value"]);
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} rows checked");
}

#[test]
fn values_from_a_file_or_stdin() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let f = file("pt_data_index_bloom_encoding_with_length.parquet");
    let absent = "definitely-not-a-value-in-this-file-0123456789";
    let dir = std::env::temp_dir().join(format!("sbbf-values-from-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("values.txt");
    // CRLF line ends are line breaks; the values themselves are taken as they are.
    std::fs::write(&list, format!("Hello\r\n{absent}\n")).unwrap();
    let list = list.to_str().unwrap();

    // The same answers as the values given as arguments, in the same order.
    let from_file = sbbf(&[
        "probe",
        &f,
        "String",
        "--values-from",
        list,
        "--format",
        "json",
    ]);
    let from_args = sbbf(&["probe", &f, "String", "Hello", absent, "--format", "json"]);
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    assert_eq!(json_lines(&from_file), json_lines(&from_args));
    // Arguments first, then the file's lines.
    let both = json_lines(&sbbf(&[
        "probe",
        &f,
        "String",
        "x",
        "--values-from",
        list,
        "--format",
        "json",
    ]));
    let values: Vec<&str> = both[0]["row_groups"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["x", "Hello", absent]);

    // `-` reads standard input; an absent-only list exits 1.
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbbf"))
        .args(["probe", &f, "String", "--values-from", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{absent}\n").as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 of 1 row group(s) can be skipped"));

    // Errors: a missing list, an empty one, and no values at all.
    let o = sbbf(&["probe", &f, "String", "--values-from", "/no/such/list.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/no/such/list.txt"), "{}", stderr(&o));
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let o = sbbf(&[
        "probe",
        &f,
        "String",
        "--values-from",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no values"), "{}", stderr(&o));
    assert_eq!(sbbf(&["probe", &f, "String"]).status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn symbolic_link_loops_visit_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    for name in ["pyarrow_v2_zstd.parquet", "duckdb_five_rowgroups.parquet"] {
        std::fs::copy(file(name), sub.join(name)).unwrap();
    }
    std::fs::copy(
        file("pyarrow_v2_zstd.parquet"),
        dir.path().join("top.parquet"),
    )
    .unwrap();
    std::os::unix::fs::symlink("..", sub.join("back")).unwrap();
    // A second name for one file is the same file.
    std::os::unix::fs::symlink("top.parquet", dir.path().join("alias.parquet")).unwrap();
    let d = dir.path().to_str().unwrap();
    let o = sbbf(&["probe", d, "str", "x", "--format", "json"]);
    let files: Vec<String> = json_lines(&o)
        .iter()
        .map(|j| j["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 3, "{files:?} {}", stderr(&o));
    let o = sbbf(&["inspect", d, "--format", "json"]);
    assert_eq!(json_lines(&o).len(), 3, "{}", stderr(&o));
}

#[test]
fn files_without_the_column_are_results_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        file("duckdb_five_rowgroups.parquet"),
        dir.path().join("a_new.parquet"),
    )
    .unwrap();
    std::fs::copy(
        file("pyarrow_float_bytes.parquet"),
        dir.path().join("b_old.parquet"),
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let o = sbbf(&["probe", d, "i32", "1", "--format", "json"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 2);
    let old = &lines[1];
    let keys: Vec<&str> = old
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "column",
            "file",
            "logical_type",
            "physical_type",
            "row_groups"
        ]
    );
    assert_eq!(old["row_groups"], serde_json::json!([]));
    assert_eq!(old["physical_type"], Json::Null);
    let text = stdout(&sbbf(&["probe", d, "i32", "1"]));
    assert!(
        text.contains("b_old.parquet: column `i32` not in this file"),
        "{text}"
    );
    // inspect and verify with --column: the same.
    let o = sbbf(&["inspect", d, "-c", "i32"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("column `i32` not in this file"),
        "{}",
        stdout(&o)
    );
    let o = sbbf(&["verify", d, "-c", "i32", "--samples", "10"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("b_old.parquet: column(s) not in this file: i32"),
        "{}",
        stdout(&o)
    );
    // In no file at all: an error (most likely a typo).
    let o = sbbf(&["probe", d, "i3", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no file has column `i3`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn closed_pipes_and_full_disks() {
    use std::process::{Command, Stdio};
    // Many files that fail: error lines on a standard error that is closed (`2>&1 | head -1`).
    let dir = tempfile::tempdir().unwrap();
    for i in 0..300 {
        std::fs::write(dir.path().join(format!("bad{i:03}.parquet")), "not parquet").unwrap();
    }
    for _ in 0..3 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sbbf"))
            .args(["probe", dir.path().to_str().unwrap(), "i", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_ne!(status.code(), Some(101), "panicked");
        assert!(status.code().is_some(), "killed: {status:?}");
    }
    // A full disk is an error, not success.
    let o = Command::new(env!("CARGO_BIN_EXE_sbbf"))
        .args(["probe", &file("duckdb_five_rowgroups.parquet"), "i32", "1"])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot write the output"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn probe_is_an_ordinary_word_outside_the_subcommand() {
    let o = sbbf(&["inspect", "probe"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("probe: no such file"), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.parquet");
    let o = sbbf(&[
        "add",
        &file("pyarrow_int_types.parquet"),
        "-c",
        "probe",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no column `probe`"), "{}", stderr(&o));
    // Negative numbers are values wherever they are, and options after them still work.
    let o = sbbf(&[
        "probe",
        &file("pyarrow_int_types.parquet"),
        "i8",
        "-7",
        "--format",
        "json",
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert_eq!(
        json_lines(&o)[0]["row_groups"][0]["values"][0]["value"],
        "-7"
    );
}

#[test]
fn inspect_exits_1_on_problems_and_flags_both_chunks_of_a_shared_filter() {
    let shared = repo_file("fixtures/corrupt/offset_shared_by_two_columns.parquet");
    let o = sbbf(&["inspect", &shared, "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j = &json_lines(&o)[0];
    let flagged: Vec<String> = j["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["problems"].as_array().unwrap().is_empty())
        .map(|c| format!("{} {}", c["row_group"], c["column"].as_str().unwrap()))
        .collect();
    assert_eq!(flagged, ["1 i8", "1 i16"]);
    let o = sbbf(&["inspect", &file("pyarrow_v2_zstd.parquet")]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&sbbf(&["inspect", "--help"])).contains("Exit status"));
}

fn repo_file(rel: &str) -> String {
    crate::common::repo()
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn text_output_is_one_line_per_value_with_totals() {
    let f = file("duckdb_five_rowgroups.parquet");
    let o = sbbf(&["probe", &f, "i32", "1", "999999999"]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // Header, one line per value, summary.
    assert_eq!(lines.len(), 4, "{out}");
    assert!(
        lines[2].starts_with("  `999999999`: absent in all 5"),
        "{out}"
    );
    // The table per row group on request.
    let out = stdout(&sbbf(&["probe", &f, "i32", "1", "--row-groups"]));
    assert_eq!(out.lines().filter(|l| l.contains("row group ")).count(), 5);
    // Values that would be invisible or ambiguous are quoted and escaped.
    let s = file("pt_data_index_bloom_encoding_with_length.parquet");
    let out = stdout(&sbbf(&["probe", &s, "String", "", " Hello", "a\tb", "x\n"]));
    for want in [
        "  \"\": ",
        "  \" Hello\": ",
        "  \"a\\tb\": ",
        "  \"x\\n\": ",
    ] {
        assert!(out.contains(want), "{want:?} in {out}");
    }
    // Several files: totals.
    let dir = tempfile::tempdir().unwrap();
    for n in ["a.parquet", "b.parquet"] {
        std::fs::copy(&f, dir.path().join(n)).unwrap();
    }
    let out = stdout(&sbbf(&["probe", dir.path().to_str().unwrap(), "i32", "1"]));
    assert!(
        out.contains("total: 2 file(s), 10 row group(s) with column `i32`"),
        "{out}"
    );
}

#[test]
fn json_has_an_error_object_for_a_file_that_fails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        file("duckdb_five_rowgroups.parquet"),
        dir.path().join("a.parquet"),
    )
    .unwrap();
    std::fs::write(dir.path().join("b.parquet"), "not parquet").unwrap();
    std::fs::copy(
        file("duckdb_five_rowgroups.parquet"),
        dir.path().join("c.parquet"),
    )
    .unwrap();
    let o = sbbf(&[
        "probe",
        dir.path().to_str().unwrap(),
        "i32",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), 3, "the run goes on");
    let keys: Vec<&str> = lines[1]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["error", "file"]);
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .contains("not a Parquet file"));
    assert!(lines[2]["row_groups"].is_array());
}

#[test]
#[cfg(feature = "object_store")]
fn http_404_is_one_line_without_retries() {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&requests);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let body = "<!DOCTYPE html>\n<html><body><h1>Not Found</h1>\n</body></html>\n";
            let _ = write!(
                conn,
                "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let url = format!("http://127.0.0.1:{port}/missing.parquet");
    let o = sbbf(&["probe", &url, "i", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("not found") && !e.contains("<html"), "{e}");
    assert_eq!(
        requests.load(Ordering::SeqCst),
        1,
        "one request, no retries"
    );
}

/// A build without object stores refuses their URLs with one line naming the feature, before
/// any request, and still reads `file://` URLs.
#[test]
#[cfg(not(feature = "object_store"))]
fn a_build_without_object_stores_refuses_their_urls() {
    for url in [
        "s3://bucket/x.parquet",
        "gs://b/t/",
        "az://c/t/",
        "https://example.com/x.parquet",
    ] {
        let o = sbbf(&["probe", url, "i", "1"]);
        assert_eq!(o.status.code(), Some(2), "{url}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains("features object_store") && e.contains(url),
            "{e}"
        );
    }
    let file = format!("file://{}", repo_file("testdata/pa_ints.parquet"));
    let o = sbbf(&["probe", &file, "i64", "-752296985104395475"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
#[cfg(feature = "object_store")]
fn an_http_s3_endpoint_needs_aws_allow_http() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sbbf"))
        .args(["probe", "s3://bucket/x.parquet", "i", "1"])
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
        .env("AWS_ACCESS_KEY_ID", "k")
        .env("AWS_SECRET_ACCESS_KEY", "s")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_ALLOW_HTTP")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("set AWS_ALLOW_HTTP=true"),
        "{}",
        stderr(&o)
    );
    let help = stdout(&sbbf(&["probe", "--help"]));
    assert!(help.contains("AWS_ALLOW_HTTP"), "{help}");
}

/// `--stats` reports the reads the library counted: the footer is one wave (the last 64 KiB,
/// local files read like objects), and filters within those bytes are read from them, no
/// wave of their own (in larger files, one wave of header and block reads when the footer
/// gives `bloom_filter_length`, two when it does not: `tests/parquet/s3.rs`).
#[test]
fn stats_count_requests_bytes_and_waves() {
    let td = crate::common::repo().join("testdata");
    for (name, waves) in [
        ("spark_int96_legacy.parquet", 1),
        ("spark_int96_legacy_nolength.parquet", 1),
    ] {
        let path = td.join(name);
        let o = sbbf(&[
            "probe",
            "--stats",
            "--format",
            "json",
            path.to_str().unwrap(),
            "i32",
            "5",
        ]);
        assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
        let j = &json_lines(&o)[0];
        let s = &j["stats"];
        assert_eq!(s["waves"], waves, "{name}: {s}");
        let file = std::fs::read(&path).unwrap();
        let footer = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap());
        let bytes = s["bytes"].as_u64().unwrap();
        // More than the footer (the filters' bytes came with it), far less than the file
        // beyond the 64 KiB read for the footer.
        assert!(
            bytes > footer as u64 + 8 && bytes < 65536 + file.len() as u64 / 4,
            "{name}: {s}"
        );
        assert!(s["requests"].as_u64().unwrap() >= waves, "{name}: {s}");
    }
    // Without --stats the documented shape has no `stats` key; text ends with the totals.
    let path = td.join("pa_ints.parquet");
    let plain = sbbf(&[
        "probe",
        "--format",
        "json",
        path.to_str().unwrap(),
        "i64",
        "42",
    ]);
    assert!(json_lines(&plain)[0].get("stats").is_none());
    let text = sbbf(&["probe", "--stats", path.to_str().unwrap(), "i64", "42"]);
    let last = stdout(&text).lines().last().unwrap().to_string();
    assert!(
        last.starts_with("reads: ") && last.contains(" 1 wave(s) in "),
        "{last}"
    );
}

/// A local directory is probed on every core, files at once, through the same path as an
/// object-store prefix; the output (order included) is the same for every `--concurrency`.
#[test]
fn local_directories_probe_files_at_once_in_a_stable_order() {
    let dir = conformance_files();
    let run = |n: &str| {
        let o = sbbf(&[
            "probe",
            "--format",
            "json",
            "--concurrency",
            n,
            dir.to_str().unwrap(),
            "i64",
            "42",
            "-1234567",
        ]);
        assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
        stdout(&o)
    };
    let one = run("1");
    let lines = one.lines().count();
    assert!(lines > 10, "{one}");
    let files: Vec<String> = one
        .lines()
        .map(|l| {
            serde_json::from_str::<Json>(l).unwrap()["file"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted);
    for n in ["2", "64"] {
        assert_eq!(run(n), one, "--concurrency {n}");
    }
}

/// A file of one INT64 column `id` holding `ids`, in row groups of 50, with arrow-rs' filters
/// or none.
fn write_ids(path: &std::path::Path, ids: std::ops::Range<i64>, filters: bool) {
    use arrow::array::{ArrayRef, Int64Array, RecordBatch};
    let ids: ArrayRef = std::sync::Arc::new(Int64Array::from(ids.collect::<Vec<_>>()));
    let batch = RecordBatch::try_from_iter([("id", ids)]).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_bloom_filter_enabled(filters)
        .set_max_row_group_row_count(Some(50))
        .build();
    let f = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(f, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn files_with_matches_lists_only_the_files_that_may_hold_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("sub")).unwrap();
    write_ids(&root.join("a.parquet"), 0..100, true);
    write_ids(&root.join("sub/b.parquet"), 100..200, true);
    // No filter: unknown, so it may hold anything and is listed.
    write_ids(&root.join("sub/c.parquet"), 0..10, false);
    let d = root.to_str().unwrap();
    let o = sbbf(&["probe", "-l", d, "id", "150"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let listed: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    // b holds 150 (how it was made) and c cannot say; whether a's filters pass 150 is asked
    // of arrow-rs's reader, not of ours.
    let a_maybe = {
        use parquet::file::properties::ReaderProperties;
        use parquet::file::reader::{FileReader, SerializedFileReader};
        use parquet::file::serialized_reader::ReadOptionsBuilder;
        let f = std::fs::File::open(root.join("a.parquet")).unwrap();
        let options = ReadOptionsBuilder::new()
            .with_reader_properties(
                ReaderProperties::builder()
                    .set_read_bloom_filter(true)
                    .build(),
            )
            .build();
        let r = SerializedFileReader::new_with_options(f, options).unwrap();
        (0..r.num_row_groups()).any(|rg| {
            let rg = r.get_row_group(rg).unwrap();
            let filter = rg.get_column_bloom_filter(0).expect("a has filters");
            filter.check(&150i64)
        })
    };
    let mut want: Vec<String> = Vec::new();
    if a_maybe {
        want.push(format!("{d}/a.parquet"));
    }
    want.extend([format!("{d}/sub/b.parquet"), format!("{d}/sub/c.parquet")]);
    assert_eq!(listed, want);
    // A value in no file with a filter is still listed for c; nothing else, no totals.
    let o = sbbf(&["probe", "-l", "--stats", d, "id", "-5"]);
    assert!(
        stdout(&o).lines().all(|l| l.ends_with("c.parquet")),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("reads:"), "{}", stderr(&o));
    // Only files with filters, the value in none: nothing listed, exit 1 as for probe.
    let o = sbbf(&["probe", "-l", &format!("{d}/a.parquet"), "id", "-5"]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(1), String::new()));
    let o = sbbf(&["probe", "-l", "--format", "json", d, "id", "1"]);
    assert_eq!(o.status.code(), Some(2), "-l and --format json conflict");
}

/// A file that cannot be read may hold the value: -l lists it, marked, so a script reading
/// the list sees it (not only stderr and the exit status).
#[test]
fn files_with_matches_lists_an_unreadable_file_marked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_ids(&root.join("a.parquet"), 0..100, true);
    std::fs::write(root.join("b.parquet"), "not parquet").unwrap();
    let d = root.to_str().unwrap();
    let o = sbbf(&["probe", "-l", d, "id", "-5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let (path, mark) = lines[0].split_once('\t').expect("a tab after the path");
    assert_eq!(path, format!("{d}/b.parquet"));
    assert!(
        mark.starts_with("(unreadable: ")
            && mark.contains("not a Parquet file")
            && mark.ends_with(')'),
        "{mark}"
    );
    assert!(stderr(&o).contains("b.parquet"), "{}", stderr(&o));
}

/// A value the column's type cannot hold is one error, exit 2, however many files: not one
/// line per file, and no totals of nothing ("absent in all 0 row group(s)").
#[test]
fn a_value_of_the_wrong_type_over_a_folder_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..5 {
        write_ids(&root.join(format!("f{i}.parquet")), 0..100, true);
    }
    let d = root.to_str().unwrap();
    let o = sbbf(&["probe", d, "id", "notanumber"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("notanumber"), "{err}");
    assert_eq!(stdout(&o), "", "no totals of nothing");
    // The same with -l: nothing listed (no row of an integer column equals it).
    let o = sbbf(&["probe", "-l", d, "id", "notanumber"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    // Beside a good value: still said once.
    let o = sbbf(&["probe", d, "id", "5", "notanumber"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

/// Over several files, probe shows the files done on stderr when it is a terminal (here the
/// pseudo-terminal of util-linux `script`), and nothing when it is not.
#[cfg(target_os = "linux")]
#[test]
fn probe_shows_progress_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..3 {
        write_ids(&root.join(format!("f{i}.parquet")), 0..100, true);
    }
    let d = root.to_str().unwrap();
    let o = sbbf(&["probe", "-l", d, "id", "5"]);
    assert_eq!(stderr(&o), "", "no bar without a terminal");
    let cmd = format!(
        "'{}' probe -l '{d}' id 5 > /dev/null",
        env!("CARGO_BIN_EXE_sbbf")
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("util-linux script");
    let shown = stdout(&o);
    assert!(shown.contains("probing files"), "{shown:?}");
    assert!(shown.contains("/3"), "{shown:?}");
}
