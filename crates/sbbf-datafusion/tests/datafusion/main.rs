//! sbbf-datafusion's integration tests, in one test binary: each file below was its own binary
//! once, and every binary is another link of the whole dependency tree, DataFusion included
//! (minutes on two cores). `cargo test -p sbbf-datafusion --test datafusion MODULE::` runs one
//! part, e.g. `cargo test -p sbbf-datafusion --test datafusion joins::`.

mod explain;
mod joins;
mod pruning;
mod table_index;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

/// The rows of a query, formatted and sorted (scans may return them in any order).
pub(crate) fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    let opts = FormatOptions::default().with_null("NULL");
    for b in batches {
        let fmts: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            out.push(
                fmts.iter()
                    .map(|f| f.value(r).to_string())
                    .collect::<Vec<_>>()
                    .join("|"),
            );
        }
    }
    out.sort();
    out
}
