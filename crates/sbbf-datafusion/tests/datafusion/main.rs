//! sbbf-datafusion's integration tests, in one test binary: each file below was its own binary
//! once, and every binary is another link of the whole dependency tree, DataFusion included
//! (minutes on two cores). `cargo test -p sbbf-datafusion --test datafusion MODULE::` runs one
//! part, e.g. `cargo test -p sbbf-datafusion --test datafusion joins::`.

mod explain;
mod joins;
mod pruning;
mod table_index;
