//! Per-block work: the eight masks of a key, and setting or testing them in one 256-bit block.
//!
//! Everything here works on a block as 32 little-endian bytes, so the owned filter and a view
//! over someone else's buffer share one implementation, and the serialized form is the memory
//! form on every platform. The portable functions are written branch-free over eight lanes so
//! the compiler can vectorize them; `avx2` has the explicit intrinsics version.

/// The eight odd salt constants of the Parquet specification (`BloomFilter.md`).
pub const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// Bytes per block: eight 32-bit words.
pub const BLOCK_BYTES: usize = 32;

/// The block a hash selects among `num_blocks`: the upper 32 bits scaled to the block count.
#[inline(always)]
pub(crate) fn block_index(hash: u64, num_blocks: usize) -> usize {
    // (h >> 32) < 2^32 and num_blocks <= 2^22, so the product cannot overflow.
    (((hash >> 32) * num_blocks as u64) >> 32) as usize
}

/// The one bit per word that `key` (the lower 32 bits of the hash) selects.
#[inline(always)]
pub(crate) fn masks(key: u32) -> [u32; 8] {
    let mut m = [0u32; 8];
    for i in 0..8 {
        m[i] = 1u32 << (key.wrapping_mul(SALT[i]) >> 27);
    }
    m
}

#[inline(always)]
fn word(block: &[u8; BLOCK_BYTES], i: usize) -> u32 {
    u32::from_le_bytes([
        block[4 * i],
        block[4 * i + 1],
        block[4 * i + 2],
        block[4 * i + 3],
    ])
}

/// Portable test: true when every mask bit is set.
#[inline(always)]
pub(crate) fn check(block: &[u8; BLOCK_BYTES], key: u32) -> bool {
    let m = masks(key);
    let mut missing = 0u32;
    for (i, mask) in m.iter().enumerate() {
        missing |= !word(block, i) & mask;
    }
    missing == 0
}

/// Portable insert: OR the eight masks into the block.
#[inline(always)]
pub(crate) fn insert(block: &mut [u8; BLOCK_BYTES], key: u32) {
    let m = masks(key);
    for (i, mask) in m.iter().enumerate() {
        let w = word(block, i) | mask;
        block[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
}

/// The block at `index` of a bitset; the caller guarantees `index < bits.len() / 32`.
#[inline(always)]
pub(crate) fn block(bits: &[u8], index: usize) -> &[u8; BLOCK_BYTES] {
    let start = index * BLOCK_BYTES;
    bits[start..start + BLOCK_BYTES]
        .try_into()
        .expect("a block is 32 bytes")
}

#[inline(always)]
pub(crate) fn block_mut(bits: &mut [u8], index: usize) -> &mut [u8; BLOCK_BYTES] {
    let start = index * BLOCK_BYTES;
    (&mut bits[start..start + BLOCK_BYTES])
        .try_into()
        .expect("a block is 32 bytes")
}

/// Asks the cache for the block a later probe will need; never faults, even out of bounds.
#[inline(always)]
pub(crate) fn prefetch(bits: &[u8], index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = bits.as_ptr().wrapping_add(index * BLOCK_BYTES);
        // SAFETY: prefetch is a hint; it never dereferences in a way that can fault, and SSE is
        // part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (bits, index);
    }
}

/// How far ahead batch probes prefetch: enough misses in flight to fill the line-fill buffers.
pub(crate) const PREFETCH_DISTANCE: usize = 16;

/// Whole-bitset operations in portable code; `avx2` mirrors each of them.
pub(crate) mod portable {
    use super::*;

    #[inline]
    pub(crate) fn contains_hash(bits: &[u8], hash: u64) -> bool {
        let n = bits.len() / BLOCK_BYTES;
        check(block(bits, block_index(hash, n)), hash as u32)
    }

    #[inline]
    pub(crate) fn insert_hash(bits: &mut [u8], hash: u64) {
        let n = bits.len() / BLOCK_BYTES;
        insert(block_mut(bits, block_index(hash, n)), hash as u32)
    }

    pub(crate) fn contains_hashes(bits: &[u8], hashes: &[u64], out: &mut [bool]) {
        let n = bits.len() / BLOCK_BYTES;
        for (i, (h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
            if let Some(ahead) = hashes.get(i + PREFETCH_DISTANCE) {
                prefetch(bits, block_index(*ahead, n));
            }
            *o = check(block(bits, block_index(*h, n)), *h as u32);
        }
    }

    pub(crate) fn insert_hashes(bits: &mut [u8], hashes: &[u64]) {
        let n = bits.len() / BLOCK_BYTES;
        for (i, h) in hashes.iter().enumerate() {
            if let Some(ahead) = hashes.get(i + PREFETCH_DISTANCE) {
                prefetch(bits, block_index(*ahead, n));
            }
            insert(block_mut(bits, block_index(*h, n)), *h as u32);
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;

/// True when the explicit AVX2 kernels may run on this CPU (checked once, then cached by std).
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Calls the AVX2 version of an operation when the CPU has it, the portable one otherwise.
///
/// Operations on a value hash it here, in the caller, and dispatch only the probe: a
/// `target_feature` function cannot be inlined into code compiled without the feature, so
/// hashing inside it would hash the generic way (run-time length) behind a call. Inlined into
/// the caller, the hash sees the value's length at compile time (8 for an `i64`, 16 for a
/// `[u8; 16]`) and its constants stay in registers across a loop of probes.
macro_rules! dispatch {
    (contains($bits:expr, $value:expr)) => {
        $crate::kernel::dispatch!(contains_hash($bits, $crate::hash($value)))
    };
    (insert_value($bits:expr, $value:expr)) => {
        $crate::kernel::dispatch!(insert_hash($bits, $crate::hash($value)))
    };
    ($op:ident ( $($arg:expr),* )) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if $crate::kernel::has_avx2() {
                // SAFETY: the CPU supports AVX2 (checked just above), which is all these
                // functions require; their bounds are checked inside.
                unsafe { $crate::kernel::avx2::$op($($arg),*) }
            } else {
                $crate::kernel::portable::$op($($arg),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $crate::kernel::portable::$op($($arg),*)
        }
    }};
}
pub(crate) use dispatch;
