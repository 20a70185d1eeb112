//! [`Sbbf`]: the owned, mutable filter.

use crate::kernel::{self, dispatch, BLOCK_BYTES};
use crate::view::{block_words, estimated_fpp_of_blocks, validate, SbbfRef};
use crate::{sizing, Error, PlainValue};

/// One 256-bit block as 32 little-endian bytes. Aligned to 32 so that no block straddles a
/// cache line: a probe then costs one line, never two.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, align(32))]
struct Block([u8; BLOCK_BYTES]);

/// An owned split-block Bloom filter, bit-for-bit the one Parquet writers store.
///
/// ```
/// let mut f = sbbf::Sbbf::with_ndv_fpp(1000, 0.01).unwrap();
/// f.insert(&42i64.to_le_bytes()); // an INT64 value is hashed as its 8 little-endian bytes
/// assert!(f.contains(&42i64.to_le_bytes()));
/// assert!(f.num_bytes().is_power_of_two());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Sbbf {
    blocks: Vec<Block>,
}

impl std::fmt::Debug for Sbbf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sbbf")
            .field("num_bytes", &self.num_bytes())
            .field("bits_set", &self.count_ones())
            .finish()
    }
}

impl Sbbf {
    /// An empty filter of `num_bytes` rounded up to a power of two within [32 B, 128 MiB],
    /// as every Apache writer rounds.
    ///
    /// ```
    /// assert_eq!(sbbf::Sbbf::with_num_bytes(1000).num_bytes(), 1024);
    /// assert_eq!(sbbf::Sbbf::with_num_bytes(0).num_bytes(), 32);
    /// ```
    pub fn with_num_bytes(num_bytes: usize) -> Sbbf {
        let bytes = sizing::optimal_num_bytes(num_bytes);
        Sbbf {
            blocks: vec![Block([0; BLOCK_BYTES]); bytes / BLOCK_BYTES],
        }
    }

    /// An empty filter sized so that `ndv` distinct values give at most `fpp` false positives,
    /// by the accurate SBBF model ([`sizing::accurate_num_bits`]). Past 128 MiB the size is
    /// capped and the promise cannot be kept.
    ///
    /// ```
    /// let f = sbbf::Sbbf::with_ndv_fpp(1_000_000, 0.01).unwrap();
    /// assert_eq!(f.num_bytes(), 2 * 1024 * 1024);
    /// assert!(sbbf::Sbbf::with_ndv_fpp(10, 1.5).is_err());
    /// ```
    pub fn with_ndv_fpp(ndv: u64, fpp: f64) -> Result<Sbbf, Error> {
        let bits = sizing::accurate_num_bits(ndv, fpp)?;
        Ok(Sbbf::with_num_bytes(sizing::bytes_for_bits(bits)))
    }

    /// Like [`Sbbf::with_ndv_fpp`] but with the classic formula Apache writers use, for
    /// byte-for-byte parity with them.
    ///
    /// ```
    /// let f = sbbf::Sbbf::with_ndv_fpp_classic(1_000_000, 0.01).unwrap();
    /// assert_eq!(f.num_bytes(), 2 * 1024 * 1024);
    /// ```
    pub fn with_ndv_fpp_classic(ndv: u64, fpp: f64) -> Result<Sbbf, Error> {
        let bits = sizing::classic_num_bits(ndv, fpp)?;
        Ok(Sbbf::with_num_bytes(sizing::bytes_for_bits(bits)))
    }

    /// A filter holding a copy of `bitset` (little-endian words, block after block). The length
    /// must be a non-empty multiple of 32 bytes, at most 128 MiB; it need not be a power of two.
    ///
    /// ```
    /// let f = sbbf::Sbbf::from_bitset(&[0u8; 96]).unwrap();
    /// assert_eq!(f.num_blocks(), 3);
    /// assert!(sbbf::Sbbf::from_bitset(&[0u8; 33]).is_err());
    /// ```
    pub fn from_bitset(bitset: &[u8]) -> Result<Sbbf, Error> {
        validate(bitset)?;
        Ok(Sbbf::from_valid_bitset(bitset))
    }

    pub(crate) fn from_valid_bitset(bitset: &[u8]) -> Sbbf {
        let blocks = bitset
            .chunks_exact(BLOCK_BYTES)
            .map(|c| Block(c.try_into().expect("32-byte chunk")))
            .collect();
        Sbbf { blocks }
    }

    /// A read-only view of this filter; every probe method lives there too.
    pub fn view(&self) -> SbbfRef<'_> {
        SbbfRef::new(self.as_bytes()).expect("an owned filter always has a valid size")
    }

    /// The bitset: little-endian words, block after block, as stored in a Parquet file.
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(32);
    /// f.insert_hash(0);
    /// // key 0 sets bit 0 of every word
    /// assert_eq!(&f.as_bytes()[..8], &[1, 0, 0, 0, 1, 0, 0, 0]);
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        let len = self.blocks.len() * BLOCK_BYTES;
        // SAFETY: Block is repr(C) around [u8; 32] with alignment 32 and size 32, so the vector's
        // storage is `len` initialized bytes with no padding, borrowed for as long as `self`.
        unsafe { std::slice::from_raw_parts(self.blocks.as_ptr() as *const u8, len) }
    }

    fn as_bytes_mut(&mut self) -> &mut [u8] {
        let len = self.blocks.len() * BLOCK_BYTES;
        // SAFETY: as in `as_bytes`; the exclusive borrow of `self` makes the bytes exclusive, and
        // every byte pattern is a valid Block.
        unsafe { std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr() as *mut u8, len) }
    }

    /// Size of the bitset in bytes.
    pub fn num_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    /// Number of 256-bit blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Adds a value by its XXH64 (seed 0) hash.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        dispatch!(insert_hash(self.as_bytes_mut(), hash))
    }

    /// Adds a value by the bytes a Parquet writer hashes (its PLAIN encoding, without the length
    /// prefix for BYTE_ARRAY).
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(1024);
    /// f.insert(b"parquet");
    /// assert!(f.contains(b"parquet"));
    /// ```
    #[inline(always)]
    pub fn insert(&mut self, value: &[u8]) {
        dispatch!(insert_value(self.as_bytes_mut(), value))
    }

    /// Adds many hashes, prefetching blocks ahead of the writes.
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(1 << 20);
    /// let hashes: Vec<u64> = (0..1000u64).map(|i| sbbf::hash(&i.to_le_bytes())).collect();
    /// f.insert_hashes(&hashes);
    /// assert!(hashes.iter().all(|h| f.contains_hash(*h)));
    /// ```
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        dispatch!(insert_hashes(self.as_bytes_mut(), hashes))
    }

    /// Adds a batch of values (see [`PlainValue`]), hashing each a few values ahead of its
    /// insert and prefetching its block; the same bits as inserting them one by one.
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(1 << 16);
    /// let ids: Vec<i64> = (0..1000).collect();
    /// f.insert_values(&ids);
    /// f.insert_values(&["a", "b"]);
    /// assert!(f.contains(&999i64.to_le_bytes()) && f.contains(b"b"));
    /// ```
    pub fn insert_values<V: PlainValue>(&mut self, values: &[V]) {
        kernel::insert_values(self.as_bytes_mut(), values)
    }

    /// See [`SbbfRef::contains_values`].
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(1024);
    /// f.insert_values(&[[1u8; 16], [2u8; 16]]);
    /// let mut out = [false; 2];
    /// f.contains_values(&[[1u8; 16], [2u8; 16]], &mut out);
    /// assert_eq!(out, [true, true]);
    /// ```
    pub fn contains_values<V: PlainValue>(&self, values: &[V], out: &mut [bool]) {
        self.view().contains_values(values, out)
    }

    /// See [`SbbfRef::contains_hash`].
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        dispatch!(contains_hash(self.as_bytes(), hash))
    }

    /// See [`SbbfRef::contains`].
    #[inline(always)]
    pub fn contains(&self, value: &[u8]) -> bool {
        dispatch!(contains(self.as_bytes(), value))
    }

    /// See [`SbbfRef::contains_hashes`].
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(64);
    /// f.insert_hash(3);
    /// let mut out = [false];
    /// f.contains_hashes(&[3], &mut out);
    /// assert_eq!(out, [true]);
    /// ```
    pub fn contains_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        self.view().contains_hashes(hashes, out)
    }

    /// Number of bits set.
    pub fn count_ones(&self) -> u64 {
        self.view().count_ones()
    }

    /// The share of bits set, from 0 to 1.
    pub fn fill_ratio(&self) -> f64 {
        self.view().fill_ratio()
    }

    /// See [`SbbfRef::estimated_fpp`].
    pub fn estimated_fpp(&self) -> f64 {
        self.view().estimated_fpp()
    }

    /// ORs another filter of the same size into this one: the result holds both sets.
    ///
    /// ```
    /// let mut a = sbbf::Sbbf::with_num_bytes(256);
    /// let mut b = sbbf::Sbbf::with_num_bytes(256);
    /// a.insert(b"a");
    /// b.insert(b"b");
    /// a.union(&b).unwrap();
    /// assert!(a.contains(b"a") && a.contains(b"b"));
    /// assert!(a.union(&sbbf::Sbbf::with_num_bytes(32)).is_err());
    /// ```
    pub fn union<'a>(&mut self, other: impl Into<SbbfRef<'a>>) -> Result<(), Error> {
        let other = other.into();
        if other.num_bytes() != self.num_bytes() {
            return Err(Error::SizeMismatch {
                left: self.num_bytes(),
                right: other.num_bytes(),
            });
        }
        for (a, b) in self.as_bytes_mut().iter_mut().zip(other.as_bytes()) {
            *a |= *b;
        }
        Ok(())
    }

    /// Halves the filter `times` times by OR-ing adjacent block pairs. The block index of a hash
    /// in a filter of `2z` blocks, halved, is its index in a filter of `z` blocks, so the result
    /// is byte-identical to the filter built at the smaller size from the same values. Needs a
    /// block count divisible by `2^times`.
    ///
    /// ```
    /// let mut big = sbbf::Sbbf::with_num_bytes(4096);
    /// let mut small = sbbf::Sbbf::with_num_bytes(1024);
    /// for v in 0..100u32 {
    ///     big.insert(&v.to_le_bytes());
    ///     small.insert(&v.to_le_bytes());
    /// }
    /// big.fold(2).unwrap();
    /// assert_eq!(big, small);
    /// ```
    pub fn fold(&mut self, times: u32) -> Result<(), Error> {
        let n = self.blocks.len();
        let divisor = 1usize.checked_shl(times).unwrap_or(0);
        if divisor == 0 || !n.is_multiple_of(divisor) || n / divisor == 0 {
            return Err(Error::CannotFold {
                num_blocks: n,
                times,
            });
        }
        for _ in 0..times {
            self.fold_once();
        }
        Ok(())
    }

    fn fold_once(&mut self) {
        let half = self.blocks.len() / 2;
        for j in 0..half {
            let (a, b) = (self.blocks[2 * j], self.blocks[2 * j + 1]);
            let mut out = [0u8; BLOCK_BYTES];
            for (k, o) in out.iter_mut().enumerate() {
                *o = a.0[k] | b.0[k];
            }
            self.blocks[j] = Block(out);
        }
        self.blocks.truncate(half);
        self.blocks.shrink_to_fit();
    }

    /// Folds as long as the folded filter's [`estimated_fpp`](Self::estimated_fpp) stays at or
    /// below `target_fpp`, and returns how many times it folded. Only even block counts fold;
    /// writers' power-of-two filters can shrink down to one block.
    ///
    /// ```
    /// let mut f = sbbf::Sbbf::with_num_bytes(1 << 20);
    /// for v in 0..1000u64 { f.insert(&v.to_le_bytes()); }
    /// let folds = f.fold_to_target_fpp(0.01).unwrap();
    /// assert!(folds > 0);
    /// assert!(f.estimated_fpp() <= 0.01);
    /// ```
    pub fn fold_to_target_fpp(&mut self, target_fpp: f64) -> Result<u32, Error> {
        if !(target_fpp > 0.0 && target_fpp < 1.0) {
            return Err(Error::InvalidFpp(target_fpp));
        }
        let mut folds = 0;
        while self.blocks.len().is_multiple_of(2) && self.folded_fpp() <= target_fpp {
            self.fold_once();
            folds += 1;
        }
        Ok(folds)
    }

    /// [`estimated_fpp`](Self::estimated_fpp) of the filter one fold would give, without folding.
    fn folded_fpp(&self) -> f64 {
        let bytes = self.as_bytes();
        estimated_fpp_of_blocks(bytes.chunks_exact(2 * BLOCK_BYTES).map(|pair| {
            let (a, b) = (block_words(&pair[..32]), block_words(&pair[32..]));
            std::array::from_fn(|i| a[i] | b[i])
        }))
    }
}

// The borrowed view's ties to the owned filter live here, beside the owner, so that `view`
// imports nothing of `filter` (the owned filter is built on the view, not the other way).
impl SbbfRef<'_> {
    /// Copies the bitset into an owned, mutable filter.
    pub fn to_owned(&self) -> Sbbf {
        Sbbf::from_valid_bitset(self.as_bytes())
    }
}

impl<'a> From<&'a Sbbf> for SbbfRef<'a> {
    fn from(f: &'a Sbbf) -> Self {
        f.view()
    }
}
