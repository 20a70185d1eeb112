//! What a snapshot records of the values of one column in one data file: Delta's `stats`
//! (`minValues`/`maxValues`, keyed by physical name) and Iceberg's manifest bounds (keyed by
//! field id, in Iceberg's single-value binary form). Only what rules a value out exactly is
//! kept: integers, dates and strings. Timestamps are left out (Delta writes them truncated to
//! milliseconds, so a maximum may lie below the values it bounds), floats (NaN), decimals,
//! and a string maximum a writer may have cut to a prefix.

use crate::{Bounds, Format, LakeColumn};
use sbbf_parquet::values::stored::Literal;

/// The kind of value a bound holds, from the column's type as the format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Date,
    Text,
}

fn kind(format: Format, data_type: &str) -> Option<Kind> {
    match (format, data_type) {
        (Format::Delta, "byte" | "short" | "integer" | "long") => Some(Kind::Int),
        (Format::Iceberg, "int" | "long") => Some(Kind::Int),
        (_, "date") => Some(Kind::Date),
        (_, "string") => Some(Kind::Text),
        _ => None,
    }
}

/// Whether `value` may be among the values `b` bounds: `false` only when it lies below the
/// minimum or above the maximum, compared as values of one kind (a literal of another kind
/// is never ruled out).
pub(super) fn may_hold(b: &Bounds, value: &Literal) -> bool {
    let below = b.min.as_ref().is_some_and(|m| less(value, m));
    let above = b.max.as_ref().is_some_and(|m| less(m, value));
    !(below || above)
}

fn less(a: &Literal, b: &Literal) -> bool {
    match (a, b) {
        (Literal::Int(x), Literal::Int(y)) => x < y,
        (Literal::Date32(x), Literal::Date32(y)) => x < y,
        // Strings compare by their UTF-8 bytes here; a writer that orders them by UTF-16
        // code units (Java's `String`) agrees only below U+D800: past it, a maximum it
        // chose could lie below a value of the file in this order. Such text proves nothing.
        (Literal::Utf8(x), Literal::Utf8(y)) => {
            let plain = |s: &str| s.chars().all(|c| u32::from(c) < 0xD800);
            plain(x) && plain(y) && x < y
        }
        _ => false,
    }
}

/// The bounds in a Delta `add` action's `stats` JSON for the table's top-level `columns`
/// (`minValues`/`maxValues` are keyed by physical name under column mapping). A string
/// maximum of `prefix` characters or more may be a cut prefix (Delta writers keep 32 by
/// default, `delta.dataSkippingStringPrefixLength`) and is not kept. Text that does not
/// parse gives no bounds: no file is ruled out by it.
pub(super) fn delta(stats: &str, columns: &[LakeColumn], prefix: usize) -> Vec<Bounds> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(stats) else {
        return Vec::new();
    };
    let (Some(mins), maxs) = (v.get("minValues"), v.get("maxValues")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in columns {
        let Some(k) = c.data_type.as_deref().and_then(|t| kind(Format::Delta, t)) else {
            continue;
        };
        let key = c.physical.as_deref().unwrap_or(&c.name);
        let read = |v: Option<&serde_json::Value>, is_max: bool| -> Option<Literal> {
            let v = v?.get(key)?;
            match k {
                Kind::Int => v.as_i64().map(|n| Literal::Int(n.into())),
                Kind::Date => date(v.as_str()?),
                Kind::Text => {
                    let s = v.as_str()?;
                    (!is_max || s.chars().count() < prefix).then(|| Literal::Utf8(s.to_string()))
                }
            }
        };
        out.extend(bounds_of(c, read(Some(mins), false), read(maxs, true)));
    }
    out
}

/// `c`'s bounds, when either is known.
fn bounds_of(c: &LakeColumn, min: Option<Literal>, max: Option<Literal>) -> Option<Bounds> {
    (min.is_some() || max.is_some()).then(|| Bounds {
        column: c.name.clone(),
        min,
        max,
    })
}

fn date(text: &str) -> Option<Literal> {
    let d = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
    let days = i32::try_from((d - epoch).num_days()).ok()?;
    Some(Literal::Date32(days))
}

/// The bounds in an Iceberg manifest entry's `lower_bounds`/`upper_bounds` (field id ->
/// single-value binary) for the table's top-level `columns`, matched by field id. Iceberg
/// requires an upper bound cut to a prefix to be raised so it still bounds the values, so a
/// string bound is kept as it is.
pub(super) fn iceberg(
    lower: &[(i32, Vec<u8>)],
    upper: &[(i32, Vec<u8>)],
    columns: &[LakeColumn],
) -> Vec<Bounds> {
    let mut out = Vec::new();
    for c in columns {
        let (Some(id), Some(k)) = (
            c.field_id,
            c.data_type
                .as_deref()
                .and_then(|t| kind(Format::Iceberg, t)),
        ) else {
            continue;
        };
        let find = |m: &[(i32, Vec<u8>)]| -> Option<Literal> {
            let (_, bytes) = m.iter().find(|(f, _)| i64::from(*f) == id)?;
            single_value(k, bytes)
        };
        out.extend(bounds_of(c, find(lower), find(upper)));
    }
    out
}

/// Iceberg's single-value binary form: `int` and `date` 4 bytes little-endian, `long` 8
/// (an `int` promoted to `long` keeps 4-byte bounds in older files), `string` UTF-8.
fn single_value(k: Kind, bytes: &[u8]) -> Option<Literal> {
    match k {
        Kind::Int => match bytes.len() {
            4 => Some(Literal::Int(
                i32::from_le_bytes(bytes.try_into().ok()?).into(),
            )),
            8 => Some(Literal::Int(
                i64::from_le_bytes(bytes.try_into().ok()?).into(),
            )),
            _ => None,
        },
        Kind::Date => Some(Literal::Date32(i32::from_le_bytes(bytes.try_into().ok()?))),
        Kind::Text => std::str::from_utf8(bytes)
            .ok()
            .map(|s| Literal::Utf8(s.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, t: &str, physical: Option<&str>, id: Option<i64>) -> LakeColumn {
        LakeColumn {
            name: name.into(),
            physical: physical.map(str::to_string),
            field_id: id,
            data_type: Some(t.into()),
            ..Default::default()
        }
    }

    #[test]
    fn delta_stats_bound_what_they_can() {
        let cols = [
            col("id", "long", None, None),
            col("s", "string", Some("col-1"), None),
            col("d", "date", None, None),
            col("ts", "timestamp", None, None),
        ];
        let stats = r#"{"numRecords":3,"minValues":{"id":5,"col-1":"a","d":"2024-01-31","ts":"2024-01-01T00:00:00.000Z"},
            "maxValues":{"id":9,"col-1":"abcdefghijklmnopqrstuvwxyz0123456789","d":"2024-02-01"}}"#;
        let b = delta(stats, &cols, 32);
        assert_eq!(b.len(), 3, "{b:?}");
        assert!(!may_hold(&b[0], &Literal::Int(4)));
        assert!(may_hold(&b[0], &Literal::Int(9)));
        assert!(!may_hold(&b[0], &Literal::Int(10)));
        // A cut maximum bounds nothing; the minimum still does.
        assert!(may_hold(&b[1], &Literal::Utf8("zzz".into())));
        assert!(!may_hold(&b[1], &Literal::Utf8("A".into())));
        assert_eq!(b[2].min, Some(Literal::Date32(19753)));
        // A literal of another kind is never ruled out.
        assert!(may_hold(&b[0], &Literal::Utf8("x".into())));
        // Text past U+D800 orders differently by UTF-16 units: never ruled out by a bound.
        let t = Bounds {
            column: "s".into(),
            min: None,
            max: Some(Literal::Utf8("\u{FFFD}".into())),
        };
        assert!(may_hold(&t, &Literal::Utf8("\u{1F600}".into())));
        let t = Bounds {
            max: Some(Literal::Utf8("b".into())),
            ..t
        };
        assert!(!may_hold(&t, &Literal::Utf8("c".into())));
        assert!(delta("not json", &cols, 32).is_empty());
    }

    #[test]
    fn iceberg_bounds_by_field_id() {
        let cols = [
            col("id", "long", None, Some(1)),
            col("name", "string", None, Some(2)),
        ];
        let lower = [(1, 5i64.to_le_bytes().to_vec()), (2, b"b".to_vec())];
        let upper = [(1, 7i32.to_le_bytes().to_vec()), (2, vec![0xff])];
        let b = iceberg(&lower, &upper, &cols);
        assert_eq!(b[0].min, Some(Literal::Int(5)));
        assert_eq!(b[0].max, Some(Literal::Int(7)));
        // Bytes that are no UTF-8 bound nothing.
        assert_eq!(b[1].max, None);
        assert!(!may_hold(&b[1], &Literal::Utf8("a".into())));
    }
}
