//! A table's primitive types as Arrow types: one rule for every reader of a table (the
//! DataFusion scan, Python's `read_table`), used where no data file says how a column is
//! held (Delta partition columns, a column no file has yet, a schema known before any
//! footer is read).

use crate::Format;
use arrow_schema::{DataType, TimeUnit};
use std::sync::Arc;

/// The zone Arrow types carry for instants, as arrow-rs' Parquet reader writes it. (pyarrow's
/// reader writes `UTC`: the Python package spells it so, for the same instant.)
pub const UTC: &str = "+00:00";

/// The Arrow type of a primitive type as `format` names it in its schema (`long`,
/// `decimal(10,2)`, `timestamptz`, `fixed[16]`), as the format's Parquet files hold it;
/// `None` for nested types (`struct<…>`, a list, a map: the files tell), for a decimal wider
/// than 38 digits and for names neither format has.
///
/// ```
/// use arrow_schema::{DataType, TimeUnit};
/// use sbbf_lake::{arrow_types::arrow_type, Format};
/// assert_eq!(arrow_type(Format::Delta, "long"), Some(DataType::Int64));
/// assert_eq!(arrow_type(Format::Iceberg, "decimal(10,2)"), Some(DataType::Decimal128(10, 2)));
/// // Delta's `timestamp` is an instant; Iceberg's is a local time (`timestamptz` the instant).
/// assert_eq!(
///     arrow_type(Format::Iceberg, "timestamp"),
///     Some(DataType::Timestamp(TimeUnit::Microsecond, None))
/// );
/// assert!(matches!(
///     arrow_type(Format::Delta, "timestamp"),
///     Some(DataType::Timestamp(TimeUnit::Microsecond, Some(_)))
/// ));
/// assert_eq!(arrow_type(Format::Delta, "struct<a:long>"), None);
/// ```
pub fn arrow_type(format: Format, t: &str) -> Option<DataType> {
    let utc = || Some(Arc::from(UTC));
    Some(match t {
        "boolean" => DataType::Boolean,
        "byte" => DataType::Int8,
        "short" => DataType::Int16,
        "int" | "integer" => DataType::Int32,
        "long" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "date" => DataType::Date32,
        "string" => DataType::Utf8,
        "binary" => DataType::Binary,
        "uuid" => DataType::FixedSizeBinary(16),
        "time" => DataType::Time64(TimeUnit::Microsecond),
        "timestamp" if format == Format::Delta => DataType::Timestamp(TimeUnit::Microsecond, utc()),
        "timestamp" | "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "timestamptz" => DataType::Timestamp(TimeUnit::Microsecond, utc()),
        "timestamp_ns" => DataType::Timestamp(TimeUnit::Nanosecond, None),
        "timestamptz_ns" => DataType::Timestamp(TimeUnit::Nanosecond, utc()),
        _ => {
            if let Some(ps) = t.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
                let (p, s) = ps.split_once(',')?;
                let (p, s): (u8, i8) = (p.trim().parse().ok()?, s.trim().parse().ok()?);
                return match p {
                    1..=38 => Some(DataType::Decimal128(p, s)),
                    _ => None,
                };
            }
            let n = t.strip_prefix("fixed[")?.strip_suffix(']')?.parse().ok()?;
            DataType::FixedSizeBinary(n)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_type_of_both_formats() {
        use DataType as D;
        let us = |tz: Option<&str>| D::Timestamp(TimeUnit::Microsecond, tz.map(Arc::from));
        let ns = |tz: Option<&str>| D::Timestamp(TimeUnit::Nanosecond, tz.map(Arc::from));
        let (delta, ice) = (Format::Delta, Format::Iceberg);
        for (f, t, want) in [
            (delta, "boolean", Some(D::Boolean)),
            (delta, "byte", Some(D::Int8)),
            (delta, "short", Some(D::Int16)),
            (delta, "integer", Some(D::Int32)),
            (ice, "int", Some(D::Int32)),
            (delta, "long", Some(D::Int64)),
            (ice, "float", Some(D::Float32)),
            (ice, "double", Some(D::Float64)),
            (delta, "date", Some(D::Date32)),
            (delta, "string", Some(D::Utf8)),
            (ice, "binary", Some(D::Binary)),
            (ice, "uuid", Some(D::FixedSizeBinary(16))),
            (ice, "time", Some(D::Time64(TimeUnit::Microsecond))),
            (delta, "timestamp", Some(us(Some(UTC)))),
            (delta, "timestamp_ntz", Some(us(None))),
            (ice, "timestamp", Some(us(None))),
            (ice, "timestamptz", Some(us(Some(UTC)))),
            (ice, "timestamp_ns", Some(ns(None))),
            (ice, "timestamptz_ns", Some(ns(Some(UTC)))),
            (delta, "decimal(10,2)", Some(D::Decimal128(10, 2))),
            (ice, "decimal(38, 0)", Some(D::Decimal128(38, 0))),
            (ice, "fixed[7]", Some(D::FixedSizeBinary(7))),
            (delta, "struct<a:long>", None),
            (delta, "decimal(99,2)", None),
            (ice, "decimal(0,0)", None),
            (ice, "fixed[x]", None),
            (ice, "nosuch", None),
        ] {
            assert_eq!(arrow_type(f, t), want, "{f:?} {t}");
        }
    }
}
