//! Side-by-side benchmarks of this crate's `Sbbf` and arrow-rs's `parquet::bloom_filter::Sbbf`.
//!
//! Every benchmark runs one operation over a set of `KEYS_PER_ITER` keys per iteration and
//! reports `Throughput::Elements`, so criterion's time divided by `KEYS_PER_ITER` is ns per key
//! (`tools/bench/bench_ratios.py` does that division and prints the comparison table).
//!
//! Layout of the results: `target/criterion/<group>/<operation>/<implementation>/`, with
//! - group `sbbf_<size>_<key>`: size `32KiB`, `1MiB` or `128MiB`, key `i64` (an INT64 value,
//!   hashed as its 8 little-endian bytes) or `str16` (16-byte ASCII strings);
//! - operations `contains_present`, `contains_absent` and `insert`, hash included, for
//!   implementations `ours` (one `contains`/`insert` call per key, like arrow-rs's
//!   `check`/`insert`), `ours-batch` (`contains_values`/`insert_values` over the window's keys)
//!   and `arrow-rs` (which has no batch API); for i64 tests also `ours-view` and
//!   `ours-view-batch`, the same through an `SbbfRef` over a copy of the bitset at an odd address;
//! - operation `hash_only`, implementation `xxh64`: only the hash of the absent keys (XXH64, seed
//!   0, through `PlainValue::plain_hash` as the batch kernels call it), results summed;
//! - group `sbbf_<size>_hash`: our operations on pre-computed hashes (`insert_hash`,
//!   `contains_hash_present`, `contains_hash_absent`, the batch `contains_hashes_absent`) and
//!   `floor_read`, the bare random 32-byte reads at the same block indices as the batch. arrow-rs
//!   has no public API that takes a hash, so these have no arrow-rs counterpart.
//!
//! Filters are filled realistically before testing: `num_bytes * 8 / 10` distinct keys (about
//! what the filter holds at a 1% false-positive rate). Both implementations probe the very same
//! bits: the arrow-rs filter is built from our bitset (and spot-checked to agree). Present keys
//! are drawn from the inserted ones, absent keys were never inserted; each iteration takes the
//! next window of a key pool (64 Ki keys, 4 Mi for 128 MiB), so that repeated iterations neither
//! hit warm caches nor let the branch predictor learn arrow-rs's early exits.
//!
//! Run: `cargo bench -p sbbf` (five to eight minutes), then `python3 tools/bench/bench_ratios.py`.
//! A subset: `cargo bench -p sbbf -- sbbf_32KiB`.

use criterion::measurement::WallTime;
use criterion::{
    black_box, criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use parquet::bloom_filter::Sbbf as ArrowSbbf;
use sbbf::{Sbbf, SbbfRef};
use std::time::Duration;

/// Keys per benchmark iteration; results are per key.
const KEYS_PER_ITER: usize = 4096;

/// Each benchmark walks a pool of keys, a different window of `KEYS_PER_ITER` each iteration, so
/// that neither the caches (a 4096-key set touches only 256 KiB of blocks) nor the branch
/// predictors can learn a repeated set. The pool for the 128 MiB filter touches most of it.
fn pool_len(num_bytes: usize) -> usize {
    if num_bytes > (8 << 20) {
        1 << 22
    } else {
        1 << 16
    }
}

/// Cycles through `pool` a window of `KEYS_PER_ITER` at a time.
struct Windows<'a, T> {
    pool: &'a [T],
    pos: usize,
}

impl<'a, T> Windows<'a, T> {
    fn new(pool: &'a [T]) -> Self {
        assert!(pool.len().is_multiple_of(KEYS_PER_ITER));
        Windows { pool, pos: 0 }
    }

    #[inline(always)]
    fn next(&mut self) -> &'a [T] {
        let w = &self.pool[self.pos..self.pos + KEYS_PER_ITER];
        self.pos = (self.pos + KEYS_PER_ITER) % self.pool.len();
        w
    }
}

const SIZES: [(&str, usize); 3] = [
    ("32KiB", 32 << 10),
    ("1MiB", 1 << 20),
    ("128MiB", 128 << 20),
];

/// Key index ranges: filled keys are `0..fill`, absent and insert keys live far above.
const ABSENT_BASE: u64 = 1 << 40;
const INSERT_BASE: u64 = 1 << 41;

/// A bijection on u64 (splitmix64's finalizer), so distinct indices give distinct keys.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn key_i64(i: u64) -> i64 {
    mix(i) as i64
}

/// 16 lowercase hex digits of `mix(i)`: a 16-byte string, distinct for distinct `i`.
fn key_str16(i: u64) -> [u8; 16] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let v = mix(i);
    std::array::from_fn(|d| HEX[((v >> (60 - 4 * d)) & 0xf) as usize])
}

#[derive(Clone, Copy)]
enum KeyType {
    I64,
    Str16,
}

impl KeyType {
    fn name(self) -> &'static str {
        match self {
            KeyType::I64 => "i64",
            KeyType::Str16 => "str16",
        }
    }

    fn hash(self, i: u64) -> u64 {
        match self {
            KeyType::I64 => sbbf::hash(&key_i64(i).to_le_bytes()),
            KeyType::Str16 => sbbf::hash(&key_str16(i)),
        }
    }
}

/// `count` key indices: `count` random ones in `0..fill` (present), or consecutive ones from
/// `base` (never inserted).
fn present_indices(fill: u64, count: usize, seed: u64) -> Vec<u64> {
    (0..count as u64)
        .map(|j| mix(seed ^ mix(j)) % fill)
        .collect()
}

fn fresh_indices(base: u64, count: usize) -> Vec<u64> {
    (base..base + count as u64).collect()
}

/// Our filter of `num_bytes` with `num_bytes * 8 / 10` keys of `kt` inserted.
fn filled(num_bytes: usize, kt: KeyType) -> Sbbf {
    let mut f = Sbbf::with_num_bytes(num_bytes);
    assert_eq!(f.num_bytes(), num_bytes);
    let fill = (num_bytes * 8 / 10) as u64;
    let mut hashes = Vec::with_capacity(1 << 16);
    let mut start = 0u64;
    while start < fill {
        let end = (start + (1 << 16)).min(fill);
        hashes.clear();
        hashes.extend((start..end).map(|i| kt.hash(i)));
        f.insert_hashes(&hashes);
        start = end;
    }
    f
}

fn configure<'a>(
    c: &'a mut Criterion,
    group: &str,
    num_bytes: usize,
) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(KEYS_PER_ITER as u64));
    // Large filters take ~100 ns per key (DRAM misses), so fewer, longer samples suffice.
    if num_bytes > (8 << 20) {
        g.sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
    } else {
        g.sample_size(30)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_millis(1500));
    }
    g
}

/// A key type of the hash-included benchmarks: how each implementation takes it.
trait BenchKey: sbbf::PlainValue + Copy {
    /// The bytes a Parquet writer hashes, for our one-call-per-key APIs.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
    fn arrow_check(&self, f: &ArrowSbbf) -> bool;
    fn arrow_insert(&self, f: &mut ArrowSbbf);
}

impl BenchKey for i64 {
    #[inline(always)]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&self.to_le_bytes())
    }
    #[inline(always)]
    fn arrow_check(&self, f: &ArrowSbbf) -> bool {
        f.check(self)
    }
    #[inline(always)]
    fn arrow_insert(&self, f: &mut ArrowSbbf) {
        f.insert(self)
    }
}

impl BenchKey for [u8; 16] {
    #[inline(always)]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
    #[inline(always)]
    fn arrow_check(&self, f: &ArrowSbbf) -> bool {
        f.check(&self[..])
    }
    #[inline(always)]
    fn arrow_insert(&self, f: &mut ArrowSbbf) {
        f.insert(&self[..])
    }
}

/// Our test of every key of a window, one `contains` call per key.
fn one_by_one<'a, K: BenchKey>(
    f: SbbfRef<'a>,
    keys: &'a [K],
) -> impl FnMut(&mut criterion::Bencher<'_>) + 'a {
    move |b| {
        let mut w = Windows::new(keys);
        b.iter(|| {
            let mut hits = 0usize;
            for k in w.next() {
                hits += k.with_bytes(|v| f.contains(v)) as usize;
            }
            hits
        })
    }
}

/// Our test of every key of a window, one `contains_values` call for the window.
fn batch<'a, K: BenchKey>(
    f: SbbfRef<'a>,
    keys: &'a [K],
) -> impl FnMut(&mut criterion::Bencher<'_>) + 'a {
    move |b| {
        let mut w = Windows::new(keys);
        let mut out = vec![false; KEYS_PER_ITER];
        b.iter(|| {
            f.contains_values(w.next(), &mut out);
            out.iter().filter(|&&o| o).count()
        })
    }
}

/// Hash included: ours and arrow-rs side by side on the same bits.
fn bench_values(c: &mut Criterion, size: &str, num_bytes: usize, kt: KeyType) {
    match kt {
        KeyType::I64 => bench_keys(c, size, num_bytes, kt, key_i64, true),
        KeyType::Str16 => bench_keys(c, size, num_bytes, kt, key_str16, false),
    }
}

/// The hash-included benchmarks for keys `key(i)`; `views` adds the zero-copy view rows.
fn bench_keys<K: BenchKey>(
    c: &mut Criterion,
    size: &str,
    num_bytes: usize,
    kt: KeyType,
    key: fn(u64) -> K,
    views: bool,
) {
    let mut ours = filled(num_bytes, kt);
    let mut arrow = ArrowSbbf::new(ours.as_bytes());
    let fill = (num_bytes * 8 / 10) as u64;
    let n = pool_len(num_bytes);
    let keys = |idx: Vec<u64>| -> Vec<K> { idx.into_iter().map(key).collect() };
    let present = keys(present_indices(fill, n, 0x5eed));
    let absent = keys(fresh_indices(ABSENT_BASE, n));
    let to_insert = keys(fresh_indices(INSERT_BASE, n));
    for k in present.iter().chain(&absent).take(64) {
        assert_eq!(k.with_bytes(|b| ours.contains(b)), k.arrow_check(&arrow));
    }
    assert!(present.iter().all(|k| k.with_bytes(|b| ours.contains(b))));
    // A copy of the bitset one byte into a buffer: a view at an odd address, as a slice of a
    // file read would be.
    let mut file_bytes = vec![0u8; num_bytes + 1];
    file_bytes[1..].copy_from_slice(ours.as_bytes());
    let view = SbbfRef::new(&file_bytes[1..]).unwrap();

    let mut g = configure(c, &format!("sbbf_{size}_{}", kt.name()), num_bytes);
    for (op, keys) in [("contains_present", &present), ("contains_absent", &absent)] {
        g.bench_function(BenchmarkId::new(op, "ours"), one_by_one(ours.view(), keys));
        g.bench_function(BenchmarkId::new(op, "arrow-rs"), |b| {
            let mut w = Windows::new(keys);
            b.iter(|| {
                let mut hits = 0usize;
                for k in w.next() {
                    hits += k.arrow_check(&arrow) as usize;
                }
                hits
            })
        });
        g.bench_function(BenchmarkId::new(op, "ours-batch"), batch(ours.view(), keys));
        if views {
            g.bench_function(BenchmarkId::new(op, "ours-view"), one_by_one(view, keys));
            g.bench_function(BenchmarkId::new(op, "ours-view-batch"), batch(view, keys));
        }
    }
    // The hash alone: XXH64 (seed 0) of the absent-key windows through `PlainValue::plain_hash`,
    // the function the batch kernels hash with, summed so that none can be skipped. With
    // `floor_read` of the `_hash` group it bounds what a batch test of these keys can cost.
    g.bench_function(BenchmarkId::new("hash_only", "xxh64"), |b| {
        let mut w = Windows::new(&absent);
        b.iter(|| {
            let mut acc = 0u64;
            for k in black_box(w.next()) {
                acc = acc.wrapping_add(k.plain_hash());
            }
            acc
        })
    });
    g.bench_function(BenchmarkId::new("insert", "ours"), |b| {
        let mut w = Windows::new(&to_insert);
        b.iter(|| {
            for k in w.next() {
                black_box(*k).with_bytes(|v| ours.insert(v));
            }
        })
    });
    g.bench_function(BenchmarkId::new("insert", "arrow-rs"), |b| {
        let mut w = Windows::new(&to_insert);
        b.iter(|| {
            for k in w.next() {
                black_box(*k).arrow_insert(&mut arrow);
            }
        })
    });
    g.bench_function(BenchmarkId::new("insert", "ours-batch"), |b| {
        let mut w = Windows::new(&to_insert);
        b.iter(|| ours.insert_values(black_box(w.next())))
    });
    g.finish();
}

/// Our operations on pre-computed hashes, and the memory floor of the batch probe.
fn bench_hashes(c: &mut Criterion, size: &str, num_bytes: usize) {
    let kt = KeyType::I64;
    let mut ours = filled(num_bytes, kt);
    let fill = (num_bytes * 8 / 10) as u64;
    let hash_of = |idx: Vec<u64>| -> Vec<u64> { idx.into_iter().map(|i| kt.hash(i)).collect() };
    let n = pool_len(num_bytes);
    let present = hash_of(present_indices(fill, n, 0x5eed));
    let absent = hash_of(fresh_indices(ABSENT_BASE, n));
    let to_insert = hash_of(fresh_indices(INSERT_BASE, n));
    assert!(present.iter().all(|h| ours.contains_hash(*h)));

    let mut g = configure(c, &format!("sbbf_{size}_hash"), num_bytes);
    for (op, hashes) in [
        ("contains_hash_present", &present),
        ("contains_hash_absent", &absent),
    ] {
        g.bench_function(BenchmarkId::new(op, "ours"), |b| {
            let mut w = Windows::new(hashes);
            b.iter(|| {
                let mut hits = 0usize;
                for h in w.next() {
                    hits += ours.contains_hash(*h) as usize;
                }
                hits
            })
        });
    }
    let mut out = vec![false; KEYS_PER_ITER];
    g.bench_function(BenchmarkId::new("contains_hashes_absent", "ours"), |b| {
        let mut w = Windows::new(&absent);
        b.iter(|| {
            ours.contains_hashes(black_box(w.next()), &mut out);
            out.iter().filter(|&&o| o).count()
        })
    });
    // The floor: one bare 32-byte read per hash, at the block the batch probe reads, OR-ed
    // together so that nothing can be skipped. No hashing, no mask, no prefetch.
    let (blocks, rest) = ours.as_bytes().as_chunks::<32>();
    assert!(rest.is_empty());
    let n = blocks.len() as u64;
    g.bench_function(BenchmarkId::new("floor_read", "floor"), |b| {
        let mut w = Windows::new(&absent);
        b.iter(|| {
            let mut acc = [0u64; 4];
            for h in black_box(w.next()) {
                let block = &blocks[(((h >> 32) * n) >> 32) as usize];
                for (a, w) in acc.iter_mut().zip(block.as_chunks::<8>().0) {
                    *a |= u64::from_le_bytes(*w);
                }
            }
            acc
        })
    });
    g.bench_function(BenchmarkId::new("insert_hash", "ours"), |b| {
        let mut w = Windows::new(&to_insert);
        b.iter(|| {
            for h in w.next() {
                ours.insert_hash(black_box(*h));
            }
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    eprintln!("sbbf kernel: {}", sbbf::kernel_name());
    for (size, num_bytes) in SIZES {
        bench_values(c, size, num_bytes, KeyType::I64);
        bench_values(c, size, num_bytes, KeyType::Str16);
        bench_hashes(c, size, num_bytes);
    }
}

criterion_group!(filter, benches);
criterion_main!(filter);
