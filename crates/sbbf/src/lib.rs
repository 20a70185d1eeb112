//! Spec-exact Parquet split-block Bloom filters (SBBF).
//!
//! A filter is `z` blocks of 256 bits, each block eight little-endian `u32` words. A value is
//! hashed with XXH64 (seed 0); the upper 32 bits of the hash pick a block, the lower 32 bits,
//! multiplied by eight salt constants, pick one bit in each word. This is the layout of the
//! Parquet specification (`BloomFilter.md`), so bitsets move between this crate and Parquet
//! files byte for byte.
//!
//! - [`Sbbf`] owns its bitset and can insert, union and fold.
//! - [`SbbfRef`] probes a bitset that lives in someone else's buffer, zero-copy.
//! - [`sizing`] chooses sizes; the default keeps its false-positive promise.
//! - Batch methods ([`Sbbf::contains_values`], [`Sbbf::insert_values`], over any
//!   [`PlainValue`]) are the fastest way to handle many values: each value is hashed well ahead
//!   of its probe, so the hash's multiply chain and the probe overlap.
//!
//! On x86_64 an AVX2 kernel (with BMI2) is chosen at run time; elsewhere a portable kernel runs.
//! Both set and test exactly the same bits. Built with AVX2 and BMI2 enabled at compile time
//! (e.g. `-C target-cpu=native`), the check disappears and the AVX2 probe inlines.
//!
//! ```
//! use sbbf::{Sbbf, SbbfRef};
//!
//! let mut filter = Sbbf::with_ndv_fpp(10_000, 0.01)?;
//! for word in ["hello", "parquet", "bloom", "filter"] {
//!     filter.insert(word.as_bytes());
//! }
//! // Store the bitset anywhere, probe it where it lies.
//! let stored: Vec<u8> = filter.as_bytes().to_vec();
//! let view = SbbfRef::new(&stored)?;
//! assert!(view.contains(b"parquet"));
//! # Ok::<(), sbbf::Error>(())
//! ```

#![warn(missing_docs)]

mod error;
mod filter;
mod kernel;
mod plain;
pub mod sizing;
mod view;
mod xxh64;

pub use error::Error;
pub use filter::Sbbf;
pub use kernel::{BLOCK_BYTES, SALT};
pub use plain::PlainValue;
pub use view::SbbfRef;

/// Smallest bitset writers produce and readers accept: one block.
pub const MIN_BYTES: usize = 32;
/// Largest bitset writers produce and readers accept (the Apache implementations' bound).
pub const MAX_BYTES: usize = 128 * 1024 * 1024;

/// XXH64 with seed 0, the hash Parquet uses for Bloom filters.
///
/// ```
/// // Known answer of XXH64 for the empty input.
/// assert_eq!(sbbf::hash(b""), 0xef46db3751d8e999);
/// ```
#[inline(always)]
pub fn hash(value: &[u8]) -> u64 {
    xxh64::xxh64(value)
}

/// The block (0-based) that a hash selects in a filter of `num_blocks` blocks:
/// `((hash >> 32) * num_blocks) >> 32`. With it a reader can fetch just the 32 bytes a probe
/// needs and test them as a one-block [`SbbfRef`].
///
/// ```
/// let mut f = sbbf::Sbbf::with_num_bytes(4096);
/// let h = sbbf::hash(b"x");
/// f.insert_hash(h);
/// let i = sbbf::block_index(h, f.num_blocks());
/// let block = &f.as_bytes()[i * 32..i * 32 + 32];
/// assert!(sbbf::SbbfRef::new(block).unwrap().contains_hash(h));
/// ```
pub fn block_index(hash: u64, num_blocks: usize) -> usize {
    kernel::block_index(hash, num_blocks)
}

/// Which kernel this process uses: `"avx2"` (AVX2 with BMI2) or `"portable"`.
///
/// ```
/// assert!(["avx2", "portable"].contains(&sbbf::kernel_name()));
/// ```
pub fn kernel_name() -> &'static str {
    if kernel::has_avx2() {
        "avx2"
    } else {
        "portable"
    }
}

#[cfg(test)]
mod tests;

/// The crate README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
