//! The corrupt-file suite (`fixtures/corrupt`, made by `tools/gen/gen_corrupt.py`) through the
//! binary: every file gives the outcome `expected.json` documents, nothing ever panics, and a
//! header's size claims cost no memory.

use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

use crate::common::{results, sbbf, text};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corrupt")
}

fn path(name: &str) -> String {
    dir().join(name).to_string_lossy().into_owned()
}

fn expected() -> Json {
    let text = std::fs::read_to_string(dir().join("expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json parses")
}

/// No panic and no abort, whatever the bytes: exit 0, 1 or 2 and no "panicked" on stderr.
fn check_no_panic(what: &str, o: &Output, failures: &mut Vec<String>) {
    let err = text(&o.stderr);
    match o.status.code() {
        Some(0..=2) => {}
        other => failures.push(format!("{what}: exit status {other:?}; stderr: {err}")),
    }
    if err.contains("panicked") {
        failures.push(format!("{what}: panicked: {err}"));
    }
}

fn probe_json(file: &str, column: &str, values: &[String]) -> (Output, Option<Json>) {
    let mut args = vec!["probe", "--format", "json", "--", file, column];
    args.extend(values.iter().map(String::as_str));
    let o = sbbf(&args);
    let j = serde_json::from_slice(&o.stdout).ok();
    (o, j)
}

#[test]
fn every_corrupt_file_gives_its_documented_outcome() {
    let exp = expected();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, e) in exp["files"].as_object().unwrap() {
        let file = path(name);
        checked += 1;
        if let Some(msg) = e["unreadable"].as_str() {
            for args in [
                vec!["probe", "--format", "json", "--", &file, "i8", "1"],
                vec!["inspect", "--format", "json", &file],
            ] {
                let o = sbbf(&args);
                let what = format!("{name}: {}", args[0]);
                check_no_panic(&what, &o, &mut failures);
                let err = text(&o.stderr);
                // On stdout, the file's error object and nothing else.
                let error_object =
                    serde_json::from_slice::<Json>(&o.stdout)
                        .ok()
                        .is_some_and(|j| {
                            j.as_object().is_some_and(|m| m.len() == 2)
                                && j["file"] == file.as_str()
                                && j["error"].as_str().is_some_and(|e| e.contains(msg))
                        });
                if o.status.code() != Some(2) || !err.contains(msg) || !error_object {
                    failures.push(format!(
                        "{what}: want exit 2 and {msg:?} on stderr, got {:?}: {err}",
                        o.status.code()
                    ));
                }
            }
            continue;
        }
        let base = e["base"].as_str().unwrap();
        let column = e["column"].as_str().unwrap();
        let values: Vec<String> = exp["bases"][base]["values"][column]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let (o, got) = probe_json(&file, column, &values);
        check_no_panic(&format!("{name}: probe"), &o, &mut failures);
        let (_, want) = probe_json(&path(base), column, &values);
        let (Some(got), Some(want)) = (got, want) else {
            failures.push(format!("{name}: probe gave no JSON: {}", text(&o.stderr)));
            continue;
        };
        let got_rgs = got["row_groups"].as_array().unwrap();
        let want_rgs = want["row_groups"].as_array().unwrap();
        if got_rgs.len() != want_rgs.len() {
            failures.push(format!("{name}: {} row groups", got_rgs.len()));
            continue;
        }
        let mut any_not_absent = false;
        for (i, (g, w)) in got_rgs.iter().zip(want_rgs).enumerate() {
            let key = i.to_string();
            let res = results(g);
            any_not_absent |= res.iter().any(|r| r != "absent");
            let what = format!("{name}: row group {i}");
            if let Some(reason) = e["invalid"][&key].as_str() {
                // A bad filter: "unknown" for every value (never "absent"), with the reason.
                let got_reason = g["reason"].as_str().unwrap_or("");
                if g["filter"] != "invalid" || !got_reason.contains(reason) {
                    failures.push(format!("{what}: want invalid with {reason:?}, got {g}"));
                }
                if res.iter().any(|r| r != "unknown") {
                    failures.push(format!("{what}: a bad filter answered {res:?}"));
                }
            } else if let Some(forced) = e["forced"][&key].as_str() {
                if g["filter"] != "present" || res.iter().any(|r| r != forced) {
                    failures.push(format!("{what}: want every value {forced}, got {g}"));
                }
            } else if e["foreign"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r.as_str() == Some(&key))
            {
                // Another column's valid filter: undetectable by probe (see expected.json).
                if g["filter"] != "present" {
                    failures.push(format!("{what}: want present (foreign filter), got {g}"));
                }
            } else if g != w {
                // Every other row group still answers, exactly as in the uncorrupted file.
                failures.push(format!("{what}: got {g}, the base file says {w}"));
            }
        }
        let want_code = if any_not_absent { 0 } else { 1 };
        if o.status.code() != Some(want_code) {
            failures.push(format!(
                "{name}: probe exit {:?}, want {want_code}",
                o.status.code()
            ));
        }

        // inspect names each problem on its chunk, and no problem elsewhere; it exits 1 when
        // it found some.
        let o = sbbf(&["inspect", "--format", "json", &file]);
        check_no_panic(&format!("{name}: inspect"), &o, &mut failures);
        let want_code = if e["problems"].as_array().unwrap().is_empty() {
            0
        } else {
            1
        };
        if o.status.code() != Some(want_code) {
            failures.push(format!(
                "{name}: inspect exit {:?}: {}",
                o.status.code(),
                text(&o.stderr)
            ));
            continue;
        }
        let j: Json = serde_json::from_slice(&o.stdout).expect("inspect JSON");
        let listed: Vec<(u64, String, String)> = e["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p[0].as_u64().unwrap(),
                    p[1].as_str().unwrap().to_string(),
                    p[2].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let mut total = 0;
        for c in j["chunks"].as_array().unwrap() {
            let rg = c["row_group"].as_u64().unwrap();
            let col = c["column"].as_str().unwrap();
            let problems: Vec<&str> = c["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect();
            total += problems.len();
            let mine: Vec<&str> = listed
                .iter()
                .filter(|(r, c, _)| *r == rg && c == col)
                .map(|(_, _, t)| t.as_str())
                .collect();
            for want in &mine {
                if !problems.iter().any(|p| p.contains(want)) {
                    failures.push(format!(
                        "{name}: inspect of row group {rg} `{col}` should name {want:?}, says {problems:?}"
                    ));
                }
            }
            if mine.is_empty() && !problems.is_empty() {
                failures.push(format!(
                    "{name}: inspect reports problems on a healthy chunk (row group {rg} `{col}`): {problems:?}"
                ));
            }
        }
        if j["problems"].as_u64() != Some(total as u64) {
            failures.push(format!("{name}: inspect's problem count is off"));
        }
    }
    assert!(checked >= 60, "only {checked} files in expected.json");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fixture_is_documented() {
    let exp = expected();
    let documented: BTreeSet<String> = exp["files"]
        .as_object()
        .unwrap()
        .keys()
        .chain(exp["bases"].as_object().unwrap().keys())
        .cloned()
        .collect();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".parquet") {
            assert!(documented.contains(&name), "{name} is not in expected.json");
        }
    }
}

/// The small base files answer exactly like the testdata files they were cut from.
#[test]
fn bases_answer_like_their_sources() {
    let exp = expected();
    for (base, b) in exp["bases"].as_object().unwrap() {
        let from = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(b["from"].as_str().unwrap());
        for (column, values) in b["values"].as_object().unwrap() {
            let values: Vec<String> = values
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let (_, mini) = probe_json(&path(base), column, &values);
            let (_, full) = probe_json(&from.to_string_lossy(), column, &values);
            let (mini, full) = (mini.unwrap(), full.unwrap());
            let mini = mini["row_groups"].as_array().unwrap();
            let full = full["row_groups"].as_array().unwrap();
            assert!(mini.len() >= 2 && mini.len() <= full.len());
            for (m, f) in mini.iter().zip(full) {
                assert_eq!(m, f, "{base} `{column}`");
                assert_eq!(m["filter"], "present");
            }
            // The values cover a "maybe" in every row group and one value absent everywhere.
            for (i, m) in mini.iter().enumerate() {
                assert_eq!(results(m)[i], "maybe", "{base} `{column}` row group {i}");
                assert_eq!(results(m).last().unwrap(), "absent");
            }
        }
    }
}

/// Text output goes through other code paths: it must not panic either.
#[test]
fn text_output_never_panics() {
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|e| e != "parquet") {
            continue;
        }
        let file = p.to_string_lossy().into_owned();
        for column in ["i8", "i16", "date", "time_ms"] {
            let o = sbbf(&["probe", "--", &file, column, "1", "-1", "0x00"]);
            check_no_panic(&format!("{file} probe {column}"), &o, &mut failures);
        }
        let o = sbbf(&["inspect", &file]);
        check_no_panic(&format!("{file} inspect"), &o, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the binary with its address space limited to `kib` KiB.
fn sbbf_limited(kib: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        // The data limit (heap and anonymous mappings), not the address space: the binary's
        // own mapping (near 1 GB for a debug build with DataFusion) does not count.
        .arg(format!("ulimit -d {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_sbbf"))
        .args(args)
        .output()
        .expect("run sh")
}

/// Headers that claim 2 GiB or 128 MiB (in a file of about 10 KB), footers that claim 2^28
/// schema elements or a 128 MiB filter length: under a 64 MiB data limit, below
/// what any one of these claims would take, the answers are unchanged.
#[cfg(unix)]
#[test]
fn size_claims_cost_no_memory() {
    let limit_kib: u64 = 64 * 1024;
    let exp = expected();
    // The binary itself runs under the limit.
    let base = "base_pa_ints.parquet";
    let o = sbbf_limited(limit_kib, &["probe", &path(base), "i8", "-126"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for name in [
        "num_bytes_2gib.parquet",
        "num_bytes_2gib_nolength.parquet",
        "num_bytes_128mib.parquet",
        "num_bytes_128mib_nolength.parquet",
        "num_bytes_128mib_length_claims_it.parquet",
        "num_bytes_over_128mib.parquet",
        "length_past_end.parquet",
        "huge_binary_claim.parquet",
    ] {
        let e = &exp["files"][name];
        let base = e["base"].as_str().unwrap();
        let column = e["column"].as_str().unwrap();
        let values: Vec<&str> = exp["bases"][base]["values"][column]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let file = path(name);
        assert!(std::fs::metadata(&file).unwrap().len() < 16 * 1024);
        let mut args = vec!["probe", "--format", "json", "--", &file, column];
        args.extend(&values);
        let o = sbbf_limited(limit_kib, &args);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{name}: exit {:?}: {}",
            o.status.code(),
            text(&o.stderr)
        );
        let j: Json = serde_json::from_slice(&o.stdout).unwrap();
        let rg1 = &j["row_groups"][1];
        assert_eq!(rg1["filter"], "invalid", "{name}: {rg1}");
        assert!(results(rg1).iter().all(|r| r == "unknown"), "{name}");
        // The other row groups answer as in the uncorrupted file.
        let base_file = path(base);
        let mut args = vec!["probe", "--format", "json", "--", &base_file, column];
        args.extend(&values);
        let want: Json = serde_json::from_slice(&sbbf(&args).stdout).unwrap();
        for rg in [0, 2] {
            assert_eq!(j["row_groups"][rg], want["row_groups"][rg], "{name}");
        }
        let o = sbbf_limited(limit_kib, &["inspect", "--format", "json", &file]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o.stderr));
    }
    // Footers whose counts parquet's decoder would reserve memory for (the schema ones aborted
    // the process before the footer check: a fuzzed file asked for 9.6 GB).
    for name in [
        "footer_huge_list.parquet",
        "footer_schema_children.parquet",
        "footer_schema_varint.parquet",
    ] {
        for cmd in ["probe", "inspect"] {
            let file = path(name);
            let mut args = vec![cmd, file.as_str()];
            if cmd == "probe" {
                args.extend(["i8", "1"]);
            }
            let o = sbbf_limited(limit_kib, &args);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{name} {cmd}: {}",
                text(&o.stderr)
            );
            assert!(
                text(&o.stderr).contains("cannot read the Parquet footer"),
                "{name} {cmd}: {}",
                text(&o.stderr)
            );
        }
    }
}

/// Value texts the fuzzer found panicking (fuzz/corpus/value_text/regression-*): a clear
/// error (exit 2), never a panic.
#[test]
fn fuzzed_value_texts_are_errors_not_panics() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pa_temporal.parquet");
    let file = file.to_string_lossy().into_owned();
    // A UTC offset whose digits are not ASCII used to be sliced inside a character.
    for (column, value) in [
        ("ts_us_utc", "-2-01-31Tq-01-3\u{4d5}1"),
        ("ts_ns", "2024-01-31T12:00:00+\u{e9}1"),
        ("ts_ms_utc", "2024-01-31T12:00:00-1\u{1f600}"),
    ] {
        let o = sbbf(&["probe", "--", &file, column, value]);
        let mut failures = Vec::new();
        check_no_panic(&format!("{column} {value:?}"), &o, &mut failures);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert_eq!(o.status.code(), Some(2), "{column} {value:?}");
        let err = text(&o.stderr);
        assert!(err.contains("cannot read"), "{err}");
    }
}
