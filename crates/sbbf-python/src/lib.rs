//! `sbbf._sbbf`: the native half of the Python package `sbbf` (the Python half, in
//! `python/sbbf/`, turns Python objects into what this module takes and shapes its answers).
//!
//! Every value rule lives in `sbbf-parquet`: text goes through the command line's reader
//! (`value::encode_text`), typed values through the stored-value layer (`stored::encode`), Arrow
//! arrays (pyarrow, numpy through pyarrow) through `arrow_values`. Nothing here encodes a value.
//! The GIL is released around file I/O, probing and batch filter work.

use arrow::array::{make_array, Array, ArrayData, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Field, Float32Type, Float64Type, Int32Type, Int64Type, Schema};
use arrow::pyarrow::{FromPyArrow, PyArrowType};
use parquet::arrow::ArrowSchemaConverter;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString, PyTuple};
use sbbf_parquet::format::column::{escape_field, ColumnType};
use sbbf_parquet::prune::{Dnf, Leaf, Test};
use sbbf_parquet::report::{ErrorLine, ProbeLine, WriteSummary};
use sbbf_parquet::values::text::{encode_text, EncodeOptions, InputMode};
use sbbf_parquet::{Encoded, Literal, ParquetFile};
use std::fs::File;

/// A failure, by the Python exception class it becomes (`sbbf._errors`).
#[derive(Debug)]
enum Failure {
    /// Bad input: a value, a column, an option (`sbbf.InputError`, a `ValueError`).
    Input(String),
    /// A file that cannot be read or written (`sbbf.FileError`, an `OSError`).
    File(String),
}

impl Failure {
    /// A library error, by whose fault the library says it is.
    fn of(e: &sbbf_parquet::Error) -> Failure {
        let msg = match e {
            // The reason names the path already.
            sbbf_parquet::Error::Read(r @ sbbf_parquet::ReadError::NoFiles { .. }) => r.to_string(),
            e => e.to_string(),
        };
        match e.fault() {
            sbbf_parquet::Fault::Input => Failure::Input(msg),
            _ => Failure::File(msg),
        }
    }

    fn into_py(self) -> PyErr {
        let (class, msg) = match self {
            Failure::Input(m) => ("InputError", m),
            Failure::File(m) => ("FileError", m),
        };
        Python::attach(|py| {
            match py
                .import("sbbf._errors")
                .and_then(|m| m.getattr(class))
                .and_then(|c| c.call1((msg,)))
            {
                Ok(e) => PyErr::from_value(e),
                Err(e) => e,
            }
        })
    }
}

impl From<sbbf_parquet::Error> for Failure {
    fn from(e: sbbf_parquet::Error) -> Failure {
        Failure::of(&e)
    }
}

impl Failure {
    /// The failure with the file named first, as the command's messages do (`path: why`).
    fn at(self, path: &str) -> Failure {
        // Some messages name the path already (a listing's `PATH: no such file`).
        let named = |m: &str| m.strip_prefix(path).is_some_and(|r| r.starts_with(": "));
        match self {
            Failure::Input(m) if !named(&m) => Failure::Input(format!("{path}: {m}")),
            Failure::File(m) if !named(&m) => Failure::File(format!("{path}: {m}")),
            named_already => named_already,
        }
    }
}

/// A file opened for reading filters.
fn open(path: &str) -> Result<ParquetFile<File>, Failure> {
    let file = File::open(path).map_err(|e| Failure::File(e.to_string()))?;
    Ok(ParquetFile::open(file)?)
}

/// A value as the caller gave it.
enum Value {
    /// Text, read by the column's type as the command line reads it.
    Text(String),
    /// A typed value.
    Typed(Literal),
}

/// One Python object as a value: `str` is text; `bool`, `int`, `float`, `bytes` are literals;
/// anything else must be an Arrow array of one element (the Python side makes one for dates,
/// datetimes, times, decimals and numpy scalars) read by `Literal::from_arrow`.
fn value_of(ob: &Bound<'_, PyAny>) -> PyResult<Value> {
    if ob.is_instance_of::<PyString>() {
        return Ok(Value::Text(ob.extract()?));
    }
    if ob.is_instance_of::<PyBool>() {
        return Ok(Value::Typed(Literal::Bool(ob.extract()?)));
    }
    if ob.is_instance_of::<PyInt>() {
        // Wider than 128 bits: no column holds it, but say "cannot tell" rather than guess.
        return Ok(Value::Typed(match ob.extract::<i128>() {
            Ok(i) => Literal::Int(i),
            Err(_) => Literal::Other("an integer wider than 128 bits".into()),
        }));
    }
    if ob.is_instance_of::<PyFloat>() {
        return Ok(Value::Typed(Literal::Float64(ob.extract()?)));
    }
    if let Ok(b) = ob.cast::<PyBytes>() {
        return Ok(Value::Typed(Literal::Binary(b.as_bytes().to_vec())));
    }
    let array = array_of(ob)?;
    match (array.len(), Literal::from_arrow(array.as_ref(), 0)) {
        (1, Some(lit)) => Ok(Value::Typed(lit)),
        (1, None) => Ok(Value::Typed(Literal::Other("a null".into()))),
        (n, _) => Err(
            Failure::Input(format!("a value must be one element, got an array of {n}")).into_py(),
        ),
    }
}

fn array_of(ob: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    Ok(make_array(ArrayData::from_pyarrow_bound(ob)?))
}

impl Value {
    fn encode(&self, ty: &ColumnType, exact_bits: bool) -> Result<Encoded, sbbf_parquet::Error> {
        match self {
            Value::Text(t) => Ok(encode_text(
                ty,
                t,
                EncodeOptions {
                    exact_bits,
                    input: InputMode::Typed,
                },
            )?),
            Value::Typed(lit) => Ok(sbbf_parquet::values::stored::encode(ty, lit, exact_bits)),
        }
    }
}

fn to_json(line: &impl serde::Serialize) -> String {
    // Strings and numbers only: serializing cannot fail.
    serde_json::to_string(line).unwrap_or_default()
}

/// Probes `column` of the files `source` names (a file, a directory, a glob, an object-store
/// URL or prefix) for `values`, through the library's one path for local and remote files:
/// one JSON object per file in path order, as `sbbf probe --format json` prints them. With
/// one file an error is raised; with several (a directory, glob or prefix), a file without
/// the column and a file that fails are lines of their own, and an error is raised only when
/// no file has the column. A table root with an index (`sbbf index build`) is answered from it
/// for the files it rules out, unless `use_index` is false; the other files are probed as
/// without one. Returns the lines and a warning about an unusable index.
#[pyfunction]
#[pyo3(signature = (source, column, values, shown_values, exact_bits, use_index = true, as_of = None, as_directory = false, catalog = None, catalog_name = None))]
#[allow(clippy::too_many_arguments)]
fn probe_source(
    py: Python<'_>,
    source: String,
    column: String,
    values: Vec<Bound<'_, PyAny>>,
    shown_values: Vec<String>,
    exact_bits: bool,
    use_index: bool,
    as_of: Option<String>,
    as_directory: bool,
    catalog: Option<String>,
    catalog_name: Option<String>,
) -> PyResult<(Vec<String>, Option<String>)> {
    let lake = lake_options(as_of, as_directory).map_err(Failure::into_py)?;
    let at = table_ref(&source, catalog, catalog_name).map_err(Failure::into_py)?;
    use sbbf_index::each::ProbeEach;
    use sbbf_parquet::report::{Counted, ProbeTally};
    use sbbf_parquet::source::block_on;
    let values: Vec<Value> = values.iter().map(value_of).collect::<PyResult<_>>()?;
    let values = std::sync::Arc::new(values);
    let encode = move |ty: &ColumnType| {
        values
            .iter()
            .map(|v| v.encode(ty, exact_bits))
            .collect::<Result<Vec<_>, _>>()
    };
    let result = py.detach(|| -> Result<(Vec<String>, Option<String>), Failure> {
        block_on(async {
            let options = sbbf_lake::TableOptions {
                lake,
                ..Default::default()
            };
            let probe = ProbeEach::open(at, &column, encode, options, use_index).await?;
            let warning = probe.warning().map(str::to_string);
            let mut tally = ProbeTally::new(&column, shown_values.len(), probe.is_many());
            let mut lines = Vec::new();
            // With one file its error is raised; among several it is a line of its own.
            let mut failed = None;
            let run = probe.run(|p| {
                let e = match &p.result {
                    Ok(f) => {
                        tally.add_answers(&f.answers, f.io);
                        let line =
                            ProbeLine::new(&p.file, &f.column, &f.answers, &shown_values, None)
                                .as_asked(&column);
                        lines.push(to_json(&line));
                        return;
                    }
                    Err(e) => e,
                };
                match tally.add_error(e) {
                    Counted::WithoutColumn => {
                        lines.push(to_json(&ProbeLine::missing_column(&p.file, &column)))
                    }
                    _ if tally.many => lines.push(to_json(&ErrorLine {
                        error: e.to_string(),
                        file: &p.file,
                    })),
                    _ => {
                        failed.get_or_insert_with(|| Failure::of(e).at(&p.file));
                    }
                }
            });
            run.await.map_err(|e| Failure::File(e.to_string()))?;
            if let Some(f) = failed {
                return Err(f);
            }
            if let Some(e) = tally.no_file_has_column() {
                return Err(Failure::from(e));
            }
            Ok((lines, warning))
        })?
    });
    result.map_err(Failure::into_py)
}

/// Where `source` is: `NS.TABLE` in the catalog at `catalog` (`sqlite:///PATH` or
/// `http(s)://...`, `catalog_name` choosing among several) when one is given, else a path or
/// URL (a `file://` URL as its path).
fn table_ref(
    source: &str,
    catalog: Option<String>,
    catalog_name: Option<String>,
) -> Result<sbbf_lake::TableRef, Failure> {
    let catalog =
        catalog.map(|uri| sbbf_lake::catalog::Catalog::new(&uri, catalog_name.as_deref()));
    Ok(sbbf_lake::TableRef::new(source, catalog)?)
}

/// The Arrow type of a table's primitive type `name` as `format` (`delta` or `iceberg`) names
/// it: the library's one rule (`sbbf_lake::arrow_types`), which the DataFusion scan uses too;
/// `None` for a nested type or a name the format does not have.
#[pyfunction]
fn lake_type(format: &str, name: &str) -> PyResult<Option<PyArrowType<DataType>>> {
    let format = match format {
        "delta" => sbbf_lake::Format::Delta,
        "iceberg" => sbbf_lake::Format::Iceberg,
        _ => return Err(Failure::Input(format!("no table format {format:?}")).into_py()),
    };
    Ok(sbbf_lake::arrow_types::arrow_type(format, name).map(|t| PyArrowType(pyarrow_zone(&t))))
}

/// `t` with an instant's zone as pyarrow's Parquet reader spells it (`UTC`, where arrow-rs
/// writes `+00:00`): the same instants.
fn pyarrow_zone(t: &DataType) -> DataType {
    match t {
        DataType::Timestamp(u, Some(z)) if z.as_ref() == sbbf_lake::arrow_types::UTC => {
            DataType::Timestamp(*u, Some("UTC".into()))
        }
        t => t.clone(),
    }
}

/// Whether `arg` is an object-store URL the command reads (`s3://`, `gs://`, `az://`,
/// `http(s)://`, ...) rather than a local path.
#[pyfunction]
fn is_remote_url(arg: &str) -> bool {
    sbbf_parquet::source::object::is_remote_url(arg)
}

/// `arg` as every function reads a location: a `file://` URL as the local path it names,
/// anything else as given.
#[pyfunction]
fn local_location(arg: &str) -> PyResult<String> {
    sbbf_parquet::source::object::local_location(arg)
        .map(|l| l.into_owned())
        .map_err(|e| Failure::from(e).into_py())
}

/// One `(column, op, value)` of a pyarrow filter, as Python gives it.
type FilterLeaf<'py> = (Bound<'py, PyAny>, String, Bound<'py, PyAny>);

/// pyarrow's disjunctive normal form (a list of conjunctions), read.
fn read_filters(filters: &[Vec<FilterLeaf<'_>>]) -> PyResult<Dnf> {
    let literal = |v: &Bound<'_, PyAny>| -> PyResult<Option<Literal>> {
        if v.is_none() {
            return Ok(None);
        }
        Ok(Some(match value_of(v)? {
            Value::Text(t) => Literal::Utf8(t),
            Value::Typed(l) => l,
        }))
    };
    let mut out = Vec::with_capacity(filters.len());
    for conjunction in filters {
        let mut leaves = Vec::with_capacity(conjunction.len());
        for (column, op, value) in conjunction {
            // pyarrow names a top-level field by its name (dots and all), a nested one by a
            // tuple.
            let path = if let Ok(t) = column.cast::<PyTuple>() {
                let parts: Vec<String> = t.extract()?;
                Some(
                    parts
                        .iter()
                        .map(|p| escape_field(p))
                        .collect::<Vec<_>>()
                        .join("."),
                )
            } else {
                column.extract::<String>().ok().map(|n| escape_field(&n))
            };
            let test = match op.as_str() {
                "=" | "==" => literal(value)?.map_or(Test::Keep, Test::Eq),
                "in" => {
                    let mut lits = Vec::new();
                    let mut keep = false;
                    for v in value.try_iter()? {
                        // A null in the list matches null rows, which filters do not record.
                        match literal(&v?)? {
                            Some(l) => lits.push(l),
                            None => keep = true,
                        }
                    }
                    if keep {
                        Test::Keep
                    } else {
                        Test::In(lits)
                    }
                }
                _ => Test::Keep,
            };
            leaves.push(Leaf { column: path, test });
        }
        out.push(leaves);
    }
    Ok(Dnf(out))
}

/// The row groups of the file at `path` that may hold rows satisfying `filters`, pyarrow's
/// disjunctive normal form (a list of conjunctions of `(column, op, value)`), ascending. With
/// `strict`, a column the file does not have is an error (with the near misses), as for
/// `probe`; without (`read_table`, where partition columns are not in the files), it keeps
/// every row group.
#[pyfunction]
#[pyo3(signature = (path, filters, strict = false))]
fn row_groups(
    py: Python<'_>,
    path: String,
    filters: Vec<Vec<FilterLeaf<'_>>>,
    strict: bool,
) -> PyResult<Vec<usize>> {
    let filters = read_filters(&filters)?;
    py.detach(|| {
        let pq = open(&path)?;
        let mut missing = Vec::new();
        let predicate = filters.predicate_for(|c| pq.column_index(c), &mut missing);
        if let (true, Some((_, e))) = (strict, missing.into_iter().next()) {
            return Err(Failure::from(e));
        }
        match predicate {
            Some(p) => Ok(pq.prune(&p)?.row_groups),
            None => Ok((0..pq.metadata().num_row_groups()).collect()),
        }
    })
    .map_err(|f| f.at(&path).into_py())
}

/// `(file, row groups)` in path order.
type FileRowGroups = Vec<(String, Vec<usize>)>;

/// [`row_groups`] over every file `source` names (a directory, a glob, an object-store URL or
/// prefix): `(file, row groups)` in path order, and a warning about an unusable index. With
/// `strict`, a column no file has is an error; a file that lacks a column another has keeps
/// every row group (schema evolution). A table root with an index (unless `use_index` is
/// false) leaves out unread the files the index proves hold no matching row (an empty list).
#[pyfunction]
#[pyo3(signature = (source, filters, strict = true, use_index = true, as_of = None, as_directory = false, catalog = None, catalog_name = None))]
#[allow(clippy::too_many_arguments)]
fn row_groups_source(
    py: Python<'_>,
    source: String,
    filters: Vec<Vec<FilterLeaf<'_>>>,
    strict: bool,
    use_index: bool,
    as_of: Option<String>,
    as_directory: bool,
    catalog: Option<String>,
    catalog_name: Option<String>,
) -> PyResult<(FileRowGroups, Option<String>)> {
    use sbbf_parquet::source::block_on;
    use std::ops::ControlFlow;
    let filters = read_filters(&filters)?;
    let lake = lake_options(as_of, as_directory).map_err(Failure::into_py)?;
    let at = table_ref(&source, catalog, catalog_name).map_err(Failure::into_py)?;
    py.detach(|| {
        block_on(async {
            let mut out = Vec::new();
            let mut failed = None;
            let options = sbbf_lake::TableOptions {
                lake,
                ..Default::default()
            };
            let summary = sbbf_index::each::prune_each(
                at,
                filters,
                options,
                use_index,
                strict,
                |file, kept| match kept {
                    Ok(kept) => {
                        out.push((file, kept));
                        ControlFlow::Continue(())
                    }
                    Err(e) => {
                        failed = Some(Failure::from(e).at(&file));
                        ControlFlow::Break(())
                    }
                },
            )
            .await;
            if let Some(f) = failed {
                return Err(f);
            }
            Ok((out, summary?.warning))
        })?
    })
    .map_err(Failure::into_py)
}

/// Adds filters for `columns` to `input`, writing `output` (or `input` itself when `output`
/// is None, with the library's in-place rules and lock), with the keys of an encrypted file:
/// the report `sbbf add --format json` prints (the library's `WriteSummary`, as JSON).
#[pyfunction]
#[pyo3(signature = (input, output, columns, fpp, ndv, replace, force, footer_key, column_keys))]
#[allow(clippy::too_many_arguments)]
fn add_json(
    py: Python<'_>,
    input: String,
    output: Option<String>,
    columns: Vec<String>,
    fpp: f64,
    ndv: Option<u64>,
    replace: bool,
    force: bool,
    footer_key: Option<String>,
    column_keys: std::collections::BTreeMap<String, String>,
) -> PyResult<String> {
    use sbbf_parquet::write::output::{Destination, Refusal, WritePlan};
    let keys = key_set(footer_key, column_keys).map_err(Failure::into_py)?;
    let dest = match output {
        Some(path) => Destination::File {
            path: path.into(),
            force,
        },
        None => Destination::InPlace { force },
    };
    let plan = WritePlan::new(input.as_ref(), &dest).map_err(|e| {
        let hint = match e {
            Refusal::OutputExists(_) => "; use force=True to replace it",
            Refusal::ReadOnly | Refusal::HardLinks { .. } => "; force=True replaces it anyway",
            Refusal::TableFile { .. } => " (output=NEW_FILE)",
            _ => "",
        };
        let msg = match e {
            Refusal::OutputExists(_) | Refusal::OutputIsDirectory(_) => format!("{e}{hint}"),
            _ => format!("{input}: {e}{hint}"),
        };
        match e {
            Refusal::InputIsDirectory | Refusal::OutputIsDirectory(_) => Failure::Input(msg),
            _ => Failure::File(msg),
        }
        .into_py()
    })?;
    let opts = sbbf_parquet::write::AddOptions {
        columns,
        fpp,
        ndv,
        replace,
    };
    let report = py
        .detach(|| {
            sbbf_parquet::write::add_with_keys(
                plan.input(),
                plan.target(),
                &keys,
                &opts,
                &mut |_, _| {},
            )
        })
        .map_err(|e| Failure::from(e).at(&input).into_py())?;
    let target = plan.target().display().to_string();
    Ok(to_json(&WriteSummary::new("add", &input, &target, &report)))
}

/// Adds filters to (`command` `add`) or folds the filters of (`resize`) the current data files
/// of the Delta or Iceberg table `table` (with `catalog`: `NS.TABLE` in that catalog) and
/// commits one new version swapping them for their copies, as `sbbf add TABLE` does: the
/// report `sbbf add TABLE --format json` prints (the library's `TableWriteSummary`). `None`
/// when `table` is no table (the caller then asks for an output).
#[pyfunction]
#[pyo3(signature = (command, table, columns, fpp, ndv, replace, catalog=None, catalog_name=None))]
#[allow(clippy::too_many_arguments)]
fn table_write_json(
    py: Python<'_>,
    command: String,
    table: String,
    columns: Vec<String>,
    fpp: f64,
    ndv: Option<u64>,
    replace: bool,
    catalog: Option<String>,
    catalog_name: Option<String>,
) -> PyResult<Option<String>> {
    use sbbf_lake::backfill::{write_table, Rewrite};
    use sbbf_lake::TableRef;
    let rewrite = match command.as_str() {
        "resize" => Rewrite::Resize { fpp, columns },
        _ => Rewrite::Add(sbbf_parquet::write::AddOptions {
            columns,
            fpp,
            ndv,
            replace,
        }),
    };
    py.detach(|| -> Result<Option<String>, Failure> {
        let at = match catalog {
            Some(uri) => TableRef::Catalog {
                catalog: sbbf_lake::catalog::Catalog::new(&uri, catalog_name.as_deref()),
                table: table.clone(),
            },
            None => TableRef::Path(table.clone()),
        };
        let lake = sbbf_lake::LakeOptions::default();
        let located = sbbf_lake::Table::locate(at, &lake);
        let located = sbbf_parquet::source::block_on(located)??;
        if !located.is_table() {
            return Ok(None);
        }
        let folder = match located.at() {
            TableRef::Path(p) => Some(p.clone()),
            TableRef::Catalog { .. } => None,
        };
        let done =
            sbbf_parquet::source::block_on(write_table(&located, &rewrite, &mut |_, _| {}))??;
        // The table's index (when it has one) follows the swapped files to their copies, as
        // `sbbf add TABLE` does; an index that cannot is left stale, which is safe (stale
        // entries are never trusted: the copies are read directly).
        if let Some(folder) = folder {
            let follow = sbbf_index::build::follow_table_write(&folder, &done);
            let _ = sbbf_parquet::source::block_on(follow);
        }
        Ok(Some(to_json(&sbbf_lake::backfill::TableWriteSummary::new(
            &command, &done,
        ))))
    })
    .map_err(Failure::into_py)
}

/// The keys of an encrypted file from Python: the footer key and column keys, each text or
/// `0x` hex (as the command's --footer-key and --column-key take them).
fn key_set(
    footer_key: Option<String>,
    column_keys: std::collections::BTreeMap<String, String>,
) -> Result<sbbf_parquet::KeySet, Failure> {
    let parse = |k: &str| sbbf_parquet::Key::parse(k).map_err(|e| Failure::Input(e.to_string()));
    let mut keys = sbbf_parquet::KeySet::new();
    if let Some(k) = footer_key {
        keys = keys.with_footer_key(parse(&k)?);
    }
    for (c, k) in column_keys {
        keys = keys.with_column_key(c, parse(&k)?);
    }
    Ok(keys)
}

/// The reports of every file `source` names, as JSON lines (the command's `--format json`),
/// and whether it names several. With one file its error is raised; with several, a file that
/// fails is `{"file", "error"}` and an error is raised only when no file has an asked column.
fn each_file<T: serde::Serialize>(
    tally: Result<
        (sbbf_parquet::report::Tally, Option<sbbf_lake::TableVersion>),
        sbbf_parquet::Error,
    >,
    lines: Vec<(String, Result<T, sbbf_parquet::Error>)>,
    source: &str,
) -> Result<(bool, Vec<String>), Failure> {
    let tally = tally
        .map_err(|e| match e {
            // The reason names the path already.
            sbbf_parquet::Error::Read(sbbf_parquet::ReadError::NoFiles { .. }) => Failure::from(e),
            e => Failure::from(e).at(source),
        })?
        .0;
    if let Some(e) = tally.no_file_has_column() {
        return Err(Failure::from(e));
    }
    let mut out = Vec::with_capacity(lines.len());
    for (file, report) in lines {
        match report {
            Ok(r) => out.push(to_json(&r)),
            Err(e) if tally.many => out.push(to_json(&ErrorLine {
                error: e.to_string(),
                file: &file,
            })),
            Err(e) => return Err(Failure::from(e).at(&file)),
        }
    }
    Ok((tally.many, out))
}

/// Every filter of the files `source` names (a file, a directory, a glob, an object-store
/// URL), of `columns` when given, as `sbbf inspect --format json` prints them (the library's
/// `InspectReport`s, as JSON), and whether there are several files.
#[pyfunction]
#[pyo3(signature = (source, columns, footer_key, column_keys, as_of = None, as_directory = false))]
fn inspect_source(
    py: Python<'_>,
    source: String,
    columns: Vec<String>,
    footer_key: Option<String>,
    column_keys: std::collections::BTreeMap<String, String>,
    as_of: Option<String>,
    as_directory: bool,
) -> PyResult<(bool, Vec<String>)> {
    py.detach(|| {
        let keys = key_set(footer_key, column_keys)?;
        let lake = lake_options(as_of, as_directory)?;
        let mut lines = Vec::new();
        let tally = sbbf_lake::each::inspect_each(&source, &lake, &keys, &columns, |f| {
            lines.push((f.file, f.report))
        });
        each_file(tally, lines, &source)
    })
    .map_err(Failure::into_py)
}

/// Checks the filters of `columns` (every column with a filter when empty) against the data
/// in the files `source` names, as `sbbf verify --format json` prints them (the library's
/// `VerifyReport`s, as JSON), and whether there are several files.
#[pyfunction]
#[pyo3(signature = (source, columns, samples, footer_key, column_keys, as_of = None, as_directory = false))]
#[allow(clippy::too_many_arguments)]
fn verify_source(
    py: Python<'_>,
    source: String,
    columns: Vec<String>,
    samples: u64,
    footer_key: Option<String>,
    column_keys: std::collections::BTreeMap<String, String>,
    as_of: Option<String>,
    as_directory: bool,
) -> PyResult<(bool, Vec<String>)> {
    py.detach(|| {
        let keys = key_set(footer_key, column_keys)?;
        let lake = lake_options(as_of, as_directory)?;
        let mut lines = Vec::new();
        let no_progress = |_: &str| |_, _| {};
        let tally = sbbf_lake::each::verify_each(
            &source,
            &lake,
            &keys,
            &columns,
            samples,
            no_progress,
            |f| lines.push((f.file, f.report)),
        );
        each_file(tally, lines, &source)
    })
    .map_err(Failure::into_py)
}

/// How a Delta or Iceberg table is read, from Python's `as_of` (a version, snapshot id or RFC
/// 3339 time, as text) and `as_directory`.
fn lake_options(
    as_of: Option<String>,
    as_directory: bool,
) -> Result<sbbf_lake::LakeOptions, Failure> {
    if as_directory && as_of.is_some() {
        return Err(Failure::Input(
            "as_of and as_directory=True exclude each other: a folder has no versions".to_string(),
        ));
    }
    let as_of = match as_of {
        Some(t) => Some(t.parse().map_err(Failure::from)?),
        None => None,
    };
    Ok(sbbf_lake::LakeOptions {
        as_of,
        as_directory,
    })
}

/// The snapshot of the Delta or Iceberg table `source` names, as JSON (`None` when `source`
/// is no table, or with `as_directory`): format, version, time, partition columns, columns
/// (names, how files name them, types), and each data file's local path or URL, size, rows,
/// partition values (as text) and whether deletes apply to it; with `deleted_rows`, also the
/// positions the deletes delete in each file they apply to (read now: Delta deletion vectors,
/// Iceberg position and equality deletes; Iceberg v3 deletion vectors are an `InputError`:
/// not read yet).
#[pyfunction]
#[pyo3(signature = (source, as_of = None, as_directory = false, catalog = None, catalog_name = None))]
fn table_snapshot(
    py: Python<'_>,
    source: String,
    as_of: Option<String>,
    as_directory: bool,
    catalog: Option<String>,
    catalog_name: Option<String>,
) -> PyResult<Option<String>> {
    let lake = lake_options(as_of, as_directory).map_err(Failure::into_py)?;
    let at = table_ref(&source, catalog, catalog_name).map_err(Failure::into_py)?;
    py.detach(|| -> Result<Option<String>, Failure> {
        let table = sbbf_parquet::source::block_on(sbbf_lake::Table::open(at, &lake))??;
        let Some(snap) = table.snapshot() else {
            return Ok(None);
        };
        let local = match sbbf_parquet::source::object::is_remote_url(&snap.location) {
            true => None,
            false => Some(sbbf_lake::local_files(snap)?),
        };
        let files: Vec<serde_json::Value> = snap
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let path = match &local {
                    Some(l) => l[i].1.display().to_string(),
                    None => f.url.clone(),
                };
                let partition: serde_json::Map<String, serde_json::Value> = f
                    .partition
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::json!(v)))
                    .collect();
                serde_json::json!({
                    "path": path,
                    "size": f.size,
                    "rows": f.rows,
                    "partition": partition,
                    "deletes": f.deletes.any(),
                })
            })
            .collect();
        let columns: Vec<serde_json::Value> = snap
            .columns
            .iter()
            .map(|c| {
                serde_json::json!({
                    "name": c.name,
                    "physical": c.physical,
                    "field_id": c.field_id,
                    "earlier_names": c.earlier_names,
                    "inner_renamed": c.inner_renamed,
                    "inner_names": c.inner_names,
                    "type": c.data_type,
                    "missing_not_null": c.missing_not_null,
                })
            })
            .collect();
        let v = snap.table_version();
        Ok(Some(
            serde_json::json!({
                "format": v.format,
                "location": v.location,
                "version": v.version,
                "timestamp_ms": v.timestamp_ms,
                "metadata": snap.metadata,
                "partition_columns": snap.partition_columns,
                "columns": columns,
                "files": files,
                "notes": snap.notes,
                "log_reads": v.log_reads,
            })
            .to_string(),
        ))
    })
    .map_err(Failure::into_py)
}

/// What `read_lake` gives Python: the table's schema, its rows, and a warning (an index
/// that could not be used, a pruning that failed and read every row group).
type LakeRows = (
    PyArrowType<Schema>,
    Vec<PyArrowType<arrow::record_batch::RecordBatch>>,
    Option<String>,
);

/// The rows of the Delta or Iceberg table `source` (`None` when it is no table, or with
/// `as_directory`) as the table gives them, read by the library (`sbbf_lake::rows`: columns
/// matched by field id or physical name, Delta partition values from the log, deletes
/// applied, nested fields under the table's names): `columns` of them (every column for
/// `None`), in the row groups `filters` (pyarrow's disjunctive normal form) may match, as the
/// Bloom filters and the table's index (unless `use_index` is false) tell. The rows are not
/// filtered: Python applies the filter expression to them. Instants come back in pyarrow's
/// zone spelling (`UTC`).
#[pyfunction]
#[pyo3(signature = (source, filters, columns = None, use_index = true, as_of = None, as_directory = false, catalog = None, catalog_name = None))]
#[allow(clippy::too_many_arguments)]
fn read_lake(
    py: Python<'_>,
    source: String,
    filters: Vec<Vec<FilterLeaf<'_>>>,
    columns: Option<Vec<String>>,
    use_index: bool,
    as_of: Option<String>,
    as_directory: bool,
    catalog: Option<String>,
    catalog_name: Option<String>,
) -> PyResult<Option<LakeRows>> {
    use sbbf_parquet::source::block_on;
    let filters = (!filters.is_empty())
        .then(|| read_filters(&filters))
        .transpose()?;
    let lake = lake_options(as_of, as_directory).map_err(Failure::into_py)?;
    let at = table_ref(&source, catalog, catalog_name).map_err(Failure::into_py)?;
    let read = py.detach(|| -> Result<Option<_>, Failure> {
        // The index is read beside finding the table (an Iceberg snapshot it was built from
        // is then read from it, not from the manifests), and asked again without a request.
        let with_index = use_index && filters.is_some();
        let table = block_on(sbbf_index::each::open_table(at, &lake, with_index))??;
        let Some(snap) = table.table.snapshot() else {
            return Ok(None);
        };
        let local = !sbbf_parquet::source::object::is_remote_url(&snap.location);
        let root = match local {
            true => sbbf_lake::StoreRoot::local(),
            false => sbbf_lake::StoreRoot::for_url(&snap.location)?,
        };
        let mut asked = sbbf_lake::rows::RowsAsked {
            columns,
            ..Default::default()
        };
        let mut warning = None;
        if let Some(filters) = filters {
            match block_on(kept_row_groups(
                &table, snap, &root, local, filters, use_index,
            ))? {
                Ok((kept, w)) => {
                    asked.row_groups = kept;
                    warning = w;
                }
                Err(e) => {
                    warning = Some(format!(
                        "sbbf cannot prune {source} ({e}); its row groups are read whole"
                    ))
                }
            }
        }
        let rows = block_on(sbbf_lake::rows::read_rows(snap, &root, &asked))??;
        Ok(Some((rows, warning)))
    });
    let Some((rows, warning)) = read.map_err(Failure::into_py)? else {
        return Ok(None);
    };
    let (schema, batches) =
        pyarrow_zones(rows).map_err(|e| Failure::File(e.to_string()).into_py())?;
    Ok(Some((
        PyArrowType(schema),
        batches.into_iter().map(PyArrowType).collect(),
        warning,
    )))
}

/// The row groups `filters` keep of each file of `table` (whose snapshot is `snap`), by
/// file URL, through the table's index unless `use_index` is false; with the index's
/// warning. The snapshot read is pruned, not found and read again: a commit in between must
/// not change which files the pruning answers for.
async fn kept_row_groups(
    table: &sbbf_index::each::OpenedTable,
    snap: &sbbf_lake::Snapshot,
    root: &sbbf_lake::StoreRoot,
    local: bool,
    filters: Dnf,
    use_index: bool,
) -> Result<
    (
        std::collections::HashMap<String, Vec<usize>>,
        Option<String>,
    ),
    sbbf_parquet::Error,
> {
    use std::ops::ControlFlow;
    if snap.files.is_empty() {
        return Ok(Default::default());
    }
    // Each file as the pruning names it: a local file by its name below the table's folder,
    // an object by its path in the store. The pruning names an object by the store's URL and
    // its path as it is (`p=a%20b/`, a key holding `%`), the snapshot by a URL that encodes
    // it (`p=a%2520b/`): both are keyed by the path.
    let base = root.base().as_str().to_string();
    let pruned_key = |name: &str| match local {
        true => name.to_string(),
        false => name.strip_prefix(&base).unwrap_or(name).to_string(),
    };
    let url_of: std::collections::HashMap<String, String> = match local {
        true => sbbf_lake::local_files(snap)?
            .into_iter()
            .zip(&snap.files)
            .map(|((name, _), f)| (name, f.url.clone()))
            .collect(),
        false => snap
            .files
            .iter()
            .map(|f| {
                let path = root.path_of(&f.url).map(|p| p.to_string());
                (path.unwrap_or_else(|_| f.url.clone()), f.url.clone())
            })
            .collect(),
    };
    let options = sbbf_parquet::source::SourceOptions::default();
    let mut kept = std::collections::HashMap::new();
    let mut failed = None;
    let summary =
        sbbf_index::each::prune_table(table, filters, options, use_index, false, |file, rgs| {
            match rgs {
                Ok(rgs) => {
                    if let Some(url) = url_of.get(&pruned_key(&file)) {
                        kept.insert(url.clone(), rgs);
                    }
                }
                Err(e) => failed = Some(e),
            }
            ControlFlow::Continue(())
        })
        .await?;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok((kept, summary.warning))
}

/// `rows` with instants in pyarrow's zone spelling (`UTC`, where arrow-rs writes `+00:00`):
/// the same values, typed as pyarrow's own Parquet reader types them.
fn pyarrow_zones(
    rows: sbbf_lake::rows::RowsRead,
) -> Result<(Schema, Vec<arrow::record_batch::RecordBatch>), arrow::error::ArrowError> {
    let fields: Vec<Field> = rows
        .schema
        .fields()
        .iter()
        .map(|f| {
            f.as_ref()
                .clone()
                .with_data_type(pyarrow_zone(f.data_type()))
        })
        .collect();
    let schema = std::sync::Arc::new(Schema::new(fields));
    let batches = rows
        .batches
        .iter()
        .map(|b| {
            let columns = b
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(a, f)| match a.data_type() == f.data_type() {
                    true => Ok(std::sync::Arc::clone(a)),
                    false => arrow::compute::cast(a, f.data_type()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            arrow::record_batch::RecordBatch::try_new_with_options(
                std::sync::Arc::clone(&schema),
                columns,
                &arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((schema.as_ref().clone(), batches))
}

/// The current metadata file of the Iceberg table `table` (`NS.TABLE`) in the catalog at
/// `uri` (`sqlite:///PATH` or `http(s)://...`), `name` choosing among several catalogs.
#[pyfunction]
#[pyo3(signature = (uri, table, name = None))]
fn catalog_table(
    py: Python<'_>,
    uri: String,
    table: String,
    name: Option<String>,
) -> PyResult<String> {
    py.detach(|| -> Result<String, Failure> {
        let c = sbbf_lake::catalog::Catalog::new(&uri, name.as_deref());
        Ok(sbbf_parquet::source::block_on(
            sbbf_lake::catalog::metadata_location(&c, &table),
        )??)
    })
    .map_err(Failure::into_py)
}

/// A failure of the table index, by whose fault it is.
fn index_failure(e: sbbf_index::Error) -> Failure {
    match e {
        sbbf_index::Error::Parquet(e) => Failure::from(e),
        // Said in this package's argument names.
        sbbf_index::Error::FppOutOfRange(p) => Failure::Input(format!(
            "fpp={p}: a false-positive probability is between 0 and 1"
        )),
        sbbf_index::Error::BuildMissingWithoutColumns => Failure::Input(
            "build_missing=True needs the columns to build filters for (columns=...; an update takes the index's own columns)".to_string(),
        ),
        sbbf_index::Error::TightenWithout => Failure::Input(
            "tighten=True needs the columns and the target rate (columns=..., fpp=...; an update takes the index's own)".to_string(),
        ),
        e @ (sbbf_index::Error::NotATable(_)
        | sbbf_index::Error::UnknownColumn { .. }
        | sbbf_index::Error::NoFilters { .. }) => Failure::Input(e.to_string()),
        e => Failure::File(e.to_string()),
    }
}

/// The table root `path` names (a directory or an object-store prefix).
fn table_root(path: &str) -> Result<sbbf_index::table::Root, Failure> {
    match sbbf_index::table::Root::open(path) {
        Ok(Some(root)) => Ok(root),
        Ok(None) => Err(index_failure(sbbf_index::Error::NotATable(
            path.to_string(),
        ))),
        Err(e) => Err(index_failure(e).at(path)),
    }
}

/// Builds the table index of `path` (`sbbf index build`): the report as JSON.
#[pyfunction]
#[pyo3(signature = (path, columns, fpp, build_missing, tighten=false))]
fn index_build(
    py: Python<'_>,
    path: String,
    columns: Vec<String>,
    fpp: Option<f64>,
    build_missing: bool,
    tighten: bool,
) -> PyResult<String> {
    py.detach(|| {
        let root = table_root(&path)?;
        let options = sbbf_index::build::BuildOptions {
            columns,
            fpp,
            concurrency: sbbf_parquet::source::SourceOptions::default().concurrency,
            build_missing,
            tighten,
            progress: None,
        };
        let built = sbbf_parquet::source::block_on(sbbf_index::build::build(&root, &options))?;
        built
            .map(|r| to_json(&r))
            .map_err(|e| index_failure(e).at(&path))
    })
    .map_err(Failure::into_py)
}

/// Updates the table index of `path` (`sbbf index update`): the report as JSON, and why the
/// old index was rebuilt from every file, when it was unusable.
#[pyfunction]
#[pyo3(signature = (path, build_missing, tighten=false))]
fn index_update(
    py: Python<'_>,
    path: String,
    build_missing: bool,
    tighten: bool,
) -> PyResult<(String, Option<String>)> {
    py.detach(|| {
        let root = table_root(&path)?;
        let options = sbbf_index::build::UpdateOptions {
            concurrency: sbbf_parquet::source::SourceOptions::default().concurrency,
            build_missing,
            tighten,
            progress: None,
            swapped: Vec::new(),
        };
        let updated =
            sbbf_parquet::source::block_on(sbbf_index::build::update_with(&root, &options))?;
        updated
            .map(|(r, rebuilt)| (to_json(&r), rebuilt))
            .map_err(|e| index_failure(e).at(&path))
    })
    .map_err(Failure::into_py)
}

/// The coverage of the table index of `path` (`sbbf index inspect --format json`).
#[pyfunction]
fn index_inspect(py: Python<'_>, path: String) -> PyResult<String> {
    py.detach(|| {
        let root = table_root(&path)?;
        sbbf_parquet::source::block_on(async {
            let (listing, loaded) = futures::future::join(root.list(), root.load_whole()).await;
            let listing = listing.map_err(|e| index_failure(e).at(&path))?;
            let at = root.index_location();
            let (loaded, _) = match loaded {
                Ok(Some(l)) => l,
                Ok(None) => return Err(index_failure(sbbf_index::Error::NoIndex(at))),
                Err(e) => return Err(Failure::File(format!("{at}: unusable: {e}"))),
            };
            Ok(to_json(&sbbf_index::report::Coverage::of(
                at, &loaded, &listing,
            )))
        })?
    })
    .map_err(Failure::into_py)
}

/// The column a Parquet writer (arrow-rs) makes for an Arrow array of this type: the bytes a
/// raw filter hashes for its elements are the ones that column stores.
fn raw_column(data_type: &DataType) -> Result<ColumnType, Failure> {
    let unsupported = || {
        Failure::Input(format!(
            "a filter cannot hold values of type {data_type}: no Parquet column stores them as one plain value"
        ))
    };
    if matches!(
        data_type,
        DataType::Boolean | DataType::Null | DataType::Struct(_) | DataType::Map(..)
    ) || data_type.is_nested()
    {
        return Err(unsupported());
    }
    let schema = Schema::new(vec![Field::new("v", data_type.clone(), true)]);
    let descr = ArrowSchemaConverter::new()
        .convert(&schema)
        .map_err(|_| unsupported())?;
    if descr.num_columns() != 1 {
        return Err(unsupported());
    }
    Ok(ColumnType::from_descriptor(&descr.column(0)))
}

/// The 64-bit hashes of the non-null elements of `array`, in order.
fn hashes(array: &dyn Array) -> Result<Vec<u64>, Failure> {
    let col = raw_column(array.data_type())?;
    let mut out = Vec::with_capacity(array.len() - array.null_count());
    sbbf_parquet::values::arrow::for_each_arrow_value(array, &col, |b| out.push(sbbf::hash(b)))?;
    Ok(out)
}

/// The values of a null-free array of a type whose PLAIN bytes are its buffer's (INT64, INT32,
/// DOUBLE, FLOAT): the filter's batch kernels hash them straight from it.
enum Plain<'a> {
    I64(&'a [i64]),
    I32(&'a [i32]),
    F64(&'a [f64]),
    F32(&'a [f32]),
}

fn plain(array: &dyn Array) -> Option<Plain<'_>> {
    if array.null_count() != 0 {
        return None;
    }
    Some(match array.data_type() {
        DataType::Int64 => Plain::I64(array.as_primitive::<Int64Type>().values()),
        DataType::Int32 => Plain::I32(array.as_primitive::<Int32Type>().values()),
        DataType::Float64 => Plain::F64(array.as_primitive::<Float64Type>().values()),
        DataType::Float32 => Plain::F32(array.as_primitive::<Float32Type>().values()),
        _ => return None,
    })
}

/// A split-block Bloom filter (the bitset alone, no Parquet header).
#[pyclass(name = "Sbbf", module = "sbbf._sbbf")]
struct PySbbf {
    inner: sbbf::Sbbf,
}

fn sbbf_err(e: sbbf::Error) -> PyErr {
    Failure::Input(e.to_string()).into_py()
}

#[pymethods]
impl PySbbf {
    /// An empty filter of `num_bytes`, rounded up to a power of two in [32 B, 128 MiB].
    #[new]
    fn new(num_bytes: usize) -> PySbbf {
        PySbbf {
            inner: sbbf::Sbbf::with_num_bytes(num_bytes),
        }
    }

    /// An empty filter sized for `ndv` distinct values at false-positive rate `fpp`.
    #[staticmethod]
    fn with_ndv_fpp(ndv: u64, fpp: f64) -> PyResult<PySbbf> {
        Ok(PySbbf {
            inner: sbbf::Sbbf::with_ndv_fpp(ndv, fpp).map_err(sbbf_err)?,
        })
    }

    /// A filter holding a copy of `bitset` (a non-empty multiple of 32 bytes).
    #[staticmethod]
    fn from_bytes(bitset: &[u8]) -> PyResult<PySbbf> {
        Ok(PySbbf {
            inner: sbbf::Sbbf::from_bitset(bitset).map_err(sbbf_err)?,
        })
    }

    /// The bitset.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.as_bytes())
    }

    /// Bytes of the bitset.
    #[getter]
    fn num_bytes(&self) -> usize {
        self.inner.num_bytes()
    }

    /// Share of bits set.
    #[getter]
    fn fill_ratio(&self) -> f64 {
        self.inner.fill_ratio()
    }

    /// False-positive rate the fill implies for a random absent value.
    #[getter]
    fn estimated_fpp(&self) -> f64 {
        self.inner.estimated_fpp()
    }

    /// Adds the bits of `other` (a filter of the same size).
    fn union(&mut self, other: PyRef<'_, PySbbf>) -> PyResult<()> {
        self.inner.union(&other.inner).map_err(sbbf_err)
    }

    /// Adds the non-null elements of an Arrow array.
    fn insert_array(&mut self, py: Python<'_>, array: Bound<'_, PyAny>) -> PyResult<()> {
        let array = array_of(&array)?;
        let inner = &mut self.inner;
        py.detach(|| {
            match plain(array.as_ref()) {
                Some(Plain::I64(v)) => inner.insert_values(v),
                Some(Plain::I32(v)) => inner.insert_values(v),
                Some(Plain::F64(v)) => inner.insert_values(v),
                Some(Plain::F32(v)) => inner.insert_values(v),
                None => inner.insert_hashes(&hashes(array.as_ref())?),
            }
            Ok(())
        })
        .map_err(Failure::into_py)
    }

    /// Whether each element of an Arrow array may be in the filter (a null never is), as one
    /// byte (0 or 1) per element.
    fn contains_array<'py>(
        &self,
        py: Python<'py>,
        array: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let array = array_of(&array)?;
        let inner = &self.inner;
        let out = py
            .detach(|| -> Result<Vec<bool>, Failure> {
                let mut out = vec![false; array.len()];
                match plain(array.as_ref()) {
                    Some(Plain::I64(v)) => inner.contains_values(v, &mut out),
                    Some(Plain::I32(v)) => inner.contains_values(v, &mut out),
                    Some(Plain::F64(v)) => inner.contains_values(v, &mut out),
                    Some(Plain::F32(v)) => inner.contains_values(v, &mut out),
                    None => {}
                }
                if plain(array.as_ref()).is_some() {
                    return Ok(out);
                }
                let h = hashes(array.as_ref())?;
                let mut found = vec![false; h.len()];
                inner.contains_hashes(&h, &mut found);
                // The hashes are of the non-null elements, in order.
                let valid: Vec<usize> = match array.logical_nulls() {
                    Some(n) => n.valid_indices().collect(),
                    None => (0..array.len()).collect(),
                };
                for (i, f) in valid.into_iter().zip(found) {
                    out[i] = f;
                }
                Ok(out)
            })
            .map_err(Failure::into_py)?;
        let bytes: Vec<u8> = out.into_iter().map(u8::from).collect();
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self) -> String {
        format!(
            "Sbbf(num_bytes={}, fill_ratio={:.4})",
            self.inner.num_bytes(),
            self.inner.fill_ratio()
        )
    }
}

/// The native module.
#[pymodule]
fn _sbbf(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(probe_source, m)?)?;
    m.add_function(wrap_pyfunction!(is_remote_url, m)?)?;
    m.add_function(wrap_pyfunction!(local_location, m)?)?;
    m.add_function(wrap_pyfunction!(row_groups, m)?)?;
    m.add_function(wrap_pyfunction!(row_groups_source, m)?)?;
    m.add_function(wrap_pyfunction!(index_build, m)?)?;
    m.add_function(wrap_pyfunction!(index_update, m)?)?;
    m.add_function(wrap_pyfunction!(index_inspect, m)?)?;
    m.add_function(wrap_pyfunction!(add_json, m)?)?;
    m.add_function(wrap_pyfunction!(table_write_json, m)?)?;
    m.add_function(wrap_pyfunction!(inspect_source, m)?)?;
    m.add_function(wrap_pyfunction!(verify_source, m)?)?;
    m.add_function(wrap_pyfunction!(table_snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(read_lake, m)?)?;
    m.add_function(wrap_pyfunction!(lake_type, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_table, m)?)?;
    m.add_class::<PySbbf>()?;
    m.add("KERNEL", sbbf::kernel_name())?;
    Ok(())
}
