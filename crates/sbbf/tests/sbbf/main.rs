//! The filter crate's integration tests, in one test binary: each file below was its own binary
//! once, and every binary is another link. `cargo test -p sbbf --test sbbf MODULE::` runs one
//! part, e.g. `cargo test -p sbbf --test sbbf golden::`.

mod golden;
mod sizing;
