//! The `sbbf` binary's integration tests, in one test binary: each file below was its own
//! binary once, and every binary is another link of the whole dependency tree (minutes on two
//! cores). `cargo test --test cli MODULE::` runs one part, e.g. `cargo test --test cli write::`.
//! The lake tables' parts need the feature `lake`, the object stores' parts `object_store`
//! (`query` includes both).

mod common;

mod commands;
mod corrupt;
mod crash;
mod encrypted;
mod index;
#[cfg(feature = "lake")]
mod lake;
#[cfg(feature = "lake")]
mod lake_follow;
#[cfg(feature = "lake")]
mod lake_locations;
#[cfg(feature = "lake")]
mod lake_write;
#[cfg(feature = "lake")]
mod lake_write_iceberg;
mod paths;
mod query;
#[cfg(feature = "query")]
mod query_lake_index;
#[cfg(feature = "lake")]
mod readme_tour;
mod s3;
mod verify;
#[cfg(feature = "object_store")]
mod waves;
mod write;
