//! The whole probe path on arbitrary file bytes: open the footer, then `probe` and `inspect`
//! every leaf column; again with keys (the encrypted-file paths: PARE footers, plaintext
//! footers, encrypted column metadata and filter modules). Nothing may panic; a row group whose filter is not `Present` must never
//! answer "absent" for a value that has candidates; there is one answer per row group and value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sbbf_parquet::crypto::{Key, KeySet};
use sbbf_parquet::values::text::{encode_text, EncodeOptions, InputMode};
use sbbf_parquet::Encoded;
use sbbf_parquet::{Answer, FilterState, IoPolicy, ParquetFile};

fuzz_target!(|data: &[u8]| {
    let bytes = bytes::Bytes::copy_from_slice(data);
    if let Ok(pq) = ParquetFile::open(bytes.clone()) {
        check(&pq);
    }
    // The keys of testdata/encrypted (seeds made from those files reach the decrypting paths).
    let key = |k: &str| Key::parse(k).expect("a 16-byte key");
    let keys = KeySet::new()
        .with_footer_key(key("0123456789012345"))
        .with_column_key("secret", key("1234567890123450"))
        .with_column_key("name", key("1234567890123451"))
        .with_column_key("double_field", key("1234567890123450"))
        .with_column_key("float_field", key("1234567890123451"));
    if let Ok(pq) = ParquetFile::open_with_keys(bytes, &keys) {
        check(&pq);
        let _ = pq.stray_filter_headers();
    }
});

fn check(pq: &ParquetFile<bytes::Bytes>) {
    // Bound the work per input: a hostile footer may claim very many row groups or columns.
    let ncols = pq.columns().len().min(64);
    let nrg = pq.metadata().num_row_groups();
    for col in 0..ncols {
        let ty = pq.columns()[col].clone();
        let mut values = Vec::new();
        for text in ["0", "1", "-1", "a", "0x00", "2024-01-31", "1.5", "nan"] {
            for input in [InputMode::Typed, InputMode::Hex] {
                if let Ok(e) = encode_text(
                    &ty,
                    text,
                    EncodeOptions {
                        exact_bits: false,
                        input,
                    },
                ) {
                    values.push(e);
                }
            }
        }
        for policy in [
            IoPolicy::default(),
            IoPolicy {
                request_cost: 0,
                ..IoPolicy::default()
            },
        ] {
            let answers = pq.probe(col, &values, policy);
            assert_eq!(answers.len(), nrg);
            for (i, rg) in answers.iter().enumerate() {
                assert_eq!(rg.row_group, i);
                assert_eq!(rg.answers.len(), values.len());
                if rg.filter != FilterState::Present {
                    for (v, a) in values.iter().zip(&rg.answers) {
                        if matches!(v, Encoded::Candidates(_)) {
                            assert_ne!(*a, Answer::Absent, "{:?} answered absent", rg.filter);
                        }
                    }
                }
                if let FilterState::Invalid(reason) = &rg.filter {
                    assert!(!reason.is_empty());
                }
            }
        }
        // The driver bounds its rounds, so this ends on any input.
        assert_eq!(pq.read_filters(col, IoPolicy::default()).len(), nrg);
    }
    if ncols == pq.columns().len() {
        let reports = pq.inspect();
        assert_eq!(reports.len(), nrg * ncols);
    }
}
