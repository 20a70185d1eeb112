//! Loading a filter from arbitrary bytes: `Sbbf::from_bitset` and `SbbfRef::new` accept exactly
//! the valid sizes, agree with each other, and probe without panicking. An inserted value is
//! always found afterwards (no false negatives), and the one-block read path of the Parquet
//! adapter (fetch block `block_index`, test it alone) agrees with the whole-filter probe. The
//! batch APIs over values give the answers and bits of one call per value.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first 8 bytes pick a hash; the rest is the bitset.
    if data.len() < 8 {
        return;
    }
    let h = u64::from_le_bytes(data[..8].try_into().unwrap());
    let bits = &data[8..];
    let owned = sbbf::Sbbf::from_bitset(bits);
    let view = sbbf::SbbfRef::new(bits);
    let valid = !bits.is_empty() && bits.len() % 32 == 0 && bits.len() <= sbbf::MAX_BYTES;
    assert_eq!(owned.is_ok(), valid);
    assert_eq!(view.is_ok(), valid);
    let (Ok(mut owned), Ok(view)) = (owned, view) else {
        return;
    };
    assert_eq!(owned.as_bytes(), bits);
    let blocks = view.num_blocks();
    assert_eq!(blocks, bits.len() / 32);
    for probe in [h, h.rotate_left(17), !h, sbbf::hash(bits)] {
        let whole = view.contains_hash(probe);
        assert_eq!(whole, owned.contains_hash(probe));
        let i = sbbf::block_index(probe, blocks);
        assert!(i < blocks);
        let block = sbbf::SbbfRef::new(&bits[i * 32..i * 32 + 32]).unwrap();
        assert_eq!(block.contains_hash(probe), whole);
        let mut out = [false; 1];
        view.contains_hashes(&[probe], &mut out);
        assert_eq!(out[0], whole);
    }
    let ones = view.count_ones();
    assert!(ones <= bits.len() as u64 * 8);
    let fill = view.fill_ratio();
    assert!((0.0..=1.0).contains(&fill));
    let fpp = view.estimated_fpp();
    assert!((0.0..=1.0).contains(&fpp), "fpp {fpp}");
    owned.insert_hash(h);
    assert!(owned.contains_hash(h));
    assert!(owned.count_ones() >= ones);
    owned.insert(&data[..8]);
    assert!(owned.contains(&data[..8]));

    // Batch APIs: values cut from the input (8-byte words, and slices of varied length), enough
    // of them to reach the hashed-ahead steady state.
    let words: Vec<u64> = data
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .take(100)
        .collect();
    let slices: Vec<&[u8]> = (0..data.len().min(60))
        .map(|i| &data[i..i + (i % 13).min(data.len() - i)])
        .collect();
    let mut out = vec![false; words.len().max(slices.len())];
    view.contains_values(&words, &mut out);
    for (w, o) in words.iter().zip(&out) {
        assert_eq!(*o, view.contains(&w.to_le_bytes()));
    }
    view.contains_values(&slices, &mut out);
    for (s, o) in slices.iter().zip(&out) {
        assert_eq!(*o, view.contains(s));
    }
    let mut one_by_one = owned.clone();
    for w in &words {
        one_by_one.insert(&w.to_le_bytes());
    }
    for s in &slices {
        one_by_one.insert(s);
    }
    owned.insert_values(&words);
    owned.insert_values(&slices);
    assert_eq!(owned.as_bytes(), one_by_one.as_bytes());
});
