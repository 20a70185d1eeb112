//! What a column stores: its physical type and the logical type that says how to read text.

use parquet::basic::{ConvertedType, LogicalType, TimeUnit, Type as PhysicalType};
use parquet::schema::types::ColumnDescriptor;

/// Resolution of TIME and TIMESTAMP values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds.
    Millis,
    /// Microseconds.
    Micros,
    /// Nanoseconds.
    Nanos,
}

impl Unit {
    /// Nanoseconds per tick.
    pub fn nanos(self) -> i128 {
        match self {
            Unit::Millis => 1_000_000,
            Unit::Micros => 1_000,
            Unit::Nanos => 1,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Unit::Millis => "MILLIS",
            Unit::Micros => "MICROS",
            Unit::Nanos => "NANOS",
        }
    }
    fn from_parquet(u: &TimeUnit) -> Unit {
        match u {
            TimeUnit::MILLIS => Unit::Millis,
            TimeUnit::MICROS => Unit::Micros,
            _ => Unit::Nanos,
        }
    }
}

/// How values of a column are written as text and as hashed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// BOOLEAN: Parquet defines no Bloom filter for it.
    Boolean,
    /// An integer of `bits` (8, 16, 32, 64) stored as INT32 or INT64.
    Int {
        /// Declared width.
        bits: u8,
        /// Signedness.
        signed: bool,
    },
    /// Days since 1970-01-01 in INT32.
    Date,
    /// Time of day.
    Time(Unit),
    /// Instant (`utc`) or wall-clock time.
    Timestamp {
        /// Tick size.
        unit: Unit,
        /// isAdjustedToUTC.
        utc: bool,
    },
    /// Fixed-point decimal.
    Decimal {
        /// Total digits.
        precision: u32,
        /// Fraction digits.
        scale: u32,
    },
    /// IEEE 754 single.
    Float,
    /// IEEE 754 double.
    Double,
    /// IEEE 754 half in FLBA(2), little-endian.
    Float16,
    /// UTF-8 text (STRING, ENUM, JSON).
    String,
    /// Opaque bytes (BYTE_ARRAY or FLBA without a text annotation; BSON; INTERVAL).
    Binary,
    /// 16-byte UUID.
    Uuid,
    /// Legacy INT96 timestamp: nanoseconds of day, then Julian day.
    Int96,
}

/// A field name as written in a dotted path: a literal `.` becomes `\.` and a literal `\`
/// becomes `\\` (the convention of arrow-rs' `parquet-show-bloom-filter`), so that a top-level
/// column named `a.b` (`a\.b`) and field `b` of a struct `a` (`a.b`) have different paths.
pub fn escape_field(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for ch in name.chars() {
        if ch == '.' || ch == '\\' {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// The field names of a dotted path written with [`escape_field`]'s escapes: `a\.b.c` is
/// `["a.b", "c"]`. A backslash before any other character (or at the end) stands for itself.
pub fn split_path(path: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut field = String::new();
    let mut chars = path.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, chars.peek()) {
            ('\\', Some(&next)) if next == '.' || next == '\\' => {
                field.push(next);
                chars.next();
            }
            ('.', _) => parts.push(std::mem::take(&mut field)),
            _ => field.push(ch),
        }
    }
    parts.push(field);
    parts
}

/// A leaf column as far as probing cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnType {
    /// Dotted path (`a.b.c`): `path_in_schema` joined with `.`, each field name escaped by
    /// [`escape_field`] (a field named `a.b` is `a\.b`), so every leaf has its own path.
    pub path: String,
    /// Physical type.
    pub physical: PhysicalType,
    /// FLBA length (0 otherwise).
    pub type_length: i32,
    /// How to read values.
    pub kind: ValueKind,
    /// The logical type in compact text (`INT(8,true)`, `DECIMAL(9,2)`, ...), if annotated.
    pub logical: Option<String>,
}

impl ColumnType {
    /// Reads the type of a leaf from the parquet crate's schema.
    pub fn from_descriptor(d: &ColumnDescriptor) -> ColumnType {
        let physical = d.physical_type();
        let logical = d.logical_type_ref();
        let (kind, text) = match logical {
            Some(l) => from_logical(l, physical),
            None => from_converted(
                d.converted_type(),
                physical,
                d.type_precision(),
                d.type_scale(),
            ),
        };
        ColumnType {
            path: d
                .path()
                .parts()
                .iter()
                .map(|p| escape_field(p))
                .collect::<Vec<_>>()
                .join("."),
            physical,
            type_length: d.type_length(),
            kind,
            logical: text,
        }
    }

    /// The physical type's name as Parquet spells it.
    pub fn physical_name(&self) -> &'static str {
        physical_name(self.physical)
    }
}

/// `INT32`, `BYTE_ARRAY`, ...
pub fn physical_name(t: PhysicalType) -> &'static str {
    match t {
        PhysicalType::BOOLEAN => "BOOLEAN",
        PhysicalType::INT32 => "INT32",
        PhysicalType::INT64 => "INT64",
        PhysicalType::INT96 => "INT96",
        PhysicalType::FLOAT => "FLOAT",
        PhysicalType::DOUBLE => "DOUBLE",
        PhysicalType::BYTE_ARRAY => "BYTE_ARRAY",
        PhysicalType::FIXED_LEN_BYTE_ARRAY => "FIXED_LEN_BYTE_ARRAY",
    }
}

fn default_kind(physical: PhysicalType) -> ValueKind {
    match physical {
        PhysicalType::BOOLEAN => ValueKind::Boolean,
        PhysicalType::INT32 => ValueKind::Int {
            bits: 32,
            signed: true,
        },
        PhysicalType::INT64 => ValueKind::Int {
            bits: 64,
            signed: true,
        },
        PhysicalType::INT96 => ValueKind::Int96,
        PhysicalType::FLOAT => ValueKind::Float,
        PhysicalType::DOUBLE => ValueKind::Double,
        PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY => ValueKind::Binary,
    }
}

fn from_logical(l: &LogicalType, physical: PhysicalType) -> (ValueKind, Option<String>) {
    use LogicalType as L;
    let (kind, text) = match l {
        L::String => (ValueKind::String, "STRING".to_string()),
        L::Enum => (ValueKind::String, "ENUM".to_string()),
        L::Json => (ValueKind::String, "JSON".to_string()),
        L::Bson => (ValueKind::Binary, "BSON".to_string()),
        L::Uuid => (ValueKind::Uuid, "UUID".to_string()),
        L::Float16 => (ValueKind::Float16, "FLOAT16".to_string()),
        L::Date => (ValueKind::Date, "DATE".to_string()),
        L::Decimal(d) => (
            ValueKind::Decimal {
                precision: d.precision.max(0) as u32,
                scale: d.scale.max(0) as u32,
            },
            format!("DECIMAL({},{})", d.precision, d.scale),
        ),
        L::Integer(i) => (
            ValueKind::Int {
                bits: i.bit_width as u8,
                signed: i.is_signed,
            },
            format!("INT({},{})", i.bit_width, i.is_signed),
        ),
        L::Time(t) => {
            let unit = Unit::from_parquet(&t.unit);
            (
                ValueKind::Time(unit),
                format!("TIME({},{})", unit.name(), t.is_adjusted_to_u_t_c),
            )
        }
        L::Timestamp(t) => {
            let unit = Unit::from_parquet(&t.unit);
            (
                ValueKind::Timestamp {
                    unit,
                    utc: t.is_adjusted_to_u_t_c,
                },
                format!("TIMESTAMP({},{})", unit.name(), t.is_adjusted_to_u_t_c),
            )
        }
        other => (default_kind(physical), format!("{other:?}").to_uppercase()),
    };
    (sanitize(kind, physical), Some(text))
}

fn from_converted(
    c: ConvertedType,
    physical: PhysicalType,
    precision: i32,
    scale: i32,
) -> (ValueKind, Option<String>) {
    use ConvertedType as C;
    let int = |bits: u8, signed: bool| {
        (
            ValueKind::Int { bits, signed },
            Some(format!("INT({bits},{signed})")),
        )
    };
    let (kind, text) = match c {
        C::UTF8 => (ValueKind::String, Some("STRING".into())),
        C::ENUM => (ValueKind::String, Some("ENUM".into())),
        C::JSON => (ValueKind::String, Some("JSON".into())),
        C::BSON => (ValueKind::Binary, Some("BSON".into())),
        C::DATE => (ValueKind::Date, Some("DATE".into())),
        C::DECIMAL => (
            ValueKind::Decimal {
                precision: precision.max(0) as u32,
                scale: scale.max(0) as u32,
            },
            Some(format!("DECIMAL({precision},{scale})")),
        ),
        C::TIME_MILLIS => (
            ValueKind::Time(Unit::Millis),
            Some("TIME(MILLIS,true)".into()),
        ),
        C::TIME_MICROS => (
            ValueKind::Time(Unit::Micros),
            Some("TIME(MICROS,true)".into()),
        ),
        C::TIMESTAMP_MILLIS => (
            ValueKind::Timestamp {
                unit: Unit::Millis,
                utc: true,
            },
            Some("TIMESTAMP(MILLIS,true)".into()),
        ),
        C::TIMESTAMP_MICROS => (
            ValueKind::Timestamp {
                unit: Unit::Micros,
                utc: true,
            },
            Some("TIMESTAMP(MICROS,true)".into()),
        ),
        C::INT_8 => int(8, true),
        C::INT_16 => int(16, true),
        C::INT_32 => int(32, true),
        C::INT_64 => int(64, true),
        C::UINT_8 => int(8, false),
        C::UINT_16 => int(16, false),
        C::UINT_32 => int(32, false),
        C::UINT_64 => int(64, false),
        C::INTERVAL => (ValueKind::Binary, Some("INTERVAL".into())),
        _ => (default_kind(physical), None),
    };
    (sanitize(kind, physical), text)
}

/// An annotation that does not fit the physical type (a writer bug or a hostile file) is
/// ignored: values are then read as the physical type says.
fn sanitize(kind: ValueKind, physical: PhysicalType) -> ValueKind {
    use PhysicalType as P;
    let fits = match kind {
        ValueKind::Int { bits, .. } => {
            matches!(
                (bits, physical),
                (8 | 16 | 32, P::INT32) | (64, P::INT64) | (8 | 16 | 32, P::INT64)
            )
        }
        ValueKind::Date => physical == P::INT32,
        ValueKind::Time(Unit::Millis) => physical == P::INT32,
        ValueKind::Time(_) | ValueKind::Timestamp { .. } => physical == P::INT64,
        ValueKind::Decimal { .. } => matches!(
            physical,
            P::INT32 | P::INT64 | P::BYTE_ARRAY | P::FIXED_LEN_BYTE_ARRAY
        ),
        ValueKind::String | ValueKind::Binary => {
            matches!(physical, P::BYTE_ARRAY | P::FIXED_LEN_BYTE_ARRAY)
        }
        ValueKind::Uuid | ValueKind::Float16 => physical == P::FIXED_LEN_BYTE_ARRAY,
        _ => true,
    };
    if fits {
        kind
    } else {
        default_kind(physical)
    }
}

#[cfg(test)]
mod tests {
    use super::{escape_field, split_path};

    #[test]
    fn paths_escape_and_split_back() {
        for parts in [
            vec!["a", "b"],
            vec!["a.b"],
            vec!["a\\", "b"],
            vec!["a\\.b", "c.", ""],
        ] {
            let path: Vec<String> = parts.iter().map(|p| escape_field(p)).collect();
            assert_eq!(split_path(&path.join(".")), parts, "{path:?}");
        }
        assert_eq!(escape_field("a.b"), "a\\.b");
        // A backslash before anything else stands for itself.
        assert_eq!(split_path("a\\b.c"), ["a\\b", "c"]);
    }
}
