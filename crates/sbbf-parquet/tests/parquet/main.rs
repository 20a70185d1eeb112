//! sbbf-parquet's integration tests, in one test binary: each file below was its own binary
//! once, and every binary is another link of the whole dependency tree (minutes on two cores).
//! `cargo test -p sbbf-parquet --test parquet MODULE::` runs one part, e.g.
//! `cargo test -p sbbf-parquet --test parquet layering::`.

mod build;
mod clickhouse_bool;
mod conformance;
// Parquet modular encryption is the crate's feature `encryption` (on by default).
#[cfg(feature = "encryption")]
mod encrypted;
mod footer;
mod io_budget;
mod layering;
mod prune;
// Remote files are the crate's feature `object_store`.
#[cfg(feature = "object_store")]
mod s3;
