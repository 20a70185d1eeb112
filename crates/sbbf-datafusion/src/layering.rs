//! The crate's imports run one way: each top-level module (a file `src/x.rs` or a folder
//! `src/x/`) may use only the modules before it in [`ORDER`]. A `use crate::...` against the
//! order fails `imports_run_one_way`, and so does a module left out of the order. The
//! check itself is `sbbf_testkit::layering`, shared by every crate.

/// The modules, first to last: translating filters, metric names, the table index and the
/// store views that list without files, a lake table's column matching, then the per-file step, listing and schema, the
/// join path, and the table that ties them together.
const ORDER: &[&str] = &[
    "expr",      // DataFusion filters to Bloom-filter predicates
    "metric",    // names of the scan's metrics
    "tail",      // a remote file's reads served from its tail, read once
    "stats",     // what a scan pruned and read, from an executed plan's metrics
    "index",     // asking the table index which files a scan can leave out
    "filtered",  // a store view whose listings leave out hidden names or dropped files
    "lake",      // a lake table's columns matched to each file's fields
    "file_step", // the per-file step: footer, min/max pruning, Bloom filters
    "listing",   // a table's files: globs, hidden names, hive folders, link loops
    "schema",    // a table's schema from its footers or its index
    "join",      // join filters: the `SbbfSource` wrapper and its morsel planner
    "table",     // the `TableProvider`
];

#[test]
fn imports_run_one_way() {
    sbbf_testkit::layering::assert_one_way(env!("CARGO_MANIFEST_DIR"), ORDER, 6);
}
