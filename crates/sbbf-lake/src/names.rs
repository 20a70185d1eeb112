//! How a table's data files name its columns: a Delta column's physical name under column
//! mapping, an Iceberg column found by field id where files were written under another name.
//! Kept apart from the snapshot ([`TableNames`]) so an index built from one version can name
//! a later version's columns without reading that version's snapshot.

use crate::LakeError;
use crate::{Format, LakeColumn, PathPair};
use sbbf_parquet::Error;
use std::collections::HashMap;

/// What finds a table's columns in its data files at one version: its top-level columns (with
/// their physical names, field ids, earlier names) and, under Delta column mapping, the
/// physical paths of the leaves inside nested columns. Serializable (JSON), so an index can
/// keep it beside the version it was built from.
///
/// ```
/// use sbbf_lake::{Format, LakeColumn, TableNames};
/// let mut names = TableNames::default();
/// names.format = Format::Delta;
/// names.columns.push(LakeColumn {
///     name: "id".into(),
///     physical: Some("col-1f2e".into()),
///     ..Default::default()
/// });
/// let kept = names.to_json();
/// let back = TableNames::from_json(&kept).unwrap();
/// assert_eq!(back.file_column("t/", "id").unwrap(), "col-1f2e");
/// assert_eq!(back.file_column("t/", "other").unwrap(), "other");
/// ```
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct TableNames {
    /// The table's format.
    pub format: Format,
    /// The current schema's top-level columns.
    pub columns: Vec<LakeColumn>,
    /// Delta under column mapping: per nested column, its leaves as (path as the table names
    /// it, path as files name it), in segments (`*`: any segment).
    #[serde(default)]
    pub(crate) inner_physical: HashMap<String, Vec<PathPair>>,
    /// The partition columns (a Delta table's: its files do not hold them), when recorded:
    /// names kept by an index built before they were are `None`, and cannot tell a partition
    /// column from a column no file has.
    #[serde(default)]
    pub partition_columns: Option<Vec<String>>,
}

impl TableNames {
    /// The column path data files hold for the table's column `column`, as
    /// [`crate::Snapshot::file_column`] says it; `table` names the table in errors.
    pub fn file_column(&self, table: &str, column: &str) -> Result<String, Error> {
        file_column(
            self.format,
            table,
            &self.columns,
            &self.inner_physical,
            column,
        )
    }

    /// The table's name of the column path `file_path` data files hold (the reverse of
    /// [`TableNames::file_column`]): under Delta column mapping the top-level column's
    /// logical name and each struct field's below it; `None` where the files' path is the
    /// table's own, or names nothing the table has.
    ///
    /// ```
    /// use sbbf_lake::{Format, LakeColumn, TableNames};
    /// let mut names = TableNames::default();
    /// names.format = Format::Delta;
    /// names.columns.push(LakeColumn {
    ///     name: "User Name".into(),
    ///     physical: Some("col-1f2e".into()),
    ///     ..Default::default()
    /// });
    /// assert_eq!(names.table_column("col-1f2e").as_deref(), Some("User Name"));
    /// assert_eq!(names.table_column("other"), None);
    /// ```
    pub fn table_column(&self, file_path: &str) -> Option<String> {
        table_column(&self.columns, &self.inner_physical, file_path)
    }

    /// Why a data file without the column `column` may still hold values of it, when that is
    /// so (its top-level column's [`LakeColumn::missing_not_null`]): then the file's lack of
    /// it proves nothing, and a probe answers "unknown" there, never "absent".
    ///
    /// ```
    /// use sbbf_lake::{LakeColumn, TableNames};
    /// let mut names = TableNames::default();
    /// names.columns.push(LakeColumn {
    ///     name: "p".into(),
    ///     missing_not_null: true,
    ///     ..Default::default()
    /// });
    /// assert!(names.lacking_holds_values("p").is_some());
    /// assert!(names.lacking_holds_values("q").is_none());
    /// ```
    pub fn lacking_holds_values(&self, column: &str) -> Option<String> {
        let (top, _) = split_top(column);
        let c = self.columns.iter().find(|c| c.name == top)?;
        c.missing_not_null.then(|| {
            format!(
                "the file does not hold `{top}`, and the table gives its rows a value of it all \
                 the same (an identity partition's, or the column's default): its filters \
                 cannot tell"
            )
        })
    }

    /// [`crate::Snapshot::index_column`] by these names (partition columns as recorded:
    /// names that do not record them answer `None` for every column).
    pub fn index_column(&self, table: &str, column: &str) -> Option<String> {
        index_column(self, table, self.partition_columns.as_deref()?, column)
    }

    /// Whether `column` is a partition column whose values are the log's, not the files'
    /// (`None`: these names do not say).
    pub fn is_partition_column(&self, column: &str) -> Option<bool> {
        match self.format {
            Format::Iceberg => Some(false),
            Format::Delta => Some(self.partition_columns.as_ref()?.iter().any(|c| c == column)),
        }
    }

    /// As JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// From [`TableNames::to_json`]'s JSON (`None`: not such JSON).
    pub fn from_json(json: &str) -> Option<TableNames> {
        serde_json::from_str(json).ok()
    }
}

pub(super) fn index_column(
    names: &TableNames,
    table: &str,
    partition_columns: &[String],
    column: &str,
) -> Option<String> {
    let (top, _) = split_top(column);
    if partition_columns.contains(&top) {
        return None;
    }
    let c = names.columns.iter().find(|c| c.name == top)?;
    if c.missing_not_null || !c.earlier_names.is_empty() || c.inner_renamed {
        return None;
    }
    let path = names.file_column(table, column).ok()?;
    // A path found by field id in each file: the index knows columns by name only.
    (!path.starts_with(sbbf_parquet::read::file::BY_FIELD_ID)).then_some(path)
}

pub(super) fn file_column(
    format: Format,
    table: &str,
    columns: &[LakeColumn],
    inner_physical: &HashMap<String, Vec<PathPair>>,
    column: &str,
) -> Result<String, Error> {
    let (top, rest) = split_top(column);
    let top = top.as_str();
    let Some(c) = columns.iter().find(|c| c.name == top) else {
        return Ok(column.to_string());
    };
    if let (false, Some(id)) = (c.earlier_names.is_empty(), c.field_id) {
        return Ok(sbbf_parquet::read::file::by_field_id(id, rest));
    }
    if let (true, Some(rest)) = (c.inner_renamed, rest) {
        if let Some((_, ids)) = c.inner.iter().find(|(p, _)| p == rest) {
            return Ok(sbbf_parquet::read::file::by_field_ids(ids));
        }
        return Err(LakeError::Unsupported {
            format: format.name(),
            table: table.to_string(),
            feature: format!(
                "a field inside column `{top}`, whose inner fields were renamed or replaced \
                 since some files were written"
            ),
        }
        .into());
    }
    match (&c.physical, rest) {
        (None, _) => Ok(column.to_string()),
        (Some(p), None) => Ok(p.clone()),
        (Some(p), Some(rest)) => match physical_inner(inner_physical, top, rest) {
            Some(inner) => Ok(format!("{p}.{inner}")),
            None => {
                // The leaves to choose from, by the table's names (`*`: a list's or map's own
                // level, as the files write it).
                let name = sbbf_parquet::format::column::escape_field(top);
                let leaves: Vec<String> = inner_physical
                    .get(top)
                    .into_iter()
                    .flatten()
                    .map(|(logical, _)| {
                        let below: Vec<String> = logical
                            .iter()
                            .map(|s| sbbf_parquet::format::column::escape_field(s))
                            .collect();
                        format!("`{name}.{}`", below.join("."))
                    })
                    .collect();
                Err(LakeError::NoSuchColumn {
                    format: format.name(),
                    table: table.to_string(),
                    reason: format!(
                        "`{column}` is no leaf of the column `{top}`; its leaves: {}",
                        leaves.join(", ")
                    ),
                }
                .into())
            }
        },
    }
}

/// See [`TableNames::table_column`].
pub(super) fn table_column(
    columns: &[LakeColumn],
    inner_physical: &HashMap<String, Vec<PathPair>>,
    file_path: &str,
) -> Option<String> {
    let (top, rest) = split_top(file_path);
    let c = columns
        .iter()
        .find(|c| c.physical.as_deref() == Some(top.as_str()))?;
    let name = sbbf_parquet::format::column::escape_field(&c.name);
    let Some(rest) = rest else {
        return (name != file_path).then_some(name);
    };
    let pairs = inner_physical.get(&c.name)?;
    let below = translate(pairs.iter().map(|(l, p)| (p, l)), &path_segments(rest))?;
    Some(format!("{name}.{below}"))
}

/// The first field name of the column path `column` (its escapes undone: `a\.b` is the
/// column named `a.b`), and the path below it as written.
pub(crate) fn split_top(column: &str) -> (String, Option<&str>) {
    let mut escaped = false;
    let mut end = None;
    for (i, ch) in column.char_indices() {
        match ch {
            '\\' if !escaped => escaped = true,
            '.' if !escaped => {
                end = Some(i);
                break;
            }
            _ => escaped = false,
        }
    }
    let (first, rest) = match end {
        Some(i) => (&column[..i], Some(&column[i + 1..])),
        None => (column, None),
    };
    let top = sbbf_parquet::format::column::split_path(first)
        .into_iter()
        .next()
        .unwrap_or_default();
    (top, rest)
}

/// The path below Delta column `top` that files hold for the table's path `rest` below it
/// (column mapping: each struct field by its physical name; a list's and a map's own levels
/// as asked).
fn physical_inner(
    inner_physical: &HashMap<String, Vec<PathPair>>,
    top: &str,
    rest: &str,
) -> Option<String> {
    let pairs = inner_physical.get(top)?;
    translate(pairs.iter().map(|(l, p)| (l, p)), &path_segments(rest))
}

/// `held` (a path's segments) translated by the first pair whose `from` pattern fits it into
/// that pair's `to` pattern (`*`: any segment, kept as it is), escaped as a column path.
fn translate<'a>(
    mut pairs: impl Iterator<Item = (&'a Vec<String>, &'a Vec<String>)>,
    held: &[String],
) -> Option<String> {
    let fits = |from: &Vec<String>| {
        from.len() == held.len() && from.iter().zip(held).all(|(f, h)| f == "*" || f == h)
    };
    let (_, to) = pairs.find(|(from, _)| fits(from))?;
    let segments: Vec<String> = to
        .iter()
        .zip(held)
        .map(|(t, h)| match t.as_str() {
            "*" => sbbf_parquet::format::column::escape_field(h),
            t => sbbf_parquet::format::column::escape_field(t),
        })
        .collect();
    Some(segments.join("."))
}

/// The names of a column path (`a.b\\.c` is `a` then `b.c`: a `.` in a name is written `\\.`,
/// a `\\` as `\\\\`).
fn path_segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut name = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.push(chars.next().unwrap_or('\\')),
            '.' => out.push(std::mem::take(&mut name)),
            c => name.push(c),
        }
    }
    out.push(name);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_whose_name_holds_a_dot_is_found_by_its_escaped_path() {
        let mut names = TableNames {
            format: Format::Delta,
            ..Default::default()
        };
        for (name, physical) in [("a.b", "col-1"), ("User Name", "col-2"), ("a", "col-3")] {
            names.columns.push(LakeColumn {
                name: name.into(),
                physical: Some(physical.into()),
                ..Default::default()
            });
        }
        assert_eq!(names.file_column("t", r"a\.b").unwrap(), "col-1");
        assert_eq!(names.file_column("t", "User Name").unwrap(), "col-2");
        assert_eq!(names.file_column("t", "a").unwrap(), "col-3");
        assert_eq!(split_top(r"a\.b.c"), ("a.b".to_string(), Some("c")));
        assert_eq!(split_top(r"a\\.c"), (r"a\".to_string(), Some("c")));
        assert_eq!(split_top("x"), ("x".to_string(), None));
    }
}
