//! [`SbbfRef`]: probing a bitset in place, in a buffer that someone else owns.

use crate::kernel::{self, dispatch, BLOCK_BYTES};
use crate::{Error, PlainValue, MAX_BYTES};

/// A read-only filter over a borrowed bitset: a slice of a file read, a memory map, a network
/// buffer. Any alignment is fine and nothing is copied; probing costs what it costs on an owned
/// [`crate::Sbbf`] (both run the same kernels over little-endian bytes).
///
/// ```
/// let mut owned = sbbf::Sbbf::with_num_bytes(1024);
/// owned.insert(b"hello");
/// let file_bytes = owned.as_bytes().to_vec(); // e.g. read from a Parquet file
/// let view = sbbf::SbbfRef::new(&file_bytes).unwrap();
/// assert!(view.contains(b"hello"));
/// assert_eq!(view.num_bytes(), 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SbbfRef<'a> {
    bits: &'a [u8],
}

/// Checks what every reader must: a whole, non-zero number of blocks, at most 128 MiB.
pub(crate) fn validate(bits: &[u8]) -> Result<(), Error> {
    let n = bits.len();
    if n == 0 || !n.is_multiple_of(BLOCK_BYTES) || n > MAX_BYTES {
        Err(Error::InvalidBitsetLength(n))
    } else {
        Ok(())
    }
}

impl<'a> SbbfRef<'a> {
    /// Wraps a bitset after checking its length: a non-empty multiple of 32 bytes, at most
    /// 128 MiB. Block counts that are not powers of two are legal and probed correctly.
    ///
    /// ```
    /// assert!(sbbf::SbbfRef::new(&[0u8; 96]).is_ok()); // three blocks
    /// assert!(sbbf::SbbfRef::new(&[0u8; 40]).is_err());
    /// assert!(sbbf::SbbfRef::new(&[]).is_err());
    /// ```
    pub fn new(bits: &'a [u8]) -> Result<Self, Error> {
        validate(bits)?;
        Ok(SbbfRef { bits })
    }

    /// True when the value with this XXH64 hash may be present, false when it is definitely
    /// absent.
    ///
    /// ```
    /// let bits = [0u8; 32];
    /// let empty = sbbf::SbbfRef::new(&bits).unwrap();
    /// assert!(!empty.contains_hash(sbbf::hash(b"x")));
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        dispatch!(contains_hash(self.bits, hash))
    }

    /// True when `value` (the bytes a Parquet writer hashes) may be present.
    ///
    /// ```
    /// let bits = [0xffu8; 64];
    /// let full = sbbf::SbbfRef::new(&bits).unwrap();
    /// assert!(full.contains(b"anything"));
    /// ```
    #[inline(always)]
    pub fn contains(&self, value: &[u8]) -> bool {
        dispatch!(contains(self.bits, value))
    }

    /// Tests a batch of hashes, writing one answer per hash into `out`. Block addresses are
    /// prefetched ahead of the tests, which keeps many cache misses in flight on large filters.
    ///
    /// # Panics
    /// When `out` is shorter than `hashes`.
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(4096);
    /// f.insert_hash(7);
    /// let mut out = [false; 2];
    /// f.view().contains_hashes(&[7, 8], &mut out);
    /// assert!(out[0]);
    /// ```
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        assert!(out.len() >= hashes.len(), "one answer slot per hash");
        dispatch!(contains_hashes(self.bits, hashes, out))
    }

    /// Tests a batch of values (see [`PlainValue`]: `i64`, `[u8; 16]`, `&str`, ...), writing one
    /// answer per value into `out`. The fastest way to test many values: each value is hashed
    /// well before its probe and its block prefetched, so hashing, probing and cache misses
    /// overlap, and the kernel is chosen once for the batch.
    ///
    /// # Panics
    /// When `out` is shorter than `values`.
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(4096);
    /// f.insert_values(&[1i64, 2, 3]);
    /// let mut out = [false; 3];
    /// f.view().contains_values(&[1i64, 2, 3], &mut out);
    /// assert_eq!(out, [true; 3]);
    /// ```
    pub fn contains_values<V: PlainValue>(&self, values: &[V], out: &mut [bool]) {
        assert!(out.len() >= values.len(), "one answer slot per value");
        kernel::contains_values(self.bits, values, out)
    }

    /// The bitset, little-endian words, block after block.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bits
    }

    /// Size of the bitset in bytes.
    pub fn num_bytes(&self) -> usize {
        self.bits.len()
    }

    /// Number of 256-bit blocks.
    pub fn num_blocks(&self) -> usize {
        self.bits.len() / BLOCK_BYTES
    }

    /// Number of bits set.
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(32);
    /// f.insert_hash(1);
    /// assert_eq!(f.count_ones(), 8); // one bit in each of the eight words
    /// ```
    pub fn count_ones(&self) -> u64 {
        self.bits.iter().map(|b| b.count_ones() as u64).sum()
    }

    /// The share of bits set, from 0 to 1.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / (self.bits.len() as f64 * 8.0)
    }

    /// The false-positive rate these exact bits give a random absent value: the mean over blocks
    /// of the product of the eight words' fill (a random key picks a block uniformly and one bit
    /// per word uniformly).
    ///
    /// ```
    /// let empty = [0u8; 32];
    /// assert_eq!(sbbf::SbbfRef::new(&empty).unwrap().estimated_fpp(), 0.0);
    /// let full = [0xffu8; 32];
    /// assert_eq!(sbbf::SbbfRef::new(&full).unwrap().estimated_fpp(), 1.0);
    /// ```
    pub fn estimated_fpp(&self) -> f64 {
        estimated_fpp_of_blocks(self.bits.chunks_exact(BLOCK_BYTES).map(block_words))
    }
}

pub(crate) fn block_words(b: &[u8]) -> [u32; 8] {
    let b = kernel::block(b, 0);
    let mut w = [0u32; 8];
    for (i, word) in w.iter_mut().enumerate() {
        *word = u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    }
    w
}

/// Mean over blocks of prod(popcount(word) / 32).
pub(crate) fn estimated_fpp_of_blocks(blocks: impl Iterator<Item = [u32; 8]>) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for words in blocks {
        let mut p = 1.0;
        for w in words {
            p *= w.count_ones() as f64 / 32.0;
        }
        sum += p;
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}
