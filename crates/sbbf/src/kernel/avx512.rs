//! The batch kernels for values of 4, 8 or 16 bytes (INT32, INT64, DOUBLE,
//! FIXED_LEN_BYTE_ARRAY(16), ...) on CPUs with AVX-512 F, DQ and VL: the AVX2 probe of
//! [`super::avx2`], with the values hashed four at a time in 64-bit lanes ([`crate::xxh64::x4`])
//! instead of one at a time through the scalar multiplier.
//!
//! Every function here requires AVX2, BMI2 and AVX-512 F/DQ/VL; callers check `has_avx512()`.
//! They are correct for any filter, but the public batch APIs take them only for filters that
//! fit the inner caches (see `wide_hash` in the parent module).

use super::avx2::{insert_at, test_at};
use super::{blocks_ahead, no_output, Hasher, BLOCK_BYTES};
use crate::plain::Words;
use crate::xxh64::x4::{xxh64_w16, xxh64_w4, xxh64_w8};
use crate::PlainValue;
use core::arch::x86_64::*;

/// Loads four u64s.
#[inline]
#[target_feature(enable = "avx2,bmi2,avx512f,avx512dq,avx512vl")]
fn load4(words: &[u64; 4]) -> __m256i {
    // SAFETY: `words` is 32 readable bytes; loadu needs no alignment.
    unsafe { _mm256_loadu_si256(words.as_ptr() as *const __m256i) }
}

/// The hashes of a chunk of values, four at a time for 4-, 8- and 16-byte values (by the width
/// of the first value: one width for every value of a fixed-width type). Any value of another
/// width is hashed one by one, so the result is always `plain_hash` of each value.
///
/// Out of line, one call per chunk of values: measured, that is faster here than forcing it
/// inline into the kernels (1.8 against 3.2 ns a key, i64 keys, 32 KiB filter).
#[inline]
#[target_feature(enable = "avx2,bmi2,avx512f,avx512dq,avx512vl")]
pub(crate) fn hash_chunk<V: PlainValue, const N: usize>(chunk: &[V; N]) -> [u64; N] {
    const { assert!(N > 0 && N.is_multiple_of(4), "whole registers of four") };
    let words: [Words; N] = std::array::from_fn(|i| chunk[i].plain_words());
    let first = std::mem::discriminant(&words[0]);
    // The values' words, lane by lane: the only words for 4 and 8 bytes, the first half of 16.
    let lo: [u64; N] = std::array::from_fn(|i| match words[i] {
        Words::W4(w) => w as u64,
        Words::W8(w) | Words::W16(w, _) => w,
        Words::Other => 0,
    });
    let mut hashes = [0u64; N];
    let (lo4, hashes4) = (lo.as_chunks::<4>().0, hashes.as_chunks_mut::<4>().0);
    match words[0] {
        Words::W4(_) | Words::W8(_) => {
            for (l, h) in lo4.iter().zip(hashes4) {
                let v = load4(l);
                let x = if matches!(words[0], Words::W4(_)) {
                    xxh64_w4(v)
                } else {
                    xxh64_w8(v)
                };
                // SAFETY: `h` is 32 writable bytes; storeu needs no alignment.
                unsafe { _mm256_storeu_si256(h.as_mut_ptr() as *mut __m256i, x) };
            }
        }
        Words::W16(..) => {
            let hi: [u64; N] = std::array::from_fn(|i| match words[i] {
                Words::W16(_, w) => w,
                _ => 0,
            });
            for ((l, u), h) in lo4.iter().zip(hi.as_chunks::<4>().0).zip(hashes4) {
                let x = xxh64_w16(load4(l), load4(u));
                // SAFETY: as above.
                unsafe { _mm256_storeu_si256(h.as_mut_ptr() as *mut __m256i, x) };
            }
        }
        Words::Other => {}
    }
    for ((v, w), h) in chunk.iter().zip(&words).zip(&mut hashes) {
        if matches!(w, Words::Other) || std::mem::discriminant(w) != first {
            *h = v.plain_hash();
        }
    }
    hashes
}

/// The chunk hasher of these kernels: [`hash_chunk`], four values at a time.
pub(crate) struct FourAtATime(());

impl FourAtATime {
    /// # Safety
    /// The CPU must have AVX2, BMI2 and AVX-512 F, DQ and VL.
    pub(crate) unsafe fn new() -> FourAtATime {
        FourAtATime(())
    }
}

impl<V: PlainValue> Hasher<V> for FourAtATime {
    const CHUNKS: bool = true;

    #[inline(always)]
    fn chunk<const N: usize>(&mut self, values: &[V; N]) -> [u64; N] {
        // SAFETY: a `FourAtATime` exists only on a CPU with the features (see `new`).
        unsafe { hash_chunk(values) }
    }
}

#[target_feature(enable = "avx2,bmi2,avx512f,avx512dq,avx512vl")]
pub(crate) fn contains_values<V: PlainValue, const POW2: bool, const PREFETCH: bool>(
    bits: &[u8],
    values: &[V],
    out: &mut [bool],
) {
    let out = &mut out[..values.len()];
    let (base, len) = (bits.as_ptr(), bits.len());
    // SAFETY: this function's callers guarantee the CPU features.
    let hasher = &mut unsafe { FourAtATime::new() };
    blocks_ahead::<V, bool, _, POW2, PREFETCH>(values, out, base, len, hasher, |at, key| {
        debug_assert!(at + BLOCK_BYTES <= len);
        // SAFETY: `blocks_ahead` offsets leave a whole block inside `bits`.
        unsafe { test_at(base, at, key) }
    });
}

#[target_feature(enable = "avx2,bmi2,avx512f,avx512dq,avx512vl")]
pub(crate) fn insert_values<V: PlainValue, const POW2: bool, const PREFETCH: bool>(
    bits: &mut [u8],
    values: &[V],
) {
    let (base, len) = (bits.as_mut_ptr(), bits.len());
    let out = &mut no_output(values.len());
    // SAFETY: this function's callers guarantee the CPU features.
    let hasher = &mut unsafe { FourAtATime::new() };
    blocks_ahead::<V, (), _, POW2, PREFETCH>(values, out, base, len, hasher, |at, key| {
        debug_assert!(at + BLOCK_BYTES <= len);
        // SAFETY: as in `contains_values`; `bits` is borrowed exclusively for the whole call.
        unsafe { insert_at(base, at, key) }
    });
}
