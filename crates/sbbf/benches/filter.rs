//! Side-by-side benchmarks of this crate's `Sbbf` and arrow-rs's `parquet::bloom_filter::Sbbf`.
//!
//! Every benchmark runs one operation over a set of `KEYS_PER_ITER` keys per iteration and
//! reports `Throughput::Elements`, so criterion's time divided by `KEYS_PER_ITER` is ns per key
//! (`tools/bench_ratios.py` does that division and prints the comparison table).
//!
//! Layout of the results: `target/criterion/<group>/<operation>/<implementation>/`, with
//! - group `sbbf_<size>_<key>`: size `32KiB`, `1MiB` or `128MiB`, key `i64` (an INT64 value,
//!   hashed as its 8 little-endian bytes) or `str16` (16-byte ASCII strings);
//! - operations `contains_present`, `contains_absent` and `insert`, hash included, for
//!   implementations `ours` (one `contains`/`insert` call per key, like arrow-rs's
//!   `check`/`insert`), `ours-batch` (`contains_values`/`insert_values` over the window's keys)
//!   and `arrow-rs` (which has no batch API); for i64 tests also `ours-view` and
//!   `ours-view-batch`, the same through an `SbbfRef` over a copy of the bitset at an odd address;
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
//! Run: `cargo bench -p sbbf` (about five minutes), then `python3 tools/bench_ratios.py`.
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

/// Hash included: ours and arrow-rs side by side on the same bits.
fn bench_values(c: &mut Criterion, size: &str, num_bytes: usize, kt: KeyType) {
    let mut ours = filled(num_bytes, kt);
    let mut arrow = ArrowSbbf::new(ours.as_bytes());
    let fill = (num_bytes * 8 / 10) as u64;
    let n = pool_len(num_bytes);
    let present = present_indices(fill, n, 0x5eed);
    let absent = fresh_indices(ABSENT_BASE, n);
    let to_insert = fresh_indices(INSERT_BASE, n);

    let mut g = configure(c, &format!("sbbf_{size}_{}", kt.name()), num_bytes);
    match kt {
        KeyType::I64 => {
            let present: Vec<i64> = present.iter().map(|&i| key_i64(i)).collect();
            let absent: Vec<i64> = absent.iter().map(|&i| key_i64(i)).collect();
            let to_insert: Vec<i64> = to_insert.iter().map(|&i| key_i64(i)).collect();
            for k in present.iter().chain(&absent).take(64) {
                assert_eq!(ours.contains(&k.to_le_bytes()), arrow.check(k));
            }
            assert!(present.iter().all(|k| ours.contains(&k.to_le_bytes())));
            // A copy of the bitset one byte into a buffer: a view at an odd address, as a slice
            // of a file read would be.
            let mut file_bytes = vec![0u8; num_bytes + 1];
            file_bytes[1..].copy_from_slice(ours.as_bytes());
            let view = SbbfRef::new(&file_bytes[1..]).unwrap();
            for (op, keys) in [("contains_present", &present), ("contains_absent", &absent)] {
                g.bench_function(BenchmarkId::new(op, "ours"), |b| {
                    let mut w = Windows::new(keys);
                    b.iter(|| {
                        let mut hits = 0usize;
                        for k in w.next() {
                            hits += ours.contains(&k.to_le_bytes()) as usize;
                        }
                        hits
                    })
                });
                g.bench_function(BenchmarkId::new(op, "ours-view"), |b| {
                    let mut w = Windows::new(keys);
                    b.iter(|| {
                        let mut hits = 0usize;
                        for k in w.next() {
                            hits += view.contains(&k.to_le_bytes()) as usize;
                        }
                        hits
                    })
                });
                g.bench_function(BenchmarkId::new(op, "ours-view-batch"), |b| {
                    let mut w = Windows::new(keys);
                    let mut out = vec![false; KEYS_PER_ITER];
                    b.iter(|| {
                        view.contains_values(w.next(), &mut out);
                        out.iter().filter(|&&o| o).count()
                    })
                });
                g.bench_function(BenchmarkId::new(op, "arrow-rs"), |b| {
                    let mut w = Windows::new(keys);
                    b.iter(|| {
                        let mut hits = 0usize;
                        for k in w.next() {
                            hits += arrow.check(k) as usize;
                        }
                        hits
                    })
                });
                g.bench_function(BenchmarkId::new(op, "ours-batch"), |b| {
                    let mut w = Windows::new(keys);
                    let mut out = vec![false; KEYS_PER_ITER];
                    b.iter(|| {
                        ours.contains_values(w.next(), &mut out);
                        out.iter().filter(|&&o| o).count()
                    })
                });
            }
            g.bench_function(BenchmarkId::new("insert", "ours"), |b| {
                let mut w = Windows::new(&to_insert);
                b.iter(|| {
                    for k in w.next() {
                        ours.insert(&black_box(*k).to_le_bytes());
                    }
                })
            });
            g.bench_function(BenchmarkId::new("insert", "arrow-rs"), |b| {
                let mut w = Windows::new(&to_insert);
                b.iter(|| {
                    for k in w.next() {
                        arrow.insert(&black_box(*k));
                    }
                })
            });
            g.bench_function(BenchmarkId::new("insert", "ours-batch"), |b| {
                let mut w = Windows::new(&to_insert);
                b.iter(|| ours.insert_values(black_box(w.next())))
            });
        }
        KeyType::Str16 => {
            let present: Vec<[u8; 16]> = present.iter().map(|&i| key_str16(i)).collect();
            let absent: Vec<[u8; 16]> = absent.iter().map(|&i| key_str16(i)).collect();
            let to_insert: Vec<[u8; 16]> = to_insert.iter().map(|&i| key_str16(i)).collect();
            for k in present.iter().chain(&absent).take(64) {
                assert_eq!(ours.contains(k), arrow.check(&k[..]));
            }
            assert!(present.iter().all(|k| ours.contains(k)));
            for (op, keys) in [("contains_present", &present), ("contains_absent", &absent)] {
                g.bench_function(BenchmarkId::new(op, "ours"), |b| {
                    let mut w = Windows::new(keys);
                    b.iter(|| {
                        let mut hits = 0usize;
                        for k in w.next() {
                            hits += ours.contains(k) as usize;
                        }
                        hits
                    })
                });
                g.bench_function(BenchmarkId::new(op, "arrow-rs"), |b| {
                    let mut w = Windows::new(keys);
                    b.iter(|| {
                        let mut hits = 0usize;
                        for k in w.next() {
                            hits += arrow.check(&k[..]) as usize;
                        }
                        hits
                    })
                });
                g.bench_function(BenchmarkId::new(op, "ours-batch"), |b| {
                    let mut w = Windows::new(keys);
                    let mut out = vec![false; KEYS_PER_ITER];
                    b.iter(|| {
                        ours.contains_values(w.next(), &mut out);
                        out.iter().filter(|&&o| o).count()
                    })
                });
            }
            g.bench_function(BenchmarkId::new("insert", "ours"), |b| {
                let mut w = Windows::new(&to_insert);
                b.iter(|| {
                    for k in w.next() {
                        ours.insert(black_box(k));
                    }
                })
            });
            g.bench_function(BenchmarkId::new("insert", "arrow-rs"), |b| {
                let mut w = Windows::new(&to_insert);
                b.iter(|| {
                    for k in w.next() {
                        arrow.insert(black_box(&k[..]));
                    }
                })
            });
            g.bench_function(BenchmarkId::new("insert", "ours-batch"), |b| {
                let mut w = Windows::new(&to_insert);
                b.iter(|| ours.insert_values(black_box(w.next())))
            });
        }
    }
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
