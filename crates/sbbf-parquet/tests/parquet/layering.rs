//! The adapter's imports run one way, along the data flow: each top-level module (a file
//! `src/x.rs` or a folder `src/x/`) may use only the modules before it in [`ORDER`]. A `use
//! crate::...` against the order fails this test, and so does a new module left out of it (the
//! check itself is `sbbf_testkit::layering`, shared by every crate).

/// The layers, first to last: bytes on disk, then values, reads, sources and writes, then the
/// reports about them.
const ORDER: &[&str] = &[
    "error",   // every error type; imports nothing of the crate
    "format",  // Thrift, filter header, footer, column types, byte layout
    "values",  // the stored-value rules and their front ends (text, Arrow), page decoding
    "io",      // read policy, ranges, fetched bytes, counters
    "keys",    // keys for encrypted files (plain data, always built)
    "crypto",  // modular encryption (feature `encryption`): keys, ciphers, sealed modules
    "read",    // answers, the I/O-free filter-read plan, the sync and async drivers
    "prune",   // predicates over row groups
    "source",  // local paths, object stores, many files at once
    "write",   // building filters, the write pipeline, atomic output
    "inspect", // reports on every filter
    "verify",  // filters checked against the data
    "report",  // the serializable reports (feature `serde`)
];

#[test]
fn imports_run_along_the_data_flow() {
    sbbf_testkit::layering::assert_one_way(env!("CARGO_MANIFEST_DIR"), ORDER, 21);
}
