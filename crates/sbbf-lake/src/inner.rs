//! The fields inside a lake table's nested columns, as its data files name them and as the
//! table does. A struct field renamed after files were written (Iceberg: same field id,
//! another name) keeps its old name in those files; under Delta column mapping every struct
//! field has a physical name of its own. A reader that matches inner fields by name reads
//! such fields as null (or, where a name was reused, as another field), so a file's nested
//! column is relabelled here to the table's names before anything reads it by name.
//!
//! [`LakeColumn::relabel`] gives, for a file's field, the field as the table names what it
//! holds and the [`Relabel`] that turns the file's arrays into arrays of that field: the
//! same buffers under other names, struct fields the table no longer has left out.

use crate::LakeColumn;
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, LargeListArray, ListArray, MapArray, StructArray,
};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields};
use std::collections::HashMap;
use std::sync::Arc;

/// A struct field somewhere inside a column (at any depth), with its name in the table's
/// current schema and what finds it in a data file.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct InnerName {
    /// Its field id (Iceberg; Delta column mapping), matched where a file's fields carry ids.
    pub id: Option<i64>,
    /// Its path below the column as files name it (Delta column mapping: each struct field
    /// by its physical name, a list's element as `element`, a map's key and value as `key`
    /// and `value`); empty when files are matched by id only (Iceberg).
    pub physical: Vec<String>,
    /// Its name in the table's current schema.
    pub name: String,
}

/// How a data file's array of one nested column becomes the table's: the field the table
/// reads ([`Relabel::field`]) and how each level of the file's array maps onto it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Relabel {
    field: FieldRef,
    shape: Shape,
}

/// One level of a relabelled type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Shape {
    /// Nothing below changes.
    Same,
    /// A struct: its fields as the table names them, each taken from the file's child at
    /// the index given (children the table lacks are left out).
    Struct(Fields, Vec<(usize, Shape)>),
    List(FieldRef, Box<Shape>),
    LargeList(FieldRef, Box<Shape>),
    FixedSizeList(FieldRef, i32, Box<Shape>),
    Map(FieldRef, bool, Box<Shape>),
    /// A struct the file holds none of the table's current fields of: read as the table's,
    /// every field null (the struct's own nulls kept).
    Nulls(Fields),
}

/// The deepest nesting relabelled: a deeper type (hostile input) is refused.
const MAX_DEPTH: usize = 64;

impl LakeColumn {
    /// `file` (the field a data file holds this column in) with the fields inside it named
    /// as the table names them: each struct field matched by field id where the file's
    /// fields carry ids and the table knows them, else by its physical path (Delta column
    /// mapping); one the table does not have (dropped since) is left out. `None` when no
    /// field inside needs another name, or the column is no nested one.
    ///
    /// ```
    /// use arrow_schema::{DataType, Field, Fields};
    /// use sbbf_lake::{InnerName, LakeColumn};
    /// use std::collections::HashMap;
    ///
    /// let id = |n: i64| HashMap::from([("PARQUET:field_id".to_string(), n.to_string())]);
    /// // Written as `s.a` (field id 5); renamed `s.b` since.
    /// let file = Field::new(
    ///     "s",
    ///     DataType::Struct(Fields::from(vec![
    ///         Field::new("a", DataType::Int64, true).with_metadata(id(5)),
    ///     ])),
    ///     true,
    /// );
    /// let column = LakeColumn {
    ///     name: "s".into(),
    ///     field_id: Some(4),
    ///     inner_names: vec![InnerName { id: Some(5), name: "b".into(), ..Default::default() }],
    ///     ..Default::default()
    /// };
    /// let relabel = column.relabel(&file).unwrap().unwrap();
    /// let DataType::Struct(fields) = relabel.field().data_type() else { unreachable!() };
    /// assert_eq!(fields[0].name(), "b");
    /// ```
    pub fn relabel(&self, file: &Field) -> Result<Option<Relabel>, ArrowError> {
        if self.inner_names.is_empty() {
            return Ok(None);
        }
        let names = Names::of(&self.inner_names);
        let (data_type, shape) = relabel_type(file.data_type(), &names, &mut Vec::new(), 0)?;
        Ok(match shape {
            Shape::Same => None,
            shape => Some(Relabel {
                field: Arc::new(file.clone().with_data_type(data_type)),
                shape,
            }),
        })
    }
}

impl Relabel {
    /// The field as the table names what it holds (the file's field name kept).
    pub fn field(&self) -> &FieldRef {
        &self.field
    }

    /// The relabelling fitted to `table` (the table's type of the column) where a struct in
    /// the file holds none of the table's current fields of it: that struct reads as the
    /// table's, every field null. (A reader that matches fields by name has nothing to match
    /// there, and DataFusion's cast refuses a struct that shares no name with its target.)
    pub fn fit_to(&mut self, table: &DataType) {
        let (t, shape) = fit(self.field.data_type(), &self.shape, table, 0);
        self.field = Arc::new(self.field.as_ref().clone().with_data_type(t));
        self.shape = shape;
    }

    /// `array` (of the file's field this was made for) as an array of [`Relabel::field`]:
    /// the same buffers, under the table's names.
    pub fn apply(&self, array: &ArrayRef) -> Result<ArrayRef, ArrowError> {
        apply(array, &self.shape, 0)
    }
}

/// The table's names of inner fields, by id and by physical path.
struct Names<'a> {
    by_id: HashMap<i64, &'a str>,
    by_path: HashMap<&'a [String], &'a str>,
}

impl<'a> Names<'a> {
    fn of(inner: &'a [InnerName]) -> Self {
        Names {
            by_id: inner
                .iter()
                .filter_map(|n| Some((n.id?, n.name.as_str())))
                .collect(),
            by_path: inner
                .iter()
                .filter(|n| !n.physical.is_empty())
                .map(|n| (n.physical.as_slice(), n.name.as_str()))
                .collect(),
        }
    }

    /// The table's name of the file's struct field `f` at `path` (the file's names from the
    /// column down, `f`'s own included); `None`: the table has no such field.
    fn name_of(&self, f: &Field, path: &[String]) -> Option<String> {
        let id = f
            .metadata()
            .get(parquet::arrow::PARQUET_FIELD_ID_META_KEY)
            .and_then(|v| v.parse::<i64>().ok());
        if let (Some(id), false) = (id, self.by_id.is_empty()) {
            return self.by_id.get(&id).map(|n| n.to_string());
        }
        if !self.by_path.is_empty() {
            return self.by_path.get(path).map(|n| n.to_string());
        }
        // Neither ids nor physical names to go by: the file's name is the table's.
        Some(f.name().clone())
    }
}

fn relabel_type(
    t: &DataType,
    names: &Names<'_>,
    path: &mut Vec<String>,
    depth: usize,
) -> Result<(DataType, Shape), ArrowError> {
    if depth > MAX_DEPTH {
        return Err(ArrowError::SchemaError(format!(
            "a column nested deeper than {MAX_DEPTH} levels"
        )));
    }
    let mut below = |segment: &str, t: &DataType| {
        path.push(segment.to_string());
        let r = relabel_type(t, names, path, depth + 1);
        path.pop();
        r
    };
    Ok(match t {
        DataType::Struct(fields) => {
            let mut out = Vec::with_capacity(fields.len());
            let mut take = Vec::with_capacity(fields.len());
            let mut same = true;
            for (i, f) in fields.iter().enumerate() {
                path.push(f.name().clone());
                let name = names.name_of(f, path);
                let inner = relabel_type(f.data_type(), names, path, depth + 1);
                path.pop();
                let Some(name) = name else {
                    same = false;
                    continue;
                };
                let (ty, shape) = inner?;
                same &= name == *f.name() && shape == Shape::Same;
                out.push(Arc::new(
                    f.as_ref().clone().with_name(name).with_data_type(ty),
                ));
                take.push((i, shape));
            }
            let fields = Fields::from(out);
            match same {
                true => (t.clone(), Shape::Same),
                false => (
                    DataType::Struct(fields.clone()),
                    Shape::Struct(fields, take),
                ),
            }
        }
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            let (ty, shape) = below("element", f.data_type())?;
            if shape == Shape::Same {
                return Ok((t.clone(), Shape::Same));
            }
            let f = Arc::new(f.as_ref().clone().with_data_type(ty));
            let shape = Box::new(shape);
            match t {
                DataType::List(_) => (DataType::List(f.clone()), Shape::List(f, shape)),
                DataType::LargeList(_) => {
                    (DataType::LargeList(f.clone()), Shape::LargeList(f, shape))
                }
                DataType::FixedSizeList(_, n) => (
                    DataType::FixedSizeList(f.clone(), *n),
                    Shape::FixedSizeList(f, *n, shape),
                ),
                _ => unreachable!("matched above"),
            }
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Ok((t.clone(), Shape::Same));
            };
            // The entries' own two fields keep their names; what is inside them is renamed.
            let mut out = Vec::with_capacity(kv.len());
            let mut take = Vec::with_capacity(kv.len());
            let mut same = true;
            for (i, (f, part)) in kv.iter().zip(["key", "value"]).enumerate() {
                let (ty, shape) = below(part, f.data_type())?;
                same &= shape == Shape::Same;
                out.push(Arc::new(f.as_ref().clone().with_data_type(ty)));
                take.push((i, shape));
            }
            if same {
                return Ok((t.clone(), Shape::Same));
            }
            let kv = Fields::from(out);
            let entries = Arc::new(
                entries
                    .as_ref()
                    .clone()
                    .with_data_type(DataType::Struct(kv.clone())),
            );
            (
                DataType::Map(entries.clone(), *sorted),
                Shape::Map(entries, *sorted, Box::new(Shape::Struct(kv, take))),
            )
        }
        // Layouts a Parquet file is not read as unless its Arrow schema asks: a struct inside
        // one would be matched by name, so it is refused rather than read wrong.
        DataType::ListView(f) | DataType::LargeListView(f) if f.data_type().is_nested() => {
            return Err(unsupported(t));
        }
        DataType::Dictionary(_, v) if v.is_nested() => return Err(unsupported(t)),
        DataType::RunEndEncoded(_, v) if v.data_type().is_nested() => {
            return Err(unsupported(t));
        }
        DataType::Union(..) => return Err(unsupported(t)),
        _ => (t.clone(), Shape::Same),
    })
}

fn unsupported(t: &DataType) -> ArrowError {
    ArrowError::NotYetImplemented(format!(
        "fields inside a column read as {t} matched to the table's"
    ))
}

/// [`Relabel::fit_to`] of the relabelled type `t` (read by `shape`) to the table's `table`.
fn fit(t: &DataType, shape: &Shape, table: &DataType, depth: usize) -> (DataType, Shape) {
    if depth > MAX_DEPTH {
        return (t.clone(), shape.clone());
    }
    let element = |f: &FieldRef, inner: &Shape, table_f: &FieldRef| {
        let (ty, s) = fit(f.data_type(), inner, table_f.data_type(), depth + 1);
        (Arc::new(f.as_ref().clone().with_data_type(ty)), Box::new(s))
    };
    match (shape, table) {
        (Shape::Struct(fields, _), DataType::Struct(want))
            if fields.is_empty() && !want.is_empty() =>
        {
            let nullable: Fields = want
                .iter()
                .map(|f| Arc::new(f.as_ref().clone().with_nullable(true)))
                .collect();
            (DataType::Struct(nullable.clone()), Shape::Nulls(nullable))
        }
        (Shape::Struct(fields, take), DataType::Struct(want)) => {
            let mut out = Vec::with_capacity(fields.len());
            let mut taken = Vec::with_capacity(take.len());
            for (f, (i, s)) in fields.iter().zip(take) {
                let (ty, s) = match want.iter().find(|w| w.name() == f.name()) {
                    Some(w) => fit(f.data_type(), s, w.data_type(), depth + 1),
                    None => (f.data_type().clone(), s.clone()),
                };
                out.push(Arc::new(f.as_ref().clone().with_data_type(ty)));
                taken.push((*i, s));
            }
            let fields = Fields::from(out);
            (
                DataType::Struct(fields.clone()),
                Shape::Struct(fields, taken),
            )
        }
        (Shape::List(f, inner), DataType::List(w) | DataType::LargeList(w)) => {
            let (f, s) = element(f, inner, w);
            (DataType::List(f.clone()), Shape::List(f, s))
        }
        (Shape::LargeList(f, inner), DataType::List(w) | DataType::LargeList(w)) => {
            let (f, s) = element(f, inner, w);
            (DataType::LargeList(f.clone()), Shape::LargeList(f, s))
        }
        (Shape::FixedSizeList(f, n, inner), DataType::FixedSizeList(w, _)) => {
            let (f, s) = element(f, inner, w);
            (
                DataType::FixedSizeList(f.clone(), *n),
                Shape::FixedSizeList(f, *n, s),
            )
        }
        (Shape::Map(f, sorted, inner), DataType::Map(w, _)) => {
            let (f, s) = element(f, inner, w);
            (DataType::Map(f.clone(), *sorted), Shape::Map(f, *sorted, s))
        }
        _ => (t.clone(), shape.clone()),
    }
}

fn apply(array: &ArrayRef, shape: &Shape, depth: usize) -> Result<ArrayRef, ArrowError> {
    let wrong = || {
        ArrowError::InvalidArgumentError(format!(
            "a nested column read as {}, not as its file's schema has it",
            array.data_type()
        ))
    };
    if depth > MAX_DEPTH {
        return Err(wrong());
    }
    Ok(match shape {
        Shape::Same => Arc::clone(array),
        Shape::Struct(fields, take) => {
            let s = array.as_struct_opt().ok_or_else(wrong)?;
            let columns = take
                .iter()
                .map(|(i, shape)| {
                    let child = s.columns().get(*i).ok_or_else(wrong)?;
                    apply(child, shape, depth + 1)
                })
                .collect::<Result<Vec<_>, _>>()?;
            Arc::new(StructArray::try_new_with_length(
                fields.clone(),
                columns,
                s.nulls().cloned(),
                s.len(),
            )?)
        }
        Shape::Nulls(fields) => {
            let s = array.as_struct_opt().ok_or_else(wrong)?;
            let columns = fields
                .iter()
                .map(|f| arrow_array::new_null_array(f.data_type(), s.len()))
                .collect();
            Arc::new(StructArray::try_new_with_length(
                fields.clone(),
                columns,
                s.nulls().cloned(),
                s.len(),
            )?)
        }
        Shape::List(f, inner) => {
            let l = array.as_list_opt::<i32>().ok_or_else(wrong)?;
            let values = apply(l.values(), inner, depth + 1)?;
            Arc::new(ListArray::try_new(
                f.clone(),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        Shape::LargeList(f, inner) => {
            let l = array.as_list_opt::<i64>().ok_or_else(wrong)?;
            let values = apply(l.values(), inner, depth + 1)?;
            Arc::new(LargeListArray::try_new(
                f.clone(),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        Shape::FixedSizeList(f, n, inner) => {
            let l = array.as_fixed_size_list_opt().ok_or_else(wrong)?;
            let values = apply(l.values(), inner, depth + 1)?;
            Arc::new(FixedSizeListArray::try_new(
                f.clone(),
                *n,
                values,
                l.nulls().cloned(),
            )?)
        }
        Shape::Map(f, sorted, inner) => {
            let m = array.as_map_opt().ok_or_else(wrong)?;
            let entries: ArrayRef = Arc::new(m.entries().clone());
            let entries = apply(&entries, inner, depth + 1)?;
            let entries = entries.as_struct_opt().ok_or_else(wrong)?.clone();
            Arc::new(MapArray::try_new(
                f.clone(),
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                *sorted,
            )?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::buffer::OffsetBuffer;
    use arrow_array::builder::{Int64Builder, MapBuilder, StringBuilder, StructBuilder};
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_array::Int64Array;

    fn id(n: i64) -> HashMap<String, String> {
        HashMap::from([(
            parquet::arrow::PARQUET_FIELD_ID_META_KEY.to_string(),
            n.to_string(),
        )])
    }

    fn named(id: i64, name: &str) -> InnerName {
        InnerName {
            id: Some(id),
            name: name.into(),
            ..Default::default()
        }
    }

    #[test]
    fn structs_inside_lists_and_maps_are_relabelled() {
        // list<struct<x (id 7), gone (id 8)>>: `x` renamed `y`, `gone` dropped.
        let inner = Fields::from(vec![
            Field::new("x", DataType::Int64, true).with_metadata(id(7)),
            Field::new("gone", DataType::Int64, true).with_metadata(id(8)),
        ]);
        let element = Arc::new(Field::new("element", DataType::Struct(inner.clone()), true));
        let values = StructArray::new(
            inner,
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(Int64Array::from(vec![-1, -2, -3])),
            ],
            None,
        );
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::clone(&element),
            OffsetBuffer::from_lengths([2, 1]),
            Arc::new(values),
            None,
        ));
        let file = Field::new("lst", DataType::List(element), true);
        let column = LakeColumn {
            inner_names: vec![named(7, "y")],
            ..Default::default()
        };
        let r = column.relabel(&file).unwrap().unwrap();
        let out = r.apply(&list).unwrap();
        assert_eq!(out.data_type(), r.field().data_type());
        let got = out.as_list::<i32>().values().as_struct();
        assert_eq!(got.fields().len(), 1);
        assert_eq!(got.fields()[0].name(), "y");
        let y = got.column(0).as_primitive::<Int64Type>();
        assert_eq!(y.values().to_vec(), [1, 2, 3]);
        assert_eq!(out.as_list::<i32>().value_offsets(), &[0, 2, 3]);

        // map<string, struct<v (id 11)>>: `v` renamed `w`; the key is left as it is.
        let v = Fields::from(vec![
            Field::new("v", DataType::Int64, true).with_metadata(id(11))
        ]);
        let mut b = MapBuilder::new(
            None,
            StringBuilder::new(),
            StructBuilder::from_fields(v.clone(), 2),
        );
        for (k, n) in [("a", 10), ("b", 20)] {
            b.keys().append_value(k);
            let s = b.values();
            s.field_builder::<Int64Builder>(0).unwrap().append_value(n);
            s.append(true);
            b.append(true).unwrap();
        }
        let map: ArrayRef = Arc::new(b.finish());
        let file = Field::new("mp", map.data_type().clone(), true);
        let column = LakeColumn {
            inner_names: vec![named(11, "w")],
            ..Default::default()
        };
        let r = column.relabel(&file).unwrap().unwrap();
        let out = r.apply(&map).unwrap();
        let m = out.as_map();
        assert_eq!(m.keys().as_string::<i32>().value(1), "b");
        let w = m.values().as_struct();
        assert_eq!(w.fields()[0].name(), "w");
        assert_eq!(
            w.column(0).as_primitive::<Int64Type>().values().to_vec(),
            [10, 20]
        );

        // Nothing to rename: no relabelling at all.
        let column = LakeColumn {
            inner_names: vec![named(11, "v")],
            ..Default::default()
        };
        assert!(column.relabel(&file).unwrap().is_none());
        // A struct inside a layout not matched by ids is refused, not read by name.
        let view = Field::new(
            "lv",
            DataType::ListView(Arc::new(Field::new("e", DataType::Struct(v), true))),
            true,
        );
        assert!(column.relabel(&view).is_err());
    }
}
