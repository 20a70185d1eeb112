//! The stored-value layer: the one place that knows which bytes a column stores for a typed
//! value, and so which bytes a writer hashed.
//!
//! Every front end is a thin translation into a [`Literal`] (or its borrowed form for bulk
//! data) followed by the rules here: command-line text ([`crate::values::text`]), query literals
//! ([`coerce`]) and Arrow arrays ([`crate::values::arrow`]). The rules:
//!
//! - integers by the column's declared width and signedness (an `INT(8)` 5 is a 4-byte INT32;
//!   a `UINT(32)` above 2^31 has the bits of a negative i32); out of range is never stored;
//! - decimals by physical type and scale: INT32/INT64 unscaled, FLBA big-endian two's
//!   complement sign-extended to the column's length, BYTE_ARRAY at every width a writer may
//!   use (minimal two's complement up to 16 bytes); more fraction digits than the scale, or
//!   more digits than the precision, are never stored;
//! - timestamps and times converted to the column's unit, exactly or not at all; INT96 as
//!   nanoseconds of the day then the Julian day;
//! - floats in the column's width (FLOAT, DOUBLE, FLOAT16 in 2 little-endian bytes), a value
//!   without an exact form in that width never stored; under SQL equality `0.0` also matches
//!   `-0.0` and NaN is never ruled out;
//! - FIXED_LEN_BYTE_ARRAY values of exactly the column's length;
//! - BOOLEAN as one byte, 0x00 or 0x01 (Parquet's spec defines no BOOLEAN filter; ClickHouse
//!   and arrow-rs write one so, and arrow-rs reads it so);
//! - what filters cannot decide (a time-zone mismatch, a conversion the engine's cast rules
//!   decide) is "always maybe", never "absent".

use crate::format::column::{ColumnType, Unit, ValueKind};
use parquet::basic::Type as PhysicalType;

/// A typed value, as a query engine or a caller holds it: the one vocabulary of values.
///
/// A literal of another type than the column's (an `i64` against an INT32 column, a string
/// against a DATE column, a timestamp in another unit, a decimal of another scale) is converted
/// to the column's stored representation when the conversion is exact.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A boolean (a BOOLEAN column's filter, where a writer wrote one, holds it as one byte).
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
    /// A value this layer has no conversion for (an Arrow interval, a nested value, a decimal
    /// wider than 128 bits), described: it never rules a row group out.
    Other(String),
}

/// What to probe for one value.
#[derive(Debug, Clone, PartialEq)]
pub enum Encoded {
    /// The value may be stored as any of these byte strings (usually one; `0.0` and `-0.0` in
    /// SQL mode; every width a writer may use for a BYTE_ARRAY decimal). "Maybe present" when
    /// any of them tests positive.
    Candidates(Vec<Vec<u8>>),
    /// The column can never hold this value (out of range, finer than the column's unit, more
    /// fraction digits than the scale): definitely absent, whatever the filters say.
    NeverStored(String),
    /// Filters cannot rule this value out (NaN under SQL equality), and why.
    AlwaysMaybe(MaybeWhy),
}

/// Why filters cannot rule a value out ([`Encoded::AlwaysMaybe`]). Its text names no option
/// of a front end: a front end adds its own hint (the command line's `--exact-bits`, say).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaybeWhy {
    /// A NaN under SQL equality: engines disagree on NaN = NaN, and a NaN has many bit
    /// patterns, of which a filter holds only those stored. Probing by exact bits
    /// ([`encode`] with `exact_bits`) tests the one pattern given.
    NaN,
    /// Any other reason (a time-zone mismatch, a conversion only the engine's cast rules
    /// decide, a column with no filter for the type), described.
    Other(String),
}

impl std::fmt::Display for MaybeWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaybeWhy::NaN => f.write_str(
                "NaN: engines disagree on NaN = NaN (true in DuckDB, Spark and PostgreSQL, false \
                 in IEEE comparison) and a NaN has many bit patterns, of which a filter holds \
                 only the ones stored, so filters cannot rule it out",
            ),
            MaybeWhy::Other(why) => f.write_str(why),
        }
    }
}

/// The bytes to probe for `lit` in `col` under SQL equality (`0.0` matches `-0.0`, NaN is
/// never ruled out).
///
/// ```
/// use sbbf_parquet::values::stored::{coerce, Encoded, Literal};
/// # use sbbf_parquet::format::column::{ColumnType, ValueKind};
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
    encode(col, lit, false)
}

/// Like [`coerce`]; with `exact_bits`, a float is probed by exactly its bits (NaN's bits
/// included, `0.0` without `-0.0`).
///
/// ```
/// use sbbf_parquet::values::stored::{encode, Encoded, Literal};
/// # use sbbf_parquet::format::column::{ColumnType, ValueKind};
/// # let f64col = ColumnType { path: "x".into(), physical: parquet::basic::Type::DOUBLE,
/// #     type_length: 0, kind: ValueKind::Double, logical: None };
/// let zero = Literal::Float64(0.0);
/// assert_eq!(encode(&f64col, &zero, true), Encoded::Candidates(vec![0f64.to_le_bytes().to_vec()]));
/// let Encoded::Candidates(both) = encode(&f64col, &zero, false) else { panic!() };
/// assert_eq!(both.len(), 2); // 0.0 and -0.0
/// ```
pub fn encode(col: &ColumnType, lit: &Literal, exact_bits: bool) -> Encoded {
    let intent = if exact_bits {
        Intent::ExactBits
    } else {
        Intent::Sql
    };
    // Text against a typed column (a query's string literal): read as the command line reads
    // it; text that does not parse leaves the question to the engine.
    if let Literal::Utf8(text) = lit {
        if !matches!(col.kind, ValueKind::String | ValueKind::Binary) {
            return match crate::values::text::parse_text(col, text) {
                Ok(Parsed::Literal(parsed)) => encode(col, &parsed, exact_bits),
                Ok(Parsed::Never(why)) => Encoded::NeverStored(why),
                Err(e) => Encoded::AlwaysMaybe(MaybeWhy::Other(e.to_string())),
            };
        }
    }
    let mut candidates = Vec::new();
    let o = emit(col, Scalar::of(lit), intent, &mut |b: &[u8]| {
        candidates.push(b.to_vec())
    });
    o.into_encoded(candidates)
}

impl Outcome {
    /// With the bytes the rule emitted, as an [`Encoded`].
    fn into_encoded(self, candidates: Vec<Vec<u8>>) -> Encoded {
        match self {
            Outcome::Stored => Encoded::Candidates(candidates),
            Outcome::Never(why) => Encoded::NeverStored(why),
            Outcome::Maybe(why) => Encoded::AlwaysMaybe(why),
        }
    }
}

/// The exact bytes of an integer given as the stored INT32/INT64 value, whatever the logical
/// type (signed or unsigned bit patterns of the physical width); `None` when it does not fit
/// the physical type or the column is not INT32/INT64.
pub(crate) fn raw_int(physical: PhysicalType, v: i128) -> Option<Vec<u8>> {
    match physical {
        PhysicalType::INT32 if (i32::MIN as i128..=u32::MAX as i128).contains(&v) => {
            Some((v as u32).to_le_bytes().to_vec())
        }
        PhysicalType::INT64 if (i64::MIN as i128..=u64::MAX as i128).contains(&v) => {
            Some((v as u64).to_le_bytes().to_vec())
        }
        _ => None,
    }
}

/// Bytes taken as the stored value of a BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY column, whatever
/// its logical type (a FIXED_LEN_BYTE_ARRAY value must have the column's length).
pub(crate) fn physical_bytes(col: &ColumnType, b: &[u8]) -> Encoded {
    let mut candidates = Vec::new();
    let o = bytes(col, b, &mut |b: &[u8]| candidates.push(b.to_vec()));
    o.into_encoded(candidates)
}

/// A [`Literal`] borrowed from where it lives (an Arrow array, a caller's literal), so that
/// bulk data goes through the rules without an allocation per value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Scalar<'a> {
    Bool(bool),
    Int(i128),
    Float16(half::f16),
    Float32(f32),
    Float64(f64),
    Utf8(&'a str),
    Binary(&'a [u8]),
    Date32(i32),
    Date64(i64),
    Timestamp { value: i64, unit: Unit, utc: bool },
    Time { value: i64, unit: Unit },
    Decimal { unscaled: i128, scale: i8 },
    Other(&'a str),
}

impl<'a> Scalar<'a> {
    pub(crate) fn of(lit: &'a Literal) -> Scalar<'a> {
        match lit {
            Literal::Bool(b) => Scalar::Bool(*b),
            Literal::Int(i) => Scalar::Int(*i),
            Literal::Float16(f) => Scalar::Float16(*f),
            Literal::Float32(f) => Scalar::Float32(*f),
            Literal::Float64(f) => Scalar::Float64(*f),
            Literal::Utf8(s) => Scalar::Utf8(s),
            Literal::Binary(b) => Scalar::Binary(b),
            Literal::Date32(d) => Scalar::Date32(*d),
            Literal::Date64(d) => Scalar::Date64(*d),
            Literal::Timestamp { value, unit, utc } => Scalar::Timestamp {
                value: *value,
                unit: *unit,
                utc: *utc,
            },
            Literal::Time { value, unit } => Scalar::Time {
                value: *value,
                unit: *unit,
            },
            Literal::Decimal { unscaled, scale } => Scalar::Decimal {
                unscaled: *unscaled,
                scale: *scale,
            },
            Literal::Other(why) => Scalar::Other(why),
        }
    }
}

/// What the bytes are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// SQL equality: `0.0` also matches `-0.0`; NaN is never ruled out; a BYTE_ARRAY decimal
    /// at every width a writer may have used.
    Sql,
    /// The value's exact bits (floats as given, NaN included).
    ExactBits,
    /// What a writer stores for the value (building filters): exact bits, a BYTE_ARRAY
    /// decimal in minimal two's complement (as parquet-java writes it), time zones as given.
    Store,
}

/// How the rules ended, besides the bytes they emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The stored bytes were emitted (each candidate once).
    Stored,
    /// No value of the column can equal this one.
    Never(String),
    /// Filters cannot rule this value out.
    Maybe(MaybeWhy),
}

fn never(why: impl Into<String>) -> Outcome {
    Outcome::Never(why.into())
}

fn maybe(why: impl Into<String>) -> Outcome {
    Outcome::Maybe(MaybeWhy::Other(why.into()))
}

/// The rules: calls `out` with each byte string `v` may be stored as in `col`.
#[inline(always)]
pub(crate) fn emit(
    col: &ColumnType,
    v: Scalar<'_>,
    intent: Intent,
    out: &mut impl FnMut(&[u8]),
) -> Outcome {
    use ValueKind as K;
    // A float of the column's own width, when its bits are wanted: exactly those bits (a
    // round trip through another width could quiet a signaling NaN).
    if intent != Intent::Sql {
        match (v, col.kind) {
            (Scalar::Float32(f), K::Float) => out(&f.to_le_bytes()),
            (Scalar::Float64(f), K::Double) => out(&f.to_le_bytes()),
            (Scalar::Float16(f), K::Float16) => out(&f.to_le_bytes()),
            _ => return emit_converted(col, v, intent, out),
        }
        return Outcome::Stored;
    }
    emit_converted(col, v, intent, out)
}

/// [`emit`] for everything but a float of the column's width under exact bits.
#[inline(always)]
fn emit_converted(
    col: &ColumnType,
    v: Scalar<'_>,
    intent: Intent,
    out: &mut impl FnMut(&[u8]),
) -> Outcome {
    use ValueKind as K;
    // A half float is a double with fewer bits (no recursion here: this runs per element).
    let v = match v {
        Scalar::Float16(f) => Scalar::Float64(f.to_f64()),
        v => v,
    };
    match (v, col.kind) {
        // One byte, 0x00 or 0x01: how arrow-rs and ClickHouse hash BOOLEAN values (the PLAIN
        // form; Parquet's spec defines no BOOLEAN filter, so no other form exists).
        // Writing one stays refused: parquet-java and Arrow C++ write none (and read none).
        (Scalar::Bool(_), K::Boolean) if intent == Intent::Store => {
            maybe("no BOOLEAN filter is written (parquet-java and Arrow C++ read none)")
        }
        (Scalar::Bool(b), K::Boolean) => {
            out(&[u8::from(b)]);
            Outcome::Stored
        }
        (Scalar::Bool(_), _) | (_, K::Boolean) => {
            maybe("only a boolean is compared with a BOOLEAN column by its filter")
        }
        (Scalar::Other(why), _) => maybe(why),

        (Scalar::Int(i), K::Int { .. }) => int(col, i, out),
        (Scalar::Int(i), K::Decimal { .. }) => decimal(col, i, 0, intent, out),
        (Scalar::Int(i), K::Float | K::Double | K::Float16) => {
            let f = i as f64;
            if f as i128 == i {
                float(col, f, intent, out)
            } else {
                maybe(format!(
                    "{i} has no exact double; the engine's cast decides"
                ))
            }
        }

        (Scalar::Float32(f), K::Float | K::Double | K::Float16) => {
            float(col, f as f64, intent, out)
        }
        (Scalar::Float64(f), K::Float | K::Double | K::Float16) => float(col, f, intent, out),
        (Scalar::Float32(_) | Scalar::Float64(_), K::Int { .. }) => {
            let f = match v {
                Scalar::Float32(f) => f as f64,
                Scalar::Float64(f) => f,
                _ => unreachable!("matched above"),
            };
            if f.is_nan() || f.fract() != 0.0 {
                never(format!("{f} is not an integer"))
            } else if f.abs() >= 2f64.powi(100) {
                never(format!("{f} is outside every integer range"))
            } else {
                int(col, f as i128, out)
            }
        }

        (Scalar::Utf8(s), K::String | K::Binary) => bytes(col, s.as_bytes(), out),
        (Scalar::Binary(b), K::String | K::Binary | K::Uuid) => bytes(col, b, out),
        // Text against a typed column is read by `encode` before the rules; data of another
        // type than the column's is not converted.
        (Scalar::Date32(d), K::Date) => {
            out(&d.to_le_bytes());
            Outcome::Stored
        }
        (Scalar::Date64(ms), K::Date) => {
            if ms.rem_euclid(86_400_000) != 0 {
                never("a Date64 that is not midnight equals no DATE")
            } else {
                match i32::try_from(ms.div_euclid(86_400_000)) {
                    Ok(d) => {
                        out(&d.to_le_bytes());
                        Outcome::Stored
                    }
                    Err(_) => never("outside the DATE range"),
                }
            }
        }

        (
            Scalar::Timestamp { value, unit, utc },
            K::Timestamp {
                unit: cu,
                utc: cutc,
            },
        ) => {
            if utc != cutc && intent != Intent::Store {
                return maybe("time zone semantics differ between literal and column");
            }
            match rescale(value as i128, unit, cu) {
                Some(t) => match i64::try_from(t) {
                    Ok(t) => {
                        out(&t.to_le_bytes());
                        Outcome::Stored
                    }
                    Err(_) => never("outside the column's INT64 range"),
                },
                None => never(format!("finer than the column's unit ({cu:?})")),
            }
        }
        (Scalar::Timestamp { value, unit, .. }, K::Int96) => {
            match int96(value as i128 * unit.nanos()) {
                Some(b) => {
                    out(&b);
                    Outcome::Stored
                }
                None => never("outside the INT96 day range"),
            }
        }
        (Scalar::Time { value, unit }, K::Time(cu)) => match rescale(value as i128, unit, cu) {
            Some(t) if cu == Unit::Millis => match i32::try_from(t) {
                Ok(t) => {
                    out(&t.to_le_bytes());
                    Outcome::Stored
                }
                Err(_) => never("outside the day"),
            },
            Some(t) => match i64::try_from(t) {
                Ok(t) => {
                    out(&t.to_le_bytes());
                    Outcome::Stored
                }
                Err(_) => never("outside the day"),
            },
            None => never(format!("finer than the column's unit ({cu:?})")),
        },

        (Scalar::Decimal { unscaled, scale }, K::Decimal { .. }) => {
            decimal(col, unscaled, scale as i32, intent, out)
        }
        (Scalar::Decimal { unscaled, scale }, K::Int { .. }) => {
            match rescale_decimal(unscaled, scale as i32, 0) {
                Ok(u) => int(col, u, out),
                Err(e) => e,
            }
        }
        _ => maybe("the literal's type and the column's type have no exact conversion"),
    }
}

/// What text reads as for a column: a literal, or a value the column can never hold.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Parsed {
    Literal(Literal),
    Never(String),
}

/// An integer in the column's declared range, in its physical width.
#[inline(always)]
fn int(col: &ColumnType, v: i128, out: &mut impl FnMut(&[u8])) -> Outcome {
    let ValueKind::Int { bits, signed } = col.kind else {
        return maybe("not an integer column");
    };
    // The declared widths by their Rust types: two compares each (this runs per element).
    let fits = match (bits, signed) {
        (8, true) => i8::try_from(v).is_ok(),
        (16, true) => i16::try_from(v).is_ok(),
        (32, true) => i32::try_from(v).is_ok(),
        (64, true) => i64::try_from(v).is_ok(),
        (8, false) => u8::try_from(v).is_ok(),
        (16, false) => u16::try_from(v).is_ok(),
        (32, false) => u32::try_from(v).is_ok(),
        (64, false) => u64::try_from(v).is_ok(),
        _ => {
            let (lo, hi) = int_range(bits, signed);
            (lo..=hi).contains(&v)
        }
    };
    if !fits {
        return out_of_range(v, bits, signed);
    }
    match col.physical {
        PhysicalType::INT32 => out(&(v as u32).to_le_bytes()),
        _ => out(&(v as u64).to_le_bytes()),
    }
    Outcome::Stored
}

/// The values of an integer of `bits` (1 to 127), signed or not.
fn int_range(bits: u8, signed: bool) -> (i128, i128) {
    let bits = bits.clamp(1, 127);
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

#[cold]
fn out_of_range(v: i128, bits: u8, signed: bool) -> Outcome {
    let (lo, hi) = int_range(bits, signed);
    let kind = if signed { "INT" } else { "UINT" };
    never(format!(
        "{v} is outside the range of {kind}({bits}) [{lo}, {hi}]"
    ))
}

/// A float in the column's width, if it has an exact form there, with the SQL rules for zero
/// and NaN unless the exact bits are asked for.
#[inline(always)]
fn float(col: &ColumnType, f: f64, intent: Intent, out: &mut impl FnMut(&[u8])) -> Outcome {
    let exact = match col.kind {
        ValueKind::Float => (f as f32) as f64 == f || f.is_nan(),
        ValueKind::Float16 => half::f16::from_f64(f).to_f64() == f || f.is_nan(),
        _ => true,
    };
    if !exact {
        return never(format!(
            "{f} has no exact form in this column's float width"
        ));
    }
    let mut put = |x: f64| match col.kind {
        ValueKind::Float => out(&(x as f32).to_le_bytes()),
        ValueKind::Float16 => out(&half::f16::from_f64(x).to_le_bytes()),
        _ => out(&x.to_le_bytes()),
    };
    if intent == Intent::Sql {
        if f.is_nan() {
            return Outcome::Maybe(MaybeWhy::NaN);
        }
        if f == 0.0 {
            put(0.0);
            put(-0.0);
            return Outcome::Stored;
        }
    }
    put(f);
    Outcome::Stored
}

/// Bytes for a BYTE_ARRAY column, or a FIXED_LEN_BYTE_ARRAY column of exactly their length.
#[inline(always)]
fn bytes(col: &ColumnType, b: &[u8], out: &mut impl FnMut(&[u8])) -> Outcome {
    match col.physical {
        PhysicalType::BYTE_ARRAY => {
            out(b);
            Outcome::Stored
        }
        PhysicalType::FIXED_LEN_BYTE_ARRAY => fixed(col, b, out),
        _ => maybe(format!("bytes do not fit a {} column", col.physical_name())),
    }
}

/// A value of a FIXED_LEN_BYTE_ARRAY column: exactly `type_length` bytes or never stored.
#[inline(always)]
pub(crate) fn fixed(col: &ColumnType, b: &[u8], out: &mut impl FnMut(&[u8])) -> Outcome {
    if b.len() == col.type_length.max(0) as usize {
        out(b);
        Outcome::Stored
    } else {
        never(format!(
            "the column stores exactly {} bytes, the value has {}",
            col.type_length,
            b.len()
        ))
    }
}

/// `unscaled * 10^-scale` in a DECIMAL column (or an INT column's scale 0).
#[inline]
fn decimal(
    col: &ColumnType,
    unscaled: i128,
    scale: i32,
    intent: Intent,
    out: &mut impl FnMut(&[u8]),
) -> Outcome {
    let ValueKind::Decimal {
        precision,
        scale: cs,
    } = col.kind
    else {
        return maybe("not a decimal column");
    };
    let u = match rescale_decimal(unscaled, scale, cs as i32) {
        Ok(u) => u,
        Err(e) => return e,
    };
    if precision <= 38 && u.unsigned_abs() >= 10u128.pow(precision) {
        return never(format!("more digits than DECIMAL({precision},{cs}) holds"));
    }
    let be = u.to_be_bytes();
    match col.physical {
        PhysicalType::INT32 => match i32::try_from(u) {
            Ok(v) => out(&v.to_le_bytes()),
            Err(_) => return never("outside INT32"),
        },
        PhysicalType::INT64 => match i64::try_from(u) {
            Ok(v) => out(&v.to_le_bytes()),
            Err(_) => return never("outside INT64"),
        },
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            let width = col.type_length.max(0) as usize;
            if !sign_extend(&be, width, out) {
                return never(format!("does not fit the column's {width} bytes"));
            }
        }
        // Writers disagree on the width of BYTE_ARRAY decimals (parquet-java: minimal two's
        // complement; others pad): a query probes every width up to 16 bytes.
        _ => {
            let min = minimal_width(u);
            let max = if intent == Intent::Store { min } else { 16 };
            for w in min..=max {
                sign_extend(&be, w, out);
            }
        }
    }
    Outcome::Stored
}

/// `unscaled` at scale `from` rescaled to scale `to`, exactly.
fn rescale_decimal(unscaled: i128, from: i32, to: i32) -> Result<i128, Outcome> {
    if from <= to {
        10i128
            .checked_pow((to - from) as u32)
            .and_then(|m| unscaled.checked_mul(m))
            .ok_or_else(|| never("more digits than the column holds"))
    } else {
        let Some(d) = 10i128.checked_pow((from - to) as u32) else {
            // More fraction digits than any i128 scale: exact only for zero.
            return if unscaled == 0 {
                Ok(0)
            } else {
                Err(never("more fraction digits than the column's scale"))
            };
        };
        if unscaled % d == 0 {
            Ok(unscaled / d)
        } else {
            Err(never("more fraction digits than the column's scale"))
        }
    }
}

/// Bytes needed for `v` in big-endian two's complement (at least one).
pub(crate) fn minimal_width(v: i128) -> usize {
    let bits = if v < 0 {
        128 - (!v).leading_zeros() + 1
    } else {
        128 - v.leading_zeros() + 1
    };
    (bits as usize).div_ceil(8).max(1)
}

/// Emits the big-endian two's complement of a 16-byte value at `width` bytes; false when it
/// does not fit.
fn sign_extend(be16: &[u8; 16], width: usize, out: &mut impl FnMut(&[u8])) -> bool {
    let sign = if be16[0] & 0x80 != 0 { 0xff } else { 0x00 };
    if width >= 16 {
        let mut v = vec![sign; width - 16];
        v.extend_from_slice(be16);
        out(&v);
        return true;
    }
    let (drop, keep) = be16.split_at(16 - width);
    let fits =
        drop.iter().all(|b| *b == sign) && width > 0 && (keep[0] & 0x80 != 0) == (sign == 0xff);
    if fits {
        out(keep);
    }
    fits
}

/// `value` ticks of `from` in ticks of `to`, if exact.
fn rescale(value: i128, from: Unit, to: Unit) -> Option<i128> {
    let ns = value * from.nanos();
    (ns % to.nanos() == 0).then(|| ns / to.nanos())
}

/// Nanoseconds since the epoch as INT96: nanoseconds of the day (LE i64), then the Julian
/// day (LE i32); `None` outside the i32 day range.
pub(crate) fn int96(ns: i128) -> Option<[u8; 12]> {
    const DAY: i128 = 86_400_000_000_000;
    const JULIAN_EPOCH: i128 = 2_440_588;
    let julian = i32::try_from(ns.div_euclid(DAY) + JULIAN_EPOCH).ok()?;
    let mut b = [0u8; 12];
    b[..8].copy_from_slice(&(ns.rem_euclid(DAY) as i64).to_le_bytes());
    b[8..].copy_from_slice(&julian.to_le_bytes());
    Some(b)
}
