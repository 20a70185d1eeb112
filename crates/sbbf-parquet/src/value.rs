//! From what a user types (or a typed Rust value) to the exact bytes Parquet writers hash.
//!
//! The hashed bytes are the value's PLAIN encoding (without the length prefix of BYTE_ARRAY).
//! Text is read by the column's logical type, following the canonical text of the conformance
//! corpus: `2024-01-31` for DATE, `12.34` for DECIMAL(p,2), `2024-01-31T12:00:00.123456Z` for
//! TIMESTAMP, `0x00ff` for binary, `f81d4fae-7dec-11d0-a765-00a0c91e6bf6` for UUID.

use crate::column::{ColumnType, Unit, ValueKind};
use parquet::basic::Type as PhysicalType;

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
    /// Filters cannot rule this value out (NaN under SQL equality).
    AlwaysMaybe(String),
}

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

/// Text that does not parse for the column's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {text:?} as a value of column `{column}` ({ty}): {expected}")]
pub struct ValueError {
    /// The text.
    pub text: String,
    /// Column path.
    pub column: String,
    /// Physical and logical type.
    pub ty: String,
    /// What was expected.
    pub expected: String,
}

/// A typed value from Rust code, converted to the column's stored representation.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// Any integer (also unsigned 64-bit values).
    Int(i128),
    /// A single-precision float.
    Float32(f32),
    /// A double-precision float.
    Float64(f64),
    /// Text, read as the CLI reads it (dates, decimals, timestamps...).
    Str(&'a str),
    /// Raw bytes for BYTE_ARRAY / FLBA columns.
    Bytes(&'a [u8]),
}

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

/// Encodes a typed Rust value for `col`.
///
/// ```
/// use sbbf_parquet::value::{encode_value, Encoded, EncodeOptions, Value};
/// # let col = sbbf_parquet::column::ColumnType { path: "x".into(),
/// #   physical: parquet::basic::Type::INT32, type_length: 0,
/// #   kind: sbbf_parquet::column::ValueKind::Int { bits: 32, signed: true }, logical: None };
/// let e = encode_value(&col, &Value::Int(5), EncodeOptions::default()).unwrap();
/// assert_eq!(e, Encoded::Candidates(vec![5i32.to_le_bytes().to_vec()]));
/// ```
pub fn encode_value(
    col: &ColumnType,
    value: &Value<'_>,
    opts: EncodeOptions,
) -> Result<Encoded, ValueError> {
    match value {
        Value::Str(s) => encode_text(col, s, opts),
        Value::Bytes(b) => match col.physical {
            PhysicalType::BYTE_ARRAY => Ok(one(b.to_vec())),
            PhysicalType::FIXED_LEN_BYTE_ARRAY => Ok(fixed(col, b.to_vec())),
            _ => Err(fail(col, "<bytes>", "bytes fit only binary columns")),
        },
        Value::Int(i) => match col.kind {
            ValueKind::Float | ValueKind::Double | ValueKind::Float16 => {
                // An integer matches a float exactly when the float holds it exactly.
                let f = *i as f64;
                if f as i128 == *i && f.is_finite() {
                    float_value(col, f, opts)
                } else {
                    Ok(Encoded::NeverStored(format!(
                        "{i} has no exact floating-point form"
                    )))
                }
            }
            ValueKind::String | ValueKind::Binary | ValueKind::Uuid | ValueKind::Boolean => Err(
                fail(col, &i.to_string(), "an integer does not fit this column"),
            ),
            _ => encode_text(col, &i.to_string(), opts),
        },
        Value::Float32(f) => match col.kind {
            ValueKind::Float | ValueKind::Double | ValueKind::Float16 => {
                float_value(col, *f as f64, opts)
            }
            _ => float_to_other(col, *f as f64, opts),
        },
        Value::Float64(f) => match col.kind {
            ValueKind::Float | ValueKind::Double | ValueKind::Float16 => float_value(col, *f, opts),
            _ => float_to_other(col, *f, opts),
        },
    }
}

fn float_to_other(col: &ColumnType, f: f64, opts: EncodeOptions) -> Result<Encoded, ValueError> {
    match col.kind {
        ValueKind::Int { .. } | ValueKind::Decimal { .. } => {
            if !f.is_finite() {
                return Ok(Encoded::NeverStored(format!("{f} is not a number")));
            }
            if matches!(col.kind, ValueKind::Int { .. }) && f.fract() != 0.0 {
                return Ok(Encoded::NeverStored(format!("{f} is not an integer")));
            }
            // Rust prints the shortest exact-round-trip text, which the decimal reader takes.
            encode_text(col, &format!("{f}"), opts)
        }
        _ => Err(fail(
            col,
            &f.to_string(),
            "a number does not fit this column",
        )),
    }
}

/// A float value as the column stores it: exact conversion or never stored.
fn float_value(col: &ColumnType, f: f64, opts: EncodeOptions) -> Result<Encoded, ValueError> {
    let exact = match col.kind {
        ValueKind::Float => (f as f32) as f64 == f || f.is_nan(),
        ValueKind::Float16 => half::f16::from_f64(f).to_f64() == f || f.is_nan(),
        _ => true,
    };
    if !exact {
        return Ok(Encoded::NeverStored(format!(
            "{f} has no exact form in this column's float width"
        )));
    }
    Ok(floats(col, f, opts))
}

/// Bytes of a float in the column's width, with the SQL rules for zero and NaN.
fn floats(col: &ColumnType, f: f64, opts: EncodeOptions) -> Encoded {
    let enc = |x: f64| -> Vec<u8> {
        match col.kind {
            ValueKind::Float => (x as f32).to_le_bytes().to_vec(),
            ValueKind::Float16 => half::f16::from_f64(x).to_le_bytes().to_vec(),
            _ => x.to_le_bytes().to_vec(),
        }
    };
    if opts.exact_bits {
        return one(enc(f));
    }
    if f.is_nan() {
        return Encoded::AlwaysMaybe(
            "NaN: filters cannot answer SQL equality with NaN (use --exact-bits to probe its bits)"
                .into(),
        );
    }
    if f == 0.0 {
        return Encoded::Candidates(vec![enc(0.0), enc(-0.0)]);
    }
    one(enc(f))
}

/// Encodes user text for `col`.
///
/// ```
/// use sbbf_parquet::value::{encode_text, Encoded, EncodeOptions};
/// use sbbf_parquet::column::{ColumnType, ValueKind};
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
    if col.physical == PhysicalType::BOOLEAN {
        return Err(fail(
            col,
            text,
            "BOOLEAN columns cannot have Bloom filters in Parquet; nothing to probe",
        ));
    }
    match opts.input {
        InputMode::Typed => {}
        InputMode::Hex => {
            let bytes = parse_hex(text).ok_or_else(|| fail(col, text, "hex digits"))?;
            let width = match col.physical {
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
            return Ok(one(bytes));
        }
        InputMode::Utf8 => {
            return match col.physical {
                PhysicalType::BYTE_ARRAY => Ok(one(text.as_bytes().to_vec())),
                PhysicalType::FIXED_LEN_BYTE_ARRAY => Ok(fixed(col, text.as_bytes().to_vec())),
                _ => Err(fail(col, text, "--string applies to binary columns only")),
            }
        }
        InputMode::RawInt => {
            let v: i128 = text
                .trim()
                .parse()
                .map_err(|_| fail(col, text, "an integer"))?;
            return match col.physical {
                PhysicalType::INT32 if (i32::MIN as i128..=u32::MAX as i128).contains(&v) => {
                    Ok(one((v as u32).to_le_bytes().to_vec()))
                }
                PhysicalType::INT64 if (i64::MIN as i128..=u64::MAX as i128).contains(&v) => {
                    Ok(one((v as u64).to_le_bytes().to_vec()))
                }
                PhysicalType::INT32 | PhysicalType::INT64 => Err(fail(
                    col,
                    text,
                    "an integer within the physical type's 32 or 64 bits",
                )),
                _ => Err(fail(
                    col,
                    text,
                    "--raw-int applies to INT32/INT64 columns only",
                )),
            };
        }
    }
    match col.kind {
        ValueKind::Boolean => unreachable!("handled above"),
        ValueKind::Int { bits, signed } => int(col, text, bits, signed),
        ValueKind::Float | ValueKind::Double | ValueKind::Float16 => {
            let f = parse_float(text).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a number such as 1.5, -0.0, 1e-05, NaN, inf or -inf",
                )
            })?;
            Ok(match col.kind {
                // The text means the nearest value of the column's width.
                ValueKind::Float => floats(
                    col,
                    text.trim().parse::<f32>().unwrap_or(f as f32) as f64,
                    opts,
                ),
                ValueKind::Float16 => floats(col, half::f16::from_f64(f).to_f64(), opts),
                _ => floats(col, f, opts),
            })
        }
        ValueKind::Date => {
            let days = parse_date(text.trim())
                .ok_or_else(|| fail(col, text, "a date YYYY-MM-DD, e.g. 2024-02-29"))?;
            Ok(match i32::try_from(days) {
                Ok(d) => one(d.to_le_bytes().to_vec()),
                Err(_) => Encoded::NeverStored("date outside the INT32 day range".into()),
            })
        }
        ValueKind::Time(unit) => {
            let t = parse_time(text.trim()).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a time of day HH:MM:SS[.fraction], e.g. 23:59:59.999",
                )
            })?;
            let Some(ticks) = t.to_unit(unit) else {
                return Ok(Encoded::NeverStored(format!(
                    "{text} is finer than the column's unit ({unit:?})"
                )));
            };
            Ok(if unit == Unit::Millis {
                one((ticks as i32).to_le_bytes().to_vec())
            } else {
                one((ticks as i64).to_le_bytes().to_vec())
            })
        }
        ValueKind::Timestamp { unit, utc } => {
            let ts = parse_timestamp(text.trim()).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a timestamp YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM], e.g. 2024-01-31T12:00:00.123456Z",
                )
            })?;
            if ts.offset_secs.is_some() && !utc {
                return Err(fail(
                    col,
                    text,
                    "a wall-clock timestamp without Z or offset (this column is not adjusted to UTC)",
                ));
            }
            let Some(ticks) = ts.nanos().to_unit(unit) else {
                return Ok(Encoded::NeverStored(format!(
                    "{text} is finer than the column's unit ({unit:?})"
                )));
            };
            Ok(match i64::try_from(ticks) {
                Ok(t) => one(t.to_le_bytes().to_vec()),
                Err(_) => Encoded::NeverStored("timestamp outside the INT64 range".into()),
            })
        }
        ValueKind::Int96 => {
            let ts = parse_timestamp(text.trim()).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a timestamp YYYY-MM-DDTHH:MM:SS[.fraction], e.g. 1970-01-01T00:00:00.000000000",
                )
            })?;
            let Some(ns) = ts.nanos().to_unit(Unit::Nanos) else {
                return Ok(Encoded::NeverStored("finer than nanoseconds".into()));
            };
            const DAY: i128 = 86_400_000_000_000;
            let days = ns.div_euclid(DAY);
            let nod = ns.rem_euclid(DAY) as i64;
            let Ok(julian) = i32::try_from(days + 2_440_588) else {
                return Ok(Encoded::NeverStored("outside the INT96 day range".into()));
            };
            let mut b = nod.to_le_bytes().to_vec();
            b.extend_from_slice(&julian.to_le_bytes());
            Ok(one(b))
        }
        ValueKind::Decimal { precision, scale } => decimal(col, text, precision, scale),
        ValueKind::String => Ok(match col.physical {
            PhysicalType::FIXED_LEN_BYTE_ARRAY => fixed(col, text.as_bytes().to_vec()),
            _ => one(text.as_bytes().to_vec()),
        }),
        ValueKind::Binary => {
            let bytes = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) => parse_hex(hex).ok_or_else(|| {
                    fail(
                        col,
                        text,
                        "hex after 0x (or use --string for the text's bytes)",
                    )
                })?,
                None => text.as_bytes().to_vec(),
            };
            Ok(match col.physical {
                PhysicalType::FIXED_LEN_BYTE_ARRAY => fixed(col, bytes),
                _ => one(bytes),
            })
        }
        ValueKind::Uuid => {
            let bytes = parse_uuid(text.trim()).ok_or_else(|| {
                fail(
                    col,
                    text,
                    "a UUID such as f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
                )
            })?;
            Ok(fixed(col, bytes))
        }
    }
}

fn fixed(col: &ColumnType, bytes: Vec<u8>) -> Encoded {
    if bytes.len() == col.type_length.max(0) as usize {
        one(bytes)
    } else {
        Encoded::NeverStored(format!(
            "the column stores exactly {} bytes, the value has {}",
            col.type_length,
            bytes.len()
        ))
    }
}

fn int(col: &ColumnType, text: &str, bits: u8, signed: bool) -> Result<Encoded, ValueError> {
    let v: i128 = text.trim().parse().map_err(|_| {
        fail(
            col,
            text,
            if signed {
                "an integer"
            } else {
                "an unsigned integer"
            },
        )
    })?;
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    if v < lo || v > hi {
        let kind = if signed { "INT" } else { "UINT" };
        return Ok(Encoded::NeverStored(format!(
            "{v} is outside the range of {kind}({bits}) [{lo}, {hi}]"
        )));
    }
    Ok(match col.physical {
        PhysicalType::INT32 => one((v as u32).to_le_bytes().to_vec()),
        _ => one((v as u64).to_le_bytes().to_vec()),
    })
}

fn decimal(
    col: &ColumnType,
    text: &str,
    precision: u32,
    scale: u32,
) -> Result<Encoded, ValueError> {
    let expected = || {
        fail(
            col,
            text,
            format!("a decimal number with at most {scale} fraction digits, e.g. 12.34"),
        )
    };
    let t = text.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(expected());
    }
    // Extra fraction digits are fine only if they are zeros.
    let frac_trimmed = if frac_part.len() > scale as usize {
        let (keep, extra) = frac_part.split_at(scale as usize);
        if extra.bytes().any(|b| b != b'0') {
            return Ok(Encoded::NeverStored(format!(
                "{text} has more fraction digits than the column's scale {scale}"
            )));
        }
        keep
    } else {
        frac_part
    };
    let mut unscaled: i128 = 0;
    let digits = int_part
        .bytes()
        .chain(frac_trimmed.bytes())
        .chain(std::iter::repeat_n(
            b'0',
            scale as usize - frac_trimmed.len(),
        ));
    for d in digits {
        unscaled = match unscaled
            .checked_mul(10)
            .and_then(|u| u.checked_add((d - b'0') as i128))
        {
            Some(u) => u,
            None => {
                return Ok(Encoded::NeverStored(format!(
                    "{text} has more digits than DECIMAL({precision},{scale}) holds"
                )))
            }
        };
    }
    if neg {
        unscaled = -unscaled;
    }
    if precision <= 38 && unscaled.unsigned_abs() >= 10u128.pow(precision) {
        return Ok(Encoded::NeverStored(format!(
            "{text} has more digits than DECIMAL({precision},{scale}) holds"
        )));
    }
    let be = unscaled.to_be_bytes();
    Ok(match col.physical {
        PhysicalType::INT32 => match i32::try_from(unscaled) {
            Ok(v) => one(v.to_le_bytes().to_vec()),
            Err(_) => Encoded::NeverStored("outside INT32".into()),
        },
        PhysicalType::INT64 => match i64::try_from(unscaled) {
            Ok(v) => one(v.to_le_bytes().to_vec()),
            Err(_) => Encoded::NeverStored("outside INT64".into()),
        },
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            match sign_extend(&be, col.type_length.max(0) as usize) {
                Some(b) => one(b),
                None => Encoded::NeverStored(format!(
                    "{text} does not fit the column's {} bytes",
                    col.type_length
                )),
            }
        }
        // Writers disagree on the width of BYTE_ARRAY decimals (minimal two's complement or
        // padded): probe every width from the minimal one to 16 bytes.
        _ => {
            let min = minimal_width(unscaled);
            Encoded::Candidates((min..=16).filter_map(|w| sign_extend(&be, w)).collect())
        }
    })
}

/// Bytes needed for `v` in big-endian two's complement (at least one).
fn minimal_width(v: i128) -> usize {
    let bits = if v < 0 {
        128 - (!v).leading_zeros() + 1
    } else {
        128 - v.leading_zeros() + 1
    };
    (bits as usize).div_ceil(8).max(1)
}

/// Big-endian two's complement of a 16-byte value at `width` bytes, if it fits.
fn sign_extend(be16: &[u8; 16], width: usize) -> Option<Vec<u8>> {
    let sign = if be16[0] & 0x80 != 0 { 0xff } else { 0x00 };
    if width >= 16 {
        let mut v = vec![sign; width - 16];
        v.extend_from_slice(be16);
        return Some(v);
    }
    let (drop, keep) = be16.split_at(16 - width);
    let fits =
        drop.iter().all(|b| *b == sign) && width > 0 && (keep[0] & 0x80 != 0) == (sign == 0xff);
    fits.then(|| keep.to_vec())
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

impl Nanos {
    fn to_unit(self, unit: Unit) -> Option<i128> {
        if self.sub_nano || self.ns % unit.nanos() != 0 {
            None
        } else {
            Some(self.ns / unit.nanos())
        }
    }
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

#[cfg(test)]
mod tests;
