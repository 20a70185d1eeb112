//! Typed query literals and the coercion rules that turn them into a column's stored bytes.
//!
//! A literal of another type than the column's (an `i64` against an INT32 column, a string
//! against a DATE column, a timestamp in another unit, a decimal of another scale) is converted
//! to the column's stored representation when the conversion is exact. When the literal cannot
//! equal any value the column can store (out of range, finer than the unit, more fraction
//! digits than the scale), it is provably absent. When the meaning of the comparison depends on
//! the engine's casting rules (a float against a decimal, a time zone question), the row group
//! is kept.

use crate::column::{ColumnType, Unit, ValueKind};
use crate::value::{encode_text, encode_value, EncodeOptions, Encoded, Value};
use parquet::basic::Type as PhysicalType;

/// A literal from a query, typed as an engine holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A boolean (BOOLEAN columns have no filters: never prunes).
    Bool(bool),
    /// Any integer type, signed or unsigned.
    Int(i128),
    /// A half-precision float.
    Float16(half::f16),
    /// A single-precision float.
    Float32(f32),
    /// A double-precision float.
    Float64(f64),
    /// Text.
    Utf8(String),
    /// Bytes.
    Binary(Vec<u8>),
    /// Days since 1970-01-01.
    Date32(i32),
    /// Milliseconds since 1970-01-01 (Arrow's Date64).
    Date64(i64),
    /// A timestamp: ticks of `unit` since the epoch; `utc` when it carries a time zone.
    Timestamp {
        /// Ticks.
        value: i64,
        /// Tick size.
        unit: Unit,
        /// Adjusted to UTC (Arrow: has a time zone).
        utc: bool,
    },
    /// A time of day in ticks of `unit`.
    Time {
        /// Ticks since midnight.
        value: i64,
        /// Tick size.
        unit: Unit,
    },
    /// A decimal `unscaled * 10^-scale`.
    Decimal {
        /// Unscaled value.
        unscaled: i128,
        /// Fraction digits.
        scale: i8,
    },
}

fn keep(why: impl Into<String>) -> Encoded {
    Encoded::AlwaysMaybe(why.into())
}

fn never(why: impl Into<String>) -> Encoded {
    Encoded::NeverStored(why.into())
}

/// The bytes to probe for `lit` in `col`, by the coercion rules of this module.
///
/// ```
/// use sbbf_parquet::literal::{coerce, Literal};
/// use sbbf_parquet::value::Encoded;
/// # use sbbf_parquet::column::{ColumnType, ValueKind};
/// # let int8 = ColumnType { path: "x".into(), physical: parquet::basic::Type::INT32,
/// #     type_length: 0, kind: ValueKind::Int { bits: 8, signed: true }, logical: None };
/// // An i64 literal against an INT(8) column: stored as a 4-byte INT32.
/// assert_eq!(coerce(&int8, &Literal::Int(5)), Encoded::Candidates(vec![5i32.to_le_bytes().to_vec()]));
/// // Out of range: no row can match.
/// assert!(matches!(coerce(&int8, &Literal::Int(1000)), Encoded::NeverStored(_)));
/// // A float against an integer column matches only integral values.
/// assert!(matches!(coerce(&int8, &Literal::Float64(1.5)), Encoded::NeverStored(_)));
/// ```
pub fn coerce(col: &ColumnType, lit: &Literal) -> Encoded {
    let sql = EncodeOptions::default();
    let via_value =
        |v: Value<'_>| encode_value(col, &v, sql).unwrap_or_else(|e| keep(e.to_string()));
    match (lit, col.kind) {
        (Literal::Bool(_), _) | (_, ValueKind::Boolean) => keep("BOOLEAN has no Bloom filter"),

        (Literal::Int(i), ValueKind::Int { .. } | ValueKind::Decimal { .. }) => {
            via_value(Value::Int(*i))
        }
        (Literal::Int(i), ValueKind::Float | ValueKind::Double | ValueKind::Float16) => {
            let f = *i as f64;
            if f as i128 == *i {
                via_value(Value::Float64(f))
            } else {
                keep(format!(
                    "{i} has no exact double; the engine's cast decides"
                ))
            }
        }

        (Literal::Float16(f), _) => coerce(col, &Literal::Float64(f.to_f64())),
        (Literal::Float32(f), ValueKind::Float | ValueKind::Double | ValueKind::Float16) => {
            via_value(Value::Float32(*f))
        }
        (Literal::Float64(f), ValueKind::Float | ValueKind::Double | ValueKind::Float16) => {
            via_value(Value::Float64(*f))
        }
        (Literal::Float32(_) | Literal::Float64(_), ValueKind::Int { .. }) => {
            let f = match lit {
                Literal::Float32(f) => *f as f64,
                Literal::Float64(f) => *f,
                _ => unreachable!(),
            };
            if f.is_nan() || f.fract() != 0.0 {
                never(format!("{f} is not an integer"))
            } else if f.abs() >= 2f64.powi(100) {
                never(format!("{f} is outside every integer range"))
            } else {
                via_value(Value::Int(f as i128))
            }
        }

        (Literal::Utf8(s), ValueKind::String | ValueKind::Binary) => match col.physical {
            PhysicalType::FIXED_LEN_BYTE_ARRAY => via_value(Value::Bytes(s.as_bytes())),
            _ => Encoded::Candidates(vec![s.as_bytes().to_vec()]),
        },
        (Literal::Binary(b), ValueKind::String | ValueKind::Binary | ValueKind::Uuid) => {
            via_value(Value::Bytes(b))
        }
        // A string against a typed column: read it as the CLI reads text; text that does not
        // parse leaves the question to the engine.
        (Literal::Utf8(s), _) => encode_text(col, s, sql).unwrap_or_else(|e| keep(e.to_string())),

        (Literal::Date32(d), ValueKind::Date) => {
            Encoded::Candidates(vec![d.to_le_bytes().to_vec()])
        }
        (Literal::Date64(ms), ValueKind::Date) => {
            if ms.rem_euclid(86_400_000) != 0 {
                never("a Date64 that is not midnight equals no DATE")
            } else {
                match i32::try_from(ms.div_euclid(86_400_000)) {
                    Ok(d) => Encoded::Candidates(vec![d.to_le_bytes().to_vec()]),
                    Err(_) => never("outside the DATE range"),
                }
            }
        }

        (
            Literal::Timestamp { value, unit, utc },
            ValueKind::Timestamp {
                unit: cu,
                utc: cutc,
            },
        ) => {
            if *utc != cutc {
                return keep("time zone semantics differ between literal and column");
            }
            match rescale(*value as i128, *unit, cu) {
                Some(t) => match i64::try_from(t) {
                    Ok(t) => Encoded::Candidates(vec![t.to_le_bytes().to_vec()]),
                    Err(_) => never("outside the column's INT64 range"),
                },
                None => never("finer than the column's unit"),
            }
        }
        (Literal::Timestamp { value, unit, .. }, ValueKind::Int96) => {
            let ns = *value as i128 * unit.nanos();
            const DAY: i128 = 86_400_000_000_000;
            let nod = ns.rem_euclid(DAY) as i64;
            match i32::try_from(ns.div_euclid(DAY) + 2_440_588) {
                Ok(j) => {
                    let mut b = nod.to_le_bytes().to_vec();
                    b.extend_from_slice(&j.to_le_bytes());
                    Encoded::Candidates(vec![b])
                }
                Err(_) => never("outside the INT96 day range"),
            }
        }
        (Literal::Time { value, unit }, ValueKind::Time(cu)) => {
            match rescale(*value as i128, *unit, cu) {
                Some(t) if cu == Unit::Millis => match i32::try_from(t) {
                    Ok(t) => Encoded::Candidates(vec![t.to_le_bytes().to_vec()]),
                    Err(_) => never("outside the day"),
                },
                Some(t) => Encoded::Candidates(vec![(t as i64).to_le_bytes().to_vec()]),
                None => never("finer than the column's unit"),
            }
        }

        (Literal::Decimal { unscaled, scale }, ValueKind::Decimal { scale: cs, .. }) => {
            match rescale_decimal(*unscaled, *scale as i32, cs as i32) {
                Ok(u) => via_value(Value::Str(&decimal_text(u, cs))),
                Err(e) => e,
            }
        }
        (Literal::Decimal { unscaled, scale }, ValueKind::Int { .. }) => {
            match rescale_decimal(*unscaled, *scale as i32, 0) {
                Ok(u) => via_value(Value::Int(u)),
                Err(e) => e,
            }
        }
        _ => keep("the literal's type and the column's type have no exact conversion"),
    }
}

/// `value` ticks of `from` in ticks of `to`, if exact.
fn rescale(value: i128, from: Unit, to: Unit) -> Option<i128> {
    let ns = value * from.nanos();
    (ns % to.nanos() == 0).then(|| ns / to.nanos())
}

fn rescale_decimal(unscaled: i128, from: i32, to: i32) -> Result<i128, Encoded> {
    if from <= to {
        10i128
            .checked_pow((to - from) as u32)
            .and_then(|m| unscaled.checked_mul(m))
            .ok_or_else(|| never("more digits than the column holds"))
    } else {
        let d = 10i128
            .checked_pow((from - to) as u32)
            .ok_or_else(|| never("scale out of range"))?;
        if unscaled % d == 0 {
            Ok(unscaled / d)
        } else {
            Err(never("more fraction digits than the column's scale"))
        }
    }
}

fn decimal_text(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let s = scale as usize;
    let padded = format!("{digits:0>width$}", width = s + 1);
    let (i, f) = padded.split_at(padded.len() - s);
    format!(
        "{}{}{}{}",
        if unscaled < 0 { "-" } else { "" },
        i,
        if s > 0 { "." } else { "" },
        f
    )
}

impl Literal {
    /// The literal at `index` of an Arrow array, or `None` for a null or a type without a
    /// literal form here (nested types, intervals). Dictionary arrays are looked through.
    ///
    /// ```
    /// use arrow_array::{Int8Array, TimestampMillisecondArray};
    /// use sbbf_parquet::literal::Literal;
    /// use sbbf_parquet::column::Unit;
    /// assert_eq!(Literal::from_arrow(&Int8Array::from(vec![-3]), 0), Some(Literal::Int(-3)));
    /// let ts = TimestampMillisecondArray::from(vec![1_000]).with_timezone("UTC");
    /// assert_eq!(
    ///     Literal::from_arrow(&ts, 0),
    ///     Some(Literal::Timestamp { value: 1_000, unit: Unit::Millis, utc: true })
    /// );
    /// ```
    pub fn from_arrow(array: &dyn arrow_array::Array, index: usize) -> Option<Literal> {
        use arrow_array::cast::AsArray;
        use arrow_array::types::*;
        use arrow_schema::{DataType as D, TimeUnit as T};
        if index >= array.len() || array.is_null(index) {
            return None;
        }
        let unit = |t: &T| match t {
            T::Second => None,
            T::Millisecond => Some(Unit::Millis),
            T::Microsecond => Some(Unit::Micros),
            T::Nanosecond => Some(Unit::Nanos),
        };
        Some(match array.data_type() {
            D::Boolean => Literal::Bool(array.as_boolean().value(index)),
            D::Int8 => Literal::Int(array.as_primitive::<Int8Type>().value(index) as i128),
            D::Int16 => Literal::Int(array.as_primitive::<Int16Type>().value(index) as i128),
            D::Int32 => Literal::Int(array.as_primitive::<Int32Type>().value(index) as i128),
            D::Int64 => Literal::Int(array.as_primitive::<Int64Type>().value(index) as i128),
            D::UInt8 => Literal::Int(array.as_primitive::<UInt8Type>().value(index) as i128),
            D::UInt16 => Literal::Int(array.as_primitive::<UInt16Type>().value(index) as i128),
            D::UInt32 => Literal::Int(array.as_primitive::<UInt32Type>().value(index) as i128),
            D::UInt64 => Literal::Int(array.as_primitive::<UInt64Type>().value(index) as i128),
            D::Float16 => Literal::Float16(array.as_primitive::<Float16Type>().value(index)),
            D::Float32 => Literal::Float32(array.as_primitive::<Float32Type>().value(index)),
            D::Float64 => Literal::Float64(array.as_primitive::<Float64Type>().value(index)),
            D::Utf8 => Literal::Utf8(array.as_string::<i32>().value(index).to_string()),
            D::LargeUtf8 => Literal::Utf8(array.as_string::<i64>().value(index).to_string()),
            D::Utf8View => Literal::Utf8(array.as_string_view().value(index).to_string()),
            D::Binary => Literal::Binary(array.as_binary::<i32>().value(index).to_vec()),
            D::LargeBinary => Literal::Binary(array.as_binary::<i64>().value(index).to_vec()),
            D::BinaryView => Literal::Binary(array.as_binary_view().value(index).to_vec()),
            D::FixedSizeBinary(_) => {
                Literal::Binary(array.as_fixed_size_binary().value(index).to_vec())
            }
            D::Date32 => Literal::Date32(array.as_primitive::<Date32Type>().value(index)),
            D::Date64 => Literal::Date64(array.as_primitive::<Date64Type>().value(index)),
            D::Timestamp(t, tz) => {
                let v = match t {
                    T::Second => array.as_primitive::<TimestampSecondType>().value(index),
                    T::Millisecond => array
                        .as_primitive::<TimestampMillisecondType>()
                        .value(index),
                    T::Microsecond => array
                        .as_primitive::<TimestampMicrosecondType>()
                        .value(index),
                    T::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(index),
                };
                // Seconds become milliseconds (exact).
                let (value, unit) = match unit(t) {
                    Some(u) => (v, u),
                    None => (v.checked_mul(1000)?, Unit::Millis),
                };
                Literal::Timestamp {
                    value,
                    unit,
                    utc: tz.is_some(),
                }
            }
            D::Time32(t) => {
                let v = match t {
                    T::Second => {
                        array.as_primitive::<Time32SecondType>().value(index) as i64 * 1000
                    }
                    _ => array.as_primitive::<Time32MillisecondType>().value(index) as i64,
                };
                Literal::Time {
                    value: v,
                    unit: Unit::Millis,
                }
            }
            D::Time64(t) => {
                let (v, u) = match t {
                    T::Microsecond => (
                        array.as_primitive::<Time64MicrosecondType>().value(index),
                        Unit::Micros,
                    ),
                    _ => (
                        array.as_primitive::<Time64NanosecondType>().value(index),
                        Unit::Nanos,
                    ),
                };
                Literal::Time { value: v, unit: u }
            }
            D::Decimal32(_, s) => Literal::Decimal {
                unscaled: array.as_primitive::<Decimal32Type>().value(index) as i128,
                scale: *s,
            },
            D::Decimal64(_, s) => Literal::Decimal {
                unscaled: array.as_primitive::<Decimal64Type>().value(index) as i128,
                scale: *s,
            },
            D::Decimal128(_, s) => Literal::Decimal {
                unscaled: array.as_primitive::<Decimal128Type>().value(index),
                scale: *s,
            },
            D::Decimal256(_, s) => Literal::Decimal {
                unscaled: array
                    .as_primitive::<Decimal256Type>()
                    .value(index)
                    .to_i128()?,
                scale: *s,
            },
            D::Dictionary(_, _) => {
                let dict = array.as_any_dictionary();
                let key = dict.normalized_keys()[index];
                return Literal::from_arrow(dict.values().as_ref(), key);
            }
            _ => return None,
        })
    }
}
