//! The table's schema, learnt when the table is made: from every footer, merged (strings and
//! binaries of different kinds read as the view type, a column some file lacks nullable),
//! or from as few footers as the table index allows ([`schema_from_index`]).

use crate::index::{Known, KnownFiles};
use crate::listing::object_name;
use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::Result;
use datafusion::datasource::listing::{ListingOptions, ListingTableUrl};
use futures::StreamExt;
use object_store::ObjectStore;
use std::sync::Arc;

/// The schema DataFusion infers for the table at `url` (listed as `files` in `store`) from
/// every footer, from as few footers as the index at `root` allows: one per schema fingerprint among the files it knows
/// as they are now, every other file's (`sbbf_index::probe::known_files`); and what the index
/// knows of those files' row groups, by object path, from the same read of its file table.
/// `None` without a usable index (then every footer is read).
pub(crate) async fn schema_from_index(
    state: &dyn Session,
    url: &ListingTableUrl,
    options: &ListingOptions,
    root: &sbbf_index::Root,
    (store, files): (&Arc<dyn ObjectStore>, &[object_store::ObjectMeta]),
) -> Option<(SchemaRef, KnownFiles)> {
    let (loaded, _) = root.load().await.ok()??;
    // Empty files tell no schema (DataFusion leaves them out too); its order, by location.
    let mut files: Vec<object_store::ObjectMeta> =
        files.iter().filter(|m| m.size > 0).cloned().collect();
    files.sort_by(|a, b| a.location.cmp(&b.location));
    if files.is_empty() {
        return None;
    }
    let rel = |m: &object_store::ObjectMeta| -> Option<String> {
        Some(url.strip_prefix(&m.location)?.collect::<Vec<_>>().join("/"))
    };
    // The index's view of the same files, each beside DataFusion's: an object's listing as
    // DataFusion's gave it, a local file as the index lists it (inode and times).
    let pairs: Vec<(object_store::ObjectMeta, sbbf_index::Listed)> = match root {
        sbbf_index::Root::Store { .. } => files
            .iter()
            .cloned()
            .zip(root.listed_objects(files.clone()))
            .collect(),
        sbbf_index::Root::Local { .. } => {
            let mut by_rel: std::collections::HashMap<String, sbbf_index::Listed> = root
                .list()
                .await
                .ok()?
                .into_iter()
                .map(|l| (l.rel.clone(), l))
                .collect();
            files
                .iter()
                .filter_map(|m| Some((m.clone(), by_rel.remove(&rel(m)?)?)))
                .collect()
        }
    };
    let listing: Vec<sbbf_index::Listed> = pairs.iter().map(|(_, l)| l.clone()).collect();
    let mut reads = Default::default();
    let told_by_index = sbbf_index::probe::known_files(root, &loaded, &listing, &mut reads)
        .await
        .ok()?;
    let told: std::collections::HashSet<&str> = told_by_index
        .schema_files
        .iter()
        .map(|&i| listing[i].rel.as_str())
        .collect();
    let listed: std::collections::HashSet<&str> = listing.iter().map(|l| l.rel.as_str()).collect();
    // A file DataFusion lists and the index's listing does not (or whose name does not map)
    // is read as well.
    let chosen: Vec<object_store::ObjectMeta> = files
        .iter()
        .filter(|m| match rel(m) {
            Some(r) => told.contains(r.as_str()) || !listed.contains(r.as_str()),
            None => true,
        })
        .cloned()
        .collect();
    let known: KnownFiles = pairs
        .iter()
        .zip(told_by_index.row_counts)
        .filter_map(|((m, l), counts)| {
            let row_counts = counts?;
            let file = sbbf_index::probe::KnownFile {
                ruled_out: vec![false; row_counts.len()],
                exact: vec![true; row_counts.len()],
                row_counts,
            };
            Some((
                m.location.to_string(),
                Known::new(l, file).with_meta(m.clone()),
            ))
        })
        .collect();
    let schema = infer_schema(state, options, url, store, &chosen, true, None)
        .await
        .ok()?;
    Some((schema, known))
}

/// The schema of the table at `url` whose files are `files` (of `store`): each file's as
/// DataFusion reads it (its format options applied), merged in the order of their locations
/// (`merge`), or the first's (a local glob's files, as DataFusion takes the schema of a list
/// of files; the others' footers are still read, so that a damaged one is named now, and
/// the scan finds them in the cache). A footer that cannot be read is an error naming its
/// file.
///
/// Files may differ in the kind of a string or binary column (`string` in one, `string_view`
/// in another: delta-rs rewrites files with views; large types), which DataFusion's merge
/// refuses: such a column is read as the view type in every file, as DuckDB and pyarrow
/// read those files as one table.
pub(crate) async fn infer_schema(
    state: &dyn Session,
    options: &ListingOptions,
    url: &ListingTableUrl,
    store: &Arc<dyn ObjectStore>,
    files: &[object_store::ObjectMeta],
    merge: bool,
    as_table: Option<&crate::lake::Columns>,
) -> Result<SchemaRef> {
    use datafusion::common::DataFusionError;
    use futures::TryStreamExt;
    let format = &options.format;
    let concurrency = state
        .config_options()
        .execution
        .meta_fetch_concurrency
        .get();
    // By location, as DataFusion orders them: columns in the order files bring them, and the
    // first damaged file in that order is the one named, whatever the reads' timing.
    let mut files: Vec<&object_store::ObjectMeta> = files.iter().filter(|m| m.size > 0).collect();
    files.sort_by(|a, b| a.location.cmp(&b.location));
    let schemas: Vec<(object_store::path::Path, SchemaRef)> = futures::stream::iter(files)
        .map(|m| async move {
            match format
                .infer_schema(state, store, std::slice::from_ref(m))
                .await
            {
                // A lake table's files, each as the table names its columns.
                Ok(schema) => Ok((
                    m.location.clone(),
                    match as_table {
                        Some(cols) => Arc::new(cols.file_schema_as_table(&schema)?),
                        None => schema,
                    },
                )),
                Err(e) => Err(DataFusionError::Execution(format!(
                    "{}: {e}",
                    object_name(url, &m.location)
                ))),
            }
        })
        .buffered(concurrency)
        .try_collect()
        .await?;
    if !merge {
        return Ok(schemas
            .into_iter()
            .next()
            .map(|(_, s)| s)
            .unwrap_or_else(|| Arc::new(Schema::empty())));
    }
    let merged = match Schema::try_merge(schemas.iter().map(|(_, s)| s.as_ref().clone())) {
        Ok(s) => s,
        Err(_) => {
            let mut merged = Schema::empty();
            for (location, schema) in &schemas {
                merged = merge_views(&merged, schema).map_err(|e| {
                    DataFusionError::Plan(format!(
                        "{}: its schema does not merge with that of the files before it: {e}",
                        object_name(url, location)
                    ))
                })?;
            }
            merged
        }
    };
    let all: Vec<&Schema> = schemas.iter().map(|(_, s)| s.as_ref()).collect();
    let merged = nullable_where_missing(merged, &all);
    Ok(Arc::new(match as_table {
        Some(cols) => cols.table_schema(&merged)?,
        None => merged,
    }))
}

/// `merged` with every column (and struct field) that some file of `files` lacks made
/// nullable: that file's rows hold nulls there. A column declared non-null in the files
/// that have it would otherwise fail the scan of a file without it.
fn nullable_where_missing(merged: Schema, files: &[&Schema]) -> Schema {
    use datafusion::arrow::datatypes::{Field, Fields};
    /// The field with every child some of `others` (the same field in each file that has
    /// it) lacks made nullable, itself too when `missing`.
    fn fix(field: &Field, others: &[&Field], missing: bool) -> Field {
        let mut f = field.clone();
        if missing {
            f = f.with_nullable(true);
        }
        if let DataType::Struct(children) = field.data_type() {
            let fixed: Fields = children
                .iter()
                .map(|c| {
                    let theirs: Vec<&Field> = others
                        .iter()
                        .filter_map(|o| match o.data_type() {
                            DataType::Struct(cs) => cs.find(c.name()).map(|(_, x)| x.as_ref()),
                            _ => None,
                        })
                        .collect();
                    Arc::new(fix(c, &theirs, theirs.len() < others.len()))
                })
                .collect();
            f = f.with_data_type(DataType::Struct(fixed));
        }
        f
    }
    let fields: Vec<Field> = merged
        .fields()
        .iter()
        .map(|f| {
            let theirs: Vec<&Field> = files
                .iter()
                .filter_map(|s| s.field_with_name(f.name()).ok())
                .collect();
            fix(f, &theirs, theirs.len() < files.len())
        })
        .collect();
    Schema::new_with_metadata(fields, merged.metadata().clone())
}

/// `a` and `b` merged as Arrow merges schemas (columns and struct fields added, each type
/// the same in both), except that a string or binary column of two kinds is one column of
/// the view type.
fn merge_views(a: &Schema, b: &Schema) -> std::result::Result<Schema, String> {
    use datafusion::arrow::datatypes::Field;
    let mut fields: Vec<Field> = a.fields().iter().map(|f| f.as_ref().clone()).collect();
    for f in b.fields() {
        match fields.iter_mut().find(|g| g.name() == f.name()) {
            Some(g) => {
                let t = reconcile(g.data_type(), f.data_type()).ok_or_else(|| {
                    format!(
                        "column {} is {} there and {} before",
                        f.name(),
                        f.data_type(),
                        g.data_type()
                    )
                })?;
                let nullable = g.is_nullable() || f.is_nullable();
                *g = g.clone().with_data_type(t).with_nullable(nullable);
            }
            None => fields.push(f.as_ref().clone()),
        }
    }
    let mut metadata = a.metadata().clone();
    for (k, v) in b.metadata() {
        metadata.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(Schema::new_with_metadata(fields, metadata))
}

/// One type for `a` and `b`: the same, one where the other is null, or, for strings (and
/// for binaries) of different kinds, the view type; struct fields merged by name, list
/// items and map entries reconciled. `None`: no one type.
fn reconcile(a: &DataType, b: &DataType) -> Option<DataType> {
    use datafusion::arrow::datatypes::FieldRef;
    let string =
        |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
    let binary = |t: &DataType| {
        matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        )
    };
    let field = |x: &FieldRef, y: &FieldRef| -> Option<FieldRef> {
        (x.name() == y.name()).then_some(())?;
        let t = reconcile(x.data_type(), y.data_type())?;
        let nullable = x.is_nullable() || y.is_nullable();
        Some(Arc::new(
            x.as_ref().clone().with_data_type(t).with_nullable(nullable),
        ))
    };
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (DataType::Null, t) | (t, DataType::Null) => t.clone(),
        _ if string(a) && string(b) => DataType::Utf8View,
        _ if binary(a) && binary(b) => DataType::BinaryView,
        (DataType::Struct(x), DataType::Struct(y)) => {
            let mut fields: Vec<FieldRef> = x.iter().cloned().collect();
            for f in y.iter() {
                match fields.iter_mut().find(|g| g.name() == f.name()) {
                    Some(g) => *g = field(g, f)?,
                    None => fields.push(Arc::clone(f)),
                }
            }
            DataType::Struct(fields.into())
        }
        (DataType::List(x), DataType::List(y)) => DataType::List(field(x, y)?),
        (DataType::LargeList(x), DataType::LargeList(y)) => DataType::LargeList(field(x, y)?),
        (DataType::FixedSizeList(x, n), DataType::FixedSizeList(y, m)) if n == m => {
            DataType::FixedSizeList(field(x, y)?, *n)
        }
        (DataType::Map(x, s), DataType::Map(y, t)) if s == t => DataType::Map(field(x, y)?, *s),
        _ => return None,
    })
}
