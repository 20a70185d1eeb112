//! The crate's imports run one way: each top-level module (a file `src/x.rs` or a folder
//! `src/x/`) may use only the modules before it in [`ORDER`]. A `use crate::...` against the
//! order fails `imports_run_one_way`, and so does a module left out of the order. The check
//! itself is `sbbf_testkit::layering`, shared by every crate.

/// The modules, first to last: the bytes, the table root that lists and loads, answering
/// from an index, the reports, building, parts and their merge, then probing a table file by
/// file. A module listed here that does not exist (yet) is allowed.
const ORDER: &[&str] = &[
    "format", // the index file's bytes (and a part's manifest): types, write, read
    "table",  // `Root`: listing a table, loading its index, atomic output
    "probe",  // answering probes and predicates from an index
    "follow", // a later Delta version from the index and the commits since
    "report", // the serializable reports of build, merge, inspect and probe
    "build",  // building and updating an index
    "part",   // building an index in parts, and merging them
    "each",   // probing a table file by file, the index first
];

#[test]
fn imports_run_one_way() {
    sbbf_testkit::layering::assert_one_way(env!("CARGO_MANIFEST_DIR"), ORDER, 6);
}
