//! Value text for every kind of column and every input mode: `encode_text` returns a value or
//! an error, never panics, and typed candidates have the width the column stores.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parquet::basic::Type as P;
use sbbf_parquet::format::column::{ColumnType, Unit, ValueKind};
use sbbf_parquet::values::text::{encode_text, EncodeOptions, InputMode};
use sbbf_parquet::Encoded;

fn col(physical: P, type_length: i32, kind: ValueKind) -> ColumnType {
    ColumnType {
        path: "c".into(),
        physical,
        type_length,
        kind,
        logical: None,
    }
}

fn columns() -> Vec<ColumnType> {
    let mut v = vec![col(P::BOOLEAN, 0, ValueKind::Boolean)];
    for (bits, signed) in [
        (8, true),
        (16, true),
        (32, true),
        (8, false),
        (16, false),
        (32, false),
    ] {
        v.push(col(P::INT32, 0, ValueKind::Int { bits, signed }));
    }
    v.push(col(
        P::INT64,
        0,
        ValueKind::Int {
            bits: 64,
            signed: true,
        },
    ));
    v.push(col(
        P::INT64,
        0,
        ValueKind::Int {
            bits: 64,
            signed: false,
        },
    ));
    v.push(col(P::INT32, 0, ValueKind::Date));
    v.push(col(P::INT32, 0, ValueKind::Time(Unit::Millis)));
    v.push(col(P::INT64, 0, ValueKind::Time(Unit::Micros)));
    v.push(col(P::INT64, 0, ValueKind::Time(Unit::Nanos)));
    for unit in [Unit::Millis, Unit::Micros, Unit::Nanos] {
        for utc in [true, false] {
            v.push(col(P::INT64, 0, ValueKind::Timestamp { unit, utc }));
        }
    }
    v.push(col(
        P::INT32,
        0,
        ValueKind::Decimal {
            precision: 9,
            scale: 2,
        },
    ));
    v.push(col(
        P::INT64,
        0,
        ValueKind::Decimal {
            precision: 18,
            scale: 4,
        },
    ));
    v.push(col(
        P::INT64,
        0,
        ValueKind::Decimal {
            precision: 18,
            scale: 0,
        },
    ));
    v.push(col(
        P::BYTE_ARRAY,
        0,
        ValueKind::Decimal {
            precision: 38,
            scale: 10,
        },
    ));
    v.push(col(
        P::FIXED_LEN_BYTE_ARRAY,
        16,
        ValueKind::Decimal {
            precision: 38,
            scale: 10,
        },
    ));
    v.push(col(
        P::FIXED_LEN_BYTE_ARRAY,
        6,
        ValueKind::Decimal {
            precision: 12,
            scale: 2,
        },
    ));
    // A decimal whose precision exceeds what its width can hold: the reader must not overflow.
    v.push(col(
        P::FIXED_LEN_BYTE_ARRAY,
        4,
        ValueKind::Decimal {
            precision: 38,
            scale: 38,
        },
    ));
    v.push(col(P::FLOAT, 0, ValueKind::Float));
    v.push(col(P::DOUBLE, 0, ValueKind::Double));
    v.push(col(P::FIXED_LEN_BYTE_ARRAY, 2, ValueKind::Float16));
    v.push(col(P::BYTE_ARRAY, 0, ValueKind::String));
    v.push(col(P::BYTE_ARRAY, 0, ValueKind::Binary));
    v.push(col(P::FIXED_LEN_BYTE_ARRAY, 3, ValueKind::Binary));
    v.push(col(P::FIXED_LEN_BYTE_ARRAY, 16, ValueKind::Uuid));
    v.push(col(P::INT96, 0, ValueKind::Int96));
    // Mismatched kinds a hostile footer can produce (a logical type on the wrong physical type).
    v.push(col(P::FIXED_LEN_BYTE_ARRAY, 0, ValueKind::Uuid));
    v.push(col(P::FIXED_LEN_BYTE_ARRAY, -1, ValueKind::Binary));
    v.push(col(P::BYTE_ARRAY, 0, ValueKind::Float16));
    v.push(col(
        P::INT32,
        0,
        ValueKind::Timestamp {
            unit: Unit::Nanos,
            utc: true,
        },
    ));
    v.push(col(
        P::INT32,
        0,
        ValueKind::Int {
            bits: 64,
            signed: false,
        },
    ));
    v.push(col(P::INT64, 0, ValueKind::Date));
    v.push(col(P::FLOAT, 0, ValueKind::Double));
    v.push(col(
        P::INT32,
        0,
        ValueKind::Decimal {
            precision: 0,
            scale: 0,
        },
    ));
    v.push(col(
        P::INT64,
        0,
        ValueKind::Decimal {
            precision: 100,
            scale: 200,
        },
    ));
    v
}

fn stored_width(c: &ColumnType) -> Option<usize> {
    match c.physical {
        P::INT32 | P::FLOAT => Some(4),
        P::INT64 | P::DOUBLE => Some(8),
        P::INT96 => Some(12),
        P::FIXED_LEN_BYTE_ARRAY if c.type_length > 0 => Some(c.type_length as usize),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    thread_local! { static COLUMNS: Vec<ColumnType> = columns(); }
    COLUMNS.with(|cols| {
        for c in cols {
            for input in [
                InputMode::Typed,
                InputMode::RawInt,
                InputMode::Hex,
                InputMode::Utf8,
            ] {
                for exact_bits in [false, true] {
                    let r = encode_text(c, text, EncodeOptions { exact_bits, input });
                    if let (Ok(Encoded::Candidates(cands)), Some(w)) = (&r, stored_width(c)) {
                        // Sane kinds must produce the stored width.
                        let sane = !matches!(
                            (c.physical, c.kind),
                            (P::INT32, ValueKind::Int { bits: 64, .. })
                                | (P::INT32, ValueKind::Timestamp { .. })
                                | (P::INT64, ValueKind::Date)
                                | (P::FLOAT, ValueKind::Double)
                                | (P::INT32, ValueKind::Decimal { precision: 0, .. })
                                | (P::INT64, ValueKind::Decimal { precision: 100, .. })
                        );
                        if sane && input != InputMode::Utf8 {
                            for b in cands {
                                assert_eq!(b.len(), w, "{c:?} {input:?} {text:?} -> {b:?}");
                            }
                        }
                    }
                }
            }
        }
    });
});
