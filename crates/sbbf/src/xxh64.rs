//! XXH64 with seed 0, written out for the short inputs Bloom filters hash.
//!
//! Filters mostly hash INT32/INT64 values (4 or 8 bytes) and short strings. The general
//! `xxhash_rust::xxh64::xxh64` is an out-of-line call that loops over lanes; here inputs below
//! 32 bytes are hashed by straight-line code that inlines into the probe, with the 4- and 8-byte
//! cases (one multiply chain each) split out. Inputs of 32 bytes and more go to `xxhash_rust`.
//! `tests::xxh64_*` check every path against `xxhash_rust`.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

#[inline(always)]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// Mixes one 8-byte lane into the accumulator of the short-input path.
#[inline(always)]
fn lane8(h: u64, lane: u64) -> u64 {
    let k = lane.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    (h ^ k).rotate_left(27).wrapping_mul(P1).wrapping_add(P4)
}

/// Mixes one 4-byte lane into the accumulator of the short-input path.
#[inline(always)]
fn lane4(h: u64, lane: u32) -> u64 {
    (h ^ (lane as u64).wrapping_mul(P1))
        .rotate_left(23)
        .wrapping_mul(P2)
        .wrapping_add(P3)
}

/// XXH64 (seed 0) of the 8 bytes `v.to_le_bytes()`.
#[inline(always)]
pub(crate) fn xxh64_u64(v: u64) -> u64 {
    avalanche(lane8(P5.wrapping_add(8), v))
}

/// XXH64 (seed 0) of the 4 bytes `v.to_le_bytes()`.
#[inline(always)]
pub(crate) fn xxh64_u32(v: u32) -> u64 {
    avalanche(lane4(P5.wrapping_add(4), v))
}

/// XXH64 (seed 0) of an input shorter than 32 bytes.
#[inline(always)]
fn xxh64_short(value: &[u8]) -> u64 {
    let mut h = P5.wrapping_add(value.len() as u64);
    let (lanes, rest) = value.as_chunks::<8>();
    for lane in lanes {
        h = lane8(h, u64::from_le_bytes(*lane));
    }
    let rest = match rest.split_first_chunk::<4>() {
        Some((lane, tail)) => {
            h = lane4(h, u32::from_le_bytes(*lane));
            tail
        }
        None => rest,
    };
    for &b in rest {
        h = (h ^ (b as u64).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    avalanche(h)
}

/// XXH64 with seed 0 of any input.
#[inline(always)]
pub(crate) fn xxh64(value: &[u8]) -> u64 {
    if let Ok(v) = <[u8; 8]>::try_from(value) {
        xxh64_u64(u64::from_le_bytes(v))
    } else if let Ok(v) = <[u8; 4]>::try_from(value) {
        xxh64_u32(u32::from_le_bytes(v))
    } else if value.len() < 32 {
        xxh64_short(value)
    } else {
        xxhash_rust::xxh64::xxh64(value, 0)
    }
}

/// XXH64 (seed 0) of four inputs at once, in the 64-bit lanes of AVX2 registers: the same steps
/// as the short-input path above. AVX-512 DQ has the 64-bit lane multiply that AVX2 lacks, and
/// four multiply chains then run side by side in one register instead of queueing, one multiply
/// after another, for the scalar multiplier. `tests::xxh64_x4_*` check them against the scalar
/// path.
#[cfg(target_arch = "x86_64")]
pub(crate) mod x4 {
    use super::{P1, P2, P3, P4, P5};
    use core::arch::x86_64::*;

    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    fn splat(x: u64) -> __m256i {
        _mm256_set1_epi64x(x as i64)
    }

    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    fn avalanche(h: __m256i) -> __m256i {
        let h = _mm256_xor_si256(h, _mm256_srli_epi64::<33>(h));
        let h = _mm256_mullo_epi64(h, splat(P2));
        let h = _mm256_xor_si256(h, _mm256_srli_epi64::<29>(h));
        let h = _mm256_mullo_epi64(h, splat(P3));
        _mm256_xor_si256(h, _mm256_srli_epi64::<32>(h))
    }

    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    fn lane8(h: __m256i, lane: __m256i) -> __m256i {
        let k = _mm256_mullo_epi64(lane, splat(P2));
        let k = _mm256_mullo_epi64(_mm256_rol_epi64::<31>(k), splat(P1));
        let h = _mm256_rol_epi64::<27>(_mm256_xor_si256(h, k));
        _mm256_add_epi64(_mm256_mullo_epi64(h, splat(P1)), splat(P4))
    }

    /// Four 4-byte inputs, each zero-extended into its lane.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    pub(crate) fn xxh64_w4(v: __m256i) -> __m256i {
        let h = _mm256_xor_si256(splat(P5.wrapping_add(4)), _mm256_mullo_epi64(v, splat(P1)));
        let h = _mm256_mullo_epi64(_mm256_rol_epi64::<23>(h), splat(P2));
        avalanche(_mm256_add_epi64(h, splat(P3)))
    }

    /// Four 8-byte inputs.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    pub(crate) fn xxh64_w8(v: __m256i) -> __m256i {
        avalanche(lane8(splat(P5.wrapping_add(8)), v))
    }

    /// Four 16-byte inputs: their first eight bytes in `lo`, the last eight in `hi`.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    pub(crate) fn xxh64_w16(lo: __m256i, hi: __m256i) -> __m256i {
        avalanche(lane8(lane8(splat(P5.wrapping_add(16)), lo), hi))
    }
}
