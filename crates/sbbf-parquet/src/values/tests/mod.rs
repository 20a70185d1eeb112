//! Every value rule's tests, in one place: how text (the command line's reader), typed
//! literals and Arrow arrays become the bytes a column stores, and that Arrow's native values
//! hash as writers hashed the stored ones.

use crate::format::column::{ColumnType, ValueKind};

mod coercion;
mod plain;
mod stored;
mod text;

/// A column `c` of this physical type, kind and fixed length (0 when not FIXED_LEN_BYTE_ARRAY).
fn column(physical: parquet::basic::Type, kind: ValueKind, type_length: i32) -> ColumnType {
    ColumnType {
        path: "c".into(),
        physical,
        type_length,
        kind,
        logical: None,
    }
}
