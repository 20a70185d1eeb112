use crate::format::column::{ColumnType, Unit, ValueKind};
use crate::values::stored::coerce;
use crate::values::stored::{Encoded, Literal};
use crate::values::text::*;
use parquet::basic::Type as P;

use super::column as col;

fn bytes(c: &ColumnType, text: &str) -> Vec<Vec<u8>> {
    match encode_text(c, text, EncodeOptions::default()).unwrap() {
        Encoded::Candidates(v) => v,
        other => panic!("{text}: {other:?}"),
    }
}

fn never(c: &ColumnType, text: &str) -> bool {
    matches!(
        encode_text(c, text, EncodeOptions::default()),
        Ok(Encoded::NeverStored(_))
    )
}

#[test]
fn small_and_unsigned_integers() {
    let i8c = col(
        P::INT32,
        ValueKind::Int {
            bits: 8,
            signed: true,
        },
        0,
    );
    assert_eq!(bytes(&i8c, "5"), vec![5i32.to_le_bytes().to_vec()]);
    assert_eq!(bytes(&i8c, "-128"), vec![(-128i32).to_le_bytes().to_vec()]);
    assert!(never(&i8c, "128"));
    assert!(never(&i8c, "-129"));
    let u32c = col(
        P::INT32,
        ValueKind::Int {
            bits: 32,
            signed: false,
        },
        0,
    );
    // UINT(32) above 2^31 is hashed as the bits of a negative i32.
    assert_eq!(
        bytes(&u32c, "4294967295"),
        vec![(-1i32).to_le_bytes().to_vec()]
    );
    assert!(never(&u32c, "-1"));
    let u64c = col(
        P::INT64,
        ValueKind::Int {
            bits: 64,
            signed: false,
        },
        0,
    );
    assert_eq!(bytes(&u64c, "18446744073709551615"), vec![vec![0xff; 8]]);
    assert!(encode_text(&u64c, "x", EncodeOptions::default()).is_err());
}

#[test]
fn dates_times_timestamps() {
    let d = col(P::INT32, ValueKind::Date, 0);
    assert_eq!(
        bytes(&d, "1969-12-31"),
        vec![(-1i32).to_le_bytes().to_vec()]
    );
    assert_eq!(
        bytes(&d, "2024-02-29"),
        vec![19782i32.to_le_bytes().to_vec()]
    );
    assert!(encode_text(&d, "2023-02-29", EncodeOptions::default()).is_err());

    let t = col(P::INT32, ValueKind::Time(Unit::Millis), 0);
    assert_eq!(
        bytes(&t, "00:00:01.5"),
        vec![1500i32.to_le_bytes().to_vec()]
    );
    assert!(never(&t, "00:00:01.5001"));

    let utc = col(
        P::INT64,
        ValueKind::Timestamp {
            unit: Unit::Micros,
            utc: true,
        },
        0,
    );
    let one_sec = vec![1_000_000i64.to_le_bytes().to_vec()];
    assert_eq!(bytes(&utc, "1970-01-01T00:00:01Z"), one_sec);
    assert_eq!(bytes(&utc, "1970-01-01T00:00:01.000000Z"), one_sec);
    assert_eq!(bytes(&utc, "1970-01-01T01:00:01+01:00"), one_sec);
    assert_eq!(bytes(&utc, "1970-01-01 00:00:01"), one_sec);
    assert!(never(&utc, "1970-01-01T00:00:01.0000001Z"));
    let local = col(
        P::INT64,
        ValueKind::Timestamp {
            unit: Unit::Nanos,
            utc: false,
        },
        0,
    );
    assert_eq!(
        bytes(&local, "1969-12-31T23:59:59.999999999"),
        vec![(-1i64).to_le_bytes().to_vec()]
    );
    // An offset means nothing for a wall-clock column: refuse rather than guess.
    assert!(encode_text(&local, "1970-01-01T00:00:00Z", EncodeOptions::default()).is_err());
    // Beyond the INT64 nanosecond range.
    assert!(never(&local, "2300-01-01T00:00:00"));
}

#[test]
fn int96_is_nanos_of_day_then_julian_day() {
    let c = col(P::INT96, ValueKind::Int96, 0);
    let mut want = 1_000i64.to_le_bytes().to_vec();
    want.extend_from_slice(&2_440_588i32.to_le_bytes());
    assert_eq!(bytes(&c, "1970-01-01T00:00:00.000001"), vec![want]);
    let mut before = (86_400_000_000_000i64 - 1).to_le_bytes().to_vec();
    before.extend_from_slice(&2_440_587i32.to_le_bytes());
    assert_eq!(bytes(&c, "1969-12-31T23:59:59.999999999"), vec![before]);
}

#[test]
fn decimals() {
    let d9 = col(
        P::INT32,
        ValueKind::Decimal {
            precision: 9,
            scale: 2,
        },
        0,
    );
    assert_eq!(bytes(&d9, "12.34"), vec![1234i32.to_le_bytes().to_vec()]);
    assert_eq!(bytes(&d9, "-0.01"), vec![(-1i32).to_le_bytes().to_vec()]);
    assert_eq!(bytes(&d9, "12.3"), vec![1230i32.to_le_bytes().to_vec()]);
    assert_eq!(bytes(&d9, "12.340"), vec![1234i32.to_le_bytes().to_vec()]);
    assert!(never(&d9, "12.345"));
    assert!(never(&d9, "10000000.00"));
    assert!(encode_text(&d9, "1.2.3", EncodeOptions::default()).is_err());

    let flba = col(
        P::FIXED_LEN_BYTE_ARRAY,
        ValueKind::Decimal {
            precision: 38,
            scale: 10,
        },
        16,
    );
    let mut want = vec![0xff; 16];
    want[15] = 0xff; // -1 unscaled is all ones
    assert_eq!(bytes(&flba, "-0.0000000001"), vec![want]);
    let flba5 = col(
        P::FIXED_LEN_BYTE_ARRAY,
        ValueKind::Decimal {
            precision: 10,
            scale: 0,
        },
        5,
    );
    assert_eq!(bytes(&flba5, "256"), vec![vec![0, 0, 0, 1, 0]]);
    assert_eq!(bytes(&flba5, "-1"), vec![vec![0xff; 5]]);

    // BYTE_ARRAY decimals: every width a writer may pick, minimal first.
    let ba = col(
        P::BYTE_ARRAY,
        ValueKind::Decimal {
            precision: 20,
            scale: 0,
        },
        0,
    );
    let c = bytes(&ba, "128");
    assert_eq!(c[0], vec![0x00, 0x80]);
    assert_eq!(c[1], vec![0x00, 0x00, 0x80]);
    assert_eq!(c.len(), 15); // widths 2..=16
    let neg = bytes(&ba, "-128");
    assert_eq!(neg[0], vec![0x80]);
    assert_eq!(bytes(&ba, "0")[0], vec![0x00]);
}

#[test]
fn floats_sql_and_exact() {
    let f = col(P::FLOAT, ValueKind::Float, 0);
    assert_eq!(
        bytes(&f, "0.0"),
        vec![
            0.0f32.to_le_bytes().to_vec(),
            (-0.0f32).to_le_bytes().to_vec()
        ]
    );
    assert_eq!(bytes(&f, "0.1"), vec![0.1f32.to_le_bytes().to_vec()]);
    assert!(matches!(
        encode_text(&f, "NaN", EncodeOptions::default()),
        Ok(Encoded::AlwaysMaybe(_))
    ));
    let exact = EncodeOptions {
        exact_bits: true,
        ..Default::default()
    };
    assert_eq!(
        encode_text(&f, "-0.0", exact).unwrap(),
        Encoded::Candidates(vec![(-0.0f32).to_le_bytes().to_vec()])
    );
    assert_eq!(
        encode_text(&f, "nan", exact).unwrap(),
        Encoded::Candidates(vec![f32::NAN.to_le_bytes().to_vec()])
    );
    let d = col(P::DOUBLE, ValueKind::Double, 0);
    assert_eq!(
        bytes(&d, "-inf"),
        vec![f64::NEG_INFINITY.to_le_bytes().to_vec()]
    );
    assert_eq!(bytes(&d, "1e-05"), vec![1e-5f64.to_le_bytes().to_vec()]);
    let h = col(P::FIXED_LEN_BYTE_ARRAY, ValueKind::Float16, 2);
    assert_eq!(bytes(&h, "1.5"), vec![vec![0x00, 0x3e]]);
    assert_eq!(bytes(&h, "-0.0"), vec![vec![0, 0], vec![0, 0x80]]);
}

#[test]
fn bytes_strings_uuids() {
    let s = col(P::BYTE_ARRAY, ValueKind::String, 0);
    assert_eq!(bytes(&s, " doing "), vec![b" doing ".to_vec()]);
    assert_eq!(bytes(&s, ""), vec![Vec::<u8>::new()]);
    let b = col(P::BYTE_ARRAY, ValueKind::Binary, 0);
    assert_eq!(bytes(&b, "0x00ff"), vec![vec![0, 0xff]]);
    assert_eq!(bytes(&b, "0x"), vec![Vec::<u8>::new()]);
    assert_eq!(bytes(&b, "abc"), vec![b"abc".to_vec()]);
    assert!(encode_text(&b, "0xzz", EncodeOptions::default()).is_err());
    let utf8 = EncodeOptions {
        input: InputMode::Utf8,
        ..Default::default()
    };
    assert_eq!(
        encode_text(&b, "0x00", utf8).unwrap(),
        Encoded::Candidates(vec![b"0x00".to_vec()])
    );
    let u = col(P::FIXED_LEN_BYTE_ARRAY, ValueKind::Uuid, 16);
    assert_eq!(
        bytes(&u, "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"),
        vec![vec![
            0xf8, 0x1d, 0x4f, 0xae, 0x7d, 0xec, 0x11, 0xd0, 0xa7, 0x65, 0x00, 0xa0, 0xc9, 0x1e,
            0x6b, 0xf6
        ]]
    );
    let fixed = col(P::FIXED_LEN_BYTE_ARRAY, ValueKind::Binary, 4);
    assert!(never(&fixed, "0x0102"));
}

#[test]
fn raw_modes_and_boolean() {
    let d = col(P::INT32, ValueKind::Date, 0);
    let raw = EncodeOptions {
        input: InputMode::RawInt,
        ..Default::default()
    };
    assert_eq!(
        encode_text(&d, "7", raw).unwrap(),
        Encoded::Candidates(vec![7i32.to_le_bytes().to_vec()])
    );
    let hex = EncodeOptions {
        input: InputMode::Hex,
        ..Default::default()
    };
    assert_eq!(
        encode_text(&d, "0x07000000", hex).unwrap(),
        Encoded::Candidates(vec![vec![7, 0, 0, 0]])
    );
    assert!(encode_text(&d, "0x07", hex).is_err());
    // BOOLEAN as arrow-rs hashes it for the filters ClickHouse writes: one byte.
    let b = col(P::BOOLEAN, ValueKind::Boolean, 0);
    for (t, byte) in [("true", 1u8), ("FALSE", 0), ("1", 1), ("0", 0)] {
        let e = encode_text(&b, t, EncodeOptions::default()).unwrap();
        assert_eq!(e, Encoded::Candidates(vec![vec![byte]]), "{t}");
    }
    assert_eq!(
        encode_text(&b, "01", hex).unwrap(),
        Encoded::Candidates(vec![vec![1]])
    );
    assert!(encode_text(&b, "0001", hex).is_err());
    let e = encode_text(&b, "yes", EncodeOptions::default()).unwrap_err();
    assert!(e.to_string().contains("BOOLEAN"), "{e}");
}

#[test]
fn literals_agree_with_text() {
    let i32c = col(
        P::INT32,
        ValueKind::Int {
            bits: 32,
            signed: true,
        },
        0,
    );
    let o = EncodeOptions::default();
    assert_eq!(
        coerce(&i32c, &Literal::Int(1 << 40)),
        encode_text(&i32c, &(1i64 << 40).to_string(), o).unwrap()
    );
    assert!(matches!(
        coerce(&i32c, &Literal::Float64(1.5)),
        Encoded::NeverStored(_)
    ));
    assert_eq!(
        coerce(&i32c, &Literal::Float64(3.0)),
        Encoded::Candidates(vec![3i32.to_le_bytes().to_vec()])
    );
    let f = col(P::FLOAT, ValueKind::Float, 0);
    assert!(matches!(
        coerce(&f, &Literal::Float64(0.1)),
        Encoded::NeverStored(_)
    ));
    assert_eq!(
        coerce(&f, &Literal::Int(2)),
        Encoded::Candidates(vec![2f32.to_le_bytes().to_vec()])
    );
    // Text against a typed column goes through the same reader as the command line.
    let d = col(P::INT32, ValueKind::Date, 0);
    assert_eq!(
        coerce(&d, &Literal::Utf8("1970-01-02".into())),
        encode_text(&d, "1970-01-02", o).unwrap()
    );
}

#[test]
fn decimals_in_exponent_form() {
    let d = col(
        P::INT64,
        ValueKind::Decimal {
            precision: 18,
            scale: 2,
        },
        0,
    );
    // -9.77997406e6 = -9779974.06: two fraction digits.
    assert_eq!(
        bytes(&d, "-9.77997406e6"),
        vec![(-977997406i64).to_le_bytes().to_vec()]
    );
    assert_eq!(bytes(&d, "1.5E2"), vec![15000i64.to_le_bytes().to_vec()]);
    assert_eq!(bytes(&d, "1234e-2"), vec![1234i64.to_le_bytes().to_vec()]);
    assert_eq!(bytes(&d, "0e5"), vec![0i64.to_le_bytes().to_vec()]);
    // Three fraction digits, the last non-zero: no DECIMAL(18,2) value equals it.
    assert!(never(&d, "1.23456e2"));
    for bad in ["1e", "e5", "1.2.3", "1e2.5", "--1", "1e99999999"] {
        assert!(
            encode_text(&d, bad, EncodeOptions::default()).is_err(),
            "{bad} should not parse"
        );
    }
}

#[test]
fn float_text_beyond_the_width_is_refused() {
    let f = col(P::FLOAT, ValueKind::Float, 0);
    let d = col(P::DOUBLE, ValueKind::Double, 0);
    let h = col(P::FIXED_LEN_BYTE_ARRAY, ValueKind::Float16, 2);
    let o = EncodeOptions::default();
    // Beyond a double: no column holds it, the text is refused.
    for (c, text) in [(&d, "1e400"), (&d, "-1e309"), (&f, "1e400")] {
        let e = encode_text(c, text, o).unwrap_err();
        assert!(e.to_string().contains("infinity"), "{e}");
    }
    // A double beyond a narrower column's range: no row of that column is it (a float
    // column promoted to double in a table keeps its older files' floats).
    for (c, text) in [(&f, "1e39"), (&f, "-1e300"), (&h, "70000")] {
        match encode_text(c, text, o).unwrap() {
            Encoded::NeverStored(why) => assert!(why.contains("beyond the range"), "{why}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    // Infinity spelled out is a value, and the largest finite ones are not refused.
    assert_eq!(
        bytes(&d, "-inf"),
        vec![f64::NEG_INFINITY.to_le_bytes().to_vec()]
    );
    assert_eq!(
        bytes(&f, "3.4028235e38"),
        vec![f32::MAX.to_le_bytes().to_vec()]
    );
    assert_eq!(
        bytes(&h, "65504"),
        vec![half::f16::MAX.to_le_bytes().to_vec()]
    );
}

proptest::proptest! {
    #[test]
    fn text_parsing_never_panics(text in ".{0,40}") {
        let kinds = [
            (P::INT32, ValueKind::Int { bits: 8, signed: true }, 0),
            (P::INT64, ValueKind::Int { bits: 64, signed: false }, 0),
            (P::INT32, ValueKind::Date, 0),
            (P::INT64, ValueKind::Time(Unit::Nanos), 0),
            (P::INT64, ValueKind::Timestamp { unit: Unit::Millis, utc: true }, 0),
            (P::INT96, ValueKind::Int96, 0),
            (P::BYTE_ARRAY, ValueKind::Decimal { precision: 38, scale: 37 }, 0),
            (P::FIXED_LEN_BYTE_ARRAY, ValueKind::Decimal { precision: 4, scale: 2 }, 2),
            (P::FIXED_LEN_BYTE_ARRAY, ValueKind::Float16, 2),
            (P::FIXED_LEN_BYTE_ARRAY, ValueKind::Uuid, 16),
            (P::BYTE_ARRAY, ValueKind::Binary, 0),
        ];
        for (p, k, l) in kinds {
            let c = col(p, k, l);
            for input in [InputMode::Typed, InputMode::Hex, InputMode::RawInt, InputMode::Utf8] {
                let _ = encode_text(&c, &text, EncodeOptions { exact_bits: false, input });
            }
        }
    }

    #[test]
    fn decimal_text_round_trips(v in -999_999_999i64..=999_999_999, scale in 0u32..9) {
        let c = col(P::INT64, ValueKind::Decimal { precision: 18, scale }, 0);
        let s = scale as usize;
        let digits = format!("{:0>width$}", v.unsigned_abs(), width = s + 1);
        let (int, frac) = digits.split_at(digits.len() - s);
        let text = format!("{}{}{}{}", if v < 0 { "-" } else { "" }, int, if s > 0 { "." } else { "" }, frac);
        proptest::prop_assert_eq!(bytes(&c, &text), vec![v.to_le_bytes().to_vec()]);
    }
}
