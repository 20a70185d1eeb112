//! `BloomFilterHeader::parse` on arbitrary bytes: never panics, never reads past the input or
//! the 1 KiB window, and whatever it accepts is a valid size that re-encodes and re-parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sbbf_parquet::format::header::{BloomFilterHeader, MAX_HEADER_BYTES};

fuzz_target!(|data: &[u8]| {
    if let Ok((h, used)) = BloomFilterHeader::parse(data) {
        assert!(used <= data.len().min(MAX_HEADER_BYTES));
        assert!(h.num_bytes >= 32 && h.num_bytes % 32 == 0);
        assert!(h.num_bytes as usize <= sbbf::MAX_BYTES);
        // The standard encoding of what was read parses back to the same header.
        let again = h.to_bytes();
        assert_eq!(again.len(), BloomFilterHeader::encoded_len(h.num_bytes));
        assert_eq!(
            BloomFilterHeader::parse(&again).ok(),
            Some((h, again.len()))
        );
        // Parsing only what was consumed gives the same answer (no look-ahead).
        assert_eq!(
            BloomFilterHeader::parse(&data[..used]).ok(),
            Some((h, used))
        );
    }
});
