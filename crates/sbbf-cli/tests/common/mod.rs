//! Helpers every integration test of the binary uses.
// Each test file compiles this module on its own and uses a part of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the `sbbf` binary built for these tests.
pub fn sbbf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sbbf"))
        .args(args)
        .output()
        .expect("run sbbf")
}

/// Bytes as text, for messages and comparisons.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
