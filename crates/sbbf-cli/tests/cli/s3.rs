//! `sbbf probe s3://...` against a real S3-compatible server (moto on a loopback port, started
//! by each test): same output, text and JSON, and exit codes as the local files.
//!
//! Needs `tools/.venv/bin/moto_server` (`bash tools/setup/setup-s3-test.sh`); fails without it.

#![cfg(feature = "object_store")]

use sbbf_testkit::moto;
use sbbf_testkit::{conformance_files, repo};

use moto::Moto;
use std::process::{Command, Output};

const BUCKET: &str = "sbbf-cli";

fn sbbf(moto: &Moto, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sbbf"));
    c.args(args);
    for (k, v) in moto.env() {
        c.env(k, v);
    }
    c.output().expect("run sbbf")
}

/// Stdout and stderr with the file location's prefix replaced by `<D>`, and the exit code.
fn normalized(out: &Output, prefix: &str) -> (String, String, Option<i32>) {
    let norm = |b: &[u8]| String::from_utf8_lossy(b).replace(prefix, "<D>");
    (norm(&out.stdout), norm(&out.stderr), out.status.code())
}

#[test]
fn remote_prefix_and_objects_match_local() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let td = repo().join("testdata");
    let conf = conformance_files();
    let td_names = moto.upload_dir(BUCKET, "data/td", &td);
    let conf_names = moto.upload_dir(BUCKET, "data/conf", &conf);
    assert!(td_names.len() >= 20 && conf_names.len() >= 10);

    // The local side of the comparison holds what was uploaded: testdata's own files, not the
    // conformance corpus in its subdirectory (a directory is walked recursively).
    let td_copy = tempfile::tempdir().unwrap();
    for name in &td_names {
        std::fs::copy(td.join(name), td_copy.path().join(name)).unwrap();
    }
    let td_local = td_copy.path().to_string_lossy().into_owned();
    let conf_local = conf.to_string_lossy().into_owned();
    let td_s3 = format!("s3://{BUCKET}/data/td");
    let conf_s3 = format!("s3://{BUCKET}/data/conf");

    // (local dir, remote prefix, column, values); `--format json` and text for each.
    let cases: Vec<(&str, &str, &str, Vec<&str>)> = vec![
        (
            &td_local,
            &td_s3,
            "i64",
            vec!["0", "1", "-1", "42", "123456789"],
        ),
        (&td_local, &td_s3, "date", vec!["2024-01-31", "1970-01-01"]),
        (&td_local, &td_s3, "s.b", vec!["hello", "b1"]),
        (&conf_local, &conf_s3, "i64", vec!["-1234567", "0", "7"]),
        (&conf_local, &conf_s3, "dec9_2", vec!["12.34", "-0.01"]),
        (&conf_local, &conf_s3, "i8", vec!["1000"]), // out of range: absent everywhere
    ];
    let mut compared = 0;
    for (local, remote, column, values) in &cases {
        for (remote_arg, format) in [(format!("{remote}/"), "json"), (remote.to_string(), "text")] {
            let mut args = vec!["probe", "--format", format, "--", local, column];
            args.extend(values.iter().copied());
            let want = sbbf(&moto, &args);
            args[4] = &remote_arg;
            let got = sbbf(&moto, &args);
            let want = normalized(&want, local);
            let got = normalized(&got, remote);
            assert_eq!(
                got, want,
                "{remote_arg} {column} {values:?} --format {format}"
            );
            assert!(
                want.0.lines().count() >= 2,
                "some file has `{column}`: {want:?}"
            );
            compared += 1;
        }
    }

    // Single objects, every local file of testdata: same JSON.
    for name in &td_names {
        let local = td.join(name);
        let local = local.to_string_lossy();
        let remote = format!("{td_s3}/{name}");
        let args = |f: &str| -> Vec<String> {
            ["probe", "--format", "json", f, "i32", "7", "-5"]
                .map(String::from)
                .to_vec()
        };
        let want = sbbf(
            &moto,
            &args(&local).iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        );
        let got = sbbf(
            &moto,
            &args(&remote).iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        );
        assert_eq!(
            normalized(&got, &remote),
            normalized(&want, &local),
            "{name}"
        );
        compared += 1;
    }
    println!("{compared} remote runs matched the local ones");
}

#[test]
fn remote_exit_codes_and_errors() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let td = repo().join("testdata");
    moto.upload_dir(BUCKET, "td", &td);
    let url = format!("s3://{BUCKET}/td/pa_ints.parquet");

    // Present somewhere: 0. Absent everywhere: 1 (same as the local file).
    let out = sbbf(&moto, &["probe", &url, "i8", "1000"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    // One object: the footer with its size in one suffix read (no HEAD), whose bytes hold
    // the filters too (pyarrow writes them just before the footer): one wave, one request.
    let out = sbbf(
        &moto,
        &["probe", "--stats", "--format", "json", &url, "i64", "42"],
    );
    let line: serde_json::Value =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(line["stats"]["waves"], 1, "{line}");
    assert_eq!(line["stats"]["requests"], 1, "{line}");

    // Files in flight change the pace, never the output (results come in path order).
    let prefix = format!("s3://{BUCKET}/td/");
    let one = sbbf(
        &moto,
        &["probe", "--concurrency", "1", &prefix, "i64", "42", "-1"],
    );
    let many = sbbf(
        &moto,
        &["probe", "--concurrency", "64", &prefix, "i64", "42", "-1"],
    );
    assert_eq!(one.status.code(), Some(0), "{one:?}");
    assert_eq!(
        (one.stdout, one.status.code()),
        (many.stdout, many.status.code())
    );
    let local = sbbf(
        &moto,
        &[
            "probe",
            td.join("pa_ints.parquet").to_str().unwrap(),
            "i8",
            "1000",
        ],
    );
    assert_eq!(local.status.code(), Some(1));

    // Nothing under the prefix: 2, naming the location.
    let out = sbbf(
        &moto,
        &["probe", &format!("s3://{BUCKET}/nothing/"), "i8", "1"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing") && err.contains("no *.parquet"),
        "{err}"
    );

    // A missing bucket: 2, with the store's error.
    let out = sbbf(
        &moto,
        &["probe", "s3://no-such-bucket/x.parquet", "i8", "1"],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!out.stderr.is_empty());

    // An object that is not Parquet: 2, named.
    moto.put(BUCKET, "junk/not.parquet", b"definitely not parquet");
    let out = sbbf(
        &moto,
        &["probe", &format!("s3://{BUCKET}/junk/"), "i8", "1"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("s3://{BUCKET}/junk/not.parquet"))
            && err.contains("not a Parquet file"),
        "{err}"
    );
}

#[test]
fn inspect_and_verify_take_object_store_urls_and_answer_as_local() {
    let moto = Moto::start();
    moto.create_bucket(BUCKET);
    let td = repo().join("testdata");
    let names = moto.upload_dir(BUCKET, "iv", &td);
    assert!(names.len() >= 20);
    let local = tempfile::tempdir().unwrap();
    for name in &names {
        std::fs::copy(td.join(name), local.path().join(name)).unwrap();
    }
    let local_dir = local.path().to_string_lossy().into_owned();
    let prefix = format!("s3://{BUCKET}/iv");
    for args in [
        vec!["inspect", "--format", "json"],
        vec!["inspect"],
        vec!["verify", "--samples", "50", "--format", "json"],
        vec!["verify", "--samples", "50", "-c", "i64", "-c", "nosuch"],
    ] {
        fn with<'a>(args: &[&'a str], root: &'a str) -> Vec<&'a str> {
            let mut a = vec![args[0], root];
            a.extend(&args[1..]);
            a
        }
        let ours = sbbf(&moto, &with(&args, &prefix));
        let theirs = sbbf(&moto, &with(&args, &local_dir));
        let (o, _, oc) = normalized(&ours, &format!("{prefix}/"));
        let (t, _, tc) = normalized(&theirs, &format!("{local_dir}/"));
        assert_eq!(
            oc,
            tc,
            "{args:?}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        assert!(!o.is_empty(), "{args:?}");
        assert_eq!(o, t, "{args:?}");
    }
    // One object by its URL.
    let one = sbbf(
        &moto,
        &[
            "inspect",
            &format!("{prefix}/pa_ints.parquet"),
            "--format",
            "json",
        ],
    );
    assert_eq!(
        one.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert!(String::from_utf8_lossy(&one.stdout).contains("\"chunks\""));
}

/// The LIST requests among `requests` (moto's log lines).
fn lists(requests: &[String]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| r.contains("list-type=2"))
        .cloned()
        .collect()
}

/// Uploads every file below `dir` (a lake table: data files, `_delta_log/`) under `prefix/`.
#[cfg(feature = "lake")]
fn upload_tree(moto: &Moto, bucket: &str, prefix: &str, dir: &std::path::Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() {
            upload_tree(moto, bucket, &format!("{prefix}/{name}"), &e.path());
        } else {
            moto.put(
                bucket,
                &format!("{prefix}/{name}"),
                &std::fs::read(e.path()).unwrap(),
            );
        }
    }
}

/// The data files `sbbf probe URL id 600` answers for, below `url`, and its table line.
#[cfg(feature = "lake")]
fn probed_files(moto: &Moto, url: &str, extra: &[&str]) -> (Vec<String>, serde_json::Value) {
    let mut args = vec!["probe", url, "id", "600", "--format", "json", "--no-index"];
    args.extend_from_slice(extra);
    let out = sbbf(moto, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = format!("{}/", url.trim_end_matches('/'));
    let mut files = Vec::new();
    let mut table = serde_json::Value::Null;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(t) = v.get("table") {
            table = t.clone();
        }
        if let Some(f) = v.get("file").and_then(|f| f.as_str()) {
            files.push(f.strip_prefix(&base).unwrap_or(f).to_string());
        }
    }
    files.sort();
    (files, table)
}

/// A Delta table under an S3 prefix is its snapshot, as on a local disk: deltalake's answer
/// for every version (testdata/lake's oracle), the folder only with `--as-directory`.
#[cfg(feature = "lake")]
#[test]
fn a_delta_table_on_s3_reads_as_its_snapshot() {
    let moto = Moto::start();
    moto.create_bucket("lake");
    let lake = repo().join("testdata/lake");
    upload_tree(&moto, "lake", "t/delta_basic", &lake.join("delta_basic"));
    let oracle = crate::lake::oracle("delta_basic");
    let files_of = |v: &serde_json::Value| -> Vec<String> {
        crate::lake::expected_files(v).into_iter().collect()
    };
    let versions = oracle["versions"].as_array().unwrap();
    for url in ["s3://lake/t/delta_basic/", "s3://lake/t/delta_basic"] {
        let (files, table) = probed_files(&moto, url, &[]);
        assert_eq!(files, files_of(versions.last().unwrap()), "{url}");
        assert_eq!(table["version"], oracle["current_version"], "{url}");
        assert_eq!(table["format"], "delta");
    }
    for v in versions {
        let version = v["version"].as_i64().unwrap().to_string();
        let (files, table) =
            probed_files(&moto, "s3://lake/t/delta_basic/", &["--as-of", &version]);
        assert_eq!(files, files_of(v), "version {version}");
        assert_eq!(table["version"], v["version"]);
    }
    let (files, table) = probed_files(&moto, "s3://lake/t/delta_basic/", &["--as-directory"]);
    assert_eq!(files.len(), 5, "{files:?}");
    assert!(table.is_null());
}

#[cfg(feature = "query")]
#[test]
fn a_query_of_a_delta_table_on_s3_counts_what_deltalake_counts() {
    let moto = Moto::start();
    moto.create_bucket("lake");
    let lake = repo().join("testdata/lake");
    upload_tree(
        &moto,
        "lake",
        "delta_partitioned",
        &lake.join("delta_partitioned"),
    );
    crate::lake::counts_at_every_version(
        "s3://lake/delta_partitioned/",
        "delta_partitioned",
        &|args| sbbf(&moto, args),
    );
    // The snapshot names the files: the data folder is never listed, only the log.
    let before = moto.requests().len();
    let out = sbbf(
        &moto,
        &[
            "query",
            "s3://lake/delta_partitioned/",
            "SELECT count(*) FROM t WHERE p = 'a'",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = moto.requests();
    let listed = lists(&requests[before..]);
    assert!(!listed.is_empty(), "the log is read: {requests:?}");
    assert!(
        listed
            .iter()
            .all(|r| r.contains("_delta_log") || r.contains("metadata")),
        "{listed:?}"
    );
    // Nor does building the table's index or probing through it: the log, the index's own
    // folder, nothing else.
    for args in [
        &["index", "build", "s3://lake/delta_partitioned/"][..],
        &["probe", "s3://lake/delta_partitioned/", "id", "6"][..],
    ] {
        let before = moto.requests().len();
        let out = sbbf(&moto, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let requests = moto.requests();
        let listed = lists(&requests[before..]);
        assert!(
            listed
                .iter()
                .all(|r| ["_delta_log", "metadata", "_sbbf_index"]
                    .iter()
                    .any(|k| r.contains(k))),
            "{args:?}: {listed:?}"
        );
    }
}

/// Opening a checkpointed Delta table on a store reads each log object once, whole: the
/// kernel asks for a checkpoint in several ranges one after another and for some commits
/// twice, each a round trip (19 requests in 16 waves before, on a table like this one). And
/// only what the snapshot needs: the log listed once (by finding the table: nothing else is
/// listed, and the checkpoint hint is not read, since a log of one listing page names its
/// newest checkpoint), the newest checkpoint and the commits after it, read ahead together.
#[cfg(feature = "lake")]
#[test]
fn a_delta_log_is_read_once_per_object() {
    let moto = Moto::start();
    moto.create_bucket("lake");
    let lake = repo().join("testdata/lake");
    upload_tree(&moto, "lake", "ckpt", &lake.join("delta_checkpoint"));
    let before = moto.requests().len();
    let out = sbbf(
        &moto,
        &[
            "probe",
            "s3://lake/ckpt/",
            "id",
            "150",
            "--no-index",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = moto.requests();
    // What the report says reading the log took is what the store saw: every GET (and HEAD)
    // of the log, every listing, and the bytes of the objects read whole.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first: serde_json::Value =
        serde_json::from_str(stdout.lines().next().unwrap_or_default()).unwrap();
    let said = &first["table"]["log_reads"];
    let of_log = |r: &&String| {
        (r.starts_with("GET /lake/ckpt/_delta_log/")
            || r.starts_with("HEAD /lake/ckpt/_delta_log/"))
            && !r.contains("list-type=2")
    };
    assert_eq!(
        said["gets"],
        requests[before..].iter().filter(of_log).count(),
        "{said} {:#?}",
        &requests[before..]
    );
    let lists = requests[before..]
        .iter()
        .filter(|r| r.contains("list-type=2"))
        .count();
    assert_eq!(said["lists"], lists, "{said} {:#?}", &requests[before..]);
    let sizes = crate::lake::checkpoint_snapshot_bytes();
    assert_eq!(said["bytes"], sizes, "{said}");
    let log_reads: Vec<&String> = requests[before..]
        .iter()
        .filter(|r| r.starts_with("GET /lake/ckpt/_delta_log/"))
        .collect();
    let distinct: std::collections::BTreeSet<&&String> = log_reads.iter().collect();
    assert_eq!(log_reads.len(), distinct.len(), "{log_reads:#?}");
    let checkpoint = log_reads
        .iter()
        .filter(|r| r.contains(".checkpoint.parquet"))
        .count();
    assert_eq!(checkpoint, 1, "{log_reads:#?}");
    let mut read: Vec<&str> = log_reads
        .iter()
        .filter_map(|r| r.split(' ').nth(1)?.strip_prefix("/lake/ckpt/_delta_log/"))
        .collect();
    read.sort_unstable();
    assert_eq!(
        read,
        [
            "00000000000000000011.checkpoint.parquet",
            "00000000000000000012.json",
            "00000000000000000013.json",
        ]
    );
    let log_lists = requests[before..]
        .iter()
        .filter(|r| r.contains("list-type=2") && r.contains("_delta_log"))
        .count();
    assert_eq!(log_lists, 1, "{:#?}", &requests[before..]);
    assert_eq!(lists, 1, "{:#?}", &requests[before..]);
}

/// A query whose key the snapshot's statistics place in one file of fourteen reads that file
/// only: no other footer, for the schema or for DataFusion's own statistics.
#[cfg(feature = "query")]
#[test]
fn a_query_reads_only_the_files_the_snapshot_statistics_leave() {
    let moto = Moto::start();
    moto.create_bucket("lake");
    let lake = repo().join("testdata/lake");
    upload_tree(&moto, "lake", "ckpt", &lake.join("delta_checkpoint"));
    let before = moto.requests().len();
    let sql = "SELECT count(*) AS n FROM t WHERE id = 150";
    let out = sbbf(
        &moto,
        &["query", "s3://lake/ckpt/", sql, "--format", "json"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"n":1}"#);
    let requests = moto.requests();
    let data: std::collections::BTreeSet<&str> = requests[before..]
        .iter()
        .filter(|r| r.starts_with("GET /lake/ckpt/") && !r.contains("_delta_log"))
        .filter(|r| !r.contains("_sbbf_index"))
        .map(|r| r.split(' ').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(data.len(), 1, "{data:#?}");
    // And read once: the tail the planning read for the file's filters (its last 64 KiB, the
    // whole of this small file) serves the scan's reads of its footer and pages.
    let gets = requests[before..]
        .iter()
        .filter(|r| data.iter().any(|d| r.split(' ').nth(1) == Some(*d)))
        .count();
    assert_eq!(gets, 1, "{:#?}", &requests[before..]);
    // Whether the table has an index is asked once (beside reading its log), not per scan.
    let index = requests[before..]
        .iter()
        .filter(|r| r.contains("_sbbf_index"))
        .count();
    assert_eq!(index, 1, "{:#?}", &requests[before..]);
}

/// `sbbf query` of a prefix lists it once: the table's registration lists it, and its scans,
/// the index's check and `--stats` take their files from that listing (before, a query over
/// an indexed prefix listed it three times, more past DataFusion's listing cache). Answers as
/// the same files on a local disk give.
#[cfg(feature = "query")]
#[test]
fn a_query_lists_a_prefix_once() {
    let moto = Moto::start();
    moto.create_bucket("once");
    let src = std::fs::read(repo().join("testdata/pa_ints.parquet")).unwrap();
    let local = tempfile::tempdir().unwrap();
    std::fs::create_dir(local.path().join("sub")).unwrap();
    for name in ["a.parquet", "b.parquet", "sub/c.parquet"] {
        moto.put("once", &format!("plain/{name}"), &src);
        std::fs::write(local.path().join(name), &src).unwrap();
    }
    let local = local.path().to_string_lossy().into_owned();
    let build = sbbf(&moto, &["index", "build", "s3://once/plain/", "-c", "i64"]);
    assert_eq!(
        build.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let data_lists = |requests: &[String]| -> Vec<String> {
        lists(requests)
            .into_iter()
            .filter(|r| {
                !["_delta_log", "metadata", "_sbbf_index"]
                    .iter()
                    .any(|k| r.contains(k))
            })
            .collect()
    };
    for value in ["42", "-752296985104395475", "7"] {
        let sql = format!("SELECT count(*) AS n FROM t WHERE i64 = {value}");
        for extra in [&["--stats"][..], &["--no-index"][..], &[][..]] {
            let before = moto.requests().len();
            let mut args = vec![
                "query",
                "s3://once/plain/",
                sql.as_str(),
                "--format",
                "json",
            ];
            args.extend_from_slice(extra);
            let out = sbbf(&moto, &args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let requests = moto.requests();
            let listed = data_lists(&requests[before..]);
            assert_eq!(listed.len(), 1, "{args:?}: {listed:#?}");
            args[1] = &local;
            let here = Command::new(env!("CARGO_BIN_EXE_sbbf"))
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&here.stdout),
                "{args:?}"
            );
        }
    }
}

/// `sbbf add TABLE` on a Delta table under an S3 prefix: each copy uploaded beside its
/// original (only if no object is there), the next log entry put only if absent; the table
/// then reads as the new version, every current file a copy with the filter, and a second run
/// commits nothing.
#[cfg(feature = "lake")]
#[test]
fn a_delta_table_on_s3_gets_filters_through_one_commit() {
    let moto = Moto::start();
    moto.create_bucket("lake");
    let lake = repo().join("testdata/lake");
    upload_tree(&moto, "lake", "t/dp", &lake.join("delta_partitioned"));
    let url = "s3://lake/t/dp/";
    let before = moto.requests().len();
    let out = sbbf(&moto, &["add", url, "-c", "s", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The table is found once (its log's first page says it is Delta): nothing asks whether
    // it is an Iceberg table, and the log's listing is read by finding it and by the commit's
    // own replay, not by a second finding.
    let requests = moto.requests();
    let listed = lists(&requests[before..]);
    assert!(
        !listed.iter().any(|r| r.contains("metadata")),
        "{listed:#?}"
    );
    let log_lists = listed.iter().filter(|r| r.contains("_delta_log")).count();
    assert_eq!(log_lists, 2, "{listed:#?}");
    let done: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(done["read_version"], 2, "{done}");
    assert_eq!(done["committed_version"], 3, "{done}");
    let copies: Vec<String> = done["swapped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["output"]
                .as_str()
                .unwrap()
                .strip_prefix(url)
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(copies.len(), 4);
    // The table now reads as version 3: its files are the copies.
    let (mut files, table) = probed_files(&moto, url, &[]);
    files.sort();
    let mut want = copies.clone();
    want.sort();
    assert_eq!(files, want);
    assert_eq!(table["version"], 3);
    // And every copy has the filter: a value in no file is ruled out by each (a file without
    // one would answer "unknown" and be listed).
    let out = sbbf(
        &moto,
        &["probe", url, "s", "nothing-like-this", "-l", "--no-index"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = sbbf(&moto, &["add", url, "-c", "s", "--format", "json"]);
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        again["committed_version"],
        serde_json::Value::Null,
        "{again}"
    );
}

/// On S3, an index built at version 13 of a checkpointed table answers version 14 (a commit
/// that removes one file) from the commits since alone: the log's listing and checkpoint hint
/// (finding the table) with the index's head beside them, then commit 14 with the index's
/// sections: two round trips before any data file, and no checkpoint or earlier commit read.
/// The answers are those of a probe without the index; the removed file is not named.
#[cfg(feature = "lake")]
#[test]
fn an_index_follows_a_delta_log_on_s3() {
    let moto = Moto::start();
    moto.create_bucket("lake");
    let lake = repo().join("testdata/lake/delta_checkpoint");
    upload_tree(&moto, "lake", "ckpt", &lake);
    let url = "s3://lake/ckpt/";
    // A commit written less than 2 s before the build gets no mark (it could be written again
    // within its clock's tick unseen), and the index would not follow the log.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let out = sbbf(&moto, &["index", "build", url, "-c", "id"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Commit 14 removes the file commit 13 added (ids 1300..1399).
    let added = std::fs::read_to_string(lake.join("_delta_log/00000000000000000013.json")).unwrap();
    let path = added
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| Some(v.get("add")?.get("path")?.as_str()?.to_string()))
        .unwrap();
    let commit = format!(
        "{}\n{}\n",
        r#"{"commitInfo":{"timestamp":1796311645990,"operation":"DELETE"}}"#,
        serde_json::json!({"remove": {"path": path, "deletionTimestamp": 1796311645990_i64,
            "dataChange": true}})
    );
    moto.put(
        "lake",
        "ckpt/_delta_log/00000000000000000014.json",
        commit.as_bytes(),
    );
    let before = moto.requests().len();
    let args = [
        "probe", url, "id", "150", "1350", "--format", "json", "--stats",
    ];
    let out = sbbf(&moto, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = moto.requests()[before..].to_vec();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let table = &lines[0]["table"];
    assert_eq!(
        (table["version"].as_i64(), table["log_since"].as_i64()),
        (Some(14), Some(13))
    );
    assert_eq!(table["files"], 13, "{table}");
    let files: Vec<&str> = lines[1..]
        .iter()
        .filter_map(|v| v.get("file")?.as_str())
        .collect();
    assert_eq!(files.len(), 13);
    assert!(!files.iter().any(|f| f.ends_with(&path)), "{files:?}");
    let st = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("index").cloned())
        .unwrap();
    assert_eq!(st["commits_since"], 1, "{st}");
    assert_eq!(st["from_index"], 13, "{st}");
    assert_eq!(st["waves"], 2, "{st}");
    // The log: commit 14, nothing else (its one listing page names every object).
    let mut read: Vec<&str> = requests
        .iter()
        .filter(|r| r.starts_with("GET /lake/ckpt/_delta_log/") && !r.contains("list-type=2"))
        .filter_map(|r| r.split(' ').nth(1)?.strip_prefix("/lake/ckpt/_delta_log/"))
        .collect();
    read.sort_unstable();
    assert_eq!(read, ["00000000000000000014.json"], "{requests:#?}");
    // No data file read: the index answered them all.
    assert!(
        !requests
            .iter()
            .any(|r| r.contains(".parquet") && !r.contains("list-type=2")),
        "{requests:#?}"
    );
    // The same answers as without the index (which reads the snapshot).
    let mut without = args.to_vec();
    without[7] = "--no-index";
    let out = sbbf(&moto, &without);
    let theirs: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answers = |lines: &[serde_json::Value]| {
        let mut a: Vec<(String, String)> = lines
            .iter()
            .filter_map(|v| {
                Some((
                    v.get("file")?.as_str()?.to_string(),
                    v["row_groups"].to_string(),
                ))
            })
            .collect();
        a.sort();
        a
    };
    assert_eq!(answers(&lines), answers(&theirs));
    assert_eq!(theirs[0]["table"]["version"], 14);
}

/// A query of an indexed Delta table on a store, whose files' minima and maxima cannot rule
/// a key out: with the index, only the file holding the key is read (no footer of the
/// others); without it, every file's footer and filter, in one request a file.
#[cfg(feature = "query")]
#[test]
fn a_query_of_an_indexed_delta_table_on_s3_opens_only_the_files_the_index_leaves() {
    let dir = tempfile::tempdir().unwrap();
    crate::lake::venv_json(
        crate::query_lake_index::DELTA_TABLES,
        &[dir.path().to_str().unwrap()],
    );
    let plain = dir.path().join("plain");
    let out = crate::common::sbbf(&["add", plain.to_str().unwrap(), "-c", "id"]);
    assert_eq!(out.status.code(), Some(0));
    let moto = Moto::start();
    moto.create_bucket("lake");
    upload_tree(&moto, "lake", "plain", &plain);
    let url = "s3://lake/plain/";
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let out = sbbf(&moto, &["index", "build", url, "-c", "id"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sql = "SELECT count(*) AS n FROM t WHERE id = 7";
    // GET requests per data file.
    let data_files = |extra: &[&str]| -> std::collections::BTreeMap<String, usize> {
        let before = moto.requests().len();
        let mut args = vec!["query", url, sql, "--format", "json"];
        args.extend_from_slice(extra);
        let out = sbbf(&moto, &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"n":1}"#);
        let mut files = std::collections::BTreeMap::new();
        for r in &moto.requests()[before..] {
            if r.starts_with("GET /lake/plain/") && r.contains(".parquet") {
                let path = r.split(' ').nth(1).unwrap_or_default().to_string();
                *files.entry(path).or_insert(0) += 1;
            }
        }
        files
    };
    assert_eq!(data_files(&[]).len(), 1);
    // Without the index, every file's footer and filter are read: one request of its last
    // bytes for each file (`sbbf add` puts the filters before the footer), and the file kept
    // is scanned from those bytes, no request more.
    let read = data_files(&["--no-index"]);
    assert_eq!(read.len(), 6, "{read:#?}");
    assert!(read.values().all(|n| *n == 1), "{read:#?}");
}

/// A query of an Iceberg table on a store whose index was built from its current snapshot:
/// the snapshot's files come from the index's file table, so neither its manifest list nor
/// a manifest is read, and its metadata file is read once. After an append (another
/// snapshot) the table is read from its manifests again, and the new rows are counted.
#[cfg(feature = "query")]
#[test]
fn a_query_of_an_indexed_iceberg_table_on_s3_reads_no_manifest_of_the_indexed_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let change = |args: &[&str]| -> serde_json::Value {
        let mut all = vec![root];
        all.extend_from_slice(args);
        crate::lake::venv_json(crate::lake_follow::ICEBERG_CHANGE, &all)
    };
    // Three appends of 100 ids, unpartitioned, no Bloom filters (pyiceberg writes none).
    let made = change(&["create"]);
    let folder = std::path::PathBuf::from(made["folder"].as_str().unwrap());
    let moto = Moto::start();
    moto.create_bucket("lake");
    upload_tree(&moto, "lake", "t", &folder);
    let url = "s3://lake/t/";
    let out = sbbf(
        &moto,
        &["index", "build", url, "-c", "id", "--build-missing"],
    );
    let err = |out: &Output| String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    // The count, and the table's objects each GET asked for.
    let query = |id: u32| -> (String, Vec<String>) {
        let before = moto.requests().len();
        let sql = format!("SELECT count(*) AS n FROM t WHERE id = {id}");
        let out = sbbf(&moto, &["query", url, &sql, "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", err(&out));
        let got = moto.requests()[before..]
            .iter()
            .filter(|r| r.starts_with("GET /lake/t/"))
            .map(|r| r.split(' ').nth(1).unwrap_or_default().to_string())
            .collect();
        (String::from_utf8_lossy(&out.stdout).trim().to_string(), got)
    };
    let (n, got) = query(150);
    assert_eq!(n, r#"{"n":1}"#);
    assert!(!got.iter().any(|g| g.ends_with(".avro")), "{got:#?}");
    let metadata = got.iter().filter(|g| g.ends_with(".metadata.json")).count();
    assert_eq!(metadata, 1, "{got:#?}");
    // Only the file holding 150 is read of the three.
    let data: std::collections::BTreeSet<_> =
        got.iter().filter(|g| g.ends_with(".parquet")).collect();
    assert_eq!(data.len(), 1, "{got:#?}");
    // A probe through the index follows the table from its snapshot: the same snapshot, so
    // neither its manifest list nor a manifest is read, and no data file.
    let before = moto.requests().len();
    let out = sbbf(&moto, &["probe", url, "id", "150", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches(r#""result":"maybe""#).count(), 1, "{stdout}");
    let got: Vec<String> = moto.requests()[before..]
        .iter()
        .filter(|r| r.starts_with("GET /lake/t/"))
        .cloned()
        .collect();
    assert!(
        !got.iter()
            .any(|g| g.contains(".avro") || g.contains(".parquet")),
        "{got:#?}"
    );

    // An append: the index's snapshot is no longer current; the new file is found through
    // the manifests, and the old ones still answer.
    let before = tree_files(&folder);
    change(&["append", "7001,7002"]);
    for rel in tree_files(&folder).difference(&before) {
        let key = format!("t/{rel}");
        moto.put("lake", &key, &std::fs::read(folder.join(rel)).unwrap());
    }
    let (n, got) = query(7001);
    assert_eq!(n, r#"{"n":1}"#);
    assert!(got.iter().any(|g| g.ends_with(".avro")), "{got:#?}");
    assert_eq!(query(150).0, r#"{"n":1}"#);
}

/// The files below `dir`, by their paths relative to it.
#[cfg(feature = "query")]
fn tree_files(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut todo = vec![(dir.to_path_buf(), String::new())];
    while let Some((at, rel)) = todo.pop() {
        for e in std::fs::read_dir(&at).unwrap() {
            let e = e.unwrap();
            let name = format!("{rel}{}", e.file_name().to_string_lossy());
            match e.file_type().unwrap().is_dir() {
                true => todo.push((e.path(), format!("{name}/"))),
                false => {
                    out.insert(name);
                }
            }
        }
    }
    out
}
