//! The whole probe path on arbitrary file bytes: open the footer, then `probe` and `inspect`
//! every leaf column. Nothing may panic; a row group whose filter is not `Present` must never
//! answer "absent" for a value that has candidates; there is one answer per row group and value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sbbf_parquet::value::{encode_text, EncodeOptions, InputMode};
use sbbf_parquet::Encoded;
use sbbf_parquet::{Answer, FilterState, IoPolicy, ParquetFile};

fuzz_target!(|data: &[u8]| {
    let Ok(pq) = ParquetFile::open(bytes::Bytes::copy_from_slice(data)) else {
        return;
    };
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
});
