//! Helpers every integration test of the binary uses (the corpus helpers come from
//! `sbbf-testkit`; running the binary needs this crate's `CARGO_BIN_EXE_sbbf`).
// Not every build (features) uses every helper.
#![allow(dead_code)]

#[allow(unused_imports)]
pub use sbbf_testkit::*;
use std::process::{Command, Output};

/// Runs the `sbbf` binary built for these tests.
pub fn sbbf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sbbf"))
        .args(args)
        .output()
        .expect("run sbbf")
}

/// Runs the built `sbbf` with `args` and the environment variables `env` set.
pub fn sbbf_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sbbf"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run sbbf")
}

/// Bytes as text, for messages and comparisons.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A probe's JSON row group: each value's result (`maybe`, `absent`, `unknown`).
pub fn results(rg: &serde_json::Value) -> Vec<String> {
    rg["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["result"].as_str().unwrap().to_string())
        .collect()
}
