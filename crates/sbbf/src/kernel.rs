//! Per-block work: the eight masks of a key, and setting or testing them in one 256-bit block.
//!
//! Everything here works on a block as 32 little-endian bytes, so the owned filter and a view
//! over someone else's buffer share one implementation, and the serialized form is the memory
//! form on every platform. The portable functions are written branch-free over eight lanes so
//! the compiler can vectorize them; `avx2` has the explicit intrinsics version.

use crate::PlainValue;

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

/// Shift for [`block_offset`] when the block count is a power of two (any value otherwise).
#[inline(always)]
pub(crate) fn pow2_shift(num_blocks: usize) -> u32 {
    59u32.wrapping_sub(num_blocks.trailing_zeros())
}

/// Byte offset of the block a hash selects: `block_index * 32`. With `POW2` (a power-of-two
/// block count `2^k`, `shift == pow2_shift(2^k)`) the scaling multiply is a shift, since
/// `((h >> 32) * 2^k) >> 32 == h >> (64 - k)`; keeping five more bits and clearing them makes the
/// byte offset. Hashing already keeps the one multiplier port busy, so the shift is a measurable
/// saving in the batch kernels.
#[inline(always)]
pub(crate) fn block_offset<const POW2: bool>(hash: u64, num_blocks: usize, shift: u32) -> usize {
    if POW2 {
        ((hash >> shift) as usize) & !(BLOCK_BYTES - 1)
    } else {
        block_index(hash, num_blocks) * BLOCK_BYTES
    }
}

/// How many values ahead of its probe a batch hashes a value, for filters that fit the inner
/// caches.
pub(crate) const HASH_AHEAD: usize = 16;

/// The same for filters beyond `PREFETCH_ABOVE_BYTES`, whose blocks are prefetched when hashed:
/// a block from memory needs a longer lead. Against 16, on the 128 MiB filter: batch tests and
/// inserts 8-20% faster (i64 test of absent keys 12.1-14.8 -> 11.0-11.2 ns a key; A/B on the
/// machine of the README).
pub(crate) const HASH_AHEAD_PREFETCH: usize = 32;

/// How a batch hashes the values it hashes ahead (see [`hashed_ahead`]).
pub(crate) trait Hasher<V: PlainValue> {
    /// True to hash whole chunks with [`Hasher::chunk`]; false to hash one value per probe.
    const CHUNKS: bool;

    /// `plain_hash` of every value of `values`, exactly.
    fn chunk<const N: usize>(&mut self, values: &[V; N]) -> [u64; N];
}

/// One value at a time, each hashed right beside a probe.
pub(crate) struct OneAtATime;

impl<V: PlainValue> Hasher<V> for OneAtATime {
    const CHUNKS: bool = false;

    #[inline(always)]
    fn chunk<const N: usize>(&mut self, values: &[V; N]) -> [u64; N] {
        values.each_ref().map(|v| v.plain_hash())
    }
}

/// Sets `out[i] = now(hash of values[i])` for every value in order, having hashed each value
/// `A` values earlier and shown that hash to `ahead` then (to prefetch its block).
/// `out` must be exactly as long as `values`.
///
/// Why not hash and probe in one step: XXH64 is a chain of five dependent multiplies (about 30
/// cycles), and a probe issued right behind its own hash sits in the scheduler all that time;
/// with a few keys in flight the scheduler fills and the core stalls. Hashed ahead, a probe's
/// inputs are ready when it issues. Measured on i64 keys, 32 KiB filter: 3.2 ns -> 2.5 ns a key.
/// Fixed-size chunks let the compiler drop the bounds checks in the steady state.
///
/// With a hasher of whole chunks (`H::CHUNKS`), the steady state hashes the next `A` values in
/// one call (several at once) and then probes the current `A`; otherwise it hashes one value
/// beside each probe.
#[inline(always)]
pub(crate) fn hashed_ahead<V: PlainValue, T, H: Hasher<V>, const A: usize>(
    values: &[V],
    out: &mut [T],
    hasher: &mut H,
    mut ahead: impl FnMut(u64),
    mut now: impl FnMut(u64) -> T,
) {
    let n = values.len();
    assert_eq!(out.len(), n, "one output per value");
    let mut ring = [0u64; A];
    for (slot, v) in ring.iter_mut().zip(values) {
        *slot = v.plain_hash();
        ahead(*slot);
    }
    // Steady state: probe values[base..base + A] (hashed last round) while hashing the next A
    // values into the slots they free.
    let mut base = 0;
    while base + 2 * A <= n {
        let next: &[V; A] = values[base + A..base + 2 * A].try_into().expect("A values");
        let out: &mut [T; A] = (&mut out[base..base + A]).try_into().expect("A outputs");
        if H::CHUNKS {
            let probe = core::mem::replace(&mut ring, hasher.chunk(next));
            for j in 0..A {
                ahead(ring[j]);
                out[j] = now(probe[j]);
            }
        } else {
            for j in 0..A {
                let h = ring[j];
                ring[j] = next[j].plain_hash();
                ahead(ring[j]);
                out[j] = now(h);
            }
        }
        base += A;
    }
    // Fewer than 2 * A values remain; the ring holds the first A of them.
    for (j, (v, o)) in values[base..].iter().zip(&mut out[base..]).enumerate() {
        *o = now(match ring.get(j) {
            Some(h) => *h,
            None => v.plain_hash(),
        });
    }
}

/// [`hashed_ahead`] for a bitset of `num_bytes` at `base`: `now(offset, key)` gets the byte
/// offset of the block a value selects (always `+ 32 <= num_bytes`) and its key (the hash's
/// lower 32 bits); with `PREFETCH` that block was prefetched `HASH_AHEAD_PREFETCH` values
/// earlier (else values are hashed `HASH_AHEAD` ahead).
#[inline(always)]
pub(crate) fn blocks_ahead<
    V: PlainValue,
    T,
    H: Hasher<V>,
    const POW2: bool,
    const PREFETCH: bool,
>(
    values: &[V],
    out: &mut [T],
    base: *const u8,
    num_bytes: usize,
    hasher: &mut H,
    mut now: impl FnMut(usize, u32) -> T,
) {
    let n = num_bytes / BLOCK_BYTES;
    let shift = pow2_shift(n);
    let ahead = |h| {
        if PREFETCH {
            prefetch_at(base, block_offset::<POW2>(h, n, shift))
        }
    };
    let now = |h| now(block_offset::<POW2>(h, n, shift), h as u32);
    if PREFETCH {
        hashed_ahead::<V, T, H, HASH_AHEAD_PREFETCH>(values, out, hasher, ahead, now)
    } else {
        hashed_ahead::<V, T, H, HASH_AHEAD>(values, out, hasher, ahead, now)
    }
}

/// Output slots for batch inserts, which produce nothing: a `Vec<()>` never allocates.
pub(crate) fn no_output(len: usize) -> Vec<()> {
    vec![(); len]
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

/// The block at byte `offset`; the caller guarantees `offset + 32 <= bits.len()`.
#[inline(always)]
pub(crate) fn block_at(bits: &[u8], offset: usize) -> &[u8; BLOCK_BYTES] {
    bits[offset..offset + BLOCK_BYTES]
        .try_into()
        .expect("a block is 32 bytes")
}

#[inline(always)]
pub(crate) fn block_at_mut(bits: &mut [u8], offset: usize) -> &mut [u8; BLOCK_BYTES] {
    (&mut bits[offset..offset + BLOCK_BYTES])
        .try_into()
        .expect("a block is 32 bytes")
}

/// Asks the cache for the block a later probe will need; never faults, even out of bounds.
#[inline(always)]
pub(crate) fn prefetch(bits: &[u8], index: usize) {
    prefetch_at(bits.as_ptr(), index * BLOCK_BYTES)
}

/// [`prefetch`] by the block's byte offset from the bitset's start.
///
/// Both ends of the block are asked for: a view's bitset often starts at an odd address (in a
/// file, it follows a header of any length), and then half of its blocks straddle two cache
/// lines. Prefetching only the first line made batch probes of a 128 MiB view at an odd address
/// 1.3-1.9x slower than of the aligned owned filter. For aligned blocks the second hint names
/// the same line and costs one issue slot.
#[inline(always)]
pub(crate) fn prefetch_at(base: *const u8, offset: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = base.wrapping_add(offset);
        // SAFETY: prefetch is a hint; it never dereferences in a way that can fault, whatever
        // the address, and SSE is part of the x86_64 baseline.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(BLOCK_BYTES - 1) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (base, offset);
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

    #[inline]
    pub(crate) fn contains_values<V: PlainValue, const POW2: bool, const PREFETCH: bool>(
        bits: &[u8],
        values: &[V],
        out: &mut [bool],
    ) {
        let out = &mut out[..values.len()];
        blocks_ahead::<V, bool, _, POW2, PREFETCH>(
            values,
            out,
            bits.as_ptr(),
            bits.len(),
            &mut OneAtATime,
            |at, key| check(block_at(bits, at), key),
        );
    }

    #[inline]
    pub(crate) fn insert_values<V: PlainValue, const POW2: bool, const PREFETCH: bool>(
        bits: &mut [u8],
        values: &[V],
    ) {
        let (base, len) = (bits.as_ptr(), bits.len());
        let out = &mut no_output(values.len());
        blocks_ahead::<V, (), _, POW2, PREFETCH>(
            values,
            out,
            base,
            len,
            &mut OneAtATime,
            |at, key| insert(block_at_mut(bits, at), key),
        );
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;

/// Filters above this size prefetch in batch kernels; below it blocks sit in L1 or L2, where
/// out-of-order execution hides the latency and a prefetch only costs issue slots (0.2 ns a key
/// measured on a 32 KiB filter).
pub(crate) const PREFETCH_ABOVE_BYTES: usize = 1 << 20;

/// Picks the instance of a batch kernel for a bitset: block lookup by shift for power-of-two
/// block counts, prefetching for filters beyond the inner caches. Chosen once per batch.
macro_rules! batch {
    ($kernel:path, $op:ident, $v:ty, $bits:expr, $($arg:expr),*) => {{
        use $kernel as k;
        let len = $bits.len();
        match ((len / BLOCK_BYTES).is_power_of_two(), len > PREFETCH_ABOVE_BYTES) {
            (true, false) => k::$op::<$v, true, false>($bits, $($arg),*),
            (true, true) => k::$op::<$v, true, true>($bits, $($arg),*),
            (false, false) => k::$op::<$v, false, false>($bits, $($arg),*),
            (false, true) => k::$op::<$v, false, true>($bits, $($arg),*),
        }
    }};
}

/// True when a batch of `values` over a bitset of `num_bytes` takes the AVX-512 kernels: values
/// of 4, 8 or 16 bytes (hashed four at once), a filter that fits the inner caches, on a CPU
/// with AVX-512 F, DQ and VL besides AVX2 and BMI2.
///
/// Beyond the caches the AVX2 kernels run: there a batch waits on memory, and hashing a chunk
/// at once measured 5-15% slower on the 128 MiB filter than hashing one value beside each
/// probe (A/B, same build), while it is 30-40% faster at 32 KiB and 1 MiB.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn wide_hash<V: PlainValue>(values: &[V], num_bytes: usize) -> bool {
    num_bytes <= PREFETCH_ABOVE_BYTES
        && values
            .first()
            .is_some_and(|v| !matches!(v.plain_words(), crate::plain::Words::Other))
        && has_avx512()
}

/// Tests a batch of values with the AVX2 kernel when the CPU has it (values of 4, 8 or 16
/// bytes hashed four at once when it also has AVX-512, see [`wide_hash`]).
pub(crate) fn contains_values<V: PlainValue>(bits: &[u8], values: &[V], out: &mut [bool]) {
    #[cfg(target_arch = "x86_64")]
    if wide_hash(values, bits.len()) {
        // SAFETY: the CPU supports AVX2, BMI2 and AVX-512 F/DQ/VL, all these kernels require.
        unsafe { batch!(avx512, contains_values, V, bits, values, out) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 and BMI2, all these kernels require.
        unsafe { batch!(avx2, contains_values, V, bits, values, out) };
        return;
    }
    batch!(portable, contains_values, V, bits, values, out)
}

/// Inserts a batch of values; see [`contains_values`].
pub(crate) fn insert_values<V: PlainValue>(bits: &mut [u8], values: &[V]) {
    #[cfg(target_arch = "x86_64")]
    if wide_hash(values, bits.len()) {
        // SAFETY: as in `contains_values`.
        unsafe { batch!(avx512, insert_values, V, bits, values) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: as in `contains_values`.
        unsafe { batch!(avx2, insert_values, V, bits, values) };
        return;
    }
    batch!(portable, insert_values, V, bits, values)
}

/// True when the explicit AVX2 kernels (which also use BMI2's shifts) may run on this CPU.
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::AtomicU8;
        // Built for CPUs that have both (e.g. `-C target-cpu=native`): no check at all, and the
        // AVX2 kernels inline into their callers.
        if cfg!(all(target_feature = "avx2", target_feature = "bmi2")) {
            return true;
        }
        static HAS: AtomicU8 = AtomicU8::new(0);
        detected_once(&HAS, || {
            std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi2")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True when the CPU has AVX2 and BMI2 (see [`has_avx2`]) and AVX-512 F, DQ and VL, which the
/// several-at-once hash of [`avx512`] needs (a 64-bit lane multiply).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx512() -> bool {
    use std::sync::atomic::AtomicU8;
    if !has_avx2() {
        return false;
    }
    if cfg!(all(
        target_feature = "avx512f",
        target_feature = "avx512dq",
        target_feature = "avx512vl"
    )) {
        return true;
    }
    static HAS: AtomicU8 = AtomicU8::new(0);
    detected_once(&HAS, || {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl")
    })
}

/// `detect()`, asked once and remembered in `flag` (0: not yet asked, 1: no, 2: yes): one load
/// and compare on every probe, cheaper than asking std for several features each time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn detected_once(flag: &std::sync::atomic::AtomicU8, detect: impl FnOnce() -> bool) -> bool {
    use std::sync::atomic::Ordering;
    match flag.load(Ordering::Relaxed) {
        2 => true,
        1 => false,
        _ => {
            let has = detect();
            flag.store(if has { 2 } else { 1 }, Ordering::Relaxed);
            has
        }
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
                // SAFETY: the CPU supports AVX2 and BMI2 (checked just above), which is all
                // these functions require; their bounds are checked inside.
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
