//! The stored-value layer: [`stored`] holds the one vocabulary ([`Literal`](stored::Literal))
//! and the rules that turn a value into the bytes a column stores; its front ends only
//! translate: command-line text ([`text`]), Arrow arrays ([`arrow`]); `decode` reads a column
//! chunk's stored values back from its pages.

pub mod arrow;
pub(crate) mod decode;
pub mod stored;
pub mod text;

#[cfg(test)]
mod tests;
