//! The lake crate's imports run one way: each top-level module (a file `src/x.rs` or a folder
//! `src/x/`) may use only the modules before it in [`ORDER`]. A `use crate::...` against the
//! order fails this test, and so does a new module left out of it (the check itself is
//! `sbbf_testkit::layering`, shared by every crate).

/// The layers, first to last: why a table could not be read, what a read is asked and reports,
/// where a table lives and how its store is read, the names of its columns, what the log after a
/// version says, each format's snapshot (and its log since a version), then writing (commits, `sbbf add TABLE`) and the per-file reports over a table.
const ORDER: &[&str] = &[
    "error",       // why a table could not be read or written (LakeError)
    "options",     // which snapshot, the version read, the requests its log took
    "location",    // table URLs, the store a table lives in
    "counted",     // a store view that counts the log's requests
    "whole",       // a store view for the kernel's log reads
    "inner",       // nested field names: table to file
    "names",       // column names: table to file (column mapping, field ids)
    "arrow_types", // the table's primitive types as Arrow types
    "bounds",      // what statistics rule out exactly
    "partitions",  // partition columns answered from the log
    "catalog",     // Iceberg SQL and REST catalogs
    "since",       // what the log after a version says (the types; each format reads its own)
    "delta",       // the log's listing (log.rs), a snapshot through the kernel (read.rs), commits
    "iceberg",     // an Iceberg snapshot: metadata, manifests, deletes; Iceberg commits
    "table",       // the one way in: a location found and read once (`Table`)
    "rows",        // a table's rows as Arrow: columns matched, partition values, deletes
    "backfill",    // `sbbf add TABLE`, `sbbf resize TABLE`, `sbbf commit`
    "each",        // `inspect` and `verify` over a table's files
];

#[test]
fn imports_run_one_way() {
    sbbf_testkit::layering::assert_one_way(env!("CARGO_MANIFEST_DIR"), ORDER, 20);
}
