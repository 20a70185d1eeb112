//! sbbf-lake's integration tests, in one test binary (each binary is another link of the whole
//! dependency tree). `cargo test -p sbbf-lake --test lake MODULE::` runs one part.

mod found;
mod layering;
