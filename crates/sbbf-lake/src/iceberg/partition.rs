//! Partition values as text. A manifest holds each data file's partition tuple as typed Avro
//! values (not Appendix D bytes); they are shown the way Iceberg shows them in partition
//! paths: dates as `2024-01-15`, `month` as `2024-01`, `hour` as `2024-01-15-10`, timestamps
//! in ISO form, decimals with their scale. The same text is also what partition equality is
//! tested on when deletes are matched to data files, so it must be a function of the value
//! alone (floats print their shortest round-trip form, which tells -0.0 from 0.0).

use super::metadata::SpecField;
use apache_avro::types::Value;
use chrono::{DateTime, NaiveDate, NaiveTime};

/// The value without its union wrapper (an optional field is a union with null).
pub(super) fn unwrap(v: &Value) -> &Value {
    let mut v = v;
    while let Value::Union(_, inner) = v {
        v = inner;
    }
    v
}

/// The text of partition value `value` of field `field` (`None` when null). Without the
/// field (a tuple the spec does not describe), the value is shown by its Avro type alone.
pub(super) fn render(value: &Value, field: Option<&SpecField>) -> Option<String> {
    let value = unwrap(value);
    let transform = field.map(|f| f.transform.as_str()).unwrap_or("identity");
    let source = field.and_then(|f| f.source_type.as_deref()).unwrap_or("");
    // Transforms that keep the source type show values as the source type does.
    let keeps_type = transform == "identity" || transform.starts_with("truncate");
    let text = match (transform, value) {
        (_, Value::Null) => return None,
        ("year", Value::Int(n)) => (1970 + i64::from(*n)).to_string(),
        ("month", Value::Int(n)) => {
            let n = i64::from(*n);
            format!("{:04}-{:02}", 1970 + n.div_euclid(12), n.rem_euclid(12) + 1)
        }
        ("day", Value::Int(n) | Value::Date(n)) => date(*n),
        ("hour", Value::Int(n)) => DateTime::from_timestamp(i64::from(*n) * 3600, 0)
            .map(|t| t.format("%Y-%m-%d-%H").to_string())
            .unwrap_or_else(|| n.to_string()),
        (_, Value::Date(n)) => date(*n),
        (_, Value::Int(n)) if keeps_type && source == "date" => date(*n),
        (_, Value::Long(n)) if keeps_type && source.starts_with("timestamp") => timestamp(
            *n,
            source.ends_with("_ns"),
            source.starts_with("timestamptz"),
        ),
        (_, Value::Long(n)) if keeps_type && source == "time" => time(*n),
        (_, Value::Bytes(b) | Value::Fixed(_, b)) if source.starts_with("decimal") => {
            decimal(b, scale(source))
        }
        (_, Value::Decimal(d)) => match <Vec<u8>>::try_from(d) {
            Ok(b) => decimal(&b, scale(source)),
            Err(_) => format!("{d:?}"),
        },
        (_, Value::BigDecimal(d)) => d.to_string(),
        (_, Value::Boolean(b)) => b.to_string(),
        (_, Value::Int(n)) => n.to_string(),
        (_, Value::Long(n)) => n.to_string(),
        (_, Value::Float(x)) => x.to_string(),
        (_, Value::Double(x)) => x.to_string(),
        (_, Value::String(s) | Value::Enum(_, s)) => s.clone(),
        (_, Value::Bytes(b) | Value::Fixed(_, b)) => hex(b),
        (_, Value::Uuid(u)) => u.to_string(),
        (_, Value::TimestampMillis(n)) => timestamp(n.saturating_mul(1000), false, true),
        (_, Value::TimestampMicros(n)) => timestamp(*n, false, true),
        (_, Value::TimestampNanos(n)) => timestamp(*n, true, true),
        (_, Value::LocalTimestampMillis(n)) => timestamp(n.saturating_mul(1000), false, false),
        (_, Value::LocalTimestampMicros(n)) => timestamp(*n, false, false),
        (_, Value::LocalTimestampNanos(n)) => timestamp(*n, true, false),
        (_, Value::TimeMillis(n)) => time(i64::from(*n) * 1000),
        (_, Value::TimeMicros(n)) => time(*n),
        // Not partition types (records, arrays, maps, durations): shown as Avro values, so
        // that equal values still compare equal.
        (_, other) => format!("{other:?}"),
    };
    Some(text)
}

/// Days since 1970-01-01 as `YYYY-MM-DD` (the number itself when out of range).
fn date(days: i32) -> String {
    NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|epoch| epoch.checked_add_signed(chrono::Duration::days(i64::from(days))))
        .map(|d| d.to_string())
        .unwrap_or_else(|| days.to_string())
}

/// Microseconds (or nanoseconds) since the epoch as `YYYY-MM-DDTHH:MM:SS[.f]`, with
/// `+00:00` for a timestamp with time zone.
fn timestamp(n: i64, nanos: bool, utc: bool) -> String {
    let t = match nanos {
        true => Some(DateTime::from_timestamp_nanos(n)),
        false => DateTime::from_timestamp_micros(n),
    };
    match t {
        Some(t) => {
            let zone = if utc { "+00:00" } else { "" };
            format!("{}{zone}", t.naive_utc().format("%Y-%m-%dT%H:%M:%S%.f"))
        }
        None => n.to_string(),
    }
}

/// Microseconds since midnight as `HH:MM:SS[.f]`.
fn time(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let nanos = micros.rem_euclid(1_000_000) * 1000;
    u32::try_from(secs)
        .ok()
        .zip(u32::try_from(nanos).ok())
        .and_then(|(s, n)| NaiveTime::from_num_seconds_from_midnight_opt(s, n))
        .map(|t| t.format("%H:%M:%S%.f").to_string())
        .unwrap_or_else(|| micros.to_string())
}

/// The scale of `decimal(P,S)` (0 when the type is not one).
fn scale(ty: &str) -> u32 {
    ty.strip_prefix("decimal(")
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|r| r.split(',').nth(1))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// An unscaled two's-complement big-endian integer with `scale` digits after the point
/// (hex when longer than 16 bytes, which no Iceberg decimal is).
fn decimal(bytes: &[u8], scale: u32) -> String {
    if bytes.is_empty() || bytes.len() > 16 {
        return hex(bytes);
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    let unscaled = i128::from_be_bytes(buf);
    // Iceberg decimals have at most 38 digits; a larger scale is damage, not a width to pad to.
    if scale == 0 || scale > 38 {
        return unscaled.to_string();
    }
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

/// Bytes as lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
