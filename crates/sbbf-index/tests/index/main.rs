//! sbbf-index's integration tests, in one test binary: each file below was its own binary
//! once, and every binary is another link of the whole dependency tree (minutes on two cores).
//! `cargo test -p sbbf-index --test index MODULE::` runs one part, e.g.
//! `cargo test -p sbbf-index --test index parts::`.

mod common;

mod answers;
mod build_missing;
mod early;
mod parts;
mod reads;
