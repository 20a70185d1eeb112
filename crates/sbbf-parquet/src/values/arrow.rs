//! The Arrow front end of the stored-value layer: the one dispatch over Arrow data types. Each
//! non-null element becomes a borrowed literal, and [`crate::values::stored`]'s rules do the rest:
//! for query literals ([`Literal::from_arrow`], [`Literal::all_from_arrow`]) and for building
//! filters from data ([`for_each_arrow_value`]).

use crate::format::column::{ColumnType, Unit};
use crate::values::stored::{emit, Intent, Literal, Outcome, Scalar};
use crate::{BuildError, Error};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use arrow_schema::{DataType as D, TimeUnit as T};

/// Where [`for_each_scalar`] puts each element. A trait rather than a closure so that the
/// building sink can be inlined into every typed loop (`#[inline(always)]` on its method): the
/// element's variant is then known there and the rules fold down to that type's few
/// instructions.
pub(crate) trait Sink<'a> {
    /// The element at `index`.
    fn put(&mut self, index: usize, value: Scalar<'a>);
}

impl<'a, F: FnMut(usize, Scalar<'a>)> Sink<'a> for F {
    #[inline]
    fn put(&mut self, index: usize, value: Scalar<'a>) {
        self(index, value)
    }
}

/// Puts the index and the value of every non-null element of `array` into `f`, dictionaries
/// looked through. Elements of types without a literal form (intervals, nested types, decimals
/// wider than 128 bits) come as [`Scalar::Other`].
pub(crate) fn for_each_scalar<'a>(array: &'a dyn Array, f: &mut impl Sink<'a>) {
    macro_rules! each {
        ($arr:expr, |$v:ident| $scalar:expr) => {{
            let a = $arr;
            for i in 0..a.len() {
                if a.is_valid(i) {
                    let $v = a.value(i);
                    f.put(i, $scalar);
                }
            }
        }};
    }
    let int = |v: i128| Scalar::Int(v);
    match array.data_type() {
        D::Boolean => each!(array.as_boolean(), |v| Scalar::Bool(v)),
        D::Int8 => each!(array.as_primitive::<Int8Type>(), |v| int(v as i128)),
        D::Int16 => each!(array.as_primitive::<Int16Type>(), |v| int(v as i128)),
        D::Int32 => each!(array.as_primitive::<Int32Type>(), |v| int(v as i128)),
        D::Int64 => each!(array.as_primitive::<Int64Type>(), |v| int(v as i128)),
        D::UInt8 => each!(array.as_primitive::<UInt8Type>(), |v| int(v as i128)),
        D::UInt16 => each!(array.as_primitive::<UInt16Type>(), |v| int(v as i128)),
        D::UInt32 => each!(array.as_primitive::<UInt32Type>(), |v| int(v as i128)),
        D::UInt64 => each!(array.as_primitive::<UInt64Type>(), |v| int(v as i128)),
        D::Float16 => each!(array.as_primitive::<Float16Type>(), |v| Scalar::Float16(v)),
        D::Float32 => each!(array.as_primitive::<Float32Type>(), |v| Scalar::Float32(v)),
        D::Float64 => each!(array.as_primitive::<Float64Type>(), |v| Scalar::Float64(v)),
        D::Utf8 => each!(array.as_string::<i32>(), |v| Scalar::Utf8(v)),
        D::LargeUtf8 => each!(array.as_string::<i64>(), |v| Scalar::Utf8(v)),
        D::Utf8View => each!(array.as_string_view(), |v| Scalar::Utf8(v)),
        D::Binary => each!(array.as_binary::<i32>(), |v| Scalar::Binary(v)),
        D::LargeBinary => each!(array.as_binary::<i64>(), |v| Scalar::Binary(v)),
        D::BinaryView => each!(array.as_binary_view(), |v| Scalar::Binary(v)),
        D::FixedSizeBinary(_) => each!(array.as_fixed_size_binary(), |v| Scalar::Binary(v)),
        D::Date32 => each!(array.as_primitive::<Date32Type>(), |v| Scalar::Date32(v)),
        D::Date64 => each!(array.as_primitive::<Date64Type>(), |v| Scalar::Date64(v)),
        D::Timestamp(t, tz) => {
            let utc = tz.is_some();
            let ts = |value: i64, unit: Unit| Scalar::Timestamp { value, unit, utc };
            match t {
                // Parquet has no seconds: milliseconds hold them exactly.
                T::Second => each!(array.as_primitive::<TimestampSecondType>(), |v| v
                    .checked_mul(1000)
                    .map_or(
                        Scalar::Other("a timestamp in seconds beyond the millisecond range"),
                        |ms| ts(ms, Unit::Millis)
                    )),
                T::Millisecond => each!(array.as_primitive::<TimestampMillisecondType>(), |v| ts(
                    v,
                    Unit::Millis
                )),
                T::Microsecond => each!(array.as_primitive::<TimestampMicrosecondType>(), |v| ts(
                    v,
                    Unit::Micros
                )),
                T::Nanosecond => each!(array.as_primitive::<TimestampNanosecondType>(), |v| ts(
                    v,
                    Unit::Nanos
                )),
            }
        }
        D::Time32(T::Second) => each!(array.as_primitive::<Time32SecondType>(), |v| {
            Scalar::Time {
                value: v as i64 * 1000,
                unit: Unit::Millis,
            }
        }),
        D::Time32(_) => each!(array.as_primitive::<Time32MillisecondType>(), |v| {
            Scalar::Time {
                value: v as i64,
                unit: Unit::Millis,
            }
        }),
        D::Time64(T::Microsecond) => each!(array.as_primitive::<Time64MicrosecondType>(), |v| {
            Scalar::Time {
                value: v,
                unit: Unit::Micros,
            }
        }),
        D::Time64(_) => each!(array.as_primitive::<Time64NanosecondType>(), |v| {
            Scalar::Time {
                value: v,
                unit: Unit::Nanos,
            }
        }),
        D::Decimal32(_, s) => each!(array.as_primitive::<Decimal32Type>(), |v| {
            Scalar::Decimal {
                unscaled: v as i128,
                scale: *s,
            }
        }),
        D::Decimal64(_, s) => each!(array.as_primitive::<Decimal64Type>(), |v| {
            Scalar::Decimal {
                unscaled: v as i128,
                scale: *s,
            }
        }),
        D::Decimal128(_, s) => each!(array.as_primitive::<Decimal128Type>(), |v| {
            Scalar::Decimal {
                unscaled: v,
                scale: *s,
            }
        }),
        D::Decimal256(_, s) => each!(array.as_primitive::<Decimal256Type>(), |v| v
            .to_i128()
            .map_or(
                Scalar::Other("a Decimal256 wider than 128 bits"),
                |unscaled| {
                    Scalar::Decimal {
                        unscaled,
                        scale: *s,
                    }
                }
            )),
        D::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            // Each dictionary value read once, then handed out for every valid key.
            let values = scalars(dict.values().as_ref());
            for (i, k) in dict.normalized_keys().iter().enumerate() {
                if array.is_valid(i) {
                    if let Some(Some(s)) = values.get(*k) {
                        f.put(i, *s);
                    }
                }
            }
        }
        _ => {
            for i in 0..array.len() {
                if array.is_valid(i) {
                    f.put(
                        i,
                        Scalar::Other("a value of an Arrow type without a literal form"),
                    );
                }
            }
        }
    }
}

/// Every element's value by index (`None` for nulls).
fn scalars<'a>(array: &'a dyn Array) -> Vec<Option<Scalar<'a>>> {
    let mut out = vec![None; array.len()];
    for_each_scalar(array, &mut |i, s: Scalar<'a>| out[i] = Some(s));
    out
}

impl Literal {
    /// The literal at `index` of an Arrow array, or `None` for a null (or an index past the
    /// end). Dictionary arrays are looked through; an element of a type without a literal
    /// form is [`Literal::Other`], which never rules a row group out.
    ///
    /// ```
    /// use arrow_array::{Int8Array, TimestampMillisecondArray};
    /// use sbbf_parquet::values::stored::Literal;
    /// use sbbf_parquet::format::column::Unit;
    /// assert_eq!(Literal::from_arrow(&Int8Array::from(vec![-3]), 0), Some(Literal::Int(-3)));
    /// let ts = TimestampMillisecondArray::from(vec![1_000]).with_timezone("UTC");
    /// assert_eq!(
    ///     Literal::from_arrow(&ts, 0),
    ///     Some(Literal::Timestamp { value: 1_000, unit: Unit::Millis, utc: true })
    /// );
    /// ```
    pub fn from_arrow(array: &dyn Array, index: usize) -> Option<Literal> {
        if index >= array.len() {
            return None;
        }
        let one = array.slice(index, 1);
        let mut out = None;
        for_each_scalar(one.as_ref(), &mut |_, s: Scalar<'_>| {
            out = Some(s.to_literal())
        });
        out
    }

    /// The literals of every non-null element of an Arrow array, in order.
    ///
    /// ```
    /// use arrow_array::StringArray;
    /// use sbbf_parquet::values::stored::Literal;
    /// let a = StringArray::from(vec![Some("a"), None, Some("b")]);
    /// assert_eq!(
    ///     Literal::all_from_arrow(&a),
    ///     vec![Literal::Utf8("a".into()), Literal::Utf8("b".into())]
    /// );
    /// ```
    pub fn all_from_arrow(array: &dyn Array) -> Vec<Literal> {
        let mut out = Vec::new();
        for_each_scalar(array, &mut |_, s: Scalar<'_>| out.push(s.to_literal()));
        out
    }
}

impl Scalar<'_> {
    fn to_literal(self) -> Literal {
        match self {
            Scalar::Bool(b) => Literal::Bool(b),
            Scalar::Int(i) => Literal::Int(i),
            Scalar::Float16(f) => Literal::Float16(f),
            Scalar::Float32(f) => Literal::Float32(f),
            Scalar::Float64(f) => Literal::Float64(f),
            Scalar::Utf8(s) => Literal::Utf8(s.to_string()),
            Scalar::Binary(b) => Literal::Binary(b.to_vec()),
            Scalar::Date32(d) => Literal::Date32(d),
            Scalar::Date64(d) => Literal::Date64(d),
            Scalar::Timestamp { value, unit, utc } => Literal::Timestamp { value, unit, utc },
            Scalar::Time { value, unit } => Literal::Time { value, unit },
            Scalar::Decimal { unscaled, scale } => Literal::Decimal { unscaled, scale },
            Scalar::Other(why) => Literal::Other(why.to_string()),
        }
    }
}

/// The building sink: each element through the rules, its bytes to `out`; the first element
/// the column cannot hold is remembered (and the rest skipped).
struct Store<'c, F> {
    col: &'c ColumnType,
    out: F,
    failure: Option<(usize, String)>,
}

impl<'a, F: FnMut(&[u8])> Sink<'a> for Store<'_, F> {
    #[inline(always)]
    fn put(&mut self, index: usize, value: Scalar<'a>) {
        if self.failure.is_some() {
            return;
        }
        match emit(self.col, value, Intent::Store, &mut self.out) {
            Outcome::Stored => {}
            Outcome::Never(why) => self.failure = Some((index, why)),
            Outcome::Maybe(why) => self.failure = Some((index, why.to_string())),
        }
    }
}

/// Calls `f` with the PLAIN bytes of every non-null element of `array` as a writer stores them
/// in a column of type `col` (by [`crate::values::stored`]'s rules: integers widened to the physical
/// type, timestamps in the column's unit, INT96, decimals by physical type, floats by their
/// exact bits, dictionaries through their values). An element the column cannot hold exactly
/// (out of range, finer than its unit, another type) is an error: a filter must not be built
/// from a guess.
///
/// ```
/// use arrow_array::Int8Array;
/// # use sbbf_parquet::format::column::{ColumnType, ValueKind};
/// # let col = ColumnType { path: "x".into(), physical: parquet::basic::Type::INT32,
/// #     type_length: 0, kind: ValueKind::Int { bits: 8, signed: true }, logical: None };
/// let mut out = Vec::new();
/// sbbf_parquet::values::arrow::for_each_arrow_value(&Int8Array::from(vec![Some(-1), None]), &col, |b| out.push(b.to_vec())).unwrap();
/// assert_eq!(out, vec![(-1i32).to_le_bytes().to_vec()]);
/// ```
pub fn for_each_arrow_value(
    array: &dyn Array,
    col: &ColumnType,
    mut f: impl FnMut(&[u8]),
) -> Result<(), Error> {
    let mut sink = Store {
        col,
        out: &mut f,
        failure: None,
    };
    for_each_scalar(array, &mut sink);
    match sink.failure {
        None => Ok(()),
        Some((index, reason)) => Err(Error::Build(BuildError::ArrowValue {
            index,
            data_type: array.data_type().to_string(),
            column: col.path.clone(),
            physical: col.physical_name().to_string(),
            reason,
        })),
    }
}
