//! The reports every front end prints or returns (feature `serde`): one `Serialize` type per
//! command, so that `sbbf ... --format json` and the Python package give the same objects by
//! construction. Fields are declared in sorted order, the order the JSON lines always had.
//!
//! - [`ProbeLine`] (and [`ErrorLine`] for a file that could not be read): `sbbf probe`.
//! - [`InspectReport`]: `sbbf inspect`, one per file.
//! - [`VerifyReport`]: `sbbf verify`, one per file.
//! - [`WriteSummary`]: `sbbf add` and `sbbf resize` (a table's report is
//!   `sbbf_lake::backfill::TableWriteSummary`).

pub mod each;
mod inspect;
mod probe;
mod verify;
mod write;

pub use each::{
    inspect_each, verify_each, Counted, FileReport, Files, ProbeTally, Tally, ValueCounts,
};
pub use inspect::{EncryptionSummary, InspectChunk, InspectReport};
pub use probe::*;
pub use verify::{VerifyChunk, VerifyReport};
pub use write::{FilterLine, NothingToDo, WriteSummary};
