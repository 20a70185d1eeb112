//! DataFusion filter expressions to the predicates Bloom filters can decide.
//!
//! Only what a filter can prove false is translated: `column = literal`, `column IN (literals)`,
//! and AND / OR of those. Everything else (casts on the column, functions, ranges, NOT, map
//! lookups) is left out, which can only keep more row groups: an AND keeps the children it
//! can translate, an OR is dropped unless every child translates.

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::expr::{InList, ScalarFunction};
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use sbbf_parquet::column::escape_field;
use sbbf_parquet::prune::Predicate;
use sbbf_parquet::Literal;

/// The predicate the Bloom filters can test for a scan's filters (a conjunction), or `None`
/// when no part of them can be tested.
///
/// Columns are named by their Parquet leaf path: a top-level column by its name, a struct
/// field as `struct.field` (names escaped as [`escape_field`] does).
///
/// ```
/// use datafusion::arrow::datatypes::{DataType, Field, Schema};
/// use datafusion::prelude::{col, lit};
/// use sbbf_parquet::prune::Predicate;
/// use sbbf_parquet::Literal;
///
/// let schema = Schema::new(vec![Field::new("id", DataType::Int64, false)]);
/// let p = sbbf_datafusion::predicate(&[col("id").eq(lit(7i64))], &schema);
/// assert_eq!(p, Some(Predicate::Eq("id".into(), Literal::Int(7))));
/// // A cast on the column hides what is stored: nothing to test.
/// let cast = datafusion::prelude::cast(col("id"), DataType::Utf8).eq(lit("7"));
/// assert_eq!(sbbf_datafusion::predicate(&[cast], &schema), None);
/// ```
pub fn predicate(filters: &[Expr], schema: &Schema) -> Option<Predicate> {
    all_of(
        filters
            .iter()
            .filter_map(|f| translate(f, schema))
            .collect(),
    )
}

fn all_of(mut parts: Vec<Predicate>) -> Option<Predicate> {
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Predicate::And(parts)),
    }
}

fn translate(e: &Expr, schema: &Schema) -> Option<Predicate> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => all_of(
                [left, right]
                    .into_iter()
                    .filter_map(|x| translate(x, schema))
                    .collect(),
            ),
            Operator::Or => {
                let (l, r) = (translate(left, schema)?, translate(right, schema)?);
                Some(Predicate::Or(vec![l, r]))
            }
            Operator::Eq => {
                let (path, value) = match (leaf_path(left, schema), literal(right)) {
                    (Some(path), Some(value)) => (path, value),
                    _ => (leaf_path(right, schema)?, literal(left)?),
                };
                Some(Predicate::Eq(path, value))
            }
            _ => None,
        },
        Expr::InList(InList {
            expr,
            list,
            negated: false,
        }) => {
            let path = leaf_path(expr, schema)?;
            let scalars = list
                .iter()
                .map(|e| match e {
                    Expr::Literal(v, _) => Some(v.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<ScalarValue>>>()?;
            if scalars.is_empty() {
                return None;
            }
            let array = ScalarValue::iter_to_array(scalars).ok()?;
            Some(Predicate::in_arrow(path, array.as_ref()))
        }
        _ => None,
    }
}

/// A non-null literal in the stored-value vocabulary (through its Arrow form, so the one
/// Arrow dispatch reads it).
fn literal(e: &Expr) -> Option<Literal> {
    let Expr::Literal(v, _) = e else {
        return None;
    };
    if v.is_null() {
        return None;
    }
    let array = v.to_array().ok()?;
    if array.is_null(0) {
        return None;
    }
    Literal::from_arrow(array.as_ref(), 0)
}

/// The Parquet leaf path of a bare column or a chain of struct field accesses, when it ends
/// on a primitive (a leaf). Map lookups, list elements and anything computed are `None`.
fn leaf_path(e: &Expr, schema: &Schema) -> Option<String> {
    let (names, data_type) = field_chain(e, schema)?;
    if data_type.is_nested() {
        return None;
    }
    Some(
        names
            .iter()
            .map(|n| escape_field(n))
            .collect::<Vec<_>>()
            .join("."),
    )
}

fn field_chain(e: &Expr, schema: &Schema) -> Option<(Vec<String>, DataType)> {
    match e {
        Expr::Column(c) => {
            let field = schema.field_with_name(&c.name).ok()?;
            Some((vec![c.name.clone()], field.data_type().clone()))
        }
        Expr::ScalarFunction(ScalarFunction { func, args }) if func.name() == "get_field" => {
            let (mut names, mut data_type) = field_chain(args.first()?, schema)?;
            for arg in &args[1..] {
                let Expr::Literal(ScalarValue::Utf8(Some(name)), _) = arg else {
                    return None;
                };
                // Only struct fields are leaves' parents; a map's `m['k']` is a value lookup.
                let DataType::Struct(fields) = &data_type else {
                    return None;
                };
                let (_, field) = fields.find(name)?;
                data_type = field.data_type().clone();
                names.push(name.clone());
            }
            Some((names, data_type))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{Field, Fields};
    use datafusion::functions::core::expr_fn::get_field;
    use datafusion::prelude::{col, lit};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Utf8, true),
            Field::new(
                "s",
                DataType::Struct(Fields::from(vec![Field::new("x.y", DataType::Int64, true)])),
                true,
            ),
            Field::new(
                "m",
                DataType::Map(
                    std::sync::Arc::new(Field::new(
                        "entries",
                        DataType::Struct(Fields::from(vec![
                            Field::new("key", DataType::Utf8, false),
                            Field::new("value", DataType::Int32, true),
                        ])),
                        false,
                    )),
                    false,
                ),
                true,
            ),
        ])
    }

    #[test]
    fn or_of_ands_keeps_its_shape() {
        let e = (col("a").eq(lit(1i32)).and(col("b").eq(lit("x"))))
            .or(col("a").eq(lit(2i32)).and(col("b").eq(lit("y"))));
        let p = predicate(&[e], &schema()).unwrap();
        let eq = |c: &str, l: Literal| Predicate::Eq(c.into(), l);
        assert_eq!(
            p,
            Predicate::Or(vec![
                Predicate::And(vec![
                    eq("a", Literal::Int(1)),
                    eq("b", Literal::Utf8("x".into()))
                ]),
                Predicate::And(vec![
                    eq("a", Literal::Int(2)),
                    eq("b", Literal::Utf8("y".into()))
                ]),
            ])
        );
    }

    #[test]
    fn what_cannot_be_tested_only_widens() {
        let s = schema();
        // AND keeps the part it can test.
        let e = col("a").eq(lit(1i32)).and(col("b").gt(lit("x")));
        assert_eq!(
            predicate(&[e], &s),
            Some(Predicate::Eq("a".into(), Literal::Int(1)))
        );
        // OR with an untestable side is dropped whole.
        let e = col("a").eq(lit(1i32)).or(col("b").gt(lit("x")));
        assert_eq!(predicate(&[e], &s), None);
        // NOT IN, NULL literals, column = column.
        assert_eq!(
            predicate(&[col("a").in_list(vec![lit(1i32)], true)], &s),
            None
        );
        assert_eq!(
            predicate(&[col("a").eq(lit(ScalarValue::Int32(None)))], &s),
            None
        );
        assert_eq!(predicate(&[col("a").eq(col("a"))], &s), None);
    }

    #[test]
    fn struct_fields_are_leaves_map_lookups_are_not() {
        let s = schema();
        let e = get_field(col("s"), "x.y").eq(lit(5i64));
        assert_eq!(
            predicate(&[e], &s),
            Some(Predicate::Eq("s.x\\.y".into(), Literal::Int(5)))
        );
        let e = get_field(col("m"), "k").eq(lit(5i32));
        assert_eq!(predicate(&[e], &s), None);
        // A whole struct is not a leaf.
        assert_eq!(predicate(&[col("s").is_null()], &s), None);
    }

    #[test]
    fn in_lists_and_literal_on_the_left() {
        let s = schema();
        let e = col("b").in_list(
            vec![lit("p"), lit(ScalarValue::Utf8(None)), lit("q")],
            false,
        );
        assert_eq!(
            predicate(&[e], &s),
            Some(Predicate::In(
                "b".into(),
                vec![Literal::Utf8("p".into()), Literal::Utf8("q".into())]
            ))
        );
        let e = lit(3i32).eq(col("a"));
        assert_eq!(
            predicate(&[e], &s),
            Some(Predicate::Eq("a".into(), Literal::Int(3)))
        );
    }
}
