//! Every value rule's tests, in one place: how text (the command line's reader), typed
//! literals and Arrow arrays become the bytes a column stores, and that Arrow's native values
//! hash as writers hashed the stored ones.

mod plain;
mod stored;
mod text;
