//! Golden tests: bitsets written by other implementations (parquet-java, arrow-rs), never by us.

use sbbf::{Sbbf, SbbfRef};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/golden")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const WORDS: [&str; 4] = ["hello", "parquet", "bloom", "filter"];

#[test]
fn parquet_testing_xxhash_blob_matches_byte_for_byte() {
    // apache/parquet-testing bloom_filter.xxhash.bin, written by parquet-mr: a 16-byte compact
    // Thrift header (num_bytes 1024, BLOCK, XXHASH, UNCOMPRESSED) then the bitset.
    let blob = fixture("bloom_filter.xxhash.bin");
    assert_eq!(blob.len(), 16 + 1024);
    let bitset = &blob[16..];
    let view = SbbfRef::new(bitset).unwrap();
    for w in WORDS {
        assert!(view.contains(w.as_bytes()), "{w} must be present");
    }
    let mut ours = Sbbf::with_num_bytes(1024);
    for w in WORDS {
        ours.insert(w.as_bytes());
    }
    assert_eq!(ours.as_bytes(), bitset);
}

#[test]
fn parquet_java_one_block_filters() {
    // Written by parquet-java 1.17 through Spark: one-block filters of INT64 0..9 and "a0".."a9".
    let ints: [u8; 32] = [
        24, 130, 24, 8, 134, 8, 68, 6, 2, 101, 128, 10, 64, 2, 38, 78, 114, 1, 64, 38, 1, 192, 194,
        152, 64, 70, 0, 36, 56, 121, 64, 0,
    ];
    let strings: [u8; 32] = [
        200, 1, 80, 20, 64, 68, 8, 109, 6, 37, 4, 67, 144, 80, 96, 32, 8, 132, 43, 33, 0, 5, 99,
        65, 2, 0, 224, 44, 64, 78, 96, 4,
    ];
    let mut f = Sbbf::with_num_bytes(32);
    for i in 0..10i64 {
        f.insert(&i.to_le_bytes());
    }
    assert_eq!(f.as_bytes(), &ints);
    let mut g = Sbbf::with_num_bytes(32);
    for i in 0..10 {
        g.insert(format!("a{i}").as_bytes());
    }
    assert_eq!(g.as_bytes(), &strings);
}

#[test]
fn xxh64_known_answers() {
    // Reference values of XXH64 with seed 0 (xxHash's own test vectors).
    assert_eq!(sbbf::hash(b""), 0xEF46_DB37_51D8_E999);
    assert_eq!(sbbf::hash(b"a"), 0xD24E_C4F1_A98C_6E5B);
    assert_eq!(sbbf::hash(b"abc"), 0x44BC_2CF5_AD77_0999);
}

/// A small deterministic generator so the test needs no RNG crate's stream stability.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn same_bits_as_arrow_rs_for_random_values() {
    let mut seed = 7u64;
    let mut bytes = 32usize;
    while bytes <= 4 << 20 {
        let mut ours = Sbbf::with_num_bytes(bytes);
        let mut theirs = parquet::bloom_filter::Sbbf::new_with_num_of_bytes(bytes);
        let n = (bytes / 8).clamp(10, 50_000);
        for i in 0..n {
            let r = splitmix(&mut seed);
            if i % 2 == 0 {
                let v = r as i64;
                ours.insert(&v.to_le_bytes());
                theirs.insert(&v);
            } else {
                let s = format!("value-{r:x}");
                ours.insert(s.as_bytes());
                theirs.insert(s.as_str());
            }
        }
        let mut written = Vec::new();
        theirs.write_bitset(&mut written).unwrap();
        assert_eq!(
            ours.as_bytes(),
            &written[..],
            "bitsets differ at {bytes} bytes"
        );
        // And arrow-rs reads our bits as we do.
        let back = parquet::bloom_filter::Sbbf::new(ours.as_bytes());
        for i in 0..1000i64 {
            assert_eq!(back.check(&i), ours.contains(&i.to_le_bytes()));
        }
        bytes *= 2;
    }
}

#[test]
fn classic_sizing_matches_arrow_rs() {
    for (ndv, fpp) in [(10, 0.1), (1000, 0.01), (100_000, 0.05), (1_000_000, 0.001)] {
        let ours = Sbbf::with_ndv_fpp_classic(ndv, fpp).unwrap();
        let theirs = parquet::bloom_filter::Sbbf::new_with_ndv_fpp(ndv, fpp).unwrap();
        let mut written = Vec::new();
        theirs.write_bitset(&mut written).unwrap();
        assert_eq!(ours.num_bytes(), written.len(), "ndv {ndv} fpp {fpp}");
    }
}
