//! The text front end of the stored-value layer: what a user types, read by the column's type
//! into a [`Literal`], then turned into the bytes writers hash by [`crate::values::stored`]'s rules.
//!
//! The hashed bytes are the value's PLAIN encoding (without the length prefix of BYTE_ARRAY).
//! Text is read by the column's logical type (see `docs/values.md`), following the canonical text of the conformance
//! corpus: `2024-01-31` for DATE, `12.34` for DECIMAL(p,2), `2024-01-31T12:00:00.123456Z` for
//! TIMESTAMP, `0x00ff` for binary, `f81d4fae-7dec-11d0-a765-00a0c91e6bf6` for UUID.

use crate::format::column::{ColumnType, Unit, ValueKind};
use crate::values::stored::{self, Encoded, Literal, Parsed};
use parquet::basic::Type as PhysicalType;

/// How to read the value text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputMode {
    /// By the column's logical type (the default).
    #[default]
    Typed,
    /// An integer taken as the stored INT32/INT64 value, ignoring the logical type.
    RawInt,
    /// `0x`-prefixed (or bare) hex of the exact bytes to hash.
    Hex,
    /// The text's UTF-8 bytes, for BYTE_ARRAY and FLBA columns.
    Utf8,
}

/// Options of value encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncodeOptions {
    /// Probe exactly the given float bits instead of the SQL question (`0.0` also matches
    /// `-0.0`; NaN matches nothing and is never ruled out).
    pub exact_bits: bool,
    /// How to read the text.
    pub input: InputMode,
}

pub use crate::ValueError;

fn one(bytes: Vec<u8>) -> Encoded {
    Encoded::Candidates(vec![bytes])
}

fn type_text(col: &ColumnType) -> String {
    match &col.logical {
        Some(l) => format!("{} {}", col.physical_name(), l),
        None => col.physical_name().to_string(),
    }
}

fn fail(col: &ColumnType, text: &str, expected: impl Into<String>) -> ValueError {
    ValueError {
        text: text.to_string(),
        column: col.path.clone(),
        ty: type_text(col),
        expected: expected.into(),
    }
}

/// Encodes user text for `col`.
///
/// ```
/// use sbbf_parquet::values::text::{encode_text, EncodeOptions};
/// use sbbf_parquet::Encoded;
/// use sbbf_parquet::format::column::{ColumnType, ValueKind};
/// let date = ColumnType { path: "d".into(), physical: parquet::basic::Type::INT32,
///     type_length: 0, kind: ValueKind::Date, logical: Some("DATE".into()) };
/// let e = encode_text(&date, "1970-01-02", EncodeOptions::default()).unwrap();
/// assert_eq!(e, Encoded::Candidates(vec![1i32.to_le_bytes().to_vec()]));
/// ```
pub fn encode_text(
    col: &ColumnType,
    text: &str,
    opts: EncodeOptions,
) -> Result<Encoded, ValueError> {
    match opts.input {
        InputMode::Typed => Ok(match parse_text(col, text)? {
            Parsed::Literal(lit) => stored::encode(col, &lit, opts.exact_bits),
            Parsed::Never(why) => Encoded::NeverStored(why),
        }),
        InputMode::Hex => {
            let bytes = parse_hex(text).ok_or_else(|| fail(col, text, "hex digits"))?;
            let width = match col.physical {
                // PLAIN BOOLEAN is one byte per value as filters hash it (0x00, 0x01).
                PhysicalType::BOOLEAN => Some(1),
                PhysicalType::INT32 | PhysicalType::FLOAT => Some(4),
                PhysicalType::INT64 | PhysicalType::DOUBLE => Some(8),
                PhysicalType::INT96 => Some(12),
                PhysicalType::FIXED_LEN_BYTE_ARRAY => Some(col.type_length.max(0) as usize),
                _ => None,
            };
            if let Some(w) = width {
                if bytes.len() != w {
                    return Err(fail(col, text, format!("exactly {w} bytes of hex")));
                }
            }
            Ok(one(bytes))
        }
        InputMode::Utf8 => match col.physical {
            PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                Ok(stored::physical_bytes(col, text.as_bytes()))
            }
            _ => Err(fail(
                col,
                text,
                "text bytes apply to BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY columns only",
            )),
        },
        InputMode::RawInt => {
            let v: i128 = text
                .trim()
                .parse()
                .map_err(|_| fail(col, text, "an integer"))?;
            match col.physical {
                PhysicalType::INT32 | PhysicalType::INT64 => {
                    stored::raw_int(col.physical, v).map(one).ok_or_else(|| {
                        fail(
                            col,
                            text,
                            "an integer within the physical type's 32 or 64 bits",
                        )
                    })
                }
                _ => Err(fail(
                    col,
                    text,
                    "raw integers apply to INT32/INT64 columns only",
                )),
            }
        }
    }
}

/// Reads `text` by the column's logical type: the literal it means, or a value the column can
/// never hold (finer than nanoseconds, more digits than any decimal holds).
pub(crate) fn parse_text(col: &ColumnType, text: &str) -> Result<Parsed, ValueError> {
    let lit = |l: Literal| Ok(Parsed::Literal(l));
    match col.kind {
        // Parquet's spec gives BOOLEAN no filter, but ClickHouse (and arrow-rs) write one,
        // each value hashed as one byte: read as arrow-rs reads them.
        ValueKind::Boolean => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => lit(Literal::Bool(true)),
            "false" | "0" => lit(Literal::Bool(false)),
            _ => Err(fail(col, text, "true or false (or 1 or 0)")),
        },
        ValueKind::Int { signed, .. } => match text.trim().parse::<i128>() {
            Ok(v) => lit(Literal::Int(v)),
            Err(_) => Err(fail(
                col,
                text,
                if signed {
                    "an integer"
                } else {
                    "an unsigned integer"
                },
            )),
        },
        ValueKind::Float | ValueKind::Double | ValueKind::Float16 => {
            let f = parse_float(text).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a number such as 1.5, -0.0, 1e-05, NaN, inf or -inf",
                )
            })?;
            // The text means the nearest value of the column's width.
            let (l, infinite) = match col.kind {
                ValueKind::Float => {
                    let x = text.trim().parse::<f32>().unwrap_or(f as f32);
                    (Literal::Float32(x), x.is_infinite())
                }
                ValueKind::Float16 => {
                    let x = half::f16::from_f64(f);
                    (Literal::Float16(x), x.is_infinite())
                }
                _ => (Literal::Float64(f), f.is_infinite()),
            };
            // A finite number too large for the width would silently become infinity. One a
            // double holds is a value no row of a narrower column has (a table's column
            // promoted from float to double reads its older float files so): absent there,
            // as an integer beyond an INT32 column's range is.
            if infinite && !names_infinity(text) && f.is_finite() && col.kind != ValueKind::Double {
                return Ok(Parsed::Never(format!(
                    "{} is beyond the range of {} (no value of the column is that large)",
                    text.trim(),
                    col.physical_name()
                )));
            }
            if infinite && !names_infinity(text) {
                return Err(fail(
                    col,
                    text,
                    format!(
                        "a number within the range of {} (this one would round to infinity; write inf or -inf for infinity)",
                        col.physical_name()
                    ),
                ));
            }
            lit(l)
        }
        ValueKind::Date => {
            let days = parse_date(text.trim())
                .ok_or_else(|| fail(col, text, "a date YYYY-MM-DD, e.g. 2024-02-29"))?;
            match i32::try_from(days) {
                Ok(d) => lit(Literal::Date32(d)),
                Err(_) => Ok(Parsed::Never("date outside the INT32 day range".into())),
            }
        }
        ValueKind::Time(unit) => {
            let t = parse_time(text.trim()).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a time of day HH:MM:SS[.fraction], e.g. 23:59:59.999",
                )
            })?;
            if t.sub_nano {
                return Ok(Parsed::Never(format!(
                    "{text} is finer than the column's unit ({unit:?})"
                )));
            }
            let (value, unit) = coarsest(t.ns);
            // A time of day has at most 86,400 * 10^9 nanoseconds: always an i64.
            lit(Literal::Time {
                value: value as i64,
                unit,
            })
        }
        ValueKind::Timestamp { .. } | ValueKind::Int96 => {
            let int96 = col.kind == ValueKind::Int96;
            let ts = parse_timestamp(text.trim()).ok_or_else(|| {
                fail(
                    col,
                    text,
                    if int96 {
                        "a timestamp YYYY-MM-DDTHH:MM:SS[.fraction], e.g. 1970-01-01T00:00:00.000000000"
                    } else {
                        "a timestamp YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM], e.g. 2024-01-31T12:00:00.123456Z"
                    },
                )
            })?;
            let utc = match col.kind {
                ValueKind::Timestamp { utc, .. } => utc,
                _ => false,
            };
            if ts.offset_secs.is_some() && !utc && !int96 {
                return Err(fail(
                    col,
                    text,
                    "a wall-clock timestamp without Z or offset (this column is not adjusted to UTC)",
                ));
            }
            let t = ts.nanos();
            if t.sub_nano {
                return Ok(Parsed::Never(format!(
                    "{text} is finer than the column's unit"
                )));
            }
            let (value, unit) = coarsest(t.ns);
            match i64::try_from(value) {
                Ok(value) => lit(Literal::Timestamp { value, unit, utc }),
                // Beyond an i64 of nanoseconds, in nanoseconds: no TIMESTAMP column holds it
                // (finer than MILLIS/MICROS, outside INT64 for NANOS). INT96 could: refuse
                // rather than answer.
                Err(_) if int96 => Err(fail(
                    col,
                    text,
                    "a timestamp within 292 years of 1970 when it has nanoseconds",
                )),
                Err(_) => Ok(Parsed::Never("timestamp outside the INT64 range".into())),
            }
        }
        ValueKind::Decimal { precision, scale } => parse_decimal(text)
            .map(|p| match p {
                Some((unscaled, s)) => Parsed::Literal(Literal::Decimal { unscaled, scale: s }),
                None => Parsed::Never(format!(
                    "{text} has more digits than DECIMAL({precision},{scale}) holds"
                )),
            })
            .ok_or_else(|| fail(col, text, "a decimal number such as 12.34, -0.5 or 1.25e3")),
        ValueKind::String => lit(Literal::Utf8(text.to_string())),
        ValueKind::Binary => {
            let bytes = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) => parse_hex(hex).ok_or_else(|| {
                    fail(
                        col,
                        text,
                        "hex after 0x (or the text's own bytes without the 0x)",
                    )
                })?,
                None => text.as_bytes().to_vec(),
            };
            lit(Literal::Binary(bytes))
        }
        ValueKind::Uuid => {
            let bytes = parse_uuid(text.trim()).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a UUID such as f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
                )
            })?;
            lit(Literal::Binary(bytes))
        }
    }
}

/// Nanoseconds in the coarsest unit that holds them exactly.
fn coarsest(ns: i128) -> (i128, Unit) {
    [Unit::Millis, Unit::Micros, Unit::Nanos]
        .into_iter()
        .find(|u| ns % u.nanos() == 0)
        .map(|u| (ns / u.nanos(), u))
        .unwrap_or((ns, Unit::Nanos))
}

fn names_infinity(text: &str) -> bool {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_prefix(['+', '-']).unwrap_or(&t);
    t == "inf" || t == "infinity"
}

/// A decimal number (`12.34`, `-0.5`, `1.25e3`, `-9.77997406e6`) as an unscaled integer and
/// its scale (fraction digits, trailing zeros dropped); `Ok(None)` when it has more digits
/// than an i128 holds, `None` (outer) when it is not a decimal number.
fn parse_decimal(text: &str) -> Option<Option<(i128, i8)>> {
    let t = text.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok().filter(|e| e.abs() <= 10_000)?),
        None => (body, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // Significant digits and the power of ten of the last one.
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let mut scale = frac_part.len() as i64 - exp as i64;
    let mut digits = digits.to_string();
    while scale > 0 && digits.ends_with('0') {
        digits.pop();
        scale -= 1;
    }
    if digits.is_empty() {
        return Some(Some((0, 0)));
    }
    let mut unscaled: i128 = 0;
    for d in digits.bytes() {
        match unscaled
            .checked_mul(10)
            .and_then(|u| u.checked_add((d - b'0') as i128))
        {
            Some(u) => unscaled = u,
            None => return Some(None),
        }
    }
    if scale < 0 {
        match 10i128
            .checked_pow(scale.unsigned_abs() as u32)
            .and_then(|m| unscaled.checked_mul(m))
        {
            Some(u) => {
                unscaled = u;
                scale = 0;
            }
            None => return Some(None),
        }
    }
    // Non-zero digits beyond 127 places: more than any column's scale.
    let Ok(scale) = i8::try_from(scale) else {
        return Some(None);
    };
    Some(Some((if neg { -unscaled } else { unscaled }, scale)))
}

fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => t.parse::<f64>().ok(),
    }
}

/// Decodes hex, with or without a `0x` prefix; `0x` alone is the empty value.
pub fn parse_hex(text: &str) -> Option<Vec<u8>> {
    let t = text.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if !t.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    t.as_bytes()
        .chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

fn parse_uuid(text: &str) -> Option<Vec<u8>> {
    let t = text.trim_start_matches('{').trim_end_matches('}');
    let hex: String = t.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    parse_hex(&hex)
}

fn parse_date(text: &str) -> Option<i64> {
    let d = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
    Some((d - epoch).num_days())
}

/// A duration in nanoseconds whose digits beyond nanoseconds, if any, were non-zero.
#[derive(Debug, Clone, Copy)]
struct Nanos {
    ns: i128,
    /// Digits finer than a nanosecond were given and not all zero.
    sub_nano: bool,
}

fn parse_fraction(frac: &str) -> Option<(i128, bool)> {
    if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (nine, rest) = frac.split_at(frac.len().min(9));
    let mut ns: i128 = nine.parse().ok()?;
    for _ in nine.len()..9 {
        ns *= 10;
    }
    Some((ns, rest.bytes().any(|b| b != b'0')))
}

fn parse_time(text: &str) -> Option<Nanos> {
    let (hms, frac) = match text.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let num = |s: &str| s.parse::<i128>().ok();
    let (h, m) = (num(parts[0])?, num(parts[1])?);
    let s = if parts.len() == 3 { num(parts[2])? } else { 0 };
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let (f, sub_nano) = match frac {
        Some(f) => parse_fraction(f)?,
        None => (0, false),
    };
    Some(Nanos {
        ns: ((h * 60 + m) * 60 + s) * 1_000_000_000 + f,
        sub_nano,
    })
}

struct Timestamp {
    days: i64,
    time: Nanos,
    offset_secs: Option<i64>,
}

impl Timestamp {
    fn nanos(&self) -> Nanos {
        let offset = self.offset_secs.unwrap_or(0) as i128 * 1_000_000_000;
        Nanos {
            ns: self.days as i128 * 86_400_000_000_000 + self.time.ns - offset,
            sub_nano: self.time.sub_nano,
        }
    }
}

fn parse_timestamp(text: &str) -> Option<Timestamp> {
    // Date, then optionally 'T' or ' ' and a time, then optionally Z or ±HH:MM.
    let split = text.find(['T', 't', ' ']);
    let (date, rest) = match split {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    };
    let days = parse_date(date)?;
    if rest.is_empty() {
        return Some(Timestamp {
            days,
            time: Nanos {
                ns: 0,
                sub_nano: false,
            },
            offset_secs: None,
        });
    }
    let (time, offset_secs) = if let Some(t) = rest.strip_suffix(['Z', 'z']) {
        (t, Some(0))
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (t, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let digits: String = off[1..].chars().filter(|c| *c != ':').collect();
        // ASCII digits only: the slicing below is by byte.
        if (digits.len() != 4 && digits.len() != 2) || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let hh: i64 = digits[..2].parse().ok()?;
        let mm: i64 = if digits.len() == 4 {
            digits[2..].parse().ok()?
        } else {
            0
        };
        if hh > 23 || mm > 59 {
            return None;
        }
        (t, Some(sign * (hh * 3600 + mm * 60)))
    } else {
        (rest, None)
    };
    Some(Timestamp {
        days,
        time: parse_time(time)?,
        offset_secs,
    })
}
