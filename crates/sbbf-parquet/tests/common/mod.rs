//! Helpers the integration tests share.
// Each test file compiles this module on its own and uses a part of it.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every Parquet file of the project's corpus (`testdata/`) and the shared conformance corpus,
/// sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let root = repo();
    let mut out = Vec::new();
    for dir in [
        root.join("testdata"),
        root.join("../shared/conformance/files"),
    ] {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() > 30, "corpus incomplete: {} files", out.len());
    out
}
