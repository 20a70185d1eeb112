//! DataFusion filter expressions to the predicates Bloom filters can decide: the logical
//! filters a scan is planned with ([`predicate`]), and the physical join filters DataFusion
//! pushes into it while the query runs ([`dynamic_predicate`]).
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
use sbbf_parquet::format::column::escape_field;
use sbbf_parquet::prune::Predicate;
use sbbf_parquet::Literal;
use std::sync::Arc;

use datafusion::physical_expr::expressions::{
    BinaryExpr as PhysicalBinary, CaseExpr, Column as PhysicalColumn, DynamicFilterPhysicalExpr,
    InListExpr, Literal as PhysicalLiteral,
};
use datafusion::physical_expr::utils::split_conjunction;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_expr_common::physical_expr::snapshot_physical_expr;

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
    scalar_literal(v)
}

/// [`literal`] of a scalar.
pub(crate) fn scalar_literal(v: &ScalarValue) -> Option<Literal> {
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
    chain_path(field_chain(e, schema)?)
}

/// Joins a chain of names into the escaped dotted leaf path, when it ends on a leaf.
fn chain_path((names, data_type): (Vec<String>, DataType)) -> Option<String> {
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

/// One step down a struct: the field `name` of `data_type`, or `None` when `data_type` is
/// no struct (a map's `m['k']` is a value lookup, not a leaf's parent).
fn struct_field(data_type: &DataType, name: &str) -> Option<DataType> {
    let DataType::Struct(fields) = data_type else {
        return None;
    };
    fields.find(name).map(|(_, f)| f.data_type().clone())
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
                data_type = struct_field(&data_type, name)?;
                names.push(name.clone());
            }
            Some((names, data_type))
        }
        _ => None,
    }
}

/// The predicate our filters can test for the join filters DataFusion pushed into a scan:
/// each [`DynamicFilterPhysicalExpr`] conjunct of `filter` (a hash join's build-side keys),
/// as it stands now, translated; the static conjuncts are left out (the table prunes with
/// those when the scan is planned). `None` when no part can be tested.
///
/// What a join pushes and what becomes of it: `key IN (SET)` (up to
/// `hash_join_inlist_pushdown_max_distinct_values` keys) is an `IN` of those keys; a join on
/// several columns pushes `struct(a, b) IN (SET)`, which becomes `a IN (..) AND b IN (..)`
/// (each column pruned by its own keys: a row whose pair is in the set has each part in its
/// column's set); a partitioned join's `CASE hash(key) % n WHEN i THEN filter_i ... END`
/// becomes the OR of the branches (whichever branch a row takes, it must pass that one). The
/// `min <= key <= max` bounds, a hash-table lookup (more keys than the limit) and anything
/// else are left out, which only keeps more row groups.
pub fn dynamic_predicate(filter: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<Predicate> {
    let parts = dynamic_filters(filter)
        .into_iter()
        .filter_map(|f| {
            let now = snapshot_physical_expr(Arc::clone(&f)).ok()?;
            physical(&now, schema)
        })
        .collect();
    all_of(parts)
}

/// The dynamic filters among the conjuncts of `filter`.
pub(crate) fn dynamic_filters(filter: &Arc<dyn PhysicalExpr>) -> Vec<Arc<dyn PhysicalExpr>> {
    split_conjunction(filter)
        .into_iter()
        .filter(|e| e.downcast_ref::<DynamicFilterPhysicalExpr>().is_some())
        .cloned()
        .collect()
}

fn physical(e: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<Predicate> {
    if let Some(b) = e.downcast_ref::<PhysicalBinary>() {
        let (left, right) = (b.left(), b.right());
        return match b.op() {
            Operator::And => all_of(
                [left, right]
                    .into_iter()
                    .filter_map(|x| physical(x, schema))
                    .collect(),
            ),
            Operator::Or => {
                let (l, r) = (physical(left, schema)?, physical(right, schema)?);
                Some(Predicate::Or(vec![l, r]))
            }
            Operator::Eq => {
                let (path, value) = match (physical_leaf(left, schema), physical_literal(right)) {
                    (Some(path), Some(value)) => (path, value),
                    _ => (physical_leaf(right, schema)?, physical_literal(left)?),
                };
                Some(Predicate::Eq(path, value))
            }
            _ => None,
        };
    }
    if let Some(list) = e.downcast_ref::<InListExpr>() {
        if list.negated() || list.list().is_empty() {
            return None;
        }
        let scalars = list
            .list()
            .iter()
            .map(|v| v.downcast_ref::<PhysicalLiteral>().map(|l| l.value()))
            .collect::<Option<Vec<&ScalarValue>>>()?;
        if let Some(path) = physical_leaf(list.expr(), schema) {
            return in_scalars(path, scalars.into_iter());
        }
        // `struct(a, b) IN (SET)`: a join on several columns.
        let f = list.expr().downcast_ref::<ScalarFunctionExpr>()?;
        if f.name() != "struct" {
            return None;
        }
        let parts = f
            .args()
            .iter()
            .enumerate()
            .filter_map(|(i, arg)| {
                let path = physical_leaf(arg, schema)?;
                let column = scalars
                    .iter()
                    .map(|s| match s {
                        ScalarValue::Struct(a) if i < a.num_columns() && a.len() == 1 => {
                            ScalarValue::try_from_array(a.column(i), 0).ok()
                        }
                        _ => None,
                    })
                    .collect::<Option<Vec<ScalarValue>>>()?;
                in_scalars(path, column.iter())
            })
            .collect();
        return all_of(parts);
    }
    if let Some(case) = e.downcast_ref::<CaseExpr>() {
        // Whichever branch a row takes, it passes that branch's filter: the OR of the
        // branches holds for it. A branch that is `false` adds nothing; one that cannot be
        // tested (a `true`, a hash lookup) makes the OR untestable.
        let branches = case
            .when_then_expr()
            .iter()
            .map(|(_, then)| then)
            .chain(case.else_expr())
            .filter(|b| !is_false(b))
            .map(|b| physical(b, schema))
            .collect::<Option<Vec<Predicate>>>()?;
        return match branches.len() {
            // Every branch is false: no row passes. Nothing to probe for that; keep it simple.
            0 => None,
            1 => branches.into_iter().next(),
            _ => Some(Predicate::Or(branches)),
        };
    }
    None
}

fn is_false(e: &Arc<dyn PhysicalExpr>) -> bool {
    e.downcast_ref::<PhysicalLiteral>()
        .is_some_and(|l| matches!(l.value(), ScalarValue::Boolean(Some(false))))
}

/// `path IN (scalars)`, nulls left out (they never compare equal) and each value once (a
/// join's build side pushes every build row's key); `None` for no value.
fn in_scalars<'a>(
    path: String,
    scalars: impl Iterator<Item = &'a ScalarValue>,
) -> Option<Predicate> {
    // Each value compared in place and cloned once (a million keys: no second copy).
    let mut seen = std::collections::HashSet::new();
    let scalars: Vec<ScalarValue> = scalars
        .filter(|s| !s.is_null() && seen.insert(*s))
        .cloned()
        .collect();
    if scalars.is_empty() {
        return None;
    }
    let array = ScalarValue::iter_to_array(scalars).ok()?;
    Some(Predicate::in_arrow(path, array.as_ref()))
}

fn physical_literal(e: &Arc<dyn PhysicalExpr>) -> Option<Literal> {
    scalar_literal(e.downcast_ref::<PhysicalLiteral>()?.value())
}

fn physical_leaf(e: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<String> {
    chain_path(physical_chain(e, schema)?)
}

fn physical_chain(e: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<(Vec<String>, DataType)> {
    if let Some(c) = e.downcast_ref::<PhysicalColumn>() {
        let field = schema.field_with_name(c.name()).ok()?;
        return Some((vec![c.name().to_string()], field.data_type().clone()));
    }
    let f = e.downcast_ref::<ScalarFunctionExpr>()?;
    if f.name() != "get_field" {
        return None;
    }
    let (mut names, mut data_type) = physical_chain(f.args().first()?, schema)?;
    for arg in &f.args()[1..] {
        let name = match arg.downcast_ref::<PhysicalLiteral>()?.value() {
            ScalarValue::Utf8(Some(n)) | ScalarValue::Utf8View(Some(n)) => n.clone(),
            _ => return None,
        };
        data_type = struct_field(&data_type, &name)?;
        names.push(name);
    }
    Some((names, data_type))
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
