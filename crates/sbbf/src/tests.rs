//! Property tests: every kernel sets and tests exactly the bits a plain reading of the spec does.

use crate::kernel::{self, portable};
use crate::{Sbbf, SbbfRef, SALT};
use proptest::prelude::*;

/// The spec, read aloud: no SIMD, no shortcuts, words as integers.
struct Reference {
    words: Vec<[u32; 8]>,
}

impl Reference {
    fn new(num_blocks: usize) -> Self {
        Reference {
            words: vec![[0; 8]; num_blocks],
        }
    }
    fn index(&self, h: u64) -> usize {
        let z = self.words.len() as u128;
        (((h >> 32) as u128 * z) >> 32) as usize
    }
    fn mask(key: u32, i: usize) -> u32 {
        let bit = key.wrapping_mul(SALT[i]) >> 27;
        1u32 << bit
    }
    fn insert(&mut self, h: u64) {
        let b = self.index(h);
        for i in 0..8 {
            self.words[b][i] |= Self::mask(h as u32, i);
        }
    }
    fn check(&self, h: u64) -> bool {
        let b = self.index(h);
        (0..8).all(|i| self.words[b][i] & Self::mask(h as u32, i) != 0)
    }
    fn bytes(&self) -> Vec<u8> {
        self.words
            .iter()
            .flat_map(|w| w.iter().flat_map(|x| x.to_le_bytes()))
            .collect()
    }
}

fn blocks() -> impl Strategy<Value = usize> {
    prop_oneof![1usize..=9, Just(64usize), Just(1000usize), Just(1024usize)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_kernel_matches_the_reference(
        nblocks in blocks(),
        inserted in prop::collection::vec(any::<u64>(), 0..300),
        probed in prop::collection::vec(any::<u64>(), 0..300),
    ) {
        let mut reference = Reference::new(nblocks);
        for h in &inserted { reference.insert(*h); }
        let expected = reference.bytes();

        // Portable, one at a time and in a batch.
        let mut one = vec![0u8; nblocks * 32];
        for h in &inserted { portable::insert_hash(&mut one, *h); }
        prop_assert_eq!(&one, &expected);
        let mut batch = vec![0u8; nblocks * 32];
        portable::insert_hashes(&mut batch, &inserted);
        prop_assert_eq!(&batch, &expected);

        // Whatever the dispatcher picks (AVX2 on most x86_64 machines).
        let mut f = Sbbf::from_bitset(&vec![0u8; nblocks * 32]).unwrap();
        for h in &inserted { f.insert_hash(*h); }
        prop_assert_eq!(f.as_bytes(), &expected[..]);
        let mut fb = Sbbf::from_bitset(&vec![0u8; nblocks * 32]).unwrap();
        fb.insert_hashes(&inserted);
        prop_assert_eq!(fb.as_bytes(), &expected[..]);

        let all: Vec<u64> = inserted.iter().chain(probed.iter()).copied().collect();
        let mut batch_out = vec![false; all.len()];
        f.contains_hashes(&all, &mut batch_out);
        let mut portable_out = vec![false; all.len()];
        portable::contains_hashes(&expected, &all, &mut portable_out);
        for (i, h) in all.iter().enumerate() {
            let want = reference.check(*h);
            prop_assert_eq!(portable::contains_hash(&expected, *h), want);
            prop_assert_eq!(f.contains_hash(*h), want);
            prop_assert_eq!(batch_out[i], want);
            prop_assert_eq!(portable_out[i], want);
        }
        // Inserted values are always found (no false negatives).
        for h in &inserted { prop_assert!(f.contains_hash(*h)); }
    }

    #[test]
    fn avx2_matches_portable(
        nblocks in blocks(),
        inserted in prop::collection::vec(any::<u64>(), 0..300),
        probed in prop::collection::vec(any::<u64>(), 0..300),
        values in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..50),
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            // This test is meaningless without AVX2; CI machines have it, so fail loudly.
            prop_assert!(kernel::has_avx2(), "this x86_64 CPU has no AVX2");
            use kernel::avx2;
            let mut p = vec![0u8; nblocks * 32];
            let mut a = vec![0u8; nblocks * 32];
            let mut ab = vec![0u8; nblocks * 32];
            // SAFETY (test): AVX2 presence is asserted above.
            unsafe {
                for h in &inserted {
                    portable::insert_hash(&mut p, *h);
                    avx2::insert_hash(&mut a, *h);
                }
                avx2::insert_hashes(&mut ab, &inserted);
                for v in &values {
                    let h = crate::hash(v);
                    portable::insert_hash(&mut p, h);
                    avx2::insert_hash(&mut a, h);
                    avx2::insert_hash(&mut ab, h);
                }
                prop_assert_eq!(&p, &a);
                prop_assert_eq!(&p, &ab);
                let mut out = vec![false; probed.len()];
                avx2::contains_hashes(&p, &probed, &mut out);
                for (i, h) in probed.iter().enumerate() {
                    let want = portable::contains_hash(&p, *h);
                    prop_assert_eq!(avx2::contains_hash(&p, *h), want);
                    prop_assert_eq!(out[i], want);
                }
                for v in &values {
                    prop_assert!(avx2::contains_hash(&p, crate::hash(v)));
                    prop_assert!(portable::contains_hash(&p, crate::hash(v)));
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        { let _ = (nblocks, inserted, probed, values); }
    }

    #[test]
    fn view_on_any_alignment_matches_owned(
        offset in 0usize..32,
        inserted in prop::collection::vec(any::<u64>(), 1..200),
        probed in prop::collection::vec(any::<u64>(), 0..200),
    ) {
        let mut f = Sbbf::with_num_bytes(512);
        f.insert_hashes(&inserted);
        let mut buf = vec![0xAAu8; offset];
        buf.extend_from_slice(f.as_bytes());
        let view = SbbfRef::new(&buf[offset..]).unwrap();
        for h in inserted.iter().chain(&probed) {
            prop_assert_eq!(view.contains_hash(*h), f.contains_hash(*h));
        }
    }

    #[test]
    fn fold_equals_building_small(
        log_blocks in 1u32..8,
        times in 1u32..8,
        inserted in prop::collection::vec(any::<u64>(), 0..500),
    ) {
        let times = times.min(log_blocks);
        let mut big = Sbbf::with_num_bytes(32 << log_blocks);
        let mut small = Sbbf::with_num_bytes(32 << (log_blocks - times));
        big.insert_hashes(&inserted);
        small.insert_hashes(&inserted);
        big.fold(times).unwrap();
        prop_assert_eq!(big.as_bytes(), small.as_bytes());
    }

    #[test]
    fn fold_is_exact_for_even_non_power_of_two(
        half in 1usize..50,
        inserted in prop::collection::vec(any::<u64>(), 0..300),
    ) {
        let mut big = Sbbf::from_bitset(&vec![0u8; 64 * half]).unwrap();
        let mut small = Sbbf::from_bitset(&vec![0u8; 32 * half]).unwrap();
        big.insert_hashes(&inserted);
        small.insert_hashes(&inserted);
        big.fold(1).unwrap();
        prop_assert_eq!(big.as_bytes(), small.as_bytes());
    }

    #[test]
    fn union_equals_inserting_both(
        a in prop::collection::vec(any::<u64>(), 0..200),
        b in prop::collection::vec(any::<u64>(), 0..200),
    ) {
        let (mut fa, mut fb, mut both) = (Sbbf::with_num_bytes(256), Sbbf::with_num_bytes(256), Sbbf::with_num_bytes(256));
        fa.insert_hashes(&a);
        fb.insert_hashes(&b);
        both.insert_hashes(&a);
        both.insert_hashes(&b);
        fa.union(&fb).unwrap();
        prop_assert_eq!(fa, both);
    }

    #[test]
    fn serialization_round_trips(inserted in prop::collection::vec(any::<u64>(), 0..200), kb in 0usize..6) {
        let mut f = Sbbf::with_num_bytes(32 << kb);
        f.insert_hashes(&inserted);
        let back = Sbbf::from_bitset(f.as_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
        prop_assert_eq!(SbbfRef::new(f.as_bytes()).unwrap().to_owned(), f);
    }
}

#[test]
fn fold_rejects_what_cannot_halve() {
    let mut f = Sbbf::from_bitset(&[0u8; 96]).unwrap();
    assert!(f.fold(1).is_err());
    let mut g = Sbbf::with_num_bytes(64);
    assert!(g.fold(2).is_err());
    assert!(g.fold(64).is_err());
    g.fold(1).unwrap();
    assert_eq!(g.num_bytes(), 32);
}

#[test]
fn estimated_fpp_is_exact_for_a_known_block() {
    // One block with every word half full: any absent key hits with probability 1/2^8.
    let mut bits = [0u8; 32];
    for w in 0..8 {
        bits[4 * w..4 * w + 4].copy_from_slice(&0x0000_ffffu32.to_le_bytes());
    }
    let v = SbbfRef::new(&bits).unwrap();
    assert_eq!(v.estimated_fpp(), 1.0 / 256.0);
    assert_eq!(v.count_ones(), 128);
    assert_eq!(v.fill_ratio(), 0.5);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The inlined short-input XXH64 equals `xxhash_rust` for every length and path.
    #[test]
    fn xxh64_matches_xxhash_rust(value in prop::collection::vec(any::<u8>(), 0..80)) {
        prop_assert_eq!(crate::hash(&value), xxhash_rust::xxh64::xxh64(&value, 0));
    }

    #[test]
    fn xxh64_fixed_widths_match_xxhash_rust(v in any::<u64>()) {
        let h8 = xxhash_rust::xxh64::xxh64(&v.to_le_bytes(), 0);
        prop_assert_eq!(crate::xxh64::xxh64_u64(v), h8);
        prop_assert_eq!(crate::hash(&v.to_le_bytes()), h8);
        let w = v as u32;
        let h4 = xxhash_rust::xxh64::xxh64(&w.to_le_bytes(), 0);
        prop_assert_eq!(crate::xxh64::xxh64_u32(w), h4);
        prop_assert_eq!(crate::hash(&w.to_le_bytes()), h4);
    }
}

/// A value of any length that offers its words to the batch hash when it is 4, 8 or 16 bytes
/// long: a batch of these mixes widths, which no type of the crate does.
struct AnyWidth(Vec<u8>);

impl crate::PlainValue for AnyWidth {
    fn plain_hash(&self) -> u64 {
        crate::hash(&self.0)
    }
    fn plain_words(&self) -> crate::plain::Words {
        crate::plain::Words::of(&self.0)
    }
}

/// The AVX-512 chunk hash of `values` (in chunks of both lengths the kernels use) equals
/// `plain_hash`.
#[cfg(target_arch = "x86_64")]
fn check_hash_chunks<V: crate::PlainValue>(values: &[V]) {
    use kernel::{HASH_AHEAD, HASH_AHEAD_PREFETCH};
    if !kernel::has_avx512() {
        return;
    }
    let want: Vec<u64> = values.iter().map(|v| v.plain_hash()).collect();
    for (chunk, want) in values
        .as_chunks::<HASH_AHEAD>()
        .0
        .iter()
        .zip(want.chunks(HASH_AHEAD))
    {
        // SAFETY (test): AVX2, BMI2 and AVX-512 F/DQ/VL presence is checked above.
        let got = unsafe { kernel::avx512::hash_chunk(chunk) };
        assert_eq!(&got[..], want);
    }
    let (chunks, _) = values.as_chunks::<HASH_AHEAD_PREFETCH>();
    for (chunk, want) in chunks.iter().zip(want.chunks(HASH_AHEAD_PREFETCH)) {
        // SAFETY (test): as above.
        let got = unsafe { kernel::avx512::hash_chunk(chunk) };
        assert_eq!(&got[..], want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The four-at-once XXH64 (AVX-512) equals the one-at-a-time hash for every width it takes,
    /// and for chunks of any value type, mixed widths included.
    #[test]
    fn xxh64_x4_matches_one_at_a_time(
        words in any::<[u64; 32]>(),
        lens in prop::collection::vec(prop::sample::select(vec![0usize, 3, 4, 5, 8, 9, 16, 17, 31, 40]), 16),
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            let w = words;
            let ints: Vec<i64> = w.iter().map(|v| *v as i64).collect();
            check_hash_chunks(&ints);
            check_hash_chunks(&w.map(f64::from_bits));
            check_hash_chunks(&w.map(|v| v as i32));
            check_hash_chunks(&w.map(|v| v as u32));
            check_hash_chunks(&w.map(|v| v as f32));
            check_hash_chunks(&w.map(|v| v as i16));
            check_hash_chunks(&w.map(|v| v as u8));
            check_hash_chunks(&w.map(|v| v.to_le_bytes()));
            check_hash_chunks(&w.map(|v| (v as u32).to_le_bytes()));
            let b16: Vec<[u8; 16]> = w
                .as_chunks::<2>()
                .0
                .iter()
                .chain(w.as_chunks::<2>().0)
                .map(|p| std::array::from_fn(|i| (p[i / 8] >> (8 * (i % 8))) as u8))
                .collect();
            check_hash_chunks(&b16);
            let refs: Vec<&[u8; 16]> = b16.iter().collect();
            check_hash_chunks(&refs);
            check_hash_chunks(&w.map(|v| [v as u8; 5]));
            // Mixed widths, and widths the four-at-once hash does not take.
            let bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
            let mixed: Vec<AnyWidth> = lens
                .iter()
                .enumerate()
                .map(|(i, &len)| AnyWidth(bytes[i * 8..i * 8 + len].to_vec()))
                .collect();
            check_hash_chunks(&mixed);
            let strs: Vec<&str> = lens.iter().map(|&len| &"0123456789abcdefghijklmnopqrstuvwxyz0123"[..len]).collect();
            check_hash_chunks(&strs);
        }
        #[cfg(not(target_arch = "x86_64"))]
        { let _ = (words, lens); }
    }
}

#[test]
fn xxh64_every_short_length() {
    let data: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
    for len in 0..=data.len() {
        assert_eq!(
            crate::hash(&data[..len]),
            xxhash_rust::xxh64::xxh64(&data[..len], 0),
            "length {len}"
        );
    }
}

/// Runs one batch kernel instance (`$k::$op::<V, POW2, PREFETCH>`) for every const choice valid
/// for the bitset's block count.
macro_rules! each_instance {
    ($nblocks:expr, |$pow2:ident, $prefetch:ident| $body:expr) => {{
        for $pow2 in [false, true] {
            if $pow2 && !($nblocks as usize).is_power_of_two() {
                continue;
            }
            for $prefetch in [false, true] {
                $body;
            }
        }
    }};
}

/// Calls a batch kernel with run-time booleans for its const parameters.
macro_rules! instance {
    ($k:path, $op:ident, $v:ty, $pow2:expr, $prefetch:expr, $($arg:expr),*) => {{
        use $k as k;
        match ($pow2, $prefetch) {
            (true, false) => k::$op::<$v, true, false>($($arg),*),
            (true, true) => k::$op::<$v, true, true>($($arg),*),
            (false, false) => k::$op::<$v, false, false>($($arg),*),
            (false, true) => k::$op::<$v, false, true>($($arg),*),
        }
    }};
}

/// Every batch kernel instance, and the public batch APIs, against the reference: the same bits
/// after inserting `inserted`, the same answers for `inserted` and `probed`.
fn check_batches<V: crate::PlainValue>(nblocks: usize, inserted: &[V], probed: &[V]) {
    let mut reference = Reference::new(nblocks);
    for v in inserted {
        reference.insert(v.plain_hash());
    }
    let expected = reference.bytes();
    let all: Vec<&V> = inserted.iter().chain(probed).collect();
    let want: Vec<bool> = all
        .iter()
        .map(|v| reference.check(v.plain_hash()))
        .collect();

    // One kernel instance: insert into an empty bitset, then test every value.
    macro_rules! run {
        ($k:path, $name:literal, $pow2:expr, $prefetch:expr) => {{
            let case = format!("{}, pow2 {} prefetch {}", $name, $pow2, $prefetch);
            let mut bits = vec![0u8; nblocks * 32];
            instance!($k, insert_values, V, $pow2, $prefetch, &mut bits, inserted);
            assert_eq!(bits, expected, "insert, {case}");
            let mut out = vec![false; all.len()];
            instance!(
                $k,
                contains_values,
                &V,
                $pow2,
                $prefetch,
                &bits,
                &all,
                &mut out
            );
            assert_eq!(out, want, "test, {case}");
        }};
    }
    each_instance!(nblocks, |pow2, prefetch| {
        run!(portable, "portable", pow2, prefetch);
        #[cfg(target_arch = "x86_64")]
        {
            assert!(kernel::has_avx2(), "this x86_64 CPU has no AVX2");
            // SAFETY (test): AVX2 and BMI2 presence is asserted above.
            unsafe { run!(kernel::avx2, "avx2", pow2, prefetch) };
            // The AVX-512 kernels where the CPU has them (not every CI machine does).
            if kernel::has_avx512() {
                // SAFETY (test): AVX2, BMI2 and AVX-512 F/DQ/VL presence is checked above.
                unsafe { run!(kernel::avx512, "avx512", pow2, prefetch) };
            }
        }
    });

    // The public APIs, on an owned filter and on a view.
    let mut f = Sbbf::from_bitset(&vec![0u8; nblocks * 32]).unwrap();
    f.insert_values(inserted);
    assert_eq!(f.as_bytes(), &expected[..]);
    let mut out = vec![false; all.len()];
    f.contains_values(&all, &mut out);
    assert_eq!(out, want);
    let mut out = vec![true; all.len() + 3];
    f.view().contains_values(&all, &mut out);
    assert_eq!(&out[..all.len()], &want[..]);
    assert_eq!(
        &out[all.len()..],
        &[true; 3],
        "slots past the values are left alone"
    );
    for v in inserted {
        assert!(f.contains_hash(v.plain_hash()), "no false negatives");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn batch_values_match_the_reference(
        nblocks in blocks(),
        ints in prop::collection::vec(any::<i64>(), 0..100),
        int_probes in prop::collection::vec(any::<i64>(), 0..100),
        strs in prop::collection::vec(any::<[u8; 16]>(), 0..70),
        str_probes in prop::collection::vec(any::<[u8; 16]>(), 0..70),
        bytes in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..70), 0..50),
        words in prop::collection::vec("[a-z]{0,12}", 0..40),
    ) {
        check_batches(nblocks, &ints, &int_probes);
        let small: Vec<i32> = ints.iter().map(|v| *v as i32).collect();
        check_batches(nblocks, &small, &[]);
        let floats: Vec<f64> = int_probes.iter().map(|v| f64::from_bits(*v as u64)).collect();
        check_batches(nblocks, &floats, &[]);
        check_batches(nblocks, &strs, &str_probes);
        check_batches(nblocks, &bytes, &[]);
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        check_batches(nblocks, &refs, &[]);
    }
}

/// Filters beyond `PREFETCH_ABOVE_BYTES` take the prefetching instances through the public API.
#[test]
fn batch_values_on_large_filters() {
    let values: Vec<u64> = (0..5000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let absent: Vec<u64> = (0..5000u64)
        .map(|i| !i.wrapping_mul(0x2545_f491_4f6c_dd1d))
        .collect();
    // 2 MiB (a power of two) and 1.5 MiB + one block (not one).
    for nblocks in [1usize << 16, (3 << 15) + 1] {
        assert!(nblocks * 32 > kernel::PREFETCH_ABOVE_BYTES);
        check_batches(nblocks, &values, &absent);
    }
}

#[test]
fn plain_values_hash_their_plain_bytes() {
    use crate::PlainValue;
    assert_eq!((-1i32).plain_hash(), crate::hash(&[0xff; 4]));
    assert_eq!(u32::MAX.plain_hash(), crate::hash(&[0xff; 4]));
    assert_eq!((-2i64).plain_hash(), crate::hash(&(-2i64).to_le_bytes()));
    // 8- and 16-bit integers are stored as INT32: signed ones sign-extended, unsigned zero-.
    assert_eq!((-1i8).plain_hash(), crate::hash(&[0xff; 4]));
    assert_eq!(
        (-300i16).plain_hash(),
        crate::hash(&(-300i32).to_le_bytes())
    );
    assert_eq!(200u8.plain_hash(), crate::hash(&[200, 0, 0, 0]));
    assert_eq!(65535u16.plain_hash(), crate::hash(&[0xff, 0xff, 0, 0]));
    assert_eq!(1.5f32.plain_hash(), crate::hash(&1.5f32.to_le_bytes()));
    assert_ne!(
        0.0f64.plain_hash(),
        (-0.0f64).plain_hash(),
        "bits, not SQL equality"
    );
    assert_eq!("ab".plain_hash(), crate::hash(b"ab"));
    assert_eq!(String::from("ab").plain_hash(), crate::hash(b"ab"));
    assert_eq!(b"ab".to_vec().plain_hash(), crate::hash(b"ab"));
    assert_eq!((&&"ab").plain_hash(), crate::hash(b"ab"));
    assert_eq!(b"ab"[..].plain_hash(), crate::hash(b"ab"));
}
