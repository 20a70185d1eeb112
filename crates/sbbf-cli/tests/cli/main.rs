//! The `sbbf` binary's integration tests, in one test binary: each file below was its own
//! binary once, and every binary is another link of the whole dependency tree (minutes on two
//! cores). `cargo test --test cli MODULE::` runs one part, e.g. `cargo test --test cli write::`.

mod common;

mod commands;
mod corrupt;
mod crash;
mod encrypted;
mod index;
mod lake;
mod lake_follow;
mod lake_locations;
mod lake_write;
mod lake_write_iceberg;
mod paths;
mod query;
#[cfg(feature = "query")]
mod query_lake_index;
mod readme_tour;
mod s3;
mod verify;
mod waves;
mod write;
