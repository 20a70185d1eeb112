//! `--footer-key`, `--column-key`, `--keys` on encrypted files; `inspect`'s leak detection.
//! Expected answers come from parquet-java (testdata/encrypted/answers), never from our code.

use crate::common::{sbbf, text};

fn file(name: &str) -> String {
    sbbf_testkit::testdata()
        .join("encrypted")
        .join(name)
        .display()
        .to_string()
}

/// The footer key and `secret`'s key of the arrow-rs and parquet-java files.
const SECRET_KEYS: [&str; 4] = [
    "--footer-key",
    "0123456789012345",
    "--column-key",
    "secret=1234567890123450",
];

const BLOOM: &str = "encrypt_columns_and_footer_bloom_filter.parquet.encrypted";

/// `(value as text, parquet-java says maybe)` for one column of the parquet-testing file.
fn pj_answers(column: &str) -> Vec<(String, bool)> {
    let tsv = std::fs::read_to_string(file("answers/encrypt_columns_and_footer_bloom_filter.tsv"))
        .unwrap();
    tsv.lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f[0] == column)
        .map(|f| (format!("0x{}", f[2]), f[4] == "1"))
        .collect()
}

#[test]
fn probe_with_keys_answers_as_parquet_java() {
    let keys = [
        "--footer-key",
        "0123456789012345",
        "--column-key",
        "double_field=1234567890123450",
        "--column-key",
        "float_field=0x31323334353637383930313233343531",
    ];
    // The same file on a web server: keys work for object stores too (one path for both).
    let server =
        sbbf_testkit::http::RangeServer::serve(&sbbf_testkit::testdata().join("encrypted"));
    let mut cases = vec![("double_field", file(BLOOM)), ("float_field", file(BLOOM))];
    if cfg!(feature = "object_store") {
        cases.push(("double_field", server.url(BLOOM)));
        cases.push(("float_field", server.url(BLOOM)));
    }
    for (column, f) in cases {
        let answers = pj_answers(column);
        assert!(answers.iter().any(|(_, m)| *m) && answers.iter().any(|(_, m)| !*m));
        let mut args = vec!["probe", "--hex", "--format", "json"];
        args.extend(keys);
        args.extend([f.as_str(), column]);
        args.extend(answers.iter().map(|(v, _)| v.as_str()));
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let line: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let rgs = line["row_groups"].as_array().unwrap();
        assert_eq!(rgs.len(), 1);
        let got = rgs[0]["values"].as_array().unwrap();
        assert_eq!(got.len(), answers.len());
        for (g, (v, maybe)) in got.iter().zip(&answers) {
            let want = if *maybe { "maybe" } else { "absent" };
            assert_eq!(g["result"], want, "{column} {v}");
        }
    }
}

#[test]
fn keys_from_a_json_file() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("keys.json");
    std::fs::write(
        &k,
        r#"{"footer": "0123456789012345", "columns": {"double_field": "1234567890123450"}}"#,
    )
    .unwrap();
    let (absent, _) = pj_answers("double_field")
        .into_iter()
        .find(|(_, m)| !*m)
        .unwrap();
    let o = sbbf(&[
        "probe",
        "--hex",
        "--keys",
        k.to_str().unwrap(),
        &file(BLOOM),
        "double_field",
        &absent,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("absent in all 1"),
        "{}",
        text(&o.stdout)
    );
    // float_field's key was not given: unknown, with the reason.
    let o = sbbf(&[
        "probe",
        "--keys",
        k.to_str().unwrap(),
        &file(BLOOM),
        "float_field",
        "1.5",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(
        out.contains(
            "unknown in row group(s) 0 (encrypted: the column key of `float_field` was not given)"
        ),
        "{out}"
    );
}

#[test]
fn without_keys_or_with_bad_keys_clear_errors() {
    let o = sbbf(&["probe", &file(BLOOM), "double_field", "1.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("encrypted"), "{}", text(&o.stderr));
    let o = sbbf(&[
        "probe",
        "--footer-key",
        "0123456789012349",
        &file(BLOOM),
        "double_field",
        "1.5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("the footer did not decrypt"),
        "{}",
        text(&o.stderr)
    );
    for bad in [
        vec!["--footer-key", "short"],
        vec!["--column-key", "double_field"],
        vec!["--column-key", "x=0xzz"],
    ] {
        let mut args = vec!["probe"];
        args.extend(bad.iter().copied());
        let f = file(BLOOM);
        args.extend([f.as_str(), "double_field", "1.5"]);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(text(&o.stderr).contains(bad[0]), "{}", text(&o.stderr));
    }
}

#[test]
fn inspect_flags_arrowrs_plaintext_filters_on_encrypted_columns() {
    let f = file("arrowrs_footer_leak.parquet.encrypted");
    let mut args = vec!["inspect"];
    args.extend(SECRET_KEYS);
    args.push(&f);
    let o = sbbf(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(
        out.matches(
            "problem: plaintext Bloom filter on encrypted column `secret`: reveals its values"
        )
        .count(),
        4,
        "{out}"
    );
    assert!(out.contains("4 problem(s) found"), "{out}");
    // Without keys, a plaintext footer: the leaking filters are found by their bytes.
    let o = sbbf(&[
        "inspect",
        "--format",
        "json",
        &file("arrowrs_plain_leak.parquet.encrypted"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let warnings = v["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 4, "{v}");
    assert!(warnings[0]
        .as_str()
        .unwrap()
        .starts_with("plaintext Bloom filter header at offset"));
    let secret: Vec<_> = v["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["column"] == "secret")
        .collect();
    assert_eq!(secret.len(), 4);
    assert!(secret.iter().all(|c| c["has_filter"].is_null()));
    // Without keys, an encrypted footer: an error, and the warnings all the same.
    let o = sbbf(&["inspect", &file("arrowrs_footer_leak.parquet.encrypted")]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert_eq!(
        err.matches("warning: plaintext Bloom filter header")
            .count(),
        12,
        "{err}"
    );
}

#[test]
fn inspect_parquet_java_files_with_keys() {
    for f in [
        "pjava_footer_gcm.parquet.encrypted",
        "pjava_plain_ctr.parquet.encrypted",
    ] {
        let path = file(f);
        let mut args = vec!["inspect", "--column-key", "name=1234567890123451"];
        args.extend(SECRET_KEYS);
        args.push(&path);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(0), "{f}: {}", text(&o.stdout));
        assert!(text(&o.stdout).contains("0 problem(s) found"));
    }
}

/// `verify` with keys decrypts the pages: the value counts are parquet-java's
/// (answers/<stem>.counts.tsv); without `name`'s key its chunks are listed as not verified and
/// the exit status is 2, never 0.
#[test]
fn verify_with_keys_decrypts_the_data() {
    for stem in ["pjava_plain_gcm", "pjava_footer_ctr"] {
        let path = file(&format!("{stem}.parquet.encrypted"));
        let mut args = vec![
            "verify",
            "--format",
            "json",
            "--column-key",
            "name=1234567890123451",
        ];
        args.extend(SECRET_KEYS);
        args.push(&path);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let counts = std::fs::read_to_string(file(&format!("answers/{stem}.counts.tsv"))).unwrap();
        let chunks = v["chunks"].as_array().unwrap();
        assert_eq!(chunks.len(), 16);
        for line in counts.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let c = chunks
                .iter()
                .find(|c| c["column"] == f[0] && c["row_group"] == f[1].parse::<u64>().unwrap())
                .unwrap();
            assert_eq!(c["values"].to_string(), f[2], "{stem} {line}");
            assert_eq!(c["distinct_values"].to_string(), f[3], "{stem} {line}");
            assert_eq!(c["false_negatives"], 0);
        }
        let mut args = vec!["verify"];
        args.extend(SECRET_KEYS);
        args.push(&path);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(2));
        let out = text(&o.stdout);
        assert_eq!(out.matches("NOT VERIFIED").count(), 4, "{out}");
        assert!(out.contains("column key of `name` was not given"), "{out}");
        assert!(text(&o.stderr).contains("4 column chunk(s) not verified"));
    }
}

/// `add` with keys builds filters in an encrypted file that has none; `verify` and `probe` with
/// the keys find every stored value, and the data before the old footer is unchanged.
#[test]
fn add_with_keys_builds_encrypted_filters() {
    let dir = tempfile::tempdir().unwrap();
    let input = file("encrypt_columns_and_footer_ctr.parquet.encrypted");
    let out = dir.path().join("added.parquet.encrypted");
    let out_s = out.to_str().unwrap();
    let keys = [
        "--footer-key",
        "0123456789012345",
        "--column-key",
        "double_field=1234567890123450",
    ];
    let mut args = vec![
        "add",
        &input,
        "-c",
        "double_field",
        "-c",
        "int32_field",
        "-o",
        out_s,
    ];
    args.extend(keys);
    let o = sbbf(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("2 filter(s)"),
        "{}",
        text(&o.stdout)
    );
    let original = std::fs::read(&input).unwrap();
    let written = std::fs::read(&out).unwrap();
    let n = original.len();
    let footer = n - 8 - u32::from_le_bytes(original[n - 8..n - 4].try_into().unwrap()) as usize;
    assert!(written[..footer] == original[..footer]);
    let mut args = vec!["verify", out_s, "-c", "double_field", "-c", "int32_field"];
    args.extend(keys);
    let o = sbbf(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        !text(&o.stdout).contains("(no filter)"),
        "{}",
        text(&o.stdout)
    );
    // A column whose key is not given: refused, nothing written.
    let other = dir.path().join("nothing");
    let mut args = vec![
        "add",
        &input,
        "-c",
        "float_field",
        "-o",
        other.to_str().unwrap(),
    ];
    args.extend(keys);
    let o = sbbf(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("column key of `float_field` was not given"),
        "{}",
        text(&o.stderr)
    );
    assert!(!other.exists());
}

#[test]
fn add_replace_with_keys_seals_the_leaking_filters() {
    let dir = tempfile::tempdir().unwrap();
    for stem in ["arrowrs_footer_leak", "arrowrs_plain_leak"] {
        let input = file(&format!("{stem}.parquet.encrypted"));
        let out = dir.path().join(format!("{stem}.sealed"));
        let out_s = out.to_str().unwrap();
        let original = std::fs::read(&input).unwrap();
        // Without --replace: refused, nothing written.
        let mut args = vec!["add", &input, "-c", "secret", "-o", out_s];
        args.extend(SECRET_KEYS);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(2));
        assert!(text(&o.stderr).contains("--replace"), "{}", text(&o.stderr));
        assert!(!out.exists());
        args.push("--replace");
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains("4 filter(s)"),
            "{}",
            text(&o.stdout)
        );
        // The input is untouched; the output inspects clean with the keys.
        assert!(std::fs::read(&input).unwrap() == original);
        let mut args = vec!["inspect", out_s];
        args.extend(SECRET_KEYS);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
        // And the sealed filters answer: a stored value (row 7) is "maybe" in row group 0.
        let v = (7 * 7919 + 13).to_string(); // (i * 7919 + 13) % 1000003 for row 7
        let mut args = vec!["probe", out_s, "secret", v.as_str()];
        args.extend(SECRET_KEYS);
        let o = sbbf(&args);
        assert_eq!(o.status.code(), Some(0));
        assert!(
            text(&o.stdout).contains("maybe in row group(s) 0"),
            "{}",
            text(&o.stdout)
        );
    }
}

#[test]
fn resize_with_keys_folds_encrypted_filters() {
    let dir = tempfile::tempdir().unwrap();
    let input = file("pjava_footer_ctr.parquet.encrypted");
    let out = dir.path().join("resized");
    let out_s = out.to_str().unwrap();
    let mut args = vec![
        "resize", &input, "--fpp", "0.05", "-c", "secret", "-o", out_s, "--format", "json",
    ];
    args.extend(SECRET_KEYS);
    let o = sbbf(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let filters = v["filters"].as_array().unwrap();
    assert_eq!(filters.len(), 4, "{v}");
    assert!(
        filters
            .iter()
            .all(|f| f["column"] == "secret"
                && f["bytes_after"].as_u64() < f["bytes_before"].as_u64())
    );
    let mut args = vec!["inspect", out_s, "-c", "secret", "--format", "json"];
    args.extend(SECRET_KEYS);
    let o = sbbf(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for c in v["chunks"].as_array().unwrap() {
        assert_eq!(c["bitset_bytes"], 512, "{c}");
        assert_eq!(c["encryption"], "column key", "{c}");
    }
    // Without keys: refused, as before.
    let o = sbbf(&["resize", &input, "--fpp", "0.05", "-o", out_s, "--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("encrypted"));
}
