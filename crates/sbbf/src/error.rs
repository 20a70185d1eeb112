//! The one error type of the crate.

use std::fmt;

/// Why a filter could not be built, loaded or combined.
///
/// ```
/// let err = sbbf::Sbbf::from_bitset(&[0u8; 31]).unwrap_err();
/// assert!(matches!(err, sbbf::Error::InvalidBitsetLength(31)));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A false-positive probability outside the open interval (0, 1), or NaN.
    InvalidFpp(f64),
    /// A bitset that is empty, not a whole number of 32-byte blocks, or over 128 MiB.
    InvalidBitsetLength(usize),
    /// Two filters of different sizes cannot be combined bit by bit.
    SizeMismatch {
        /// Bytes of the filter being changed.
        left: usize,
        /// Bytes of the other filter.
        right: usize,
    },
    /// Folding `times` times needs a block count divisible by `2^times`.
    CannotFold {
        /// Blocks the filter has.
        num_blocks: usize,
        /// Halvings asked for.
        times: u32,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidFpp(p) => write!(
                f,
                "false-positive probability must be strictly between 0 and 1, got {p}"
            ),
            Error::InvalidBitsetLength(n) => write!(
                f,
                "a bitset must be a non-empty multiple of 32 bytes of at most {} bytes, got {n}",
                crate::MAX_BYTES
            ),
            Error::SizeMismatch { left, right } => write!(
                f,
                "filters of different sizes cannot be combined ({left} vs {right} bytes)"
            ),
            Error::CannotFold { num_blocks, times } => write!(
                f,
                "a filter of {num_blocks} blocks cannot be halved {times} times exactly"
            ),
        }
    }
}

impl std::error::Error for Error {}
