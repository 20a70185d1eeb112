//! Helpers the integration tests of every crate share (a dev-dependency only; never
//! published): where the corpora live in the repository, reading the reference answers, a small
//! table written with arrow-rs ([`table`]), a local S3 server ([`moto`]), a range-serving
//! HTTP server ([`http`]) and the check behind every crate's layering test ([`layering`]).
//!
//! Everything the tests read is inside the repository: a clone in an empty directory runs them.

pub mod http;
pub mod layering;
pub mod moto;
pub mod table;

use flate2::read::GzDecoder;
use serde_json::Value as Json;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The project's own corpus: Parquet files made by `tools/gen` with Apache writers.
pub fn testdata() -> PathBuf {
    repo().join("testdata")
}

/// The reference readers' answers for [`testdata`], one `NAME.jsonl.gz` per file.
pub fn testdata_expected() -> PathBuf {
    repo().join("fixtures/expected")
}

/// The Parquet files of the conformance corpus (written by Arrow C++, arrow-rs, DuckDB and
/// parquet-java, plus apache/parquet-testing's Bloom filter files).
pub fn conformance_files() -> PathBuf {
    repo().join("testdata/conformance")
}

/// The reference readers' answers for [`conformance_files`], one `NAME.jsonl.gz` per file.
pub fn conformance_expected() -> PathBuf {
    repo().join("fixtures/conformance/expected")
}

/// Every Parquet file of the project's corpus and the conformance corpus, sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [testdata(), conformance_files()] {
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

/// The JSON lines of a gzip'd expectation file.
pub fn read_jsonl_gz(path: &Path) -> Vec<Json> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::BufReader::new(GzDecoder::new(f))
        .lines()
        .map(|l| {
            let l = l.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            serde_json::from_str(&l).unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display()))
        })
        .collect()
}

/// Waits until every file below `dir` last changed (its status-change time, ctime) more than
/// the index's 2 s racy window ago, so that a build covers them all. A test cannot set a
/// change time back, as it can a modification time: it can only wait, and this waits no
/// longer than the newest file needs (nothing when the files are older).
pub fn settle(dir: &Path) {
    let newest = newest_change(dir);
    let ready = newest + std::time::Duration::from_millis(2_100);
    if let Ok(left) = ready.duration_since(std::time::SystemTime::now()) {
        std::thread::sleep(left);
    }
}

fn newest_change(p: &Path) -> std::time::SystemTime {
    let mut newest = std::time::UNIX_EPOCH;
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return newest;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let t = std::time::Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec() as u32);
        newest = newest.max(std::time::UNIX_EPOCH + t);
    }
    if let Ok(m) = meta.modified() {
        newest = newest.max(m);
    }
    if meta.is_dir() {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            newest = newest.max(newest_change(&e.path()));
        }
    }
    newest
}
