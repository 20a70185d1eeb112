//! How a typed literal (a query engine's, through `prune`) becomes the bytes a column stores:
//! `stored::coerce` across widths, signedness, units, scales and physical types, and the values
//! no row can hold ("never stored") or only the engine can decide ("always maybe").

use crate::format::column::{Unit, ValueKind};
use crate::values::stored::{coerce, Encoded, Literal, MaybeWhy};

use super::column as col;

fn one(b: impl Into<Vec<u8>>) -> Encoded {
    Encoded::Candidates(vec![b.into()])
}

#[test]
fn coercion_rules() {
    use parquet::basic::Type as P;
    let int32 = col(
        P::INT32,
        ValueKind::Int {
            bits: 32,
            signed: true,
        },
        0,
    );
    let int8 = col(
        P::INT32,
        ValueKind::Int {
            bits: 8,
            signed: true,
        },
        0,
    );
    let uint32 = col(
        P::INT32,
        ValueKind::Int {
            bits: 32,
            signed: false,
        },
        0,
    );
    // An i64 literal against an INT32 column.
    assert_eq!(coerce(&int32, &Literal::Int(7)), one(7i32.to_le_bytes()));
    assert!(matches!(
        coerce(&int32, &Literal::Int(1 << 40)),
        Encoded::NeverStored(_)
    ));
    // Int8 columns written by arrow-rs are INT32 with INT(8).
    assert_eq!(coerce(&int8, &Literal::Int(-3)), one((-3i32).to_le_bytes()));
    assert!(matches!(
        coerce(&int8, &Literal::Int(200)),
        Encoded::NeverStored(_)
    ));
    assert_eq!(
        coerce(&uint32, &Literal::Int(u32::MAX as i128)),
        one((-1i32).to_le_bytes())
    );
    // Floats against integers: only integral values can match.
    assert_eq!(
        coerce(&int32, &Literal::Float64(3.0)),
        one(3i32.to_le_bytes())
    );
    assert!(matches!(
        coerce(&int32, &Literal::Float64(3.5)),
        Encoded::NeverStored(_)
    ));

    // Dates: Date32 and Date64 (midnight only).
    let date = col(P::INT32, ValueKind::Date, 0);
    assert_eq!(
        coerce(&date, &Literal::Date32(19000)),
        one(19000i32.to_le_bytes())
    );
    assert_eq!(
        coerce(&date, &Literal::Date64(86_400_000 * 2)),
        one(2i32.to_le_bytes())
    );
    assert!(matches!(
        coerce(&date, &Literal::Date64(1)),
        Encoded::NeverStored(_)
    ));
    assert_eq!(
        coerce(&date, &Literal::Utf8("1970-01-03".into())),
        one(2i32.to_le_bytes())
    );
    // A string that is no date: the engine decides, keep.
    assert!(matches!(
        coerce(&date, &Literal::Utf8("soon".into())),
        Encoded::AlwaysMaybe(_)
    ));

    // Timestamps across units.
    let ts_us = col(
        P::INT64,
        ValueKind::Timestamp {
            unit: Unit::Micros,
            utc: true,
        },
        0,
    );
    let ms = Literal::Timestamp {
        value: 1_500,
        unit: Unit::Millis,
        utc: true,
    };
    assert_eq!(coerce(&ts_us, &ms), one(1_500_000i64.to_le_bytes()));
    let ns = Literal::Timestamp {
        value: 1_500_001,
        unit: Unit::Nanos,
        utc: true,
    };
    assert!(matches!(coerce(&ts_us, &ns), Encoded::NeverStored(_)));
    let ns_exact = Literal::Timestamp {
        value: 1_500_000,
        unit: Unit::Nanos,
        utc: true,
    };
    assert_eq!(coerce(&ts_us, &ns_exact), one(1_500i64.to_le_bytes()));
    // Local vs UTC: cannot be decided from the filter.
    let local = Literal::Timestamp {
        value: 1,
        unit: Unit::Micros,
        utc: false,
    };
    assert!(matches!(coerce(&ts_us, &local), Encoded::AlwaysMaybe(_)));
    let ts_ns = col(
        P::INT64,
        ValueKind::Timestamp {
            unit: Unit::Nanos,
            utc: false,
        },
        0,
    );
    let far = Literal::Timestamp {
        value: i64::MAX,
        unit: Unit::Millis,
        utc: false,
    };
    assert!(matches!(coerce(&ts_ns, &far), Encoded::NeverStored(_)));

    // Decimals across precision and scale.
    let d92 = col(
        P::INT32,
        ValueKind::Decimal {
            precision: 9,
            scale: 2,
        },
        0,
    );
    assert_eq!(
        coerce(
            &d92,
            &Literal::Decimal {
                unscaled: 12340,
                scale: 3
            }
        ),
        one(1234i32.to_le_bytes())
    );
    assert!(matches!(
        coerce(
            &d92,
            &Literal::Decimal {
                unscaled: 12345,
                scale: 3
            }
        ),
        Encoded::NeverStored(_)
    ));
    assert_eq!(
        coerce(
            &d92,
            &Literal::Decimal {
                unscaled: 5,
                scale: 0
            }
        ),
        one(500i32.to_le_bytes())
    );
    assert!(matches!(
        coerce(
            &d92,
            &Literal::Decimal {
                unscaled: 10i128.pow(8),
                scale: 0
            }
        ),
        Encoded::NeverStored(_)
    ));
    assert_eq!(coerce(&d92, &Literal::Int(3)), one(300i32.to_le_bytes()));
    // FLBA decimals at the column's type_length.
    let flba6 = col(
        P::FIXED_LEN_BYTE_ARRAY,
        ValueKind::Decimal {
            precision: 12,
            scale: 2,
        },
        6,
    );
    assert_eq!(
        coerce(
            &flba6,
            &Literal::Decimal {
                unscaled: -1,
                scale: 2
            }
        ),
        one(vec![0xff; 6])
    );
    // A float against a decimal depends on the engine's cast: keep.
    assert!(matches!(
        coerce(&d92, &Literal::Float64(0.1)),
        Encoded::AlwaysMaybe(_)
    ));

    // Strings against binary columns, binary against fixed columns.
    let bin = col(P::BYTE_ARRAY, ValueKind::Binary, 0);
    assert_eq!(
        coerce(&bin, &Literal::Utf8("ab".into())),
        one(b"ab".to_vec())
    );
    let fixed4 = col(P::FIXED_LEN_BYTE_ARRAY, ValueKind::Binary, 4);
    assert!(matches!(
        coerce(&fixed4, &Literal::Binary(vec![1, 2])),
        Encoded::NeverStored(_)
    ));
    assert_eq!(
        coerce(&fixed4, &Literal::Binary(vec![1, 2, 3, 4])),
        one(vec![1, 2, 3, 4])
    );
    // A number against a string column: engines differ, keep.
    let s = col(P::BYTE_ARRAY, ValueKind::String, 0);
    assert!(matches!(
        coerce(&s, &Literal::Int(1)),
        Encoded::AlwaysMaybe(_)
    ));
    // Float literals: SQL zero and NaN.
    let f = col(P::FLOAT, ValueKind::Float, 0);
    assert_eq!(
        coerce(&f, &Literal::Float64(f64::NAN)),
        Encoded::AlwaysMaybe(MaybeWhy::NaN)
    );
    // The library's words name no front end's option: each adds its own hint.
    let nan = MaybeWhy::NaN.to_string();
    assert!(nan.starts_with("NaN: ") && !nan.contains("--"), "{nan}");
    assert!(matches!(
        coerce(&f, &Literal::Float64(0.1)),
        Encoded::NeverStored(_)
    ));
    assert!(matches!(coerce(&f, &Literal::Float32(0.0)), Encoded::Candidates(c) if c.len() == 2));
    // INT96 from a timestamp literal.
    let i96 = col(P::INT96, ValueKind::Int96, 0);
    let mut want = 0i64.to_le_bytes().to_vec();
    want.extend_from_slice(&2_440_588i32.to_le_bytes());
    assert_eq!(
        coerce(
            &i96,
            &Literal::Timestamp {
                value: 0,
                unit: Unit::Micros,
                utc: true
            }
        ),
        one(want)
    );
    // BOOLEAN: one byte, as arrow-rs hashes it for the filters ClickHouse writes; anything
    // but a boolean is left to the engine.
    let b = col(P::BOOLEAN, ValueKind::Boolean, 0);
    assert_eq!(coerce(&b, &Literal::Bool(true)), one(vec![1]));
    assert_eq!(coerce(&b, &Literal::Bool(false)), one(vec![0]));
    assert!(matches!(
        coerce(&b, &Literal::Int(1)),
        Encoded::AlwaysMaybe(_)
    ));
}
