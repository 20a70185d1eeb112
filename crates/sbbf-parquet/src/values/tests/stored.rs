use crate::format::column::{ColumnType, ValueKind};
use crate::values::stored::*;
use parquet::basic::Type as PhysicalType;

fn col(physical: PhysicalType, type_length: i32, kind: ValueKind) -> ColumnType {
    super::column(physical, kind, type_length)
}

#[test]
fn int96_known_answers() {
    // 1970-01-01T00:00:00 is Julian day 2440588, nanosecond 0.
    let mut want = [0u8; 12];
    want[8..].copy_from_slice(&2_440_588i32.to_le_bytes());
    assert_eq!(int96(0), Some(want));
    // One nanosecond before the epoch: the last nanosecond of the previous day.
    let b = int96(-1).unwrap();
    assert_eq!(
        i64::from_le_bytes(b[..8].try_into().unwrap()),
        86_399_999_999_999
    );
    assert_eq!(i32::from_le_bytes(b[8..].try_into().unwrap()), 2_440_587);
}

#[test]
fn decimal_widths_by_physical_type() {
    let dec = |p, l| {
        col(
            p,
            l,
            ValueKind::Decimal {
                precision: 9,
                scale: 2,
            },
        )
    };
    let lit = Literal::Decimal {
        unscaled: -1,
        scale: 2,
    };
    assert_eq!(
        coerce(&dec(PhysicalType::INT32, 0), &lit),
        Encoded::Candidates(vec![(-1i32).to_le_bytes().to_vec()])
    );
    assert_eq!(
        coerce(&dec(PhysicalType::FIXED_LEN_BYTE_ARRAY, 5), &lit),
        Encoded::Candidates(vec![vec![0xff; 5]])
    );
    let Encoded::Candidates(c) = coerce(&dec(PhysicalType::BYTE_ARRAY, 0), &lit) else {
        panic!()
    };
    assert_eq!(c.len(), 16);
    assert_eq!(c[0], vec![0xff]);
    // A writer stores the minimal width only.
    let mut stored = Vec::new();
    let o = emit(
        &dec(PhysicalType::BYTE_ARRAY, 0),
        Scalar::of(&lit),
        Intent::Store,
        &mut |b| stored.push(b.to_vec()),
    );
    assert_eq!((o, stored), (Outcome::Stored, vec![vec![0xff]]));
    // 128 needs two bytes (0x00 0x80), -128 one (0x80).
    assert_eq!(minimal_width(128), 2);
    assert_eq!(minimal_width(-128), 1);
}

#[test]
fn scale_and_precision_limits() {
    let c = col(
        PhysicalType::INT64,
        0,
        ValueKind::Decimal {
            precision: 4,
            scale: 2,
        },
    );
    let d = |unscaled, scale| Literal::Decimal { unscaled, scale };
    assert_eq!(
        coerce(&c, &d(1230, 3)),
        Encoded::Candidates(vec![123i64.to_le_bytes().to_vec()])
    );
    assert!(matches!(coerce(&c, &d(1234, 3)), Encoded::NeverStored(_)));
    assert!(matches!(coerce(&c, &d(10000, 2)), Encoded::NeverStored(_)));
    assert!(matches!(
        coerce(&c, &Literal::Int(i128::MAX)),
        Encoded::NeverStored(_)
    ));
}

#[test]
fn store_ignores_sql_float_rules() {
    let c = col(PhysicalType::FLOAT, 0, ValueKind::Float);
    let mut got = Vec::new();
    emit(&c, Scalar::Float32(-0.0), Intent::Store, &mut |b| {
        got.push(b.to_vec())
    });
    emit(&c, Scalar::Float32(f32::NAN), Intent::Store, &mut |b| {
        got.push(b.to_vec())
    });
    assert_eq!(
        got,
        vec![
            (-0.0f32).to_le_bytes().to_vec(),
            f32::NAN.to_le_bytes().to_vec()
        ]
    );
    // A signaling NaN keeps its exact bits in every width (no round trip through f64).
    let snan32 = f32::from_bits(0x7f80_0001);
    let snan64 = f64::from_bits(0x7ff0_0000_0000_0001);
    let snan16 = half::f16::from_bits(0x7c01);
    for (c, v, want) in [
        (
            c.clone(),
            Scalar::Float32(snan32),
            snan32.to_le_bytes().to_vec(),
        ),
        (
            col(PhysicalType::DOUBLE, 0, ValueKind::Double),
            Scalar::Float64(snan64),
            snan64.to_le_bytes().to_vec(),
        ),
        (
            col(PhysicalType::FIXED_LEN_BYTE_ARRAY, 2, ValueKind::Float16),
            Scalar::Float16(snan16),
            snan16.to_le_bytes().to_vec(),
        ),
    ] {
        for intent in [Intent::Store, Intent::ExactBits] {
            let mut got = Vec::new();
            emit(&c, v, intent, &mut |b| got.push(b.to_vec()));
            assert_eq!(got, vec![want.clone()], "{intent:?}");
        }
    }
}
