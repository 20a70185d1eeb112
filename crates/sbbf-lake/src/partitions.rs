//! A probe of a Delta table's partition column, answered from the partition values its log
//! records. Delta writers keep partition columns out of the data files, so a file's Bloom
//! filters know nothing of them: a probe of the files would find no such column and the file
//! would read as holding none of the values. The log says which value every row of a file has
//! for the column: a file whose value equals a probed value may hold it in every row group,
//! and a file with another value (or null) holds it in none.
//!
//! Only values compared exactly decide: integers, dates and strings, read from the log's text
//! as the table's type reads it. Any other type (floats, decimals, timestamps, binary, booleans)
//! answers "maybe" for every file: unsure is never "absent".

use crate::{Format, Snapshot};
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;
use sbbf_parquet::format::column::{ColumnType, ValueKind};
use sbbf_parquet::read::answer::{Answer, FilterState, RowGroupAnswer};
use sbbf_parquet::source::object::FileProbe;
use sbbf_parquet::values::stored::Encoded;
use sbbf_parquet::values::text::{encode_text, EncodeOptions};
use sbbf_parquet::IoStats;
use std::collections::HashMap;
use std::sync::Arc;

/// A table's partition column as a probe answers it: its type as the files would hold it, and
/// each data file's value.
#[derive(Debug, Clone)]
pub struct PartitionColumn {
    /// The column's name in the table.
    pub name: String,
    /// The Parquet type its values would have in a file (`None`: a type compared inexactly
    /// here, so every file answers "maybe").
    pub column_type: Option<ColumnType>,
    /// The table's name for its type (`integer`, `string`, ...).
    pub data_type: String,
    /// Each data file's value as the log writes it (`None`: null), by the name results give
    /// the file.
    values: HashMap<String, Option<String>>,
}

impl PartitionColumn {
    /// The partition column `column` of `snap` (a Delta table's), with each file's value keyed
    /// by the names `names` gives the snapshot's files, in their order (the names
    /// [`crate::source_of`] gives them); `None` when `column` is no partition column.
    pub fn of<'a>(
        snap: &Snapshot,
        column: &str,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Option<PartitionColumn> {
        if snap.format != Format::Delta || !snap.partition_columns.iter().any(|c| c == column) {
            return None;
        }
        let data_type = snap
            .columns
            .iter()
            .find(|c| c.name == column)
            .and_then(|c| c.data_type.clone())
            .unwrap_or_default();
        let values = names
            .into_iter()
            .zip(&snap.files)
            .map(|(name, f)| {
                let v = f
                    .partition
                    .iter()
                    .find(|(k, _)| k == column)
                    .and_then(|(_, v)| v.clone());
                (name.to_string(), v)
            })
            .collect();
        Some(PartitionColumn {
            name: column.to_string(),
            column_type: column_type(column, &data_type),
            data_type,
            values,
        })
    }

    /// The file named `name`'s answers for `encoded` (the probed values, encoded for
    /// [`PartitionColumn::probe_type`]), for each row group its footer `metadata` lists; `io`
    /// is what reading the footer took.
    pub fn answer(
        &self,
        name: &str,
        metadata: &ParquetMetaData,
        io: IoStats,
        encoded: Arc<[Encoded]>,
    ) -> FileProbe {
        let value = self.values.get(name).cloned().flatten();
        // Delta writes an empty string as null: no row holds a probed value then.
        let value = value.filter(|v| !v.is_empty());
        let stored = match (&self.column_type, &value) {
            (Some(ty), Some(v)) => Some(encode_text(ty, v, EncodeOptions::default()).ok()),
            _ => None,
        };
        let answers: Vec<Answer> = encoded
            .iter()
            .map(|e| decide(e, value.is_some(), stored.as_ref()))
            .collect();
        let why = match &value {
            Some(v) => format!("the file's partition value of `{}` is {v:?}", self.name),
            None => format!("the file's partition value of `{}` is null", self.name),
        };
        let row_groups =
            RowGroupAnswer::for_every_row_group(metadata, FilterState::Partition(why), answers);
        FileProbe {
            column: self.probe_type(),
            encoded,
            answers: row_groups,
            io,
            other_readings: Vec::new(),
        }
    }

    /// The type the probed values are encoded for: the column's, or (a type not compared
    /// here) text, which every value is.
    pub fn probe_type(&self) -> ColumnType {
        self.column_type.clone().unwrap_or_else(|| ColumnType {
            path: self.name.clone(),
            physical: PhysicalType::BYTE_ARRAY,
            type_length: 0,
            kind: ValueKind::String,
            logical: Some("STRING".into()),
        })
    }
}

/// One probed value's answer for a file whose value is `stored` (`has_value` false: null).
/// `stored` is `None` when the type is not compared here, `Some(None)` when the log's text did
/// not read as the type: both "maybe".
fn decide(probed: &Encoded, has_value: bool, stored: Option<&Option<Encoded>>) -> Answer {
    match probed {
        Encoded::NeverStored(_) => return Answer::Absent,
        Encoded::AlwaysMaybe(_) => return Answer::Maybe,
        Encoded::Candidates(_) => {}
    }
    if !has_value {
        return Answer::Absent;
    }
    match (probed, stored) {
        (Encoded::Candidates(want), Some(Some(Encoded::Candidates(have)))) => {
            match want.iter().any(|w| have.contains(w)) {
                true => Answer::Maybe,
                false => Answer::Absent,
            }
        }
        // The file's value can never be stored in the type (out of range): it is no value
        // the column holds; unsure all the same.
        _ => Answer::Maybe,
    }
}

/// The Parquet type of a Delta partition column of type `data_type`, for the types whose
/// values are compared exactly: integers, dates and strings.
fn column_type(name: &str, data_type: &str) -> Option<ColumnType> {
    let int = |bits: u8, physical: PhysicalType| ColumnType {
        path: name.to_string(),
        physical,
        type_length: 0,
        kind: ValueKind::Int { bits, signed: true },
        logical: (bits < 32).then(|| format!("INT({bits},true)")),
    };
    Some(match data_type {
        "byte" => int(8, PhysicalType::INT32),
        "short" => int(16, PhysicalType::INT32),
        "integer" => int(32, PhysicalType::INT32),
        "long" => int(64, PhysicalType::INT64),
        "date" => ColumnType {
            path: name.to_string(),
            physical: PhysicalType::INT32,
            type_length: 0,
            kind: ValueKind::Date,
            logical: Some("DATE".into()),
        },
        "string" => ColumnType {
            path: name.to_string(),
            physical: PhysicalType::BYTE_ARRAY,
            type_length: 0,
            kind: ValueKind::String,
            logical: Some("STRING".into()),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(ty: &ColumnType, text: &str) -> Encoded {
        encode_text(ty, text, EncodeOptions::default()).unwrap()
    }

    #[test]
    fn a_value_equal_to_the_files_is_maybe_and_any_other_or_null_absent() {
        let ty = column_type("p", "integer").unwrap();
        let two = Some(enc(&ty, "2"));
        assert_eq!(decide(&enc(&ty, "2"), true, Some(&two)), Answer::Maybe);
        assert_eq!(decide(&enc(&ty, "3"), true, Some(&two)), Answer::Absent);
        assert_eq!(decide(&enc(&ty, "2"), false, None), Answer::Absent);
        // Out of the type's range: no row holds it.
        assert_eq!(
            decide(&enc(&ty, "99999999999"), true, Some(&two)),
            Answer::Absent
        );
    }

    #[test]
    fn what_is_not_compared_exactly_is_maybe() {
        assert!(column_type("p", "double").is_none());
        assert!(column_type("p", "timestamp").is_none());
        let ty = column_type("p", "date").unwrap();
        // The log's text does not read as a date: unsure.
        assert_eq!(
            decide(&enc(&ty, "2024-01-02"), true, Some(&None)),
            Answer::Maybe
        );
        // A type not compared here.
        assert_eq!(decide(&enc(&ty, "2024-01-02"), true, None), Answer::Maybe);
        let s = column_type("p", "string").unwrap();
        let a = Some(enc(&s, "a"));
        assert_eq!(decide(&enc(&s, "a"), true, Some(&a)), Answer::Maybe);
        assert_eq!(decide(&enc(&s, "A"), true, Some(&a)), Answer::Absent);
    }
}
