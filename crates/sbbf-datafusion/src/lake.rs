//! Which column of a lake table's data file is which column of the table. A table's files
//! need not name its columns as the table does: an Iceberg column renamed after files were
//! written keeps its field id and its old name in those files (and a column dropped and added
//! again under the same name is another column: another id); under Delta column mapping the
//! files name columns by physical names (`col-5f1c...`) and, in `id` mode, by field id.
//! Matching by name would read a renamed column as null in old files, or, worse, another
//! column's values where a name was reused.
//!
//! [`Columns`] matches each table column to a file's field by the library's one rule
//! (`sbbf_lake::rows`: by field id where the file has ids, else by the physical name, else
//! by name; Python's `read_table` reads by the same rule); [`ByTableColumns`] gives
//! DataFusion's scan that matching for every file it opens, and the scan's own steps ask it
//! too.
//!
//! [`Deleted`] holds the deletes of a table's files (Delta deletion vectors, Iceberg position
//! and equality deletes, as the snapshot turns them into row positions): the rows they delete
//! are left out of the file's access plan (`sbbf_lake::rows::rows_left`), so the scan never
//! reads them. [`PartitionValues`] types a Delta file's partition values from the log by the
//! library's rule too (`Snapshot::partition_values`).

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
use datafusion::logical_expr::ColumnarValue;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};
use sbbf_lake::arrow_types::arrow_type;
use sbbf_lake::rows::{rows_left, unheld_type, RowsLeft};
use sbbf_lake::{Bounds, Format, LakeColumn, Relabel, Snapshot, StoreRoot};
use sbbf_parquet::prune::Predicate;
use sbbf_parquet::Literal;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A lake table's columns, and how its files name them.
#[derive(Debug)]
pub(crate) struct Columns {
    format: Format,
    table: String,
    /// The columns the data files hold (a Delta table's partition columns are in none).
    columns: Vec<LakeColumn>,
}

impl Columns {
    /// The columns of `snap`, when its files may name them otherwise than the table does
    /// (every Iceberg table: ids decide; a Delta table under column mapping); `None` when
    /// names are the files' names.
    pub(crate) fn of(snap: &Snapshot, table: &str) -> Option<Columns> {
        let mapped = snap
            .columns
            .iter()
            .any(|c| c.physical.is_some() || c.field_id.is_some());
        if snap.format == Format::Delta && !mapped {
            return None;
        }
        let columns = snap
            .columns
            .iter()
            .filter(|c| snap.in_files(c))
            .cloned()
            .collect();
        Some(Columns {
            format: snap.format,
            table: table.to_string(),
            columns,
        })
    }

    /// Whether `e` reads a nested column whose fields inside files may name otherwise than
    /// the table (read through a [`Relabel`] then).
    pub(crate) fn reads_relabelled(&self, e: &Arc<dyn PhysicalExpr>) -> bool {
        let mut found = false;
        let _ = e.apply(|n| {
            if let Some(c) = n.downcast_ref::<Column>() {
                found |= self
                    .column(c.name())
                    .is_some_and(|c| !c.inner_names.is_empty());
            }
            Ok(match found {
                true => TreeNodeRecursion::Stop,
                false => TreeNodeRecursion::Continue,
            })
        });
        found
    }

    fn column(&self, name: &str) -> Option<&LakeColumn> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The field of a file's schema that holds table column `c`: the one with its field id
    /// where the file's fields carry ids, else the one with its physical name (Delta column
    /// mapping), else the one with its name. `None`: the file does not have the column.
    fn find<'a>(&self, c: &LakeColumn, file: &'a Schema) -> Option<&'a Field> {
        c.held_in(file).map(|(_, f)| f)
    }

    /// A file's schema as the table names it: each table column the file has, under the
    /// table's name and in the table's order (the fields inside a nested column under the
    /// table's names too); fields that are no column of the table (dropped columns) left
    /// out.
    pub(crate) fn file_schema_as_table(&self, file: &Schema) -> Result<Schema> {
        let mut fields = Vec::with_capacity(self.columns.len());
        for c in &self.columns {
            let Some(f) = self.find(c, file) else {
                continue;
            };
            let f = match self.relabel(c, f)? {
                Some(r) => r.field().as_ref().clone(),
                None => f.clone(),
            };
            fields.push(f.with_name(c.name.clone()));
        }
        Ok(Schema::new_with_metadata(fields, file.metadata().clone()))
    }

    /// How a file's field `f` holding column `c` is relabelled to the table's inner names;
    /// `None` when it reads as it is.
    fn relabel(&self, c: &LakeColumn, f: &Field) -> Result<Option<Relabel>> {
        c.relabel(f)
            .map_err(|e| self.refuse(format!("column `{}` as a data file holds it ({e})", c.name)))
    }

    /// The table's file schema from `merged` (its files' schemas as the table names them,
    /// merged), in the table's order; a column no file has yet is typed from the table's
    /// schema.
    pub(crate) fn table_schema(&self, merged: &Schema) -> Result<Schema> {
        let mut fields = Vec::with_capacity(self.columns.len());
        for c in &self.columns {
            match merged.field_with_name(&c.name) {
                Ok(f) => fields.push(f.clone()),
                Err(_) => {
                    let t = unheld_type(self.format, &self.table, c)
                        .map_err(|e| DataFusionError::External(Box::new(e)))?;
                    fields.push(Field::new(c.name.clone(), t, true));
                }
            }
        }
        Ok(Schema::new_with_metadata(fields, merged.metadata().clone()))
    }

    /// Whether a file of schema `file` holds every column in `columns` (top-level names of
    /// the table; `a.b` for a nested field) under the same name, so that what reads it by
    /// name (our filters) reads the right column.
    pub(crate) fn same_names<'a>(
        &self,
        file: &Schema,
        mut columns: impl Iterator<Item = &'a str>,
    ) -> bool {
        columns.all(|path| {
            let (top, nested) = match path.split_once('.') {
                Some((t, _)) => (t, true),
                None => (path, false),
            };
            let Some(c) = self.column(top) else {
                return true;
            };
            // Inside a nested column, what this file holds decides (by field ids or physical
            // names): fields it names otherwise are not for a reader by name.
            if nested {
                let relabelled = self.find(c, file).map(|f| c.relabel(f));
                if !matches!(relabelled, None | Some(Ok(None))) {
                    return false;
                }
            }
            let by_table = self.find(c, file).map(|f| f.name().as_str());
            let by_name = file.field_with_name(top).ok().map(|f| f.name().as_str());
            by_table == by_name
        })
    }

    fn refuse(&self, feature: String) -> DataFusionError {
        DataFusionError::External(Box::new(sbbf_parquet::Error::from(
            sbbf_lake::LakeError::Unsupported {
                format: self.format.name(),
                table: self.table.clone(),
                feature: format!("{feature} in a query"),
            },
        )))
    }
}

/// What a lake table's snapshot records of each file's column values (Delta `stats`,
/// Iceberg manifest bounds): a file whose bounds rule the scan's `=` and `IN` filters out is
/// dropped before its footer is read.
#[derive(Debug)]
pub(crate) struct FileBounds(HashMap<object_store::path::Path, Vec<Bounds>>);

impl FileBounds {
    /// The bounds of `snap`'s files (whose store locations `root` gives), with their
    /// partition values' (`partitions`), or `None` when no file has any.
    pub(crate) fn of(
        snap: &Snapshot,
        root: &StoreRoot,
        partitions: Option<&PartitionValues>,
    ) -> Result<Option<FileBounds>> {
        let mut by_location: HashMap<object_store::path::Path, Vec<Bounds>> = HashMap::new();
        for f in snap.files.iter().filter(|f| !f.bounds.is_empty()) {
            let at = root
                .path_of(&f.url)
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            by_location.insert(at, f.bounds.clone());
        }
        for (at, bounds) in partitions.into_iter().flat_map(|p| p.bounds()) {
            if !bounds.is_empty() {
                by_location.entry(at.clone()).or_default().extend(bounds);
            }
        }
        Ok((!by_location.is_empty()).then_some(FileBounds(by_location)))
    }

    /// Whether `file`'s bounds prove `pred` false for every row of it.
    pub(crate) fn rule_out(&self, file: &PartitionedFile, pred: &Predicate) -> bool {
        match self.0.get(&file.object_meta.location) {
            Some(bounds) => !may_match(pred, bounds),
            None => false,
        }
    }
}

fn may_match(p: &Predicate, bounds: &[Bounds]) -> bool {
    let holds = |column: &str, value: &Literal| {
        bounds
            .iter()
            .filter(|b| b.column == column)
            .all(|b| b.may_hold(value))
    };
    match p {
        Predicate::Eq(c, v) => holds(c, v),
        Predicate::In(c, vs) => vs.iter().any(|v| holds(c, v)),
        Predicate::And(ps) => ps.iter().all(|p| may_match(p, bounds)),
        Predicate::Or(ps) => ps.iter().any(|p| may_match(p, bounds)),
    }
}

/// A Delta table's partition values by file, from its log. The folders its writers lay files
/// in only encode them, and lossily: a null is a sentinel name (`__HIVE_DEFAULT_PARTITION__`,
/// which delta-rs also writes for a row holding that text), an empty string is null, and `=`,
/// `/`, `%` in a value are escaped (DataFusion, building a listing prefix from `p = 'c=d'`,
/// missed such folders), and under column mapping they need not name the column at all (`52/`,
/// `col-<uuid>=1/`). So a scan takes each file's values from here, never from its folder
/// names, and DataFusion's listing is told of no partition column (it would leave out every
/// file whose folders do not name them): the table appends them to the listing's schema
/// ([`PartitionValues::appended`]) and the scan's file source declares them. Its partition
/// columns are nullable (DataFusion's listing declares them never null
/// and would fold `p IS NULL` to false); filters on them are evaluated above the scan, and `=`
/// and `IN` rule files out through [`FileBounds`].
#[derive(Debug)]
pub(crate) struct PartitionValues {
    /// The partition columns, as the scan declares them.
    columns: Vec<(String, DataType)>,
    by_location: HashMap<object_store::path::Path, Vec<ScalarValue>>,
}

impl PartitionValues {
    /// The values of `snap`'s files (whose store locations `root` gives) for `columns`, typed
    /// as declared; `None` for a table without partition columns.
    pub(crate) fn of(
        snap: &Snapshot,
        root: &StoreRoot,
        columns: &[(String, DataType)],
    ) -> Result<Option<PartitionValues>> {
        if columns.is_empty() {
            return Ok(None);
        }
        let mut by_location = HashMap::with_capacity(snap.files.len());
        for f in &snap.files {
            let at = root
                .path_of(&f.url)
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            let values = columns
                .iter()
                .map(|(name, ty)| {
                    let one = snap
                        .partition_values(f, name, ty, 1)
                        .map_err(|e| DataFusionError::External(Box::new(e)))?;
                    ScalarValue::try_from_array(&one, 0)
                })
                .collect::<Result<Vec<_>>>()?;
            by_location.insert(at, values);
        }
        Ok(Some(PartitionValues {
            columns: columns.to_vec(),
            by_location,
        }))
    }

    /// The partition columns as the scan declares them: typed as the table's schema types
    /// them, nullable.
    pub(crate) fn fields(&self) -> Vec<FieldRef> {
        self.columns
            .iter()
            .map(|(name, ty)| Arc::new(Field::new(name, ty.clone(), true)))
            .collect()
    }

    /// `schema` (the listing's, which declares no partition column) with the partition
    /// columns after its own, as [`PartitionValues::fields`] gives them: the order a
    /// listing's table schema has (file columns, then partition columns).
    pub(crate) fn appended(&self, schema: &SchemaRef) -> SchemaRef {
        let fields: Vec<FieldRef> = schema
            .fields()
            .iter()
            .cloned()
            .chain(self.fields())
            .collect();
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
    }

    /// The partition columns' names.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|(n, _)| n.as_str())
    }

    /// Whether `e` reads a partition column.
    pub(crate) fn touches(&self, e: &datafusion::logical_expr::Expr) -> bool {
        e.column_refs()
            .iter()
            .any(|c| self.columns.iter().any(|(n, _)| *n == c.name))
    }

    /// `file` with its values from the log (an error for a file the log does not name).
    pub(crate) fn set(&self, file: &mut PartitionedFile) -> Result<()> {
        let values = self
            .by_location
            .get(&file.object_meta.location)
            .ok_or_else(|| {
                DataFusionError::Internal(format!(
                    "no partition values for {}",
                    file.object_meta.location
                ))
            })?;
        file.partition_values = values.clone();
        Ok(())
    }

    /// Each file's values as bounds (a value is its own minimum and maximum; a null rules
    /// nothing out).
    fn bounds(&self) -> impl Iterator<Item = (&object_store::path::Path, Vec<Bounds>)> {
        self.by_location.iter().map(|(at, values)| {
            let bounds = self
                .columns
                .iter()
                .zip(values)
                .filter_map(|((name, _), v)| {
                    let lit = crate::expr::scalar_literal(v)?;
                    Some(Bounds {
                        column: name.clone(),
                        min: Some(lit.clone()),
                        max: Some(lit),
                    })
                })
                .collect();
            (at, bounds)
        })
    }
}

/// The deleted rows of a lake table's files, read as the scan's files are planned.
#[derive(Debug)]
pub(crate) struct Deleted {
    snap: Arc<Snapshot>,
    root: StoreRoot,
    /// The URL of each file with a vector, by its location in the store the scan reads.
    by_location: HashMap<object_store::path::Path, String>,
}

impl Deleted {
    /// The vectors of `snap`'s files (whose store locations `root` gives), or `None` when
    /// no file has one.
    pub(crate) fn of(snap: Arc<Snapshot>, root: StoreRoot) -> Result<Option<Deleted>> {
        let mut by_location = HashMap::new();
        for f in snap.files_with_deletes() {
            let at = root
                .path_of(&f.url)
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            by_location.insert(at, f.url.clone());
        }
        if by_location.is_empty() {
            return Ok(None);
        }
        Ok(Some(Deleted {
            snap,
            root,
            by_location,
        }))
    }

    /// Whether deletes apply to `file`.
    pub(crate) fn has(&self, file: &PartitionedFile) -> bool {
        self.by_location.contains_key(&file.object_meta.location)
    }

    /// `file`'s access plan (the one attached to it, or every row group) without the rows
    /// its deletes delete: a row group they all are is skipped, one with some
    /// scanned through a row selection. `None`: no delete applies to the file.
    pub(crate) async fn plan(
        &self,
        file: &PartitionedFile,
        metadata: &ParquetMetaData,
    ) -> Result<Option<ParquetAccessPlan>> {
        let Some(url) = self.by_location.get(&file.object_meta.location) else {
            return Ok(None);
        };
        let sizes: Vec<u64> = metadata
            .row_groups()
            .iter()
            .map(|g| u64::try_from(g.num_rows()).unwrap_or(0))
            .collect();
        let total = sizes.iter().sum();
        let deleted = self
            .snap
            .deleted_rows(&self.root, url, Some(total))
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        let Some(deleted) = deleted else {
            return Ok(None);
        };
        let n = sizes.len();
        let mut plan = file
            .extensions
            .get::<ParquetAccessPlan>()
            .filter(|p| p.len() == n)
            .cloned()
            .unwrap_or_else(|| ParquetAccessPlan::new_all(n));
        for (rg, left) in rows_left(&sizes, &deleted).into_iter().enumerate() {
            match left {
                RowsLeft::All => {}
                RowsLeft::None => plan.skip(rg),
                RowsLeft::Some(kept) => plan.scan_selection(rg, kept),
            }
        }
        Ok(Some(plan))
    }
}

/// The schema of a lake table's data files (its columns but the partition columns), in the
/// table's order and typed as its snapshot types them: no footer is read to learn it. `None`
/// when a column's type is not a primitive one this knows (nested types): the footers tell
/// then. Strings and binaries are read as the view types when `views` (DataFusion's default).
pub(crate) fn snapshot_schema(snap: &Snapshot, views: bool) -> Option<Schema> {
    let mut fields = Vec::with_capacity(snap.columns.len());
    for c in snap.columns.iter().filter(|c| snap.in_files(c)) {
        let t = match arrow_type(snap.format, c.data_type.as_deref()?)? {
            DataType::Utf8 if views => DataType::Utf8View,
            DataType::Binary if views => DataType::BinaryView,
            t => t,
        };
        fields.push(Field::new(c.name.clone(), t, true));
    }
    Some(Schema::new(fields))
}

/// DataFusion's scan adapter for a lake table: each file's fields matched to the table's
/// columns as [`Columns`] matches them, then DataFusion's own adaptation (casts, nulls for
/// the columns a file lacks).
#[derive(Debug)]
pub(crate) struct ByTableColumns(pub(crate) Arc<Columns>);

impl PhysicalExprAdapterFactory for ByTableColumns {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        let cols = &self.0;
        let taken: HashSet<&str> = physical_file_schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        let mut renamed = HashMap::new();
        let mut relabelled = HashMap::new();
        let mut unreadable = HashSet::new();
        let fields: Fields = logical_file_schema
            .fields()
            .iter()
            .map(|f| {
                let Some(c) = cols.column(f.name()) else {
                    return Ok(Arc::clone(f));
                };
                let name = match cols.find(c, &physical_file_schema) {
                    Some(pf) => {
                        if let Some(mut r) = cols.relabel(c, pf)? {
                            r.fit_to(f.data_type());
                            relabelled.insert(pf.name().clone(), r);
                        }
                        pf.name().clone()
                    }
                    // A name the file has no field of: DataFusion reads the column as null,
                    // which is wrong where the table gives the file's rows a value of it.
                    None => {
                        if c.missing_not_null {
                            unreadable.insert(f.name().clone());
                        }
                        let mut n = format!("{} (not in this file)", f.name());
                        while taken.contains(n.as_str()) {
                            n.push('_');
                        }
                        n
                    }
                };
                if name == *f.name() {
                    return Ok(Arc::clone(f));
                }
                renamed.insert(f.name().clone(), name.clone());
                Ok(Arc::new(f.as_ref().clone().with_name(name)))
            })
            .collect::<Result<_>>()?;
        let logical = Arc::new(Schema::new_with_metadata(
            fields,
            logical_file_schema.metadata().clone(),
        ));
        // DataFusion's adapter sees nested columns as relabelled (and casts them to the
        // table's type by inner names); the file's arrays are relabelled as they are read.
        let physical = match relabelled.is_empty() {
            true => physical_file_schema,
            false => {
                let fields: Fields = physical_file_schema
                    .fields()
                    .iter()
                    .map(|f| match relabelled.get(f.name()) {
                        Some(r) => Arc::clone(r.field()),
                        None => Arc::clone(f),
                    })
                    .collect();
                Arc::new(Schema::new_with_metadata(
                    fields,
                    physical_file_schema.metadata().clone(),
                ))
            }
        };
        Ok(Arc::new(FileColumns {
            table: cols.table.clone(),
            unreadable,
            renamed,
            relabelled,
            inner: DefaultPhysicalExprAdapterFactory.create(logical, physical)?,
        }))
    }
}

/// The adapter of one file: column references renamed to the file's names, adapted by
/// DataFusion's default adapter, then nested columns relabelled as read.
#[derive(Debug)]
struct FileColumns {
    /// The table, for errors.
    table: String,
    /// Columns the file does not hold although the table gives its rows values of them
    /// (`LakeColumn::missing_not_null`): an Iceberg identity partition's source, whose values
    /// are the file's partition tuple's, or a column with an `initial-default`. Read as null
    /// they would be wrong, so a query that reads one is refused.
    unreadable: HashSet<String>,
    /// Table name -> the file's name for it.
    renamed: HashMap<String, String>,
    /// Nested columns whose inner fields the file names otherwise than the table (Delta
    /// physical names; Iceberg fields renamed or dropped since), by the file's name:
    /// DataFusion matches inner fields by name, so they are relabelled first.
    relabelled: HashMap<String, Relabel>,
    inner: Arc<dyn PhysicalExprAdapter>,
}

impl PhysicalExprAdapter for FileColumns {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        if !self.unreadable.is_empty() {
            expr.apply(|e| match e.downcast_ref::<Column>() {
                Some(c) if self.unreadable.contains(c.name()) => {
                    Err(DataFusionError::NotImplemented(format!(
                        "{}: a data file does not hold column `{}`, whose values for its rows \
                         the table keeps elsewhere (an Iceberg identity partition's source \
                         column, in the file's partition tuple; or the column's initial \
                         default): reading them from there is not supported yet, and reading \
                         the column as null would be wrong",
                        self.table,
                        c.name()
                    )))
                }
                _ => Ok(TreeNodeRecursion::Continue),
            })?;
        }
        let expr = expr
            .transform(|e| {
                let Some(c) = e.downcast_ref::<Column>() else {
                    return Ok(Transformed::no(e));
                };
                Ok(match self.renamed.get(c.name()) {
                    Some(to) => Transformed::yes(Arc::new(Column::new(to, c.index())) as _),
                    None => Transformed::no(e),
                })
            })
            .data()?;
        let expr = self.inner.rewrite(expr)?;
        if self.relabelled.is_empty() {
            return Ok(expr);
        }
        // Bottom up: each reference to such a column read through its relabelling.
        expr.transform_up(|e| {
            let Some(c) = e.downcast_ref::<Column>() else {
                return Ok(Transformed::no(e));
            };
            Ok(match self.relabelled.get(c.name()) {
                Some(r) => Transformed::yes(Arc::new(Relabelled {
                    column: Arc::clone(&e),
                    relabel: r.clone(),
                }) as _),
                None => Transformed::no(e),
            })
        })
        .data()
    }
}

/// A nested column of a data file read under the table's inner names ([`Relabel`]).
#[derive(Debug, Eq)]
struct Relabelled {
    column: Arc<dyn PhysicalExpr>,
    relabel: Relabel,
}

impl PartialEq for Relabelled {
    fn eq(&self, other: &Self) -> bool {
        self.column.as_ref() == other.column.as_ref() && self.relabel == other.relabel
    }
}

impl std::hash::Hash for Relabelled {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.column.as_ref().hash(state);
        self.relabel.hash(state);
    }
}

impl std::fmt::Display for Relabelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "relabelled({})", self.column)
    }
}

impl PhysicalExpr for Relabelled {
    fn return_field(&self, _input_schema: &Schema) -> Result<FieldRef> {
        Ok(Arc::clone(self.relabel.field()))
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let array = self.column.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(self.relabel.apply(&array)?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.column]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let [column] = <[_; 1]>::try_from(children).map_err(|c| {
            DataFusionError::Internal(format!("a relabelling takes 1 child, not {}", c.len()))
        })?;
        Ok(Arc::new(Relabelled {
            column,
            relabel: self.relabel.clone(),
        }))
    }

    fn fmt_sql(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.column.fmt_sql(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::parquet::arrow::PARQUET_FIELD_ID_META_KEY;
    use sbbf_lake::rows::field_id;

    fn with_id(name: &str, id: i64) -> Field {
        Field::new(name, DataType::Int64, true).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    }

    fn iceberg(columns: &[(&str, i64)]) -> Columns {
        Columns {
            format: Format::Iceberg,
            table: "t".into(),
            columns: columns
                .iter()
                .map(|(n, id)| LakeColumn {
                    name: n.to_string(),
                    field_id: Some(*id),
                    data_type: Some("long".into()),
                    ..Default::default()
                })
                .collect(),
        }
    }

    #[test]
    fn ids_decide_where_names_were_swapped_or_reused() {
        // The table swapped `a` and `b`; `c` was dropped and added again (id 4).
        let cols = iceberg(&[("a", 2), ("b", 1), ("c", 4)]);
        let file = Schema::new(vec![with_id("a", 1), with_id("b", 2), with_id("c", 3)]);
        let seen = cols.file_schema_as_table(&file).unwrap();
        let names: Vec<(&str, i64)> = seen
            .fields()
            .iter()
            .map(|f| (f.name().as_str(), field_id(f).unwrap()))
            .collect();
        assert_eq!(names, [("a", 2), ("b", 1)]);
        assert!(!cols.same_names(&file, ["a"].into_iter()));
        assert!(!cols.same_names(&file, ["c"].into_iter()));
        let plain = Schema::new(vec![with_id("a", 2)]);
        assert!(cols.same_names(&plain, ["a", "zz"].into_iter()));
        // A column in no file is typed from the table; an unknown type is refused.
        let t = cols.table_schema(&seen).unwrap();
        assert_eq!(t.field(2).data_type(), &DataType::Int64);
    }

    #[test]
    fn a_struct_whose_inner_fields_were_renamed_reads_by_field_id() {
        use datafusion::arrow::array::{Array, AsArray, Int32Array, Int64Array, StructArray};
        let id = |n: i64| HashMap::from([(PARQUET_FIELD_ID_META_KEY.to_string(), n.to_string())]);
        // The table: `s` (id 4) holds `b` (id 5, written as `a`) and `a` (id 7, added after
        // `a` was renamed: the old file has no such field); the file also holds `x` (id 6,
        // dropped since).
        let mut cols = iceberg(&[("id", 1), ("s", 4)]);
        cols.columns[1].inner_renamed = true;
        cols.columns[1].inner_names = vec![
            sbbf_lake::InnerName {
                id: Some(5),
                name: "b".into(),
                ..Default::default()
            },
            sbbf_lake::InnerName {
                id: Some(7),
                name: "a".into(),
                ..Default::default()
            },
        ];
        let cols = Arc::new(cols);
        let file_inner = Fields::from(vec![
            Field::new("a", DataType::Int32, true).with_metadata(id(5)),
            Field::new("x", DataType::Int32, true).with_metadata(id(6)),
        ]);
        let table_inner = Fields::from(vec![
            Field::new("b", DataType::Int32, true).with_metadata(id(5)),
            Field::new("a", DataType::Int32, true).with_metadata(id(7)),
        ]);
        let s = |inner: &Fields| {
            Field::new("s", DataType::Struct(inner.clone()), true).with_metadata(id(4))
        };
        let file = Arc::new(Schema::new(vec![with_id("id", 1), s(&file_inner)]));
        let table = Arc::new(Schema::new(vec![with_id("id", 1), s(&table_inner)]));
        // Our filters read by name: not asked for such a column.
        assert!(!cols.same_names(&file, ["s.b"].into_iter()));
        assert!(cols.same_names(&file, ["id"].into_iter()));
        // The file's schema as the table names it: `a` is `b` there, `x` is gone.
        let as_table = cols.file_schema_as_table(&file).unwrap();
        let DataType::Struct(seen) = as_table.field(1).data_type() else {
            panic!("{as_table:?}")
        };
        let names: Vec<&str> = seen.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["b"]);

        let adapter = ByTableColumns(Arc::clone(&cols))
            .create(Arc::clone(&table), Arc::clone(&file))
            .unwrap();
        let expr = adapter.rewrite(Arc::new(Column::new("s", 1))).unwrap();
        let batch = RecordBatch::try_new(
            Arc::clone(&file),
            vec![
                Arc::new(Int64Array::from(vec![1, 2])),
                Arc::new(StructArray::new(
                    file_inner,
                    vec![
                        Arc::new(Int32Array::from(vec![10, 20])),
                        Arc::new(Int32Array::from(vec![-1, -2])),
                    ],
                    None,
                )),
            ],
        )
        .unwrap();
        let out = expr.evaluate(&batch).unwrap().into_array(2).unwrap();
        let out = out.as_struct();
        assert_eq!(out.fields(), &table_inner);
        let b = out
            .column_by_name("b")
            .unwrap()
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        assert_eq!(b.values().to_vec(), [10, 20]);
        // The old `a` (now `b`) is not read as the new `a`, nor is the dropped `x`.
        assert_eq!(out.column_by_name("a").unwrap().null_count(), 2);
        assert!(adapter.rewrite(Arc::new(Column::new("id", 0))).is_ok());
    }

    #[test]
    fn bounds_rule_out_what_no_branch_can_match() {
        let b = [Bounds {
            column: "id".into(),
            min: Some(Literal::Int(10)),
            max: Some(Literal::Int(20)),
        }];
        let eq = |v| Predicate::eq("id", Literal::Int(v));
        assert!(!may_match(&eq(5), &b));
        assert!(may_match(&eq(15), &b));
        assert!(may_match(&Predicate::eq("other", Literal::Int(5)), &b));
        assert!(!may_match(
            &Predicate::In("id".into(), vec![Literal::Int(1), Literal::Int(30)]),
            &b
        ));
        assert!(may_match(&Predicate::Or(vec![eq(5), eq(12)]), &b));
        assert!(!may_match(&Predicate::And(vec![eq(12), eq(25)]), &b));
    }
}
