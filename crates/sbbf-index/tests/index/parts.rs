//! An index built in parts (one per worker) and merged answers as the index one process
//! builds, and as direct probes of every file; parts that do not belong together are refused
//! with the reason, and nothing is written.

use crate::common::{direct, indexed, table, write_file};
use sbbf_index::build::{build, BuildOptions};
use sbbf_index::part::{build_part, merge};
use sbbf_index::{Error, Root};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn value_sets() -> Vec<Vec<String>> {
    let mut sets: Vec<Vec<String>> = (0..41i64)
        .map(|k| vec![(k * 1000 + 11).to_string()])
        .collect();
    sets.extend((0..40i64).map(|x| vec![(7_000_000 + x * 15_485_863).to_string()]));
    sets.push((0..30).map(|x| (x * 1313).to_string()).collect());
    sets
}

/// The table of `common::table` plus `p40.parquet`, which has `id` without a filter: such a
/// file is "not covered" by the index (probed directly), never "without the column".
fn table_with_a_file_without_filters(dir: &Path) {
    table(dir);
    write_file(&dir.join("p40.parquet"), 40, 90, 2, 0);
    sbbf_testkit::settle(dir);
}

/// Builds one part per slice of `files` into `out`, with `options`.
async fn parts(
    root: &Root,
    files: &[Vec<String>],
    options: &BuildOptions,
    out: &Path,
) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for (k, f) in files.iter().enumerate() {
        let p = out.join(format!("part{k}.sbbfpart"));
        let r = build_part(root, f, options, &p).await.unwrap();
        assert_eq!((r.files, r.files_read, r.racy), (f.len(), f.len(), 0));
        paths.push(p);
    }
    paths
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|k| format!("p{k:02}.parquet")).collect()
}

/// Round robin over `tasks` workers, as a scheduler might hand them out.
fn split(files: &[String], tasks: usize) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); tasks];
    for (i, f) in files.iter().enumerate() {
        out[i % tasks].push(f.clone());
    }
    out
}

type Answers = Vec<BTreeMap<String, Option<Vec<usize>>>>;

async fn answers(root: &Root, column: &str) -> Answers {
    let mut out = Vec::new();
    for vals in value_sets() {
        let vals: Vec<String> = if column == "name" {
            vals.iter().map(|v| format!("n{v}")).collect()
        } else {
            vals
        };
        out.push(indexed(root, column, &vals).await);
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn merged_parts_answer_as_one_build() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    table_with_a_file_without_filters(&dir);
    let d = dir.to_str().unwrap();
    let root = Root::open(d).unwrap().unwrap();
    let index = dir.join("_sbbf_index/index.sbbfi");
    for options in [
        BuildOptions::default(),
        BuildOptions {
            columns: vec!["id".into()],
            fpp: Some(0.2),
            ..BuildOptions::default()
        },
    ] {
        build(&root, &options).await.unwrap();
        let (one, one_bytes) = root.load_whole().await.unwrap().unwrap();
        let one_id = answers(&root, "id").await;
        let one_name = answers(&root, "name").await;
        std::fs::remove_file(&index).unwrap();

        let out = tempfile::tempdir().unwrap();
        for tasks in [1, 3, 41] {
            let ps = parts(&root, &split(&names(41), tasks), &options, out.path()).await;
            let r = merge(&root, &ps).await.unwrap();
            assert_eq!(
                (r.parts, r.files_listed, r.files_covered, r.files_missing),
                (tasks, 41, 41, 0)
            );
            assert_eq!(
                (r.files_stale, r.files_gone, r.files_not_covered),
                (0, 0, 0)
            );
            let (merged, merged_bytes) = root.load_whole().await.unwrap().unwrap();
            // Byte for byte the one-process index: the same groups, file table and column
            // sections, and the same head but for the time it was written.
            let at = sbbf_index::format::parse_trailer(&one_bytes, one.len)
                .unwrap()
                .dir_offset as usize;
            assert_eq!(one_bytes[..at], merged_bytes[..at], "{tasks} tasks");
            let mut same_time = merged.directory.clone();
            same_time.created_ms = one.directory.created_ms;
            assert_eq!(same_time, one.directory);
            let (a, b) = (&one.directory, &merged.directory);
            assert_eq!(a.files, b.files);
            assert_eq!(a.types.len(), b.types.len());
            assert_eq!(a.explicit_columns, b.explicit_columns);
            assert_eq!(a.target_fpp, b.target_fpp);
            let cols = |d: &sbbf_index::format::Directory| -> Vec<String> {
                d.columns.iter().map(|c| c.path.clone()).collect()
            };
            assert_eq!(cols(a), cols(b));
            assert_eq!(answers(&root, "id").await, one_id, "{tasks} tasks");
            if options.columns.is_empty() {
                assert_eq!(answers(&root, "name").await, one_name, "{tasks} tasks");
            }
            for p in ps {
                std::fs::remove_file(p).unwrap();
            }
        }
        // The exact index is also the files' own answers (p40, without a filter on `id`, is
        // probed directly: `None`).
        if options.fpp.is_none() {
            for (vals, got) in value_sets().iter().zip(&one_id) {
                let want = direct(d, "id", vals).await;
                for (name, maybe) in &want {
                    let wanted: Vec<usize> = (0..maybe.len()).filter(|&i| maybe[i]).collect();
                    if name.ends_with("p40.parquet") {
                        assert_eq!(got[name], None);
                    } else {
                        assert_eq!(got[name].as_ref(), Some(&wanted), "{name} {vals:?}");
                    }
                }
            }
        }
        std::fs::remove_file(&index).unwrap();
    }
}

/// Merging reads no data file: files changed since their part, and files no part was given,
/// are left out (probed directly), gone ones dropped.
#[tokio::test(flavor = "multi_thread")]
async fn merge_leaves_out_what_changed() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    table(&dir);
    let root = Root::open(dir.to_str().unwrap()).unwrap().unwrap();
    let out = tempfile::tempdir().unwrap();
    let all = names(40);
    // p39 is in no part.
    let ps = parts(
        &root,
        &split(&all[..39], 4),
        &BuildOptions::default(),
        out.path(),
    )
    .await;
    // p00 changes, p01 goes.
    write_file(&dir.join("p00.parquet"), 77, 61, 1, 100);
    std::fs::remove_file(dir.join("p01.parquet")).unwrap();
    let r = merge(&root, &ps).await.unwrap();
    assert_eq!(
        (
            r.files_listed,
            r.files_covered,
            r.files_stale,
            r.files_missing,
            r.files_gone
        ),
        (39, 37, 1, 1, 1)
    );
    let got = indexed(&root, "id", &["77005".to_string()]).await;
    let p00 = dir.join("p00.parquet").display().to_string();
    let p39 = dir.join("p39.parquet").display().to_string();
    // Not in the index: probed directly (None), so the new value is found.
    assert_eq!(got[&p00], None);
    assert_eq!(got[&p39], None);
    assert_eq!(got.values().filter(|v| v.is_some()).count(), 37);
}

fn refused(r: Result<sbbf_index::report::MergeReport, Error>, why: &str) {
    match r {
        Err(e @ (Error::Invalid(_) | Error::PartsDiffer { .. })) => {
            let m = e.to_string();
            assert!(m.contains(why), "{m:?} lacks {why:?}")
        }
        other => panic!("{other:?}: not refused ({why})"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mismatched_parts_are_refused_with_the_reason() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    table(&dir);
    let other = td.path().join("u");
    table(&other);
    let root = Root::open(dir.to_str().unwrap()).unwrap().unwrap();
    let root_u = Root::open(other.to_str().unwrap()).unwrap().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let part = |name: &str| o.join(name);
    let f = |r: std::ops::Range<usize>| names(40)[r].to_vec();
    let plain = BuildOptions::default();
    build_part(&root, &f(0..20), &plain, &part("a.sbbfpart"))
        .await
        .unwrap();
    build_part(&root, &f(20..40), &plain, &part("b.sbbfpart"))
        .await
        .unwrap();
    build_part(&root, &f(19..21), &plain, &part("overlap.sbbfpart"))
        .await
        .unwrap();
    let id_only = BuildOptions {
        columns: vec!["id".into()],
        ..BuildOptions::default()
    };
    build_part(&root, &f(20..40), &id_only, &part("c-id.sbbfpart"))
        .await
        .unwrap();
    let folded = BuildOptions {
        fpp: Some(0.1),
        ..BuildOptions::default()
    };
    build_part(&root, &f(20..40), &folded, &part("fpp.sbbfpart"))
        .await
        .unwrap();
    build_part(&root_u, &f(20..40), &plain, &part("other.sbbfpart"))
        .await
        .unwrap();
    let bytes = std::fs::read(part("b.sbbfpart")).unwrap();
    let mut flipped = bytes.clone();
    flipped[40] ^= 0x10; // a group's bits
    std::fs::write(part("flipped.sbbfpart"), &flipped).unwrap();
    let mut manifest = bytes.clone();
    let n = manifest.len();
    manifest[n - 30] ^= 0x01; // the manifest
    std::fs::write(part("manifest.sbbfpart"), &manifest).unwrap();
    std::fs::write(part("short.sbbfpart"), &bytes[..bytes.len() - 9]).unwrap();
    // Another part format version (the part trailer's), another index format version (the
    // embedded index's header).
    let mut v2 = bytes.clone();
    v2[n - 12..n - 8].copy_from_slice(&2u32.to_le_bytes());
    std::fs::write(part("v2.sbbfpart"), &v2).unwrap();
    let mut iv2 = bytes.clone();
    iv2[8..12].copy_from_slice(&2u32.to_le_bytes());
    std::fs::write(part("iv2.sbbfpart"), &iv2).unwrap();
    std::fs::write(part("foreign.sbbfpart"), b"PAR1 not a part at all PAR1").unwrap();
    let two = |b: &str| vec![part("a.sbbfpart"), part(b)];

    refused(
        merge(&root, &two("overlap.sbbfpart")).await,
        "p19.parquet is in both",
    );
    refused(
        merge(&root, &two("c-id.sbbfpart")).await,
        "c-id.sbbfpart columns id",
    );
    refused(
        merge(&root, &two("fpp.sbbfpart")).await,
        "folded to FPP 0.1",
    );
    refused(
        merge(&root, &two("other.sbbfpart")).await,
        "was built for the root",
    );
    refused(merge(&root, &two("flipped.sbbfpart")).await, "checksum");
    refused(merge(&root, &two("manifest.sbbfpart")).await, "checksum");
    refused(
        merge(&root, &two("short.sbbfpart")).await,
        "not an sbbf index part",
    );
    refused(
        merge(&root, &two("foreign.sbbfpart")).await,
        "not an sbbf index part",
    );
    // Parts of another table, merged alone into this one.
    refused(
        merge(&root, &[part("other.sbbfpart")]).await,
        "was built for the root",
    );
    assert!(!dir.join("_sbbf_index/index.sbbfi").exists());
    // A part names only files of the table.
    match build_part(&root, &["nope.parquet".into()], &plain, &part("x.sbbfpart")).await {
        Err(Error::Invalid(m)) => assert!(m.contains("nope.parquet"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The parts that belong together merge.
    let r = merge(&root, &two("b.sbbfpart")).await.unwrap();
    assert_eq!(r.files_covered, 40);
}

/// Every prefix of a part, and the part with any one byte changed, is refused (or, where the
/// change falls in bytes no check covers, read as a part); nothing panics.
#[tokio::test(flavor = "multi_thread")]
async fn damaged_parts_are_refused_never_trusted() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    table(&dir);
    let root = Root::open(dir.to_str().unwrap()).unwrap().unwrap();
    let out = td.path().join("a.sbbfpart");
    build_part(&root, &names(6), &BuildOptions::default(), &out)
        .await
        .unwrap();
    let good = bytes::Bytes::from(std::fs::read(&out).unwrap());
    assert!(sbbf_index::part::parse_part(good.clone()).is_ok());
    for n in 0..good.len() {
        assert!(
            sbbf_index::part::parse_part(good.slice(..n)).is_err(),
            "prefix {n}"
        );
    }
    let mut accepted = 0;
    for k in 0..good.len() {
        let mut b = good.to_vec();
        b[k] ^= 0x20;
        accepted += usize::from(sbbf_index::part::parse_part(b.into()).is_ok());
    }
    // Every byte is under a checksum or a check but the header's reserved bytes.
    assert!(accepted <= 4, "{accepted} changed bytes accepted");
}
