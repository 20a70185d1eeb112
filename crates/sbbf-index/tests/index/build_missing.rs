//! `--build-missing`: row groups without a filter get one built from their data, and the
//! index never misses a stored value (every id read back with arrow is "maybe" in its row
//! group); files that have filters are read no further than their footers and filters.
//! `--tighten`: row groups whose filters are looser than `--fpp` get one built from their
//! data at it, with the same guarantee.

use crate::common::{indexed, write_file};
use arrow::array::Int64Array;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::FileReader;
use sbbf_index::build::{build, update_with, BuildOptions, UpdateOptions};
use sbbf_index::Root;
use std::path::Path;

/// Files `p00..p11`; every third has no filter on `id` (the others do), some of two or three
/// row groups.
fn mixed_table(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let mut without = Vec::new();
    for k in 0..12i64 {
        let name = format!("p{k:02}.parquet");
        let ndv = if k % 3 == 1 { 0 } else { 200 };
        write_file(
            &dir.join(&name),
            k,
            80 + k as usize * 7,
            1 + k as usize % 3,
            ndv,
        );
        if ndv == 0 {
            without.push(name);
        }
    }
    sbbf_testkit::settle(dir);
    without
}

/// Per row group, the ids arrow reads back.
fn ids_per_row_group(path: &Path) -> Vec<Vec<i64>> {
    let n = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(path).unwrap())
        .unwrap()
        .metadata()
        .num_row_groups();
    (0..n)
        .map(|rg| {
            let r = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
                .unwrap()
                .with_row_groups(vec![rg])
                .build()
                .unwrap();
            let mut out = Vec::new();
            for b in r {
                let b = b.unwrap();
                let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                out.extend(a.values().iter().copied());
            }
            out
        })
        .collect()
}

/// The `id` column chunks of the files without filters: how many, and their page bytes by the
/// footer, as parquet's own reader decodes it.
fn chunks_of(dir: &Path, files: &[String]) -> (usize, u64) {
    let (mut n, mut bytes) = (0, 0);
    for f in files {
        let r = parquet::file::reader::SerializedFileReader::new(
            std::fs::File::open(dir.join(f)).unwrap(),
        )
        .unwrap();
        for rg in r.metadata().row_groups() {
            n += 1;
            bytes += rg.column(0).byte_range().1;
        }
    }
    (n, bytes)
}

/// The index of `id`, with or without `--build-missing`.
async fn build_id(root: &Root, build_missing: bool) -> sbbf_index::build::BuildReport {
    let options = BuildOptions {
        columns: vec!["id".into()],
        build_missing,
        ..BuildOptions::default()
    };
    build(root, &options).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn built_filters_never_miss_a_stored_value() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    let without = mixed_table(&dir);
    let root = Root::open(dir.to_str().unwrap()).unwrap().unwrap();
    let plain = build_id(&root, false).await;
    assert_eq!((plain.filters_built, plain.data_bytes), (0, 0));
    let r = build_id(&root, true).await;
    let (chunks, bytes) = chunks_of(&dir, &without);
    assert_eq!(r.filters_built, chunks, "{r:?}");
    assert!(r.build_failed.is_empty(), "{:?}", r.build_failed);
    // Exactly those chunks' pages were read, one request each ...
    assert_eq!((r.data_requests, r.data_bytes), (chunks as u64, bytes));
    // ... and of every file nothing else than without --build-missing.
    assert_eq!(r.requests - r.data_requests, plain.requests);
    assert_eq!(r.bytes_read - r.data_bytes, plain.bytes_read);
    let id = &r.columns[0];
    let rgs: usize = (0..12).map(|k| 1 + k % 3).sum();
    assert_eq!(id.entries, rgs, "every row group has an entry");

    // 0 false negatives: every id, read back with arrow, is "maybe" in its row group.
    for k in 0..12 {
        let name = format!("p{k:02}.parquet");
        let path = dir.join(&name);
        let shown = path.display().to_string();
        for (rg, ids) in ids_per_row_group(&path).iter().enumerate() {
            for v in ids
                .iter()
                .step_by(if without.contains(&name) { 1 } else { 9 })
            {
                let got = indexed(&root, "id", &[v.to_string()]).await;
                let maybe = got[&shown].as_ref().expect("covered");
                assert!(maybe.contains(&rg), "{name} rg {rg} id {v}: {maybe:?}");
            }
        }
    }
    // The built filters rule files out: an absent value reads few files.
    let got = indexed(&root, "id", &["987654321".to_string()]).await;
    let ruled_out = got
        .values()
        .filter(|v| v.as_deref() == Some(&[][..]))
        .count();
    assert!(ruled_out >= 10, "{got:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn update_builds_what_is_missing_and_reads_only_those_files() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    let without = mixed_table(&dir);
    let root = Root::open(dir.to_str().unwrap()).unwrap().unwrap();
    build_id(&root, false).await;
    let name = |f: &str| dir.join(f).display().to_string();
    let got = indexed(&root, "id", &["1005".to_string()]).await;
    assert_eq!(got[&name(&without[0])], None, "not covered before");
    let up = UpdateOptions {
        concurrency: 4,
        build_missing: true,
        tighten: false,
        progress: None,
        swapped: Vec::new(),
    };
    let (r, rebuilt) = update_with(&root, &up).await.unwrap();
    assert!(rebuilt.is_none());
    let (chunks, bytes) = chunks_of(&dir, &without);
    assert_eq!(
        (r.files_read, r.files_kept),
        (without.len(), 12 - without.len())
    );
    assert_eq!((r.filters_built, r.data_bytes), (chunks, bytes));
    let got = indexed(&root, "id", &["1005".to_string()]).await;
    assert_eq!(got[&name("p01.parquet")].as_deref(), Some(&[0usize][..]));
    // Nothing left to build: the next update reads nothing.
    let (r, _) = update_with(&root, &up).await.unwrap();
    assert_eq!((r.files_read, r.filters_built), (0, 0));
    // Without -c there is no column to build for.
    let e = build(
        &root,
        &BuildOptions {
            build_missing: true,
            ..BuildOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert!(
        matches!(e, sbbf_index::Error::BuildMissingWithoutColumns),
        "{e}"
    );
}

/// `--tighten --fpp P`: filters sized for far fewer values than their chunks hold (nearly
/// every bit set) are built again from the chunks' data at P; the index then rules out a
/// value in no file where the files' own filters could not, and never misses a stored one.
#[tokio::test(flavor = "multi_thread")]
async fn tightened_entries_rule_out_what_loose_filters_cannot_and_miss_nothing() {
    let td = tempfile::tempdir().unwrap();
    let dir = td.path().join("t");
    std::fs::create_dir_all(&dir).unwrap();
    for k in 0..10i64 {
        write_file(
            &dir.join(format!("p{k:02}.parquet")),
            k,
            300,
            1 + k as usize % 2,
            16,
        );
    }
    sbbf_testkit::settle(&dir);
    let root = Root::open(dir.to_str().unwrap()).unwrap().unwrap();
    let absent = ["987654321".to_string()];
    let ruled_out = |got: &std::collections::BTreeMap<String, Option<Vec<usize>>>| {
        got.values()
            .filter(|v| v.as_deref() == Some(&[][..]))
            .count()
    };
    let loose = build_id(&root, false).await;
    assert_eq!(loose.filters_tightened, 0);
    let loosely = ruled_out(&indexed(&root, "id", &absent).await);

    // Asked without the target rate: refused.
    let without = BuildOptions {
        columns: vec!["id".into()],
        tighten: true,
        ..BuildOptions::default()
    };
    assert!(matches!(
        build(&root, &without).await,
        Err(sbbf_index::Error::TightenWithout)
    ));

    let options = BuildOptions {
        columns: vec!["id".into()],
        fpp: Some(0.001),
        tighten: true,
        ..BuildOptions::default()
    };
    let r = build(&root, &options).await.unwrap();
    let rgs: usize = (0..10).map(|k| 1 + k % 2).sum();
    assert_eq!((r.filters_tightened, r.filters_built), (rgs, rgs), "{r:?}");
    assert!(r.build_failed.is_empty(), "{:?}", r.build_failed);
    assert!(
        r.columns[0].groups.iter().all(|g| g.max_fpp <= 0.002),
        "{:?}",
        r.columns[0].groups
    );
    let tightly = ruled_out(&indexed(&root, "id", &absent).await);
    assert_eq!(tightly, 10, "every file ruled out");
    assert!(
        loosely < 5,
        "the files' own filters rule out {loosely} files"
    );

    // 0 false negatives: every id, read back with arrow, is "maybe" in its row group.
    for k in 0..10 {
        let path = dir.join(format!("p{k:02}.parquet"));
        let shown = path.display().to_string();
        for (rg, ids) in ids_per_row_group(&path).iter().enumerate() {
            for v in ids.iter().step_by(7) {
                let got = indexed(&root, "id", &[v.to_string()]).await;
                let maybe = got[&shown].as_ref().expect("covered");
                assert!(maybe.contains(&rg), "p{k:02} rg {rg} id {v}: {maybe:?}");
            }
        }
    }
}
