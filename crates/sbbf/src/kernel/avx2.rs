//! The explicit AVX2 kernels: one 256-bit register holds a block's eight words, so the masks are
//! one multiply, one shift and one variable shift, an insert is one OR and a test one `vptest`.
//!
//! Every function here requires AVX2 and BMI2 (for one-uop variable shifts); callers check
//! `has_avx2()` first (see `dispatch!`).
//! Block addresses come from bounds-checked `&[u8; 32]` references, so the unaligned 256-bit
//! loads and stores below never leave the bitset.

use super::{
    block, block_index, block_mut, blocks_ahead, no_output, prefetch, OneAtATime, BLOCK_BYTES,
    PREFETCH_DISTANCE, SALT,
};
use crate::PlainValue;
use core::arch::x86_64::*;

#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn mask(key: u32) -> __m256i {
    let salt = _mm256_setr_epi32(
        SALT[0] as i32,
        SALT[1] as i32,
        SALT[2] as i32,
        SALT[3] as i32,
        SALT[4] as i32,
        SALT[5] as i32,
        SALT[6] as i32,
        SALT[7] as i32,
    );
    let product = _mm256_mullo_epi32(_mm256_set1_epi32(key as i32), salt);
    let bit = _mm256_srli_epi32::<27>(product);
    _mm256_sllv_epi32(_mm256_set1_epi32(1), bit)
}

#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn check_block(b: &[u8; BLOCK_BYTES], key: u32) -> bool {
    // SAFETY: `b` is a valid 32-byte reference; loadu has no alignment requirement.
    let words = unsafe { _mm256_loadu_si256(b.as_ptr() as *const __m256i) };
    // testc is 1 exactly when (!words & mask) == 0, i.e. all mask bits are set.
    _mm256_testc_si256(words, mask(key)) != 0
}

#[inline]
#[target_feature(enable = "avx2,bmi2")]
fn insert_block(b: &mut [u8; BLOCK_BYTES], key: u32) {
    let p = b.as_mut_ptr() as *mut __m256i;
    // SAFETY: `b` is a valid, exclusive 32-byte reference; loadu/storeu need no alignment.
    unsafe {
        let words = _mm256_loadu_si256(p);
        _mm256_storeu_si256(p, _mm256_or_si256(words, mask(key)));
    }
}

// Inlinable across crates, so that builds with AVX2 enabled statically inline it.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
pub(crate) fn contains_hash(bits: &[u8], hash: u64) -> bool {
    let n = bits.len() / BLOCK_BYTES;
    check_block(block(bits, block_index(hash, n)), hash as u32)
}

// Inlinable across crates, so that builds with AVX2 enabled statically inline it.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
pub(crate) fn insert_hash(bits: &mut [u8], hash: u64) {
    let n = bits.len() / BLOCK_BYTES;
    insert_block(block_mut(bits, block_index(hash, n)), hash as u32)
}

#[target_feature(enable = "avx2,bmi2")]
pub(crate) fn contains_hashes(bits: &[u8], hashes: &[u64], out: &mut [bool]) {
    let n = bits.len() / BLOCK_BYTES;
    for (i, (h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
        if let Some(ahead) = hashes.get(i + PREFETCH_DISTANCE) {
            prefetch(bits, block_index(*ahead, n));
        }
        *o = check_block(block(bits, block_index(*h, n)), *h as u32);
    }
}

#[target_feature(enable = "avx2,bmi2")]
pub(crate) fn insert_hashes(bits: &mut [u8], hashes: &[u64]) {
    let n = bits.len() / BLOCK_BYTES;
    for (i, h) in hashes.iter().enumerate() {
        if let Some(ahead) = hashes.get(i + PREFETCH_DISTANCE) {
            prefetch(bits, block_index(*ahead, n));
        }
        insert_block(block_mut(bits, block_index(*h, n)), *h as u32);
    }
}

/// Tests the block at byte `at` of the bitset at `base`.
///
/// # Safety
/// `base + at .. base + at + 32` must lie inside one readable bitset.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
pub(crate) unsafe fn test_at(base: *const u8, at: usize, key: u32) -> bool {
    // SAFETY: the caller guarantees the 32 bytes are readable; loadu needs no alignment.
    let words = unsafe { _mm256_loadu_si256(base.add(at) as *const __m256i) };
    _mm256_testc_si256(words, mask(key)) != 0
}

/// Sets the key's bits in the block at byte `at` of the bitset at `base`.
///
/// # Safety
/// `base + at .. base + at + 32` must lie inside one bitset borrowed exclusively by the caller.
#[inline]
#[target_feature(enable = "avx2,bmi2")]
pub(crate) unsafe fn insert_at(base: *mut u8, at: usize, key: u32) {
    // SAFETY: the caller guarantees the 32 bytes are writable and not aliased; loadu/storeu
    // need no alignment.
    unsafe {
        let p = base.add(at) as *mut __m256i;
        _mm256_storeu_si256(p, _mm256_or_si256(_mm256_loadu_si256(p), mask(key)));
    }
}

#[target_feature(enable = "avx2,bmi2")]
pub(crate) fn contains_values<V: PlainValue, const POW2: bool, const PREFETCH: bool>(
    bits: &[u8],
    values: &[V],
    out: &mut [bool],
) {
    let out = &mut out[..values.len()];
    let (base, len) = (bits.as_ptr(), bits.len());
    let hasher = &mut OneAtATime;
    blocks_ahead::<V, bool, _, POW2, PREFETCH>(values, out, base, len, hasher, |at, key| {
        debug_assert!(at + BLOCK_BYTES <= len);
        // SAFETY: `blocks_ahead` offsets leave a whole block inside `bits` (a block index is
        // below the block count). Unchecked because the bounds check costs a tenth of a probe
        // here.
        unsafe { test_at(base, at, key) }
    });
}

#[target_feature(enable = "avx2,bmi2")]
pub(crate) fn insert_values<V: PlainValue, const POW2: bool, const PREFETCH: bool>(
    bits: &mut [u8],
    values: &[V],
) {
    let (base, len) = (bits.as_mut_ptr(), bits.len());
    let out = &mut no_output(values.len());
    let hasher = &mut OneAtATime;
    blocks_ahead::<V, (), _, POW2, PREFETCH>(values, out, base, len, hasher, |at, key| {
        debug_assert!(at + BLOCK_BYTES <= len);
        // SAFETY: as in `contains_values`; `bits` is borrowed exclusively for the whole call.
        unsafe { insert_at(base, at, key) }
    });
}
