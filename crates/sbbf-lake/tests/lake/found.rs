//! What finding and reading a table on an object store asks of it: a Delta table's log is
//! listed once, and nothing else is (no `metadata/`, no checkpoint hint when the log fits a
//! listing page); an Iceberg folder's `metadata/` is listed once, by the detection, whose
//! listing the reader uses. Counted by the snapshot's own tally of its requests.

#![cfg(all(feature = "tables", feature = "object_store"))]

use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt as _};
use sbbf_lake::{Format, LakeOptions, StoreRoot, Table};
use std::sync::Arc;

/// `testdata/lake/{dir}` put in an in-memory store under `t/`.
async fn store_with(dir: &str) -> Arc<dyn ObjectStore> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/lake")
        .join(dir);
    let store = InMemory::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let bytes = std::fs::read(&p).unwrap();
            store
                .put(&Path::from(format!("t/{rel}")), bytes.into())
                .await
                .unwrap();
        }
    }
    Arc::new(store)
}

async fn open(store: Arc<dyn ObjectStore>) -> Table {
    let root = StoreRoot::with_store(store, url::Url::parse("s3://b/").unwrap());
    Table::open_in(Some(root), "s3://b/t/", &LakeOptions::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn a_delta_table_is_found_and_read_with_one_listing() {
    let table = open(store_with("delta_checkpoint").await).await;
    assert_eq!(table.format(), Some(Format::Delta));
    let snap = table.snapshot().unwrap();
    let reads = snap.log_reads;
    // The log's listing; then its newest checkpoint and the two commits after it.
    assert_eq!(reads.lists, 1, "{reads:?}");
    assert_eq!(reads.gets, 3, "{reads:?}");
    assert_eq!(snap.table_version().version, 13);
}

#[tokio::test]
async fn an_iceberg_folder_lists_its_metadata_once() {
    let table = open(store_with("iceberg/ns/ice_basic").await).await;
    assert_eq!(table.format(), Some(Format::Iceberg));
    let snap = table.snapshot().unwrap();
    let reads = snap.log_reads;
    // `_delta_log/` (empty), then `metadata/`, whose listing names the newest metadata file.
    assert_eq!(reads.lists, 2, "{reads:?}");
    assert!(!snap.files.is_empty());
}

/// A local folder is found as a store's is: `metadata/` with only a version hint is an Iceberg
/// table (whose missing metadata file is then said), not a folder of files read as data.
#[tokio::test]
async fn a_local_folder_with_a_version_hint_is_an_iceberg_table() {
    let td = tempfile::tempdir().unwrap();
    std::fs::create_dir(td.path().join("metadata")).unwrap();
    std::fs::write(td.path().join("metadata/version-hint.text"), "1").unwrap();
    let arg = td.path().to_str().unwrap();
    let located = Table::locate(arg, &LakeOptions::default()).await.unwrap();
    assert_eq!(located.format(), Some(Format::Iceberg));
    let e = Table::open(arg, &LakeOptions::default()).await.unwrap_err();
    assert!(e.to_string().contains("no metadata file"), "{e}");
}

/// A `metadata/` whose first listing page (1,000 names) holds no metadata file, the names
/// sorting first being others (a Hadoop table's `v1.metadata.json` sorts after manifests
/// named by UUIDs): the rest is listed, and the folder is an Iceberg table, never plain files.
#[tokio::test]
async fn an_iceberg_folder_whose_first_page_holds_no_metadata_file_is_found() {
    let store = store_with("iceberg/ns/ice_basic").await;
    for i in 0..1000 {
        let name = format!("t/metadata/0-{i:04}.avro");
        store
            .put(&Path::from(name), vec![0u8].into())
            .await
            .unwrap();
    }
    let table = open(store).await;
    assert_eq!(table.format(), Some(Format::Iceberg));
    assert!(!table.snapshot().unwrap().files.is_empty());
}
