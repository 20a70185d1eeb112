//! `sbbf query PATH SQL`: SQL over Parquet files with DataFusion, row groups pruned by our
//! Bloom filters.

use crate::Format;
use clap::Args;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use sbbf_datafusion::{QueryStats, QueryStatsLine, SbbfTable, ScanStats};
use std::sync::Arc;

/// Run SQL over Parquet files (registered as table `t`) with DataFusion, skipping the row
/// groups the files' Bloom filters rule out.
///
/// `=`, `IN`, `AND` and `OR` on any column with filters (struct fields included: `t.s['b']`)
/// prune row groups before they are read; everything else runs as DataFusion runs it. Values
/// are compared as DataFusion compares them: the filters only ever skip row groups no row of
/// which can match.
///
/// DataFusion's options come from DATAFUSION_* environment variables (as in its CLI), e.g.
/// DATAFUSION_EXECUTION_PARQUET_PRUNING=false for a scan with no pruning at all. A query of
/// a table on an object store runs 32 scan partitions (files opened at once) unless
/// DATAFUSION_EXECUTION_TARGET_PARTITIONS says otherwise.
///
/// Examples:
///   sbbf query data/ "SELECT count(*) FROM t WHERE user_id = 42"
///   sbbf query 'logs/*.parquet' "SELECT * FROM t WHERE day IN (DATE '2024-01-31', DATE '2024-02-01')"
///   sbbf query s3://bucket/events/ "SELECT * FROM t WHERE id = 7" --format json
///   sbbf query data.parquet "SELECT * FROM t WHERE k = 'x'" --stats            # what was skipped
///   sbbf query data.parquet "SELECT * FROM t WHERE k = 'x'" --stats --no-sbbf  # DataFusion alone
///   sbbf query facts/ --table d=dims.parquet \
///     "SELECT count(*) FROM t JOIN d ON t.key = d.key WHERE d.region = 'eu'" --stats
///
/// Joins prune too: the keys a hash join collects from its build side (`d` above) reach the
/// Bloom filters of the other side's files when each file is opened, up to 20,000
/// distinct keys (DataFusion's own limit of 150 is raised unless
/// DATAFUSION_OPTIMIZER_HASH_JOIN_INLIST_PUSHDOWN_MAX_DISTINCT_VALUES is set); a file whose
/// filters would cost more to read than they are expected to spare for that many keys
/// (judged from their sizes and row counts) is not probed.
#[derive(Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct QueryArgs {
    /// A Parquet file, a directory (every `*.parquet` below it), a glob, or an object-store
    /// URL (s3://, gs://, az://, http(s)://; a URL ending in `/` is a prefix). Below a
    /// directory or prefix in hive partitions (`year=2024/month=01/x.parquet`) the keys are
    /// columns (`WHERE year = 2024` reads only those folders' files; when only some files
    /// are in such folders, the keys are not columns, and a warning says so). Below a
    /// directory or prefix, files and folders whose names start with `_` or `.` are skipped
    /// (a job's `_temporary/` output, `.hidden` files), as Spark, Hive and pyarrow skip them;
    /// a file or glob named explicitly is read. The files of a directory or prefix may
    /// differ in schema (columns added, dropped or reordered, struct fields, `string` in one
    /// and `string_view` or `large_string` in another); a glob's schema is its first file's.
    #[arg(value_parser = crate::store_url::location)]
    path: String,
    /// The query; the files are table `t`.
    sql: String,
    /// One more table beside `t`: NAME=PATH, PATH a file, directory, glob or URL as above
    /// (pruned the same way). Repeat for more tables.
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Output format: `text`, a table; `json`, one JSON object per result row (per line),
    /// with every column (`null` for a null).
    #[arg(long, value_enum, default_value_t = Format::Text, hide_possible_values = true)]
    format: Format,
    /// After the rows, print one JSON line on standard error: the row groups in PATH and
    /// what became of each, adding up to that total: left out by the listing (partition
    /// filters), skipped by min/max statistics (checked first: those cost no filter read), by
    /// the Bloom filters, by a LIMIT, in files the scan never opened, and read; with --table,
    /// the same for every table
    /// under "tables". Where a join's keys reached a table's filters: "join_keys" (K) and
    /// "expected_survivors", the chance 1 - (1 - p)^K that a row group holding none of the keys
    /// is still read, for filters of FPP p = 1 %, 0.1 %, 0.01 % (`sbbf add --fpp` or
    /// `sbbf resize` tighten them when K is large).
    #[arg(long)]
    stats: bool,
    /// DataFusion's defaults instead of our pruning (its statistics and its own Bloom-filter
    /// reads): to compare.
    #[arg(long)]
    no_sbbf: bool,
    /// Ignore the table index (PATH/_sbbf_index/, see `sbbf index build`): every file is
    /// listed and pruned by its own footer and filters. Without this flag, for a directory or
    /// prefix with an index, the files the index rules out for `=` and `IN` are never opened
    /// (files changed or added since the index was built are read as without it).
    #[arg(long)]
    no_index: bool,
    #[command(flatten)]
    lake: crate::lake::TableArgs,
}

pub fn run(a: QueryArgs) -> u8 {
    match sbbf_parquet::source::block_on(query(&a)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            err!("sbbf query: {e}");
            2
        }
        Err(e) => {
            err!("sbbf query: {e}");
            2
        }
    }
}

/// Scan partitions of a query that reads a table on an object store, unless
/// DATAFUSION_EXECUTION_TARGET_PARTITIONS says otherwise: the files in flight at once.
const REMOTE_PARTITIONS: usize = sbbf_datafusion::DEFAULT_FILE_CONCURRENCY;

async fn query(a: &QueryArgs) -> Result<(), Box<dyn std::error::Error>> {
    let mut tables = table_args(a)?;
    if a.lake.catalog.is_some() {
        // PATH names a table in the catalog; a --table PATH does when it is no file or URL.
        for (i, (_, path)) in tables.iter_mut().enumerate() {
            let plain = std::path::Path::new(path.as_str()).exists()
                || sbbf_parquet::source::object::is_remote_url(path);
            if i == 0 || !plain {
                *path = a.lake.location(path).await?;
            }
        }
    }
    // DATAFUSION_* variables set DataFusion's options (DATAFUSION_EXECUTION_TARGET_PARTITIONS,
    // DATAFUSION_EXECUTION_PARQUET_PRUNING=false, ...).
    let mut config = SessionConfig::from_env()?;
    // A directory means every Parquet file below it, in subfolders too, as for every other
    // command (DataFusion's default reads only the top folder: rows would go missing).
    config
        .options_mut()
        .execution
        .listing_table_ignore_subdirectory = false;
    // On an object store a scan partition opens its files one after another, a round trip or
    // two each: with as many partitions as the files our pruning reads at once, the files
    // left to read are opened together (measured, 1,000-file Delta table at 50 ms a request,
    // ten keys: 111 waves and 6.2 s with 2 partitions, 14 and 0.8 s with 32).
    let remote = tables
        .iter()
        .any(|(_, p)| sbbf_parquet::source::object::is_remote_url(p));
    if remote && std::env::var_os("DATAFUSION_EXECUTION_TARGET_PARTITIONS").is_none() {
        let n = config.target_partitions().max(REMOTE_PARTITIONS);
        config = config.with_target_partitions(n);
    }
    if !a.no_sbbf {
        // Join keys reach our filters as a set, unless the user chose the limits.
        let o = config.options().optimizer.clone();
        config = sbbf_datafusion::with_join_key_sets(config);
        let set = |name: &str| std::env::var_os(name).is_some();
        let opt = &mut config.options_mut().optimizer;
        if set("DATAFUSION_OPTIMIZER_HASH_JOIN_INLIST_PUSHDOWN_MAX_DISTINCT_VALUES") {
            opt.hash_join_inlist_pushdown_max_distinct_values =
                o.hash_join_inlist_pushdown_max_distinct_values;
        }
        if set("DATAFUSION_OPTIMIZER_HASH_JOIN_INLIST_PUSHDOWN_MAX_SIZE") {
            opt.hash_join_inlist_pushdown_max_size = o.hash_join_inlist_pushdown_max_size;
        }
    }
    let ctx = SessionContext::new_with_config(config);
    for (_, path) in tables.iter().filter(|_| a.lake.as_directory) {
        if let Some(format) =
            sbbf_parquet::write::output::table_format_at(std::path::Path::new(path))
        {
            err!(
                "sbbf query: warning: {path} is the root of a {format} table; every Parquet file \
                 below it is read, including files the table has removed or not yet committed"
            );
        }
    }
    let mut registered = Vec::new();
    for (name, path) in &tables {
        let path = table_path(&ctx, path)?;
        let lake = a.lake.options();
        let table = SbbfTable::with_lake(&ctx.state(), &path, !a.no_sbbf, !a.no_index, &lake)
            .await
            .map_err(|e| format!("table `{name}` ({path}): {e}"))?
            .with_name(name.as_str());
        for w in table.listing_warnings() {
            err!("sbbf query: warning: {w}");
        }
        let table = Arc::new(table);
        ctx.register_table(name.as_str(), table.clone())?;
        registered.push((name.clone(), table));
    }
    let plan: Arc<dyn ExecutionPlan> = ctx.sql(&a.sql).await?.create_physical_plan().await?;
    let batches = collect(plan.clone(), ctx.task_ctx()).await?;
    print_rows(&batches, a.format)?;
    for (_, table) in &registered {
        if let Some(w) = table.index_warning() {
            err!("sbbf query: warning: {w}");
        }
    }
    if a.stats {
        let mut per_table = std::collections::BTreeMap::new();
        for (name, table) in &registered {
            let row_groups = table.row_groups(&ctx.state()).await?;
            let mut s = ScanStats::of_table(&plan, name);
            // A scan the index left no file for is no scan: the table counted it.
            let (files, rgs) = table.index_pruned();
            s.files_pruned_index = files;
            s.pruned_index = rgs;
            let mut line = QueryStats::new(row_groups, &s, a.no_sbbf);
            if let Some(reads) = table.index_reads() {
                line.index_requests = Some(reads.requests);
                line.index_bytes = Some(reads.bytes);
            }
            per_table.insert(name.clone(), line);
        }
        let versions: std::collections::BTreeMap<_, _> = registered
            .iter()
            .filter_map(|(name, t)| Some((name.clone(), t.table_version()?.clone())))
            .collect();
        let line = QueryStatsLine {
            t: per_table["t"].clone(),
            tables: (registered.len() > 1).then_some(per_table),
            versions: (!versions.is_empty()).then_some(versions),
        };
        err!("{}", crate::to_json(&line));
    }
    Ok(())
}

/// `t` = PATH, then every `--table NAME=PATH`, names checked (SQL identifiers as DataFusion
/// folds them: lower case).
fn table_args(a: &QueryArgs) -> Result<Vec<(String, String)>, String> {
    let mut out = vec![("t".to_string(), a.path.clone())];
    for spec in &a.tables {
        let Some((name, path)) = spec.split_once('=') else {
            return Err(format!("--table {spec}: expected NAME=PATH"));
        };
        let ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !ok {
            return Err(format!(
                "--table {spec}: a table name is lower-case letters, digits and `_`, not starting with a digit"
            ));
        }
        if path.is_empty() {
            return Err(format!("--table {spec}: no PATH after `=`"));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(format!(
                "--table {spec}: table `{name}` is already defined (PATH is table `t`)"
            ));
        }
        let path = crate::store_url::location(path).map_err(|e| format!("--table {spec}: {e}"))?;
        out.push((name.to_string(), path));
    }
    Ok(out)
}

/// The path DataFusion lists: local paths as they are; for an object-store URL, its store is
/// registered with the context first (credentials and endpoint from the environment, as for
/// `sbbf probe`).
fn table_path(ctx: &SessionContext, path: &str) -> Result<String, Box<dyn std::error::Error>> {
    if !sbbf_parquet::source::object::is_remote_url(path) {
        return Ok(path.to_string());
    }
    crate::store_url::check_http_endpoint(path)?;
    let (store, _) = sbbf_parquet::source::object::store_from_url(path)?;
    let url = url::Url::parse(path)?;
    let root = url::Url::parse(&format!("{}://{}", url.scheme(), url.authority()))?;
    ctx.register_object_store(&root, store);
    Ok(path.to_string())
}

fn print_rows(batches: &[RecordBatch], format: Format) -> Result<(), Box<dyn std::error::Error>> {
    match format {
        Format::Text => {
            out!("{}", pretty_format_batches(batches)?);
        }
        Format::Json => {
            let mut buf = Vec::new();
            {
                // Every row carries every column: a null is written as `null`, not left out.
                let mut w = arrow::json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, arrow::json::writer::LineDelimited>(&mut buf);
                for b in batches {
                    w.write(b)?;
                }
                w.finish()?;
            }
            use std::io::Write as _;
            if let Err(e) = std::io::stdout().lock().write_all(&buf) {
                crate::output_failed(e);
            }
        }
    }
    Ok(())
}
